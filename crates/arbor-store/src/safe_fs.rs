//! Opening files the way arbor's safety promises need them opened.
//!
//! - Only regular files are sessions: [`open_regular`] refuses a FIFO (without blocking on
//!   it), a device (`/dev/zero` would be read without end), a directory or a socket, after
//!   following symlinks, with an error that names what the path is.
//! - Nothing arbor writes beside a session follows a symlink someone planted: writers resolve
//!   the session to its real path once ([`real_path_for_write`]), check the directory they
//!   write into ([`check_write_dir`]), and create lock files and sidecars with `O_NOFOLLOW`
//!   (and `O_EXCL` for new files: [`create_new_private`]).
//! - Every file arbor creates for a user under a name the user gave (an export, its images, a
//!   man page, a breadcrumb) is a [`NewFile`]: written under a fresh `O_EXCL` name beside it,
//!   private (0600) unless public by nature, renamed over the name when complete. A symlink
//!   planted at the name is replaced, never followed; a failure leaves nothing behind.
//! - A file arbor writes for a session belongs to the session's owner ([`give_to_owner_of`]),
//!   so root running arbor on a user's file does not take the user's data away from them.
//!
//! These are the reasons arbor opens files through `libc` flags here rather than only
//! `std::fs::File::open`: std has no way to say "do not block on a FIFO" or "do not follow".
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Mode for files arbor creates (sessions hold prompts and tool output).
pub const FILE_MODE: u32 = 0o600;

/// What a path that is not a regular file is, in words (`"a FIFO"`, `"a character device"`).
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// The error for a path that is not a regular file.
pub fn not_regular(meta: &Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {}, not a regular file", kind_of(meta)),
    )
}

fn clear_nonblock(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens `path` with `opts` only if it is a regular file: `O_NONBLOCK` while opening (a FIFO
/// does not block the open; it is cleared again for a regular file), `O_CLOEXEC`, and with
/// `nofollow` also `O_NOFOLLOW` (a symlink in the last component is refused, see
/// [`symlink_refused`]). Returns the file and its metadata. Every open of arbor's that must
/// not block on, read or write through something planted goes through here.
pub fn open_checked(
    opts: &mut OpenOptions,
    path: &Path,
    nofollow: bool,
) -> io::Result<(File, Metadata)> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = opts
        .custom_flags(flags)
        .open(path)
        .map_err(symlink_refused)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    clear_nonblock(&file)?;
    Ok((file, meta))
}

/// Opens `path` for reading, following symlinks, only if it is a regular file. A FIFO is
/// refused without waiting for a writer, a device or directory without reading it.
///
/// ```
/// let err = arbor_store::open_regular(std::path::Path::new("/dev/null")).unwrap_err();
/// assert_eq!(err.to_string(), "is a character device, not a regular file");
/// ```
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_checked(OpenOptions::new().read(true), path, false).map(|(f, _)| f)
}

/// Reads a whole regular file (see [`open_regular`]).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = open_regular(path)?;
    let len = f.metadata()?.len();
    let mut v = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.read_to_end(&mut v)?;
    Ok(v)
}

/// Reads at most `max` bytes of a small regular file (see [`open_regular`]): a registry entry
/// or a breadcrumb, which a device planted in its place must not turn into an endless read.
pub fn read_regular_at_most(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    open_regular(path)?.take(max).read_to_end(&mut v)?;
    Ok(v)
}

/// Opens the regular file `path` for reading and writing without following a symlink in its
/// last component (the path must be a real path, see [`real_path_for_write`]).
pub fn open_rw_nofollow(path: &Path) -> io::Result<File> {
    open_checked(OpenOptions::new().read(true).write(true), path, true).map(|(f, _)| f)
}

/// Creates the new file `path` with mode 0600: never through a symlink, never over an
/// existing file (`O_CREAT | O_EXCL | O_NOFOLLOW`).
pub fn create_new_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Turns the `ELOOP` of an `O_NOFOLLOW` open into words.
pub fn symlink_refused(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a symbolic link where arbor writes a file of its own; refusing to follow it \
             (remove it if you made it)",
        )
    } else {
        e
    }
}

/// The real path a writer of `session` works on: symlinks resolved, so a rewrite replaces
/// the file the link points at and keeps the link. A path that does not exist yet resolves
/// through its directory; a symlink whose target is missing is refused (arbor does not create
/// files through links). An existing path must be a regular file.
pub fn real_path_for_write(session: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(session) {
        Ok(_) => {
            let real = std::fs::canonicalize(session).map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        "is a symbolic link to a missing file; arbor does not create files \
                         through links",
                    )
                } else {
                    e
                }
            })?;
            let meta = std::fs::metadata(&real)?;
            if !meta.is_file() {
                return Err(not_regular(&meta));
            }
            Ok(real)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let name = session
                .file_name()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "is not a file name"))?;
            let dir = match session.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Ok(std::fs::canonicalize(dir)?.join(name))
        }
        Err(e) => Err(e),
    }
}

/// A new file for a user, written under a temporary name beside its final name and put in
/// place only when it is complete ([`NewFile::commit`]).
///
/// This is the one way arbor creates a file a user asked for (an export, its images, a man
/// page, a breadcrumb): the temporary file is created with `O_CREAT | O_EXCL` (a symlink or
/// file planted under its random name is never followed or reused) and the private mode
/// `FILE_MODE` (0600) unless told otherwise, and the final rename replaces whatever directory entry
/// is at the name (a symlink someone planted there is replaced, never written through). A
/// `NewFile` dropped without `commit` (an error, a panic) removes its temporary file: nothing
/// half-written stays behind.
///
/// ```
/// use std::io::Write;
/// # let dir = tempfile::tempdir().unwrap();
/// let victim = dir.path().join("victim");
/// std::fs::write(&victim, "keep").unwrap();
/// let page = dir.path().join("arbor.1");
/// std::os::unix::fs::symlink(&victim, &page).unwrap();
/// let mut f = arbor_store::NewFile::create(&page).unwrap();
/// f.write_all(b"page").unwrap();
/// f.commit().unwrap();
/// assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
/// assert_eq!(std::fs::read(&page).unwrap(), b"page");
/// ```
#[derive(Debug)]
pub struct NewFile {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl NewFile {
    /// Starts a new 0600 file that will be named `target`.
    ///
    /// # Errors
    /// The error of creating the temporary file in `target`'s directory.
    pub fn create(target: &Path) -> io::Result<NewFile> {
        NewFile::create_with_mode(target, FILE_MODE)
    }

    /// Starts a new file with mode `mode` (for files that are public by nature, such as man
    /// pages) that will be named `target`.
    ///
    /// # Errors
    /// The error of creating the temporary file in `target`'s directory.
    pub fn create_with_mode(target: &Path, mode: u32) -> io::Result<NewFile> {
        use std::os::unix::fs::PermissionsExt;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "is not a file name"))?
            .to_string_lossy();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".arbor-tmp")
            .permissions(std::fs::Permissions::from_mode(mode))
            .tempfile_in(dir)
            .map_err(|e| in_dir_error(dir, e))?;
        // The mode given at creation is filtered by the umask; set it as asked.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(NewFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The open temporary file.
    pub fn as_file(&self) -> &File {
        self.tmp.as_file()
    }

    /// The temporary file's path (removed again unless committed).
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// Puts the file in place under its name, replacing what is there (a symlink is replaced,
    /// not followed). Not fsynced: call `as_file().sync_all()` first where a crash must not
    /// leave an empty file.
    ///
    /// # Errors
    /// The error of the rename; the temporary file is removed then.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The error of creating a file in `dir`, naming the directory (the temporary file's name is
/// arbor's business, not the reader's): "the directory D does not exist", else "cannot create
/// a file in D: CAUSE".
fn in_dir_error(dir: &Path, e: io::Error) -> io::Error {
    let cause = e
        .raw_os_error()
        .map(|code| io::Error::from_raw_os_error(code).to_string())
        .unwrap_or_else(|| e.kind().to_string());
    let text = if e.kind() == io::ErrorKind::NotFound {
        format!("the directory {} does not exist", dir.display())
    } else {
        format!("cannot create a file in {}: {cause}", dir.display())
    };
    io::Error::new(e.kind(), text)
}

impl io::Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

/// Replaces the directory entry `path` with a new 0600 file holding `content` (a
/// [`NewFile`]). Whatever was at `path` (a file, a symlink someone planted) is replaced, never
/// written through. Not fsynced: for small files that may be lost in a crash (breadcrumbs).
pub fn replace_file(path: &Path, content: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = NewFile::create(path)?;
    f.write_all(content)?;
    f.commit()
}

/// The effective user id of this process (whose files arbor may trust as the caller's own).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Checks that `dir` is a place where arbor may create its lock files, sidecars and
/// temporary files: a directory owned by the caller, by root, or by `owner` (the session
/// file's owner), and not writable by every user unless it has the sticky bit (where anyone
/// could swap the files arbor creates). Root may write in any user's directory (repairing a
/// user's session is what root runs arbor for): every file arbor creates there is opened
/// with `O_NOFOLLOW` / `O_EXCL`, so what the directory's owner planted is never followed.
pub fn check_write_dir(dir: &Path, owner: Option<u32>) -> io::Result<()> {
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(not_regular(&meta));
    }
    let uid = meta.uid();
    let me = euid();
    if me != 0 && uid != me && uid != 0 && Some(uid) != owner {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "is owned by another user (uid {uid}); arbor writes only in directories of \
                 the caller, of the session's owner or of root"
            ),
        ));
    }
    let mode = meta.mode();
    if mode & 0o002 != 0 && mode & 0o1000 == 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "is writable by every user and has no sticky bit: anyone could replace the files \
             arbor writes there; refusing to write in it",
        ));
    }
    Ok(())
}

/// Gives `file` (just created by arbor for the session `owner_of`) the owner and group of
/// `owner_of`, where they differ from the caller's. Only root can give a file away, which is
/// the case this is for: root repairing a user's session must leave files the user can read.
/// Returns the error of `fchown` so that callers who must keep the owner can refuse.
pub fn give_to_owner_of(file: &File, owner_of: &Metadata) -> io::Result<()> {
    let mine = file.metadata()?;
    if mine.uid() == owner_of.uid() && mine.gid() == owner_of.gid() {
        return Ok(());
    }
    // SAFETY: fchown on a descriptor we own; no memory is passed.
    let rc = unsafe { libc::fchown(file.as_raw_fd(), owner_of.uid(), owner_of.gid()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn devices_fifos_and_directories_are_not_sessions() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("f.jsonl");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("c path");
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Must not block waiting for a writer.
        let e = open_regular(&fifo).expect_err("fifo");
        assert_eq!(e.to_string(), "is a FIFO, not a regular file");
        let e = open_regular(Path::new("/dev/zero")).expect_err("device");
        assert_eq!(e.to_string(), "is a character device, not a regular file");
        let e = open_regular(dir.path()).expect_err("dir");
        assert_eq!(e.to_string(), "is a directory, not a regular file");
        let link = dir.path().join("z.jsonl");
        symlink("/dev/zero", &link).expect("symlink");
        assert!(read_regular(&link).is_err());
        assert!(real_path_for_write(&link).is_err());
        let plain = dir.path().join("s.jsonl");
        std::fs::write(&plain, b"x").expect("write");
        assert_eq!(read_regular(&plain).expect("read"), b"x");
    }

    #[test]
    fn writers_resolve_links_and_refuse_dangling_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.jsonl");
        std::fs::write(&real, b"x").expect("write");
        let link = dir.path().join("link.jsonl");
        symlink(&real, &link).expect("symlink");
        let canon = std::fs::canonicalize(&real).expect("canon");
        assert_eq!(real_path_for_write(&link).expect("link"), canon);
        let dangling = dir.path().join("d.jsonl");
        symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        let e = real_path_for_write(&dangling).expect_err("dangling");
        assert!(
            e.to_string().contains("symbolic link to a missing file"),
            "{e}"
        );
        assert!(!dir.path().join("nowhere").exists());
        let new = dir.path().join("new.jsonl");
        assert_eq!(
            real_path_for_write(&new).expect("new"),
            std::fs::canonicalize(dir.path())
                .expect("dir")
                .join("new.jsonl")
        );
    }

    #[test]
    fn new_private_files_never_follow_or_overwrite() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("victim");
        std::fs::write(&target, b"keep").expect("write");
        let planted = dir.path().join("s.jsonl.lock");
        symlink(&target, &planted).expect("symlink");
        assert!(create_new_private(&planted).is_err());
        let e = open_rw_nofollow(&planted).expect_err("nofollow");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).expect("read"), b"keep");
    }

    #[test]
    fn replace_file_replaces_a_planted_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").expect("write");
        let crumb = dir.path().join("crumb");
        symlink(&victim, &crumb).expect("symlink");
        replace_file(&crumb, b"new").expect("replace");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"keep");
        assert_eq!(std::fs::read(&crumb).expect("crumb"), b"new");
        assert!(std::fs::symlink_metadata(&crumb).expect("lstat").is_file());
    }

    #[test]
    fn a_new_file_in_a_missing_directory_names_the_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no/such");
        let e = NewFile::create(&missing.join("x.md")).expect_err("no directory");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            format!("the directory {} does not exist", missing.display())
        );
    }

    #[test]
    fn a_new_file_is_private_and_left_nowhere_when_not_committed() {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("out.md");
        let mut f = NewFile::create(&target).expect("create");
        f.write_all(b"half").expect("write");
        let tmp = f.temp_path().to_path_buf();
        assert!(tmp.exists());
        drop(f);
        assert!(!tmp.exists() && !target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
        let mut f = NewFile::create(&target).expect("create");
        f.write_all(b"whole").expect("write");
        f.commit().expect("commit");
        let m = std::fs::metadata(&target).expect("meta");
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        let page = dir.path().join("arbor.1");
        let mut f = NewFile::create_with_mode(&page, 0o644).expect("create");
        f.write_all(b"page").expect("write");
        f.commit().expect("commit");
        let m = std::fs::metadata(&page).expect("meta");
        assert_eq!(m.permissions().mode() & 0o777, 0o644);
    }

    #[test]
    fn world_writable_directories_need_the_sticky_bit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().join("open");
        std::fs::create_dir(&d).expect("mkdir");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = check_write_dir(&d, None).expect_err("world-writable");
        assert!(e.to_string().contains("sticky"), "{e}");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        check_write_dir(&d, None).expect("sticky is fine");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        check_write_dir(&d, None).expect("private is fine");
    }
}
