//! `arbor fork --redact`: the store's one fork ([`SessionManager::fork_transformed`]) with the
//! redaction as its transform, applied to the loaded source before a byte of the copy is
//! written: no unredacted copy ever exists.
use crate::secrets;
use arbor_core::SessionDoc;
use arbor_store::{ForkTransform, ManagerOptions, SessionManager, StoreError};
use std::path::Path;

/// A line the redaction of a fork could not redact (the fork wrote nothing).
#[derive(Debug, thiserror::Error)]
#[error("redaction: {0}")]
struct ForkRedaction(#[source] secrets::RedactError);

/// Every secret [`secrets::scan_doc`] reports, replaced by `[REDACTED:kind]`
/// ([`secrets::redact_doc`]: omp's title slot, the header, the entries).
struct Redactor;

impl ForkTransform for Redactor {
    fn doc(&self, doc: &mut SessionDoc) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
        secrets::redact_doc(doc, None).map_err(|e| ForkRedaction(e).into())
    }

    fn text(&self, text: &str) -> String {
        secrets::redact(text).into_owned()
    }
}

/// `arbor fork --redact`: [`SessionManager::fork`] of `source` (every entry, or with `at` the
/// path to that entry) with every secret the scanner reports replaced by `[REDACTED:kind]`
/// before a byte is written. Returns the new session and how many secrets.
///
/// # Errors
/// As [`SessionManager::fork`]; [`StoreError::Transform`] when a line cannot be redacted
/// (nothing is written).
pub fn fork_redacted(
    source: &Path,
    at: Option<&str>,
    target_cwd: Option<&str>,
    opts: ManagerOptions,
) -> Result<(SessionManager, usize), StoreError> {
    SessionManager::fork_transformed(source, at, target_cwd, opts, &Redactor)
}
