//! Team mode (`--from postgres://…`, `--from sqlite:PATH`): the shared store `arbor sync push`
//! fills, served read-only: every machine's sessions, with per-machine and per-user filters.
//!
//! The store reaches the pages through a **private read-only mirror** laid out as an agent
//! directory (`$XDG_CACHE_HOME/arbor/team/<key>/agent`), filled and kept fresh by `arbor sync
//! pull`'s own code ([`arbor_sync::pull`]: line counts, the cursor file, the checked
//! placement), with a catalog of its own: every page then reads it as it reads
//! `~/.pi/agent`, with no second implementation. The store is opened read-only
//! ([`arbor_db::Access::ReadOnly`]) and never written. See `docs/serve.md`, "Team mode".
//!
//! How a page uses it (`app.team` is `Some` in team mode; the rows' paths are the catalog's,
//! e.g. `arbor_index::Listed::file`; in team mode a page lists no other agents' sessions of
//! this machine: only the store's are served):
//!
//! ```no_run
//! # fn page(app: &arbor_serve::App, rows: &mut Vec<std::path::PathBuf>) {
//! // `?machine=…&user=…` of the page's query, as a `Filter` (serde: `Query<Filter>`).
//! let filter = arbor_serve::team::Filter { machine: Some("laptop".into()), user: None };
//! if let Some(team) = &app.team {
//!     let machines = team.machines(); // the filter's choices
//!     let users = team.users();
//!     rows.retain(|file| team.keep(file, &filter));
//!     for file in rows.iter() {
//!         let o = team.origin(file).unwrap_or_default();
//!         let (machine, user) = (o.machine_shown(), o.user_shown()); // "unknown" for none
//!     }
//! }
//! # }
//! ```
use crate::ServeError;
use arbor_store::backend::files::FileStore;
use arbor_store::backend::{SessionStore, StoredSession};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// What a session without a recorded machine or user is shown as.
pub const UNKNOWN: &str = "unknown";

/// The environment variable setting how often the mirror is refreshed, in milliseconds
/// (default [`DEFAULT_REFRESH`]).
pub const REFRESH_ENV: &str = "ARBOR_TEAM_REFRESH_MS";

/// How often the mirror is refreshed by default.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(2);

/// Where a session of the shared store came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The machine that pushed it.
    pub machine: Option<String>,
    /// The user who pushed it.
    pub user: Option<String>,
}

impl Origin {
    /// The machine as shown: its name, or [`UNKNOWN`].
    pub fn machine_shown(&self) -> &str {
        self.machine.as_deref().unwrap_or(UNKNOWN)
    }

    /// The user as shown: the name, or [`UNKNOWN`] (a row pushed before schema version 3).
    pub fn user_shown(&self) -> &str {
        self.user.as_deref().unwrap_or(UNKNOWN)
    }
}

/// A page's choice of sessions in team mode: one machine, one user, or both (`None`: any).
/// [`UNKNOWN`] chooses the sessions without one. Deserializes from a page's query
/// (`?machine=…&user=…`; an empty value is no choice).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct Filter {
    /// Only this machine's sessions.
    #[serde(default, deserialize_with = "empty_is_none")]
    pub machine: Option<String>,
    /// Only this user's sessions.
    #[serde(default, deserialize_with = "empty_is_none")]
    pub user: Option<String>,
}

fn empty_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(v.filter(|s| !s.is_empty()))
}

impl Filter {
    /// Whether this filter chooses nothing (every session is kept).
    pub fn is_empty(&self) -> bool {
        self.machine.is_none() && self.user.is_none()
    }

    /// Whether a session of origin `o` is chosen.
    pub fn matches(&self, o: &Origin) -> bool {
        self.machine
            .as_deref()
            .is_none_or(|m| m == o.machine_shown())
            && self.user.as_deref().is_none_or(|u| u == o.user_shown())
    }
}

/// The shared store being served, and its mirror. Cheap to clone (one shared state).
#[derive(Clone)]
pub struct Team {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn SessionStore>,
    /// The store's URL, its password masked.
    shown: String,
    /// The mirror's directory (`…/team/<key>`).
    root: PathBuf,
    /// The mirror as `arbor sync pull` writes to it.
    local: arbor_sync::Local,
    state: Mutex<State>,
    /// Held by the refresh running (one at a time: two pulls into the mirror would race).
    refreshing: Mutex<()>,
}

#[derive(Default)]
struct State {
    /// The store's last listing: id -> (lines, bytes, modified, name).
    seen: HashMap<String, Seen>,
    /// Where each of the store's sessions is in the mirror.
    path_of: HashMap<String, PathBuf>,
    /// The origin of each mirrored file.
    origin: HashMap<PathBuf, Origin>,
}

type Seen = (u64, u64, i64, Option<String>, Origin);

fn seen_of(s: &StoredSession) -> Seen {
    (
        s.lines,
        s.bytes,
        s.modified_ms,
        s.meta.name.clone(),
        Origin {
            machine: s.meta.machine.clone(),
            user: s.meta.user.clone(),
        },
    )
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("store", &self.inner.shown)
            .field("mirror", &self.inner.root)
            .finish()
    }
}

/// The mirror's directory of the store `url`: `$XDG_CACHE_HOME/arbor/team/<key>`, the key
/// the first 16 hex digits of the SHA-256 of the URL with its password masked (as `arbor
/// sync` names its cursor file: the same store by another password is the same mirror).
pub fn mirror_dir(url: &str) -> PathBuf {
    let key = arbor_store::blobs::sha256_hex(arbor_db::redact_url(url).as_bytes());
    let cache = arbor_index::cache_catalog_path();
    let arbor = cache
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    arbor.join("team").join(&key[..16])
}

impl Team {
    /// Opens the store `url` read-only (`postgres://…`, `sqlite:PATH`: arbor-db's one
    /// reading of a store URL, its TLS and password file as `arbor sync`'s), makes the
    /// private mirror (0700, owned by the caller, never through a symlink), and fills it
    /// once, so that the first page is complete.
    ///
    /// # Errors
    /// [`ServeError::Refused`] for a URL that names no store, a store that cannot be opened
    /// read-only, a mirror directory that is not the caller's own, or a mirror of another
    /// boot whose cursor file cannot be set aside; the first fill's failure.
    pub fn open(url: &str) -> Result<Team, ServeError> {
        let shown = arbor_db::redact_url(url);
        let store = arbor_db::open_url(url, arbor_db::Access::ReadOnly)
            .map_err(|e| ServeError::Refused(format!("--from: {e}")))?
            .ok_or_else(|| {
                ServeError::Refused(format!(
                    "--from {shown}: a shared store is sqlite:PATH or postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE"
                ))
            })?;
        Team::over(store, shown, mirror_dir(url))
    }

    /// [`Team::open`] over a store already opened, its mirror at `root`.
    ///
    /// # Errors
    /// As [`Team::open`].
    pub fn over(
        store: Arc<dyn SessionStore>,
        shown: String,
        root: PathBuf,
    ) -> Result<Team, ServeError> {
        let agent = root.join("agent");
        private_dir(&root)?;
        private_dir(&agent)?;
        let local = arbor_sync::Local {
            pi: FileStore::new(&agent),
            omp: FileStore::new(&agent),
            map_cwd: Vec::new(),
            cursor_file: root.join("sync.tsv"),
            machine: String::new(),
            user: None,
        };
        let team = Team {
            inner: Arc::new(Inner {
                store,
                shown,
                root,
                local,
                state: Mutex::new(State::default()),
                refreshing: Mutex::new(()),
            }),
        };
        team.distrust_after_a_reboot()?;
        team.drop_unfinished_files();
        team.refresh()?;
        team.prune_unknown_files();
        Ok(team)
    }

    /// The mirror's agent directory: the app's only agent directory in team mode.
    pub fn agent_dir(&self) -> PathBuf {
        self.inner.root.join("agent")
    }

    /// The mirror's catalog file (not the user's own catalog).
    pub fn catalog_path(&self) -> PathBuf {
        self.inner.root.join("catalog.db")
    }

    /// The store, as shown (its password masked).
    pub fn store_shown(&self) -> &str {
        &self.inner.shown
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the session at `file` (a file of the mirror) came from; `None` for a file that
    /// is not one of the store's sessions.
    pub fn origin(&self, file: &Path) -> Option<Origin> {
        self.state().origin.get(file).cloned()
    }

    /// Whether the session at `file` is one of the store's and `filter` chooses it.
    pub fn keep(&self, file: &Path, filter: &Filter) -> bool {
        self.origin(file).is_some_and(|o| filter.matches(&o))
    }

    /// The machines of the store's sessions, sorted ([`UNKNOWN`] among them when a session
    /// has none).
    pub fn machines(&self) -> Vec<String> {
        let st = self.state();
        let set: BTreeSet<String> = st
            .origin
            .values()
            .map(|o| o.machine_shown().to_string())
            .collect();
        set.into_iter().collect()
    }

    /// The users who pushed the store's sessions, sorted ([`UNKNOWN`] among them when a
    /// session was pushed before users were recorded).
    pub fn users(&self) -> Vec<String> {
        let st = self.state();
        let set: BTreeSet<String> = st
            .origin
            .values()
            .map(|o| o.user_shown().to_string())
            .collect();
        set.into_iter().collect()
    }

    /// Brings the mirror up to the store: one listing; when a session was added, grew, was
    /// renamed or changed hands since the last one, `arbor sync pull` of those sessions into
    /// the mirror; a session the store no longer has is removed from the mirror. A session
    /// the pull could not write is said on stderr and not served: a row the placement
    /// refuses is tried again when it changes; a mirrored session whose shared copy no
    /// longer continues the mirror's (rewritten in the store) leaves the mirror and is pulled
    /// whole at the next refresh.
    ///
    /// # Errors
    /// The store's listing, or the pull failing as a whole.
    pub fn refresh(&self) -> Result<(), ServeError> {
        let inner = &*self.inner;
        let _one = inner.refreshing.lock().unwrap_or_else(|p| p.into_inner());
        let listing = inner
            .store
            .list()
            .map_err(|e| ServeError::Other(format!("{}: {e}", inner.shown)))?;
        let now: HashMap<String, Seen> = listing
            .iter()
            .map(|s| (s.meta.id.clone(), seen_of(s)))
            .collect();
        let (changed, gone): (Vec<String>, Vec<String>) = {
            let st = self.state();
            let changed = now
                .iter()
                .filter(|(id, s)| st.seen.get(*id) != Some(s))
                .map(|(id, _)| id.clone())
                .collect();
            let gone = st
                .seen
                .keys()
                .filter(|id| !now.contains_key(*id))
                .cloned()
                .collect();
            (changed, gone)
        };
        let mut placed: Vec<(String, PathBuf)> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        if !changed.is_empty() {
            // A cache: new files are not flushed (the fill was bound by it: docs/serve.md,
            // "Measured"); a crash of the machine is answered by `distrust_after_a_reboot`.
            let options = arbor_sync::PullOptions {
                new_files: arbor_store::Durability::None,
                ..arbor_sync::PullOptions::default()
            };
            let pull = |ids: &[String]| {
                arbor_sync::pull_with_options(
                    &*inner.store,
                    &inner.local,
                    ids,
                    &options,
                    &mut |_| {},
                )
                .map_err(|e| ServeError::Other(format!("{}: {e}", inner.shown)))
            };
            let mut rows = pull(&changed)?;
            // The mirror is a copy, never a branch: a session whose shared copy no longer
            // continues the mirror's (rewritten in the store: the pull merged it as a branch,
            // or found a conflict), or whose mirror file has lines the store's copy lacks
            // (bytes a crash of the machine left), is removed and pulled whole again.
            let stale: Vec<String> = rows
                .iter()
                .filter(|r| {
                    matches!(
                        r.state,
                        arbor_sync::State::Diverged { .. }
                            | arbor_sync::State::Conflict { .. }
                            | arbor_sync::State::LocalAhead(_)
                    )
                })
                .filter_map(|r| {
                    self.remove_mirrored(r.path.as_deref()?);
                    Some(r.id.clone())
                })
                .collect();
            if !stale.is_empty() {
                rows.retain(|r| !stale.contains(&r.id));
                rows.extend(pull(&stale)?);
            }
            for r in rows {
                if r.unresolved || r.state == arbor_sync::State::Unreadable {
                    eprintln!(
                        "arbor serve: {}: session {}: {}",
                        inner.shown,
                        r.id,
                        r.note.as_deref().unwrap_or("not mirrored")
                    );
                    failed.push(r.id.clone());
                    continue;
                }
                if let Some(p) = r.path {
                    placed.push((r.id, p));
                }
            }
        }
        let mut st = self.state();
        for (id, p) in placed {
            st.path_of.insert(id, p);
        }
        for id in &gone {
            if let Some(p) = st.path_of.remove(id) {
                st.origin.remove(&p);
                self.remove_mirrored(&p);
            }
        }
        // A session the pull refused is not served. One that was mirrored before (the store's
        // copy was rewritten so that it no longer continues the mirror's) leaves the mirror
        // and is pulled whole at the next refresh; one never mirrored (a row the placement
        // refuses) is tried again only when its row changes, so that it is said once.
        let mut seen = now;
        for id in &failed {
            if let Some(p) = st.path_of.remove(id) {
                self.remove_mirrored(&p);
                seen.remove(id);
            }
        }
        let mut origin = HashMap::new();
        for (id, s) in &seen {
            if let Some(p) = st.path_of.get(id) {
                origin.insert(p.clone(), s.4.clone());
            }
        }
        st.origin = origin;
        st.seen = seen;
        Ok(())
    }

    /// Removes a file of the mirror (only one inside its agent directory).
    fn remove_mirrored(&self, p: &Path) {
        if p.starts_with(self.agent_dir()) {
            if let Err(e) = std::fs::remove_file(p) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("arbor serve: {}: {e}", p.display());
                }
            }
        }
    }

    /// The mirror's new files are not flushed (a cache): a crash of the process loses none of
    /// their bytes, but after a crash of the machine its cursor file may vouch for bytes that
    /// never reached the disk. So the mirror records the boot of the machine it is written in
    /// ([`BOOT_FILE`]: `/proc/sys/kernel/random/boot_id`, a new random id at every boot), and
    /// a mirror of another boot, or of none known, has its cursor file set aside: the next
    /// pull compares every file whole with the store's copy, keeps the ones equal to it, and
    /// one that differs is pulled again (`refresh`). The boot is recorded after the cursor
    /// file is gone, so that it never vouches for a cursor file of an earlier boot.
    ///
    /// # Errors
    /// A cursor file that cannot be set aside.
    fn distrust_after_a_reboot(&self) -> Result<(), ServeError> {
        let root = &self.inner.root;
        let marker = root.join(BOOT_FILE);
        let now = boot_id();
        let recorded = arbor_store::read_regular_at_most(&marker, 256).ok();
        if now.is_some() && recorded.as_deref() == now.as_deref().map(str::as_bytes) {
            return Ok(());
        }
        let cursor = &self.inner.local.cursor_file;
        match std::fs::remove_file(cursor) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(ServeError::Refused(format!(
                    "{}: the mirror's cursor file cannot be set aside: {e}",
                    cursor.display()
                )))
            }
            _ => {}
        }
        if let Some(id) = now {
            // Not written: the next start sets the cursor file aside again.
            if let Err(e) = arbor_store::replace_file(&marker, id.as_bytes()) {
                eprintln!("arbor serve: {}: {e}", marker.display());
            }
        }
        Ok(())
    }

    /// Removes the mirror's session files a crash may have left unfinished: empty, or not
    /// ending with a newline (a write cut short by `kill -9`, bytes a crash of the machine
    /// took back), so that the next pull writes them whole again and none is served torn. A
    /// complete file the cursor file does not name yet (a fill stopped before it wrote the
    /// cursor file) stays: the pull compares it whole with the store's copy.
    fn drop_unfinished_files(&self) {
        let (files, _) = self.inner.local.pi.scan();
        for f in files {
            if !ends_with_newline(&f) {
                eprintln!(
                    "arbor serve: {}: empty or its last line incomplete (a write was cut \
                     short): pulled again",
                    f.display()
                );
                self.remove_mirrored(&f);
            }
        }
    }

    /// Removes the mirror's session files that are none of the store's sessions (sessions
    /// deleted from the store while no server ran), so that nothing is served that the
    /// store does not hold.
    fn prune_unknown_files(&self) {
        let known: std::collections::HashSet<PathBuf> =
            self.state().origin.keys().cloned().collect();
        let (files, _) = self.inner.local.pi.scan();
        for f in files {
            if !known.contains(&f) {
                self.remove_mirrored(&f);
            }
        }
    }

    /// Refreshes the mirror every `period` on a thread of its own, until the last clone of
    /// this team is dropped. A failed refresh is said on stderr and tried again.
    pub fn refresh_every(&self, period: Duration) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("arbor-team-refresh".into())
            .spawn(move || loop {
                std::thread::sleep(period);
                let Some(inner) = weak.upgrade() else { return };
                let team = Team { inner };
                if let Err(e) = team.refresh() {
                    eprintln!("arbor serve: {e}");
                }
            });
        if let Err(e) = spawned {
            eprintln!("arbor serve: the mirror will not be refreshed: {e}");
        }
    }

    /// The refresh period: [`REFRESH_ENV`] in milliseconds (at least 100), else
    /// [`DEFAULT_REFRESH`].
    pub fn period() -> Duration {
        std::env::var(REFRESH_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_REFRESH, |ms| Duration::from_millis(ms.max(100)))
    }
}

/// The file of a mirror naming the boot of the machine it was last written in.
const BOOT_FILE: &str = "boot";

/// This boot of the machine (Linux's `boot_id`, new at every boot); `None` where there is
/// none to read (then a mirror's cursor file is never trusted across starts).
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

/// Whether the regular file `path` (not followed if a link) is not empty and its last byte is
/// a newline: its last line is complete.
fn ends_with_newline(path: &Path) -> bool {
    use std::os::unix::fs::FileExt;
    let opened = arbor_store::open_checked(std::fs::OpenOptions::new().read(true), path, true);
    let Ok((f, meta)) = opened else {
        return false;
    };
    let len = meta.len();
    let mut last = [0u8];
    len > 0 && f.read_exact_at(&mut last, len - 1).is_ok() && last[0] == b'\n'
}

/// Makes `dir` (0700) when missing, and refuses one that is a symbolic link or not the
/// caller's own: the mirror holds the team's sessions.
fn private_dir(dir: &Path) -> Result<(), ServeError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    arbor_store::create_dir_private(dir)
        .map_err(|e| ServeError::Refused(format!("{}: {e}", dir.display())))?;
    let m = std::fs::symlink_metadata(dir)
        .map_err(|e| ServeError::Refused(format!("{}: {e}", dir.display())))?;
    if !m.is_dir() || m.uid() != arbor_store::euid() {
        return Err(ServeError::Refused(format!(
            "{}: the mirror of a shared store must be a directory of your own, not a link \
             or another user's (nothing was written)",
            dir.display()
        )));
    }
    if m.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| ServeError::Refused(format!("{}: {e}", dir.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_store::backend::memory::MemoryStore;
    use arbor_store::backend::SessionMeta;

    const T: &str = "2026-01-01T00:00:00.000Z";

    fn header(id: &str, cwd: &str) -> String {
        format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{T}","cwd":"{cwd}"}}"#)
    }

    fn msg(id: &str, parent: Option<&str>, text: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{T}","message":{{"role":"user","content":"{text}","timestamp":1767225600000}}}}"#
        )
    }

    fn put(store: &MemoryStore, id: &str, machine: &str, user: Option<&str>) {
        let h = header(id, "/work/p");
        let m = msg(&format!("{}01", &id[..6]), None, "hello");
        let meta = SessionMeta {
            id: id.into(),
            cwd: "/work/p".into(),
            created: T.into(),
            tool: "pi".into(),
            machine: Some(machine.into()),
            user: user.map(str::to_string),
            ..Default::default()
        };
        store
            .create(&meta, &[h.as_bytes(), m.as_bytes()])
            .expect("create");
    }

    const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
    const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
    const C: &str = "cccccccc-0000-4000-8000-000000000003";

    fn files(team: &Team) -> Vec<PathBuf> {
        let mut f = team.inner.local.pi.scan().0;
        f.sort();
        f
    }

    /// The store's sessions are mirrored byte for byte, each file knows its machine and
    /// user (unknown for a row without one), and the filters keep what they name.
    #[test]
    fn the_mirror_holds_the_store_with_origins_and_filters() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        put(&store, B, "desktop", Some("bob"));
        put(&store, C, "desktop", None);
        let team = Team::over(store.clone(), "mem".into(), dir.path().join("m")).expect("team");
        let f = files(&team);
        assert_eq!(f.len(), 3, "{f:?}");
        for p in &f {
            assert!(p.starts_with(team.agent_dir()), "{p:?}");
            let id = arbor_store::locate::id_of_file(p).expect("id");
            let want: Vec<u8> = store.read(&id, 0).expect("read").join(&b'\n');
            let got = std::fs::read(p).expect("file");
            assert_eq!(got, [want, b"\n".to_vec()].concat(), "{p:?}");
        }
        assert_eq!(team.machines(), vec!["desktop", "laptop"]);
        assert_eq!(team.users(), vec!["ann", "bob", UNKNOWN]);
        let of = |id: &str| f.iter().find(|p| p.to_string_lossy().contains(id)).unwrap();
        assert_eq!(
            team.origin(of(A)),
            Some(Origin {
                machine: Some("laptop".into()),
                user: Some("ann".into())
            })
        );
        assert_eq!(team.origin(of(C)).unwrap().user_shown(), UNKNOWN);
        let kept =
            |flt: Filter| -> Vec<&PathBuf> { f.iter().filter(|p| team.keep(p, &flt)).collect() };
        let desk = Filter {
            machine: Some("desktop".into()),
            user: None,
        };
        assert_eq!(kept(desk.clone()), vec![of(B), of(C)]);
        let unknown = Filter {
            machine: Some("desktop".into()),
            user: Some(UNKNOWN.into()),
        };
        assert_eq!(kept(unknown), vec![of(C)]);
        assert_eq!(kept(Filter::default()).len(), 3);
        // A file that is none of the store's sessions is never kept.
        assert!(!team.keep(Path::new("/etc/passwd"), &Filter::default()));
    }

    /// A refresh brings what the store gained (new lines, a new session), and removes from
    /// the mirror what the store no longer has.
    #[test]
    fn a_refresh_follows_the_store() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        put(&store, B, "desktop", Some("bob"));
        let team = Team::over(store.clone(), "mem".into(), dir.path().join("m")).expect("team");
        let a = files(&team)
            .into_iter()
            .find(|p| p.to_string_lossy().contains(A))
            .unwrap();
        let before = std::fs::read(&a).expect("a");
        {
            let mut w = store.writer(A, None).expect("writer");
            let m = msg("aaaaaa02", Some("aaaaaa01"), "more");
            w.append(&[m.as_bytes()]).expect("append");
        }
        put(&store, C, "laptop", Some("ann"));
        store.delete(B).expect("delete");
        team.refresh().expect("refresh");
        let after = std::fs::read(&a).expect("a");
        assert!(after.starts_with(&before) && after.len() > before.len());
        let f = files(&team);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().any(|p| p.to_string_lossy().contains(C)));
        assert!(!f.iter().any(|p| p.to_string_lossy().contains(B)));
        assert_eq!(team.machines(), vec!["laptop"]);
    }

    /// A mirror file whose session the store no longer has (deleted while no server ran)
    /// is removed when a team opens.
    #[test]
    fn a_stale_mirror_file_is_removed_on_open() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        put(&store, B, "desktop", Some("bob"));
        let root = dir.path().join("m");
        drop(Team::over(store.clone(), "mem".into(), root.clone()).expect("team"));
        store.delete(B).expect("delete");
        let team = Team::over(store, "mem".into(), root).expect("team");
        let f = files(&team);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].to_string_lossy().contains(A));
    }

    /// A mirror left unfinished by a crash (a file torn in its last line, one empty, one
    /// gone, the cursor file behind the files) is found when a team opens again: every file
    /// is then the store's copy, byte for byte, and each session is served.
    #[test]
    fn an_unfinished_mirror_is_pulled_again_at_the_next_start() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        put(&store, B, "desktop", Some("bob"));
        put(&store, C, "desktop", None);
        let root = dir.path().join("m");
        let team = Team::over(store.clone(), "mem".into(), root.clone()).expect("team");
        let f = files(&team);
        drop(team);
        // The cursor file behind the files: as before the first fill wrote it.
        std::fs::remove_file(root.join("sync.tsv")).expect("no cursor");
        let len = std::fs::metadata(&f[0]).expect("a").len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f[0])
            .and_then(|w| w.set_len(len - 5))
            .expect("torn");
        std::fs::write(&f[1], b"").expect("empty");
        std::fs::remove_file(&f[2]).expect("gone");
        let team = Team::over(store.clone(), "mem".into(), root).expect("team");
        assert_eq!(files(&team), f);
        assert_store_copies(&store, &f);
        for p in &f {
            assert!(team.keep(p, &Filter::default()), "{p:?} is served");
        }
    }

    /// Each of `files` holds its session as `store` does, byte for byte.
    fn assert_store_copies(store: &MemoryStore, files: &[PathBuf]) {
        for p in files {
            let id = arbor_store::locate::id_of_file(p).expect("id");
            let want: Vec<u8> = store.read(&id, 0).expect("read").join(&b'\n');
            assert_eq!(
                std::fs::read(p).expect("file"),
                [want, b"\n".to_vec()].concat(),
                "{p:?}"
            );
        }
    }

    /// A mirror written in another boot of the machine (a crash of the machine may have
    /// left bytes its cursor file vouches for unwritten, or others there) is compared whole
    /// with the store when a team opens: a file changed in place (its size and time as the
    /// cursor file recorded them) and one with a line the store lacks are the store's copies
    /// again.
    #[test]
    fn a_mirror_of_another_boot_is_compared_whole() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        put(&store, B, "desktop", Some("bob"));
        let root = dir.path().join("m");
        let team = Team::over(store.clone(), "mem".into(), root.clone()).expect("team");
        let f = files(&team);
        drop(team);
        let meta = std::fs::metadata(&f[0]).expect("a");
        let changed = String::from_utf8(std::fs::read(&f[0]).expect("a"))
            .expect("utf-8")
            .replace("hello", "hellO");
        std::fs::write(&f[0], changed).expect("changed in place");
        std::fs::File::options()
            .write(true)
            .open(&f[0])
            .and_then(|w| w.set_modified(meta.modified()?))
            .expect("its time as before");
        let mut more = std::fs::read(&f[1]).expect("b");
        more.extend_from_slice(msg("bbbbbb09", Some("bbbbbb01"), "not in the store").as_bytes());
        more.push(b'\n');
        std::fs::write(&f[1], more).expect("a line more");
        std::fs::write(root.join(BOOT_FILE), "another boot").expect("boot");
        let team = Team::over(store.clone(), "mem".into(), root.clone()).expect("team");
        assert_eq!(files(&team), f);
        assert_store_copies(&store, &f);
        assert_eq!(
            std::fs::read_to_string(root.join(BOOT_FILE)).expect("boot"),
            boot_id().unwrap_or_default()
        );
    }

    /// A session rewritten in the store (its lines no longer continue the mirror's) is
    /// served as the store now holds it after the next refreshes, never the old copy
    /// alongside; a row the placement refuses is never served and not pulled again until it
    /// changes.
    #[test]
    fn a_rewritten_session_is_pulled_again_and_a_refused_row_is_left_out() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        let team = Team::over(store.clone(), "mem".into(), dir.path().join("m")).expect("team");
        {
            let mut w = store.writer(A, None).expect("writer");
            let h = header(A, "/work/p");
            let m = msg("aaaaaa09", None, "another beginning");
            w.replace_all(&[h.as_bytes(), m.as_bytes()])
                .expect("rewrite");
        }
        let bad = SessionMeta {
            id: "x/../../evil".into(),
            cwd: "/work/p".into(),
            created: T.into(),
            tool: "pi".into(),
            ..Default::default()
        };
        let h = header("x/../../evil", "/work/p");
        store.create(&bad, &[h.as_bytes()]).expect("bad row");
        team.refresh().expect("refresh");
        team.refresh().expect("refresh again");
        let f = files(&team);
        assert_eq!(f.len(), 1, "{f:?}");
        let want: Vec<u8> = store.read(A, 0).expect("read").join(&b'\n');
        assert_eq!(
            std::fs::read(&f[0]).expect("file"),
            [want, b"\n".to_vec()].concat()
        );
        assert_eq!(team.machines(), vec!["laptop"]);
        assert!(team.state().seen.contains_key("x/../../evil"));
        assert!(!dir.path().join("evil").exists());
    }

    /// A mirror directory that is a symbolic link (planted to make the server write the
    /// team's sessions elsewhere) is refused, nothing written through it.
    #[test]
    fn a_planted_link_as_the_mirror_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("dir");
        let root = dir.path().join("m");
        std::os::unix::fs::symlink(&elsewhere, &root).expect("link");
        let store = Arc::new(MemoryStore::new());
        put(&store, A, "laptop", Some("ann"));
        let e = Team::over(store, "mem".into(), root).expect_err("refused");
        assert!(e.to_string().contains("not a link"), "{e}");
        assert_eq!(std::fs::read_dir(&elsewhere).expect("dir").count(), 0);
    }

    /// A page's query chooses by `machine=` and `user=`; an empty value chooses nothing.
    #[test]
    fn a_filter_reads_from_a_query() {
        let f: Filter = serde_json::from_str(r#"{"machine":"laptop","user":""}"#).expect("f");
        assert_eq!(
            f,
            Filter {
                machine: Some("laptop".into()),
                user: None
            }
        );
        assert!(Filter::default().is_empty());
    }
}
