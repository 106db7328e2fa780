//! The tree navigator: one session's tree as lines (connectors where it branches, the current
//! path, labels), pi's five filters, folding, a search within the session, and what the
//! reader pane shows of the selected entry. Appends made by another program while it is
//! shown are read from the byte where the last read stopped.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::json::JsValue;
use arbor_core::tree::Tree;
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// pi's `/tree` filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Hides settings entries (labels, context edits, custom entries, model and thinking
    /// changes, names) and assistant turns with no text that did not fail.
    Default,
    /// Default, and tool results hidden too.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labelled entries only.
    Labeled,
    /// Everything.
    All,
}

impl Filter {
    /// Its name on screen.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Default => "default",
            Filter::NoTools => "no tools",
            Filter::UserOnly => "user only",
            Filter::Labeled => "labelled",
            Filter::All => "all",
        }
    }
    /// The next filter (pi's cycle order).
    pub fn next(self) -> Filter {
        match self {
            Filter::Default => Filter::NoTools,
            Filter::NoTools => Filter::UserOnly,
            Filter::UserOnly => Filter::Labeled,
            Filter::Labeled => Filter::All,
            Filter::All => Filter::Default,
        }
    }
}

/// One line of the tree.
#[derive(Debug, Clone)]
pub struct TreeLine {
    /// The entry.
    pub entry: usize,
    /// Connectors before it.
    pub prefix: String,
    /// It has visible children (a fold can hide them).
    pub foldable: bool,
    /// Its index in the unfolded layout.
    at: usize,
    /// One past the last line of its subtree in the unfolded layout.
    end: usize,
}

/// The lines of `full[from..to]` that folds leave visible.
fn unfolded_run(full: &[TreeLine], from: usize, to: usize, folded: &HashSet<usize>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut k = from;
    while k < to {
        let l = &full[k];
        out.push(k as u32);
        k = if folded.contains(&l.entry) {
            l.end
        } else {
            k + 1
        };
    }
    out
}

/// The navigator's state.
pub struct Navigator {
    /// The session file.
    pub path: PathBuf,
    /// What the header calls the session (its name, else its title in the picker).
    pub title: String,
    /// The session.
    pub doc: SessionDoc,
    tree: Tree,
    /// The visible lines, as indices into `full` (a fold moves indices, not lines).
    shown: Vec<u32>,
    /// Every line, no fold applied.
    full: Vec<TreeLine>,
    /// Selected line.
    pub selected: usize,
    /// First visible line.
    pub offset: usize,
    /// The filter.
    pub filter: Filter,
    /// Folded entries.
    pub folded: HashSet<usize>,
    /// The search within the session.
    pub search: String,
    /// Typing goes to the search.
    pub searching: bool,
    on_path: Vec<bool>,
    read_to: u64,
    /// Another agent's session, read in memory (`path` is its source, only read): its agent
    /// and id. Labels, continue and fork are refused on it; resume imports it first.
    pub foreign: Option<(arbor_agents::Agent, String)>,
}

impl Navigator {
    /// Opens `path`, the cursor on `at` (an entry id) or on the leaf.
    pub fn open(path: &Path, at: Option<&str>) -> anyhow::Result<Navigator> {
        let doc = arbor_store::load_doc(path)?;
        let read_to = doc.complete_len() as u64;
        Ok(Navigator::with_doc(path, doc, read_to, at))
    }

    /// Opens another agent's session `id` of `source` (`path`: the file, opencode's data
    /// directory) in memory, as the pi session `arbor import` would make of it
    /// (`arbor_agents::open_as_doc`: the import's own conversion; nothing is written), the
    /// cursor on its leaf.
    pub fn open_foreign(
        agent: arbor_agents::Agent,
        path: &Path,
        id: &str,
    ) -> anyhow::Result<Navigator> {
        let source = arbor_agents::open::source_of(agent, path, id);
        let opened = arbor_agents::open_as_doc(&source, Some(id))?;
        // Never re-read as a pi file: `refresh` finds nothing past the end.
        let mut n = Navigator::with_doc(path, opened.doc, u64::MAX, None);
        n.foreign = Some((agent, id.to_string()));
        Ok(n)
    }

    fn with_doc(path: &Path, doc: SessionDoc, read_to: u64, at: Option<&str>) -> Navigator {
        let title = doc.session_name().unwrap_or_default();
        let mut n = Navigator {
            path: path.to_path_buf(),
            title,
            tree: doc.index().tree(&doc),
            doc,
            shown: Vec::new(),
            full: Vec::new(),
            selected: 0,
            offset: 0,
            filter: Filter::Default,
            folded: HashSet::new(),
            search: String::new(),
            searching: false,
            on_path: Vec::new(),
            read_to,
            foreign: None,
        };
        n.relayout();
        let target = at
            .and_then(|id| n.doc.index().get(id))
            .or(n.doc.index().leaf);
        if let Some(t) = target {
            n.reveal(t);
        }
        n
    }

    /// The visible line at `pos`.
    pub fn line(&self, pos: usize) -> Option<&TreeLine> {
        self.shown.get(pos).map(|&k| &self.full[k as usize])
    }

    /// The visible lines, in order.
    pub fn iter_lines(&self) -> impl Iterator<Item = &TreeLine> + '_ {
        self.shown.iter().map(|&k| &self.full[k as usize])
    }

    /// The visible position of entry `i`.
    pub fn position_of(&self, i: usize) -> Option<usize> {
        self.shown
            .iter()
            .position(|&k| self.full[k as usize].entry == i)
    }

    /// How many lines are visible.
    pub fn line_count(&self) -> usize {
        self.shown.len()
    }

    /// The selected entry.
    pub fn selected_entry(&self) -> Option<usize> {
        self.line(self.selected).map(|l| l.entry)
    }

    /// Whether `i` is on the path from the root to the leaf.
    pub fn on_path(&self, i: usize) -> bool {
        self.on_path.get(i).copied().unwrap_or(false)
    }

    /// Moves the cursor by `d` lines.
    pub fn move_by(&mut self, d: isize) {
        if self.shown.is_empty() {
            return;
        }
        let n = self.shown.len() as isize;
        self.selected = (self.selected as isize + d).clamp(0, n - 1) as usize;
    }

    /// Keeps the cursor inside `height` visible lines, and the lines filling them: after a
    /// filter or a fold leaves fewer lines, the view does not stay scrolled past them.
    pub fn scroll_to_cursor(&mut self, height: usize) {
        if height == 0 {
            return;
        }
        self.offset = self.offset.min(self.shown.len().saturating_sub(height));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
    }

    /// Sets the filter (folds are cleared, as pi clears them). The filter always applies:
    /// the cursor stays on its entry when the filter keeps it, else it moves to the nearest
    /// entry kept ([`Navigator::select_nearest`]); a filter that keeps nothing shows nothing.
    pub fn set_filter(&mut self, f: Filter) {
        let keep = self.selected_entry();
        self.filter = f;
        self.folded.clear();
        self.relayout();
        match keep {
            Some(k) => self.select_nearest(k),
            None => self.selected = 0,
        }
    }

    /// Puts the cursor on entry `i` if it is shown, else on its closest shown ancestor,
    /// else on the first line. Never changes the filter, the search or the folds. One pass
    /// over the shown lines and one walk up the parents.
    pub fn select_nearest(&mut self, i: usize) {
        let n = self.doc.entries().len();
        let mut pos: Vec<Option<usize>> = vec![None; n];
        for (p, &k) in self.shown.iter().enumerate() {
            if let Some(slot) = pos.get_mut(self.full[k as usize].entry) {
                *slot = Some(p);
            }
        }
        let mut seen = HashSet::new();
        let mut at = Some(i);
        while let Some(k) = at {
            if !seen.insert(k) {
                break; // a parent cycle: stop rather than loop
            }
            if let Some(p) = pos.get(k).copied().flatten() {
                self.selected = p;
                return;
            }
            at = self.doc.entries()[k]
                .parent_id
                .as_deref()
                .and_then(|pid| self.doc.index().get(pid));
        }
        self.selected = 0;
    }

    /// Folds or unfolds the selected entry. Costs what it shows or hides, not the size of
    /// the tree: the subtree's run of lines is removed, or put back (inner folds kept).
    pub fn toggle_fold(&mut self) {
        let Some(line) = self.line(self.selected) else {
            return;
        };
        if !line.foldable {
            return;
        }
        let (e, fi, end, pos) = (line.entry, line.at, line.end, self.selected);
        if self.folded.remove(&e) {
            let run = unfolded_run(&self.full, fi + 1, end, &self.folded);
            self.shown.splice(pos + 1..pos + 1, run);
        } else {
            self.folded.insert(e);
            let mut q = pos + 1;
            while q < self.shown.len() && (self.shown[q] as usize) < end {
                q += 1;
            }
            self.shown.drain(pos + 1..q);
        }
    }

    /// Left: fold the selected entry, or go to its parent line.
    pub fn fold_or_up(&mut self) {
        match self.line(self.selected) {
            Some(l) if l.foldable && !self.folded.contains(&l.entry) => self.toggle_fold(),
            Some(l) => {
                let entry = l.entry;
                let mut p = self.doc.entries()[entry]
                    .parent_id
                    .as_deref()
                    .and_then(|pid| self.doc.index().get(pid));
                while let Some(pi) = p {
                    if let Some(pos) = self.position_of(pi) {
                        self.selected = pos;
                        return;
                    }
                    p = self.doc.entries()[pi]
                        .parent_id
                        .as_deref()
                        .and_then(|pid| self.doc.index().get(pid));
                }
            }
            None => {}
        }
    }

    /// Right: unfold the selected entry, or go down a line.
    pub fn unfold_or_down(&mut self) {
        match self.line(self.selected) {
            Some(l) if self.folded.contains(&l.entry) => self.toggle_fold(),
            Some(_) => self.move_by(1),
            None => {}
        }
    }

    /// Applies the search typed so far.
    pub fn apply_search(&mut self) {
        let keep = self.selected_entry();
        self.folded.clear();
        self.relayout();
        if let Some(k) = keep {
            if let Some(p) = self.position_of(k) {
                self.selected = p;
            }
        }
        if self.selected >= self.shown.len() {
            self.selected = 0;
        }
    }

    /// Puts the cursor on entry `i`, unfolding what hides it.
    pub fn reveal(&mut self, i: usize) {
        if !self.iter_lines().any(|l| l.entry == i) {
            // Unfold its ancestors; with a filter that hides it, show everything.
            let mut p = Some(i);
            let mut changed = false;
            while let Some(k) = p {
                changed |= self.folded.remove(&k);
                p = self.doc.entries()[k]
                    .parent_id
                    .as_deref()
                    .and_then(|pid| self.doc.index().get(pid));
            }
            if changed {
                self.relayout();
            }
            if !self.iter_lines().any(|l| l.entry == i) && self.filter != Filter::All {
                self.filter = Filter::All;
                self.search.clear();
                self.relayout();
            }
        }
        if let Some(pos) = self.position_of(i) {
            self.selected = pos;
        }
    }

    fn visible(&self, i: usize) -> bool {
        let e = &self.doc.entries()[i];
        let line = self.doc.line(&e.line);
        let labelled =
            e.id.as_deref()
                .is_some_and(|id| self.doc.index().labels.get(id).is_some());
        let settings = matches!(
            e.etype,
            EntryType::Label
                | EntryType::ContextEdit
                | EntryType::Custom
                | EntryType::ModelChange
                | EntryType::ThinkingLevelChange
                | EntryType::SessionInfo
        );
        let is_leaf = Some(i) == self.doc.index().leaf;
        // pi hides assistant turns without text unless they failed (or are the leaf).
        let quiet_assistant = e.role == Some(Role::Assistant) && !is_leaf && {
            let m = e.message.as_ref();
            let has_text = m
                .and_then(|m| m.get(line, "content"))
                .is_some_and(|(raw, kind)| {
                    kind == arbor_core::json::ValueKind::String
                        || memchr::memmem::find(raw, br#""type":"text""#).is_some()
                });
            let stop = m.and_then(|m| m.str(line, "stopReason"));
            let failed = stop.is_some_and(|s| s != "stop" && s != "toolUse");
            !has_text && !failed
        };
        let pass = match self.filter {
            Filter::UserOnly => e.etype == EntryType::Message && e.role == Some(Role::User),
            Filter::NoTools => {
                let tool_result = e.etype == EntryType::Message && e.role == Some(Role::ToolResult);
                !(settings || quiet_assistant || tool_result)
            }
            Filter::Labeled => labelled,
            Filter::All => true,
            Filter::Default => !settings && !quiet_assistant,
        };
        if !pass {
            return false;
        }
        if self.search.trim().is_empty() {
            return true;
        }
        let text = arbor_view::describe(&self.doc, i).to_lowercase();
        self.search
            .to_lowercase()
            .split_whitespace()
            .all(|w| text.contains(w))
    }

    /// Recomputes the lines from the tree, the filter, the search and the folds.
    fn relayout(&mut self) {
        let n = self.doc.entries().len();
        self.on_path = vec![false; n];
        if let Some(l) = self.doc.index().leaf {
            for i in self.doc.index().path(&self.doc, l).entries {
                self.on_path[i] = true;
            }
        }
        let visible: Vec<bool> = (0..n).map(|i| self.visible(i)).collect();
        // Visible children of each visible entry (hidden entries pass theirs up), in order.
        let mut kids: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots: Vec<usize> = Vec::new();
        let mut seen = vec![false; n];
        let mut stack: Vec<(usize, Option<usize>)> =
            self.tree.roots.iter().rev().map(|&r| (r, None)).collect();
        let mut order: Vec<(usize, Option<usize>)> = Vec::new();
        while let Some((i, vp)) = stack.pop() {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            let next = if visible[i] {
                order.push((i, vp));
                Some(i)
            } else {
                vp
            };
            for &c in self.tree.children[i].iter().rev() {
                stack.push((c, next));
            }
        }
        for (i, vp) in order {
            match vp {
                Some(p) => kids[p].push(i),
                None => roots.push(i),
            }
        }
        // Lines: chains at one column, connectors at branch points. `full` is every visible
        // entry with the end of its subtree (pre-order, so a subtree is one run of lines);
        // `lines` is `full` without what folds hide. A fold then removes or inserts one run.
        let mut full: Vec<TreeLine> = Vec::new();
        let mut parent_line: Vec<Option<usize>> = Vec::new();
        let mut st: Vec<(usize, String, String, Option<usize>)> = Vec::new();
        let many_roots = roots.len() > 1;
        for (k, &r) in roots.iter().enumerate().rev() {
            let (f, rest) = if many_roots {
                connectors("", k + 1 == roots.len())
            } else {
                (String::new(), String::new())
            };
            st.push((r, f, rest, None));
        }
        while let Some((i, first, rest, parent)) = st.pop() {
            let ks = &kids[i];
            let me = full.len();
            full.push(TreeLine {
                entry: i,
                prefix: first,
                foldable: !ks.is_empty(),
                at: me,
                end: me + 1,
            });
            parent_line.push(parent);
            match ks.len() {
                0 => {}
                1 => st.push((ks[0], rest.clone(), rest, Some(me))),
                _ => {
                    for (k, &c) in ks.iter().enumerate().rev() {
                        let (f, r) = connectors(&rest, k + 1 == ks.len());
                        st.push((c, f, r, Some(me)));
                    }
                }
            }
        }
        for k in (0..full.len()).rev() {
            if let Some(p) = parent_line[k] {
                full[p].end = full[p].end.max(full[k].end);
            }
        }
        self.shown = unfolded_run(&full, 0, full.len(), &self.folded);
        self.full = full;
        if self.selected >= self.shown.len() {
            self.selected = self.shown.len().saturating_sub(1);
        }
    }

    /// Reads what was appended to the file since the last read (complete lines only) and
    /// updates the tree. Returns whether anything was added.
    pub fn refresh(&mut self) -> anyhow::Result<bool> {
        let len = std::fs::metadata(&self.path)?.len();
        if len <= self.read_to {
            return Ok(false);
        }
        let mut f = arbor_store::open_regular(&self.path)?;
        f.seek(SeekFrom::Start(self.read_to))?;
        let mut buf = Vec::new();
        f.take(len - self.read_to).read_to_end(&mut buf)?;
        let Some(last_nl) = buf.iter().rposition(|&b| b == b'\n') else {
            return Ok(false);
        };
        let mut added = false;
        for line in buf[..last_nl].split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A line that is not an entry is skipped here, as readers skip it.
            if self.doc.push_line(line.to_vec()).is_ok() {
                added = true;
            }
        }
        self.read_to += last_nl as u64 + 1;
        if added {
            let keep = self.selected_entry();
            self.tree = self.doc.index().tree(&self.doc);
            self.relayout();
            if let Some(k) = keep {
                if let Some(p) = self.position_of(k) {
                    self.selected = p;
                }
            }
        }
        Ok(added)
    }

    /// The text of a user message (what `/fork` hands over), if `i` is one.
    pub fn user_text(&self, i: usize) -> Option<String> {
        let e = &self.doc.entries()[i];
        if e.etype != EntryType::Message || e.role != Some(Role::User) {
            return None;
        }
        let m = e.fields.value(self.doc.line(&e.line), "message")?;
        Some(arbor_view::content_text(m.get("content")))
    }

    /// What the reader pane shows of entry `i`: (kind of line, text) pairs.
    pub fn reader(&self, i: usize) -> Vec<(ReaderKind, String)> {
        let mut out = Vec::new();
        let e = &self.doc.entries()[i];
        let line = self.doc.line(&e.line);
        let id = e.id.as_deref().unwrap_or("(no id)");
        let ts = e
            .timestamp
            .as_deref()
            .map(|t| t.get(..19).unwrap_or(t).replace('T', " "))
            .unwrap_or_default();
        match e.etype {
            EntryType::Message => {
                let m = e.fields.value(line, "message").unwrap_or(JsValue::Null);
                let s = |k: &str| {
                    m.get(k)
                        .and_then(|v| v.as_str_lossy())
                        .map(|v| v.into_owned())
                        .unwrap_or_default()
                };
                let role = s("role");
                let mut head = role.clone();
                for k in ["model", "toolName"] {
                    let v = s(k);
                    if !v.is_empty() {
                        head.push(' ');
                        head.push_str(&v);
                    }
                }
                out.push((ReaderKind::Head, format!("{head} · {id} · {ts}")));
                let stop = s("stopReason");
                if matches!(stop.as_str(), "error" | "aborted") {
                    out.push((
                        ReaderKind::Error,
                        format!("✗ {stop}: {}", s("errorMessage")),
                    ));
                }
                if matches!(m.get("isError"), Some(JsValue::Bool(true))) {
                    out.push((ReaderKind::Error, "✗ error".into()));
                }
                if role == "bashExecution" {
                    out.push((ReaderKind::Tool, format!("$ {}", s("command"))));
                    fold_into(&mut out, &s("output"), 12, ReaderKind::Text);
                }
                match m.get("content") {
                    Some(JsValue::String(t)) => {
                        fold_into(&mut out, &t.to_string_lossy(), usize::MAX, ReaderKind::Text)
                    }
                    Some(JsValue::Array(blocks)) => {
                        let tool = role == "toolResult";
                        for b in blocks {
                            let ty = b.get("type").and_then(|t| t.as_str_lossy());
                            let bs = |k: &str| {
                                b.get(k)
                                    .and_then(|v| v.as_str_lossy())
                                    .map(|v| v.into_owned())
                                    .unwrap_or_default()
                            };
                            match ty.as_deref() {
                                Some("text") => fold_into(
                                    &mut out,
                                    &bs("text"),
                                    if tool { 12 } else { usize::MAX },
                                    ReaderKind::Text,
                                ),
                                Some("thinking") => {
                                    out.push((ReaderKind::Tool, "▸ thinking".into()));
                                    fold_into(&mut out, &bs("thinking"), 3, ReaderKind::Dim);
                                }
                                Some("toolCall") => {
                                    let args = b
                                        .get("arguments")
                                        .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                                        .unwrap_or_default();
                                    out.push((
                                        ReaderKind::Tool,
                                        format!(
                                            "▸ tool call {} {}",
                                            bs("name"),
                                            arbor_view::one_line(&args, 300)
                                        ),
                                    ));
                                }
                                Some("image") => {
                                    let size = bs("data").len() * 3 / 4;
                                    out.push((
                                        ReaderKind::Dim,
                                        format!(
                                            "[image {} · {}]",
                                            bs("mimeType"),
                                            crate::cmd::index::human_size(size as u64)
                                        ),
                                    ));
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            EntryType::ContextEdit => {
                out.push((ReaderKind::Head, format!("context edit · {id} · {ts}")));
                out.push((ReaderKind::Text, arbor_view::describe(&self.doc, i)));
            }
            EntryType::Compaction | EntryType::BranchSummary => {
                let what = if e.etype == EntryType::Compaction {
                    "compaction"
                } else {
                    "branch summary"
                };
                out.push((ReaderKind::Head, format!("{what} · {id} · {ts}")));
                let summary = e.fields.str(line, "summary").unwrap_or_default();
                fold_into(&mut out, &summary, usize::MAX, ReaderKind::Text);
            }
            _ => {
                out.push((
                    ReaderKind::Head,
                    format!("{} · {id} · {ts}", e.etype.name()),
                ));
                out.push((ReaderKind::Text, arbor_view::describe(&self.doc, i)));
            }
        }
        if let Some(l) =
            e.id.as_deref()
                .and_then(|id| self.doc.index().labels.get(id))
        {
            out.push((ReaderKind::Label, format!("[{l}]")));
        }
        out
    }
}

/// What a line of the reader pane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderKind {
    /// The heading.
    Head,
    /// Text.
    Text,
    /// Tool calls, thinking headings.
    Tool,
    /// Secondary text.
    Dim,
    /// An error.
    Error,
    /// A label.
    Label,
}

fn fold_into(out: &mut Vec<(ReaderKind, String)>, text: &str, keep: usize, kind: ReaderKind) {
    let lines: Vec<&str> = text.lines().collect();
    let n = keep.min(lines.len());
    for l in &lines[..n] {
        out.push((kind, (*l).to_string()));
    }
    if n < lines.len() {
        out.push((ReaderKind::Dim, format!("… {} more lines", lines.len() - n)));
    }
}

fn connectors(base: &str, last: bool) -> (String, String) {
    if last {
        (format!("{base}└─ "), format!("{base}   "))
    } else {
        (format!("{base}├─ "), format!("{base}│  "))
    }
}
