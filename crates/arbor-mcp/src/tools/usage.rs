//! `get_usage`: `arbor stats` as a tool, the same numbers as `arbor stats --json`
//! ([`arbor_view::stats_catalog`] and [`arbor_view::aggregate_stats_between`]).
use super::{dirs, time_arg};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `get_usage`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsageArgs {
    /// How rows are grouped: "session" (default), "day", "week", "month", "model",
    /// "project", "agent" (pi, omp, claude, codex, opencode).
    #[serde(default)]
    pub by: arbor_view::StatsBy,
    /// Only this session (an id, a unique id prefix or a path); default: every session the
    /// server serves (or the project's).
    #[serde(default)]
    pub session: Option<String>,
    /// Only the sessions of this project: its working directory, an absolute path.
    #[serde(default)]
    pub project: Option<String>,
    /// Only turns since: a date (2025-01-31), a date-time, or a span back from now (30m,
    /// 12h, 7d, 2w).
    #[serde(default)]
    pub since: Option<String>,
    /// Only turns before this (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// At most this many rows per answer (1 to 1000; default 100); the total is always
    /// over every row.
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue with the next rows.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Tokens and cost.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Spent {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens read from the provider's cache.
    pub cache_read: f64,
    /// Tokens written to the provider's cache.
    pub cache_write: f64,
    /// Cost in dollars.
    pub cost: f64,
}

impl From<arbor_store::usage::Tokens> for Spent {
    fn from(t: arbor_store::usage::Tokens) -> Self {
        Spent {
            input: t.input,
            output: t.output,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            cost: t.cost,
        }
    }
}

/// One row: a group's turns and what they spent, split as `arbor stats` splits it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UsageRow {
    /// The group: a session file, a day, a week's Monday, a month, a model, a project; or
    /// "total".
    pub group: String,
    /// Assistant turns.
    pub turns: u64,
    /// What the turns on the path each session resumes (its current branch) spent.
    pub current_path: Spent,
    /// What the turns on the branches it left spent.
    pub other_branches: Spent,
    /// What its summaries (compaction, branch summaries) spent.
    pub summaries: Spent,
    /// The part of the cost estimated from arbor's price table (Claude Code's and Codex's
    /// sessions record tokens, not dollars); absent when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cost: Option<f64>,
}

impl UsageRow {
    /// The row of a statistics row.
    pub fn of(r: &arbor_view::StatsRow) -> UsageRow {
        UsageRow {
            group: r.group.clone(),
            turns: r.turns,
            current_path: r.path.tokens().into(),
            other_branches: r.other.tokens().into(),
            summaries: r.side.tokens().into(),
            estimated_cost: (r.estimated != Default::default()).then(|| r.estimated.tokens().cost),
        }
    }
}

/// The answer of `get_usage`: the numbers of `arbor stats --json`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UsageAnswer {
    /// How the rows are grouped.
    pub by: arbor_view::StatsBy,
    /// Sessions counted.
    pub sessions: u64,
    /// Turns a fork copied from its parent session, counted once (in the parent).
    pub fork_copies_skipped: u64,
    /// The rows, in the order of their groups.
    pub rows: Vec<UsageRow>,
    /// Every row added up.
    pub total: UsageRow,
    /// Rows in all (over every page).
    pub row_count: u64,
    /// Pass this back as `cursor` (same arguments) for the next rows; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The counted sessions of a question: one session, or the served directories (from the
/// catalog's cached spends, as `arbor stats`).
fn counted(
    state: &State,
    work: &Work,
    a: &UsageArgs,
    since: Option<f64>,
    until: Option<f64>,
) -> Result<Vec<arbor_view::Counted>, ToolError> {
    if let Some(s) = a.session.as_deref() {
        let f = match crate::resolve::session(state, s) {
            Ok(f) => f,
            // Another agent's session: its catalog row's spends, as in a listing.
            Err(e) => {
                let r = crate::resolve::foreign_row(state, work, s)?.ok_or(e)?;
                return Ok(vec![arbor_view::stats_catalog::counted_foreign(&r)]);
            }
        };
        let (counted, failed) = arbor_view::stats_from_files(std::slice::from_ref(&f));
        if let Some((_, e)) = failed.first() {
            return Err(ToolError::new(format!(
                "session '{s}': not counted: {}",
                arbor_store::discover::why_not(&f, e)
            )));
        }
        return Ok(counted);
    }
    let dirs = dirs(state, a.project.as_deref())?;
    // Other agents' sessions (Claude Code's and Codex's costs estimated from the price table).
    let foreign: Vec<arbor_view::Counted> =
        super::foreign_rows(state, work, a.project.as_deref(), None)?
            .into_iter()
            .map(|r| arbor_view::stats_catalog::counted_foreign(&r))
            .collect();
    let mut cat = state
        .catalog
        .lock()
        .map_err(|_| ToolError::new("the catalog is unusable (a call failed while using it)"))?;
    work.check()?;
    match arbor_view::stats_catalog::counted(&mut cat, &dirs, since, until, &mut |_| {}) {
        Ok(mut c) => {
            c.extend(foreign);
            Ok(c)
        }
        Err(_) => {
            // As `arbor stats`: the catalog's totals cannot be read; the files are.
            drop(cat);
            let files: Vec<_> = dirs
                .iter()
                .flat_map(|d| arbor_store::discover::session_files(d))
                .collect();
            work.check()?;
            let mut c = arbor_view::stats_from_files(&files).0;
            c.extend(foreign);
            Ok(c)
        }
    }
}

fn run(state: &State, work: &Work, a: &UsageArgs) -> Result<UsageAnswer, ToolError> {
    let limit = bound::limit(a.limit, 100)?;
    let budget = Budget::new(a.budget)?;
    let key = serde_json::to_string(&(&a.by, &a.session, &a.project, &a.since, &a.until))
        .unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "get_usage", &key)?;
    let since = time_arg("since", a.since.as_deref())?;
    let until = time_arg("until", a.until.as_deref())?;
    let sessions = counted(state, work, a, since, until)?;
    work.check()?;
    let stats = arbor_view::aggregate_stats_between(&sessions, a.by, since, until);
    let page = bound::page(stats.rows.iter().map(UsageRow::of), start, limit, budget);
    let total = UsageRow::of(&stats.total);
    Ok(UsageAnswer {
        by: a.by,
        sessions: stats.sessions as u64,
        fork_copies_skipped: stats.fork_copies_skipped,
        row_count: stats.rows.len() as u64,
        next_cursor: page.next.map(|o| bound::cursor("get_usage", &key, o)),
        rows: page.items,
        total,
    })
}

/// The text of an answer: a line per row and the total.
fn text(a: &UsageAnswer) -> String {
    let line = |r: &UsageRow| {
        format!(
            "{}  {} turns  in {:.0} out {:.0} cache-r {:.0} cache-w {:.0}  ${:.2} current path, ${:.2} other branches, ${:.2} summaries\n",
            r.group,
            r.turns,
            r.current_path.input + r.other_branches.input + r.summaries.input,
            r.current_path.output + r.other_branches.output + r.summaries.output,
            r.current_path.cache_read + r.other_branches.cache_read + r.summaries.cache_read,
            r.current_path.cache_write + r.other_branches.cache_write + r.summaries.cache_write,
            r.current_path.cost,
            r.other_branches.cost,
            r.summaries.cost
        )
    };
    let mut text = String::new();
    for r in &a.rows {
        text.push_str(&line(r));
    }
    text.push_str(&line(&a.total));
    text.push_str(&format!(
        "{} sessions counted{}",
        a.sessions,
        bound::more_note(a.next_cursor.as_deref())
    ));
    text
}

#[rmcp::tool_router(router = usage_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_usage`.
    #[rmcp::tool(
        name = "get_usage",
        description = "Tokens and cost of the coding-agent sessions, as `arbor stats --json` (the same numbers): grouped by session, day, week, month, model or project; since/until; one session, one project or all served. Each row splits what the current path (the branch each session resumes), the other branches and the summaries spent; a fork's copies of its parent's turns are counted once. Bounded: `limit` rows and `budget` characters; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<UsageAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_usage(
        &self,
        Parameters(args): Parameters<UsageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.tool(&ctx, args.budget, args, run, text).await
    }
}
