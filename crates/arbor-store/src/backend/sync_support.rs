//! What `arbor sync` needs of a session file beyond [`super::SessionStore`]: a read that
//! stops at the last complete line (a line pi is still writing is not a line yet), and
//! writes under the writer lock that happen only when the file is still as long as it was
//! when read: an append, and an atomic rewrite (a merge that inserts lines before this
//! machine's own) that keeps whatever another writer appended while it was written.
//!
//! pi takes no lock and appends by path (`appendFileSync`), so the lock keeps out arbor's
//! own writers only; the length checks are what keep pi's lines: before writing, the file
//! must be exactly as long as what was read; a rewrite checks again right before its rename
//! (same inode, same length) and links the old file as `<session>.arbor-merge`
//! ([`merge_sidecar_path`]) so that the rename never unlinks it; after the rename the lines
//! that reached the old file (pi had opened it before the rename) are copied to the end of
//! the new one, and the sidecar is removed once nobody holds the old file open (a write
//! lease; else `/proc`), or settled by a later sync ([`SyncLock::settle_leftover`]).
use crate::file::Durability;
use crate::lock::{LockError, WriterLock};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
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

/// A file's modification time in nanoseconds, as the stamps of [`Snapshot`] and [`Written`]
/// and sync's cursor record it (they are compared with each other).
pub fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
}

fn snapshot_of(f: File) -> io::Result<Snapshot> {
    use std::io::BufRead;
    let m = f.metadata()?;
    let size = m.len();
    // What the file held when it was looked at (a line appended while reading waits for the
    // next sync), read line by line: the lines are the only copy of the file in memory.
    let mut r = io::BufReader::with_capacity(1 << 16, f.take(size));
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    let (mut read, mut complete) = (0u64, 0u64);
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if let Some(line) = buf.strip_suffix(b"\n") {
            complete = read;
            lines.push(line.to_vec());
        }
    }
    let torn = read - complete;
    let whole = torn == 0 && read == size;
    Ok(Snapshot {
        lines,
        complete_len: complete,
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
        /// Bytes of lines another writer appended to the old file during a rewrite, copied
        /// to the end of the new one.
        recovered: u64,
        /// Why the old file of a rewrite is still kept beside the session (see
        /// [`Leftover::kept`]); `None` when it is gone. With `unlinked`: why lines written to
        /// the old file may have been lost.
        kept: Option<String>,
        /// The file system has no hard links: the old file was held open across the rename
        /// instead of being kept as [`merge_sidecar_path`], and a crash before its late lines
        /// were copied would have lost them (the text says so, for the report). `None`: the
        /// sidecar protocol ran.
        unlinked: Option<String>,
    },
}

/// The writer lock of a session file, taken for a sync.
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
            kept: None,
            unlinked: None,
        })
    }

    /// Replaces the file, `expect` bytes long when read, by `content` atomically (see
    /// `atomic_write_checked`): if it is not `expect` bytes long (or not the
    /// same file) right before the rename, nothing is replaced. Nothing pi appends meanwhile
    /// is lost: right before the rename the old file is linked under
    /// [`merge_sidecar_path`], so its inode stays reachable whatever the timing; after the
    /// rename the complete lines that reached it beyond `expect` are copied to the end of the
    /// new file, and the sidecar is removed only once nobody holds the old file open (see
    /// [`SyncLock::settle_leftover`]); else it stays for the next sync. On a file system
    /// without hard links the old file is held open by descriptor across the rename instead
    /// and its late lines copied through it ([`Written::Done::unlinked`] says so: a crash in
    /// that window loses them, there is no sidecar).
    ///
    /// # Errors
    /// The rewrite failed (the original is untouched), a previous merge's sidecar is still
    /// held open, or copying the late lines failed (they are still in the sidecar then).
    pub fn rewrite_at(&mut self, expect: u64, content: &[u8]) -> io::Result<Written> {
        self.rewrite_at_with(expect, content, &mut |_| {})
    }

    /// [`SyncLock::rewrite_at`], calling `at` at each [`Moment`] (a test stands in for pi
    /// there).
    fn rewrite_at_with(
        &mut self,
        expect: u64,
        content: &[u8],
        at: &mut dyn FnMut(Moment),
    ) -> io::Result<Written> {
        let (recovered, kept, unlinked) = match self
            .writer
            .rewrite_checked(&[content], Some(expect), at)
            .map_err(as_io)?
        {
            super::files::Rewrite::Moved { found } => return Ok(Written::Moved { found }),
            super::files::Rewrite::Done {
                recovered,
                kept,
                unlinked,
            } => (recovered, kept, unlinked),
        };
        let m = std::fs::symlink_metadata(self.path())?;
        let stamp = (recovered == 0 && kept.is_none() && m.len() == content.len() as u64)
            .then(|| (m.len(), mtime_ns(&m)));
        Ok(Written::Done {
            stamp,
            recovered,
            kept,
            unlinked,
        })
    }

    /// Settles the old file a merge (or any rewrite) of this session left under
    /// [`merge_sidecar_path`] (see `FileWriter::settle_leftover`).
    ///
    /// # Errors
    /// The sidecar or the live file cannot be read, or the live file cannot be appended to.
    pub fn settle_leftover(&mut self) -> io::Result<Leftover> {
        self.writer.settle_leftover().map_err(as_io)
    }
}

/// Settles the sidecar of session `real` (see `FileWriter::settle_leftover`, the one caller
/// with the lock held).
pub(super) fn settle_sidecar(real: &Path) -> io::Result<Leftover> {
    let side = merge_sidecar_path(real);
    let m = match std::fs::symlink_metadata(&side) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Leftover::default()),
        Err(e) => return Err(e),
    };
    if !m.is_file() {
        return Ok(Leftover {
            copied: 0,
            kept: Some(format!("{} is not a regular file", side.display())),
        });
    }
    let old = crate::safe_fs::open_regular(&side)?;
    let old_meta = old.metadata()?;
    if std::fs::symlink_metadata(real).is_ok_and(|live| same_inode(&live, &old_meta)) {
        // Killed between the link and the rename: a second name of the live file.
        remove_if_same(&side, &old_meta)?;
        return Ok(Leftover::default());
    }
    let copied = copy_new_lines(&old, 0, real)?;
    let mut left = release_sidecar(&old, 0, real, &side, &mut |_| {})?;
    left.copied += copied;
    Ok(left)
}

/// The moments of a rewrite a test can step in at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moment {
    /// After the last length check, right before the old file is linked and renamed over.
    BeforeRename,
    /// After the rename, before the late lines are copied.
    AfterRename,
    /// After they were copied, before the sidecar is released.
    AfterCopy,
    /// The write lease on the old file (descriptor `fd`) was just granted.
    UnderLease {
        /// The descriptor holding the lease.
        fd: i32,
    },
}

/// What became of the old file a merge kept (see [`SyncLock::settle_leftover`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leftover {
    /// Bytes of lines copied from it to the live file.
    pub copied: u64,
    /// Why it is still there (another process holds it open, it ends in an incomplete
    /// line): the next sync looks again. `None`: it is gone (or there was none).
    pub kept: Option<String>,
}

/// Where a merge keeps the old file of session `real` while it replaces it:
/// `<session>.arbor-merge`, in the same directory (a belonging of the session, never listed
/// as a session: see [`crate::belongings`]).
pub fn merge_sidecar_path(real: &Path) -> std::path::PathBuf {
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push(".arbor-merge");
    real.with_file_name(name)
}

pub(super) fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.ino() == b.ino() && a.dev() == b.dev()
}

/// What [`link_sidecar`] did.
#[derive(Debug)]
pub(super) enum Sidecar {
    /// The old file has its second name.
    Linked,
    /// The file system gives a file no second name (vfat, exFAT, some FUSE and network
    /// mounts: `link(2)` failed with the error said, see [`no_hard_links`]): the old file is
    /// kept open by descriptor across the rename instead ([`release_unnamed`]).
    NoLinks(String),
}

/// Whether `link(2)` failing with `e` means the file system has no hard links (rather than a
/// refusal to respect: a name taken, no permission on the directory): `EPERM` (vfat, exFAT),
/// `EOPNOTSUPP`/`ENOTSUP`, `ENOSYS` (FUSE without a link operation), `EMLINK`, `EXDEV`.
pub(super) fn no_hard_links(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS | libc::EMLINK | libc::EXDEV)
    ) || e.raw_os_error() == Some(libc::ENOTSUP)
}

#[cfg(test)]
thread_local! {
    /// A test's stand-in for a file system without hard links: the next `link(2)` of a
    /// sidecar on this thread fails with this errno.
    pub(crate) static FAIL_LINK: std::cell::Cell<Option<i32>> =
        const { std::cell::Cell::new(None) };
}

/// Gives the old file (`old`, at `real`) a second name `side`: `link(2)` creates the name
/// or fails (never follows a symlink planted there); the new name must then be the inode
/// checked, else it is removed again and the merge refused. [`Sidecar::NoLinks`] when the
/// file system has no hard links.
pub(super) fn link_sidecar(
    real: &Path,
    side: &Path,
    old: &std::fs::Metadata,
) -> io::Result<Sidecar> {
    #[cfg(test)]
    let linked = match FAIL_LINK.with(std::cell::Cell::get) {
        Some(errno) => Err(io::Error::from_raw_os_error(errno)),
        None => std::fs::hard_link(real, side),
    };
    #[cfg(not(test))]
    let linked = std::fs::hard_link(real, side);
    match linked {
        Ok(()) => {}
        Err(e) if no_hard_links(&e) => return Ok(Sidecar::NoLinks(e.to_string())),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot keep the old file as {}: {e}", side.display()),
            ))
        }
    }
    match std::fs::symlink_metadata(side) {
        Ok(m) if same_inode(&m, old) => Ok(Sidecar::Linked),
        _ => {
            let _ = std::fs::remove_file(side);
            Err(io::Error::other("the session moved while it was merged"))
        }
    }
}

/// Removes `side` if it still names the inode `m` describes (and its directory entry is
/// synced).
pub(super) fn remove_if_same(side: &Path, m: &std::fs::Metadata) -> io::Result<()> {
    if std::fs::symlink_metadata(side).is_ok_and(|now| same_inode(&now, m)) {
        std::fs::remove_file(side)?;
        if let Some(dir) = side.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::file::sync_dir(dir)?;
        }
    }
    Ok(())
}

/// Appends to the live file `real` the complete lines of `old` after offset `from` that it
/// does not hold yet (in `old`'s order); returns their bytes. Lines are compared by content,
/// so copying twice (a kill between the copy and the sidecar's removal) copies nothing the
/// second time. Nothing is appended when the live file ends in an incomplete line.
pub(super) fn copy_new_lines(old: &File, from: u64, real: &Path) -> io::Result<u64> {
    let len = old.metadata()?.len();
    if len <= from {
        return Ok(0);
    }
    let mut bytes = Vec::new();
    let mut r = old;
    r.seek(SeekFrom::Start(from))?;
    r.take(len - from).read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if complete == 0 {
        return Ok(0);
    }
    let live = read_snapshot(real)?;
    if live.torn > 0 {
        return Err(io::Error::other(format!(
            "{} ends in an incomplete line; the lines pi wrote during a merge stay in {} \
             until the next sync",
            real.display(),
            merge_sidecar_path(real).display()
        )));
    }
    let mut have: std::collections::HashSet<&[u8]> = live.lines.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    for line in bytes[..complete - 1].split(|b| *b == b'\n') {
        if have.insert(line) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    if out.is_empty() {
        return Ok(0);
    }
    let mut f = crate::file::AppendFile::open(real, false, crate::file::Durability::default())?;
    f.append(&out)?;
    f.flush()?;
    Ok(out.len() as u64)
}

/// Removes the sidecar `side` (the old file, open as `old`) once nobody else holds it open,
/// after copying the lines that reached it (see [`copy_new_lines`]).
///
/// After the rename nobody can open the old file by the session's name; what may still write
/// to it is a descriptor opened before (pi's `appendFileSync` opens, writes, closes). On
/// Linux a write lease (`F_SETLEASE`, `F_WRLCK`) on `old` is granted only while no other
/// descriptor of the file is open, and an `open` that comes later (one that found the old file
/// by name before the rename and reaches the kernel's open afterwards) waits for the lease
/// holder: under the lease the last lines are copied and the sidecar removed; an `open` that
/// broke the lease meanwhile is waited for (the lease taken again once it closed, up to
/// [`SETTLE_WAIT`]) and its lines copied through `old`, which still reaches the inode. Where
/// leases are not available (another file system, a file of another user), the holders are
/// looked for in `/proc/*/fd` (an `open` still inside the kernel has no descriptor there yet:
/// leases are what closes that window). Either way the sidecar stays when a holder is found,
/// or when its last line is incomplete.
pub(super) fn release_sidecar(
    old: &File,
    from: u64,
    real: &Path,
    side: &Path,
    at: &mut dyn FnMut(Moment),
) -> io::Result<Leftover> {
    let old_meta = old.metadata()?;
    let mut left = Leftover::default();
    let lease = Lease::take(old)?;
    if lease.held {
        use std::os::fd::AsRawFd;
        at(Moment::UnderLease {
            fd: old.as_raw_fd(),
        });
    }
    if !lease.held {
        match open_elsewhere(&old_meta, old) {
            Some(false) => {}
            Some(true) => {
                left.kept = Some("another process has the old file open".into());
                return Ok(left);
            }
            None => {
                left.kept = Some(format!(
                    "cannot tell whether another process has it open ({})",
                    lease.why
                ));
                return Ok(left);
            }
        }
    }
    left.copied += copy_new_lines(old, from, real)?;
    if !ends_whole(old, from)? {
        left.kept = Some("the old file ends in an incomplete line".into());
        return Ok(left);
    }
    remove_if_same(side, &old_meta)?;
    if lease.broken() || (!lease.held && open_elsewhere(&old_meta, old) != Some(false)) {
        // A writer opened the old file as it lost its last name: its lines still reach `old`.
        // Where leases work only a lease taken again says the writer is gone: an `open` that
        // broke the lease is counted by the kernel (its write access is taken before it
        // waits) but has no descriptor in `/proc/*/fd` until it returns, so `/proc` would
        // call it gone before it wrote (the race `an_open_that_breaks_the_lease_is_waited_for`
        // caught on a CI run).
        let leases_work = lease.held;
        drop(lease);
        let deadline = std::time::Instant::now() + SETTLE_WAIT;
        loop {
            let again = Lease::take(old)?;
            let done =
                again.held || (!leases_work && open_elsewhere(&old_meta, old) == Some(false));
            if done || std::time::Instant::now() >= deadline {
                left.copied += copy_new_lines(old, from, real)?;
                if !done {
                    left.kept = Some(
                        "a process still holds the old file open after it was removed; lines it \
                         writes there from now on are lost"
                            .into(),
                    );
                }
                return Ok(left);
            }
            drop(again);
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(left)
}

/// Whether what reached `old` after offset `from` ends in a newline (nothing did: true). Only
/// that is another writer's: the rewritten file itself may have ended without a newline (a
/// repair of a torn last line).
fn ends_whole(old: &File, from: u64) -> io::Result<bool> {
    let len = old.metadata()?.len();
    if len <= from {
        return Ok(true);
    }
    let mut tail = [0u8; 1];
    let mut r = old;
    r.seek(SeekFrom::Start(len - 1))?;
    r.read_exact(&mut tail)?;
    Ok(tail[0] == b'\n')
}

/// The end of a rewrite on a file system without hard links ([`Sidecar::NoLinks`]): the old
/// file, open as `old` since before the rename, has no name any more and `old` is the only way
/// to the lines another writer (pi, which opened it by path before the rename) appended to it
/// after `from`. They are copied to the live file `real` now, and again under a write lease on
/// `old`, until a lease is granted and not broken while held and the old file ends in a whole
/// line: then nobody else has it open and nobody can open it again (it has no name), so
/// nothing more can reach it. Where leases are not available, `/proc/*/fd` is looked at
/// instead (see [`release_sidecar`]). Waits up to [`SETTLE_WAIT`]; [`Leftover::kept`] then
/// says why lines may still be lost (a holder left, a last line incomplete): there is no
/// sidecar for a later sync to settle, and none either when the process is killed between
/// the rename and the last copy.
pub(super) fn release_unnamed(
    old: &File,
    from: u64,
    real: &Path,
    at: &mut dyn FnMut(Moment),
) -> io::Result<Leftover> {
    let old_meta = old.metadata()?;
    let mut left = Leftover {
        copied: copy_new_lines(old, from, real)?,
        kept: None,
    };
    let deadline = std::time::Instant::now() + SETTLE_WAIT;
    loop {
        let lease = Lease::take(old)?;
        if lease.held {
            use std::os::fd::AsRawFd;
            at(Moment::UnderLease {
                fd: old.as_raw_fd(),
            });
        }
        let alone = lease.held || (!lease.busy && open_elsewhere(&old_meta, old) == Some(false));
        if alone {
            left.copied += copy_new_lines(old, from, real)?;
            if !lease.broken() && ends_whole(old, from)? {
                return Ok(left);
            }
        }
        if std::time::Instant::now() >= deadline {
            left.copied += copy_new_lines(old, from, real)?;
            left.kept = Some(if alone {
                "the old file ends in an incomplete line, which is lost".to_string()
            } else if lease.busy || open_elsewhere(&old_meta, old) == Some(true) {
                "a process still holds the old file open; lines it writes there from now on \
                 are lost"
                    .to_string()
            } else {
                format!(
                    "cannot tell whether another process has the old file open ({}); lines \
                     written there from now on are lost",
                    lease.why
                )
            });
            return Ok(left);
        }
        drop(lease);
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How long a sync waits for a writer that opened a merge's old file just as it was removed.
pub const SETTLE_WAIT: Duration = Duration::from_secs(5);

/// A write lease on a file (Linux `F_SETLEASE`), released when dropped.
struct Lease<'f> {
    file: &'f File,
    held: bool,
    /// Not granted because another descriptor has the file open (`EAGAIN`, `EBUSY`), rather
    /// than because leases are not available here.
    busy: bool,
    why: String,
}

impl<'f> Lease<'f> {
    /// Takes a write lease on `file`: `held` when granted (nobody else has the file open);
    /// `why` says why not. The break signal is `SIGURG` (ignored unless handled), never the
    /// default `SIGIO`, which would end the process.
    #[cfg(target_os = "linux")]
    fn take(file: &'f File) -> io::Result<Lease<'f>> {
        use std::os::fd::AsRawFd;
        /// `F_SETSIG` (10 on Linux; not exported by `libc` for every target).
        const F_SETSIG: libc::c_int = 10;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, with integer arguments.
        if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } == -1 {
            return Ok(Lease {
                file,
                held: false,
                busy: false,
                why: io::Error::last_os_error().to_string(),
            });
        }
        // SAFETY: as above.
        let r = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) };
        if r == 0 {
            return Ok(Lease {
                file,
                held: true,
                busy: false,
                why: String::new(),
            });
        }
        let e = io::Error::last_os_error();
        Ok(Lease {
            file,
            held: false,
            busy: matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)),
            why: e.to_string(),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn take(file: &'f File) -> io::Result<Lease<'f>> {
        Ok(Lease {
            file,
            held: false,
            busy: false,
            why: "no leases on this system".into(),
        })
    }

    /// Whether another process opened the file while the lease was held (the lease is being
    /// broken: `F_GETLEASE` reports the type it goes to).
    #[cfg(target_os = "linux")]
    fn broken(&self) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on a descriptor we own.
        self.held
            && unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_GETLEASE) } != libc::F_WRLCK
    }

    #[cfg(not(target_os = "linux"))]
    fn broken(&self) -> bool {
        false
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if self.held {
            use std::os::fd::AsRawFd;
            // SAFETY: fcntl on a descriptor we own.
            unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
        }
    }
}

/// Whether a descriptor other than `mine` has the file `m` describes open, from
/// `/proc/*/fd`: `Some(false)` when none of the processes this one may look into does (the
/// others cannot write to a session file of this user, 0600), `None` without `/proc`.
fn open_elsewhere(m: &std::fs::Metadata, mine: &File) -> Option<bool> {
    use std::os::fd::AsRawFd;
    let mine = mine.as_raw_fd().to_string();
    let me = std::process::id().to_string();
    let procs = std::fs::read_dir("/proc").ok()?;
    for p in procs.flatten() {
        let name = p.file_name();
        let name = name.to_string_lossy();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if name == me && fd.file_name().to_string_lossy() == mine {
                continue;
            }
            if std::fs::metadata(fd.path()).is_ok_and(|f| same_inode(&f, m)) {
                return Some(true);
            }
        }
    }
    Some(false)
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

    fn sidecar_of(p: &Path) -> std::path::PathBuf {
        merge_sidecar_path(p)
    }

    /// pi appends by path after the last check, before the rename (its line reaches the old
    /// file): copied to the end of the new file, the old file's name removed.
    #[test]
    fn bytes_appended_during_a_rewrite_are_kept() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.clone();
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| {
                if m == Moment::BeforeRename {
                    append(&q, "pi\n");
                }
            })
            .expect("rewrite");
        assert_eq!(
            w,
            Written::Done {
                stamp: None,
                recovered: 3,
                kept: None,
                unlinked: None,
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        assert!(!sidecar_of(&p).exists(), "the old file's name is removed");
        // Without an append: the stamp is the new file's.
        let len = lock.read().expect("read").complete_len;
        let w = lock.rewrite_at(len, b"a\nx\ny\nb\npi\n").expect("rewrite");
        assert!(
            matches!(
                w,
                Written::Done {
                    stamp: Some(_),
                    recovered: 0,
                    kept: None,
                    unlinked: None,
                }
            ),
            "{w:?}"
        );
    }

    /// A rewrite on a file system without hard links, where pi opened the old file by name
    /// before the rename, writes a line to it after the rename and another a little later
    /// before it closes it: the rewrite is done (it used to refuse: nothing could be merged
    /// there), no sidecar is left, both lines are copied to the new file (the second once pi
    /// closed the old file: the lease is granted only then), and the result says that the
    /// sidecar protocol did not run.
    fn rewrite_without_hard_links_keeps_late_lines(p: &Path) {
        let mut lock = lock_session(p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.to_path_buf();
        let mut pi: Option<File> = None;
        let mut late = None;
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| match m {
                Moment::BeforeRename => {
                    pi = Some(
                        std::fs::OpenOptions::new()
                            .append(true)
                            .open(&q)
                            .expect("open"),
                    );
                }
                Moment::AfterRename => {
                    let mut f = pi.take().expect("open");
                    f.write_all(b"pi1\n").expect("write");
                    // Writes again and closes once the rewrite waits for it (a thread: the
                    // rewrite waits in this one).
                    late = Some(std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(50));
                        f.write_all(b"pi2\n").expect("write");
                    }));
                }
                Moment::AfterCopy | Moment::UnderLease { .. } => {}
            })
            .expect("rewrite on a file system without hard links");
        late.expect("pi wrote").join().expect("pi");
        let Written::Done {
            recovered,
            kept,
            unlinked,
            ..
        } = &w
        else {
            panic!("{w:?}")
        };
        assert!(unlinked.is_some(), "{w:?}");
        assert_eq!((*recovered, kept), (8, &None), "{w:?}");
        assert_eq!(std::fs::read(p).expect("read"), b"a\nx\nb\npi1\npi2\n");
        assert!(!sidecar_of(p).exists());
        // The next rewrite (no leftover to settle) works the same way.
        let len = lock.read().expect("read").complete_len;
        let w = lock
            .rewrite_at(len, b"a\nx\ny\nb\npi1\npi2\n")
            .expect("again");
        assert!(
            matches!(
                &w,
                Written::Done {
                    recovered: 0,
                    kept: None,
                    unlinked: Some(_),
                    ..
                }
            ),
            "{w:?}"
        );
    }

    /// [`rewrite_without_hard_links_keeps_late_lines`] with `link(2)` failing as on vfat/exFAT
    /// (`EPERM`) and as on file systems without a link operation (`EOPNOTSUPP`): runs
    /// everywhere.
    #[test]
    fn a_rewrite_where_link_fails_holds_the_old_file_open_instead() {
        for errno in [libc::EPERM, libc::EOPNOTSUPP] {
            let tmp = tempfile::tempdir().expect("tmp");
            let p = session(tmp.path(), "a\nb\n");
            FAIL_LINK.with(|f| f.set(Some(errno)));
            rewrite_without_hard_links_keeps_late_lines(&p);
            FAIL_LINK.with(|f| f.set(None));
        }
        // Any other failure of the link still refuses the rewrite, the file untouched.
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        FAIL_LINK.with(|f| f.set(Some(libc::EACCES)));
        let r = lock.rewrite_at(4, b"a\nx\nb\n");
        FAIL_LINK.with(|f| f.set(None));
        assert!(r.is_err(), "{r:?}");
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nb\n");
    }

    /// [`rewrite_without_hard_links_keeps_late_lines`] on a real exFAT file system (FUSE, root
    /// only; skipped visibly where it cannot be mounted).
    #[test]
    fn a_rewrite_on_exfat_holds_the_old_file_open_instead() {
        let fs = match arbor_testkit::no_links::mount() {
            Ok(fs) => fs,
            Err(why) => return arbor_testkit::skip::skip(&why),
        };
        let p = session(fs.path(), "a\nb\n");
        rewrite_without_hard_links_keeps_late_lines(&p);
    }

    /// pi opened the old file by name before the rename and writes after the late lines were
    /// copied (the window that lost a line before the sidecar): the line is in the old file's
    /// sidecar, which stays while pi holds it open, and the next settle copies it.
    #[test]
    fn a_line_written_to_the_old_file_after_the_copy_is_not_lost() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.clone();
        let mut pi: Option<File> = None;
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| match m {
                Moment::BeforeRename => {
                    pi = Some(
                        std::fs::OpenOptions::new()
                            .append(true)
                            .open(&q)
                            .expect("open"),
                    );
                }
                Moment::AfterRename | Moment::UnderLease { .. } => {}
                Moment::AfterCopy => {
                    pi.as_mut()
                        .expect("open")
                        .write_all(b"pi\n")
                        .expect("write");
                }
            })
            .expect("rewrite");
        // pi still has the old file open: it is kept, under its sidecar name.
        let Written::Done { kept, .. } = &w else {
            panic!("{w:?}")
        };
        assert!(kept.is_some(), "{w:?}");
        assert_eq!(std::fs::read(sidecar_of(&p)).expect("kept"), b"a\nb\npi\n");
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\n");
        drop(pi);
        let left = lock.settle_leftover().expect("settle");
        assert_eq!(
            left,
            Leftover {
                copied: 3,
                kept: None
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        assert!(!sidecar_of(&p).exists());
        // Settling again finds nothing to do.
        assert_eq!(lock.settle_leftover().expect("settle"), Leftover::default());
    }

    /// pi writes to the old file after the copy and closes it before the end of the rewrite:
    /// the rewrite copies it itself (nobody holds the old file any more).
    #[test]
    fn a_line_written_and_closed_after_the_copy_is_copied_at_the_end() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.clone();
        let mut pi: Option<File> = None;
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| match m {
                Moment::BeforeRename => {
                    pi = Some(
                        std::fs::OpenOptions::new()
                            .append(true)
                            .open(&q)
                            .expect("open"),
                    );
                }
                Moment::AfterRename | Moment::UnderLease { .. } => {}
                Moment::AfterCopy => {
                    let mut f = pi.take().expect("open");
                    f.write_all(b"pi\n").expect("write");
                }
            })
            .expect("rewrite");
        assert_eq!(
            w,
            Written::Done {
                stamp: None,
                recovered: 3,
                kept: None,
                unlinked: None,
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        assert!(!sidecar_of(&p).exists());
    }

    /// pi writes one line to the old file (opened before the rename) and its next line, the
    /// child of that one, to the new file before the late lines are copied: both stay, the
    /// child before its parent (the merge's placement accepts that order).
    #[test]
    fn lines_on_both_inodes_between_the_rename_and_the_copy_are_all_kept() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let q = p.clone();
        let mut pi: Option<File> = None;
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| match m {
                Moment::BeforeRename => {
                    pi = Some(
                        std::fs::OpenOptions::new()
                            .append(true)
                            .open(&q)
                            .expect("open"),
                    );
                }
                Moment::AfterRename => {
                    let mut f = pi.take().expect("open");
                    f.write_all(b"p1\n").expect("write");
                    drop(f);
                    append(&q, "p2\n");
                }
                Moment::AfterCopy | Moment::UnderLease { .. } => {}
            })
            .expect("rewrite");
        assert!(
            matches!(
                w,
                Written::Done {
                    recovered: 3,
                    kept: None,
                    ..
                }
            ),
            "{w:?}"
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\np2\np1\n");
        assert!(!sidecar_of(&p).exists());
    }

    /// kill -9 at any point of a rewrite leaves every line where the next sync finds it:
    /// between the link and the rename the sidecar is a second name of the live file (removed,
    /// nothing copied); after the rename it is the old file, whose lines the live file lacks
    /// are copied once, however often settling is repeated.
    #[test]
    fn a_leftover_of_a_killed_merge_is_settled_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        // Killed between the link and the rename.
        std::fs::hard_link(&p, sidecar_of(&p)).expect("link");
        let mut lock = lock_session(&p, None).expect("lock");
        assert_eq!(lock.settle_leftover().expect("settle"), Leftover::default());
        assert!(!sidecar_of(&p).exists());
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nb\n");
        // Killed after the rename, before the late line was copied (or after, before the
        // sidecar was removed: the same, the copy is by content).
        std::fs::write(sidecar_of(&p), "a\nb\npi\n").expect("old");
        std::fs::write(&p, "a\nx\nb\n").expect("new");
        assert_eq!(
            lock.settle_leftover().expect("settle"),
            Leftover {
                copied: 3,
                kept: None
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        std::fs::write(sidecar_of(&p), "a\nb\npi\n").expect("old again");
        assert_eq!(
            lock.settle_leftover().expect("settle"),
            Leftover {
                copied: 0,
                kept: None
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        // A planted symlink under the sidecar's name is neither followed nor removed.
        std::os::unix::fs::symlink("/etc/passwd", sidecar_of(&p)).expect("plant");
        let left = lock.settle_leftover().expect("settle");
        assert!(left.kept.is_some(), "{left:?}");
        assert!(std::fs::symlink_metadata(sidecar_of(&p)).is_ok());
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
    }

    /// A writer that found the old file by name before it lost it, and reaches the kernel's
    /// `open` only while the rewrite holds its lease (it waits there): the sidecar is removed
    /// under the lease, the lease released, the writer writes to the old inode, and the
    /// rewrite waits for it to close and copies its line through its own descriptor.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_open_that_breaks_the_lease_is_waited_for() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = session(tmp.path(), "a\nb\n");
        let mut lock = lock_session(&p, None).expect("lock");
        let len = lock.read().expect("read").complete_len;
        let side = sidecar_of(&p);
        let mut writer = None;
        let mut broke = false;
        let w = lock
            .rewrite_at_with(len, b"a\nx\nb\n", &mut |m| {
                if let Moment::UnderLease { fd } = m {
                    let side = side.clone();
                    writer = Some(std::thread::spawn(move || {
                        let mut f = std::fs::OpenOptions::new()
                            .append(true)
                            .open(&side)
                            .expect("open");
                        f.write_all(b"pi\n").expect("write");
                    }));
                    // The event: the writer's open broke the lease (it waits in the kernel).
                    let deadline = std::time::Instant::now() + Duration::from_secs(30);
                    while std::time::Instant::now() < deadline {
                        // SAFETY: fcntl on the rewrite's descriptor.
                        if unsafe { libc::fcntl(fd, libc::F_GETLEASE) } != libc::F_WRLCK {
                            broke = true;
                            break;
                        }
                        std::thread::yield_now();
                    }
                }
            })
            .expect("rewrite");
        writer.expect("a lease was taken").join().expect("writer");
        assert!(broke, "the writer's open broke the lease");
        assert_eq!(
            w,
            Written::Done {
                stamp: None,
                recovered: 3,
                kept: None,
                unlinked: None,
            }
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"a\nx\nb\npi\n");
        assert!(!side.exists());
    }
}
