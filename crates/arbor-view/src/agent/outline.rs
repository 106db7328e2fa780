//! The tree as a compact outline: [`chains`] cuts it into chains of single-child entries in
//! drawing order, [`chain_lines`] folds each chain's machinery (the one folding `arbor tree`
//! draws), [`outline`] makes both into data for an agent.
//!
//! Unless `full`, the machinery between the conversation's turns (tool results, assistant
//! turns without text, model and thinking changes, custom entries) is folded into one line
//! with its counts, and a long run of turns inside a chain keeps its first and last three
//! around such a fold. Never folded: the first and last entry of a chain, the leaf, labelled
//! entries, compactions, branch summaries, names, context edits and system messages.
use super::id_of;
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::tree::Tree;

/// Turns shown at each end of a long run before the middle is folded.
const RUN_ENDS: usize = 3;
/// A run longer than this is folded in the middle.
const RUN_MAX: usize = 2 * RUN_ENDS + 2;

/// What a line of the view shows for an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weight {
    /// Always its own line.
    Landmark,
    /// A turn of the conversation: its own line unless deep inside a long run.
    Turn,
    /// Machinery: folded unless `full`.
    Machinery,
}

fn weight(doc: &SessionDoc, i: usize) -> Weight {
    let e = &doc.entries()[i];
    match e.etype {
        EntryType::Compaction
        | EntryType::BranchSummary
        | EntryType::SessionInfo
        | EntryType::ContextEdit => Weight::Landmark,
        EntryType::Message => match e.role {
            Some(Role::User) => Weight::Turn,
            Some(Role::System) => Weight::Landmark,
            Some(Role::Assistant) => {
                let line = doc.line(&e.line);
                let has_text = e
                    .message
                    .as_ref()
                    .and_then(|m| m.get(line, "content"))
                    .is_some_and(|(raw, kind)| {
                        kind == arbor_core::json::ValueKind::String
                            || memchr::memmem::find(raw, br#""type":"text""#).is_some()
                    });
                if has_text {
                    Weight::Turn
                } else {
                    Weight::Machinery
                }
            }
            _ => Weight::Machinery,
        },
        _ => Weight::Machinery,
    }
}

/// A word for what a folded entry is, for the fold line's counts.
fn kind_word(doc: &SessionDoc, i: usize) -> &'static str {
    let e = &doc.entries()[i];
    match (&e.etype, e.role.as_ref()) {
        (EntryType::Message, Some(&Role::User)) => "user",
        (EntryType::Message, Some(&Role::Assistant)) => "assistant",
        (EntryType::Message, Some(&Role::ToolResult)) => "tool result",
        (EntryType::Message, Some(&Role::BashExecution)) => "bash",
        (EntryType::Message, _) => "message",
        (EntryType::ModelChange, _) => "model change",
        (EntryType::ThinkingLevelChange, _) => "thinking change",
        (EntryType::Label, _) => "label",
        (EntryType::Custom, _) | (EntryType::CustomMessage, _) => "custom",
        _ => "other",
    }
}

/// What a fold holds: `N entries (5 tool result, 3 assistant, 1 model change, …)`, the three
/// commonest kinds.
pub fn fold_text(doc: &SessionDoc, folded: &[usize]) -> String {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for &i in folded {
        let w = kind_word(doc, i);
        match counts.iter_mut().find(|(k, _)| *k == w) {
            Some(c) => c.1 += 1,
            None => counts.push((w, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let what: Vec<String> = counts
        .iter()
        .take(3)
        .map(|(k, c)| format!("{c} {k}"))
        .collect();
    format!(
        "{} {} ({}{})",
        folded.len(),
        if folded.len() == 1 {
            "entry"
        } else {
            "entries"
        },
        what.join(", "),
        if counts.len() > 3 { ", …" } else { "" }
    )
}

/// One chain of the tree: entries that each have one child, then the last (a tip or a
/// branch point), drawn at one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The entries, root side first.
    pub entries: Vec<usize>,
    /// The chain it hangs from (`None`: a root).
    pub parent: Option<usize>,
    /// Drawn with a branch connector (a branch point's child, or one of several roots);
    /// otherwise it continues its parent's column (a child left alone because its siblings
    /// were drawn elsewhere, reused ids).
    pub branch: bool,
    /// The last of its siblings.
    pub last: bool,
    /// Branch points above it.
    pub depth: usize,
}

/// The tree's chains in drawing order (depth first, children in pi's order).
pub fn chains(tree: &Tree, n: usize) -> Vec<Chain> {
    let mut seen = vec![false; n];
    let mut out: Vec<Chain> = Vec::new();
    // (start, parent, branch, last, depth)
    let mut stack: Vec<(usize, Option<usize>, bool, bool, usize)> = Vec::new();
    let roots = &tree.roots;
    for (k, &r) in roots.iter().enumerate().rev() {
        let several = roots.len() > 1;
        stack.push((r, None, several, k + 1 == roots.len(), usize::from(several)));
    }
    while let Some((start, parent, branch, last, depth)) = stack.pop() {
        if seen.get(start).copied().unwrap_or(true) {
            continue;
        }
        let mut entries = vec![start];
        let mut at = start;
        seen[at] = true;
        while let [only] = tree.children[at][..] {
            if seen[only] {
                break;
            }
            seen[only] = true;
            entries.push(only);
            at = only;
        }
        let me = out.len();
        out.push(Chain {
            entries,
            parent,
            branch,
            last,
            depth,
        });
        let kids: Vec<usize> = tree.children[at]
            .iter()
            .copied()
            .filter(|&k| !seen[k])
            .collect();
        if kids.len() == 1 {
            stack.push((kids[0], Some(me), false, last, depth));
            continue;
        }
        for (k, &kid) in kids.iter().enumerate().rev() {
            stack.push((kid, Some(me), true, k + 1 == kids.len(), depth + 1));
        }
    }
    out
}

/// A line of a chain: an entry, or a fold of several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainLine {
    /// An entry shown on its own line.
    Entry(usize),
    /// Entries folded into one line ([`fold_text`]).
    Fold(Vec<usize>),
}

fn landmark(doc: &SessionDoc, i: usize, chain: &[usize]) -> bool {
    let e = &doc.entries()[i];
    i == chain[0]
        || Some(&i) == chain.last()
        || Some(i) == doc.index().leaf
        || e.id
            .as_deref()
            .is_some_and(|id| doc.index().labels.get(id).is_some())
        || weight(doc, i) == Weight::Landmark
}

/// The lines of a chain: every entry when `full`, otherwise machinery folded between the
/// shown entries and a long run of turns folded in its middle.
pub fn chain_lines(doc: &SessionDoc, chain: &[usize], full: bool) -> Vec<ChainLine> {
    if full || chain.is_empty() {
        return chain.iter().map(|&i| ChainLine::Entry(i)).collect();
    }
    // Pass 1: machinery folded between shown entries.
    let mut shown: Vec<ChainLine> = Vec::new();
    for &i in chain {
        if landmark(doc, i, chain) || weight(doc, i) == Weight::Turn {
            shown.push(ChainLine::Entry(i));
        } else if let Some(ChainLine::Fold(v)) = shown.last_mut() {
            v.push(i);
        } else {
            shown.push(ChainLine::Fold(vec![i]));
        }
    }
    // Pass 2: a long run of turns between landmarks keeps its ends.
    let mut out: Vec<ChainLine> = Vec::new();
    let mut run: Vec<ChainLine> = Vec::new();
    let flush = |run: &mut Vec<ChainLine>, out: &mut Vec<ChainLine>| {
        let turns = run
            .iter()
            .filter(|l| matches!(l, ChainLine::Entry(_)))
            .count();
        if turns <= RUN_MAX {
            out.append(run);
            return;
        }
        // `t`: turns up to here. A turn is kept in the first or last RUN_ENDS; a fold of
        // machinery is kept between two kept turns.
        let mut t = 0;
        let mut middle: Vec<usize> = Vec::new();
        for l in run.drain(..) {
            let keep = match l {
                ChainLine::Entry(_) => {
                    t += 1;
                    t <= RUN_ENDS || t > turns - RUN_ENDS
                }
                ChainLine::Fold(_) => t < RUN_ENDS || t > turns - RUN_ENDS,
            };
            if keep {
                if !middle.is_empty() {
                    out.push(ChainLine::Fold(std::mem::take(&mut middle)));
                }
                out.push(l);
            } else {
                match l {
                    ChainLine::Entry(i) => middle.push(i),
                    ChainLine::Fold(v) => middle.extend(v),
                }
            }
        }
        if !middle.is_empty() {
            out.push(ChainLine::Fold(middle));
        }
    };
    for l in shown {
        let is_landmark = matches!(l, ChainLine::Entry(i) if landmark(doc, i, chain));
        if is_landmark {
            flush(&mut run, &mut out);
            out.push(l);
        } else {
            run.push(l);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// What [`outline`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlineOpts {
    /// Every entry its own node (`arbor tree --full`); otherwise folded.
    pub full: bool,
    /// The first node made (the ones before are counted, not made).
    pub start: usize,
    /// At most this many nodes made from `start` on (the others are counted).
    pub limit: usize,
}

impl Default for OutlineOpts {
    /// Folded, every node.
    fn default() -> Self {
        OutlineOpts {
            full: false,
            start: 0,
            limit: usize::MAX,
        }
    }
}

/// One line of an outline: an entry, or a fold of several.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OutlineNode {
    /// Branch points above it (0 on the trunk).
    pub depth: usize,
    /// The entry's id (none for a fold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// The entry's type (`message`, `compaction`, `branch_summary`, `label`, ...), or `fold`.
    pub kind: String,
    /// What it is, one line: `user: fix the bug`, `compaction: …`, or for a fold
    /// `12 entries (5 tool result, 4 assistant, 3 bash)`.
    pub text: String,
    /// The entry starts a branch (the first of a branch point's children).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub branch_start: bool,
    /// How many children it has when it is a branch point (more than one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<usize>,
    /// It has no children: a leaf.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leaf: bool,
    /// It is the session's current leaf.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub current_leaf: bool,
    /// It is on the path from the root to the current leaf.
    pub on_current_path: bool,
    /// Its label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The entries a fold holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded: Option<usize>,
}

/// A session's tree as an outline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Outline {
    /// The current leaf's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_leaf: Option<String>,
    /// Entries in the tree.
    pub entries: usize,
    /// Entries with more than one child.
    pub branch_points: usize,
    /// Entries without children.
    pub leaves: usize,
    /// Entries not reachable from a root (parentId cycles, reused ids), left out.
    pub unreachable: usize,
    /// How many lines the whole outline has.
    pub total_nodes: usize,
    /// The lines asked for ([`OutlineOpts::start`] and `limit`), in drawing order (depth
    /// first; a branch's lines follow its branch point).
    pub nodes: Vec<OutlineNode>,
}

/// The tree of `doc` as an outline: the lines `arbor tree` draws, as data (the text of those
/// asked for only: a page of a large tree costs its lines, not the tree's).
///
/// ```
/// let jsonl = concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
///     r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"one way","timestamp":2}}"#, "\n",
///     r#"{"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"other way","timestamp":3}}"#, "\n",
/// );
/// let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec())).unwrap();
/// let o = arbor_view::agent::outline(&doc, &arbor_view::agent::OutlineOpts::default());
/// assert_eq!((o.branch_points, o.leaves), (1, 2));
/// assert_eq!(o.nodes[0].branches, Some(2));
/// assert!(o.nodes[2].current_leaf);
/// ```
pub fn outline(doc: &SessionDoc, opts: &OutlineOpts) -> Outline {
    let n = doc.entries().len();
    let tree = doc.index().tree(doc);
    let leaf = doc.index().leaf;
    let mut on_path = vec![false; n];
    if let Some(l) = leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let mut nodes = Vec::new();
    let mut total = 0usize;
    for chain in chains(&tree, n) {
        for (k, line) in chain_lines(doc, &chain.entries, opts.full)
            .into_iter()
            .enumerate()
        {
            total += 1;
            if total <= opts.start || nodes.len() >= opts.limit {
                continue;
            }
            nodes.push(match line {
                ChainLine::Entry(i) => {
                    let e = &doc.entries()[i];
                    let kids = tree.children[i].len();
                    OutlineNode {
                        depth: chain.depth,
                        entry_id: Some(id_of(doc, i)),
                        kind: e.type_name().to_string(),
                        text: crate::render::one_line(&crate::render::describe(doc, i), 200),
                        branch_start: k == 0 && chain.branch,
                        branches: (kids > 1).then_some(kids),
                        leaf: kids == 0,
                        current_leaf: Some(i) == leaf,
                        on_current_path: on_path[i],
                        label: doc
                            .index()
                            .labels
                            .get_key(&e.key)
                            .map(|l| crate::render::one_line(l, 200)),
                        folded: None,
                    }
                }
                ChainLine::Fold(v) => OutlineNode {
                    depth: chain.depth,
                    entry_id: None,
                    kind: "fold".to_string(),
                    text: fold_text(doc, &v),
                    branch_start: false,
                    branches: None,
                    leaf: false,
                    current_leaf: false,
                    on_current_path: v.iter().any(|&i| on_path[i]),
                    label: None,
                    folded: Some(v.len()),
                },
            });
        }
    }
    let mut unreachable = vec![false; n];
    for &i in &tree.unreachable {
        unreachable[i] = true;
    }
    Outline {
        current_leaf: leaf.map(|l| id_of(doc, l)),
        entries: n - tree.unreachable.len(),
        branch_points: tree.children.iter().filter(|c| c.len() > 1).count(),
        leaves: (0..n)
            .filter(|&i| tree.children[i].is_empty() && !unreachable[i])
            .count(),
        unreachable: tree.unreachable.len(),
        total_nodes: total,
        nodes,
    }
}
