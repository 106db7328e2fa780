//! `search_sessions`: full-text search over the catalog, as `arbor search`.
use super::{dirs, time_arg, Agent};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_index::{fresh, SearchQuery};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The longest query accepted, in bytes.
const MAX_QUERY: usize = 4096;
/// How far a cursor may page into the hits.
const MAX_OFFSET: usize = 100_000;

/// Arguments of `search_sessions`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// The query, in SQLite FTS5 syntax as `arbor search` takes it: words (all must appear),
    /// "exact phrases", prefix*, AND / OR / NOT, NEAR(a b, 5); or `re:REGEX` for a regular
    /// expression.
    pub query: String,
    /// Only the sessions of this project: its working directory, an absolute path.
    #[serde(default)]
    pub project: Option<String>,
    /// Only sessions written by this agent: "pi", "omp", "claude", "codex" or "opencode".
    #[serde(default)]
    pub agent: Option<Agent>,
    /// Only these kinds of text: user, assistant, thinking, toolResult, bashExecution, tool
    /// (tool results and bash output), compaction, branchSummary, summary, name, label,
    /// system, contextEdit. Default: user and assistant messages, summaries, names, labels
    /// (thinking and tool output only when named here).
    #[serde(default)]
    pub role: Vec<String>,
    /// Only texts of entries since: a date (2025-01-31), a date-time, or a span back from
    /// now (30m, 12h, 7d, 2w).
    #[serde(default)]
    pub since: Option<String>,
    /// Only texts of entries before this (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// Only hits on the current branch (the path from the session's leaf, the branch pi
    /// resumes, to its root).
    #[serde(default)]
    pub current_branch_only: bool,
    /// At most this many hits per answer (1 to 1000; default 20), best first.
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue with the next hits.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One hit.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchHit {
    /// The session id.
    pub session: Option<String>,
    /// The session's name or title, when it has one.
    pub session_title: Option<String>,
    /// The session file.
    pub path: String,
    /// The entry whose text matched (for a label: the labelled entry); pass it to the
    /// readers as `entry_id`.
    pub entry_id: Option<String>,
    /// What kind of text matched (user, assistant, thinking, toolResult, ...).
    pub role: String,
    /// The entry's time (ISO 8601).
    pub timestamp: Option<String>,
    /// Whether the entry is on the session's current branch.
    pub on_current_branch: bool,
    /// The text around the match, matched words in **bold**.
    pub snippet: String,
}

/// The answer of `search_sessions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SearchAnswer {
    /// The hits, most relevant first.
    pub hits: Vec<SearchHit>,
    /// Matches the full-text index counted before `until` and `current_branch_only` were
    /// applied (counted up to 1000 past the hits asked for).
    pub matches: u64,
    /// Pass this back as `cursor` (same arguments) for the next hits; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The marks around matched words while a snippet is made.
const MARK_ON: char = '\u{e000}';
const MARK_OFF: char = '\u{e001}';

fn run(state: &State, work: &Work, a: &SearchArgs) -> Result<SearchAnswer, ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::new("query: empty"));
    }
    if a.query.len() > MAX_QUERY {
        return Err(ToolError::new(format!(
            "query: {} bytes is too long (at most {MAX_QUERY})",
            a.query.len()
        )));
    }
    let limit = bound::limit(a.limit, 20)?;
    let budget = Budget::new(a.budget)?;
    let key = serde_json::to_string(&(
        &a.query,
        &a.project,
        &a.agent,
        &a.role,
        &a.since,
        &a.until,
        a.current_branch_only,
    ))
    .unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "search_sessions", &key)?;
    if start > MAX_OFFSET {
        return Err(ToolError::new("cursor: too far (narrow the query)"));
    }
    let since = time_arg("since", a.since.as_deref())?;
    let until = time_arg("until", a.until.as_deref())?;
    let (kinds, need) = fresh::search_kinds(&a.role, arbor_index::IndexKinds::default())
        .map_err(|r| ToolError::new(format!("role: unknown role '{r}' ({})", fresh::ROLE_NAMES)))?;
    let dirs: Vec<_> = dirs(state, a.project.as_deref())?
        .into_iter()
        .filter(|d| match a.agent {
            None => true,
            Some(Agent::Omp) => arbor_store::locate::is_omp_dir(d),
            Some(Agent::Pi) => !arbor_store::locate::is_omp_dir(d),
            Some(Agent::Claude | Agent::Codex | Agent::Opencode) => false,
        })
        .collect();
    // Other agents' sessions in the server's scope (refreshed before the catalog is taken).
    let foreign = super::foreign_rows(state, work, a.project.as_deref(), a.agent)?;
    let mut q = SearchQuery::new(&a.query);
    // Private-use marks, which no session text is likely to hold: made `**` when served.
    q.marks = (MARK_ON.into(), MARK_OFF.into());
    q.kinds = Some(kinds);
    q.since_ms = since;
    q.dirs = Some(dirs.iter().map(|d| arbor_index::dir_key(d)).collect());
    let post = until.is_some() || a.current_branch_only;
    let keep = |h: &arbor_index::Hit| {
        (!a.current_branch_only || h.on_current_branch)
            && until.is_none_or(|u| {
                h.timestamp
                    .as_deref()
                    .and_then(arbor_core::time::parse_iso_ms)
                    .is_some_and(|t| t < u)
            })
    };
    let want = start + limit + 1;
    let mut cat = state
        .catalog
        .lock()
        .map_err(|_| ToolError::new("the catalog is unusable (a call failed while using it)"))?;
    work.check()?;
    let new_kinds = cat.require_kinds(need)?;
    let mut report = crate::fresh::Progress::new(work);
    // The filters the index does not know are applied to its hits: ask for more until
    // enough are kept or there are no more.
    let mut ask = if post { want * 4 } else { want };
    let (hits, total) = loop {
        q.limit = ask;
        let (hits, total) = fresh::search(&mut cat, &q, &dirs, need, new_kinds, &mut report)
            .map_err(|e| match e {
                arbor_index::IndexError::Query(m) => ToolError::new(format!(
                    "query: {m} (FTS5 syntax: words, \"phrases\", prefix*, AND/OR/NOT, NEAR; quote words with punctuation)"
                )),
                e => ToolError::from(e),
            })?;
        work.check()?;
        let exhausted = hits.len() < ask;
        let mut kept: Vec<arbor_index::Hit> = hits.into_iter().filter(|h| keep(h)).collect();
        if state.redact.is_on() {
            kept = arbor_view::secrets::redacted_hits(
                &cat,
                kept,
                &(MARK_ON.to_string(), MARK_OFF.to_string()),
            )?;
        }
        if !post || exhausted || kept.len() >= want || ask >= MAX_OFFSET {
            break (kept, total);
        }
        ask = (ask * 4).min(MAX_OFFSET);
    };
    // Other agents' hits beside them, by one relevance (BM25, lower first).
    let (hits, total) = if foreign.is_empty() {
        (hits, total)
    } else {
        let in_scope: std::collections::HashSet<(&std::path::Path, &str)> = foreign
            .iter()
            .map(|r| (r.source.as_path(), r.summary.id.as_str()))
            .collect();
        let found = cat
            .search_foreign(
                &a.query,
                q.kinds.as_deref(),
                since,
                want * 4,
                &q.marks,
                &|r| in_scope.contains(&(r.source.as_path(), r.summary.id.as_str())),
            )
            .map_err(|e| ToolError::new(format!("query: {e}")))?;
        let mut hits = hits;
        let mut total = total;
        for f in found {
            let mut h = f.into_hit();
            h.session_name = h.session_name.map(|n| state.redact.text(n));
            h.snippet = state.redact.text(h.snippet);
            if keep(&h) {
                total += 1;
                hits.push(h);
            }
        }
        arbor_index::by_rank(&mut hits);
        (hits, total)
    };
    drop(cat);
    let page = bound::page(
        hits.iter().map(|h| SearchHit {
            session: h.session_id.clone(),
            session_title: h.session_name.clone(),
            path: h.path.to_string_lossy().into_owned(),
            entry_id: h.entry_id.clone(),
            role: h.kind.name().to_string(),
            timestamp: h.timestamp.clone(),
            on_current_branch: h.on_current_branch,
            snippet: h.snippet.replace([MARK_ON, MARK_OFF], "**"),
        }),
        start,
        limit,
        budget,
    );
    Ok(SearchAnswer {
        matches: total,
        next_cursor: page.next.map(|o| bound::cursor("search_sessions", &key, o)),
        hits: page.items,
    })
}

/// The text of an answer: a line per hit.
fn text(a: &SearchAnswer) -> String {
    let mut text = String::new();
    for h in &a.hits {
        text.push_str(&format!(
            "{} {} {} {}{}: {}\n",
            // The whole id (or the file): a shortened id can be the prefix of several sessions.
            h.session.as_deref().unwrap_or(&h.path),
            h.entry_id.as_deref().unwrap_or("-"),
            h.role,
            h.timestamp.as_deref().unwrap_or(""),
            if h.on_current_branch {
                ""
            } else {
                " (other branch)"
            },
            arbor_view::one_line(&h.snippet, 200)
        ));
    }
    if a.hits.is_empty() {
        text.push_str("no match\n");
    }
    text.push_str(&format!(
        "{} hits{}",
        a.hits.len(),
        bound::more_note(a.next_cursor.as_deref())
    ));
    text
}

#[rmcp::tool_router(router = search_router, vis = "pub(crate)")]
impl ArborServer {
    /// `search_sessions`.
    #[rmcp::tool(
        name = "search_sessions",
        description = "Full-text search over every message of the coding-agent sessions (pi and omp), as `arbor search`: \"how did we fix X\", \"where did we talk about Y\". `query` is SQLite FTS5 syntax (words, \"exact phrase\", prefix*, AND/OR/NOT, NEAR) or re:REGEX. Filters: project (working directory), agent (pi|omp|claude|codex|opencode: Claude Code's, Codex's and opencode's sessions are searched too, read-only), role (user, assistant, thinking, tool, summary, label...), since/until, current_branch_only. Each hit: session id, path, entry_id, role, time, snippet, whether it is on the current branch. Read around a hit with get_messages/get_context (session + entry_id). Bounded: `limit` hits and `budget` characters; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<SearchAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn search_sessions(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.tool(&ctx, args.budget, args, run, text).await
    }
}
