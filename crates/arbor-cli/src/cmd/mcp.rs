//! `arbor mcp`: the flags, handed to `arbor_mcp` (the server lives in its own crate).
use anyhow::Result;
use arbor_store::locate::Locator;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `arbor mcp`.
pub struct McpOpts {
    /// `--dir` / `--all`.
    pub scope: crate::cli::ScopeOpts,
    /// `--http ADDR`.
    pub http: Option<std::net::SocketAddr>,
    /// `--allow-remote`.
    pub allow_remote: bool,
    /// `--token-file F`.
    pub token_file: Option<PathBuf>,
    /// `--allow-writes`.
    pub allow_writes: bool,
    /// `--no-redact`.
    pub no_redact: bool,
    /// `--no-watch`.
    pub no_watch: bool,
    /// `--catalog`.
    pub catalog: Option<PathBuf>,
}

/// `arbor mcp`.
pub fn mcp(o: &McpOpts, loc: &Locator) -> Result<ExitCode> {
    crate::progress::turn_off();
    let opts = arbor_mcp::Options {
        agent_dir: loc.agent_override().map(PathBuf::from),
        dir: o.scope.dir.clone(),
        all: o.scope.all,
        catalog: o.catalog.clone(),
        allow_writes: o.allow_writes,
        redact: !o.no_redact,
        watch: !o.no_watch,
    };
    match o.http {
        None => arbor_mcp::serve_stdio(opts)?,
        Some(addr) => arbor_mcp::serve_http(
            opts,
            arbor_mcp::http::HttpOptions {
                addr,
                allow_remote: o.allow_remote,
                token_file: o.token_file.clone(),
            },
            crate::stop::signalled(),
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
