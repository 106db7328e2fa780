//! What `arbor sync` needs of a session file beyond [`super::SessionStore`]: a read that
//! stops at the last complete line (a line pi is still writing is not a line yet), and
//! writes under the writer lock that happen only when the file is still as long as it was
//! when read: an append, and an atomic rewrite (a merge that inserts lines before this
//! machine's own) that keeps whatever another writer appended while it was written.
//!
//! pi takes no lock and appends by path (`appendFileSync`), so the lock keeps out arbor's
//! own writers only; the length checks are what keep pi's lines: before writing, the file
//! must be exactly as long as what was read; a rewrite checks again right before its rename
//! (same inode, same length), and after the rename copies any bytes that reached the old
//! file (pi had opened it before the rename) to the end of the new one.
use super::files::Rewrite;
use crate::file::Durability;
use crate::lock::{LockError, WriterLock};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

/// A session file as read for a sync.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Its complete lines (each without its newline).
    pub lines: Vec<Vec<u8>>,
    /// The bytes of those lines, newlines included (where a write must start).
    pub complete_len: u64,
    /// Bytes after the last newline (a line being written, or a torn tail): not read as a
    /// line, never sent.
    pub torn: u64,
    /// The file's size and modification time (ns) when it was read, if it holds exactly the
    /// complete lines read (no torn tail, not grown while read): what a later sync compares
    /// to know the file is unchanged without reading it.
    pub stamp: Option<(u64, i128)>,
}

fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
}

fn snapshot_of(mut f: File) -> io::Result<Snapshot> {
    let m = f.metadata()?;
    let size = m.len();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // What the file held when it was looked at: a line appended while reading waits for the
    // next sync.
    (&mut f).take(size).read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let torn = (bytes.len() - complete) as u64;
    let body = &bytes[..complete];
    let lines = if body.is_empty() {
        Vec::new()
    } else {
        body[..body.len() - 1]
            .split(|b| *b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    };
    let whole = torn == 0 && bytes.len() as u64 == size;
    Ok(Snapshot {
        lines,
        complete_len: complete as u64,
        torn,
        stamp: whole.then(|| (size, mtime_ns(&m))),
    })
}

/// Reads the complete lines of session file `path` (never through a planted symlink or
/// into a device, see [`crate::safe_fs::open_regular`]), without the writer lock.
///
/// # Errors
/// The file cannot be opened or read.
pub fn read_snapshot(path: &Path) -> io::Result<Snapshot> {
    snapshot_of(crate::safe_fs::open_regular(path)?)
}

/// What a checked write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Nothing: the file was not as long as expected (another writer appended since it was
    /// read); read it again.
    Moved {
        /// Its length found.
        found: u64,
    },
    /// Written.
    Done {
        /// The file's size and modification time right after, if it holds exactly what was
        /// written (nobody else appended meanwhile).
        stamp: Option<(u64, i128)>,
        /// Bytes another writer appended to the old file during a rewrite, copied to the
        /// end of the new one.
        recovered: u64,
    },
}

/// The writer of a session file, taken for a sync: the one writer of session files
/// ([`super::files::FileWriter`]) with the checks sync needs.
#[derive(Debug)]
pub struct SyncLock {
    writer: super::files::FileWriter,
}

/// Takes the writer lock of session file `path` (waiting up to `wait`).
///
/// # Errors
/// [`LockError::Busy`] when another writer holds it; a file that is not a regular file or
/// sits in an unsafe directory.
pub fn lock_session(path: &Path, wait: Option<Duration>) -> Result<SyncLock, LockError> {
    let lock = WriterLock::acquire(path, wait)?;
    Ok(SyncLock {
        writer: super::files::FileWriter::from_lock(path, lock, Durability::default()),
    })
}

/// A writer's failure as the I/O error sync reports.
fn as_io(e: super::BackendError) -> io::Error {
    match e {
        super::BackendError::Io { source, .. } => source,
        e => io::Error::other(e.to_string()),
    }
}

impl SyncLock {
    /// The session's real path.
    pub fn path(&self) -> &Path {
        self.writer.real_path()
    }

    /// Reads the file's complete lines (see [`read_snapshot`]).
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn read(&self) -> io::Result<Snapshot> {
        read_snapshot(self.path())
    }

    /// Overwrites omp's title slot (the 256 bytes at offset 0) with `slot` in place, as omp
    /// renames a session (see `title::write_slot_in_place`); `Ok(false)` when the file's first
    /// line is not such a slot (nothing written).
    ///
    /// # Errors
    /// The file cannot be opened or written.
    pub fn write_title_slot(&self, slot: &[u8]) -> Result<bool, crate::error::StoreError> {
        crate::title::write_slot_in_place(self.path(), slot, Durability::default())
    }

    /// Appends `bytes` (complete lines) if the file is still `expect` bytes long, through the
    /// writer (`FileWriter::append_if_len`).
    ///
    /// # Errors
    /// The file cannot be opened or written (nothing of `bytes` stays then).
    pub fn append_at(&mut self, expect: u64, bytes: &[u8]) -> io::Result<Written> {
        if let Some(found) = self.writer.append_if_len(expect, bytes).map_err(as_io)? {
            return Ok(Written::Moved { found });
        }
        let m = std::fs::symlink_metadata(self.path())?;
        let stamp = (m.len() == expect + bytes.len() as u64).then(|| (m.len(), mtime_ns(&m)));
        Ok(Written::Done {
            stamp,
            recovered: 0,
        })
    }

    /// Replaces the file, `expect` bytes long when read, by `content` atomically, through
    /// the writer's one rewrite: if it is not `expect` bytes long (or not the same file) right
    /// before the rename, nothing is replaced; bytes appended to the old file after that check
    /// are copied to the end of the new one.
    ///
    /// # Errors
    /// The rewrite failed (the original is untouched), or copying the late bytes failed.
    pub fn rewrite_at(&mut self, expect: u64, content: &[u8]) -> io::Result<Written> {
        self.rewrite_at_with(expect, content, &mut || {})
    }

    /// [`SyncLock::rewrite_at`], calling `after_check` between the last check and the rename
    /// (a test stands in for pi appending there).
    fn rewrite_at_with(
        &mut self,
        expect: u64,
        content: &[u8],
        after_check: &mut dyn FnMut(),
    ) -> io::Result<Written> {
        match self
            .writer
            .rewrite_checked(&[content], Some(expect), after_check)
            .map_err(as_io)?
        {
            Rewrite::Moved { found } => Ok(Written::Moved { found }),
            Rewrite::Done { recovered } => {
                let m = std::fs::symlink_metadata(self.path())?;
                let stamp = (recovered == 0 && m.len() == content.len() as u64)
                    .then(|| (m.len(), mtime_ns(&m)));
                Ok(Written::Done { stamp, recovered })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn session(dir: &Path, text: &str) -> std::path::PathBuf {
        let p = dir.join("s.jsonl");
        std::fs::write(&p, text).expect("write");
        p
    }

    fn append(p: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .expect("open");
        f.write_all(text.as_bytes()).expect("append");
    }

    #[test]
    fn a_read_stops_at_the_last_complete_line() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\nhalf");
        let s = read_snapshot(&p).expect("read");
        assert_eq!(s.lines, vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!((s.complete_len, s.torn), (4, 4));
        assert_eq!(s.stamp, None, "a torn tail: no stamp");
        append(&p, "\n");
        assert!(read_snapshot(&p).expect("read").stamp.is_some());
    }

    #[test]
    fn writes_refuse_a_file_that_grew_since_it_was_read() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        append(&p, "pi\n");
        assert_eq!(
            lock.append_at(len, b"x\n").expect("append"),
            Written::Moved { found: len + 3 }
        );
        assert_eq!(
            lock.rewrite_at(len, b"a\nx\nb\n").expect("rewrite"),
            Written::Moved { found: len + 3 }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nb\npi\n");
    }

    /// pi appends to the old file after the last check, before the rename: its line is
    /// copied to the end of the new file.
    #[test]
    fn bytes_appended_during_a_rewrite_are_kept() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.clone();
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut || append(&q, "pi\n"))
            .expect("rewrite");
        assert_eq!(
            w,
            Written::Done {
                stamp: None,
                recovered: 3
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        // Without an append: the stamp is the new file's.
        let len = lock.read().expect("read").complete_len;
        let w = lock.rewrite_at(len, b"a\nx\ny\nb\npi\n").expect("rewrite");
        assert!(
            matches!(
                w,
                Written::Done {
                    stamp: Some(_),
                    recovered: 0
                }
            ),
            "{w:?}"
        );
    }
}
