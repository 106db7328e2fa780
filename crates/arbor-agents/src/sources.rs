//! Finding other agents' sessions: where each agent keeps them, one named on a command line
//! (a path, an id or an id's unique prefix), every one of them (optionally of one project).
use crate::model::{Agent, Session};
use crate::{claude, codex, opencode, AgentError};
use std::path::{Path, PathBuf};

/// One session to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A Claude Code or Codex session file.
    File(Agent, PathBuf),
    /// An opencode session: its data directory and id.
    Opencode(PathBuf, String),
}

impl Source {
    /// Reads it.
    ///
    /// # Errors
    /// When it cannot be read at all (bad lines are in the session's report).
    pub fn read(&self) -> Result<Session, AgentError> {
        match self {
            Source::File(a, p) => crate::read(*a, p),
            Source::Opencode(dir, id) => opencode::Store::load(dir)?.read(id),
        }
    }

    /// What to call it in a message.
    pub fn describe(&self) -> String {
        match self {
            Source::File(_, p) => p.display().to_string(),
            Source::Opencode(dir, id) => format!("{} ({id})", dir.display()),
        }
    }
}

/// Where `agent` keeps its sessions by default: Claude's `projects/`, Codex's home,
/// opencode's data directory.
pub fn default_root(agent: Agent) -> PathBuf {
    match agent {
        Agent::Claude => claude::projects_dir(),
        Agent::Codex => codex::home(),
        Agent::Opencode => opencode::data_dir(),
    }
}

/// Every session of `agent` under `root` (subagents come with their parent, not on their own).
///
/// # Errors
/// opencode's data that cannot be read.
pub fn all(agent: Agent, root: &Path) -> Result<Vec<Source>, AgentError> {
    Ok(match agent {
        Agent::Claude => claude::session_files(root)
            .into_iter()
            .map(|p| Source::File(agent, p))
            .collect(),
        Agent::Codex => codex::session_files(root)
            .into_iter()
            .map(|p| Source::File(agent, p))
            .collect(),
        Agent::Opencode => {
            if !root.exists() {
                return Ok(Vec::new());
            }
            let store = opencode::Store::load(root)?;
            store
                .sessions
                .iter()
                .filter(|r| r.parent_id.is_none())
                .map(|r| Source::Opencode(root.to_path_buf(), r.id.clone()))
                .collect()
        }
    })
}

/// The session `arg` names: an existing file (Claude, Codex), else an id or an id's unique
/// prefix among the agent's sessions under `root`.
///
/// # Errors
/// [`AgentError::NotFound`] when none or several match.
pub fn resolve(agent: Agent, root: &Path, arg: &str) -> Result<Source, AgentError> {
    let p = Path::new(arg);
    if agent != Agent::Opencode && p.is_file() {
        return Ok(Source::File(agent, p.to_path_buf()));
    }
    let candidates = all(agent, root)?;
    // Each candidate's id as its file names it (Claude: `<id>.jsonl`; Codex:
    // `rollout-<time>-<id>.jsonl`); an exact id first, else a unique prefix of one.
    let key = |s: &Source| match s {
        Source::File(Agent::Codex, p) => codex::rollout_id(p),
        Source::File(_, p) => p
            .file_stem()
            .map(|x| x.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Source::Opencode(_, id) => id.clone(),
    };
    let exact: Vec<&Source> = candidates.iter().filter(|s| key(s) == arg).collect();
    let found: Vec<&Source> = if exact.is_empty() {
        candidates
            .iter()
            .filter(|s| !arg.is_empty() && key(s).starts_with(arg))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(AgentError::NotFound(format!(
            "no {agent} session {arg} (not a file, and no session under {} has that id)",
            root.display()
        ))),
        many => Err(AgentError::NotFound(format!(
            "{arg} matches {} {agent} sessions: {}",
            many.len(),
            many.iter()
                .take(5)
                .map(|s| key(s))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
