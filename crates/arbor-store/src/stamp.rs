//! What says a file is the one read before: its device, inode, length and modification time.
//! A reader that keeps what it read of a file (`arbor mcp`'s last session, `arbor serve`'s)
//! trusts it while the stamp is the same, and a watcher of a growing session (`arbor mcp`'s
//! resource subscriptions, `arbor serve`'s live page) looks again when it changed.
use std::path::Path;

/// A file's identity and state ([`FileStamp::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileStamp {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The length in bytes.
    pub len: u64,
    /// The modification time, seconds.
    pub mtime: i64,
    /// The modification time's nanoseconds.
    pub mtime_nsec: i64,
}

impl FileStamp {
    /// The stamp of `path` now (symlinks followed); `None` when it cannot be read.
    ///
    /// ```
    /// let d = tempfile::tempdir().unwrap();
    /// let p = d.path().join("s.jsonl");
    /// std::fs::write(&p, "a\n").unwrap();
    /// let a = arbor_store::FileStamp::of(&p).unwrap();
    /// assert_eq!(a.len, 2);
    /// std::fs::write(&p, "ab\n").unwrap();
    /// assert_ne!(arbor_store::FileStamp::of(&p), Some(a));
    /// ```
    pub fn of(path: &Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
        })
    }
}
