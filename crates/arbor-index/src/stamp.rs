//! What lets a command trust the catalog without checking it: the state (`stat`) of the
//! catalog file as arbor last left it, and which checks held then, kept beside it in
//! `<catalog>-verified`.
//!
//! The checks that catch damage cost time that grows with the catalog (`quick_check` of the
//! files table, FTS5's `integrity-check`: 460 ms at 10,000 sessions). Damage comes from
//! outside arbor's own SQLite writes (a process killed while SQLite wrote, a lost write-back,
//! another tool or a person writing the file); arbor's own writes, through SQLite's
//! transactions, keep a sound catalog sound. So a check is needed only when the file is not
//! exactly as arbor left it after a checked state:
//!
//! - When a process closes the catalog (cleanly, [`Drop`] of [`crate::Catalog`]), it copies
//!   the write-ahead log into the file (`wal_checkpoint(TRUNCATE)`), and when the log is
//!   then empty it writes the file's size, modification time (ns), inode and device to the
//!   stamp, with what was checked (the files table; the text index).
//! - Opening compares: the same file, an empty or missing log, and a stamp saying the files
//!   table was checked: no `quick_check`. Anything else (a process that died while writing,
//!   so no stamp; a write by someone else; a log not yet copied) checks as before.
//! - A search that finds fewer hits than its limit trusts "no match" when the stamp says the
//!   text index was checked; else it checks the index first (and the stamp records it).
//!
//! SQLite's corruption errors during any query are damage as before (the catalog is set
//! aside and rebuilt). What this does not see: a write by another program while an arbor
//! process has the catalog open (that process's stamp covers it when it closes), and damage
//! below the file system that leaves size and mtime as they were (SQLite reports it when
//! it reads the damaged pages).
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The catalog file's identity and state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileState {
    size: u64,
    mtime_ns: i64,
    ino: u64,
    dev: u64,
}

impl FileState {
    /// The file's inode.
    pub(crate) fn ino(&self) -> u64 {
        self.ino
    }
}

/// A stamp: the catalog file's state, and what had been checked when it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub state: FileState,
    /// The files table (and the schema) passed `quick_check`.
    pub files_ok: bool,
    /// The text index passed FTS5's integrity check.
    pub fts_ok: bool,
}

const MAGIC: &str = "arbor catalog stamp 1";

/// Where the stamp of the catalog `path` is kept.
pub(crate) fn stamp_path(path: &Path) -> PathBuf {
    arbor_store::paths::with_suffix(path, "-verified")
}

/// The state of the catalog file when its log is empty or missing (`None` otherwise, or when
/// it cannot be read: nothing is trusted then).
pub(crate) fn current(path: &Path) -> Option<FileState> {
    match std::fs::symlink_metadata(arbor_store::paths::with_suffix(path, "-wal")) {
        Ok(m) if m.len() > 0 => return None,
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    Some(FileState {
        size: m.len(),
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        ino: m.ino(),
        dev: m.dev(),
    })
}

/// The stamp of the catalog `path`, if there is a readable one.
pub(crate) fn read(path: &Path) -> Option<Stamp> {
    // Only a stamp of the catalog's owner counts (one planted beside a catalog in a shared
    // directory does not).
    let owner = std::fs::symlink_metadata(path).ok()?.uid();
    if std::fs::symlink_metadata(stamp_path(path)).ok()?.uid() != owner {
        return None;
    }
    let bytes = arbor_store::read_regular_at_most(&stamp_path(path), 256).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let nums: Vec<i64> = lines
        .next()?
        .split(' ')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [size, mtime_ns, ino, dev, files_ok, fts_ok] = nums[..] else {
        return None;
    };
    Some(Stamp {
        state: FileState {
            size: size as u64,
            mtime_ns,
            ino: ino as u64,
            dev: dev as u64,
        },
        files_ok: files_ok == 1,
        fts_ok: fts_ok == 1,
    })
}

/// Writes the stamp of the catalog `path` (a new 0600 file renamed over the old one; a
/// planted symlink is replaced, never followed). Best effort: without a stamp the next
/// command checks.
pub(crate) fn write(path: &Path, s: &Stamp) {
    let text = format!(
        "{MAGIC}\n{} {} {} {} {} {}\n",
        s.state.size as i64,
        s.state.mtime_ns,
        s.state.ino as i64,
        s.state.dev as i64,
        i64::from(s.files_ok),
        i64::from(s.fts_ok)
    );
    let _ = arbor_store::replace_file(&stamp_path(path), text.as_bytes());
}

/// Removes the stamp (the catalog is set aside or rebuilt).
pub(crate) fn remove(path: &Path) {
    let _ = std::fs::remove_file(stamp_path(path));
}
