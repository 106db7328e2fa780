//! Reading another agent's session as pi would see it after `arbor import`, in memory: the
//! source read by its reader, turned into pi entries by the import's own conversion
//! ([`crate::pi::to_pi_child`], the entries [`crate::import`] writes) behind a pi v3 header
//! from arbor-store's one header writer, and parsed as any pi session. Nothing is written;
//! the source is only read.
use crate::model::{Report, Session};
use crate::sources::Source;
use crate::{pi, AgentError};
use arbor_core::{Dialect, SessionDoc};
use std::sync::Arc;

/// A foreign session opened in memory.
#[derive(Debug)]
pub struct Opened {
    /// The session as pi entries (the header's `id` is the source's session id).
    pub doc: SessionDoc,
    /// The session read (for a subagent: the subagent's own session).
    pub session: Session,
    /// What the reader skipped (bad lines with their numbers, unknown and skipped records).
    pub report: Report,
}

/// Finds `id` among `s` and its subagents (depth first), with the id of its parent.
fn find<'a>(
    s: &'a Session,
    id: &str,
    parent: Option<&'a str>,
) -> Option<(&'a Session, Option<&'a str>)> {
    if s.id == id {
        return Some((s, parent));
    }
    s.children.iter().find_map(|c| find(c, id, Some(&s.id)))
}

/// Opens `source` as an in-memory pi session; `id`: one of its sessions (a subagent's id:
/// that subagent's child session, as the import makes it), else the source's own.
///
/// # Errors
/// The source cannot be read at all; `id` is not one of its sessions; the conversion gave a
/// line that does not parse back (never expected: a bug, said rather than shown).
pub fn open_as_doc(source: &Source, id: Option<&str>) -> Result<Opened, AgentError> {
    let (root, id) = match source {
        // An opencode subagent is read with its parent, as the import reads it (its marker
        // names the parent).
        Source::Opencode(dir, sid) => {
            let store = crate::opencode::Store::load(dir)?;
            let parent_of = |id: &str| {
                store
                    .sessions
                    .iter()
                    .find(|r| r.id == id)
                    .and_then(|r| r.parent_id.clone())
                    .filter(|p| store.sessions.iter().any(|r| r.id == *p))
            };
            let mut top = sid.clone();
            // At most as many steps as there are sessions: a cycle of parents stops.
            for _ in 0..store.sessions.len() {
                match parent_of(&top) {
                    Some(p) if p != *sid => top = p,
                    _ => break,
                }
            }
            (store.read(&top)?, Some(id.unwrap_or(sid)))
        }
        Source::File(..) => (source.read()?, id),
    };
    let (s, parent) = match id {
        Some(id) => find(&root, id, None).ok_or_else(|| {
            AgentError::NotFound(format!("{}: no session {id} in it", source.describe()))
        })?,
        None => (&root, None),
    };
    let bytes = to_bytes(s, parent)?;
    let doc = SessionDoc::parse(Arc::new(bytes)).map_err(|e| {
        AgentError::NotFound(format!(
            "{}: its conversion is not a session: {e}",
            source.describe()
        ))
    })?;
    Ok(Opened {
        doc,
        report: s.report.clone(),
        session: s.clone(),
    })
}

/// `s` as the bytes of a pi v3 session file: the header, then [`pi::to_pi_child`]'s lines.
fn to_bytes(s: &Session, parent_source: Option<&str>) -> Result<Vec<u8>, AgentError> {
    let conv = pi::to_pi_child(s, Dialect::Pi, parent_source);
    let created = conv
        .created
        .clone()
        .unwrap_or_else(|| arbor_core::time::format_iso_ms(0));
    let mut out = arbor_store::new_session_head(
        Dialect::Pi,
        &s.id,
        &created,
        s.cwd.as_deref().unwrap_or_default(),
        None,
        None,
    );
    for l in &conv.lines {
        arbor_core::entry::parse_fields(&l.bytes).map_err(|e| {
            AgentError::NotFound(format!("entry {} would not parse back: {e}", l.id))
        })?;
        out.extend_from_slice(&l.bytes);
        out.push(b'\n');
    }
    Ok(out)
}

/// Whether a command's `arg` names the listed session `id` of `agent` read from `source`
/// (a file; opencode: its data directory): its id, an id prefix of 6 characters or more, or
/// (Claude Code, Codex) the source file's path. The one rule the CLI and `arbor mcp` use to
/// find another agent's session from what the user gave; a source lists its own session
/// before its subagents', so the first listed match of a path is the file's own session.
pub fn names(arg: &str, agent: crate::Agent, id: &str, source: &std::path::Path) -> bool {
    if arg.is_empty() || arg.starts_with('-') {
        return false;
    }
    id == arg
        || (arg.len() >= 6 && id.starts_with(arg))
        || (agent != crate::Agent::Opencode
            && std::fs::canonicalize(arg)
                .ok()
                .is_some_and(|real| std::fs::canonicalize(source).ok() == Some(real)))
}

/// The source to read for the listed session `id` of `agent` read from `source` (a file;
/// opencode: its data directory); [`open_as_doc`] of it with `Some(id)` gives that session.
pub fn source_of(agent: crate::Agent, source: &std::path::Path, id: &str) -> Source {
    match agent {
        crate::Agent::Opencode => Source::Opencode(source.to_path_buf(), id.to_string()),
        a => Source::File(a, source.to_path_buf()),
    }
}
