//! Errors of the store.
use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An I/O failure on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a session; it was left exactly as it was.
    #[error("{path}: not a session file: {reason} (the file was not modified)")]
    NotASession {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: arbor_core::NotASession,
    },
    /// Another writer holds the session.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    /// The entry body is not acceptable.
    #[error(transparent)]
    Body(#[from] crate::body::BodyError),
    /// An id that is not in the session (pi's message, verbatim).
    #[error("Entry {0} not found")]
    NotFound(String),
    /// An earlier write failed; the session must be reopened before writing again.
    #[error(
        "an earlier write to {path} failed ({reason}); reopen the session before writing again"
    )]
    Latched {
        /// The file.
        path: PathBuf,
        /// The first failure.
        reason: String,
    },
    /// A session id pi 1.5 refuses (`assertValidSessionId`).
    #[error("{0:?}: Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character")]
    SessionId(String),
    /// The session was opened read-only.
    /// pi 1.5 refuses this context edit (its message: not on the active branch, not
    /// editable, a replacement that is neither `null` nor `{content: string | array}`).
    #[error("{0}")]
    ContextEdit(String),
    /// The session was opened read-only.
    #[error("the session was opened read-only")]
    ReadOnly,
    /// A built line did not parse back (a bug, or invalid raw JSON given to the API).
    #[error("invalid entry line: {0}")]
    Line(#[from] arbor_core::entry::LineError),
    /// A blob is missing, corrupt, malformed, or could not be read or written.
    #[error(transparent)]
    Blob(#[from] crate::blobs::BlobError),
    /// A blob reference of a session entry could not be resolved.
    #[error("{}: {source}", place(*.line, .entry_id.as_deref()))]
    BlobRef {
        /// 1-based line of the entry.
        line: usize,
        /// The entry's id.
        entry_id: Option<String>,
        /// What is wrong with the blob.
        source: crate::blobs::BlobError,
    },
    /// A session store refused or failed (see [`crate::backend`]).
    #[error(transparent)]
    Backend(crate::backend::BackendError),
    /// The transform of a fork ([`crate::ForkTransform`], arbor-view's redaction for
    /// `arbor fork --redact`) refused the copy; nothing was written.
    #[error("{0}")]
    Transform(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// omp's title slot could not be made (a title that cannot fit).
    #[error("the title slot: {0}")]
    TitleSlot(#[from] arbor_core::title::TitleSlotError),
}

/// A store's error as the store's callers know it: a file's I/O error, lock refusal or
/// write-path failure stays the error it was ([`StoreError::Io`], [`StoreError::Lock`], ...),
/// whatever else a store says is [`StoreError::Backend`].
impl From<crate::backend::BackendError> for StoreError {
    fn from(e: crate::backend::BackendError) -> StoreError {
        use crate::backend::BackendError as B;
        match e {
            B::Io { path, source, .. } => StoreError::Io { path, source },
            B::Lock { source, .. } => StoreError::Lock(source),
            B::Store { source, .. } => *source,
            e => StoreError::Backend(e),
        }
    }
}

/// "entry ID (line N)", or "line N" for an entry without an id.
fn place(line: usize, entry_id: Option<&str>) -> String {
    match entry_id {
        Some(id) => format!("entry {id} (line {line})"),
        None => format!("line {line}"),
    }
}

/// Attaches a path to an I/O error.
pub trait IoContext<T> {
    /// Maps the error to [`StoreError::Io`] with `path`.
    fn at(self, path: &std::path::Path) -> Result<T, StoreError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &std::path::Path) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}
