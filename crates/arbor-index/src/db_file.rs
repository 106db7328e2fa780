//! The database files arbor creates or opens for writing: private when arbor creates them,
//! recognised before arbor writes to them, and checked for writability up front.
//!
//! - A new `catalog.db` or `history.db` is created empty with mode 0600 before SQLite opens it
//!   ([`arbor_store::sqlite_file::prepare_private`], shared with the sync store).
//! - The catalog carries SQLite's `application_id` [`CATALOG_APP_ID`]. A file is only ever
//!   written, or moved aside as damaged, when it is arbor's catalog: see [`identify`].
use crate::error::{IndexError, IoContext};
use std::path::Path;

/// SQLite `application_id` of arbor's catalog: "ARBC".
pub const CATALOG_APP_ID: u32 = 0x4152_4243;

/// Creates the missing directories of `path` (0700) and, if `path` does not exist, an empty
/// file with mode 0600 for SQLite to open ([`arbor_store::sqlite_file::prepare_private`]).
pub(crate) fn prepare_private(path: &Path) -> Result<(), IndexError> {
    arbor_store::sqlite_file::prepare_private(path).at(path)
}

/// Whether the caller may write `path` and create files beside it (SQLite's `-wal`, `-shm`):
/// an error otherwise, so that the caller can fall back before anything is half written.
pub(crate) fn check_writable(path: &Path) -> Result<(), IndexError> {
    use std::ffi::CString;
    let ok = |p: &Path| -> std::io::Result<()> {
        let c = CString::new(p.as_os_str().as_encoded_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: access on a NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    // The directory, or the nearest ancestor that exists (the rest is created then).
    let mut dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    while !dir.exists() {
        match dir.parent() {
            Some(d) if !d.as_os_str().is_empty() => dir = d,
            _ => break,
        }
    }
    ok(dir).at(dir)?;
    if path.exists() {
        ok(path).at(path)?;
    }
    Ok(())
}

// What a file at a catalog path is (see [`arbor_store::sqlite_file::Identity`]).
pub use arbor_store::sqlite_file::Identity;

/// Tells what the file at `path` is ([`arbor_store::sqlite_file::identify`] with the
/// catalog's application id; a catalog of an earlier arbor, without one, has its `meta` table
/// with a schema version and its `files` table). Nothing is written.
pub fn identify(path: &Path) -> Result<Identity, IndexError> {
    let legacy = |conn: &rusqlite::Connection, tables: &[String]| {
        tables.iter().any(|t| t == "meta")
            && tables.iter().any(|t| t == "files")
            && conn
                .query_row("SELECT 1 FROM meta WHERE key='schema'", [], |_| Ok(()))
                .is_ok()
    };
    arbor_store::sqlite_file::identify(path, CATALOG_APP_ID, &legacy).at(path)
}
