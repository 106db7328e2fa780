//! `get_tree`: a session's tree as a compact outline, the lines `arbor tree` draws
//! ([`arbor_view::agent::outline`]).
use super::messages::{done, load};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_view::agent::{self, Outline, OutlineNode, OutlineOpts};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `get_tree`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TreeArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// Every entry its own node (default: tool results, assistant turns without text and
    /// other machinery folded into one "N entries (…)" node, long runs of turns folded in
    /// their middle, as `arbor tree` shows them).
    #[serde(default)]
    pub full: bool,
    /// At most this many nodes per answer (1 to 1000; default 200).
    #[serde(default)]
    pub limit: Option<u64>,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer, to continue the outline.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// The answer of `get_tree`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TreeAnswer {
    /// The session file.
    pub path: String,
    /// The outline: its counts and this page's nodes.
    #[serde(flatten)]
    pub outline: Outline,
    /// Pass this back as `cursor` (same arguments) for the next nodes; absent on the last
    /// page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One node as a line: indented by depth, `●` on the current branch, `○` off it.
fn line(n: &OutlineNode) -> String {
    let mark = match (n.entry_id.is_some(), n.on_current_path) {
        (false, _) => "┊",
        (true, true) => "●",
        (true, false) => "○",
    };
    format!(
        "{}{}{mark} {}{}{}{}{}",
        "  ".repeat(n.depth),
        if n.branch_start { "└ " } else { "" },
        n.entry_id
            .as_deref()
            .map(|i| format!("{i} "))
            .unwrap_or_default(),
        n.text,
        n.label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default(),
        n.branches
            .map(|b| format!(" ({b} branches)"))
            .unwrap_or_default(),
        if n.current_leaf {
            " ◀ current leaf"
        } else {
            ""
        }
    )
}

fn run(state: &State, work: &Work, a: &TreeArgs) -> Result<TreeAnswer, ToolError> {
    let limit = bound::limit(a.limit, 200)?;
    let budget = Budget::new(a.budget)?;
    let key = serde_json::to_string(&(&a.session, a.full)).unwrap_or_default();
    let start = bound::offset(a.cursor.as_deref(), "get_tree", &key)?;
    let (path, doc) = load(state, work, &a.session)?;
    let mut o = agent::outline(
        &doc,
        &OutlineOpts {
            full: a.full,
            start,
            limit,
        },
    );
    done(doc);
    let page = bound::page(std::mem::take(&mut o.nodes).into_iter(), 0, limit, budget);
    o.nodes = page.items;
    let next = match page.next {
        Some(k) => Some(start + k),
        None => Some(start + limit).filter(|&n| n < o.total_nodes),
    };
    Ok(TreeAnswer {
        path: path.to_string_lossy().into_owned(),
        outline: o,
        next_cursor: next.map(|n| bound::cursor("get_tree", &key, n)),
    })
}

/// The answer as text: one line per node.
fn render(a: &TreeAnswer) -> String {
    let o = &a.outline;
    let mut text = format!(
        "{} · {} entries, {} branch points, {} leaves{}\n",
        a.path,
        o.entries,
        o.branch_points,
        o.leaves,
        o.current_leaf
            .as_deref()
            .map(|l| format!(", current leaf {l}"))
            .unwrap_or_default()
    );
    for n in &o.nodes {
        text.push_str(&line(n));
        text.push('\n');
    }
    text.push_str(&format!("{} of {} nodes", o.nodes.len(), o.total_nodes));
    text.push_str(bound::more_note(a.next_cursor.as_deref()));
    text
}

#[rmcp::tool_router(router = tree_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_tree`.
    #[rmcp::tool(
        name = "get_tree",
        description = "A session's tree of branches as a compact outline, as `arbor tree` shows it: one node per interesting entry (user turns, assistant answers, compactions, branch summaries, names, labels, branch points with their number of branches, leaves), runs of tool calls and results folded into one 'N entries (…)' node unless `full`; the current branch and leaf marked. Use an entry_id from it with get_messages (that branch), get_context or fork_session. Bounded: `limit` nodes and `budget` characters per answer; pass `next_cursor` back as `cursor` for more. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<TreeAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_tree(
        &self,
        Parameters(args): Parameters<TreeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let budget = Budget::new(args.budget).unwrap_or(Budget(bound::DEFAULT_BUDGET));
        let r = self.blocking(&ctx, move |s, w| run(s, w, &args)).await;
        self.answer(r, budget, render)
    }
}
