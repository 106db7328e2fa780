//! Streamable HTTP: loopback only unless `--allow-remote`, which needs a bearer token from a
//! file; the token is compared in constant time.
use crate::{McpError, Options};
use std::net::SocketAddr;
use std::path::PathBuf;

/// How `arbor mcp --http` was asked to listen.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `--http ADDR`.
    pub addr: SocketAddr,
    /// `--allow-remote`: listen on a non-loopback address (needs `token_file`).
    pub allow_remote: bool,
    /// `--token-file F`: every request must carry `Authorization: Bearer TOKEN`.
    pub token_file: Option<PathBuf>,
}

/// HTTP options checked: the token read.
#[derive(Debug)]
pub struct Checked {
    addr: SocketAddr,
    token: Option<Vec<u8>>,
}

impl HttpOptions {
    /// Refuses what must not run: a non-loopback address without `--allow-remote` and a
    /// token.
    pub fn check(&self) -> Result<Checked, McpError> {
        Err(McpError::Refused("--http: not yet".into()))
    }
}

/// Serves until interrupted.
pub(crate) async fn serve(_opts: Options, _c: Checked) -> Result<(), McpError> {
    Err(McpError::Refused("--http: not yet".into()))
}
