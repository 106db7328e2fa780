//! SQLite database files arbor owns (the catalog, the history, a `sync` store): created
//! private, and recognised before arbor writes to them.
//!
//! - A new database is created empty with mode 0600 (`O_EXCL`, no symlink followed) before
//!   SQLite opens it: SQLite gives its `-wal` and `-shm` files the mode of the database file,
//!   so they are 0600 too. Missing directories are created 0700. (SQLite itself creates files
//!   0644 less the umask.)
//! - Each kind of file carries its SQLite `application_id`; a file is only ever written when
//!   [`identify`] says it is arbor's own of that kind (or new).
use std::io::{self, Read};
use std::path::Path;

/// What a file at the path of one of arbor's databases is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No file, an empty one, or an SQLite database without any table: arbor may create its
    /// database there.
    New,
    /// arbor's database of that kind (its application id, or the tables of one made before
    /// arbor set an id).
    Ours,
    /// Something else; the reason says what ("it is not an SQLite database", …).
    Foreign(String),
}

/// Creates the missing directories of `path` (0700) and, if `path` does not exist, an empty
/// file with mode 0600 for SQLite to open (never through a symlink: see
/// [`crate::safe_fs::create_new_private`]).
///
/// # Errors
/// Creating a directory or the file failed (other than the file existing already).
pub fn prepare_private(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            crate::file::create_dir_private(dir)?;
        }
    }
    match crate::safe_fs::create_new_private(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Tells what the file at `path` is, for arbor's database kind whose SQLite `application_id`
/// is `app_id`: its 100-byte SQLite header, and for a database without an application id,
/// its table names (read-only), which `legacy` judges (a database of that kind made before
/// arbor set an id: `legacy(connection, table names)`). Nothing is written.
///
/// # Errors
/// The file exists but cannot be examined (permissions).
pub fn identify(
    path: &Path,
    app_id: u32,
    legacy: &dyn Fn(&rusqlite::Connection, &[String]) -> bool,
) -> io::Result<Identity> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Identity::New),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Ok(Identity::Foreign(format!(
            "it {}",
            crate::safe_fs::not_regular(&meta)
        )));
    }
    if meta.len() == 0 {
        return Ok(Identity::New);
    }
    let mut head = Vec::with_capacity(100);
    crate::safe_fs::open_regular(path)?
        .take(100)
        .read_to_end(&mut head)?;
    if head.len() < 100 || !head.starts_with(b"SQLite format 3\0") {
        return Ok(Identity::Foreign("it is not an SQLite database".into()));
    }
    let found = u32::from_be_bytes([head[68], head[69], head[70], head[71]]);
    if found == app_id {
        return Ok(Identity::Ours);
    }
    if found != 0 {
        return Ok(Identity::Foreign(format!(
            "it is the SQLite database of another application (application id {found:#010x})"
        )));
    }
    // No application id: one made by an earlier arbor has its tables; an SQLite file with no
    // table at all is as good as new.
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
    if legacy(&conn, &tables) {
        return Ok(Identity::Ours);
    }
    let all = tables.join(", ");
    let mut names: String = all.chars().take(80).collect();
    if names.chars().count() < all.chars().count() {
        names.push('…');
    }
    Ok(Identity::Foreign(format!(
        "it is an SQLite database without arbor's tables (it has: {names})"
    )))
}
