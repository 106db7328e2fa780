//! `arbor tree` for a person: box-drawing connectors where the tree branches, the current path
//! (root to leaf) marked `●` and the leaf `◀ leaf`, labels in brackets, lines cut to the
//! terminal's width.
//!
//! A chain of entries with one child each is one column; a branch point's children start
//! with `├─`/`└─` and their subtrees hang from `│`. Unless `--full`, the machinery between
//! the conversation's turns (tool results, assistant turns without text, model and thinking
//! changes, custom entries) is folded into one `┊` line with its counts, and a long run of
//! turns inside a chain shows its first and last three around such a line. What is never
//! folded: the first and last entry of a chain, the leaf, labelled entries, compactions,
//! branch summaries, names, context edits and system messages. When the connectors grow past
//! half the width, they give way to the branch depth (`↳7`).
use crate::term::{self, Out, Paint, Term};
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
    /// Machinery: folded unless `--full`.
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

/// One chain of the tree: entries that each have one child, then the last (a tip or a branch
/// point), drawn at one column.
struct Segment {
    start: usize,
    /// Prefix of the segment's first line (ancestors' columns and this branch's connector).
    first: String,
    /// Prefix of the other lines and of the subtrees below.
    rest: String,
    /// Branch points above.
    depth: usize,
}

/// Renders the tree into `out`.
pub fn render_tree(doc: &SessionDoc, tree: &Tree, full: bool, term: &Term, out: &mut Out) {
    let leaf = doc.index().leaf;
    let mut on_path = vec![false; doc.entries().len()];
    if let Some(l) = leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let mut seen = vec![false; doc.entries().len()];
    let mut stack: Vec<Segment> = Vec::new();
    let roots = &tree.roots;
    for (k, &r) in roots.iter().enumerate().rev() {
        let (first, rest) = if roots.len() > 1 {
            connectors("", k + 1 == roots.len())
        } else {
            (String::new(), String::new())
        };
        stack.push(Segment {
            start: r,
            first,
            rest,
            depth: usize::from(roots.len() > 1),
        });
    }
    let view = View {
        doc,
        leaf,
        on_path: &on_path,
        full,
        term,
    };
    while let Some(seg) = stack.pop() {
        // The chain.
        let mut chain = vec![seg.start];
        let mut at = seg.start;
        seen[at] = true;
        while let [only] = tree.children[at][..] {
            if seen[only] {
                break;
            }
            seen[only] = true;
            chain.push(only);
            at = only;
        }
        view.chain(&chain, &seg, out);
        let kids: Vec<usize> = tree.children[at]
            .iter()
            .copied()
            .filter(|&k| !seen[k])
            .collect();
        if kids.len() == 1 {
            // A child already drawn elsewhere (reused ids) left one: draw it as a chain.
            stack.push(Segment {
                start: kids[0],
                first: seg.rest.clone(),
                rest: seg.rest.clone(),
                depth: seg.depth,
            });
            continue;
        }
        for (k, &kid) in kids.iter().enumerate().rev() {
            let (first, rest) = connectors(&seg.rest, k + 1 == kids.len());
            stack.push(Segment {
                start: kid,
                first,
                rest,
                depth: seg.depth + 1,
            });
        }
    }
}

fn connectors(base: &str, last: bool) -> (String, String) {
    if last {
        (format!("{base}└─ "), format!("{base}   "))
    } else {
        (format!("{base}├─ "), format!("{base}│  "))
    }
}

struct View<'a> {
    doc: &'a SessionDoc,
    leaf: Option<usize>,
    on_path: &'a [bool],
    full: bool,
    term: &'a Term,
}

/// A line of a chain: an entry, or a fold of several.
enum Line {
    Entry(usize),
    Fold(Vec<usize>),
}

impl View<'_> {
    fn landmark(&self, i: usize, chain: &[usize]) -> bool {
        let e = &self.doc.entries()[i];
        i == chain[0]
            || Some(&i) == chain.last()
            || Some(i) == self.leaf
            || e.id
                .as_deref()
                .is_some_and(|id| self.doc.index().labels.get(id).is_some())
            || weight(self.doc, i) == Weight::Landmark
    }

    fn lines(&self, chain: &[usize]) -> Vec<Line> {
        if self.full {
            return chain.iter().map(|&i| Line::Entry(i)).collect();
        }
        // Pass 1: machinery folded between shown entries.
        let mut shown: Vec<Line> = Vec::new();
        for &i in chain {
            if self.landmark(i, chain) || weight(self.doc, i) == Weight::Turn {
                shown.push(Line::Entry(i));
            } else if let Some(Line::Fold(v)) = shown.last_mut() {
                v.push(i);
            } else {
                shown.push(Line::Fold(vec![i]));
            }
        }
        // Pass 2: a long run of turns between landmarks keeps its ends.
        let mut out: Vec<Line> = Vec::new();
        let mut run: Vec<Line> = Vec::new();
        let flush = |run: &mut Vec<Line>, out: &mut Vec<Line>| {
            let turns = run.iter().filter(|l| matches!(l, Line::Entry(_))).count();
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
                    Line::Entry(_) => {
                        t += 1;
                        t <= RUN_ENDS || t > turns - RUN_ENDS
                    }
                    Line::Fold(_) => t < RUN_ENDS || t > turns - RUN_ENDS,
                };
                if keep {
                    if !middle.is_empty() {
                        out.push(Line::Fold(std::mem::take(&mut middle)));
                    }
                    out.push(l);
                } else {
                    match l {
                        Line::Entry(i) => middle.push(i),
                        Line::Fold(v) => middle.extend(v),
                    }
                }
            }
            if !middle.is_empty() {
                out.push(Line::Fold(middle));
            }
        };
        for l in shown {
            let is_landmark = matches!(l, Line::Entry(i) if self.landmark(i, chain));
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

    fn chain(&self, chain: &[usize], seg: &Segment, out: &mut Out) {
        let cap = self.term.width / 2;
        let shown_prefix = |p: &str| -> String {
            if term::width(p) > cap {
                format!("↳{} ", seg.depth)
            } else {
                p.to_string()
            }
        };
        for (n, line) in self.lines(chain).into_iter().enumerate() {
            let prefix = shown_prefix(if n == 0 { &seg.first } else { &seg.rest });
            out.paint(Paint::Dim, &prefix);
            match line {
                Line::Entry(i) => self.entry(i, &prefix, out),
                Line::Fold(v) => {
                    let mut counts: Vec<(&'static str, usize)> = Vec::new();
                    for &i in &v {
                        let w = kind_word(self.doc, i);
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
                    let text = format!(
                        "┊ {} {} ({}{})",
                        v.len(),
                        if v.len() == 1 { "entry" } else { "entries" },
                        what.join(", "),
                        if counts.len() > 3 { ", …" } else { "" }
                    );
                    let room = self.term.width.saturating_sub(term::width(&prefix));
                    out.paint(Paint::Dim, &term::fit(&text, room)).nl();
                }
            }
        }
    }

    fn entry(&self, i: usize, prefix: &str, out: &mut Out) {
        let e = &self.doc.entries()[i];
        let path = self.on_path[i];
        let id_text = e.id_text(self.doc.line(&e.line));
        let id: &str = &id_text;
        let label = Some(&e.key)
            .and_then(|k| self.doc.index().labels.get_key(k))
            .map(|l| format!(" [{}]", arbor_view::one_line(l, 40)))
            .unwrap_or_default();
        let leaf_mark = if Some(i) == self.leaf {
            " ◀ leaf"
        } else {
            ""
        };
        let room = self.term.width.saturating_sub(
            term::width(prefix) + 2 + term::width(id) + 1 + term::width(&label) + leaf_mark.len(),
        );
        let desc = term::fit(
            &arbor_view::one_line(&arbor_view::describe(self.doc, i), 500),
            room.max(10),
        );
        out.paint(
            if path { Paint::Current } else { Paint::Dim },
            if path { "●" } else { "○" },
        )
        .put(" ")
        .paint(if path { Paint::Id } else { Paint::Dim }, id)
        .put(" ");
        let style = match (&e.etype, e.role.as_ref()) {
            _ if !path => Paint::Dim,
            (EntryType::Message, Some(&Role::User)) => Paint::User,
            (EntryType::Message, Some(&Role::Assistant)) => Paint::Assistant,
            (EntryType::Compaction | EntryType::BranchSummary, _) => Paint::Summary,
            (EntryType::Message, _) => Paint::Tool,
            _ => Paint::Dim,
        };
        out.paint(style, &desc);
        if !label.is_empty() {
            out.paint(Paint::Label, &label);
        }
        if !leaf_mark.is_empty() {
            out.paint(Paint::Leaf, leaf_mark);
        }
        out.nl();
    }
}
