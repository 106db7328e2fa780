//! A `session` argument: an id, a unique id prefix or a path, resolved by the CLI's
//! [`arbor_store::locate::Locator::resolve_session`], then refused when the file is not a
//! session file inside the agent directories (or the `--dir` directory) the server serves.
use crate::server::{State, ToolError};
use std::path::{Path, PathBuf};

/// The session file `arg` names, checked to lie in the served directories.
pub(crate) fn session(state: &State, arg: &str) -> Result<PathBuf, ToolError> {
    let arg = arg.trim();
    if arg.is_empty() {
        return Err(ToolError::new(
            "session: empty (give a session id, a unique id prefix, or a session file's path)",
        ));
    }
    if arg.len() > 4096 || arg.contains('\0') {
        return Err(ToolError::new("session: not a session id or path"));
    }
    let p = state
        .loc
        .resolve_session(arg)
        .map_err(|e| ToolError::new(format!("session: {e}")))?;
    inside(state, &p).map_err(|why| ToolError::new(format!("{why} (session '{arg}')")))
}

/// `p` as the real file it names, when that lies below a served root and is a `.jsonl`
/// regular file; else why not.
pub(crate) fn inside(state: &State, p: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(p).map_err(|e| format!("cannot be read: {e}"))?;
    if !roots(state).iter().any(|r| real.starts_with(r)) {
        return Err("outside the agent directories this server serves".into());
    }
    if real.extension().is_none_or(|x| x != "jsonl") {
        return Err("not a session file (*.jsonl)".into());
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    Ok(real)
}

/// The directories whose sessions the server serves, as real paths: the `--dir` directory,
/// else the sessions roots of the agent directories.
pub(crate) fn roots(state: &State) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = match &state.opts.dir {
        Some(d) => vec![d.clone()],
        None => state
            .loc
            .agent_dirs()
            .iter()
            .map(|a| arbor_store::paths::sessions_root(a))
            .collect(),
    };
    dirs.iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect()
}
