//! What can go wrong, as a library error and as an HTTP answer.
use axum::response::{IntoResponse, Response};
use http::StatusCode;

/// Why the server could not start or a request could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A flag combination or file that must not run (a non-loopback address without
    /// `--allow-remote`, a token file others may read, ...).
    #[error("{0}")]
    Refused(String),
    /// The catalog could not be opened or read.
    #[error(transparent)]
    Index(#[from] arbor_index::IndexError),
    /// A session that is not there (404).
    #[error("no such session: {0}")]
    NotFound(String),
    /// An address the app has no page at (404).
    #[error("no page at {0}")]
    NoPage(String),
    /// A request the server will not answer as asked (400).
    #[error("{0}")]
    BadRequest(String),
    /// A write refused (403): writes are off, or the CSRF token is missing or wrong.
    #[error("{0}")]
    Forbidden(String),
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Anything else the libraries reported.
    #[error("{0}")]
    Other(String),
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let status = match &self {
            ServeError::NotFound(_) | ServeError::NoPage(_) => StatusCode::NOT_FOUND,
            ServeError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ServeError::Forbidden(_) | ServeError::Refused(_) => StatusCode::FORBIDDEN,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let body = crate::layout::simple(
            &status.to_string(),
            crate::layout::Nav::None,
            &format!(
                "<main class=\"error\"><h1>{}</h1><p>{}</p><p><a href=\"/\">All sessions</a></p></main>",
                crate::layout::esc(&status.to_string()),
                crate::layout::esc(&self.to_string())
            ),
        );
        (status, body).into_response()
    }
}
