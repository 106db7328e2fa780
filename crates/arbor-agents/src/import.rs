//! Writing a read session as a pi (or omp) session in that tool's layout for the session's
//! cwd, through arbor-store's one writer: a new file is created whole (exclusively, under the
//! writer lock, every line in one write); a source imported before is found by its
//! `arbor-import` marker and only the entries it lacks are appended (under the lock). The
//! source is never opened for writing. Subagents become sessions of their own whose header's
//! `parentSession` is the parent's imported file.
use crate::model::{Agent, Report, Session};
use crate::pi::{self, Line, MARKER};
use crate::AgentError;
use arbor_core::{Dialect, SessionDoc};
use arbor_store::backend::files::{FileStore, FileWriter};
use arbor_store::backend::{SessionMeta, SessionStore};
use arbor_store::Durability;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where and how to import.
#[derive(Debug, Clone)]
pub struct Options {
    /// pi's layout (`Dialect::Pi`) or omp's.
    pub dialect: Dialect,
    /// The agent directory (`~/.pi/agent`, `~/.omp/agent`): sessions go to its `sessions/`.
    pub agent_dir: PathBuf,
    /// The cwd for a session that recorded none.
    pub fallback_cwd: String,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new session file.
    Created,
    /// The source was imported before and had grown: this many entries were appended.
    Appended(usize),
    /// The source was imported before and has nothing new.
    UpToDate,
}

/// One imported session (and its subagents').
#[derive(Debug, Clone)]
pub struct Imported {
    /// The agent.
    pub agent: Agent,
    /// The source's session id.
    pub source_id: String,
    /// The source file.
    pub source: PathBuf,
    /// The pi session file written (or found).
    pub file: PathBuf,
    /// What was done.
    pub outcome: Outcome,
    /// Entries in the imported session (the marker and title included).
    pub entries: usize,
    /// Entries imported before whose source has changed since (a reply still being written
    /// then): they are left as they were.
    pub changed: usize,
    /// What the reader skipped.
    pub report: Report,
    /// The subagents' sessions.
    pub children: Vec<Imported>,
}

/// Imports `s` (and its children).
///
/// # Errors
/// The store's: a directory that cannot be made, a session being written by another writer,
/// a full disk. Nothing is left half-written.
pub fn import(s: &Session, opts: &Options) -> Result<Imported, AgentError> {
    import_one(s, opts, None, None)
}

fn import_one(
    s: &Session,
    opts: &Options,
    parent_file: Option<&Path>,
    parent_source: Option<&str>,
) -> Result<Imported, AgentError> {
    let cwd = s.cwd.clone().unwrap_or_else(|| opts.fallback_cwd.clone());
    let conv = pi::to_pi_child(s, opts.dialect, parent_source);
    let dir = arbor_store::paths::default_session_dir(opts.dialect, &opts.agent_dir, &cwd);
    let (file, outcome, changed) = match find_import(&dir, s.agent, &s.id, parent_source) {
        Some(file) => {
            let (n, changed) = append_new(&file, s, &conv)?;
            let outcome = if n == 0 {
                Outcome::UpToDate
            } else {
                Outcome::Appended(n)
            };
            (file, outcome, changed)
        }
        None => {
            // A fork (Codex's `forked_from_id`) hangs under its parent's import, if there is one.
            let fork_parent = match (parent_file, &s.forked_from) {
                (None, Some(f)) => find_import(&dir, s.agent, f, None),
                _ => None,
            };
            let parent = parent_file.or(fork_parent.as_deref());
            (create(opts, &cwd, &conv, parent)?, Outcome::Created, 0)
        }
    };
    let mut children = Vec::new();
    for c in &s.children {
        children.push(import_one(c, opts, Some(&file), Some(&s.id))?);
    }
    Ok(Imported {
        agent: s.agent,
        source_id: s.id.clone(),
        source: s.path.clone(),
        file,
        outcome,
        entries: conv.lines.len(),
        changed,
        report: s.report.clone(),
        children,
    })
}

fn create(
    opts: &Options,
    cwd: &str,
    conv: &pi::PiSession,
    parent_file: Option<&Path>,
) -> Result<PathBuf, AgentError> {
    let id = arbor_store::ids::new_session_id(opts.dialect);
    let created = conv
        .created
        .clone()
        .unwrap_or_else(arbor_store::ids::now_iso);
    let parent = parent_file.map(|p| p.to_string_lossy().into_owned());
    let head = arbor_store::new_session_head(
        opts.dialect,
        &id,
        &created,
        cwd,
        parent.as_deref(),
        conv.title
            .as_deref()
            .filter(|_| opts.dialect == Dialect::Omp),
    );
    let mut lines: Vec<&[u8]> = head
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for l in &conv.lines {
        // A line that does not parse back must never reach the disk.
        arbor_core::entry::parse_fields(&l.bytes).map_err(|e| {
            AgentError::NotFound(format!("entry {} would not parse back: {e}", l.id))
        })?;
        lines.push(&l.bytes);
    }
    let meta = SessionMeta {
        id: id.clone(),
        cwd: cwd.to_string(),
        created: created.clone(),
        parent_session: parent,
        tool: match opts.dialect {
            Dialect::Pi => "pi".into(),
            Dialect::Omp => "omp".into(),
        },
        ..Default::default()
    };
    FileStore::new(&opts.agent_dir).create(&meta, &lines)?;
    let dir = arbor_store::paths::default_session_dir(opts.dialect, &opts.agent_dir, cwd);
    Ok(arbor_store::paths::session_file_name(&dir, &created, &id))
}

/// Appends the entries of `conv` that the file at `path` lacks (and a new title), under the
/// writer lock. Returns how many were appended and how many imported before differ now.
fn append_new(
    path: &Path,
    s: &Session,
    conv: &pi::PiSession,
) -> Result<(usize, usize), AgentError> {
    let mut w = FileWriter::existing(path, None, Durability::Flush)?;
    let real = w.real_path().to_path_buf();
    let mut bytes = Vec::new();
    arbor_store::open_regular(&real)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| AgentError::io(&real, e))?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        return Err(AgentError::NotFound(format!(
            "{}: its last line is incomplete; `arbor check --repair` it before importing again",
            real.display()
        )));
    }
    let doc = SessionDoc::parse(Arc::new(bytes))
        .map_err(|e| AgentError::NotFound(format!("{}: not a session: {e}", real.display())))?;
    let mut new: Vec<&Line> = Vec::new();
    let mut changed = 0;
    let title_ids: Vec<&str> = conv
        .lines
        .last()
        .filter(|_| conv.title.is_some())
        .map(|l| l.id.as_str())
        .into_iter()
        .collect();
    // The marker names where the source was read from: a source moved (or read from opencode's
    // database after its JSON files) is still the same source.
    for l in conv.lines.iter().skip(1) {
        if title_ids.contains(&l.id.as_str()) {
            continue;
        }
        match doc.index().get(&l.id) {
            Some(i) => changed += usize::from(doc.entry_line(i) != l.bytes.as_slice()),
            None => new.push(l),
        }
    }
    let mut out = Vec::new();
    for l in &new {
        out.extend_from_slice(&l.bytes);
        out.push(b'\n');
    }
    let mut n = new.len();
    if let Some(t) = conv.title.as_deref() {
        if doc.session_name().as_deref() != Some(t.trim()) && doc.dialect() == Dialect::Pi {
            let parent = new.last().map(|l| l.id.clone()).or_else(|| {
                doc.entries()
                    .last()
                    .and_then(|e| e.id.as_deref())
                    .map(str::to_string)
            });
            let ts = s.nodes.last().map_or(0, |n| n.timestamp_ms);
            let l = pi::title_line(s, t, parent.as_deref(), ts);
            out.extend_from_slice(&l.bytes);
            out.push(b'\n');
            n += 1;
        }
    }
    if !out.is_empty() {
        w.append_joined(&out)?;
        arbor_store::backend::SessionWriter::flush(&mut w)?;
    }
    Ok((n, changed))
}

/// The session file under `dir` that an earlier import of (`agent`, `id`) wrote: the one
/// whose `arbor-import` marker (its first entry) names that source. Only regular files are
/// looked at (a symlink planted there is not followed), and only their first 64 KB.
pub fn find_import(
    dir: &Path,
    agent: Agent,
    id: &str,
    parent_source: Option<&str>,
) -> Option<PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files.into_iter().find(|p| {
        marker_of(p).is_some_and(|d| {
            d.get("agent").and_then(Value::as_str) == Some(agent.name())
                && d.get("sourceId").and_then(Value::as_str) == Some(id)
                && d.get("sourceParentId").and_then(Value::as_str) == parent_source
        })
    })
}

/// The `data` of a session file's `arbor-import` marker, if it has one (its first entry,
/// after the header and omp's title slot).
pub fn marker_of(path: &Path) -> Option<Value> {
    let head = arbor_store::read_regular_at_most(path, 64 << 10).ok()?;
    head.split(|b| *b == b'\n').take(3).find_map(|l| {
        let v: Value = serde_json::from_slice(l).ok()?;
        (v.get("type")?.as_str()? == "custom" && v.get("customType")?.as_str()? == MARKER)
            .then(|| v.get("data").cloned())
            .flatten()
    })
}
