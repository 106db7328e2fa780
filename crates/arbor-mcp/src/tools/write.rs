//! The write tools, offered only with `--allow-writes`: `label_entry`, `name_session`,
//! `fork_session`. They write through [`arbor_store::SessionManager`], the CLI's writers and
//! locks (`arbor name`, `arbor fork`, the browser's label): an entry is appended as one
//! line by one write, a fork that fails leaves nothing behind (no copy, no lock), and a
//! call whose client goes away runs to its end on the blocking pool (never stopped
//! half-way through a write). Without `--allow-writes` they are
//! not listed, and calling one is a tool error ([`refused`]).
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_store::{ManagerOptions, SessionManager};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The write tools' names.
pub(crate) const WRITE_TOOLS: &[&str] = &["label_entry", "name_session", "fork_session"];

/// The longest label or name accepted, in characters.
const MAX_TEXT: usize = 1000;

/// The tool error of a write tool called on a server without `--allow-writes`.
pub(crate) fn refused(tool: &str) -> ToolError {
    ToolError::new(format!(
        "{tool}: this server does not write (start it with `arbor mcp --allow-writes` to offer label_entry, name_session and fork_session)"
    ))
}

/// The writer's options: the CLI's defaults, omp blobs in the agent directory's store when
/// the server was given one (as `arbor append`).
fn options(state: &State) -> ManagerOptions {
    ManagerOptions::default().with_blob_dir(state.loc.agent_override().map(|a| a.join("blobs")))
}

/// The session file a write tool names, checked as the readers check it.
fn target(state: &State, work: &Work, session: &str) -> Result<PathBuf, ToolError> {
    if !state.opts.allow_writes {
        return Err(refused("write"));
    }
    let path = match crate::resolve::session(state, session) {
        Ok(p) => p,
        Err(e) => {
            return Err(match crate::resolve::foreign_row(state, work, session)? {
                Some(r) => crate::resolve::foreign_write_refusal(&r),
                None => e,
            })
        }
    };
    work.check()?;
    Ok(path)
}

/// A text argument: at most [`MAX_TEXT`] characters.
fn text_arg<'a>(what: &str, s: &'a str) -> Result<&'a str, ToolError> {
    if s.chars().count() > MAX_TEXT {
        return Err(ToolError::new(format!(
            "{what}: longer than {MAX_TEXT} characters"
        )));
    }
    Ok(s)
}

fn shown(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Arguments of `label_entry`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LabelArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// The entry to label (an id from get_tree, get_messages or search_sessions).
    pub entry_id: String,
    /// The label (at most 1000 characters). Absent or empty: the entry's label is cleared.
    #[serde(default)]
    pub label: Option<String>,
}

/// The answer of `label_entry`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LabelAnswer {
    /// The session file.
    pub path: String,
    /// The labelled entry.
    pub entry_id: String,
    /// The label now (absent: cleared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The id of the `label` entry written (pi's label change).
    pub label_entry_id: String,
}

fn label(state: &State, work: &Work, a: &LabelArgs) -> Result<LabelAnswer, ToolError> {
    let path = target(state, work, &a.session)?;
    let label = a
        .label
        .as_deref()
        .map(|l| text_arg("label", l))
        .transpose()?
        .filter(|l| !l.is_empty());
    let mut sm = SessionManager::open(&path, options(state))?;
    if sm.doc().index().get(&a.entry_id).is_none() {
        let _ = sm.close();
        return Err(ToolError::new(format!(
            "entry_id: no entry with id {:?} in {}",
            a.entry_id,
            path.display()
        )));
    }
    let written = sm.append_label_change(&a.entry_id, label);
    let closed = sm.close();
    let id = written?;
    closed?;
    Ok(LabelAnswer {
        path: shown(&path),
        entry_id: a.entry_id.clone(),
        label: label.map(str::to_string),
        label_entry_id: id,
    })
}

fn render_label(a: &LabelAnswer) -> String {
    match &a.label {
        Some(l) => format!(
            "{}: entry {} labelled {l:?} ({})",
            a.path, a.entry_id, a.label_entry_id
        ),
        None => format!(
            "{}: entry {}'s label cleared ({})",
            a.path, a.entry_id, a.label_entry_id
        ),
    }
}

/// Arguments of `name_session`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NameArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// The name (at most 1000 characters, not blank), as pi's /name and `arbor name` set it.
    pub name: String,
}

/// The answer of `name_session`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NameAnswer {
    /// The session file.
    pub path: String,
    /// The name, as stored (trimmed; omp cleans it as omp does).
    pub name: String,
    /// The id of the entry written (pi: `session_info`; omp: `title_change`).
    pub entry_id: String,
}

fn name(state: &State, work: &Work, a: &NameArgs) -> Result<NameAnswer, ToolError> {
    let path = target(state, work, &a.session)?;
    let name = text_arg("name", &a.name)?;
    if arbor_store::is_blank_name(name) {
        return Err(ToolError::new(
            "name: empty (give the session a name with at least one visible character)",
        ));
    }
    let mut sm = SessionManager::open(&path, options(state))?;
    let written = sm.set_session_name(name);
    let closed = sm.close();
    let id = written?;
    closed?;
    let stored = arbor_store::load_doc(&path)
        .ok()
        .and_then(|d| d.session_name())
        .unwrap_or_else(|| name.trim().to_string());
    Ok(NameAnswer {
        path: shown(&path),
        name: stored,
        entry_id: id,
    })
}

fn render_name(a: &NameAnswer) -> String {
    format!("{}: named {:?} ({})", a.path, a.name, a.entry_id)
}

/// Arguments of `fork_session`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForkArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// Fork at this entry: the new session holds the path from the root to it (labels of
    /// those entries kept) and continues from it. Default: the whole tree is copied.
    #[serde(default)]
    pub entry_id: Option<String>,
    /// Write the copy with every secret the scanner finds replaced by [REDACTED:kind] (as
    /// `arbor fork --redact`). Default: an exact copy, as `arbor fork` (the new file is
    /// the user's session, not something served; the answer itself is redacted as every
    /// answer).
    #[serde(default)]
    pub redact: bool,
}

/// The answer of `fork_session`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ForkAnswer {
    /// The new session file.
    pub path: String,
    /// The new session's id.
    pub id: String,
    /// The session it was forked from (its `parentSession`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// Secrets replaced in the copy (with `redact`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<usize>,
    /// The command that resumes it in its agent, as words: `pi --session PATH` (omp
    /// files: `omp --session PATH`), as arbor's browser resumes.
    pub resume_command: Vec<String>,
    /// The same as one shell line.
    pub resume: String,
}

fn fork(state: &State, work: &Work, a: &ForkArgs) -> Result<ForkAnswer, ToolError> {
    let path = target(state, work, &a.session)?;
    let at = a.entry_id.as_deref().filter(|e| !e.is_empty());
    if let Some(id) = at {
        let doc = arbor_store::load_doc(&path)?;
        if doc.index().get(id).is_none() {
            return Err(ToolError::new(format!(
                "entry_id: no entry with id {id:?} in {}",
                path.display()
            )));
        }
    }
    work.check()?;
    let opts = options(state);
    let (sm, redacted) = if a.redact {
        let (sm, n) = arbor_view::fork_redacted(&path, at, None, opts)?;
        (sm, Some(n))
    } else {
        (SessionManager::fork(&path, at, None, opts)?, None)
    };
    let new_path = sm.session_file().map(Path::to_path_buf).unwrap_or_default();
    let id = sm.session_id();
    let tool = sm.dialect();
    let parent = sm.doc().header_str("parentSession");
    sm.close()?;
    let words = arbor_store::locate::resume_command(tool, &new_path);
    let line = arbor_store::locate::shell_line(&words);
    Ok(ForkAnswer {
        path: shown(&new_path),
        id,
        parent_session: parent,
        redacted,
        resume: line,
        resume_command: words,
    })
}

fn render_fork(a: &ForkAnswer) -> String {
    format!(
        "forked {} → {} ({}){}\nresume: {}",
        a.parent_session.as_deref().unwrap_or("?"),
        a.path,
        a.id,
        a.redacted
            .map(|n| format!(", {n} secrets redacted in the copy"))
            .unwrap_or_default(),
        a.resume
    )
}

#[rmcp::tool_router(router = write_router, vis = "pub(crate)")]
impl ArborServer {
    /// `label_entry`.
    #[rmcp::tool(
        name = "label_entry",
        description = "Label an entry of a session (as pi's /label: a bookmark shown in the tree and found by search), or clear its label with no `label`. Appends a label entry through arbor's session writer (the same lock and append as the CLI); only on a server started with --allow-writes.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<LabelAnswer>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    pub(crate) async fn label_entry(
        &self,
        Parameters(args): Parameters<LabelArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let r = self.blocking(&ctx, move |s, w| label(s, w, &args)).await;
        self.answer(r, Budget(bound::DEFAULT_BUDGET), render_label)
    }

    /// `name_session`.
    #[rmcp::tool(
        name = "name_session",
        description = "Name a session (as pi's /name and `arbor name`: pi files get a session_info entry, omp files omp's title change). Through arbor's session writer (the same lock and append as the CLI); only on a server started with --allow-writes.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<NameAnswer>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    pub(crate) async fn name_session(
        &self,
        Parameters(args): Parameters<NameArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let r = self.blocking(&ctx, move |s, w| name(s, w, &args)).await;
        self.answer(r, Budget(bound::DEFAULT_BUDGET), render_name)
    }

    /// `fork_session`.
    #[rmcp::tool(
        name = "fork_session",
        description = "Fork a session into a new session file beside it (as `arbor fork`): the whole tree, or with `entry_id` the path from the root to that entry, continuing from there. Returns the new file's path and id, and the command that resumes it (`pi --session PATH`, omp files `omp --session PATH`). An exact copy unless `redact`. A fork that fails leaves nothing behind (no copy, no lock). Only on a server started with --allow-writes.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<ForkAnswer>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    pub(crate) async fn fork_session(
        &self,
        Parameters(args): Parameters<ForkArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let r = self.blocking(&ctx, move |s, w| fork(s, w, &args)).await;
        self.answer(r, Budget(bound::DEFAULT_BUDGET), render_fork)
    }
}
