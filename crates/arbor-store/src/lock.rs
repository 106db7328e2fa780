//! One writer per session file: an advisory `flock` on `<real path>.lock`, naming its holder,
//! and one on the session file itself, so that the lock belongs to the file (its device and
//! inode), not to the name a writer used.
//!
//! The lock file holds `pid host since` of the holder. `flock` locks die with their process,
//! so a lock left by a crashed writer is simply taken over. The lock file is removed on
//! release; a taker re-checks after locking that the path still names the file it locked, so
//! removal cannot let two writers in. Lock files are opened without following symlinks.
use crate::safe_fs;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
#[non_exhaustive]
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
///
/// Two locks are held: an `flock` on `<real session>.lock` (which exists before the session
/// does and names the holder) and an `flock` on the session file itself once it exists. The
/// second is keyed by the file's identity, so a writer that reaches the same file through a
/// symlink or a hard link is refused too.
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    lock_path: PathBuf,
    real: PathBuf,
    session: Option<File>,
}

/// The lock file's path for a session file.
pub fn lock_path(session: &Path) -> PathBuf {
    crate::paths::with_suffix(session, ".lock")
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

fn read_holder(lock: &Path) -> String {
    let mut s = String::new();
    if let Ok((f, _)) = safe_fs::open_checked(OpenOptions::new().read(true), lock, true) {
        let _ = f.take(4096).read_to_string(&mut s);
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

/// The process holding an `flock` on the file `meta` describes, from `/proc/locks`.
fn inode_holder(meta: &std::fs::Metadata) -> Option<u32> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = meta.dev();
    let want = format!(
        "{:02x}:{:02x}:{}",
        libc::major(dev),
        libc::minor(dev),
        meta.ino()
    );
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.contains(&"->") || f.get(1) != Some(&"FLOCK") || f.get(5) != Some(&want.as_str()) {
            return None;
        }
        f.get(4)?.parse().ok()
    })
}

/// `flock(LOCK_EX | LOCK_NB)` (std's `File::try_lock` on Linux): `Ok(true)` taken,
/// `Ok(false)` held by someone else.
fn try_flock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Releases an `flock` of ours (closing the descriptor would too; this is for the lock
/// file, which is removed while still locked).
fn unflock(file: &File) {
    let _ = file.unlock();
}

fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.ino() == b.ino() && a.dev() == b.dev()
}

/// Opens (creating, 0600) the lock file without following a symlink, and checks that it is
/// a regular file of the caller's (or, for root, of anyone's: root may lock a user's session).
fn open_lock_file(lock_path: &Path) -> io::Result<File> {
    let (file, meta) = safe_fs::open_checked(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600),
        lock_path,
        true,
    )?;
    let me = safe_fs::euid();
    if me != 0 && meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "is owned by another user (uid {}); arbor does not write to it",
                meta.uid()
            ),
        ));
    }
    Ok(file)
}

/// What holding the lock failed on.
enum Attempt {
    Held(WriterLock),
    Busy(String),
}

impl WriterLock {
    /// Takes the writer lock of `session`. With `wait`, retries until it is free or the time
    /// is up; without, a held lock is refused at once with [`LockError::Busy`].
    ///
    /// The session is first resolved to its real path (symlinks followed; a dangling link or
    /// a path that is not a regular file is refused), the directory it is in is checked
    /// ([`safe_fs::check_write_dir`]), and the lock file is opened without following
    /// symlinks. A writer reaching the same file by another name (a symlink, a hard link) is
    /// refused like any other.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use arbor_store::lock::{LockError, WriterLock};
    /// let s = dir.path().join("s.jsonl");
    /// std::fs::write(&s, "{}\n").unwrap();
    /// let held = WriterLock::acquire(&s, None).unwrap();
    /// let link = dir.path().join("link.jsonl");
    /// std::os::unix::fs::symlink(&s, &link).unwrap();
    /// assert!(matches!(WriterLock::acquire(&link, None), Err(LockError::Busy { .. })));
    /// drop(held);
    /// ```
    ///
    /// # Errors
    /// [`LockError::Busy`] naming the holder when the lock is taken (after `wait`, if given);
    /// [`LockError::Io`] for a session or lock file that cannot be used (not a regular file, a
    /// planted symlink, a directory every user may write without the sticky bit).
    pub fn acquire(session: &Path, wait: Option<Duration>) -> Result<WriterLock, LockError> {
        let io_err = |source| LockError::Io {
            path: session.to_path_buf(),
            source,
        };
        let real = safe_fs::real_path_for_write(session).map_err(io_err)?;
        let dir = real.parent().unwrap_or(Path::new("/")).to_path_buf();
        let owner = std::fs::metadata(&real).ok().map(|m| m.uid());
        safe_fs::check_write_dir(&dir, owner).map_err(|source| LockError::Io {
            path: dir.clone(),
            source,
        })?;
        let lock_path = lock_path(&real);
        let deadline = wait.map(|w| Instant::now() + w);
        loop {
            match Self::attempt(&real, &lock_path)? {
                Attempt::Held(mut lock) => {
                    let since = crate::ids::now_iso();
                    let info = format!("{} {} {}\n", std::process::id(), hostname(), since);
                    // Written over what a last holder left, then cut to its own length:
                    // never emptied by a truncate first (ext4's `auto_da_alloc` writes a file
                    // truncated to nothing out when it is closed: under another process's
                    // writes, each new session's lock waited for the disk).
                    lock.file.rewind().map_err(io_err)?;
                    lock.file.write_all(info.as_bytes()).map_err(io_err)?;
                    lock.file.set_len(info.len() as u64).map_err(io_err)?;
                    // A session not written yet has no rewrite of its own to clean after (a
                    // leftover of a deleted namesake goes at the first lock once it exists):
                    // listing its directory for each new file made writing N new sessions
                    // into one directory cost N listings of it (`arbor serve --from`'s fill).
                    if owner.is_some() {
                        remove_stale_rewrites(&real);
                    }
                    return Ok(lock);
                }
                Attempt::Busy(holder) => match deadline {
                    Some(d) if Instant::now() < d => std::thread::sleep(Duration::from_millis(20)),
                    _ => {
                        return Err(LockError::Busy {
                            path: session.to_path_buf(),
                            holder,
                        })
                    }
                },
            }
        }
    }

    fn attempt(real: &Path, lock_path: &Path) -> Result<Attempt, LockError> {
        loop {
            let file = open_lock_file(lock_path).map_err(|source| LockError::Io {
                path: lock_path.to_path_buf(),
                source,
            })?;
            let io_err = |source| LockError::Io {
                path: real.to_path_buf(),
                source,
            };
            if !try_flock(&file).map_err(io_err)? {
                return Ok(Attempt::Busy(read_holder(lock_path)));
            }
            // The holder before us may have removed the file after we opened it.
            match (std::fs::symlink_metadata(lock_path), file.metadata()) {
                (Ok(a), Ok(b)) if same_file(&a, &b) => {}
                _ => continue,
            }
            let mut lock = WriterLock {
                file,
                lock_path: lock_path.to_path_buf(),
                real: real.to_path_buf(),
                session: None,
            };
            // Dropping `lock` on the way out removes the lock file we hold: fine, a taker
            // re-checks the inode.
            return match lock.lock_session_file().map_err(io_err)? {
                None => Ok(Attempt::Held(lock)),
                Some(holder) => Ok(Attempt::Busy(holder)),
            };
        }
    }

    /// Locks the session file itself (by identity) if it exists and is not locked by us
    /// already. `Some(holder)` when another process holds it (through another name).
    fn lock_session_file(&mut self) -> io::Result<Option<String>> {
        loop {
            let now = match std::fs::metadata(&self.real) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.session = None;
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if let Some(f) = &self.session {
                if f.metadata().map(|m| same_file(&m, &now)).unwrap_or(false) {
                    return Ok(None);
                }
            }
            let f = safe_fs::open_regular(&self.real)?;
            let meta = f.metadata()?;
            if !try_flock(&f)? {
                let who = inode_holder(&meta)
                    .map(|pid| format!("pid {pid}, through another name of the same file"))
                    .unwrap_or_else(|| "through another name of the same file".into());
                return Ok(Some(who));
            }
            // The file may have been replaced between open and flock: lock what the path
            // names now.
            match std::fs::metadata(&self.real) {
                Ok(m) if same_file(&m, &meta) => {
                    self.session = Some(f);
                    return Ok(None);
                }
                _ => continue,
            }
        }
    }

    /// Re-takes the lock on the session file after the holder created it or replaced it (an
    /// atomic rewrite makes a new file): the identity lock must follow the file the path
    /// names. Fails with [`LockError::Busy`] if another process locked the new file first.
    pub fn follow_file(&mut self) -> Result<(), LockError> {
        match self.lock_session_file() {
            Ok(None) => Ok(()),
            Ok(Some(holder)) => Err(LockError::Busy {
                path: self.real.clone(),
                holder,
            }),
            Err(source) => Err(LockError::Io {
                path: self.real.clone(),
                source,
            }),
        }
    }

    /// The session's real path (symlinks resolved): where the holder writes.
    pub fn real_path(&self) -> &Path {
        &self.real
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
        if let Some(f) = &self.session {
            unflock(f);
        }
        // Remove while still holding the lock; takers re-check the inode.
        let _ = std::fs::remove_file(&self.lock_path);
        unflock(&self.file);
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

    /// The lock of a session not written yet does not list its directory for stale
    /// rewrites (one listing per new file made a fill of N files into one directory
    /// quadratic): a leftover there stays until the lock is taken of the session once it
    /// exists.
    #[test]
    fn a_new_sessions_lock_leaves_the_directory_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = dir.path().join("s.jsonl");
        let stale = dir.path().join(".s.jsonl.a1B2c3.tmp");
        std::fs::write(&stale, b"partial").expect("stale");
        drop(WriterLock::acquire(&s, None).expect("lock of a new session"));
        assert!(stale.exists(), "a new session's lock listed its directory");
        std::fs::write(&s, b"x\n").expect("session");
        drop(WriterLock::acquire(&s, None).expect("lock"));
        assert!(!stale.exists(), "the stale rewrite was left");
    }
}
