//! `get_context`: what the model saw at an entry, `arbor context`'s JSON, its newest part
//! within a token budget ([`arbor_view::agent::context_page`]).
use super::messages::{done, entry_arg, load};
use crate::bound::{self, Budget};
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_core::context::{LeafSel, OmpVersion};
use arbor_view::agent::{self, ContextOpts, ContextPage};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest token budget accepted.
const MAX_TOKENS: u64 = 1_000_000;

/// Arguments of `get_context`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextArgs {
    /// The session: its id, a unique id prefix, or its file's path.
    pub session: String,
    /// The context at this entry (what the model was sent when the conversation stood
    /// there). Default: the session's current leaf.
    #[serde(default)]
    pub entry_id: Option<String>,
    /// Keep the newest messages whose estimated tokens (pi's estimate: characters / 4)
    /// fit in this many (1 to 1000000; default: about a fifth of `budget`). The older
    /// ones are left out and counted.
    #[serde(default)]
    pub budget_tokens: Option<u64>,
    /// Images' base64 data as it is (default: replaced by "[image: MIME, N bytes]").
    #[serde(default)]
    pub images: bool,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
    /// The `next_cursor` of the previous answer: the older messages before it.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// The answer of `get_context`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ContextAnswer {
    /// The session file.
    pub path: String,
    /// The context.
    #[serde(flatten)]
    pub page: ContextPage,
    /// Pass this back as `cursor` (same arguments) for the older messages left out;
    /// absent when none were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn run(state: &State, work: &Work, a: &ContextArgs) -> Result<ContextAnswer, ToolError> {
    let budget = Budget::new(a.budget)?;
    let tokens = match a.budget_tokens {
        None => (budget.0 / 5) as u64,
        Some(t) if (1..=MAX_TOKENS).contains(&t) => t,
        Some(t) => {
            return Err(ToolError::new(format!(
                "budget_tokens: {t} is out of range (1 to {MAX_TOKENS})"
            )))
        }
    };
    let key = serde_json::to_string(&(&a.session, &a.entry_id, a.images, a.budget_tokens))
        .unwrap_or_default();
    let before = a
        .cursor
        .as_deref()
        .filter(|c| !c.is_empty())
        .map(|c| bound::offset(Some(c), "get_context", &key))
        .transpose()?;
    let (path, doc) = load(state, work, &a.session)?;
    let leaf = match entry_arg(&doc, a.entry_id.as_deref())? {
        Some(id) => LeafSel::Id(id),
        None => LeafSel::Current,
    };
    let ctx = agent::session_context(
        &doc,
        leaf,
        &path,
        state.loc.agent_override(),
        OmpVersion::default(),
    );
    work.check()?;
    let mut opts = ContextOpts {
        budget_tokens: tokens,
        images: a.images,
        before,
    };
    // The token budget first; then fewer messages until the JSON fits the characters.
    let mut page = agent::context_page(&doc, &ctx, &opts);
    for _ in 0..8 {
        if page.kept_tokens == 0 || bound::json_chars(&page) <= budget.0 * 9 / 10 {
            break;
        }
        opts.budget_tokens = page.kept_tokens * 2 / 3;
        page = agent::context_page(&doc, &ctx, &opts);
    }
    let kept = page.context["messages"].as_array().map_or(0, Vec::len);
    let next = (page.omitted_messages > 0 && kept > 0)
        .then(|| bound::cursor("get_context", &key, page.omitted_messages));
    drop(ctx);
    done(doc);
    Ok(ContextAnswer {
        path: path.to_string_lossy().into_owned(),
        page,
        next_cursor: next,
    })
}

/// The answer as text: what was kept and left out, then the context's JSON.
fn render(a: &ContextAnswer) -> String {
    let page = &a.page;
    let kept = page.context["messages"].as_array().map_or(0, Vec::len);
    let mut text = format!(
        "{} · context at {} ({} rules) · {} of {} messages, about {} tokens",
        a.path,
        page.leaf.as_deref().unwrap_or("(empty)"),
        page.rules,
        kept,
        page.total_messages,
        page.kept_tokens
    );
    if page.omitted_messages > 0 {
        text.push_str(&format!(
            "; {} older messages (about {} tokens) left out",
            page.omitted_messages, page.omitted_tokens_about
        ));
        if a.next_cursor.is_some() {
            text.push_str(": pass next_cursor as cursor for them");
        } else {
            text.push_str(
                " (the next older message alone is over the budget: read it with get_messages)",
            );
        }
    }
    text.push('\n');
    text.push_str(&serde_json::to_string(&page.context).unwrap_or_default());
    text
}

#[rmcp::tool_router(router = context_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_context`.
    #[rmcp::tool(
        name = "get_context",
        description = "What the model saw: the exact context (messages, thinking level, model) the session's agent sends to the model at an entry, by pi's or omp's own rules (after compactions, branch summaries and context edits), as `arbor context` prints it. Default: at the current leaf; `entry_id` for another point. Only the newest messages that fit `budget_tokens` (pi's estimate, characters / 4) are given, the older ones counted; pass `next_cursor` back as `cursor` for them. Images are placeholders unless `images`. Bounded by `budget` characters. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<ContextAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_context(
        &self,
        Parameters(args): Parameters<ContextArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let budget = Budget::new(args.budget).unwrap_or(Budget(bound::DEFAULT_BUDGET));
        let r = self.blocking(&ctx, move |s, w| run(s, w, &args)).await;
        self.answer(r, budget, render)
    }
}
