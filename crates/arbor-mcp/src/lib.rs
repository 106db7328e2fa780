//! `arbor mcp`: a Model Context Protocol server over the session store.
//!
//! The server answers an agent's questions about past pi / omp sessions: full-text search
//! over the catalog, the listing, one session's overview, costs, the messages and context
//! of a session, its tree, tool calls and file edits; each session is also a resource
//! (`arbor://session/ID`, its readable Markdown). It is built on the official Rust SDK,
//! `rmcp`, and speaks over stdio ([`serve_stdio`]) or streamable HTTP ([`serve_http`]).
//!
//! No daemon: the server opens the same catalog as `arbor ls` and `arbor search` and keeps it
//! fresh the same way before it answers. Everything served is redacted by the one secret
//! scanner ([`redact`]) unless [`Options::redact`] is off, and bounded ([`bound`]).
//!
//! ```no_run
//! # fn main() -> Result<(), arbor_mcp::McpError> {
//! let opts = arbor_mcp::Options::default();
//! // Reads JSON-RPC lines on stdin, answers on stdout, until the client closes stdin.
//! arbor_mcp::serve_stdio(opts)?;
//! # Ok(()) }
//! ```
pub mod bound;
mod fresh;
pub mod http;
pub mod redact;
mod resolve;
mod resources;
mod server;
mod tools;

use std::path::PathBuf;

pub use server::ArborServer;

/// How the server was started: what it reads, what it may write, what it serves.
#[derive(Debug, Clone)]
pub struct Options {
    /// The agent directory (`--agent-dir`; `None`: the environment's and pi's/omp's defaults).
    pub agent_dir: Option<PathBuf>,
    /// `--dir`: serve only the sessions of this session directory.
    pub dir: Option<PathBuf>,
    /// `--all`: every project's sessions (`false` with no `dir`: the current directory's
    /// project, as every command of the CLI).
    pub all: bool,
    /// The catalog file (`None`: `$ARBOR_CATALOG`, else the XDG cache, as the CLI).
    pub catalog: Option<PathBuf>,
    /// Whether the write tools (`label_entry`, `name_session`, `fork_session`) are offered.
    pub allow_writes: bool,
    /// Whether everything served is redacted (on unless `--no-redact`).
    pub redact: bool,
    /// Whether the server keeps the catalog fresh with a watcher of its own while it runs
    /// (`arbor_index::watch`, what `arbor index --watch` runs; on unless `--no-watch`, and
    /// only when no other watcher serves the catalog): answers then skip looking at every
    /// file.
    pub watch: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            agent_dir: None,
            dir: None,
            all: false,
            catalog: None,
            allow_writes: false,
            redact: true,
            watch: true,
        }
    }
}

impl Options {
    /// The locator of these options (agent directory and scope), as the CLI builds it.
    pub fn locator(&self) -> arbor_store::locate::Locator {
        arbor_store::locate::Locator::new(self.agent_dir.clone()).scoped(self.dir.clone(), self.all)
    }

    /// The scope of these options.
    pub fn scope(&self) -> arbor_store::locate::Scope<'_> {
        arbor_store::locate::Scope::of(self.dir.as_deref(), self.all)
    }
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The catalog could not be opened.
    #[error("catalog: {0}")]
    Catalog(#[from] arbor_index::IndexError),
    /// Input/output (the transport, the listener).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The MCP session could not start (initialize failed).
    #[error("MCP: {0}")]
    Protocol(String),
    /// The HTTP options were refused (a non-loopback address without `--allow-remote`, a
    /// token file others can read...).
    #[error("{0}")]
    Refused(String),
}

/// The runtime of the server: two workers (the machine has few cores; blocking catalog work
/// runs on tokio's blocking pool).
fn runtime() -> Result<tokio::runtime::Runtime, McpError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Serves MCP over stdin/stdout until the client closes stdin (or the process is told to
/// stop). Stdout carries only protocol; diagnostics go to stderr.
pub fn serve_stdio(opts: Options) -> Result<(), McpError> {
    runtime()?.block_on(async move {
        use rmcp::ServiceExt;
        let server = ArborServer::new(opts)?;
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Protocol(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Protocol(e.to_string()))?;
        Ok(())
    })
}

/// Serves MCP over streamable HTTP at `http.addr` (see [`http::HttpOptions`]) until `stop`
/// resolves (the CLI's: Ctrl-C or SIGTERM).
pub fn serve_http(
    opts: Options,
    http: http::HttpOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), McpError> {
    let checked = http.check()?;
    runtime()?.block_on(http::serve(opts, checked, stop))
}
