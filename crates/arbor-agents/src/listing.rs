//! What a listing shows of another agent's session (`arbor ls`, `stats`, the MCP server), from
//! the common model: one [`Summary`] per session and per subagent, and the estimated price of
//! the tokens of agents that record no dollars ([`price_of`], the table in `data/prices.json`).
use crate::model::{Agent, NodeKind, Part, Session};
use std::sync::OnceLock;

/// One listed session of another agent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// The agent's own id of the session.
    pub id: String,
    /// The working directory it ran in (empty when not recorded).
    pub cwd: String,
    /// Its title, if the agent recorded one.
    pub title: Option<String>,
    /// When it started (ms since the epoch).
    pub created_ms: Option<i64>,
    /// Its last node's time (ms since the epoch), else its start.
    pub modified_ms: Option<i64>,
    /// User and assistant messages (pi's `messageCount` counts every message entry; here
    /// tool results are counted too, as pi counts them).
    pub message_count: u64,
    /// The first user text (one line is the listing's business).
    pub first_message: String,
    /// The parent session's id: a subagent's session, or the session a fork was made from.
    pub parent_id: Option<String>,
    /// Models used, first-seen order.
    pub models: Vec<String>,
    /// Tokens: input (without cache), output, cache read, cache write.
    pub tokens: [u64; 4],
    /// Dollars the agent recorded (opencode).
    pub cost_recorded: f64,
    /// Dollars estimated from the price table for replies that recorded none.
    pub cost_estimated: f64,
    /// Replies whose model has no price in the table (their tokens are counted, not priced).
    pub unpriced: u64,
    /// Lines that could not be read, and record types not known (the reader's report).
    pub problems: u64,
    /// Its replies' spends as `arbor stats` counts them ([`spends`]), in buckets
    /// (`arbor_store::usage::buckets`, one per spend).
    pub buckets: Vec<arbor_store::usage::Bucket>,
    /// Its texts for a full-text index ([`texts`]).
    pub texts: Vec<Text>,
}

/// What kind of text a [`Text`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// A user message's text.
    User,
    /// An assistant reply's text.
    Assistant,
    /// A compaction's summary.
    Compaction,
    /// The session's title.
    Title,
}

/// One searchable text of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// The node's key ([`crate::model::Node::key`]; the title: empty).
    pub node: String,
    /// What it is.
    pub kind: TextKind,
    /// The node's time (ms since the epoch; 0: unknown).
    pub ts_ms: i64,
    /// The node is on the path to the session's last node (the branch a resume continues).
    pub on_path: bool,
    /// The text.
    pub text: String,
}

/// The texts of `s` a search finds: user and assistant text, compaction summaries, the title.
pub fn texts(s: &Session) -> Vec<Text> {
    let mut on_path = vec![false; s.nodes.len()];
    if !s.nodes.is_empty() {
        for i in s.path_to(s.nodes.len() - 1) {
            on_path[i] = true;
        }
    }
    let mut out = Vec::new();
    if let Some(t) = s.title.as_ref().filter(|t| !t.trim().is_empty()) {
        out.push(Text {
            node: String::new(),
            kind: TextKind::Title,
            ts_ms: s.created_ms.unwrap_or(0),
            on_path: true,
            text: t.clone(),
        });
    }
    for (i, n) in s.nodes.iter().enumerate() {
        let (kind, text) = match &n.kind {
            NodeKind::User(parts) => (TextKind::User, text_of(parts)),
            NodeKind::Assistant(a) => (TextKind::Assistant, text_of(&a.content)),
            NodeKind::Compaction(c) => (TextKind::Compaction, c.summary.clone()),
            _ => continue,
        };
        if text.trim().is_empty() {
            continue;
        }
        out.push(Text {
            node: n.key.clone(),
            kind,
            ts_ms: n.timestamp_ms,
            on_path: on_path[i],
            text,
        });
    }
    out
}

/// One summary for `s` and one for each of its subagents (recursively), parents first.
pub fn summaries(s: &Session) -> Vec<Summary> {
    let mut out = Vec::new();
    push(s, None, &mut out);
    out
}

fn push(s: &Session, parent: Option<&str>, out: &mut Vec<Summary>) {
    out.push(summary(s, parent));
    for c in &s.children {
        push(c, Some(&s.id), out);
    }
}

/// The summary of `s` alone (its subagents not included), `parent` the session it is a
/// subagent of.
pub fn summary(s: &Session, parent: Option<&str>) -> Summary {
    let mut out = Summary {
        id: s.id.clone(),
        cwd: s.cwd.clone().unwrap_or_default(),
        title: s.title.clone().filter(|t| !t.trim().is_empty()),
        created_ms: s.created_ms,
        parent_id: parent.map(str::to_string).or_else(|| s.forked_from.clone()),
        problems: (s.report.bad_lines.len() as u64)
            + s.report.unknown.values().copied().sum::<u64>(),
        ..Summary::default()
    };
    let mut last = None;
    for n in &s.nodes {
        if n.timestamp_ms > 0 {
            last = Some(last.map_or(n.timestamp_ms, |l: i64| l.max(n.timestamp_ms)));
        }
        match &n.kind {
            NodeKind::User(parts) => {
                out.message_count += 1;
                if out.first_message.is_empty() {
                    let t = text_of(parts);
                    if !injected(s.agent, &t) {
                        out.first_message = t;
                    }
                }
            }
            NodeKind::Assistant(a) => {
                out.message_count += 1;
                if !a.model.is_empty() && !out.models.contains(&a.model) {
                    out.models.push(a.model.clone());
                }
                let u = &a.usage;
                out.tokens[0] += u.input;
                out.tokens[1] += u.output;
                out.tokens[2] += u.cache_read;
                out.tokens[3] += u.cache_write;
                match u.cost {
                    Some(c) => out.cost_recorded += c,
                    None if u.input + u.output + u.cache_read + u.cache_write == 0 => {}
                    None => match price_of(&a.model) {
                        Some(p) => out.cost_estimated += p.cost(u),
                        None => out.unpriced += 1,
                    },
                }
            }
            NodeKind::ToolResult(_) => out.message_count += 1,
            NodeKind::Compaction(_) | NodeKind::ModelChange { .. } => {}
        }
    }
    out.modified_ms = last.or(s.created_ms);
    out.buckets = arbor_store::usage::buckets(&spends(s), None, true);
    out.texts = texts(s);
    if out.created_ms.is_none() {
        out.created_ms = s.nodes.iter().map(|n| n.timestamp_ms).find(|t| *t > 0);
    }
    out
}

/// Whether a user text is context the agent injected rather than what the person typed
/// (Codex's `<environment_context>`, `<user_instructions>` and AGENTS.md messages): not the
/// first message a listing shows.
fn injected(agent: Agent, t: &str) -> bool {
    let t = t.trim_start();
    agent == Agent::Codex
        && (t.starts_with("<environment_context>")
            || t.starts_with("<user_instructions>")
            || t.starts_with("# AGENTS.md instructions"))
}

/// Every reply's usage as `arbor stats` counts a pi session's (`arbor_store::usage::Spend`):
/// its time, `provider/model`, whether it is on the path to the last node (the leaf a resume
/// continues), its tokens, and its dollars: the agent's own (opencode), else the price table's
/// estimate ([`price_of`]; 0 for a model the table lacks). Usage is the readers': counted once
/// per Claude `message.id`, per Codex `token_count`.
pub fn spends(s: &Session) -> Vec<arbor_store::usage::Spend> {
    use arbor_store::usage::{Spend, Tokens};
    let mut on_path = vec![false; s.nodes.len()];
    if !s.nodes.is_empty() {
        for i in s.path_to(s.nodes.len() - 1) {
            on_path[i] = true;
        }
    }
    let mut out = Vec::new();
    for (i, n) in s.nodes.iter().enumerate() {
        let NodeKind::Assistant(a) = &n.kind else {
            continue;
        };
        let u = &a.usage;
        if u.input + u.output + u.cache_read + u.cache_write == 0 && u.cost.is_none() {
            continue;
        }
        let cost = u
            .cost
            .or_else(|| price_of(&a.model).map(|p| p.cost(u)))
            .unwrap_or(0.0);
        out.push(Spend {
            entry_id: Some(n.key.clone()),
            timestamp: (n.timestamp_ms > 0)
                .then(|| arbor_core::time::format_iso_ms(n.timestamp_ms)),
            model: format!("{}/{}", a.provider, a.model),
            on_path: on_path[i],
            side: false,
            tokens: Tokens {
                input: u.input as f64,
                output: u.output as f64,
                cache_read: u.cache_read as f64,
                cache_write: u.cache_write as f64,
                cost,
            },
        });
    }
    out
}

/// The texts of `parts`, joined by a space.
fn text_of(parts: &[Part]) -> String {
    let mut t = String::new();
    for p in parts {
        if let Part::Text(x) = p {
            if !t.is_empty() {
                t.push(' ');
            }
            t.push_str(x);
        }
    }
    t
}

/// One model's published prices, dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Price {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens read from the cache.
    pub cache_read: f64,
    /// Tokens written to the cache.
    pub cache_write: f64,
}

impl Price {
    /// The dollars of `u` at these prices.
    pub fn cost(&self, u: &crate::model::Usage) -> f64 {
        (u.input as f64 * self.input
            + u.output as f64 * self.output
            + u.cache_read as f64 * self.cache_read
            + u.cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// The price table kept in the repository (`crates/arbor-agents/data/prices.json`: its
/// sources and their date are in the file).
pub const PRICES_JSON: &str = include_str!("../data/prices.json");

/// The table's models and prices, read once.
fn table() -> &'static Vec<(String, Price)> {
    static TABLE: OnceLock<Vec<(String, Price)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let v: serde_json::Value = serde_json::from_str(PRICES_JSON).unwrap_or_default();
        let mut out = Vec::new();
        if let Some(models) = v.get("models").and_then(|m| m.as_object()) {
            for (name, p) in models {
                let f = |k: &str| p.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
                out.push((
                    name.clone(),
                    Price {
                        input: f("input"),
                        output: f("output"),
                        cache_read: f("cache_read"),
                        cache_write: f("cache_write"),
                    },
                ));
            }
        }
        out
    })
}

/// The price of `model`: the table's entry of that exact id, or of the id without a
/// `-YYYYMMDD` date at its end (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`); `None`
/// when the table has none (never a guess from a similar name: `gpt-5.5-codex` is not
/// `gpt-5`).
pub fn price_of(model: &str) -> Option<Price> {
    let t = table();
    let find = |m: &str| t.iter().find(|(n, _)| n == m).map(|(_, p)| *p);
    if let Some(p) = find(model) {
        return Some(p);
    }
    let (base, date) = model.rsplit_once('-')?;
    (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()))
        .then(|| find(base))
        .flatten()
}

/// The date the price table was compiled (`sources[].compiled`, the first), for a note beside
/// estimated costs.
pub fn price_table_date() -> String {
    serde_json::from_str::<serde_json::Value>(PRICES_JSON)
        .ok()
        .and_then(|v| v["sources"][0]["compiled"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Whether `agent` records dollars itself (opencode); the others' costs are estimated.
pub fn records_cost(agent: Agent) -> bool {
    agent == Agent::Opencode
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The note beside estimated costs names the day the table was compiled: a key renamed in
    /// the file must not leave the note with "()".
    #[test]
    fn the_table_says_when_it_was_compiled() {
        let d = price_table_date();
        assert!(
            arbor_core::time::parse_iso_ms(&d).is_some(),
            "a date, not {d:?}"
        );
    }

    #[test]
    fn the_table_reads_and_matches_dated_ids_only() {
        assert!(table().len() >= 10, "the table parses");
        let s = price_of("claude-sonnet-4-5-20250929").expect("dated id");
        assert_eq!(
            (s.input, s.output, s.cache_read, s.cache_write),
            (3.0, 15.0, 0.3, 3.75)
        );
        assert_eq!(price_of("claude-sonnet-4-5"), Some(s));
        assert!(
            price_of("gpt-5.5-codex").is_none(),
            "no guess from a prefix"
        );
        assert!(price_of("claude-sonnet-4-5-x").is_none());
        assert!(price_of("<synthetic>").is_none());
        let u = crate::model::Usage {
            input: 1_000_000,
            output: 1_000_000,
            cache_read: 1_000_000,
            cache_write: 1_000_000,
            cost: None,
        };
        assert!((s.cost(&u) - 22.05).abs() < 1e-9);
    }
}
