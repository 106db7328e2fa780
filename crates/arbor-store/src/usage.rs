//! Token and cost accounting that knows the tree: what each session spent on the path it
//! resumes and on the branches it left, with the entries a fork copied from its parent counted
//! once.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::json::JsValue;
use std::collections::{HashMap, HashSet};

/// Tokens and cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tokens {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
    /// Cost (the `usage.cost.total` the agent recorded).
    pub cost: f64,
}

impl Tokens {
    /// Adds `o`.
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
    }

    fn of(u: &JsValue) -> Tokens {
        let n = |v: Option<&JsValue>| match v {
            Some(JsValue::Number(x)) if x.is_finite() => *x,
            _ => 0.0,
        };
        Tokens {
            input: n(u.get("input")),
            output: n(u.get("output")),
            cache_read: n(u.get("cacheRead")),
            cache_write: n(u.get("cacheWrite")),
            cost: n(u.get("cost").and_then(|c| c.get("total"))),
        }
    }
}

/// One usage record of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    /// The entry's id.
    pub entry_id: Option<String>,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// `provider/model`.
    pub model: String,
    /// On the path from the leaf to the root (the branch pi resumes).
    pub on_path: bool,
    /// A pi 1.5 `usage` entry (compaction, branch summary, title...) rather than a turn.
    pub side: bool,
    /// What it spent.
    pub tokens: Tokens,
}

/// Every usage record of `doc`: assistant messages' `usage` and pi 1.5's `usage` entries.
pub fn spends(doc: &SessionDoc) -> Vec<Spend> {
    let mut on_path = vec![false; doc.entries().len()];
    if let Some(l) = doc.index().leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let mut out = Vec::new();
    for (i, e) in doc.entries().iter().enumerate() {
        let line = doc.line(&e.line);
        let (usage, model, side) = match (&e.etype, e.role.as_ref()) {
            (EntryType::Message, Some(Role::Assistant)) => {
                let Some(m) = e.message.as_ref() else {
                    continue;
                };
                let Some(u) = m.value(line, "usage") else {
                    continue;
                };
                let model = format!(
                    "{}/{}",
                    m.str(line, "provider").unwrap_or_default(),
                    m.str(line, "model").unwrap_or_default()
                );
                (u, model, false)
            }
            (EntryType::Usage, _) => {
                let Some(u) = e.fields.value(line, "usage") else {
                    continue;
                };
                let model = format!(
                    "{}/{}",
                    e.fields.str(line, "provider").unwrap_or_default(),
                    e.fields.str(line, "model").unwrap_or_default()
                );
                (u, model, true)
            }
            _ => continue,
        };
        out.push(Spend {
            entry_id: e.id.as_deref().map(str::to_string),
            timestamp: e.timestamp.as_deref().map(str::to_string),
            model,
            on_path: on_path[i],
            side,
            tokens: Tokens::of(&usage),
        });
    }
    out
}

/// What makes two spends the same turn: the entry's id and timestamp.
type SpendKey = (Option<String>, Option<String>);

/// A session to count: its file, its `parentSession`, its spends.
pub type Counted = (std::path::PathBuf, Option<String>, Vec<Spend>);

/// The sessions to count, each with its spends; `drop_fork_copies` removes from each session
/// the spends its parent session (by `parentSession`, among these) already holds (same entry
/// id and timestamp): a fork's copy of its parent's turns is counted once, in the parent.
/// Returns how many spends were dropped.
pub fn drop_fork_copies(
    sessions: &mut [(std::path::PathBuf, Option<String>, Vec<Spend>)],
) -> usize {
    let keys: HashMap<String, HashSet<SpendKey>> = sessions
        .iter()
        .map(|(p, _, s)| {
            let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            (
                canon.to_string_lossy().into_owned(),
                s.iter()
                    .map(|x| (x.entry_id.clone(), x.timestamp.clone()))
                    .collect(),
            )
        })
        .collect();
    let mut dropped = 0;
    for (_, parent, spends) in sessions.iter_mut() {
        let Some(parent) = parent else { continue };
        let canon = std::fs::canonicalize(&*parent)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|_| parent.clone());
        let Some(theirs) = keys.get(&canon) else {
            continue;
        };
        let before = spends.len();
        spends.retain(|s| !theirs.contains(&(s.entry_id.clone(), s.timestamp.clone())));
        dropped += before - spends.len();
    }
    dropped
}
