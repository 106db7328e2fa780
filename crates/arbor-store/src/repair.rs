//! Repairs that never lose a byte: torn tails go to a sidecar before the file is cut.
use crate::error::{IoContext, StoreError};
use crate::file::write_new;
use arbor_core::doc::{BadLine, SessionDoc};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// A sidecar path next to `session`: `<session>.<what>-<file timestamp>`, made unique.
pub fn sidecar_path(session: &Path, what: &str) -> PathBuf {
    let ts = crate::ids::file_timestamp(&crate::ids::now_iso());
    let base = session.as_os_str().to_string_lossy().into_owned();
    let mut p = PathBuf::from(format!("{base}.{what}-{ts}"));
    let mut n = 1;
    while p.exists() {
        p = PathBuf::from(format!("{base}.{what}-{ts}-{n}"));
        n += 1;
    }
    p
}

/// Moves the torn last line of `session` (as found in `doc`) to a sidecar file, fsynced,
/// then cuts the session back to its last complete line. Returns the sidecar's path.
/// The caller holds the writer lock.
pub fn save_torn_tail(
    session: &Path,
    doc: &SessionDoc,
    torn: &BadLine,
) -> Result<PathBuf, StoreError> {
    let data = doc.base_bytes();
    let tail = data.get(torn.offset..).unwrap_or_default();
    let sidecar = sidecar_path(session, "torn");
    write_new(&sidecar, tail).at(&sidecar)?;
    let f = OpenOptions::new().write(true).open(session).at(session)?;
    // Only cut if the file is still what we read (no one appended behind our back).
    let len = f.metadata().at(session)?.len();
    if len == data.len() as u64 {
        f.set_len(torn.offset as u64).at(session)?;
        f.sync_all().at(session)?;
    }
    Ok(sidecar)
}
