//! The write path: one `write` per line on an append-only descriptor, truncation back on
//! failure, a durability policy, and atomic whole-file rewrites.
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// When appended bytes are forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Page cache only; the OS writes it back when it likes.
    None,
    /// `fdatasync` on flush and close (the default).
    #[default]
    Flush,
    /// `fdatasync` after every entry, before its id is returned.
    Strict,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Durability::None),
            "flush" => Ok(Durability::Flush),
            "strict" => Ok(Durability::Strict),
            other => Err(format!(
                "unknown durability {other:?} (none, flush, strict)"
            )),
        }
    }
}

/// Mode for files arbor creates (sessions hold prompts and tool output).
pub const FILE_MODE: u32 = 0o600;
/// Mode for directories arbor creates.
pub const DIR_MODE: u32 = 0o700;

/// Creates `dir` and its missing parents with mode 0700.
///
/// A path that exists and is not a directory is reported as such ("not a directory"), not
/// with the bare "File exists" of `mkdir`.
pub fn create_dir_private(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|e| match std::fs::metadata(dir) {
            Ok(m) if !m.is_dir() => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("is {}, not a directory", crate::safe_fs::kind_of(&m)),
            ),
            _ => e,
        })
}

/// An append-only session file.
#[derive(Debug)]
pub struct AppendFile {
    file: File,
    len: u64,
    durability: Durability,
    dirty: bool,
}

impl AppendFile {
    /// Opens `path` for appending: with `create`, a new file (mode 0600) that must not exist
    /// yet; without, an existing regular file. The last component is never followed if it
    /// is a symlink (writers pass the session's real path, see
    /// [`crate::safe_fs::real_path_for_write`]).
    pub fn open(path: &Path, create: bool, durability: Durability) -> io::Result<AppendFile> {
        let (file, meta) = crate::safe_fs::open_checked(
            OpenOptions::new()
                .append(true)
                .create_new(create)
                .mode(FILE_MODE),
            path,
            true,
        )?;
        let len = meta.len();
        Ok(AppendFile {
            file,
            len,
            durability,
            dirty: false,
        })
    }

    /// The file's length as this writer knows it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends `bytes` (one or more complete lines) with a single `write` when the kernel
    /// takes it whole. On any failure the file is cut back to its previous length and the
    /// error returned: a partial line never stays behind.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The length right before this write (fstat): a failed write is cut back to exactly
        // this, whatever else happened to the file since it was opened.
        let before = self.file.metadata().map(|m| m.len()).unwrap_or(self.len);
        let result = (|| {
            let mut done = 0;
            while done < bytes.len() {
                match self.file.write(&bytes[done..]) {
                    Ok(0) => {
                        return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0"))
                    }
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if self.durability == Durability::Strict {
                self.file.sync_data()?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.len = before + bytes.len() as u64;
                self.dirty = self.durability != Durability::Strict;
                Ok(())
            }
            Err(e) => {
                // Best effort: take back whatever part of the line reached the file.
                let _ = self.file.set_len(before);
                let _ = self.file.sync_data();
                Err(e)
            }
        }
    }

    /// Forces appended bytes to stable storage (unless the policy is `none`).
    pub fn flush(&mut self) -> io::Result<()> {
        if self.dirty && self.durability != Durability::None {
            self.file.sync_data()?;
        }
        self.dirty = false;
        Ok(())
    }
}

impl Drop for AppendFile {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Fsyncs a directory, so a rename or a new file in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replaces `path` with `content` atomically: a temporary file in the same directory,
/// written, fsynced, given the original's owner, group and permissions (0600 for a new file),
/// renamed over `path`, and the directory fsynced. A crash leaves either the old or the new
/// file.
///
/// A symlink is followed: the file it points at is replaced and the link stays. A file with
/// several hard links is refused (the rename would leave the other names with the old
/// bytes), and so is a file whose owner cannot be kept (a file of another user, when the
/// caller is not root): replacing it would hand the user's session to the caller.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let real = dir.path().join("real.jsonl");
/// std::fs::write(&real, "old\n").unwrap();
/// let link = dir.path().join("link.jsonl");
/// std::os::unix::fs::symlink(&real, &link).unwrap();
/// arbor_store::atomic_write(&link, &[b"new\n"]).unwrap();
/// assert_eq!(std::fs::read(&real).unwrap(), b"new\n");
/// assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
/// ```
///
/// # Errors
/// Any I/O error of the temporary file, the fsyncs or the rename (the original is then
/// untouched), and `InvalidInput` / `PermissionDenied` for a hard-linked file or an owner that
/// cannot be kept.
pub fn atomic_write(path: &Path, content: &[&[u8]]) -> io::Result<()> {
    atomic_write_checked(path, content, &mut || Ok(()))
}

/// [`atomic_write`], with `before_rename` called after the new content is written and
/// synced and right before the rename: an error from it leaves the original untouched (the
/// temporary file is removed). `arbor sync` checks there that nobody appended to the session
/// while its merged copy was written.
///
/// # Errors
/// As [`atomic_write`], and whatever `before_rename` returns.
pub fn atomic_write_checked(
    path: &Path,
    content: &[&[u8]],
    before_rename: &mut dyn FnMut() -> io::Result<()>,
) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let path = &crate::safe_fs::real_path_for_write(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(m) = &old {
        if m.nlink() > 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "has {} hard links: replacing it would leave the other names with the old \
                     content; nothing was changed (copy it to a file of its own first)",
                    m.nlink()
                ),
            ));
        }
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(FILE_MODE))
        .tempfile_in(&dir)?;
    for chunk in content {
        tmp.write_all(chunk)?;
    }
    tmp.as_file().sync_all()?;
    if let Some(m) = &old {
        crate::safe_fs::give_to_owner_of(tmp.as_file(), m).map_err(|e| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "belongs to uid {} gid {} and its owner could not be kept ({e}); nothing \
                     was changed (run arbor as the file's owner)",
                    m.uid(),
                    m.gid()
                ),
            )
        })?;
        // After the owner: chown clears set-id bits, the mode is set last.
        tmp.as_file().set_permissions(m.permissions())?;
    }
    before_rename()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(&dir)
}

/// Writes `content` to a new file `path` (which must not exist, and is never a symlink
/// followed) with mode 0600, fsynced, its directory fsynced. On any failure (a full disk) the
/// partly written file is removed again: no empty or partial file stays behind. With
/// `owner_of`, the file gets that file's owner and group where the caller may give them
/// (root), so a user can read what root wrote for their session.
pub fn write_new_owned(
    path: &Path,
    content: &[u8],
    owner_of: Option<&std::fs::Metadata>,
) -> io::Result<()> {
    let mut f = crate::safe_fs::create_new_private(path)?;
    let written = (|| {
        if let Some(m) = owner_of {
            // Best effort: a caller that is not root keeps the file as its own.
            let _ = crate::safe_fs::give_to_owner_of(&f, m);
        }
        f.write_all(content)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            sync_dir(dir)?;
        }
    }
    Ok(())
}

/// [`write_new_owned`] without an owner to copy.
pub fn write_new(path: &Path, content: &[u8]) -> io::Result<()> {
    write_new_owned(path, content, None)
}
