//! `arbor sync status`: each session's state, nothing changed.
use crate::compare::{compare, hashes_of, settled, Way};
use crate::conflict::{resolved, resolved_row};
use crate::cursor::load_cursors;
use crate::local::{local_sessions, Local, LocalFile, Selection};
use crate::report::{failed, unreadable, Row, State, SyncError};
use arbor_store::backend::sync_support::{self};
use arbor_store::backend::{SessionStore, StoredSession};
use std::collections::{HashMap, HashSet};

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
    let mut seen = HashSet::new();
    let chosen = Selection::new(ids);
    for LocalFile { id, path, stat, .. } in files {
        if !chosen.has(&id, Some(&path)) {
            continue;
        }
        seen.insert(id.clone());
        let cursor = cursors.get(&id);
        let row = Row::new(id.clone(), Some(path.clone()), State::LocalOnly);
        let row = match shared.get(&id) {
            None => row,
            Some(s) if settled(cursor, stat, s, Way::Status) => Row {
                state: State::InSync,
                ..row
            },
            Some(s) if resolved(cursor, s) => resolved_row(row),
            Some(s) => match sync_support::read_snapshot(&path) {
                Ok(snap) => {
                    let hashes = hashes_of(&snap.lines, 0);
                    match compare(remote, &id, &snap.lines, &hashes, s, cursor) {
                        Ok(plan) => Row {
                            state: plan.state,
                            note: plan.note,
                            ..row
                        },
                        Err(e) => failed(row, &e),
                    }
                }
                Err(e) => unreadable(id, path, &e),
            },
        };
        rows.push(row);
    }
    for (id, _) in shared {
        if !seen.contains(&id) && chosen.has(&id, None) {
            rows.push(Row::new(id, None, State::RemoteOnly));
        }
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(rows)
}
