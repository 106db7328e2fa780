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
use arbor_view::agent::{chain_lines, chains, fold_text, ChainLine};

/// Renders the tree into `out`: the chains and folds of [`arbor_view::agent::chains`] and
/// [`chain_lines`] (the outline `arbor mcp`'s `get_tree` serves), with connectors.
pub fn render_tree(doc: &SessionDoc, tree: &Tree, full: bool, term: &Term, out: &mut Out) {
    let leaf = doc.index().leaf;
    let mut on_path = vec![false; doc.entries().len()];
    if let Some(l) = leaf {
        for i in doc.index().path(doc, l).entries {
            on_path[i] = true;
        }
    }
    let view = View {
        doc,
        leaf,
        on_path: &on_path,
        full,
        term,
    };
    // Each chain's prefix for the lines below its first (its subtrees hang from it).
    let all = chains(tree, doc.entries().len());
    let mut rests: Vec<String> = Vec::with_capacity(all.len());
    for c in &all {
        let base = c.parent.map_or("", |p| rests[p].as_str());
        let (first, rest) = if c.branch {
            connectors(base, c.last)
        } else {
            (base.to_string(), base.to_string())
        };
        view.chain(&c.entries, &first, &rest, c.depth, out);
        rests.push(rest);
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

impl View<'_> {
    fn chain(&self, chain: &[usize], first: &str, rest: &str, depth: usize, out: &mut Out) {
        let cap = self.term.width / 2;
        let shown_prefix = |p: &str| -> String {
            if term::width(p) > cap {
                format!("↳{depth} ")
            } else {
                p.to_string()
            }
        };
        for (n, line) in chain_lines(self.doc, chain, self.full)
            .into_iter()
            .enumerate()
        {
            let prefix = shown_prefix(if n == 0 { first } else { rest });
            out.paint(Paint::Dim, &prefix);
            match line {
                ChainLine::Entry(i) => self.entry(i, &prefix, out),
                ChainLine::Fold(v) => {
                    let text = format!("┊ {}", fold_text(self.doc, &v));
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
