//! `arbor sync`: sessions between this machine's agent directories (a
//! [`FileStore`] each) and a shared store (SQLite, PostgreSQL).
//!
//! Sessions are append-only logs of lines, so two copies of a session compare by prefix: the
//! shorter one must be a prefix of the longer, which then holds what the other lacks (sent by
//! push, fetched by pull); when neither is a prefix of the other, both sides changed since
//! they last agreed, and the session is a **conflict**: reported, never merged. `pull
//! --fork-on-conflict` keeps both: the shared copy is written next to the local one as a
//! fork (a new id, `parentSession` naming the local file).
//!
//! A cursor file per shared store remembers, for each local file, its size and modification
//! time and the shared copy's line count and size at the last sync: a session unchanged on
//! both sides since then is not read again (an incremental push after one append reads one
//! file).
use arbor_store::backend::files::FileStore;
use arbor_store::backend::{BackendError, SessionMeta, SessionStore, StoredSession};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a session is, between here and the shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// The same lines on both sides.
    InSync,
    /// Only here (push creates it there).
    LocalOnly,
    /// Only there (pull writes it here).
    RemoteOnly,
    /// Here has `n` more lines.
    LocalAhead(u64),
    /// There has `n` more lines.
    RemoteAhead(u64),
    /// A local session file or directory that could not be read (the row's `path`, its
    /// `note` why): not synced, and `arbor sync` exits with status 1.
    Unreadable,
    /// Both changed since they last agreed (`local` and `remote` lines, `common` shared).
    Conflict {
        /// Lines here.
        local: u64,
        /// Lines there.
        remote: u64,
        /// Lines both start with.
        common: u64,
    },
}

/// One session's line in a report.
#[derive(Debug, Clone)]
pub struct Row {
    /// The session id.
    pub id: String,
    /// The local file, if any.
    pub path: Option<PathBuf>,
    /// The state before the operation.
    pub state: State,
    /// Lines sent (push) or written (pull).
    pub moved: u64,
    /// Bytes of those lines.
    pub bytes: u64,
    /// What was done about it, when not just `moved` lines (a fork written, a refusal).
    pub note: Option<String>,
    /// Left undone: a conflict (without a fork kept), a writer in the way, a copy that moved
    /// while syncing. `arbor sync` exits with status 1 then.
    pub unresolved: bool,
    /// omp blobs the moved lines name that were sent (push) or written here (pull).
    pub blobs: u64,
    /// Blobs the moved lines name that the giving side does not hold (the lines moved
    /// without them).
    pub missing_blobs: Vec<String>,
}

impl Row {
    fn new(id: String, path: Option<PathBuf>, state: State) -> Row {
        Row {
            id,
            path,
            state,
            moved: 0,
            bytes: 0,
            note: None,
            unresolved: false,
            blobs: 0,
            missing_blobs: Vec::new(),
        }
    }
}

/// Why a sync failed as a whole (a session's own trouble is a row's note instead).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The shared or the local store failed.
    #[error(transparent)]
    Store(#[from] BackendError),
    /// The cursor file could not be written.
    #[error("{path}: {source}")]
    Cursor {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Where this machine's sessions are, and how a pull places them.
#[derive(Debug, Clone)]
pub struct Local {
    /// pi's agent directory (`~/.pi/agent`).
    pub pi: FileStore,
    /// omp's agent directory (`~/.omp/agent`).
    pub omp: FileStore,
    /// `--map-cwd FROM=TO`: a shared session whose cwd starts with FROM is placed in TO's
    /// project directory here (its bytes, the header's cwd included, are not changed).
    pub map_cwd: Vec<(String, String)>,
    /// The cursor file of this shared store.
    pub cursor_file: PathBuf,
    /// This machine's name, recorded with what it pushes.
    pub machine: String,
}

/// Last-sync facts of one local file (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Cursor {
    size: u64,
    mtime_ns: i128,
    remote_lines: u64,
    remote_bytes: u64,
    /// The file it was (an unchanged file's id is then known without reading its header).
    path: Option<PathBuf>,
}

fn load_cursors(path: &Path) -> HashMap<String, Cursor> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let id = f.next()?.to_string();
            let c = Cursor {
                size: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                remote_lines: f.next()?.parse().ok()?,
                remote_bytes: f.next()?.parse().ok()?,
                path: f.next().filter(|p| !p.is_empty()).map(PathBuf::from),
            };
            Some((id, c))
        })
        .collect()
}

fn save_cursors(path: &Path, cursors: &HashMap<String, Cursor>) -> Result<(), SyncError> {
    let mut ids: Vec<&String> = cursors.keys().collect();
    ids.sort();
    let mut text = String::new();
    for id in ids {
        let c = &cursors[id];
        // A path that cannot be one field of the line is left out (its header is read).
        let path = c
            .path
            .as_ref()
            .and_then(|p| p.to_str())
            .filter(|p| !p.contains(['\t', '\n', '\r']))
            .unwrap_or("");
        text.push_str(&format!(
            "{id}\t{}\t{}\t{}\t{}\t{path}\n",
            c.size, c.mtime_ns, c.remote_lines, c.remote_bytes
        ));
    }
    let err = |source| SyncError::Cursor {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        arbor_store::file::create_dir_private(dir).map_err(err)?;
    }
    arbor_store::file::atomic_write(path, &[text.as_bytes()]).map_err(err)
}

fn stat(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::metadata(path).ok()?;
    let t = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((m.len(), t.as_nanos() as i128))
}

/// A local session file, as found at the start of a sync.
struct LocalFile<'l> {
    /// Its header's id (for a file unchanged since the last sync, the cursor's).
    id: String,
    path: PathBuf,
    /// The agent directory it is in.
    store: &'l FileStore,
    /// Its size and modification time when found (taken once, before it is read).
    stat: Option<(u64, i128)>,
}

/// The local session files, and (as rows) the files and directories that could not be read.
fn local_sessions<'l>(
    local: &'l Local,
    cursors: &HashMap<String, Cursor>,
) -> (Vec<LocalFile<'l>>, Vec<Row>) {
    let known: HashMap<&Path, (&String, &Cursor)> = cursors
        .iter()
        .filter_map(|(id, c)| Some((c.path.as_deref()?, (id, c))))
        .collect();
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    let mut not_read = |path: PathBuf, why: std::io::Error| {
        unreadable.push(self::unreadable(String::new(), path, &why))
    };
    let same = local.pi.agent_dir() == local.omp.agent_dir();
    for store in [&local.pi, &local.omp]
        .into_iter()
        .take(if same { 1 } else { 2 })
    {
        let (files, dirs) = store.scan();
        for (dir, e) in dirs {
            not_read(dir, e);
        }
        for path in files {
            let stat = stat(&path);
            let remembered = match (known.get(path.as_path()), stat) {
                (Some((id, c)), Some((size, mtime))) if c.size == size && c.mtime_ns == mtime => {
                    Some((*id).clone())
                }
                _ => None,
            };
            if let Some(id) = remembered.or_else(|| FileStore::id_of(&path)) {
                out.push(LocalFile {
                    id,
                    path,
                    store,
                    stat,
                });
            } else if let Err(e) = arbor_store::safe_fs::open_regular(&path) {
                // (A readable file without a session header is not a session: passed over.)
                not_read(path, e);
            }
        }
    }
    (out, unreadable)
}

/// The row of a local file or directory that could not be read (`id` empty when unknown).
fn unreadable(id: String, path: PathBuf, why: &dyn std::fmt::Display) -> Row {
    let mut row = Row::new(id, Some(path), State::Unreadable);
    row.note = Some(format!("cannot be read, not synced: {why}"));
    row.unresolved = true;
    row
}

/// The lines of a local session file (an error: the caller's row is [`unreadable`]).
fn read_lines(path: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let bytes = arbor_store::safe_fs::read_regular(path)?;
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    Ok(body.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect())
}

fn bytes_of(lines: &[Vec<u8>]) -> u64 {
    lines.iter().map(|l| l.len() as u64 + 1).sum()
}

/// Compares a local copy with the shared one: the state, and (when the shared copy is
/// longer) its extra lines. The copies agree on their common part when its first line, its
/// last line and its size in bytes are the same on both sides (sessions only grow at the end;
/// a rewrite, such as omp's renamed title slot on the first line, shows as a conflict).
fn compare(
    remote: &dyn SessionStore,
    id: &str,
    local: &[Vec<u8>],
    shared: &StoredSession,
) -> Result<(State, Vec<Vec<u8>>), BackendError> {
    let (n, r) = (local.len() as u64, shared.lines);
    let k = n.min(r);
    let extra = if r > n {
        remote.read(id, n)?
    } else {
        Vec::new()
    };
    if k == 0 {
        return Ok(if n == 0 {
            (State::RemoteAhead(r), extra)
        } else {
            (State::LocalAhead(n), extra)
        });
    }
    let first = remote.read_range(id, 0, 1)?;
    let last = remote.read_range(id, k - 1, k)?;
    let shared_prefix = shared.bytes.saturating_sub(bytes_of(&extra));
    let agree = first.first() == local.first()
        && last.first() == local.get(k as usize - 1)
        && shared_prefix == bytes_of(&local[..k as usize]);
    if !agree {
        let all = remote.read(id, 0)?;
        let common = all.iter().zip(local).take_while(|(a, b)| a == b).count() as u64;
        return Ok((
            State::Conflict {
                local: n,
                remote: r,
                common,
            },
            Vec::new(),
        ));
    }
    Ok(match n.cmp(&r) {
        std::cmp::Ordering::Equal => (State::InSync, Vec::new()),
        std::cmp::Ordering::Greater => (State::LocalAhead(n - r), Vec::new()),
        std::cmp::Ordering::Less => (State::RemoteAhead(r - n), extra),
    })
}

/// Whether neither copy changed since the last sync recorded them: the file has (`stat`) the
/// size and modification time, the shared copy the lines and bytes, of the cursor.
fn unchanged_since_sync(
    cursors: &HashMap<String, Cursor>,
    id: &str,
    stat: Option<(u64, i128)>,
    shared: &StoredSession,
) -> bool {
    match (stat, cursors.get(id)) {
        (Some((size, mtime)), Some(c)) => {
            c.size == size
                && c.mtime_ns == mtime
                && c.remote_lines == shared.lines
                && c.remote_bytes == shared.bytes
        }
        _ => false,
    }
}

/// The blobs omp lines name (each once, in order of first mention); none for pi's.
fn named_blobs<'a>(tool: &str, lines: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
    if tool != "omp" {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    lines
        .into_iter()
        .flat_map(arbor_core::blobref::find_blob_hashes)
        .filter(|h| seen.insert(h.clone()))
        .collect()
}

/// Copies the blobs `hashes` from `from` to `to` where `to` lacks them, before the lines that
/// name them move (a session never names a blob its store lacks because of a sync). Returns
/// how many were copied, and the ones `from` does not hold either.
fn copy_blobs(
    from: &dyn SessionStore,
    to: &dyn SessionStore,
    hashes: &[String],
) -> Result<(u64, Vec<String>), BackendError> {
    let (mut copied, mut missing) = (0, Vec::new());
    for h in hashes {
        if to.has_blob(h)? {
            continue;
        }
        match from.get_blob(h)? {
            Some(bytes) => {
                to.put_blob(h, &bytes)?;
                copied += 1;
            }
            None => missing.push(h.clone()),
        }
    }
    Ok((copied, missing))
}

fn selected(ids: &[String], id: &str, path: Option<&Path>) -> bool {
    ids.is_empty()
        || ids.iter().any(|s| {
            s == id || id.starts_with(s.as_str()) || path.is_some_and(|p| p == Path::new(s))
        })
}

/// Sends what the shared store lacks: new sessions whole, longer ones their new lines (under
/// the shared copy's writer lease), each session in one transaction: a push killed halfway
/// leaves every session as it was or as it is here, never in between. Only sessions selected by `ids` (ids, id prefixes or
/// paths; empty: all).
///
/// # Errors
/// The shared store failing as a whole (a session's own conflict is a row).
pub fn push(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let shared: HashMap<String, StoredSession> = remote
        .list()?
        .into_iter()
        .map(|s| (s.meta.id.clone(), s))
        .collect();
    let (files, mut rows) = local_sessions(local, &cursors);
    for LocalFile {
        id,
        path,
        store: here,
        stat: found,
    } in files
    {
        if !selected(ids, &id, Some(&path)) {
            continue;
        }
        let there = shared.get(&id);
        if let Some(s) = there {
            if unchanged_since_sync(&cursors, &id, found, s) {
                if let Some(c) = cursors.get_mut(&id) {
                    c.path = Some(path.clone());
                }
                rows.push(Row::new(id, Some(path), State::InSync));
                continue;
            }
        }
        let lines = match read_lines(&path) {
            Ok(l) => l,
            Err(e) => {
                rows.push(unreadable(id, path, &e));
                continue;
            }
        };
        let mut row = Row::new(id.clone(), Some(path.clone()), State::LocalOnly);
        match there {
            None => {
                let header = lines
                    .iter()
                    .find(|l| crate::schema::extract(l).etype.as_deref() == Some("session"));
                let tool = if lines.first() != header { "omp" } else { "pi" };
                let mut meta: SessionMeta = arbor_store::backend::meta_from_header(
                    header.map(Vec::as_slice).unwrap_or_default(),
                    tool,
                );
                meta.id = id.clone();
                meta.machine = Some(local.machine.clone());
                meta.source_path = Some(path.display().to_string());
                let hashes = named_blobs(tool, lines.iter().map(Vec::as_slice));
                (row.blobs, row.missing_blobs) = copy_blobs(here, remote, &hashes)?;
                // One step: after a crash the session is there whole or not at all.
                let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
                remote.create(&meta, &refs)?;
                row.moved = lines.len() as u64;
                row.bytes = bytes_of(&lines);
            }
            Some(s) => {
                let (state, _) = compare(remote, &id, &lines, s)?;
                row.unresolved = matches!(state, State::Conflict { .. });
                row.state = state.clone();
                if let State::LocalAhead(k) = state {
                    let mut w = match remote.writer(&id, Some(Duration::from_secs(10))) {
                        Ok(w) => w,
                        Err(e @ BackendError::Busy { .. }) => {
                            row.note = Some(e.to_string());
                            row.unresolved = true;
                            rows.push(row);
                            continue;
                        }
                        Err(e) => return Err(e.into()),
                    };
                    let new = &lines[lines.len() - k as usize..];
                    if w.len() != s.lines {
                        row.note =
                            Some("the shared copy changed while pushing; run sync again".into());
                        row.unresolved = true;
                        rows.push(row);
                        continue;
                    }
                    let hashes = named_blobs(&s.meta.tool, new.iter().map(Vec::as_slice));
                    (row.blobs, row.missing_blobs) = copy_blobs(here, remote, &hashes)?;
                    let refs: Vec<&[u8]> = new.iter().map(Vec::as_slice).collect();
                    w.append(&refs)?;
                    row.moved = k;
                    row.bytes = bytes_of(new);
                }
            }
        }
        if !matches!(row.state, State::Conflict { .. }) && row.note.is_none() {
            // The file as found before it was read: if it grew since, the next sync sees
            // another size and reads it again.
            if let Some((size, mtime)) = found {
                let remote_lines = match &row.state {
                    State::RemoteAhead(_) => there.map_or(0, |s| s.lines),
                    _ => lines.len() as u64,
                };
                let remote_bytes = match &row.state {
                    State::RemoteAhead(_) => there.map_or(0, |s| s.bytes),
                    _ => bytes_of(&lines),
                };
                cursors.insert(
                    id.clone(),
                    Cursor {
                        size,
                        mtime_ns: mtime,
                        remote_lines,
                        remote_bytes,
                        path: Some(path.clone()),
                    },
                );
            }
        }
        rows.push(row);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

/// The local agent directory of a tool: omp's for `omp`, pi's for anything else.
fn store_of<'l>(local: &'l Local, tool: &str) -> &'l FileStore {
    if tool == "omp" {
        &local.omp
    } else {
        &local.pi
    }
}

/// Whether `id` is a session id arbor may put in a file name: pi's
/// [`check_session_id`](arbor_store::ids::check_session_id) (letters, digits, `.`, `_`, `-`,
/// a letter or digit at both ends: no `/`, never `.` or `..`), at most 128 bytes (a UUID is 36).
fn valid_session_id(id: &str) -> bool {
    id.len() <= 128 && arbor_store::ids::check_session_id(id).is_ok()
}

/// Whether `t` is a time exactly as pi and omp write it (`new Date().toISOString()`:
/// `2026-01-02T03:04:05.678Z`): it parses, and formats back to the same text.
fn valid_iso_time(t: &str) -> bool {
    arbor_core::time::parse_iso_ms(t)
        .is_some_and(|ms| arbor_core::time::format_iso_ms(ms as i64) == t)
}

/// Where a shared session goes here: its tool's agent directory, its (mapped) cwd's project
/// directory, and the file name it had where it was pushed from (when that is a plain session
/// file name), else pi's `<created>_<id>.jsonl`.
///
/// Everything in a store row is untrusted (a shared store may have been written by anyone
/// who can write to it): the name is built only from a checked id ([`valid_session_id`]) and
/// a checked time ([`valid_iso_time`]), and the result must be a file directly in a project
/// directory directly in the sessions directory. Otherwise the reason is returned, and
/// nothing is written for the row.
fn place(local: &Local, meta: &SessionMeta) -> Result<PathBuf, String> {
    if !valid_session_id(&meta.id) {
        return Err(format!(
            "refused: the shared store names it {:?}, which is not a session id",
            meta.id
        ));
    }
    let store = store_of(local, &meta.tool);
    let mut cwd = meta.cwd.clone();
    for (from, to) in &local.map_cwd {
        if let Some(rest) = cwd.strip_prefix(from.as_str()) {
            if rest.is_empty() || rest.starts_with('/') {
                cwd = format!("{to}{rest}");
                break;
            }
        }
    }
    let dialect = if meta.tool == "omp" {
        arbor_core::doc::Dialect::Omp
    } else {
        arbor_core::doc::Dialect::Pi
    };
    let root = arbor_store::paths::sessions_root(store.agent_dir());
    let dir = arbor_store::paths::default_session_dir(dialect, store.agent_dir(), &cwd);
    // The name it had where it was pushed from, when that is a plain session file name (its
    // last component only, not hidden, no control character).
    let name = meta
        .source_path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .filter(|n| {
            n.ends_with(".jsonl")
                && !n.starts_with('.')
                && n.len() <= 255
                && !n.contains('\\')
                && n.chars().all(|c| !c.is_control())
        })
        .map(str::to_string);
    let name = match name {
        Some(n) => n,
        None if valid_iso_time(&meta.created) => {
            format!(
                "{}_{}.jsonl",
                arbor_store::ids::file_timestamp(&meta.created),
                meta.id
            )
        }
        None => {
            return Err(format!(
            "refused: the shared store gives it the creation time {:?}, which is not an ISO time",
            meta.created
        ))
        }
    };
    let path = dir.join(&name);
    // Exactly <sessions>/<project directory>/<name>: two plain components below the root.
    let inside = path.strip_prefix(&root).is_ok_and(|rel| {
        let parts: Vec<_> = rel.components().collect();
        parts.len() == 2
            && parts
                .iter()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    if !inside {
        return Err(format!(
            "refused: its place here, {}, is not a file of a project directory in {}",
            path.display(),
            root.display()
        ));
    }
    Ok(path)
}

/// The id the session header among the first two lines of `bytes` names (omp's title slot may
/// come first).
fn header_id(bytes: &[u8]) -> Option<String> {
    bytes.split(|b| *b == b'\n').take(2).find_map(|l| {
        let x = crate::schema::extract(l);
        (x.etype.as_deref() == Some("session"))
            .then_some(x.id)
            .flatten()
    })
}

/// Writes here what only the shared store has: new sessions as files laid out as their tool
/// lays them out (byte-identical to what was pushed), longer ones their new lines (under the
/// local writer lock). A conflict is reported; with `fork_on_conflict` the shared copy is
/// also written as a fork of the local session.
///
/// # Errors
/// The shared store failing as a whole.
pub fn pull(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
    fork_on_conflict: bool,
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let (files, mut rows) = local_sessions(local, &cursors);
    let here: HashMap<String, (PathBuf, Option<(u64, i128)>)> = files
        .into_iter()
        .map(|f| (f.id, (f.path, f.stat)))
        .collect();
    for s in remote.list()? {
        let id = s.meta.id.clone();
        let (path, found) = match here.get(&id) {
            Some((p, st)) => (Some(p.clone()), *st),
            None => (None, None),
        };
        if !selected(ids, &id, path.as_deref()) {
            continue;
        }
        let mut row = Row::new(id.clone(), path.clone(), State::RemoteOnly);
        match &path {
            None => {
                let target = match place(local, &s.meta) {
                    Ok(t) => t,
                    Err(why) => {
                        row.note = Some(why);
                        row.unresolved = true;
                        rows.push(row);
                        continue;
                    }
                };
                let bytes = remote.read_joined(&id, 0)?;
                if header_id(&bytes).as_deref() != Some(id.as_str()) {
                    row.note = Some(format!(
                        "refused: its lines are not session {id:?} (their header names {:?})",
                        header_id(&bytes).unwrap_or_default()
                    ));
                    row.unresolved = true;
                    rows.push(row);
                    continue;
                }
                let here = store_of(local, &s.meta.tool);
                let hashes = named_blobs(&s.meta.tool, bytes.split(|b| *b == b'\n'));
                (row.blobs, row.missing_blobs) = copy_blobs(remote, here, &hashes)?;
                if let Some(dir) = target.parent() {
                    arbor_store::file::create_dir_private(dir).map_err(|e| BackendError::Db {
                        store: "files".into(),
                        message: format!("{}: {e}", dir.display()),
                    })?;
                }
                match arbor_store::file::write_new(&target, &bytes) {
                    Ok(()) => {}
                    // Another file by that name (perhaps this session, unreadable here): kept,
                    // and this row left undone.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        row.note =
                            Some(format!("not written: {} exists already", target.display()));
                        row.unresolved = true;
                        rows.push(row);
                        continue;
                    }
                    Err(e) => {
                        return Err(BackendError::Db {
                            store: "files".into(),
                            message: format!("{}: {e}", target.display()),
                        }
                        .into())
                    }
                }
                row.moved = bytes.iter().filter(|b| **b == b'\n').count() as u64;
                row.bytes = bytes.len() as u64;
                row.path = Some(target);
            }
            Some(_) if unchanged_since_sync(&cursors, &id, found, &s) => {
                row.state = State::InSync;
            }
            Some(p) => {
                let lines = match read_lines(p) {
                    Ok(l) => l,
                    Err(e) => {
                        rows.push(unreadable(id, p.clone(), &e));
                        continue;
                    }
                };
                let (state, extra) = compare(remote, &id, &lines, &s)?;
                row.unresolved = matches!(state, State::Conflict { .. }) && !fork_on_conflict;
                row.state = state.clone();
                match state {
                    State::RemoteAhead(_) => {
                        let store = store_of(local, &s.meta.tool);
                        match store.writer(&id, None) {
                            Ok(mut w) => {
                                let hashes =
                                    named_blobs(&s.meta.tool, extra.iter().map(Vec::as_slice));
                                (row.blobs, row.missing_blobs) =
                                    copy_blobs(remote, store, &hashes)?;
                                let refs: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
                                w.append(&refs)?;
                                row.moved = extra.len() as u64;
                                row.bytes = bytes_of(&extra);
                            }
                            Err(e) => {
                                row.note = Some(e.to_string());
                                row.unresolved = true;
                            }
                        }
                    }
                    State::Conflict { .. } if fork_on_conflict => {
                        let all = remote.read(&id, 0)?;
                        let hashes = named_blobs(&s.meta.tool, all.iter().map(Vec::as_slice));
                        let here = store_of(local, &s.meta.tool);
                        (row.blobs, row.missing_blobs) = copy_blobs(remote, here, &hashes)?;
                        row.note = Some(fork_copy(&all, &s, p)?);
                    }
                    _ => {}
                }
            }
        }
        let target = row.path.clone();
        if let (Some(t), false) = (
            target,
            matches!(row.state, State::Conflict { .. } | State::LocalAhead(_))
                || row.note.is_some(),
        ) {
            if let Some((size, mtime)) = stat(&t) {
                cursors.insert(
                    id.clone(),
                    Cursor {
                        size,
                        mtime_ns: mtime,
                        remote_lines: s.lines,
                        remote_bytes: s.bytes,
                        path: Some(t.clone()),
                    },
                );
            }
        }
        rows.push(row);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

/// Writes the shared copy of a conflicting session next to the local one as a fork: a new
/// session id, `parentSession` naming the local file, every other line of `lines` (the shared
/// copy) as it is.
fn fork_copy(lines: &[Vec<u8>], s: &StoredSession, local_path: &Path) -> Result<String, SyncError> {
    let new_id = arbor_store::ids::new_session_id(if s.meta.tool == "omp" {
        arbor_core::doc::Dialect::Omp
    } else {
        arbor_core::doc::Dialect::Pi
    });
    // The one fork (arbor_store::backend::fork): the header rewritten, every other line kept.
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let parent = local_path.display().to_string();
    let out = arbor_store::backend::fork::fork_lines(
        &lines,
        &new_id,
        &parent,
        &arbor_store::backend::fork::ForkHeader::Kept,
    )
    .bytes();
    // Next to the local file, named from the new id and the shared copy's creation time
    // when that is a checked ISO time (else now): nothing of the row's text but a checked time.
    let created = if valid_iso_time(&s.meta.created) {
        s.meta.created.clone()
    } else {
        arbor_store::ids::now_iso()
    };
    let dir = match local_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let target = arbor_store::paths::session_file_name(dir, &created, &new_id);
    arbor_store::file::write_new(&target, &out).map_err(|e| BackendError::Db {
        store: "files".into(),
        message: format!("{}: {e}", target.display()),
    })?;
    Ok(format!(
        "the shared copy kept as fork {new_id} ({})",
        target.display()
    ))
}

/// Each session's state, without changing anything.
///
/// # Errors
/// The shared store failing.
pub fn status(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
) -> Result<Vec<Row>, SyncError> {
    let shared: HashMap<String, StoredSession> = remote
        .list()?
        .into_iter()
        .map(|s| (s.meta.id.clone(), s))
        .collect();
    let cursors = load_cursors(&local.cursor_file);
    let (files, mut rows) = local_sessions(local, &cursors);
    let mut seen = std::collections::HashSet::new();
    for LocalFile { id, path, stat, .. } in files {
        if !selected(ids, &id, Some(&path)) {
            continue;
        }
        seen.insert(id.clone());
        let state = match shared.get(&id) {
            None => State::LocalOnly,
            Some(s) if unchanged_since_sync(&cursors, &id, stat, s) => State::InSync,
            Some(s) => match read_lines(&path) {
                Ok(lines) => compare(remote, &id, &lines, s)?.0,
                Err(e) => {
                    rows.push(unreadable(id, path, &e));
                    continue;
                }
            },
        };
        rows.push(Row::new(id, Some(path), state));
    }
    for (id, _) in shared {
        if !seen.contains(&id) && selected(ids, &id, None) {
            rows.push(Row::new(id, None, State::RemoteOnly));
        }
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(rows)
}
