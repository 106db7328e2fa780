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
/// regular file; else why not ([`arbor_store::locate::served_session_file`]).
pub(crate) fn inside(state: &State, p: &Path) -> Result<PathBuf, String> {
    arbor_store::locate::served_session_file(&roots(state), p)
}

/// The directories whose sessions the server serves, as real paths: the `--dir` directory,
/// else the sessions roots of the agent directories ([`arbor_store::locate::Locator::served_roots`]).
pub(crate) fn roots(state: &State) -> Vec<PathBuf> {
    state.loc.served_roots(state.opts.dir.as_deref())
}

/// Another agent's session (Claude Code, Codex, opencode) that `arg` names among those the
/// server serves (`tools::foreign_rows`: its scope; their roots are served for reading only):
/// its id, an id prefix of 6 characters or more, or its source file's path
/// (`arbor_agents::open::names`, the CLI's rule).
pub(crate) fn foreign_row(
    state: &State,
    work: &crate::server::Work,
    arg: &str,
) -> Result<Option<arbor_index::ForeignRow>, ToolError> {
    let arg = arg.trim();
    if arg.len() > 4096 || arg.contains('\0') {
        return Ok(None);
    }
    Ok(crate::tools::foreign_rows(state, work, None, None)?
        .into_iter()
        .find(|r| arbor_agents::open::names(arg, r.agent, &r.summary.id, &r.source)))
}

/// Another agent's session read in memory ([`open_foreign`]).
pub(crate) struct Foreign {
    /// The file it was read from (a subagent's own file; opencode: what its reader names).
    pub path: PathBuf,
    /// The session as the pi entries `arbor import` would write.
    pub doc: arbor_core::SessionDoc,
    /// Its row in the catalog (agent, title, last activity, spends).
    pub row: arbor_index::ForeignRow,
}

/// The session `arg` names when it is another agent's ([`foreign_row`]), read in memory as
/// `arbor import` would make it (`arbor_agents::open_as_doc`: nothing written); `None` when
/// `arg` names none.
pub(crate) fn open_foreign(
    state: &State,
    work: &crate::server::Work,
    arg: &str,
) -> Result<Option<Foreign>, ToolError> {
    let Some(row) = foreign_row(state, work, arg)? else {
        return Ok(None);
    };
    work.check()?;
    let source = arbor_agents::open::source_of(row.agent, &row.source, &row.summary.id);
    let o = arbor_agents::open_as_doc(&source, Some(&row.summary.id))
        .map_err(|e| ToolError::new(format!("session '{}': {e}", arg.trim())))?;
    Ok(Some(Foreign {
        path: o.session.path,
        doc: o.doc,
        row,
    }))
}

/// What a write tool says of another agent's session: arbor only reads it; `arbor import`
/// makes a pi session of it to write to.
pub(crate) fn foreign_write_refusal(r: &arbor_index::ForeignRow) -> ToolError {
    ToolError::new(format!(
        "session '{}' is {}'s, another agent's: arbor only reads it and never writes into it. To write to it, import it as a pi session first: {} (then give this tool the file it writes)",
        r.summary.id,
        r.agent,
        r.import_command()
    ))
}
