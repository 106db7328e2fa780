//! The tools, one file per group. Each file holds its argument and answer types (serde +
//! JsonSchema, every field documented: the descriptions are what a model reads) and a
//! `#[tool_router]` block; `server.rs` adds the routers together.
//!
//! A tool's work runs on the blocking pool ([`crate::ArborServer`]'s `blocking`), answers
//! through `answer` (redacted, bounded) and fails with a tool error (`isError: true`)
//! naming the problem, never a protocol error.
pub(crate) mod calls;
pub(crate) mod context;
pub(crate) mod list;
pub(crate) mod messages;
pub(crate) mod search;
pub(crate) mod session;
pub(crate) mod tree;
pub(crate) mod usage;
pub(crate) mod write;

use crate::server::{State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which agent wrote a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Agent {
    /// pi (`pi`, `~/.pi/agent`).
    Pi,
    /// oh-my-pi (`omp`, `~/.omp/agent`).
    Omp,
    /// Claude Code (`~/.claude/projects`; read-only).
    Claude,
    /// Codex CLI (`~/.codex/sessions`; read-only).
    Codex,
    /// opencode (`~/.local/share/opencode`; read-only).
    Opencode,
}

impl Agent {
    /// Its name, as `ls`'s TOOL column and the `agent` argument say it.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Pi => "pi",
            Agent::Omp => "omp",
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
        }
    }

    /// The other agent this is, when it is not pi or omp.
    pub fn foreign(self) -> Option<arbor_agents::Agent> {
        match self {
            Agent::Claude => Some(arbor_agents::Agent::Claude),
            Agent::Codex => Some(arbor_agents::Agent::Codex),
            Agent::Opencode => Some(arbor_agents::Agent::Opencode),
            Agent::Pi | Agent::Omp => None,
        }
    }

    /// The agent of another agent's session.
    pub fn of_foreign(a: arbor_agents::Agent) -> Agent {
        match a {
            arbor_agents::Agent::Claude => Agent::Claude,
            arbor_agents::Agent::Codex => Agent::Codex,
            arbor_agents::Agent::Opencode => Agent::Opencode,
        }
    }

    /// The agent of a listed session, by the rules of `ls`'s TOOL column.
    pub fn of(l: &arbor_index::Listed) -> Agent {
        let in_omp_dir = l.file.parent().is_some_and(arbor_store::locate::is_omp_dir);
        if l.shown_as_omp(in_omp_dir) {
            Agent::Omp
        } else {
            Agent::Pi
        }
    }
}

/// A `since`/`until` argument as ms since the epoch: a date (2025-01-31), a date-time, or a
/// span back from now (30m, 12h, 7d, 2w), read as the CLI's `--since`.
pub(crate) fn time_arg(name: &str, v: Option<&str>) -> Result<Option<f64>, ToolError> {
    match v.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => arbor_core::time::since(s)
            .map(|t| Some(t.at(arbor_store::ids::now_ms() as f64)))
            .map_err(|e| ToolError::new(format!("{name}: {e}"))),
    }
}

/// The session directories a question covers: the server's scope, or the directories of
/// one project (`project`: its working directory) within it.
pub(crate) fn dirs(state: &State, project: Option<&str>) -> Result<Vec<PathBuf>, ToolError> {
    let all = state
        .loc
        .project_dirs(state.opts.scope())
        .map_err(|e| ToolError::new(format!("session directories: {e}")))?;
    match project.map(str::trim).filter(|p| !p.is_empty()) {
        None => Ok(all),
        Some(p) => {
            let mine = state.loc.project_dirs_for_cwd(p.trim_end_matches('/'));
            Ok(all.into_iter().filter(|d| mine.contains(d)).collect())
        }
    }
}

/// Other agents' sessions (Claude Code, Codex, opencode) the server serves, refreshed (only
/// changed sources are read, never written): every one under `--all`, the current
/// directory's under the default scope, none under `--dir` (a directory of pi's or omp's);
/// only `project`'s (its working directory) and `agent`'s when given.
pub(crate) fn foreign_rows(
    state: &State,
    work: &crate::server::Work,
    project: Option<&str>,
    agent: Option<Agent>,
) -> Result<Vec<arbor_index::ForeignRow>, ToolError> {
    let only = match agent {
        Some(a) => match a.foreign() {
            Some(f) => Some(f),
            None => return Ok(Vec::new()),
        },
        None => None,
    };
    let mut cat = state
        .catalog
        .lock()
        .map_err(|_| ToolError::new("the catalog is unusable (a call failed while using it)"))?;
    work.check()?;
    Ok(cat.foreign_in_scope(state.opts.scope(), only, project)?)
}

/// ISO 8601 of a time in ms (`None` for an invalid one).
pub(crate) fn iso(ms: f64) -> Option<String> {
    arbor_core::js::valid_time(ms).map(|v| arbor_core::time::format_iso_ms(v as i64))
}

/// Token and cost totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Tokens {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens read from the provider's cache.
    pub cache_read: f64,
    /// Tokens written to the provider's cache.
    pub cache_write: f64,
    /// Cost in dollars, as the agent recorded it.
    pub cost: f64,
}

impl From<&arbor_store::usage::Tokens> for Tokens {
    fn from(t: &arbor_store::usage::Tokens) -> Self {
        Tokens {
            input: t.input,
            output: t.output,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            cost: t.cost,
        }
    }
}
