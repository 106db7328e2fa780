//! This machine's side: the agent directories ([`Local`]), the session files found in them,
//! and which of them a command selects.
use crate::cursor::Cursor;
use crate::report::{unreadable, Row, State};
use arbor_store::backend::files::FileStore;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
    /// The OS user pushing ([`arbor_store::paths::user_name`]), recorded with the sessions
    /// it pushes first (`None`: unknown).
    pub user: Option<String>,
}

pub(crate) fn stat(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), arbor_store::backend::sync_support::mtime_ns(&m)))
}

/// A local session file, as found at the start of a sync.
pub(crate) struct LocalFile<'l> {
    /// Its header's id (for a file unchanged since the last sync, the cursor's).
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    /// The agent directory it is in.
    pub(crate) store: &'l FileStore,
    /// Its size and modification time when found.
    pub(crate) stat: Option<(u64, i128)>,
}

/// The local session files, and (as rows) the files and directories that could not be read
/// and the files whose id another file has already (each id is one session: the first file
/// in path order is synced, the others named).
pub(crate) fn local_sessions<'l>(
    local: &'l Local,
    cursors: &HashMap<String, Cursor>,
) -> (Vec<LocalFile<'l>>, Vec<Row>) {
    let known: HashMap<&Path, (&String, &Cursor)> = cursors
        .iter()
        .filter_map(|(id, c)| Some((c.path.as_deref()?, (id, c))))
        .collect();
    let mut out: Vec<LocalFile<'l>> = Vec::new();
    let mut first: HashMap<String, PathBuf> = HashMap::new();
    let mut rows = Vec::new();
    let same = local.pi.agent_dir() == local.omp.agent_dir();
    for store in [&local.pi, &local.omp]
        .into_iter()
        .take(if same { 1 } else { 2 })
    {
        let (files, dirs) = store.scan();
        for (dir, e) in dirs {
            rows.push(unreadable(String::new(), dir, &e));
        }
        for path in files {
            let stat = stat(&path);
            let remembered = match (known.get(path.as_path()), stat) {
                (Some((id, c)), Some(now)) if c.stamp == Some(now) => Some((*id).clone()),
                _ => None,
            };
            if let Some(id) = remembered.or_else(|| FileStore::id_of(&path)) {
                if let Some(other) = first.get(&id) {
                    let mut row = Row::new(id, Some(path), State::Unreadable);
                    row.note = Some(format!(
                        "not synced: {} has the same session id (one of the two is a copy; \
                         give it another id, e.g. with `arbor fork`, or remove it)",
                        other.display()
                    ));
                    row.unresolved = true;
                    rows.push(row);
                    continue;
                }
                first.insert(id.clone(), path.clone());
                out.push(LocalFile {
                    id,
                    path,
                    store,
                    stat,
                });
            } else if let Err(e) = arbor_store::open_regular(&path) {
                // (A readable file without a session header is not a session: passed over.)
                rows.push(unreadable(String::new(), path, &e));
            }
        }
    }
    (out, rows)
}

/// The sessions a command names (`ids`: none for all): a session is chosen when one of them
/// is its id, begins its id, or is its file's path. Built once per command and asked per
/// session in constant time (asking each of `ids` for each session made `arbor serve
/// --from`'s start, which names every session of the store, quadratic: 2.5 s of CPU at
/// 10,000 sessions).
pub(crate) struct Selection<'a> {
    all: bool,
    /// The ids given, by length (a prefix of an id is looked up as the id's first bytes).
    by_len: std::collections::BTreeMap<usize, std::collections::HashSet<&'a str>>,
    paths: std::collections::HashSet<&'a Path>,
}

impl<'a> Selection<'a> {
    pub(crate) fn new(ids: &'a [String]) -> Selection<'a> {
        let mut by_len: std::collections::BTreeMap<usize, std::collections::HashSet<&str>> =
            std::collections::BTreeMap::new();
        for s in ids {
            by_len.entry(s.len()).or_default().insert(s.as_str());
        }
        Selection {
            all: ids.is_empty(),
            by_len,
            paths: ids.iter().map(Path::new).collect(),
        }
    }

    /// Whether the session `id` (its file at `path`, if any) is chosen.
    pub(crate) fn has(&self, id: &str, path: Option<&Path>) -> bool {
        self.all
            || self
                .by_len
                .range(..=id.len())
                .any(|(len, set)| id.get(..*len).is_some_and(|head| set.contains(head)))
            || path.is_some_and(|p| self.paths.contains(p))
    }
}

/// The local agent directory of a tool: omp's for `omp`, pi's for anything else.
pub(crate) fn store_of<'l>(local: &'l Local, tool: &str) -> &'l FileStore {
    if tool == "omp" {
        &local.omp
    } else {
        &local.pi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a selection chose when each of the ids was asked for each session: the rule
    /// [`Selection`] keeps.
    fn asked_each(ids: &[String], id: &str, path: Option<&Path>) -> bool {
        ids.is_empty()
            || ids.iter().any(|s| {
                s == id || id.starts_with(s.as_str()) || path.is_some_and(|p| p == Path::new(s))
            })
    }

    /// A selection chooses exactly what asking each id chose: an id, a prefix of one (of any
    /// length, not cut inside a character), a file's path (as a path: `a//b` is `a/b`), none
    /// for all.
    #[test]
    fn a_selection_chooses_what_each_id_chose() {
        let sessions: [(&str, Option<&str>); 6] = [
            ("0a1b2c3d-0000-4000-8000-000000000001", Some("/s/p/x.jsonl")),
            ("0a1b2c3d-0000-4000-8000-000000000002", None),
            ("ffffffff-0000-4000-8000-000000000003", Some("/s/p/y.jsonl")),
            ("é-session", Some("/s/q/z.jsonl")),
            ("0a", None),
            ("", None),
        ];
        let choices: [&[&str]; 8] = [
            &[],
            &["0a1b2c3d-0000-4000-8000-000000000001"],
            &["0a1b"],
            &["0a1b", "ffff", "0a1b2c3d-0000-4000-8000-000000000002"],
            &["/s/p/y.jsonl", "/s/q//z.jsonl"],
            &["\u{e9}", "\u{c3}"],
            &["0a1b2c3d-0000-4000-8000-0000000000011"],
            &["", "zzz"],
        ];
        for ids in choices {
            let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            let chosen = Selection::new(&ids);
            for (id, path) in sessions {
                let path = path.map(Path::new);
                assert_eq!(
                    chosen.has(id, path),
                    asked_each(&ids, id, path),
                    "{ids:?} {id} {path:?}"
                );
            }
        }
    }
}
