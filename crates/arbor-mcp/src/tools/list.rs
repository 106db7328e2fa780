//! `list_sessions`: the sessions, last activity first, as `arbor ls --pi` lists them: one rule
//! for every agent's sessions (plain `arbor ls` lists omp's directory by omp's own rules, the
//! file's time, as omp's picker does).
use super::{dirs, iso, time_arg, Agent, Tokens};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `list_sessions`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// Only the sessions of this project: its working directory, an absolute path
    /// (e.g. "/home/me/app").
    #[serde(default)]
    pub project: Option<String>,
    /// Only sessions written by this agent: "pi", "omp", "claude", "codex" or "opencode".
    #[serde(default)]
    pub agent: Option<Agent>,
    /// Only sessions active since: a date (2025-01-31), a date-time, or a span back from now
    /// (30m, 12h, 7d, 2w).
    #[serde(default)]
    pub since: Option<String>,
    /// Only sessions last active before this (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// Only sessions whose title or first message holds this text (any case).
    #[serde(default)]
    pub grep: Option<String>,
    /// At most this many sessions per answer (1 to 1000; default 50).
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue the list.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One session of the listing.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SessionRow {
    /// The session id (the header's `id`).
    pub id: Option<String>,
    /// The session file.
    pub path: String,
    /// The title: the session's name, omp's title, else its first user message.
    pub title: String,
    /// The working directory the session ran in.
    pub cwd: String,
    /// The agent that wrote it: "pi", "omp", "claude", "codex" or "opencode".
    pub agent: Agent,
    /// When it was created (ISO 8601).
    pub created: Option<String>,
    /// Its last activity (ISO 8601): the last user/assistant message, as pi sorts.
    pub modified: Option<String>,
    /// Messages (all roles, all branches).
    pub message_count: u64,
    /// Entries in the tree.
    pub entries: u64,
    /// Branches (leaves of the tree; 1 for a session that never branched).
    pub branches: u64,
    /// Labelled entries.
    pub labels: u64,
    /// Models used (provider/model), first seen first.
    pub models: Vec<String>,
    /// Tokens and cost over every entry of the file (get_usage / get_session count each
    /// entry once across forks).
    pub tokens: Tokens,
    /// The session this one was forked from (its file), when it was.
    pub parent_session: Option<String>,
    /// File size in bytes.
    pub size: u64,
}

impl SessionRow {
    /// The row of a listed session.
    pub fn of(l: &arbor_index::Listed) -> SessionRow {
        SessionRow {
            id: l.session_id.clone(),
            path: l.file.to_string_lossy().into_owned(),
            title: l.display_title().into_owned(),
            cwd: l.info.cwd.clone(),
            agent: Agent::of(l),
            created: l.info.created_ms.and_then(iso),
            modified: iso(l.info.modified_ms),
            message_count: l.info.message_count as u64,
            entries: l.entries,
            branches: l.branches,
            labels: l.labels,
            models: l.models.clone(),
            tokens: Tokens::from(&l.usage),
            parent_session: l
                .info
                .parent_session_path
                .as_deref()
                .map(|raw| serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())),
            size: l.size,
        }
    }
}

impl SessionRow {
    /// The row of another agent's session (path: its source file, or opencode's data
    /// directory; no entries, branches or labels: it is not a pi tree until imported; its
    /// cost: opencode's as recorded, Claude Code's and Codex's estimated from arbor's price
    /// table; `parent_session`: the parent's session id, for a subagent or a fork).
    pub fn of_foreign(r: &arbor_index::ForeignRow) -> SessionRow {
        let s = &r.summary;
        SessionRow {
            id: Some(s.id.clone()),
            path: r.source.to_string_lossy().into_owned(),
            title: r.display_title().to_string(),
            cwd: s.cwd.clone(),
            agent: Agent::of_foreign(r.agent),
            created: s.created_ms.and_then(|t| iso(t as f64)),
            modified: s.modified_ms.and_then(|t| iso(t as f64)),
            message_count: s.message_count,
            entries: 0,
            branches: 0,
            labels: 0,
            models: s.models.clone(),
            tokens: Tokens {
                input: s.tokens[0] as f64,
                output: s.tokens[1] as f64,
                cache_read: s.tokens[2] as f64,
                cache_write: s.tokens[3] as f64,
                cost: s.cost_recorded + s.cost_estimated,
            },
            parent_session: s.parent_id.clone(),
            size: 0,
        }
    }
}

/// The answer of `list_sessions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ListAnswer {
    /// The sessions, newest activity first.
    pub sessions: Vec<SessionRow>,
    /// How many sessions the filters kept (over every page).
    pub total: u64,
    /// Pass this back as `cursor` (same arguments) for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The listing of the server's sessions, fresh, newest first, filtered.
pub(crate) fn listed(
    state: &State,
    work: &Work,
    project: Option<&str>,
) -> Result<Vec<arbor_index::Listed>, ToolError> {
    let dirs = dirs(state, project)?;
    let mut cat = state
        .catalog
        .lock()
        .map_err(|_| ToolError::new("the catalog is unusable (a call failed while using it)"))?;
    work.check()?;
    let mut report = crate::fresh::Progress::new(work);
    let (listed, _) = arbor_index::fresh::listing(
        &mut cat,
        &dirs,
        arbor_index::RefreshOptions::default(),
        &mut report,
    )?;
    work.check()?;
    Ok(listed)
}

fn run(state: &State, work: &Work, a: &ListArgs) -> Result<ListAnswer, ToolError> {
    let limit = bound::limit(a.limit, 50)?;
    let budget = Budget::new(a.budget)?;
    let key = serde_json::to_string(&(&a.project, &a.agent, &a.since, &a.until, &a.grep))
        .unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "list_sessions", &key)?;
    let since = time_arg("since", a.since.as_deref())?;
    let until = time_arg("until", a.until.as_deref())?;
    let needle = a.grep.as_deref().map(str::to_lowercase);
    let listed = if a.agent.is_none_or(|g| g.foreign().is_none()) {
        listed(state, work, a.project.as_deref())?
    } else {
        Vec::new()
    };
    let foreign = super::foreign_rows(state, work, a.project.as_deref(), a.agent)?;
    let seen = |t: String, n: &str| state.redact.text(t).to_lowercase().contains(n);
    let foreign_kept: Vec<&arbor_index::ForeignRow> = foreign
        .iter()
        .filter(|r| {
            let m = r.summary.modified_ms.map(|t| t as f64);
            since.is_none_or(|t| m.is_some_and(|m| m >= t))
                && until.is_none_or(|t| m.is_some_and(|m| m < t))
                && needle.as_deref().is_none_or(|n| {
                    seen(r.display_title().to_string(), n)
                        || seen(r.summary.first_message.clone(), n)
                })
        })
        .collect();
    let kept: Vec<&arbor_index::Listed> = listed
        .iter()
        .filter(|l| {
            a.agent.is_none_or(|g| Agent::of(l) == g)
                && since.is_none_or(|t| l.info.modified_ms >= t)
                && until.is_none_or(|t| l.info.modified_ms < t)
                && needle.as_deref().is_none_or(|n| {
                    // Over the text as served (redacted): a filter is no oracle for a secret.
                    let seen = |t: String| state.redact.text(t).to_lowercase().contains(n);
                    seen(l.display_title().into_owned())
                        || seen(l.info.first_message.to_string_lossy().into_owned())
                })
        })
        .collect();
    // pi's and omp's rows (newest first) and the other agents', merged newest first.
    let mut rows: Vec<SessionRow> = kept.iter().map(|l| SessionRow::of(l)).collect();
    if !foreign_kept.is_empty() {
        rows.extend(foreign_kept.iter().map(|r| SessionRow::of_foreign(r)));
        rows.sort_by(|a, b| b.modified.cmp(&a.modified));
    }
    let total = rows.len() as u64;
    let page = bound::page(rows.into_iter(), start, limit, budget);
    Ok(ListAnswer {
        total,
        next_cursor: page.next.map(|o| bound::cursor("list_sessions", &key, o)),
        sessions: page.items,
    })
}

/// The text of an answer: a line per session.
fn text(a: &ListAnswer) -> String {
    let mut text = String::new();
    for r in &a.sessions {
        text.push_str(&format!(
            "{}  {}  {}  {}  {}\n",
            // The whole id (or the file, when the header has none): what a `session` argument
            // takes; a shortened id can be the prefix of several sessions.
            r.id.as_deref().unwrap_or(&r.path),
            r.modified.as_deref().unwrap_or("-"),
            r.agent.name(),
            r.cwd,
            arbor_view::one_line(&r.title, 80)
        ));
    }
    text.push_str(&format!(
        "{} of {} sessions{}",
        a.sessions.len(),
        a.total,
        bound::more_note(a.next_cursor.as_deref())
    ));
    text
}

#[rmcp::tool_router(router = list_router, vis = "pub(crate)")]
impl ArborServer {
    /// `list_sessions`.
    #[rmcp::tool(
        name = "list_sessions",
        description = "List the coding-agent sessions (pi and omp, and Claude Code's, Codex's and opencode's, read-only) newest activity first (the last user or assistant message, for every agent), as `arbor ls --pi`: id, title, working directory, agent, created/last activity, message/entry/branch/label counts, models, tokens and cost. Filters: project (its working directory), agent (pi|omp|claude|codex|opencode), since/until (2025-01-31, a date-time, or 30m/12h/7d/2w back), grep (title or first message). Bounded: `limit` sessions and `budget` characters per answer; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<ListAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn list_sessions(
        &self,
        Parameters(args): Parameters<ListArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.tool(&ctx, args.budget, args, run, text).await
    }
}
