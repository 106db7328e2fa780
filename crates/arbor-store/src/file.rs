//! The write path: one `write` per line on an append-only descriptor, truncation back on
//! failure, a durability policy, and atomic whole-file rewrites.
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// When appended bytes are forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
pub fn create_dir_private(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
}

/// An append-only session file.
#[derive(Debug)]
pub struct AppendFile {
    file: File,
    path: PathBuf,
    len: u64,
    durability: Durability,
    dirty: bool,
}

impl AppendFile {
    /// Opens (creating with mode 0600 if asked) `path` for appending.
    pub fn open(path: &Path, create: bool, durability: Durability) -> io::Result<AppendFile> {
        let file = OpenOptions::new()
            .append(true)
            .create(create)
            .mode(FILE_MODE)
            .open(path)?;
        let len = file.metadata()?.len();
        Ok(AppendFile {
            file,
            path: path.to_path_buf(),
            len,
            durability,
            dirty: false,
        })
    }

    /// The file's length as this writer knows it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
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

    /// Cuts the file back to `len` bytes (used to remove a torn tail after saving it).
    pub fn truncate_to(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.file.sync_data()?;
        self.len = len;
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
/// written, fsynced, given the original's permissions (0600 for a new file), renamed over
/// `path`, and the directory fsynced. A crash leaves either the old or the new file.
pub fn atomic_write(path: &Path, content: &[&[u8]]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(FILE_MODE))
        .tempfile_in(&dir)?;
    for chunk in content {
        tmp.write_all(chunk)?;
    }
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(&dir)
}

/// Writes `content` to a new file `path` (which must not exist) with mode 0600, fsynced.
pub fn write_new(path: &Path, content: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)?;
    f.write_all(content)?;
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            sync_dir(dir)?;
        }
    }
    Ok(())
}
