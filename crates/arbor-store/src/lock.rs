//! One writer per session: an advisory `flock` on `<session>.lock`, naming its holder.
//!
//! The lock file holds `pid host since` of the holder. `flock` locks die with their process,
//! so a lock left by a crashed writer is simply taken over. The file is removed on release;
//! a taker re-checks after locking that the path still names the file it locked, so removal
//! cannot let two writers in.
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// ISO time the lock was taken.
    pub since: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on {} since {}", self.pid, self.host, self.since)
    }
}

/// Errors taking a lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another writer has the session.
    #[error("{path} is being written by another process ({holder})")]
    Busy {
        /// The session file.
        path: PathBuf,
        /// Who holds it, as far as the lock file says.
        holder: String,
    },
    /// I/O failure.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The session file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// A held writer lock; released on drop.
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    lock_path: PathBuf,
}

/// The lock file's path for a session file.
pub fn lock_path(session: &Path) -> PathBuf {
    let mut p = session.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

fn read_holder(lock: &Path) -> String {
    let mut s = String::new();
    if let Ok(mut f) = File::open(lock) {
        let _ = f.read_to_string(&mut s);
    }
    let mut it = s.split_whitespace();
    match (
        it.next().and_then(|p| p.parse::<u32>().ok()),
        it.next(),
        it.next(),
    ) {
        (Some(pid), Some(host), Some(since)) => Holder {
            pid,
            host: host.into(),
            since: since.into(),
        }
        .to_string(),
        _ => "holder unknown".into(),
    }
}

impl WriterLock {
    /// Takes the writer lock of `session`. With `wait`, retries until it is free or the time
    /// is up; without, a held lock is refused at once with [`LockError::Busy`].
    pub fn acquire(session: &Path, wait: Option<Duration>) -> Result<WriterLock, LockError> {
        let lock_path = lock_path(session);
        let io_err = |source| LockError::Io {
            path: session.to_path_buf(),
            source,
        };
        let deadline = wait.map(|w| Instant::now() + w);
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&lock_path)
                .map_err(io_err)?;
            // SAFETY: flock on a descriptor we own; no memory is involved.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                // The holder before us may have removed the file after we opened it.
                let same = match (std::fs::metadata(&lock_path), file.metadata()) {
                    (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                    _ => false,
                };
                if !same {
                    continue;
                }
                let mut lock = WriterLock { file, lock_path };
                let since = crate::ids::now_iso();
                let info = format!("{} {} {}\n", std::process::id(), hostname(), since);
                lock.file.set_len(0).map_err(io_err)?;
                lock.file.rewind().map_err(io_err)?;
                lock.file.write_all(info.as_bytes()).map_err(io_err)?;
                remove_stale_rewrites(session);
                return Ok(lock);
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io_err(err));
            }
            match deadline {
                Some(d) if Instant::now() < d => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    return Err(LockError::Busy {
                        path: session.to_path_buf(),
                        holder: read_holder(&lock_path),
                    });
                }
            }
        }
    }
}

/// Removes the temporary files of atomic rewrites of `session` that a killed writer left
/// behind (`.<name>.XXXXXX.tmp`, the names [`crate::file::atomic_write`] gives them). Only the
/// lock holder rewrites a session, so once the lock is ours no such file belongs to a live
/// writer; none of them is ever the truth (the session is replaced only by the rename, which
/// did not happen), so removing them loses nothing. Returns how many were removed.
pub fn remove_stale_rewrites(session: &Path) -> usize {
    let (Some(dir), Some(name)) = (session.parent(), session.file_name()) else {
        return 0;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(read) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for item in read.flatten() {
        let file_name = item.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(middle) = file_name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let ours = middle.len() == 6 && middle.bytes().all(|b| b.is_ascii_alphanumeric());
        let is_file = item.file_type().map(|t| t.is_file()).unwrap_or(false);
        if ours && is_file && std::fs::remove_file(item.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Remove while still holding the lock; takers re-check the inode.
        let _ = std::fs::remove_file(&self.lock_path);
        // SAFETY: unlocking our own descriptor.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_and_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = dir.path().join("s.jsonl");
        let a = WriterLock::acquire(&s, None).expect("first lock");
        match WriterLock::acquire(&s, None) {
            Err(LockError::Busy { holder, .. }) => {
                assert!(holder.contains(&format!("pid {}", std::process::id())))
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(a);
        let _b = WriterLock::acquire(&s, Some(Duration::from_millis(100))).expect("free again");
    }

    #[test]
    fn stale_rewrite_files_go_when_the_lock_is_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = dir.path().join("s.jsonl");
        std::fs::write(&s, b"x\n").expect("session");
        let stale = dir.path().join(".s.jsonl.a1B2c3.tmp");
        std::fs::write(&stale, b"partial").expect("stale");
        // Not ours: another session's rewrite, a wrong shape, the session itself.
        let others = [
            ".t.jsonl.a1B2c3.tmp",
            ".s.jsonl.toolong1.tmp",
            "s.jsonl.a1B2c3.tmp",
        ];
        for o in others {
            std::fs::write(dir.path().join(o), b"keep").expect("other");
        }
        let _lock = WriterLock::acquire(&s, None).expect("lock");
        assert!(!stale.exists(), "the stale rewrite was left");
        for o in others {
            assert!(dir.path().join(o).exists(), "{o} was removed");
        }
        assert_eq!(std::fs::read(&s).expect("read"), b"x\n");
    }
}
