//! omp's content-addressed blob store, shared with omp: `<agent dir>/blobs/<sha256 hex>`, where
//! the hash is that of the stored bytes (the *decoded* image), so a blob arbor writes has the
//! name omp gives it and each tool reads the other's.
//!
//! Unlike omp (plain `writeFileSync`, mode 0644, no fsync), a blob is written to a temporary file
//! in the blob directory, fsynced, renamed into place and the directory fsynced, with mode 0600
//! (the directory 0700): a crash never leaves a half-written blob under its final name, and the
//! blob is on stable storage before the session line that refers to it is written. A blob that
//! already exists with the same bytes is not rewritten. Reads check the bytes against the name.
use crate::error::StoreError;
use crate::file::{create_dir_private, sync_dir, FILE_MODE};
use arbor_core::blobref::{self, is_valid_hash, parse_blob_ref, to_hex, BLOB_PREFIX};
use arbor_core::doc::SessionDoc;
use arbor_core::entry::LineRef;
use arbor_core::json::{JsStr, JsValue};
use arbor_core::persist::{self, BlobPut, ResolveAs};
use sha2::{Digest, Sha256};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What is wrong with a blob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlobError {
    /// The reference's hash is not 64 lowercase hex characters (no path was built from it).
    #[error(transparent)]
    Malformed(#[from] blobref::BlobRefError),
    /// No file for the hash.
    #[error("blob {hash} is missing from {dir}")]
    Missing {
        /// The hash.
        hash: String,
        /// The blob directory (or the store that keeps the session, as it names itself).
        dir: PathBuf,
    },
    /// The file's bytes do not hash to its name.
    #[error("blob {hash} in {dir} is corrupt (its bytes hash to {actual})")]
    Corrupt {
        /// The name.
        hash: String,
        /// The blob directory.
        dir: PathBuf,
        /// What the bytes hash to.
        actual: String,
    },
    /// The file could not be read or written.
    #[error("blob {hash} in {dir}: {message}")]
    Io {
        /// The hash.
        hash: String,
        /// The blob directory.
        dir: PathBuf,
        /// The I/O error.
        message: String,
    },
}

/// Whether `hay` contains `needle`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// A blob directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobStore {
    dir: PathBuf,
}

/// One stored blob (its canonical file and any typed sidecars such as `<hash>.png`).
#[derive(Debug, Clone)]
pub struct BlobFile {
    /// The hash.
    pub hash: String,
    /// Every file of the blob.
    pub paths: Vec<PathBuf>,
    /// Their total size.
    pub bytes: u64,
    /// The newest modification time among them.
    pub modified: SystemTime,
}

/// The store as omp's context builder reads snapcompact frames from it (as omp's
/// `SessionManager.buildSessionContext()` does): size by `stat`, bytes as they are on disk.
impl arbor_core::context::FrameBlobs for BlobStore {
    fn size(&self, hash: &str) -> Option<u64> {
        std::fs::metadata(self.path_of(hash).ok()?)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }
    fn base64(&self, hash: &str) -> Option<String> {
        read_blob_file(&self.path_of(hash).ok()?)
            .ok()
            .map(|b| blobref::encode_base64(&b))
    }
}

impl BlobStore {
    /// The store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore { dir: dir.into() }
    }

    /// The store of an agent directory: `<agent dir>/blobs`.
    pub fn for_agent_dir(agent_dir: &Path) -> BlobStore {
        BlobStore::new(agent_dir.join("blobs"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a blob. The hash is validated first: nothing but 64 lowercase hex
    /// characters ever becomes part of a path.
    pub fn path_of(&self, hash: &str) -> Result<PathBuf, BlobError> {
        if !is_valid_hash(hash.as_bytes()) {
            return Err(BlobError::Malformed(blobref::BlobRefError::Malformed(
                format!("{BLOB_PREFIX}{hash}"),
            )));
        }
        Ok(self.dir.join(hash))
    }

    fn io(&self, hash: &str, e: io::Error) -> BlobError {
        BlobError::Io {
            hash: hash.to_string(),
            dir: self.dir.clone(),
            message: e.to_string(),
        }
    }

    /// Stores `bytes` and returns their hash. The blob is on stable storage when this
    /// returns (temporary file, fsync, rename, directory fsync). With an `extension` (`png`,
    /// ...), omp's typed sidecar `<hash>.<ext>` is linked to it as omp does.
    pub fn put(&self, bytes: &[u8], extension: Option<&str>) -> Result<String, BlobError> {
        let hash = sha256_hex(bytes);
        let path = self.path_of(&hash)?;
        let io = |e| self.io(&hash, e);
        let existing_ok = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() == bytes.len() as u64 => {
                read_blob_file(&path).map(|b| b == bytes).unwrap_or(false)
            }
            _ => false,
        };
        if !existing_ok {
            if !self.dir.is_dir() {
                create_dir_private(&self.dir).map_err(io)?;
                if let Some(parent) = self.dir.parent() {
                    if !parent.as_os_str().is_empty() {
                        sync_dir(parent).map_err(io)?;
                    }
                }
            }
            let mut tmp = tempfile::Builder::new()
                .prefix(&format!(".{hash}."))
                .suffix(".tmp")
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(FILE_MODE))
                .tempfile_in(&self.dir)
                .map_err(io)?;
            tmp.write_all(bytes).map_err(io)?;
            tmp.as_file().sync_all().map_err(io)?;
            // Root storing a blob in a user's store leaves it the user's (omp must read it).
            if let Ok(dir_meta) = std::fs::metadata(&self.dir) {
                let _ = crate::safe_fs::give_to_owner_of(tmp.as_file(), &dir_meta);
            }
            tmp.persist(&path).map_err(|e| io(e.error))?;
            sync_dir(&self.dir).map_err(io)?;
        }
        if let Some(ext) = extension {
            let side = self.dir.join(format!("{hash}.{ext}"));
            if !side.exists() && std::fs::hard_link(&path, &side).is_err() {
                // Only a convenience for image viewers (omp falls back to a copy too).
                let _ = crate::file::write_new(&side, bytes);
            }
        }
        Ok(hash)
    }

    /// Reads a blob and checks that its bytes hash to its name. Only a regular file is a
    /// blob (a symlink to `/dev/zero` or a FIFO in its place is an error naming it, read not
    /// at all), and it is read up to the size `fstat` gave when it was opened, never further.
    pub fn get(&self, hash: &str) -> Result<Vec<u8>, BlobError> {
        let path = self.path_of(hash)?;
        let bytes = match read_blob_file(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(BlobError::Missing {
                    hash: hash.to_string(),
                    dir: self.dir.clone(),
                })
            }
            Err(e) => return Err(self.io(hash, e)),
        };
        let actual = sha256_hex(&bytes);
        if actual != hash {
            return Err(BlobError::Corrupt {
                hash: hash.to_string(),
                dir: self.dir.clone(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// Checks a blob without keeping its bytes.
    pub fn verify(&self, hash: &str) -> Result<(), BlobError> {
        self.get(hash).map(|_| ())
    }

    /// The blobs in the directory (`<hash>` and `<hash>.<ext>` files), by hash.
    pub fn list(&self) -> io::Result<Vec<BlobFile>> {
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut by: std::collections::BTreeMap<String, BlobFile> = Default::default();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let hash = name.split_once('.').map_or(name.as_str(), |(h, _)| h);
            if !is_valid_hash(hash.as_bytes()) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let b = by.entry(hash.to_string()).or_insert_with(|| BlobFile {
                hash: hash.to_string(),
                paths: Vec::new(),
                bytes: 0,
                modified,
            });
            b.paths.push(e.path());
            b.bytes += meta.len();
            b.modified = b.modified.max(modified);
        }
        Ok(by.into_values().collect())
    }

    /// Temporary files left by interrupted writes (`.<hash>.*.tmp`), older than `min_age`.
    pub fn stale_temps(&self, min_age: Duration) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let now = SystemTime::now();
        rd.flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with('.') && n.ends_with(".tmp")
            })
            .filter(|e| {
                e.metadata()
                    .and_then(|m| m.modified())
                    .map(|m| now.duration_since(m).unwrap_or_default() >= min_age)
                    .unwrap_or(false)
            })
            .map(|e| e.path())
            .collect()
    }
}

/// Reads a blob file: a regular file only (symlinks followed), at most as many bytes as it
/// had when opened. A file that grows while it is read is an error rather than a read without
/// end.
fn read_blob_file(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let f = crate::safe_fs::open_regular(path)?;
    let len = f.metadata()?.len();
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(len.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > len {
        return Err(io::Error::other("the blob grew while it was read"));
    }
    Ok(bytes)
}

/// The blob directory for a session file: `<agent_override>/blobs` when given, else
/// `$PI_CODING_AGENT_DIR/blobs`, else `<X>/blobs` when the session lies under `<X>/sessions/`
/// (the agent directory layout pi and omp use; skipped when `$PI_SESSIONS_DIR` moves sessions
/// elsewhere), else omp's default agent directory's.
pub fn blob_dir_for_session(session: &Path, agent_override: Option<&Path>) -> PathBuf {
    if let Some(a) = agent_override {
        return a.join("blobs");
    }
    if let Some(v) = std::env::var("PI_CODING_AGENT_DIR")
        .ok()
        .filter(|v| !v.is_empty())
    {
        return crate::paths::expand_tilde(&v).join("blobs");
    }
    if std::env::var("PI_SESSIONS_DIR").map_or(true, |v| v.is_empty()) {
        let abs = std::path::absolute(session).unwrap_or_else(|_| session.to_path_buf());
        for anc in abs.ancestors().skip(1) {
            if anc.file_name().is_some_and(|n| n == "sessions") {
                if let Some(agent) = anc.parent() {
                    return agent.join("blobs");
                }
            }
        }
    }
    crate::paths::agent_dir(arbor_core::Dialect::Omp).join("blobs")
}

/// Runs omp's write-side transforms on one new entry line (truncation, blob
/// externalization), storing blobs in `store` before returning. `Ok(None)`: nothing changed.
pub fn prepare_line(line: &[u8], store: &BlobStore) -> Result<Option<Vec<u8>>, StoreError> {
    prepare_with(line, &mut |b: BlobPut<'_>| {
        store
            .put(b.bytes, b.extension.as_deref())
            .map_err(StoreError::from)
    })
}

/// [`prepare_line`] with the blobs stored in `blobs` (a session kept in a database keeps
/// its blobs there, [`crate::backend::Blobs`]); omp's typed sidecars are a directory's
/// convenience and are not made.
pub fn prepare_line_in(
    line: &[u8],
    blobs: &dyn crate::backend::Blobs,
) -> Result<Option<Vec<u8>>, StoreError> {
    prepare_with(line, &mut |b: BlobPut<'_>| {
        let hash = sha256_hex(b.bytes);
        blobs.put_blob(&hash, b.bytes)?;
        Ok(hash)
    })
}

/// omp's write-side transforms of one line, each blob stored by `put` (which returns its
/// hash) before this returns.
fn prepare_with(
    line: &[u8],
    put: &mut dyn FnMut(BlobPut<'_>) -> Result<String, StoreError>,
) -> Result<Option<Vec<u8>>, StoreError> {
    if !persist::may_need_persistence_transform(line) {
        return Ok(None);
    }
    let mut v = JsValue::parse(line).map_err(|e| StoreError::Line(e.into()))?;
    if persist::prepare_for_persistence(&mut v, put)? {
        Ok(Some(v.to_json()))
    } else {
        Ok(None)
    }
}

/// The blob directory as a [`crate::backend::Blobs`] store (what a [`crate::backend::files::FileStore`]
/// keeps its sessions' blobs in): a blob is stored as [`BlobStore::put`] stores it.
impl crate::backend::Blobs for BlobStore {
    fn has_blob(&self, hash: &str) -> Result<bool, crate::backend::BackendError> {
        Ok(self.path_of(hash).is_ok_and(|p| p.is_file()))
    }

    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), crate::backend::BackendError> {
        let name = format!("blobs:{}", self.dir.display());
        crate::backend::check_blob(&name, hash, bytes)?;
        self.put(bytes, None)
            .map(|_| ())
            .map_err(|e| crate::backend::BackendError::Store {
                store: name,
                source: Box::new(e.into()),
            })
    }

    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, crate::backend::BackendError> {
        match self.get(hash) {
            Ok(b) => Ok(Some(b)),
            Err(BlobError::Missing { .. }) => Ok(None),
            Err(e) => Err(crate::backend::BackendError::Store {
                store: format!("blobs:{}", self.dir.display()),
                source: Box::new(e.into()),
            }),
        }
    }
}

/// Where a reader finds a session's blobs: the blob directory of a session file
/// ([`BlobStore`]) or the store that keeps the session ([`StoreBlobs`]). [`resolve_doc_blobs`]
/// (`show`, `context`, `export`) reads through it, whichever keeps the session.
pub trait BlobSource {
    /// Blob `hash`'s bytes, checked against the hash.
    ///
    /// # Errors
    /// [`BlobError::Missing`] when the source does not hold it, [`BlobError::Corrupt`] when
    /// its bytes hash to something else, [`BlobError::Io`] when it cannot be read,
    /// [`BlobError::Malformed`] for a hash that is not 64 lowercase hex characters.
    fn fetch(&self, hash: &str) -> Result<Vec<u8>, BlobError>;
}

impl BlobSource for BlobStore {
    fn fetch(&self, hash: &str) -> Result<Vec<u8>, BlobError> {
        self.get(hash)
    }
}

/// The blobs of the store that keeps a session (SQLite, PostgreSQL, memory, an agent
/// directory: [`crate::backend::Blobs`]) as a reader finds them: an omp session kept in a
/// database has its images there, not in a blob directory. Errors name the store as it names
/// itself ([`crate::backend::SessionStore::describe`]).
#[derive(Debug, Clone, Copy)]
pub struct StoreBlobs<'s> {
    store: &'s dyn crate::backend::SessionStore,
}

impl<'s> StoreBlobs<'s> {
    /// The blobs of `store`.
    pub fn new(store: &'s dyn crate::backend::SessionStore) -> StoreBlobs<'s> {
        StoreBlobs { store }
    }
}

impl BlobSource for StoreBlobs<'_> {
    fn fetch(&self, hash: &str) -> Result<Vec<u8>, BlobError> {
        if !is_valid_hash(hash.as_bytes()) {
            return Err(BlobError::Malformed(blobref::BlobRefError::Malformed(
                format!("{BLOB_PREFIX}{hash}"),
            )));
        }
        let dir = || PathBuf::from(self.store.describe());
        match self.store.get_blob(hash) {
            Ok(Some(bytes)) => {
                let actual = sha256_hex(&bytes);
                if actual != hash {
                    return Err(BlobError::Corrupt {
                        hash: hash.to_string(),
                        dir: dir(),
                        actual,
                    });
                }
                Ok(bytes)
            }
            Ok(None) => Err(BlobError::Missing {
                hash: hash.to_string(),
                dir: dir(),
            }),
            Err(e) => Err(BlobError::Io {
                hash: hash.to_string(),
                dir: dir(),
                message: e.to_string(),
            }),
        }
    }
}

/// The store's blobs as omp's context builder reads snapcompact frames.
impl arbor_core::context::FrameBlobs for StoreBlobs<'_> {
    fn size(&self, hash: &str) -> Option<u64> {
        self.fetch(hash).ok().map(|b| b.len() as u64)
    }
    fn base64(&self, hash: &str) -> Option<String> {
        self.fetch(hash).ok().map(|b| blobref::encode_base64(&b))
    }
}

/// A blob reference that could not be resolved (reported with `--lenient`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobIssue {
    /// 1-based line number of the entry (0 for entries not from the file).
    pub line_no: usize,
    /// The entry id.
    pub entry_id: Option<String>,
    /// What is wrong.
    pub error: BlobError,
}

/// Replaces the blob references of `doc`'s entries with the blobs' contents, in the positions
/// omp restores on load (see [`persist::resolve_blob_refs`]), from `store` (a session file's
/// blob directory, or the store that keeps the session: [`StoreBlobs`]). A missing blob's
/// reference is left in place and returned as an issue; a corrupt blob or a malformed
/// reference is an error naming it, unless `lenient` (then it is left in place and returned
/// too).
///
/// The resolved lines live only in memory: such a document is for reading (context, show,
/// export), never for writing back.
pub fn resolve_doc_blobs(
    doc: &mut SessionDoc,
    store: &dyn BlobSource,
    lenient: bool,
) -> Result<Vec<BlobIssue>, StoreError> {
    let mut issues = Vec::new();
    let mut replaced = Vec::new();
    // The loader noted which lines contain the prefix (`SessionDoc::blob_ref_lines`), while
    // each line was in cache: a separate search over the whole file cost more than the rest
    // of the blob work (docs/performance.md, "Figures behind code decisions").
    let hits = doc.blob_ref_lines().to_vec();
    for i in 0..doc.entries().len() {
        let line = doc.entry_line(i);
        let candidate = match doc.entries()[i].line {
            LineRef::Base { start, .. } => hits.binary_search(&start).is_ok(),
            LineRef::Owned(_) => contains(line, BLOB_PREFIX.as_bytes()),
        };
        if !candidate {
            continue;
        }
        let Ok(mut v) = JsValue::parse(line) else {
            continue;
        };
        let (line_no, entry_id) = (
            doc.entries()[i].line_no,
            doc.entries()[i].id.as_deref().map(str::to_string),
        );
        let mut resolve = |r: &JsStr, how: ResolveAs| -> Result<Option<JsStr>, BlobError> {
            let got = match parse_blob_ref(&r.0) {
                Ok(Some(hash)) => store.fetch(hash),
                Ok(None) => return Ok(None),
                Err(e) => Err(BlobError::from(e)),
            };
            match got {
                Ok(bytes) => Ok(Some(match how {
                    ResolveAs::Base64 => JsStr::from(blobref::encode_base64(&bytes)),
                    ResolveAs::DataUrl => JsStr::from(String::from_utf8_lossy(&bytes).into_owned()),
                })),
                // A missing blob never stops a read (a session pulled before its blob
                // arrived must still open): the reference stays in place, the issue names
                // it. A blob that is there but wrong fails unless `lenient`.
                Err(error) if lenient || matches!(error, BlobError::Missing { .. }) => {
                    issues.push(BlobIssue {
                        line_no,
                        entry_id: entry_id.clone(),
                        error,
                    });
                    Ok(None)
                }
                Err(error) => Err(error),
            }
        };
        let changed = match persist::resolve_blob_refs(&mut v, &mut resolve) {
            Ok(c) => c,
            Err(e) => {
                return Err(StoreError::BlobRef {
                    line: line_no,
                    entry_id: entry_id.clone(),
                    source: e,
                });
            }
        };
        if changed {
            replaced.push((i, v.to_json()));
        }
    }
    doc.replace_entry_lines(replaced)?;
    Ok(issues)
}

/// What `arbor gc --blobs` found (and removed, unless it was a dry run).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GcReport {
    /// Session-like files scanned for references.
    pub files_scanned: usize,
    /// Distinct hashes referenced.
    pub referenced: usize,
    /// Blobs in the store.
    pub candidates: usize,
    /// Unreferenced blobs old enough to remove (hash, files, bytes).
    pub unreferenced: Vec<BlobFile>,
    /// Interrupted-write temporary files old enough to remove.
    pub stale_temps: Vec<PathBuf>,
    /// Files removed (0 in a dry run).
    pub removed: usize,
    /// Files that could not be read or removed.
    pub errors: Vec<String>,
}

pub use crate::gc::{gc, reference_files};

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn put_get_verify_and_privacy() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = BlobStore::new(tmp.path().join("agent/blobs"));
        let h = store.put(b"hello", Some("png")).expect("put");
        assert_eq!(h, sha256_hex(b"hello"));
        assert_eq!(store.get(&h).expect("get"), b"hello");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&store.path_of(&h).expect("path")), 0o600);
        assert_eq!(mode(store.dir()), 0o700);
        assert!(store.dir().join(format!("{h}.png")).exists());
        // Same bytes again: fine, not rewritten.
        assert_eq!(store.put(b"hello", None).expect("again"), h);
        // Corruption and absence are named.
        std::fs::write(store.path_of(&h).expect("path"), b"HELLO").expect("corrupt");
        assert!(matches!(store.get(&h), Err(BlobError::Corrupt { .. })));
        assert!(matches!(
            store.get(&"0".repeat(64)),
            Err(BlobError::Missing { .. })
        ));
        assert!(matches!(
            store.get("../../etc/passwd"),
            Err(BlobError::Malformed(_))
        ));
        // put repairs a corrupt blob with the right bytes.
        store.put(b"hello", None).expect("repair");
        assert!(store.verify(&h).is_ok());
    }

    #[test]
    fn gc_keeps_referenced_and_fresh_blobs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let agent = tmp.path().join("agent");
        let store = BlobStore::for_agent_dir(&agent);
        let keep = store.put(b"keep", None).expect("put");
        let drop = store.put(b"drop", Some("png")).expect("put");
        let sdir = agent.join("sessions/--x--");
        std::fs::create_dir_all(&sdir).expect("mkdir");
        std::fs::write(
            sdir.join("s.jsonl"),
            format!("{{\"data\":\"blob:sha256:{keep}\"}}\n"),
        )
        .expect("write");
        let files = reference_files(&agent, &[]).expect("files");
        assert_eq!(files.len(), 1);
        let r = gc(&store, &files, Duration::from_secs(3600), true).expect("gc");
        assert!(r.unreferenced.is_empty(), "fresh blobs are kept");
        let r = gc(&store, &files, Duration::ZERO, true).expect("gc");
        assert_eq!(r.unreferenced.len(), 1);
        assert_eq!(r.unreferenced[0].hash, drop);
        assert_eq!(r.removed, 0);
        assert!(store.path_of(&drop).expect("p").exists());
        let r = gc(&store, &files, Duration::ZERO, false).expect("gc");
        assert_eq!(r.removed, 2);
        assert!(!store.path_of(&drop).expect("p").exists());
        assert!(store.verify(&keep).is_ok());
    }
}
