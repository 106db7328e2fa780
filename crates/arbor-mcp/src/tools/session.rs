//! `get_session`: one session's overview: title, cwd, times, models, tokens and cost (tree
//! aware, as `arbor stats SESSION`), branch points and labels, forks and parent,
//! compactions.
use super::usage::UsageRow;
use super::{iso, Agent};
use crate::bound::Budget;
use crate::server::{ArborServer, State, ToolError, Work};
use arbor_core::entry::{EntryType, Role};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// At most this many items of each list (branch points, labels, compactions, forks); the
/// answer says how many there are in all.
const MAX_ITEMS: usize = 50;

/// Arguments of `get_session`.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionArgs {
    /// The session: its id, a unique id prefix (as `list_sessions` and `search_sessions`
    /// give them), or its file's path.
    pub session: String,
    /// The size bound of the answer in characters (100 to 200000; default 40000).
    #[serde(default)]
    pub budget: Option<u64>,
}

/// An entry where the tree branches.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct BranchPoint {
    /// The entry with more than one child.
    pub entry_id: Option<String>,
    /// How many children (branches start here).
    pub children: u64,
    /// Its time (ISO 8601).
    pub timestamp: Option<String>,
}

/// A labelled entry.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Label {
    /// The labelled entry.
    pub entry_id: String,
    /// The label.
    pub label: String,
}

/// A compaction (older context replaced by a summary).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Compaction {
    /// The compaction entry.
    pub entry_id: Option<String>,
    /// Its time (ISO 8601).
    pub timestamp: Option<String>,
    /// The context's size before, in tokens, as the agent recorded it.
    pub tokens_before: Option<f64>,
    /// Whether it is on the current branch.
    pub on_current_branch: bool,
}

/// A session forked from this one.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Fork {
    /// Its id.
    pub id: Option<String>,
    /// Its file.
    pub path: String,
    /// Its title.
    pub title: String,
}

/// The answer of `get_session`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SessionAnswer {
    /// The session id.
    pub id: Option<String>,
    /// The session file.
    pub path: String,
    /// The title: its name (omp: its title), else its first user message.
    pub title: String,
    /// Its name, when it was given one.
    pub name: Option<String>,
    /// The working directory it ran in.
    pub cwd: String,
    /// The agent that wrote it: "pi" or "omp"; "claude", "codex" or "opencode" for another
    /// agent's session (read in memory as `arbor import` would make it).
    pub agent: Agent,
    /// When it was created (ISO 8601, the header's time).
    pub created: Option<String>,
    /// Its last activity (ISO 8601).
    pub modified: Option<String>,
    /// Models used (provider/model), first seen first.
    pub models: Vec<String>,
    /// Entries in the tree.
    pub entries: u64,
    /// Messages (all roles, all branches).
    pub messages: u64,
    /// Leaves of the tree (branches; 1 for a session that never branched).
    pub branches: u64,
    /// The current leaf (the entry pi resumes from).
    pub leaf_id: Option<String>,
    /// Entries on the current branch (root to leaf).
    pub current_branch_entries: u64,
    /// Tokens and cost as `arbor stats SESSION` counts them: what the current path, the
    /// other branches and the summaries spent.
    pub usage: UsageRow,
    /// Where the tree branches (the first 50; get_tree shows them all).
    pub branch_points: Vec<BranchPoint>,
    /// How many branch points there are.
    pub branch_point_count: u64,
    /// Labelled entries (the first 50).
    pub labels: Vec<Label>,
    /// How many labelled entries there are.
    pub label_count: u64,
    /// Compactions (the first 50).
    pub compactions: Vec<Compaction>,
    /// How many compactions there are.
    pub compaction_count: u64,
    /// The session it was forked from (the header's parentSession), when it was.
    pub parent_session: Option<String>,
    /// Sessions forked from it, among those the server serves (the first 50).
    pub forks: Vec<Fork>,
    /// How many sessions were forked from it.
    pub fork_count: u64,
}

fn run(state: &State, work: &Work, a: &SessionArgs) -> Result<SessionAnswer, ToolError> {
    Budget::new(a.budget)?;
    let (file, doc, foreign) = match crate::resolve::session(state, &a.session) {
        Ok(file) => {
            work.check()?;
            let doc = arbor_store::load_doc(&file)
                .map_err(|e| ToolError::new(format!("session '{}': {e}", a.session)))?;
            (file, doc, None)
        }
        // Another agent's session: read in memory as `arbor import` would make it; its
        // agent, last activity and spends are its catalog row's.
        Err(e) => {
            let f = crate::resolve::open_foreign(state, work, &a.session)?.ok_or(e)?;
            (f.path, f.doc, Some(f.row))
        }
    };
    work.check()?;
    let entries = doc.entries();
    let index = doc.index();
    let tree = index.tree(&doc);
    let id_of = |i: usize| {
        entries
            .get(i)
            .and_then(|e| e.id.as_deref().map(String::from))
    };
    let ts_of = |i: usize| {
        entries
            .get(i)
            .and_then(|e| e.timestamp.as_deref().map(String::from))
    };
    let on_path: std::collections::HashSet<usize> = match index.leaf {
        Some(l) => index.path(&doc, l).entries.into_iter().collect(),
        None => Default::default(),
    };
    let mut branch_points = Vec::new();
    let mut branch_point_count = 0u64;
    let mut leaves = 0u64;
    for (i, kids) in tree.children.iter().enumerate() {
        if kids.is_empty() {
            leaves += 1;
        } else if kids.len() > 1 {
            branch_point_count += 1;
        }
        if kids.len() > 1 && branch_points.len() < MAX_ITEMS {
            branch_points.push(BranchPoint {
                entry_id: id_of(i),
                children: kids.len() as u64,
                timestamp: ts_of(i),
            });
        }
    }
    let labels: Vec<Label> = index
        .labels
        .iter()
        .take(MAX_ITEMS)
        .map(|(e, l)| Label {
            entry_id: e.to_string(),
            label: l.to_string(),
        })
        .collect();
    let mut compactions = Vec::new();
    let mut compaction_count = 0u64;
    let mut models: Vec<String> = Vec::new();
    let mut messages = 0u64;
    for (i, e) in entries.iter().enumerate() {
        let line = doc.entry_line(i);
        match e.etype {
            EntryType::Compaction => {
                compaction_count += 1;
                if compactions.len() >= MAX_ITEMS {
                    continue;
                }
                compactions.push(Compaction {
                    entry_id: id_of(i),
                    timestamp: ts_of(i),
                    tokens_before: e.fields.num(line, "tokensBefore"),
                    on_current_branch: on_path.contains(&i),
                });
            }
            EntryType::Message => {
                messages += 1;
                if e.role == Some(Role::Assistant) {
                    if let Some(m) = &e.message {
                        let model = m.str(line, "model");
                        let provider = m.str(line, "provider");
                        if let Some(model) = model {
                            let name = match provider {
                                Some(p) => format!("{p}/{model}"),
                                None => model.into_owned(),
                            };
                            if !models.contains(&name) && models.len() < MAX_ITEMS {
                                models.push(name);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    work.check()?;
    // Tokens and cost: `arbor stats SESSION`'s counting of this one file.
    let counted = match &foreign {
        Some(r) => vec![arbor_view::stats_catalog::counted_foreign(r)],
        None => arbor_view::stats_from_files(std::slice::from_ref(&file)).0,
    };
    let stats = arbor_view::aggregate_stats(&counted, arbor_view::StatsBy::Session, None);
    let usage = UsageRow::of(&stats.total);
    // Its listing row (title, last activity) and its forks, from the fresh catalog.
    let listed = super::list::listed(state, work, None).unwrap_or_default();
    let me = listed
        .iter()
        .find(|l| std::fs::canonicalize(&l.file).is_ok_and(|c| c == file));
    let canon = file.to_string_lossy().into_owned();
    let my_id = doc.session_id();
    let all_forks: Vec<&arbor_index::Listed> = listed
        .iter()
        .filter(|l| {
            l.info.parent_session_path.as_deref().is_some_and(|raw| {
                let p = serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string());
                p == canon
                    || my_id.as_deref() == Some(p.as_str())
                    || std::fs::canonicalize(&p).is_ok_and(|c| c == file)
            })
        })
        .collect();
    let forks: Vec<Fork> = all_forks
        .iter()
        .take(MAX_ITEMS)
        .map(|l| Fork {
            id: l.session_id.clone(),
            path: l.file.to_string_lossy().into_owned(),
            title: l.display_title().into_owned(),
        })
        .collect();
    let name = doc.session_name();
    let title = match (me, &foreign) {
        (_, Some(r)) => r.display_title().to_string(),
        (Some(l), None) => l.display_title().into_owned(),
        (None, None) => name.clone().unwrap_or_default(),
    };
    let agent = match (me, &foreign) {
        (_, Some(r)) => Agent::of_foreign(r.agent),
        (Some(l), None) => Agent::of(l),
        (None, None) if doc.dialect() == arbor_core::Dialect::Omp => Agent::Omp,
        (None, None) => Agent::Pi,
    };
    let answer = SessionAnswer {
        id: my_id,
        path: canon,
        title,
        name,
        cwd: doc.header_str("cwd").unwrap_or_default(),
        agent,
        created: doc
            .header_str("timestamp")
            .and_then(|t| arbor_core::time::parse_iso_ms(&t))
            .and_then(iso),
        modified: match &foreign {
            Some(r) => r.summary.modified_ms.and_then(|t| iso(t as f64)),
            None => me.and_then(|l| iso(l.info.modified_ms)),
        },
        models,
        entries: entries.len() as u64,
        messages,
        branches: leaves,
        leaf_id: index.leaf.and_then(id_of),
        current_branch_entries: on_path.len() as u64,
        usage,
        branch_points,
        branch_point_count,
        label_count: index.labels.len() as u64,
        labels,
        compactions,
        compaction_count,
        parent_session: doc.header_str("parentSession"),
        fork_count: all_forks.len() as u64,
        forks,
    };
    Ok(answer)
}

/// The text of an answer: the overview, then branch points and labels.
fn text(answer: &SessionAnswer) -> String {
    let mut text = format!(
        "{} ({})\n{}\nagent {}, cwd {}\ncreated {}, last activity {}\n{} entries, {} messages, {} branches, {} labels, {} compactions, {} forks{}\nmodels: {}\ncost ${:.2} on the current path, ${:.2} on other branches, ${:.2} summaries; {} turns\n",
        answer.title,
        answer.id.as_deref().unwrap_or("-"),
        answer.path,
        answer.agent.name(),
        answer.cwd,
        answer.created.as_deref().unwrap_or("-"),
        answer.modified.as_deref().unwrap_or("-"),
        answer.entries,
        answer.messages,
        answer.branches,
        answer.label_count,
        answer.compaction_count,
        answer.fork_count,
        answer
            .parent_session
            .as_deref()
            .map(|p| format!(", forked from {p}"))
            .unwrap_or_default(),
        answer.models.join(", "),
        answer.usage.current_path.cost,
        answer.usage.other_branches.cost,
        answer.usage.summaries.cost,
        answer.usage.turns,
    );
    for b in &answer.branch_points {
        text.push_str(&format!(
            "branch point {} ({} branches)\n",
            b.entry_id.as_deref().unwrap_or("-"),
            b.children
        ));
    }
    for l in &answer.labels {
        text.push_str(&format!("label {}: {}\n", l.entry_id, l.label));
    }
    text
}

#[rmcp::tool_router(router = session_router, vis = "pub(crate)")]
impl ArborServer {
    /// `get_session`.
    #[rmcp::tool(
        name = "get_session",
        description = "Overview of one coding-agent session: title, working directory, agent, created and last activity, models, entry/message/branch counts, the current leaf, tokens and cost as `arbor stats` counts them (current path, other branches, summaries), branch points, labels, compactions, the session it was forked from and the sessions forked from it. `session` is an id, a unique id prefix (as list_sessions/search_sessions give) or a path. Bounded by `budget` characters. Text served is redacted (secrets replaced by [REDACTED:kind]) unless the server runs with --no-redact.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<SessionAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn get_session(
        &self,
        Parameters(args): Parameters<SessionArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.tool(&ctx, args.budget, args, run, text).await
    }
}
