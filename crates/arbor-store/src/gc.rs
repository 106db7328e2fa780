//! `arbor gc --blobs`: which blobs nothing refers to any more, found so that nothing a
//! reader of arbor's would resolve is ever removed.
//!
//! The rule: whatever any reader would resolve, gc sees; whatever gc cannot read stops the
//! run before a single blob is removed.
//! - References are found in every `*.jsonl*` file under the sessions and archive roots
//!   (sessions, `.jsonl.gz` archives, backups, arbor's sidecars), the files omp lists in
//!   `custom-session-files/` and the terminal breadcrumbs: as omp's own gc finds them, in the
//!   raw bytes, and also in the bytes with JSON's `\uXXXX` escapes decoded (a reference spelled
//!   `blob:sha256:\u0031…` is resolved by a reader, so it counts).
//! - Symlinked session files and symlinked project directories are followed (each real
//!   directory is visited once: a symlink cycle ends there), as listing follows them.
//! - A directory or file that cannot be read (permissions, I/O) is an error naming it, and
//!   nothing is removed. A dangling symlink is passed over: no reader can open it, so no
//!   reference can be resolved through it. FIFOs and devices named `*.jsonl` are passed over
//!   for the same reason (readers refuse them).
use crate::blobs::{BlobStore, GcReport};
use crate::error::{IoContext, StoreError};
use crate::file::sync_dir;
use crate::safe_fs;
use arbor_core::blobref;
use std::collections::HashSet;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The files under `roots` whose names hold `.jsonl`, symlinks followed, each real directory
/// and each file (by device and inode) once.
struct Walk {
    files: Vec<PathBuf>,
    dirs_seen: HashSet<(u64, u64)>,
    files_seen: HashSet<(u64, u64)>,
}

impl Walk {
    fn new() -> Walk {
        Walk {
            files: Vec::new(),
            dirs_seen: HashSet::new(),
            files_seen: HashSet::new(),
        }
    }

    fn add_file(&mut self, path: PathBuf, meta: &std::fs::Metadata) {
        if meta.is_file() && self.files_seen.insert((meta.dev(), meta.ino())) {
            self.files.push(path);
        }
    }

    fn root(&mut self, root: &Path) -> Result<(), StoreError> {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).at(root),
        };
        if !meta.is_dir() {
            self.add_file(root.to_path_buf(), &meta);
            return Ok(());
        }
        let mut stack = vec![(root.to_path_buf(), meta)];
        while let Some((dir, meta)) = stack.pop() {
            if !self.dirs_seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            for entry in std::fs::read_dir(&dir).at(&dir)? {
                let entry = entry.at(&dir)?;
                let path = entry.path();
                // Follows symlinks: a linked project directory or session file counts.
                let meta = match std::fs::metadata(&path) {
                    Ok(m) => m,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // dangling
                    Err(e) => return Err(e).at(&path),
                };
                if meta.is_dir() {
                    stack.push((path, meta));
                } else if entry.file_name().to_string_lossy().contains(".jsonl") {
                    self.add_file(path, &meta);
                }
            }
        }
        Ok(())
    }

    /// A file named by a registry entry or a breadcrumb: kept if it is a regular file; a
    /// stale entry (the file is gone) is passed over.
    fn named(&mut self, path: PathBuf) -> Result<(), StoreError> {
        match std::fs::metadata(&path) {
            Ok(m) => {
                self.add_file(path, &m);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(()),
            Err(e) => Err(e).at(&path),
        }
    }
}

/// The small text files of a registry directory (`custom-session-files/`,
/// `terminal-sessions/`): their contents, in name order. A missing directory is empty; an
/// unreadable one, or an unreadable entry, is an error.
fn registry(dir: &Path) -> Result<Vec<String>, StoreError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).at(dir),
    };
    let mut paths = Vec::new();
    for e in rd {
        paths.push(e.at(dir)?.path());
    }
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(&p).at(&p)?;
        if !meta.is_file() {
            continue;
        }
        let bytes = safe_fs::read_regular_at_most(&p, 1 << 20).at(&p)?;
        let text = String::from_utf8(bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
            .at(&p)?;
        out.push(text);
    }
    Ok(out)
}

/// Where sessions that may reference blobs of `agent_dir` live: every `*.jsonl*` file under
/// its sessions root (with `$PI_SESSIONS_DIR` honoured), omp's archive root next to it and
/// the `extra` roots, plus the files listed in `custom-session-files/` and the terminal
/// breadcrumbs. An unreadable directory or registry entry is an error: a reference could
/// hide behind it.
pub fn reference_files(agent_dir: &Path, extra: &[PathBuf]) -> Result<Vec<PathBuf>, StoreError> {
    let sessions = crate::paths::sessions_root(agent_dir);
    let mut roots = vec![sessions.clone(), agent_dir.join("sessions")];
    if let Some(parent) = sessions.parent() {
        roots.push(parent.join("archive"));
    }
    roots.extend(extra.iter().cloned());
    roots.sort();
    roots.dedup();
    let mut walk = Walk::new();
    for r in &roots {
        walk.root(r)?;
    }
    // omp's registry of sessions outside the roots: one file per session holding its path.
    for dir in registry_dirs(agent_dir) {
        for text in registry(&dir)? {
            let t = text.trim();
            if !t.is_empty() {
                walk.named(PathBuf::from(t))?;
            }
        }
    }
    // Terminal breadcrumbs: `cwd\nsessionFile\n...`.
    for text in registry(&agent_dir.join("terminal-sessions"))? {
        let mut lines = text.lines();
        if let (Some(cwd), Some(file)) = (lines.next(), lines.next()) {
            if !file.trim().is_empty() {
                walk.named(Path::new(cwd.trim()).join(file.trim()))?;
            }
        }
    }
    let mut files = walk.files;
    files.sort();
    Ok(files)
}

/// The name of omp's registry of session files kept outside the sessions root.
pub const CUSTOM_SESSION_FILES: &str = "custom-session-files";

/// Where the registry of `agent_dir` may be: omp keeps it in its state directory (the agent
/// directory itself unless omp's XDG directories are in use); arbor registers beside the blob
/// store it wrote to. All of them are read.
fn registry_dirs(agent_dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![
        crate::paths::state_dir(agent_dir).join(CUSTOM_SESSION_FILES),
        crate::paths::data_dir(agent_dir).join(CUSTOM_SESSION_FILES),
        agent_dir.join(CUSTOM_SESSION_FILES),
    ];
    v.sort();
    v.dedup();
    v
}

/// Records `session` (a real path) in the registry of the agent directory whose blob store
/// is `store`, unless it lies under that agent directory's sessions root (which gc walks
/// anyway), as omp does for its sessions outside the root: one marker file, named by a hash
/// of the path, holding the absolute path. Idempotent. Called before a line naming a blob of
/// `store` is written, so that gc (arbor's and omp's) never misses the reference.
pub fn register_session_file(store: &BlobStore, session: &Path) -> Result<(), StoreError> {
    let Some(agent_dir) = store.dir().parent() else {
        return Ok(());
    };
    let root = crate::paths::sessions_root(agent_dir);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let session = safe_fs::real_path_for_write(session).at(session)?;
    if session.starts_with(&root) {
        return Ok(());
    }
    let dir = agent_dir.join(CUSTOM_SESSION_FILES);
    let text = session.to_string_lossy().into_owned();
    let name = &crate::blobs::sha256_hex(text.as_bytes())[..32];
    let marker = dir.join(name);
    if std::fs::read(&marker).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(());
    }
    crate::file::create_dir_private(&dir).at(&dir)?;
    safe_fs::replace_file(&marker, text.as_bytes()).at(&marker)?;
    sync_dir(&dir).at(&dir)
}

/// `bytes` with JSON's `\uXXXX` escapes of ASCII characters decoded (an escaped backslash
/// stays as it is, so `\\u0031` is not read as an escape). What a reader sees of a string
/// that spells a blob reference with escapes.
fn decode_ascii_escapes(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            if bytes[i + 1] == b'u' && i + 5 < bytes.len() {
                let digits: Option<Vec<u32>> =
                    bytes[i + 2..i + 6].iter().map(|&b| hex(b)).collect();
                if let Some(d) = digits {
                    let v = d.iter().fold(0u32, |a, x| a * 16 + x);
                    if v < 0x80 {
                        out.push(v as u8);
                        i += 6;
                        continue;
                    }
                }
            }
            // Any other escape (an escaped backslash included) is kept whole.
            out.extend_from_slice(&bytes[i..i + 2]);
            i += 2;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Whether `bytes` hold a `\u00XX` escape of a character that can be part of a blob
/// reference (`blob:sha256:` and hex digits, either case). JSON.stringify never writes such
/// escapes (sessions hold `\u001b` and the like), so the decoding pass below runs only on
/// files made to spell a reference that way: gc keeps the speed of a raw-byte search.
fn may_hold_escaped_reference(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"\\u00").any(|at| {
        let hex = |b: Option<&u8>| b.and_then(|&b| (b as char).to_digit(16));
        match (hex(bytes.get(at + 4)), hex(bytes.get(at + 5))) {
            (Some(h), Some(l)) => {
                let c = (h * 16 + l) as u8;
                c.is_ascii_hexdigit() || b"blosh:BLOSH".contains(&c)
            }
            _ => false,
        }
    })
}

/// Every blob hash `bytes` refers to, in the raw bytes or spelled with JSON escapes.
pub fn referenced_hashes(bytes: &[u8]) -> Vec<String> {
    let mut found = blobref::find_blob_hashes(bytes);
    if may_hold_escaped_reference(bytes) {
        found.extend(blobref::find_blob_hashes(&decode_ascii_escapes(bytes)));
    }
    found
}

fn read_maybe_gz(path: &Path) -> io::Result<Vec<u8>> {
    let bytes = safe_fs::read_regular(path)?;
    if path.extension().is_some_and(|x| x == "gz") {
        let mut out = Vec::new();
        let mut d = flate2::read::MultiGzDecoder::new(&bytes[..]);
        d.read_to_end(&mut out)?;
        return Ok(out);
    }
    Ok(bytes)
}

/// Finds blobs of `store` that no file in `files` refers to and that are older than
/// `min_age` (a writer stores a blob before the line that refers to it, so a fresh blob may
/// belong to a line being written), and removes them unless `dry_run`. Any unreadable file
/// aborts the run before anything is removed: a reference could hide in it.
pub fn gc(
    store: &BlobStore,
    files: &[PathBuf],
    min_age: Duration,
    dry_run: bool,
) -> Result<GcReport, StoreError> {
    let mut report = GcReport {
        files_scanned: files.len(),
        ..Default::default()
    };
    let mut referenced = HashSet::new();
    for f in files {
        match read_maybe_gz(f) {
            Ok(bytes) => referenced.extend(referenced_hashes(&bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).at(f),
        }
    }
    report.referenced = referenced.len();
    let blobs = store.list().at(store.dir())?;
    report.candidates = blobs.len();
    let now = SystemTime::now();
    for b in blobs {
        if referenced.contains(&b.hash)
            || now.duration_since(b.modified).unwrap_or_default() < min_age
        {
            continue;
        }
        report.unreferenced.push(b);
    }
    report.stale_temps = store.stale_temps(min_age);
    if !dry_run {
        let paths: Vec<PathBuf> = report
            .unreferenced
            .iter()
            .flat_map(|b| b.paths.iter().cloned())
            .chain(report.stale_temps.iter().cloned())
            .collect();
        for p in paths {
            match std::fs::remove_file(&p) {
                Ok(()) => report.removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => report.errors.push(format!("{}: {e}", p.display())),
            }
        }
        let _ = sync_dir(store.dir());
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_references_are_decoded() {
        let h = "1".repeat(64);
        let plain = format!("\"blob:sha256:{h}\"");
        assert_eq!(referenced_hashes(plain.as_bytes()), vec![h.clone()]);
        let escaped = format!("\"blob:sha256:\\u0031{}\"", &h[1..]);
        assert!(referenced_hashes(escaped.as_bytes()).contains(&h));
        let all = format!("\"\\u0062lob\\u003asha256:{}\\u0031\"", &h[1..]);
        assert!(referenced_hashes(all.as_bytes()).contains(&h));
        // Escapes no reference is made of do not cost a decoding pass.
        assert!(!may_hold_escaped_reference(b"\"\\u001b[31m\\u0026\""));
        assert!(may_hold_escaped_reference(b"\\u0062"));
        // A literal backslash before "u0031" is not an escape.
        let literal = format!("\"blob:sha256:\\\\u0031{}\"", &h[1..]);
        assert!(referenced_hashes(literal.as_bytes()).is_empty());
    }
}
