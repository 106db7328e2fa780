//! The database files arbor creates or opens for writing: private when arbor creates them,
//! recognised before arbor writes to them, and checked for writability up front.
//!
//! - A new `catalog.db` or `history.db` is created empty with mode 0600 (`O_EXCL`, no symlink
//!   followed) before SQLite opens it: SQLite gives its `-wal` and `-shm` files the mode of the
//!   database file, so they are 0600 too. Missing directories are created 0700. (SQLite
//!   itself creates files 0644 less the umask.)
//! - The catalog carries SQLite's `application_id` [`CATALOG_APP_ID`]. A file is only ever
//!   written, or moved aside as damaged, when it is arbor's catalog: see [`identify`].
use crate::error::{IndexError, IoContext};
use std::io::Read;
use std::path::Path;

/// SQLite `application_id` of arbor's catalog: "ARBC".
pub const CATALOG_APP_ID: u32 = 0x4152_4243;

/// Creates the missing directories of `path` (0700) and, if `path` does not exist, an empty
/// file with mode 0600 for SQLite to open.
pub(crate) fn prepare_private(path: &Path) -> Result<(), IndexError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            arbor_store::file::create_dir_private(dir).at(dir)?;
        }
    }
    match arbor_store::safe_fs::create_new_private(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).at(path),
    }
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

/// What a file at a catalog path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No file, or an empty one: arbor creates its catalog there.
    New,
    /// arbor's catalog (its application id, or the tables of a catalog made before arbor set
    /// one).
    Ours,
    /// Something else; the reason says what.
    Foreign(String),
}

/// Tells what the file at `path` is, reading its 100-byte SQLite header and, for a database
/// without an application id, its table names (read-only). Nothing is written.
pub fn identify(path: &Path) -> Result<Identity, IndexError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Identity::New),
        Err(e) => return Err(e).at(path),
    };
    if !meta.is_file() {
        return Ok(Identity::Foreign(format!(
            "it {}",
            arbor_store::safe_fs::not_regular(&meta)
        )));
    }
    if meta.len() == 0 {
        return Ok(Identity::New);
    }
    let mut head = Vec::with_capacity(100);
    arbor_store::safe_fs::open_regular(path)
        .at(path)?
        .take(100)
        .read_to_end(&mut head)
        .at(path)?;
    if head.len() < 100 || !head.starts_with(b"SQLite format 3\0") {
        return Ok(Identity::Foreign("it is not an SQLite database".into()));
    }
    let app_id = u32::from_be_bytes([head[68], head[69], head[70], head[71]]);
    if app_id == CATALOG_APP_ID {
        return Ok(Identity::Ours);
    }
    if app_id != 0 {
        return Ok(Identity::Foreign(format!(
            "it is the SQLite database of another application (application id {app_id:#010x})"
        )));
    }
    // No application id: a catalog of an earlier arbor has its `meta` table with a schema
    // version; an SQLite file with no table at all is as good as new.
    let conn = match rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => {
            return Ok(Identity::Foreign(format!(
                "it is an SQLite database arbor cannot read ({e})"
            )))
        }
    };
    let tables: Vec<String> = match conn
        .prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        }) {
        Ok(t) => t,
        Err(e) => {
            return Ok(Identity::Foreign(format!(
                "it is an SQLite database arbor cannot read ({e})"
            )))
        }
    };
    if tables.is_empty() {
        return Ok(Identity::New);
    }
    let has_schema = tables.iter().any(|t| t == "meta")
        && conn
            .query_row("SELECT 1 FROM meta WHERE key='schema'", [], |_| Ok(()))
            .is_ok();
    if has_schema && tables.iter().any(|t| t == "files") {
        return Ok(Identity::Ours);
    }
    let mut names: String = tables.join(", ").chars().take(80).collect();
    if names.chars().count() < tables.join(", ").chars().count() {
        names.push('…');
    }
    Ok(Identity::Foreign(format!(
        "it is an SQLite database without arbor's tables (it has: {names})"
    )))
}
