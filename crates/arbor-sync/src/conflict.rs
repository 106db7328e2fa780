//! Conflicts and their resolution: `pull --fork-on-conflict` keeps the shared copy as a fork,
//! and a resolved conflict is not reported again.
use crate::cursor::Cursor;
use crate::place::{valid_iso_time, write_new_session};
use crate::report::{Row, State, SyncError};
use arbor_store::backend::StoredSession;
use std::path::Path;

/// Whether a conflict with this shared copy was resolved by a fork.
pub(crate) fn resolved(c: Option<&Cursor>, s: &StoredSession) -> bool {
    c.is_some_and(|c| c.resolved == Some((s.lines, s.bytes)))
}

pub(crate) fn resolved_row(mut row: Row) -> Row {
    row.state = State::Resolved;
    row.note = Some(
        "a conflict resolved earlier: the shared copy is kept here as a fork, this copy is not \
         synced"
            .into(),
    );
    row
}

/// Writes the shared copy of a conflicting session next to the local one as a fork: a new
/// session id, `parentSession` naming the local file, every other line of `lines` (the shared
/// copy) as it is.
pub(crate) fn fork_copy(
    lines: &[&[u8]],
    s: &StoredSession,
    local_path: &Path,
) -> Result<String, SyncError> {
    let new_id = arbor_store::ids::new_session_id(if s.meta.tool == "omp" {
        arbor_core::doc::Dialect::Omp
    } else {
        arbor_core::doc::Dialect::Pi
    });
    // The one fork (arbor_store::backend::fork): the header rewritten, every other line kept.
    let parent = local_path.display().to_string();
    let out = arbor_store::backend::fork::fork_lines(
        lines,
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
    if let Some(why) = write_new_session(&target, &out, arbor_store::Durability::default())? {
        return Ok(format!("the shared copy not kept as a fork: {why}"));
    }
    Ok(format!(
        "the shared copy kept as fork {new_id} ({})",
        target.display()
    ))
}
