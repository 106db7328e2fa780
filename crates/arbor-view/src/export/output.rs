//! Where an export goes when it is written to a file (`arbor export -o FILE`): which names it
//! may replace, and how the file and its images are created.
//!
//! - The file is a [`NewFile`]: written privately (0600, also with `--no-redact`) under a
//!   temporary name beside `FILE` and renamed over it when complete. A failed export leaves
//!   nothing: no temporary file, no half export, no images it had written.
//! - An existing `FILE` is replaced only when a previous export made it (it starts with
//!   [`MARKER`], or for JSON with `{"format":"arbor-export/`), when it is empty, or with
//!   `--force`. The session
//!   being exported is never replaced, and a directory is never an output.
//! - Images go to `FILE.assets/`, created 0700; a symlink there is refused, a symlink planted
//!   at an image's name is replaced, never followed.
use arbor_store::NewFile;
use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The first line of every Markdown and HTML export arbor writes to a file: how a later
/// export recognises a file it may replace. (An HTML comment: invisible in a Markdown viewer,
/// and before `<!doctype html>` it does not change how a browser renders the page.) JSON
/// exports are recognised by their first member, `{"format":"arbor-export/1"`.
pub const MARKER: &[u8] = b"<!-- arbor-export/1: written by arbor export -->\n";

const JSON_MARKER: &[u8] = b"{\"format\":\"arbor-export/";

/// Where `arbor export -o` writes: the file, and whether `--force` lets it replace a file no
/// earlier export made.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The file (`-o`).
    pub path: &'a Path,
    /// `--force`.
    pub force: bool,
}

/// Whether `path` is a regular file (not a symlink) that an earlier `arbor export -o` wrote.
pub fn is_previous_export(path: &Path) -> bool {
    let Ok((f, _)) = arbor_store::open_checked(std::fs::OpenOptions::new().read(true), path, true)
    else {
        return false;
    };
    let mut head = Vec::with_capacity(MARKER.len());
    if f.take(MARKER.len() as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    head.starts_with(MARKER) || head.starts_with(JSON_MARKER)
}

/// Why an export may not be written to a file ([`check_target`]); its message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The file's metadata could not be read.
    #[error("{}: {source}", path.display())]
    Stat {
        /// The output file.
        path: PathBuf,
        /// What `lstat` said.
        source: io::Error,
    },
    /// The output may not be replaced; `reason` says why and what would.
    #[error("{}: {reason}", path.display())]
    Refused {
        /// The output file.
        path: PathBuf,
        /// Why (and whether `--force` would replace it).
        reason: &'static str,
    },
}

/// Checks that the export of `session` may be written to `output`: an error naming the reason
/// when `output` is a directory, the session itself, or (unless `force`) an existing file that
/// no earlier export made (a session file, a symlink, anything else).
///
/// # Errors
/// [`TargetError`]: the file may not be replaced, or its metadata could not be read.
pub fn check_target(output: &Path, session: &Path, force: bool) -> Result<(), TargetError> {
    let refuse = |reason: &'static str| {
        Err(TargetError::Refused {
            path: output.to_path_buf(),
            reason,
        })
    };
    let meta = match std::fs::symlink_metadata(output) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(TargetError::Stat {
                path: output.to_path_buf(),
                source,
            })
        }
    };
    if meta.is_dir() {
        return refuse("is a directory; -o names the file to write");
    }
    if let (Ok(o), Ok(s)) = (std::fs::metadata(output), std::fs::metadata(session)) {
        if o.dev() == s.dev() && o.ino() == s.ino() {
            return refuse("is the session being exported; an export never replaces its session");
        }
    }
    if meta.file_type().is_symlink() {
        if force {
            return Ok(());
        }
        return refuse(
            "is a symbolic link, not an earlier export; nothing written (--force \
             replaces the link itself, never the file it points to)",
        );
    }
    // An earlier export, or an empty file (`mktemp`): nothing is lost by replacing it.
    if meta.is_file() && (meta.len() == 0 || is_previous_export(output)) {
        return Ok(());
    }
    if force {
        return Ok(());
    }
    if meta.is_file() && arbor_store::discover::has_valid_header(output) {
        return refuse(
            "is a session file; an export does not replace it (--force does, losing it)",
        );
    }
    refuse(
        "exists and was not written by arbor export; nothing written (--force \
         replaces it)",
    )
}

/// The images directory of an export to `file` (`FILE.assets/`) and its name as linked from
/// the Markdown.
pub fn assets_of(file: &Path) -> (PathBuf, String) {
    let name = format!(
        "{}.assets",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    (file.with_file_name(&name), name)
}

/// The images of a Markdown export: `FILE.assets/`, created (0700) when the first image is
/// written, and what this export created there, removed again by [`Assets::discard`] when the
/// export fails.
#[derive(Debug)]
pub struct Assets {
    dir: PathBuf,
    rel: String,
    made: RefCell<Made>,
}

#[derive(Debug, Default)]
struct Made {
    dir: bool,
    files: Vec<PathBuf>,
}

impl Assets {
    /// The assets of an export to `file`.
    pub fn for_file(file: &Path) -> Assets {
        let (dir, rel) = assets_of(file);
        Assets {
            dir,
            rel,
            made: RefCell::default(),
        }
    }

    /// The directory's name as the Markdown links it.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// Creates the directory (0700) if it is missing; refuses a symlink or anything else there.
    fn ensure_dir(&self) -> io::Result<()> {
        match std::fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Ok(()) => {
                self.made.borrow_mut().dir = true;
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let m = std::fs::symlink_metadata(&self.dir)?;
        if m.file_type().is_symlink() {
            return Err(io::Error::other(format!(
                "{}: a symlink, not a directory: not written through",
                self.dir.display()
            )));
        }
        if !m.is_dir() {
            return Err(io::Error::other(format!(
                "{}: is {}, not a directory",
                self.dir.display(),
                arbor_store::kind_of(&m)
            )));
        }
        arbor_store::check_write_dir(&self.dir, None)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.dir.display())))
    }

    /// Writes the image `name` (a [`NewFile`]: a planted symlink at the name is replaced, not
    /// followed); an identical file already there is kept.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.ensure_dir()?;
        let target = self.dir.join(name);
        let existing = std::fs::symlink_metadata(&target).ok();
        if existing
            .as_ref()
            .is_some_and(|m| m.is_file() && m.len() == bytes.len() as u64)
            && arbor_store::open_checked(std::fs::OpenOptions::new().read(true), &target, true)
                .and_then(|(mut f, _)| {
                    let mut b = Vec::with_capacity(bytes.len());
                    f.read_to_end(&mut b).map(|_| b)
                })
                .is_ok_and(|b| b == bytes)
        {
            return Ok(());
        }
        let mut f = NewFile::create(&target)?;
        f.write_all(bytes)?;
        f.commit()?;
        if existing.is_none() {
            self.made.borrow_mut().files.push(target);
        }
        Ok(())
    }

    /// Removes what this export created in the directory (and the directory, if it made it).
    pub fn discard(&self) {
        let made = self.made.take();
        for f in &made.files {
            let _ = std::fs::remove_file(f);
        }
        if made.dir {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// Writes an export to `output` with `render`: checked first ([`check_target`]), then written
/// to a [`NewFile`] (after [`MARKER`] unless `json`), flushed, fsynced and renamed over
/// `output`. On any failure nothing stays: neither the file nor the images `assets` wrote.
pub fn write_export<R>(
    output: &Path,
    json: bool,
    assets: Option<&Assets>,
    render: impl FnOnce(&mut io::BufWriter<&mut NewFile>) -> io::Result<R>,
) -> io::Result<R> {
    let result = (|| {
        let mut file = NewFile::create(output)?;
        let r = {
            let mut w = io::BufWriter::new(&mut file);
            if !json {
                w.write_all(MARKER)?;
            }
            let r = render(&mut w)?;
            w.flush()?;
            r
        };
        file.as_file().sync_all()?;
        file.commit()?;
        Ok(r)
    })();
    if result.is_err() {
        if let Some(a) = assets {
            a.discard();
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failure_after_images_were_written_leaves_nothing_this_export_made() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out.md");
        // No assets directory yet: it goes, with the image.
        let assets = Assets::for_file(&out);
        let r = write_export(&out, false, Some(&assets), |w| {
            w.write_all(b"# half")?;
            assets.write("a.png", b"png")?;
            Err::<(), _>(io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
        // An earlier export's images stay; only the new one goes.
        let dir = tmp.path().join("out.md.assets");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(dir.join("old.png"), b"old").expect("old");
        let assets = Assets::for_file(&out);
        let r = write_export(&out, false, Some(&assets), |_| {
            assets.write("old.png", b"old")?;
            assets.write("new.png", b"new")?;
            Err::<(), _>(io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert_eq!(names(tmp.path()), ["out.md.assets"]);
        assert_eq!(names(&dir), ["old.png"]);
        // A success: private, marked, recognised.
        write_export(&out, false, None, |w| w.write_all(b"# whole\n")).expect("export");
        assert!(is_previous_export(&out));
        let m = std::fs::metadata(&out).expect("meta");
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
            0o600
        );
    }
}
