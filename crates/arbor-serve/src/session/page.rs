//! The conversation page: a window of the shown branch's entries as the HTML export renders
//! them ([`arbor_view::html_entries`]), each with links to the context the model saw there
//! and, for an assistant message, its turn's tokens and cost; the tree beside it as the
//! outline `arbor tree` draws ([`arbor_view::agent::outline`]), the shown branch marked, each
//! entry a deep link, each leaf a branch to switch to. Earlier (and later) parts of a long
//! branch load on demand: a link that works without the script, and `session.js` fetching
//! the same part as a fragment.
use super::load::Loaded;
use crate::layout::esc;
use crate::App;
use arbor_core::entry::EntryType;
use std::fmt::Write as _;

/// How many entries a part of the conversation holds.
pub const WINDOW: usize = 40;

/// The most outline lines drawn (a larger tree says how many more there are).
pub const OUTLINE_MAX: usize = 2000;

/// What a conversation page shows: a branch (its leaf), a window of its path, the entry a
/// deep link names.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The leaf whose branch is shown.
    pub leaf: Option<usize>,
    /// The path from the root to `leaf`.
    pub path: std::sync::Arc<Vec<usize>>,
    /// The window: `path[start..end]`.
    pub start: usize,
    /// The window's end (exclusive).
    pub end: usize,
    /// The entry a deep link names.
    pub target: Option<usize>,
}

impl Shown {
    /// The branch to `leaf` (the session's current leaf when `None`), the window ending at
    /// `at` (the branch's end when `None`), or around `target`.
    pub fn new(l: &Loaded, leaf: Option<usize>, at: Option<usize>, target: Option<usize>) -> Shown {
        let doc = &l.doc;
        let leaf = leaf.or(doc.index().leaf);
        let path = leaf.map(|x| l.path_to(x)).unwrap_or_default();
        let n = path.len();
        let end = match (at, target.and_then(|t| path.iter().position(|&p| p == t))) {
            (Some(a), _) => a.min(n),
            (None, Some(pos)) => (pos + WINDOW / 2).min(n).max(pos + 1),
            (None, None) => n,
        };
        let start = end.saturating_sub(WINDOW);
        Shown {
            leaf,
            path,
            start,
            end,
            target,
        }
    }
}

/// The id of entry `i` (empty when it has none).
pub fn id_of(l: &Loaded, i: usize) -> String {
    l.doc.entries()[i].id.as_deref().unwrap_or("").to_string()
}

/// A session id or entry id in a URL path: the page shell's one URL encoder.
pub use crate::layout::seg;

/// Entries `entries` of the session, each as the export renders it followed by its links
/// (context, tokens and cost of an assistant turn).
pub fn entries_html(app: &App, sid: &str, l: &Loaded, entries: &[usize]) -> String {
    let opts = l.export_opts();
    let mut out = String::new();
    for &i in entries {
        let mut buf = Vec::new();
        let prefix = format!("e{i}-");
        if let Err(e) = arbor_view::html_entries(&l.doc, &[i], &prefix, &opts, &mut buf) {
            let _ = write!(
                out,
                "<p class=\"err\">entry {}: {}</p>",
                esc(&id_of(l, i)),
                esc(&app.redact(&e.to_string()))
            );
            continue;
        }
        out.push_str(&String::from_utf8_lossy(&buf));
        out.push_str(&entry_tools(sid, l, i));
    }
    out
}

/// The line under an entry: the context at it, and an assistant turn's tokens and cost
/// (its `usage`, as `arbor stats` counts it).
fn entry_tools(sid: &str, l: &Loaded, i: usize) -> String {
    let doc = &l.doc;
    let e = &doc.entries()[i];
    let id = id_of(l, i);
    let mut s = format!(
        "<p class=\"etools\"><a href=\"/session/{}/context/{}\">context here</a>",
        seg(sid),
        seg(&id)
    );
    if e.etype == EntryType::Message && e.role == Some(arbor_core::entry::Role::Assistant) {
        if let Some(u) = e
            .message
            .as_ref()
            .and_then(|m| m.value(doc.line(&e.line), "usage"))
        {
            let t = arbor_view::usage::Tokens::of(&u);
            let _ = write!(
                s,
                " · <span class=\"cost\" title=\"this turn's usage\">{:.0} in · {:.0} out · {:.0} cache read · {:.0} cache write · ${:.4}</span>",
                t.input, t.output, t.cache_read, t.cache_write, t.cost
            );
        }
    }
    s.push_str("</p>\n");
    s
}

/// The link that loads the part of the branch before `shown.start`.
pub fn earlier_link(sid: &str, l: &Loaded, shown: &Shown) -> String {
    if shown.start == 0 {
        return String::new();
    }
    let leaf = shown.leaf.map(|x| id_of(l, x)).unwrap_or_default();
    format!(
        "<p class=\"more earlier\"><a href=\"/session/{s}/leaf/{lf}?at={a}\" data-part=\"/session/{s}/part?leaf={lf}&amp;at={a}\">Load {n} earlier entries ({a} before these)</a></p>\n",
        s = seg(sid),
        lf = seg(&leaf),
        a = shown.start,
        n = shown.start.min(WINDOW),
    )
}

/// The link to the part after `shown.end` (a deep link's window ends before the leaf).
pub fn later_link(sid: &str, l: &Loaded, shown: &Shown) -> String {
    if shown.end >= shown.path.len() {
        return String::new();
    }
    let leaf = shown.leaf.map(|x| id_of(l, x)).unwrap_or_default();
    format!(
        "<p class=\"more later\"><a href=\"/session/{}/leaf/{}?at={}\">Later entries ({} after these)</a></p>\n",
        seg(sid),
        seg(&leaf),
        (shown.end + WINDOW).min(shown.path.len()),
        shown.path.len() - shown.end
    )
}

/// The tree as an outline: the shown branch marked, entries linking to their branch at
/// themselves, leaves to switch to.
pub fn outline_html(app: &App, sid: &str, l: &Loaded, shown: &Shown) -> String {
    let doc = &l.doc;
    let o = l.outline(OUTLINE_MAX);
    let on: std::collections::HashSet<&str> = shown
        .path
        .iter()
        .filter_map(|&i| doc.entries()[i].id.as_deref())
        .collect();
    let mut s = format!(
        "<nav class=\"outline\" aria-label=\"tree\"><h2>Tree</h2><p class=\"muted\">{} entries · {} branch points · {} leaves</p><ul>",
        o.entries, o.branch_points, o.leaves
    );
    for n in &o.nodes {
        let mut class = vec![format!("d{}", n.depth.min(12))];
        if n.branch_start {
            class.push("bstart".into());
        }
        let text = esc(&app.redact(&n.text));
        let _ = write!(s, "<li class=\"{}", class.join(" "));
        match &n.entry_id {
            Some(id) => {
                let here = on.contains(id.as_str());
                if here {
                    s.push_str(" on");
                }
                let _ = write!(
                    s,
                    "\"><a href=\"/session/{sid}/entry/{e}#{e}\"{cur}>{text}</a>",
                    sid = seg(sid),
                    e = seg(id),
                    cur = if here { " aria-current=\"true\"" } else { "" },
                );
                if let Some(label) = &n.label {
                    let _ = write!(
                        s,
                        " <span class=\"label\">{}</span>",
                        esc(&app.redact(label))
                    );
                }
                if let Some(b) = n.branches {
                    let _ = write!(s, " <span class=\"muted\">({b} branches)</span>");
                }
                if n.leaf {
                    if shown.leaf.is_some_and(|x| id_of(l, x) == *id) {
                        s.push_str(" <span class=\"shown\">◂ shown</span>");
                    } else {
                        let _ = write!(
                            s,
                            " <a class=\"switch\" href=\"/session/{}/leaf/{}\">▸ branch</a>",
                            seg(sid),
                            seg(id)
                        );
                    }
                    if n.current_leaf {
                        s.push_str(" <span class=\"muted\">(current)</span>");
                    }
                }
            }
            None => {
                if n.entry_id.is_none() && n.on_current_path {
                    s.push_str(" on");
                }
                let _ = write!(s, " fold\"><span class=\"muted\">{text}</span>");
            }
        }
        s.push_str("</li>");
    }
    s.push_str("</ul>");
    if o.total_nodes > o.nodes.len() {
        let _ = write!(
            s,
            "<p class=\"muted\">{} more lines (<code>arbor tree</code> draws them all)</p>",
            o.total_nodes - o.nodes.len()
        );
    }
    s.push_str("</nav>");
    s
}

/// The session's title as its pages show it (the shown branch's, redacted; the id when it
/// has none).
pub fn title(app: &App, sid: &str, l: &Loaded, shown: &Shown) -> String {
    let title = arbor_view::title_of(&l.doc, &shown.path, l.redacted().then_some(&l.redactions));
    let title = app.redact(&title).into_owned();
    if title.trim().is_empty() {
        sid.to_string()
    } else {
        title
    }
}

/// The header of a session's pages: title, id, directory, dialect, totals, the tabs.
pub fn head_html(app: &App, sid: &str, l: &Loaded, shown: &Shown, tab: &str) -> String {
    let doc = &l.doc;
    let tab_link = |name: &str, href: String, label: &str| {
        format!(
            "<a href=\"{}\"{}>{}</a>",
            href,
            if name == tab {
                " aria-current=\"page\""
            } else {
                ""
            },
            label
        )
    };
    let agent = match &l.foreign {
        Some(r) => r.agent.to_string(),
        None if doc.dialect() == arbor_core::Dialect::Omp => "omp".into(),
        None => "pi".into(),
    };
    // Another agent's session: read only, and how to make a pi session of it.
    let foreign = l
        .foreign
        .as_ref()
        .map(|r| {
            format!(
                "<p class=\"foreign\">{}'s session, read only (arbor never writes into it). To continue it in pi, import it: <code>{}</code></p>",
                esc(&r.agent.to_string()),
                esc(&r.import_command())
            )
        })
        .unwrap_or_default();
    format!(
        "<header class=\"s-head\"><h1>{}</h1><p class=\"muted\">{} · {} · {} · {} entries</p>{foreign}<nav class=\"tabs\">{} {} {}</nav></header>",
        esc(&title(app, sid, l, shown)),
        esc(sid),
        esc(&app.redact(&doc.header_str("cwd").unwrap_or_default())),
        esc(&agent),
        doc.entries().len(),
        tab_link("conv", format!("/session/{}", seg(sid)), "Conversation"),
        tab_link("calls", format!("/session/{}/calls", seg(sid)), "Tool calls"),
        tab_link("edits", format!("/session/{}/edits", seg(sid)), "File edits"),
    )
}

/// The whole conversation page's body.
pub fn conversation(app: &App, sid: &str, l: &Loaded, shown: &Shown, writes: &str) -> String {
    let window = &shown.path[shown.start..shown.end];
    format!(
        "<main class=\"session\">{head}{writes}<div class=\"s-grid\">{outline}<div class=\"conv\" id=\"conv\">{earlier}{entries}{later}<p class=\"live-note\" id=\"live-note\" hidden></p></div></div></main>",
        head = head_html(app, sid, l, shown, "conv"),
        outline = outline_html(app, sid, l, shown),
        earlier = earlier_link(sid, l, shown),
        entries = entries_html(app, sid, l, window),
        later = later_link(sid, l, shown),
    )
}

/// Where in `path` (a branch's entries, root first) the live updates go on after: its last
/// entry, but for another agent's session the last before its title. The conversion places
/// the title (a `session_info` entry) after the session's last entry, so a grown source read
/// again has it after the new entries: it is shown after them again, not anchored.
pub fn anchor(l: &Loaded, path: &[usize]) -> Option<usize> {
    let title =
        |i: usize| l.foreign.is_some() && l.doc.entries()[i].etype == EntryType::SessionInfo;
    path.iter()
        .rposition(|&i| !title(i))
        .or_else(|| path.len().checked_sub(1))
}

/// The `<body>` attributes `session.js` reads: the session, the shown leaf, whether the
/// page shows the branch's end (live updates append there; elsewhere they are counted), the
/// entry the live updates go on after ([`anchor`]) and its version
/// ([`super::events::version`]), the file's length read, the deep link's entry.
pub fn body_attrs(sid: &str, l: &Loaded, shown: &Shown) -> String {
    let leaf = shown.leaf.map(|x| id_of(l, x)).unwrap_or_default();
    let target = shown.target.map(|x| id_of(l, x)).unwrap_or_default();
    let after = anchor(l, &shown.path).map(|k| shown.path[k]);
    format!(
        "data-session=\"{}\" data-leaf=\"{}\" data-at-end=\"{}\" data-after=\"{}\" data-version=\"{}\" data-len=\"{}\" data-target=\"{}\"",
        esc(sid),
        esc(&leaf),
        shown.end >= shown.path.len(),
        esc(&after.map(|i| id_of(l, i)).unwrap_or_default()),
        after.map(|i| super::events::version(l, i)).unwrap_or_default(),
        l.len,
        esc(&target)
    )
}

#[cfg(test)]
mod tests {
    use super::{seg, Shown, WINDOW};
    use crate::session::load::Loaded;

    fn loaded(n: usize) -> Loaded {
        let mut jsonl = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        jsonl.push('\n');
        for k in 0..n {
            let parent = if k == 0 {
                "null".to_string()
            } else {
                format!("\"e{}\"", k - 1)
            };
            jsonl.push_str(&format!(
                r#"{{"type":"message","id":"e{k}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"m{k}","timestamp":1}}}}"#
            ));
            jsonl.push('\n');
        }
        let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.into_bytes()))
            .expect("a session");
        Loaded::for_test(doc)
    }

    #[test]
    fn a_window_ends_at_the_leaf_or_holds_the_deep_links_entry() {
        let l = loaded(100);
        let s = Shown::new(&l, None, None, None);
        assert_eq!((s.start, s.end, s.path.len()), (100 - WINDOW, 100, 100));
        // A part asked by its end.
        let s = Shown::new(&l, None, Some(30), None);
        assert_eq!((s.start, s.end), (0, 30));
        // Around an entry: it is inside, half a window before the end.
        let t = l.doc.index().get("e10").expect("e10");
        let s = Shown::new(&l, None, None, Some(t));
        assert!(s.start <= 10 && 10 < s.end, "{} {}", s.start, s.end);
        assert_eq!(s.end, 10 + WINDOW / 2);
        // Short: everything.
        let l = loaded(3);
        let s = Shown::new(&l, None, None, None);
        assert_eq!((s.start, s.end), (0, 3));
    }

    #[test]
    fn ids_in_urls_keep_only_plain_characters() {
        assert_eq!(seg("ab-12_x.y"), "ab-12_x.y");
        assert_eq!(seg("a/b?c#d\"e"), "a%2Fb%3Fc%23d%22e");
    }
}
