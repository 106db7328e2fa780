//! arbor-agents: other agents' sessions.
//!
//! Readers for Claude Code ([`claude`]), Codex ([`codex`]) and opencode ([`opencode`], its
//! SQLite database and the JSON files before it) into one model ([`model::Session`]: a tree
//! of nodes, subagents as child sessions, what was skipped in a [`model::Report`]), and from
//! it a pi v3 session ([`pi`]) written into pi's (or omp's) layout for the session's cwd by
//! [`import`], through arbor-store's one writer.
//!
//! The readers are lenient as arbor's own reader: a line that is not JSON, a record without
//! what it needs, a record type not known yet are reported with their line and skipped,
//! never fatal. The sources are only ever read: nothing here opens another agent's file for
//! writing.
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! let src = dir.path().join("s.jsonl");
//! std::fs::write(&src, concat!(
//!     r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#, "\n",
//!     "not json\n",
//!     r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":3,"output_tokens":1}}}"#, "\n",
//! ));
//! let s = arbor_agents::claude::read(&src)?;
//! assert_eq!(s.report.bad_lines.len(), 1); // line 2, reported and skipped
//! let pi = arbor_agents::pi::to_pi(&s, arbor_core::Dialect::Pi);
//! assert!(pi.lines.iter().any(|l| String::from_utf8_lossy(&l.bytes).contains("hello")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod claude;
pub mod codex;
pub mod import;
mod jsonl;
pub mod listing;
pub mod model;
pub mod open;
pub mod opencode;
pub mod pi;
pub mod sources;

pub use model::{Agent, Report, Session};
pub use open::{open_as_doc, Opened};

use std::path::{Path, PathBuf};

/// Why an import or a read failed (a bad line never does: it is in the [`Report`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// opencode's database could not be read.
    #[error("{}: {message}", path.display())]
    Database {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        message: String,
    },
    /// No such session.
    #[error("{0}")]
    NotFound(String),
    /// The store refused to write.
    #[error(transparent)]
    Store(#[from] arbor_store::StoreError),
    /// The store refused to write (its backend).
    #[error(transparent)]
    Backend(#[from] arbor_store::backend::BackendError),
}

impl AgentError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> AgentError {
        AgentError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads one session of `agent` at `path` (a file; for opencode a session id with
/// [`opencode::Store::read`]).
///
/// # Errors
/// When the file cannot be read at all.
pub fn read(agent: Agent, path: &Path) -> Result<Session, AgentError> {
    match agent {
        Agent::Claude => claude::read(path),
        Agent::Codex => codex::read(path),
        Agent::Opencode => Err(AgentError::NotFound(format!(
            "{}: opencode sessions are read by id from its data directory",
            path.display()
        ))),
    }
}
