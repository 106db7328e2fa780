//! Errors of the catalog and the history database.
use std::path::PathBuf;

/// What went wrong in the catalog or in `history.db`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// An SQLite error.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database file is damaged (SQLite reports `SQLITE_CORRUPT` or `SQLITE_NOTADB`).
    #[error("{path}: the database is damaged: {detail}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// A file-system error.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The catalog path names a file that is not arbor's catalog; it was left untouched.
    #[error("{path}: not an arbor catalog: {reason}; arbor leaves it untouched (choose another catalog path)")]
    NotACatalog {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// A search query that is empty or cannot be read.
    #[error("invalid query: {0}")]
    Query(String),
    /// A worker thread died (a bug).
    #[error("an indexing thread failed: {0}")]
    Worker(String),
}

/// Whether an SQLite error means the file is damaged.
pub(crate) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// Attaches a database path to SQLite results, classifying corruption.
pub(crate) trait SqlContext<T> {
    fn db(self, path: &std::path::Path) -> Result<T, IndexError>;
}

impl<T> SqlContext<T> for Result<T, rusqlite::Error> {
    fn db(self, path: &std::path::Path) -> Result<T, IndexError> {
        self.map_err(|e| {
            if is_corruption(&e) {
                IndexError::Corrupt {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                }
            } else {
                IndexError::Sqlite {
                    path: path.to_path_buf(),
                    source: e,
                }
            }
        })
    }
}

/// Attaches a path to I/O results.
pub(crate) trait IoContext<T> {
    fn at(self, path: &std::path::Path) -> Result<T, IndexError>;
}

impl<T> IoContext<T> for Result<T, std::io::Error> {
    fn at(self, path: &std::path::Path) -> Result<T, IndexError> {
        self.map_err(|source| IndexError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}
