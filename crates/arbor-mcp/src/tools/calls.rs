//! `get_tool_calls` and `get_file_edits`: a session's tool calls, and the files its agent
//! wrote or edited, in one session or across the served sessions
//! ([`arbor_view::agent::tool_calls`], [`arbor_view::agent::file_edits`]).
use super::messages::{done, load};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_view::agent::{self, CallsOpts, FileEdit, ToolCall};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `get_tool_calls`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallsArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// Only calls of this tool (e.g. "bash", "edit", "write", "read").
    #[serde(default)]
    pub name: Option<String>,
    /// Only calls on the current branch (the path from the root to the current leaf).
    #[serde(default)]
    pub current_branch_only: bool,
    /// Each call's arguments cut to one line of this many characters (10 to 20000; default
    /// 500).
    #[serde(default)]
    pub arguments_chars: Option<u64>,
    /// At most this many calls per answer (1 to 1000; default 50).
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// The answer of `get_tool_calls`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct CallsAnswer {
    /// The session file.
    pub path: String,
    /// How many calls match (every page).
    pub total: usize,
    /// This page's calls, in the order they were made (file order, every branch).
    pub calls: Vec<ToolCall>,
    /// Pass this back as `cursor` (same arguments) for the next calls; absent on the last
    /// page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn calls(state: &State, work: &Work, a: &CallsArgs) -> Result<CallsAnswer, ToolError> {
    let limit = bound::limit(a.limit, 50)?;
    let budget = Budget::new(a.budget)?;
    let args_max = match a.arguments_chars {
        None => 500,
        Some(n) if (10..=20_000).contains(&n) => n as usize,
        Some(n) => {
            return Err(ToolError::new(format!(
                "arguments_chars: {n} is out of range (10 to 20000)"
            )))
        }
    };
    let key = serde_json::to_string(&(&a.session, &a.name, a.current_branch_only, args_max))
        .unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "get_tool_calls", &key)?;
    let (path, doc) = load(state, work, &a.session)?;
    let got = agent::tool_calls(
        &doc,
        &CallsOpts {
            name: a.name.as_deref().filter(|n| !n.is_empty()),
            current_only: a.current_branch_only,
            offset: start,
            limit,
            args_max,
        },
    );
    done(doc);
    let page = bound::page(got.calls.into_iter(), 0, limit, budget);
    let served = start + page.items.len();
    let next = (served < got.total).then(|| bound::cursor("get_tool_calls", &key, served));
    Ok(CallsAnswer {
        path: path.to_string_lossy().into_owned(),
        total: got.total,
        calls: page.items,
        next_cursor: next,
    })
}

/// `get_tool_calls`' answer as text: one line per call.
fn render_calls(a: &CallsAnswer) -> String {
    let mut text = format!("{} · {} of {} tool calls\n", a.path, a.calls.len(), a.total);
    for c in &a.calls {
        text.push_str(&format!(
            "{} {} {}{}{} {}\n",
            c.entry_id,
            c.timestamp.as_deref().unwrap_or("-"),
            c.name,
            match c.error {
                Some(true) => " ✗",
                Some(false) => "",
                None => " (no result)",
            },
            if c.on_current_path {
                ""
            } else {
                " (other branch)"
            },
            c.arguments
        ));
    }
    text.push_str(bound::more_note(a.next_cursor.as_deref()).trim_start());
    text
}

/// Arguments of `get_file_edits`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditsArgs {
    /// One session (its id, a unique id prefix, or its file's path). Default: every session
    /// the server serves (newest first), to answer "where did we change X".
    #[serde(default)]
    pub session: Option<String>,
    /// Only files whose path contains this text (e.g. "src/lib.rs", "auth"), or equals it
    /// with `exact`.
    #[serde(default)]
    pub path: Option<String>,
    /// `path` must equal the file's path as the call wrote it.
    #[serde(default)]
    pub exact: bool,
    /// Across sessions: only those of this project (its working directory, an absolute
    /// path).
    #[serde(default)]
    pub project: Option<String>,
    /// At most this many edits per answer (1 to 1000; default 50).
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One file edit, with its session.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EditRow {
    /// The session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The session file.
    pub session_path: String,
    /// The session's working directory (a relative `path` is relative to it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The edit.
    #[serde(flatten)]
    pub edit: FileEdit,
}

/// The answer of `get_file_edits`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EditsAnswer {
    /// The edits: in one session in the order they were made; across sessions, newest
    /// session first.
    pub edits: Vec<EditRow>,
    /// Sessions read for this answer.
    pub sessions_read: usize,
    /// Pass this back as `cursor` (same arguments) for more; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn edits(state: &State, work: &Work, a: &EditsArgs) -> Result<EditsAnswer, ToolError> {
    let limit = bound::limit(a.limit, 50)?;
    let budget = Budget::new(a.budget)?;
    let key =
        serde_json::to_string(&(&a.session, &a.path, a.exact, &a.project)).unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "get_file_edits", &key)?;
    let want = a.path.as_deref().filter(|p| !p.is_empty());
    let keep = |e: &FileEdit| want.is_none_or(|w| if a.exact { e.path == w } else { true });
    // Another agent's session, named by `session`: read in memory (its source is not a pi file).
    let mut foreign: Option<arbor_core::SessionDoc> = None;
    let files: Vec<std::path::PathBuf> = match a.session.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => match crate::resolve::session(state, s) {
            Ok(p) => vec![p],
            Err(e) => {
                let f = crate::resolve::open_foreign(state, work, s)?.ok_or(e)?;
                foreign = Some(f.doc);
                vec![f.path]
            }
        },
        None => super::list::listed(state, work, a.project.as_deref())?
            .into_iter()
            .map(|l| l.file)
            .collect(),
    };
    // Every matching edit in order; those before `start` skipped, one past the page seen to
    // know there is more.
    let mut seen = 0usize;
    let mut rows: Vec<EditRow> = Vec::new();
    let mut used = 0usize;
    let mut more = false;
    let mut read = 0usize;
    'files: for (k, file) in files.iter().enumerate() {
        work.check()?;
        if files.len() > 1 {
            work.progress(k as f64, Some(files.len() as f64), "reading sessions");
        }
        let (real, doc) = match foreign.take() {
            Some(doc) => (file.clone(), doc),
            None => {
                let Ok(real) = crate::resolve::inside(state, file) else {
                    continue;
                };
                // A quick look at the bytes before the file is parsed.
                if let Some(w) = want {
                    let Ok(bytes) = arbor_store::FileBytes::open(&real) else {
                        read += 1;
                        continue;
                    };
                    if !agent::may_name(bytes.as_ref(), w) {
                        read += 1;
                        continue;
                    }
                }
                let Ok(doc) = arbor_store::load_doc(&real) else {
                    read += 1;
                    continue;
                };
                (real, doc)
            }
        };
        read += 1;
        let session = doc.session_id();
        let cwd = doc.header_str("cwd");
        for e in agent::file_edits(&doc, want).into_iter().filter(&keep) {
            seen += 1;
            if seen <= start {
                continue;
            }
            let row = EditRow {
                session: session.clone(),
                session_path: real.to_string_lossy().into_owned(),
                cwd: cwd.clone(),
                edit: e,
            };
            let n = bound::json_chars(&row) + 1;
            if rows.len() >= limit || (!rows.is_empty() && used + n > budget.0 * 9 / 10) {
                more = true;
                break 'files;
            }
            used += n;
            rows.push(row);
        }
    }
    let served = start + rows.len();
    Ok(EditsAnswer {
        edits: rows,
        sessions_read: read,
        next_cursor: more.then(|| bound::cursor("get_file_edits", &key, served)),
    })
}

/// `get_file_edits`' answer as text: one line per edit.
fn render_edits(a: &EditsAnswer) -> String {
    let mut text = format!(
        "{} file edits ({} sessions read)\n",
        a.edits.len(),
        a.sessions_read
    );
    for r in &a.edits {
        text.push_str(&format!(
            "{} {} {} · {} {}{}\n",
            r.edit.timestamp.as_deref().unwrap_or("-"),
            r.edit.tool,
            r.edit.path,
            r.session.as_deref().unwrap_or(&r.session_path),
            r.edit.entry_id,
            match r.edit.error {
                Some(true) => " ✗ failed",
                _ => "",
            }
        ));
    }
    text.push_str(bound::more_note(a.next_cursor.as_deref()).trim_start());
    text
}

#[rmcp::tool_router(router = calls_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_tool_calls`.
    #[rmcp::tool(
        name = "get_tool_calls",
        description = "The tool calls of a session, in the order they were made (every branch): entry id, time, tool name, arguments (one line, cut to `arguments_chars`), whether the result was an error, whether the call is on the current branch. Filters: `name` (a tool), `current_branch_only`. Bounded: `limit` calls and `budget` characters per answer; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<CallsAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_tool_calls(
        &self,
        Parameters(args): Parameters<CallsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let budget = Budget::new(args.budget).unwrap_or(Budget(bound::DEFAULT_BUDGET));
        let r = self.blocking(&ctx, move |s, w| calls(s, w, &args)).await;
        self.answer(r, budget, render_calls)
    }

    /// `get_file_edits`.
    #[rmcp::tool(
        name = "get_file_edits",
        description = "Where did we change X: the files the agent wrote or edited (calls of pi's and omp's edit, write and ast_edit tools), each with its path as the call named it, tool, time, session, entry id, whether the call failed and whether it is on the current branch. One `session`, or every session the server serves (newest first); `path` keeps the files whose path contains it (or equals it with `exact`); `project` limits the sessions. Bounded: `limit` edits and `budget` characters per answer; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<EditsAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_file_edits(
        &self,
        Parameters(args): Parameters<EditsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let budget = Budget::new(args.budget).unwrap_or(Budget(bound::DEFAULT_BUDGET));
        let r = self.blocking(&ctx, move |s, w| edits(s, w, &args)).await;
        self.answer(r, budget, render_edits)
    }
}
