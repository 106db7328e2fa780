//! Where a pulled session is written: a checked file name in its project directory, created
//! through the one writer of a new session file.
use crate::local::{store_of, Local};
use crate::report::SyncError;
use arbor_store::backend::{BackendError, SessionMeta};
use arbor_store::Durability;
use std::path::{Path, PathBuf};

/// Whether `id` is a session id arbor may put in a file name: pi's
/// [`check_session_id`](arbor_store::ids::check_session_id) (letters, digits, `.`, `_`, `-`,
/// a letter or digit at both ends: no `/`, never `.` or `..`), at most 128 bytes (a UUID is 36).
pub(crate) fn valid_session_id(id: &str) -> bool {
    id.len() <= 128 && arbor_store::ids::check_session_id(id).is_ok()
}

/// Whether `t` is a time exactly as pi and omp write it (`new Date().toISOString()`:
/// `2026-01-02T03:04:05.678Z`): it parses, and formats back to the same text.
pub(crate) fn valid_iso_time(t: &str) -> bool {
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
pub(crate) fn place(local: &Local, meta: &SessionMeta) -> Result<PathBuf, String> {
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
pub(crate) fn header_id(bytes: &[u8]) -> Option<String> {
    let (_, line, fields) = arbor_core::header::locate(arbor_core::header::first_lines(bytes))?;
    fields.str(line, "id").map(|id| id.into_owned())
}

/// Writes the new session file `target` holding `bytes` (whole lines) through the one writer
/// of a session file (`FileWriter::create`): under the writer lock (a concurrent arbor writer
/// is excluded, never waited for), created exclusively (never onto a file at that name, never
/// through a planted symlink), flushed by `durability` with its directory entry
/// ([`Durability::Flush`] for a person's session, `None` for a cache its owner re-checks
/// after a crash of the machine), removed again when its write fails. `Ok(Some(why))`: not
/// written (a file at that name, its lock held by another writer), for the row to report.
pub(crate) fn write_new_session(
    target: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<Option<String>, SyncError> {
    use arbor_store::backend::files::FileWriter;
    use arbor_store::backend::SessionWriter;
    use arbor_store::StoreError;
    let failed = |e: &dyn std::fmt::Display| BackendError::Db {
        store: "files".into(),
        message: format!("{}: {e}", target.display()),
    };
    let mut w = match FileWriter::create(target, None, durability) {
        Ok(w) => w,
        Err(StoreError::Lock(e)) => {
            return Ok(Some(format!("not written: {}: {e}", target.display())))
        }
        Err(e) => return Err(failed(&e).into()),
    };
    // Written as read, whole lines (a last line without its newline gets one, as every
    // append does), without a copy.
    let owned;
    let bytes = if bytes.is_empty() || bytes.ends_with(b"\n") {
        bytes
    } else {
        owned = [bytes, b"\n"].concat();
        &owned
    };
    match w.append_joined(bytes).and_then(|()| w.flush()) {
        Ok(()) => Ok(None),
        Err(BackendError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            Ok(Some(format!(
                "not written: {} exists already",
                target.display()
            )))
        }
        Err(e) => Err(failed(&e).into()),
    }
}
