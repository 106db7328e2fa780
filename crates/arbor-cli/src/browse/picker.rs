//! The session picker: rows from the catalog, the scope (this project or all), the sort, the
//! fuzzy filter over titles and first messages, the full-text hits, and the preview.
use arbor_core::Dialect;
use arbor_index::{Catalog, Listed, SearchQuery};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which sessions the picker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The current directory's sessions (pi's and omp's; other agents' whose cwd it is).
    Project,
    /// Every project of every agent directory.
    All,
}

/// The order of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Newest `modified` first.
    Recent,
    /// Newest creation first.
    Created,
    /// Forks under the sessions they were forked from.
    Threaded,
    /// Best match first (while searching).
    Relevance,
}

impl Sort {
    /// Its name on screen.
    pub fn name(self) -> &'static str {
        match self {
            Sort::Recent => "recent",
            Sort::Created => "created",
            Sort::Threaded => "threaded",
            Sort::Relevance => "relevance",
        }
    }
}

/// One session.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// The file.
    pub file: PathBuf,
    /// The tool that writes it (pi or omp; for another agent's session, the dialect it is
    /// imported as).
    pub tool: Dialect,
    /// Another agent's session (Claude Code, Codex, opencode): `file` is its source, only
    /// read; rename, delete and fork are refused, resume imports it first.
    pub agent: Option<arbor_agents::Agent>,
    /// Name, omp title or first message.
    pub title: String,
    /// `title` is a name (pi's `session_info` name or omp's title), not the first message:
    /// what a rename starts from.
    pub named: bool,
    /// The first user message.
    pub first: String,
    /// The project (header `cwd`).
    pub cwd: String,
    /// `modified` (pi's rule), ms.
    pub modified: f64,
    /// `created`, ms.
    pub created: f64,
    /// Messages.
    pub messages: usize,
    /// File size.
    pub size: u64,
    /// Tips of the tree.
    pub branches: u64,
    /// `parentSession` (a path for pi, a session id for omp).
    pub parent: Option<String>,
    /// Header id.
    pub session_id: Option<String>,
    /// What fuzzy matching reads, in nucleo's form, and lowercased: made once, at the first
    /// search ([`Picker::prepare`]), not before the first frame.
    haystack: Option<(nucleo_matcher::Utf32String, String)>,
}

impl SessionRow {
    /// Makes the fuzzy haystack (the first 64 characters of the title and of the first
    /// message: matching costs grow with the length).
    fn prepare(&mut self) {
        if self.haystack.is_some() {
            return;
        }
        let short = |s: &str| s.chars().take(64).collect::<String>();
        let h = if self.title == self.first {
            short(&self.title)
        } else {
            format!("{} {}", short(&self.title), short(&self.first))
        };
        self.haystack = Some((
            nucleo_matcher::Utf32String::from(h.as_str()),
            h.to_lowercase(),
        ));
    }

    fn hay(&self) -> (nucleo_matcher::Utf32Str<'_>, &str) {
        match &self.haystack {
            Some((u, l)) => (u.slice(..), l.as_str()),
            None => (nucleo_matcher::Utf32Str::Ascii(b""), ""),
        }
    }

    /// `in_omp_dir`: the file lives in one of omp's session directories (the tool is `ls`'s,
    /// [`crate::cmd::ls::shown_as_omp`]).
    fn from_listed(l: &Listed, in_omp_dir: bool) -> SessionRow {
        // A first message can be a pasted file: only its start is ever shown or matched.
        let line = |s: &str| {
            let head: String = s.chars().take(400).collect();
            arbor_view::one_line(&head, 300)
        };
        let title = line(&l.display_title());
        let first = line(&l.info.first_message.to_string_lossy());
        SessionRow {
            file: l.file.clone(),
            tool: if crate::cmd::ls::shown_as_omp(l, in_omp_dir) {
                Dialect::Omp
            } else {
                Dialect::Pi
            },
            title,
            agent: None,
            named: l.title.as_deref().is_some_and(|t| !t.is_empty())
                || l.info.name.as_deref().is_some_and(|n| !n.is_empty()),
            first,
            cwd: l.info.cwd.clone(),
            modified: l.info.modified_ms,
            created: l.info.created_ms.unwrap_or(l.info.modified_ms),
            messages: l.info.message_count,
            size: l.size,
            branches: l.branches,
            // Kept as its raw JSON; a string is what forks write.
            haystack: None,
            parent: l.info.parent_session_path.as_deref().and_then(|raw| {
                arbor_core::json::JsValue::parse(raw.as_bytes())
                    .ok()
                    .and_then(|v| v.as_str_lossy().map(|s| s.into_owned()))
            }),
            session_id: l.session_id.clone(),
        }
    }
}

impl SessionRow {
    /// Another agent's session, from the catalog's row ([`crate::cmd::agents::in_scope`]).
    pub fn from_foreign(f: &arbor_index::ForeignRow) -> SessionRow {
        let line = |s: &str| {
            let head: String = s.chars().take(400).collect();
            arbor_view::one_line(&head, 300)
        };
        let s = &f.summary;
        let modified = s.modified_ms.map_or(f64::NAN, |t| t as f64);
        SessionRow {
            file: f.source.clone(),
            tool: Dialect::Pi,
            agent: Some(f.agent),
            title: line(f.display_title()),
            named: false,
            first: line(&s.first_message),
            cwd: s.cwd.clone(),
            modified,
            created: s.created_ms.map_or(modified, |t| t as f64),
            messages: usize::try_from(s.message_count).unwrap_or(usize::MAX),
            size: 0,
            branches: 0,
            parent: s.parent_id.clone(),
            session_id: Some(s.id.clone()),
            haystack: None,
        }
    }

    /// The name the TOOL column shows (`ls`'s).
    pub fn tool_name(&self) -> &'static str {
        match self.agent {
            Some(a) => crate::cmd::ls::tool_name(crate::cmd::ls::tool_of(a)),
            None => match self.tool {
                Dialect::Pi => "pi",
                Dialect::Omp => "omp",
            },
        }
    }

    /// Whether `other` is this session (a file holds several sessions of other agents:
    /// opencode's database, a Claude Code session and its subagents).
    fn same(&self, other: &SessionRow) -> bool {
        self.file == other.file && (self.agent.is_none() || self.session_id == other.session_id)
    }
}

/// A full-text hit shown under its session.
#[derive(Debug, Clone)]
pub struct HitLine {
    /// The entry.
    pub entry_id: Option<String>,
    /// What kind of text (`user`, `assistant`, ...).
    pub role: &'static str,
    /// The text around the match, the match between U+E000 and U+E001.
    pub snippet: String,
    /// On the path the session resumes.
    pub on_branch: bool,
    /// Position in the file.
    pub seq: i64,
}

/// A row on screen: a session, how deep under its parent (threaded), its best hit.
#[derive(Debug, Clone)]
pub struct ViewRow {
    /// Index into the session rows.
    pub row: usize,
    /// Depth under its parent (threaded sort).
    pub depth: usize,
    /// The best full-text hit, while searching.
    pub hit: Option<HitLine>,
    /// How many texts of the session matched.
    pub hits: usize,
}

/// The picker's state.
pub struct Picker {
    /// Scope.
    pub scope: Scope,
    /// Sort when not searching.
    pub sort: Sort,
    /// The query typed.
    pub query: String,
    /// Every session of the scope.
    pub rows: Vec<SessionRow>,
    /// What is shown, in order.
    pub view: Vec<ViewRow>,
    /// Selected position in `view`.
    pub selected: usize,
    /// First visible position.
    pub offset: usize,
    /// The directories of the scope (catalog keys).
    pub dir_keys: Vec<String>,
    /// The last search's error (a query FTS5 cannot read is searched as words; a bad regex).
    pub search_note: Option<String>,
    matcher: Matcher,
    /// The last fuzzy query and the rows it matched: a query that extends it (typing on)
    /// can only match among those.
    last_fuzzy: Option<(String, Vec<usize>)>,
    /// Row of each file (pi's and omp's sessions).
    by_file: HashMap<PathBuf, usize>,
    /// Row of each other agent's session: its source and id.
    by_foreign: HashMap<(PathBuf, String), usize>,
}

impl Picker {
    /// A picker over `listed`.
    pub fn new(scope: Scope, listed: &[Listed], dirs: &[PathBuf]) -> Picker {
        let mut p = Picker {
            scope,
            sort: Sort::Recent,
            query: String::new(),
            rows: Vec::new(),
            view: Vec::new(),
            selected: 0,
            offset: 0,
            dir_keys: Vec::new(),
            search_note: None,
            matcher: Matcher::new(Config::DEFAULT),
            last_fuzzy: None,
            by_file: HashMap::new(),
            by_foreign: HashMap::new(),
        };
        p.load(scope, listed, dirs);
        p
    }

    /// Replaces the sessions (a scope switch or a refresh), keeping the selection on the
    /// same file when it is still there.
    pub fn load(&mut self, scope: Scope, listed: &[Listed], dirs: &[PathBuf]) {
        self.load_all(scope, listed, &[], dirs);
    }

    /// [`Picker::load`] with other agents' sessions (`foreign`) beside pi's and omp's,
    /// merged newest `modified` first as `arbor ls` merges them.
    pub fn load_all(
        &mut self,
        scope: Scope,
        listed: &[Listed],
        foreign: &[arbor_index::ForeignRow],
        dirs: &[PathBuf],
    ) {
        let keep = self.selected_row().cloned();
        self.scope = scope;
        let omp_dirs: Vec<&Path> = dirs
            .iter()
            .filter(|d| arbor_store::locate::is_omp_dir(d))
            .map(PathBuf::as_path)
            .collect();
        self.rows = listed
            .iter()
            .map(|l| {
                SessionRow::from_listed(l, l.file.parent().is_some_and(|p| omp_dirs.contains(&p)))
            })
            .collect();
        if !foreign.is_empty() {
            // `arbor ls`'s merge: pi's comparator (`b.modified - a.modified`, NaN "equal")
            // by V8's stable algorithm over pi's listing followed by the other agents' rows.
            self.rows
                .extend(foreign.iter().map(SessionRow::from_foreign));
            arbor_core::js::v8_sort_slice_by_number(&mut self.rows, |a, b| b.modified - a.modified);
        }
        self.last_fuzzy = None;
        self.by_file.clear();
        self.by_foreign.clear();
        self.dir_keys = dirs.iter().map(|d| arbor_index::dir_key(d)).collect();
        self.rebuild_view(None);
        if let Some(f) = keep {
            if let Some(pos) = self.view.iter().position(|v| self.rows[v.row].same(&f)) {
                self.selected = pos;
            }
        }
        self.clamp();
    }

    /// The session under the cursor.
    pub fn selected_row(&self) -> Option<&SessionRow> {
        self.view.get(self.selected).map(|v| &self.rows[v.row])
    }

    /// Its file.
    pub fn selected_file(&self) -> Option<&Path> {
        self.selected_row().map(|r| r.file.as_path())
    }

    /// The selected view row.
    pub fn selected_view(&self) -> Option<&ViewRow> {
        self.view.get(self.selected)
    }

    /// Moves the cursor by `d` rows.
    pub fn move_by(&mut self, d: isize) {
        if self.view.is_empty() {
            return;
        }
        let n = self.view.len() as isize;
        self.selected = (self.selected as isize + d).clamp(0, n - 1) as usize;
    }

    /// Puts the cursor on `pos`.
    pub fn select(&mut self, pos: usize) {
        self.selected = pos;
        self.clamp();
    }

    fn clamp(&mut self) {
        if self.selected >= self.view.len() {
            self.selected = self.view.len().saturating_sub(1);
        }
    }

    /// The next sort (relevance only while searching).
    pub fn cycle_sort(&mut self) {
        self.sort = match self.sort {
            Sort::Recent => Sort::Created,
            Sort::Created => Sort::Threaded,
            Sort::Threaded if !self.query.trim().is_empty() => Sort::Relevance,
            _ => Sort::Recent,
        };
        self.rebuild_view(None);
    }

    /// Re-filters with the current query, searching the catalog's texts (`cat`) too.
    pub fn search(&mut self, cat: Option<&Catalog>) {
        self.selected = 0;
        self.offset = 0;
        self.rebuild_view(cat);
    }

    /// Makes every row's fuzzy haystack and the file index (done once; the event loop does
    /// it while the first frame is on screen, a search would otherwise).
    pub fn prepare(&mut self) {
        for r in &mut self.rows {
            r.prepare();
        }
        if self.by_file.len() + self.by_foreign.len() != self.rows.len() {
            self.by_file.clear();
            self.by_foreign.clear();
            for (i, r) in self.rows.iter().enumerate() {
                match (&r.agent, &r.session_id) {
                    (Some(_), Some(id)) => {
                        self.by_foreign.insert((r.file.clone(), id.clone()), i);
                    }
                    _ => {
                        self.by_file.insert(r.file.clone(), i);
                    }
                }
            }
        }
    }

    /// Builds `view` from the rows, the query and the sort.
    fn rebuild_view(&mut self, cat: Option<&Catalog>) {
        self.search_note = None;
        let q = self.query.trim().to_string();
        if !q.is_empty() {
            self.prepare();
        }
        if q.is_empty() {
            if self.sort == Sort::Relevance {
                self.sort = Sort::Recent;
            }
            self.view = self.ordered((0..self.rows.len()).collect());
            return;
        }
        // Fuzzy over titles and first messages.
        let mut scored: HashMap<usize, u32> = HashMap::with_capacity(self.rows.len());
        let regex = q.strip_prefix("re:").map(str::trim);
        if regex.is_none() {
            let pattern = Pattern::parse(&q, CaseMatching::Ignore, Normalization::Smart);
            // Typing on (the query extends the last one, no operator in it) can only keep
            // rows the last query matched.
            let plain = !q.contains(['!', '^', '$', '\'', '\\']);
            let candidates: Vec<usize> = match &self.last_fuzzy {
                Some((prev, rows)) if plain && q.starts_with(prev.as_str()) => rows.clone(),
                _ => (0..self.rows.len()).collect(),
            };
            let mut matched = Vec::new();
            if q.chars().count() < 2 {
                // One character: a plain (case-insensitive) search, earlier is better; fuzzy
                // scoring of every row would say no more.
                let c = q.to_lowercase();
                for i in candidates {
                    if let Some(at) = self.rows[i].hay().1.find(c.as_str()) {
                        scored.insert(i, 1000u32.saturating_sub(at as u32));
                        matched.push(i);
                    }
                }
            } else {
                for i in candidates {
                    if let Some(s) = pattern.score(self.rows[i].hay().0, &mut self.matcher) {
                        scored.insert(i, s);
                        matched.push(i);
                    }
                }
            }
            self.last_fuzzy = plain.then(|| (q.clone(), matched));
        }
        // Full-text hits, grouped by session.
        let mut hits: HashMap<usize, (HitLine, usize, usize)> = HashMap::new(); // row: hit, count, rank order
        if let Some(cat) = cat {
            match regex {
                Some(_) => self.regex_hits(cat, &q, &mut hits, &mut scored),
                None => self.fts_hits(cat, &q, &mut hits),
            }
        }
        // One entry per session found: (row, hit, text hits, fuzzy score, best hit's order).
        let mut rows: Vec<(usize, Option<HitLine>, usize, u32, usize)> =
            Vec::with_capacity(scored.len() + hits.len());
        let mut with_hit = vec![false; self.rows.len()];
        for (&i, (hit, count, order)) in &hits {
            with_hit[i] = true;
            let fuzzy = scored.get(&i).copied().unwrap_or(0);
            rows.push((i, Some(hit.clone()), *count, fuzzy, *order));
        }
        for (&i, &s) in &scored {
            if !with_hit[i] {
                rows.push((i, None, 0, s, usize::MAX));
            }
        }
        // Relevance: the query as it is in a title first, then sessions whose texts match
        // (best FTS5 rank first), then looser fuzzy matches of titles (by score); each key
        // made once.
        let lower = q.to_lowercase();
        let key = |r: &(usize, Option<HitLine>, usize, u32, usize)| {
            (
                !self.rows[r.0].hay().1.contains(&lower),
                r.4,
                std::cmp::Reverse(r.3),
                r.0,
            )
        };
        if self.sort == Sort::Recent || self.sort == Sort::Relevance {
            self.sort = Sort::Relevance;
            rows.sort_by_cached_key(key);
            self.view = rows
                .into_iter()
                .map(|(row, hit, hits, _, _)| ViewRow {
                    row,
                    depth: 0,
                    hit,
                    hits,
                })
                .collect();
        } else {
            let mut info: HashMap<usize, (Option<HitLine>, usize)> = HashMap::new();
            for (i, h, c, _, _) in rows {
                info.insert(i, (h, c));
            }
            let mut v = self.ordered(info.keys().copied().collect());
            for vr in &mut v {
                if let Some((h, c)) = info.remove(&vr.row) {
                    vr.hit = h;
                    vr.hits = c;
                }
            }
            self.view = v;
        }
    }

    fn fts_hits(
        &mut self,
        cat: &Catalog,
        q: &str,
        hits: &mut HashMap<usize, (HitLine, usize, usize)>,
    ) {
        let mut sq = SearchQuery::new(q);
        sq.dirs = Some(self.dir_keys.clone());
        // What a screen of sessions needs; no index check and no total at every keystroke
        // (the catalog is checked when it is opened and by `arbor search`).
        sq.limit = 60;
        sq.rank_window = 300;
        sq.marks = ("\u{e000}".into(), "\u{e001}".into());
        sq.snippet_words = 12;
        sq.check_index = false;
        sq.count_total = false;
        // Each hit: its rank (BM25, lower is better), its row, what it shows.
        let mut found: Vec<(f64, usize, HitLine)> = Vec::new();
        match cat.search(&sq) {
            Ok(list) => {
                for h in list {
                    if let Some(&i) = self.by_file.get(&h.path) {
                        found.push((
                            h.rank,
                            i,
                            HitLine {
                                entry_id: h.entry_id.clone(),
                                role: h.kind.name(),
                                snippet: h.snippet.clone(),
                                on_branch: h.on_current_branch,
                                seq: h.seq,
                            },
                        ));
                    }
                }
            }
            Err(e) => self.search_note = Some(e.to_string()),
        }
        // Other agents' sessions of the scope: their texts, as `arbor search` finds them,
        // merged with pi's by BM25 as it merges them.
        if !self.by_foreign.is_empty() {
            let by_foreign = &self.by_foreign;
            let keep = |r: &arbor_index::ForeignRow| {
                by_foreign.contains_key(&(r.source.clone(), r.summary.id.clone()))
            };
            match cat.search_foreign(q, None, None, sq.limit, &sq.marks, &keep) {
                Ok(list) => {
                    for h in list {
                        let key = (h.row.source.clone(), h.row.summary.id.clone());
                        if let Some(&i) = by_foreign.get(&key) {
                            found.push((
                                h.rank,
                                i,
                                HitLine {
                                    entry_id: None,
                                    role: h.kind.name(),
                                    snippet: h.snippet,
                                    on_branch: h.on_path,
                                    seq: 0,
                                },
                            ));
                        }
                    }
                }
                Err(e) => {
                    if self.search_note.is_none() {
                        self.search_note = Some(e.to_string());
                    }
                }
            }
            found.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        for (order, (_, i, hit)) in found.into_iter().enumerate() {
            let e = hits.entry(i).or_insert((hit, 0, order));
            e.1 += 1;
        }
    }

    /// A `re:` query: the titles the expression finds, and the texts (the catalog's search,
    /// which reads `re:` as `arbor search` does: [`arbor_index::regex_of`]).
    fn regex_hits(
        &mut self,
        cat: &Catalog,
        q: &str,
        hits: &mut HashMap<usize, (HitLine, usize, usize)>,
        scored: &mut HashMap<usize, u32>,
    ) {
        let rx = match arbor_index::regex_of(q) {
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                self.search_note = Some(e.to_string());
                return;
            }
            None => return,
        };
        for (i, r) in self.rows.iter().enumerate() {
            if rx.is_match(r.hay().1) {
                scored.insert(i, 1);
            }
        }
        self.fts_hits(cat, q, hits);
    }

    /// `rows` in the current sort (not relevance).
    fn ordered(&self, mut rows: Vec<usize>) -> Vec<ViewRow> {
        let plain = |rows: Vec<usize>| {
            rows.into_iter()
                .map(|row| ViewRow {
                    row,
                    depth: 0,
                    hit: None,
                    hits: 0,
                })
                .collect()
        };
        match self.sort {
            Sort::Recent | Sort::Relevance => {
                // The rows are the listing in pi's order (`catalog::sort_like_pi`): newest
                // `modified` first, a NaN `modified` where pi's own sort leaves it, as `ls`.
                rows.sort_unstable();
                plain(rows)
            }
            Sort::Created => {
                by_time(&mut rows, |i| self.rows[i].created);
                plain(rows)
            }
            Sort::Threaded => self.threaded(rows),
        }
    }

    /// Forks under their parents (pi: `parentSession` is the parent's path; omp: its id),
    /// newest first at each level.
    fn threaded(&self, mut rows: Vec<usize>) -> Vec<ViewRow> {
        rows.sort_unstable(); // the listing's order (pi's), as for `Sort::Recent`

        let present: std::collections::HashSet<usize> = rows.iter().copied().collect();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        for &i in &rows {
            let r = &self.rows[i];
            by_key.insert(r.file.to_string_lossy().into_owned(), i);
            if let Some(id) = &r.session_id {
                by_key.insert(id.clone(), i);
            }
        }
        let parent_of = |i: usize| -> Option<usize> {
            let p = self.rows[i].parent.as_deref()?;
            let canon = std::fs::canonicalize(p)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_else(|_| p.to_string());
            by_key
                .get(p)
                .or_else(|| by_key.get(&canon))
                .copied()
                .filter(|&q| q != i && present.contains(&q))
        };
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        for &i in &rows {
            match parent_of(i) {
                Some(p) => children.entry(p).or_default().push(i),
                None => roots.push(i),
            }
        }
        let mut out = Vec::with_capacity(rows.len());
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<(usize, usize)> = roots.into_iter().rev().map(|r| (r, 0)).collect();
        while let Some((i, d)) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            out.push(ViewRow {
                row: i,
                depth: d,
                hit: None,
                hits: 0,
            });
            if let Some(kids) = children.get(&i) {
                for &k in kids.iter().rev() {
                    stack.push((k, d + 1));
                }
            }
        }
        // Sessions in a parent cycle (never roots) still appear.
        for &i in &rows {
            if !seen.contains(&i) {
                out.push(ViewRow {
                    row: i,
                    depth: 0,
                    hit: None,
                    hits: 0,
                });
            }
        }
        out
    }
}

/// Newest first, then by row index (the listing's order); a NaN time (an Invalid Date) compares
/// "equal" as in pi's listing. V8's sort ([`arbor_core::js::v8_sort`]): never panics on such a
/// comparator.
fn by_time(rows: &mut [usize], t: impl Fn(usize) -> f64) {
    arbor_core::js::v8_sort_by_number(rows, |a, b| {
        let d = t(b) - t(a);
        if d == 0.0 {
            a as f64 - b as f64
        } else {
            d
        }
    });
}

#[cfg(test)]
mod nan_tests {
    use super::*;

    /// Issue 22 gap: 70 sessions, 10 with a NaN `modified` (`goldens/pi15/list-nan/`). The
    /// picker shows pi 1.5.2's order (`goldens/pi15/list-nan-modified.json`), as `ls` does, in
    /// every sort and while searching, and never panics (it sorted with
    /// `partial_cmp(..).unwrap_or(Equal)`, not a total order, and in another order).
    #[test]
    fn a_nan_modified_is_shown_in_pis_order() {
        let goldens = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15");
        let want: Vec<String> = serde_json::from_str(
            &std::fs::read_to_string(goldens.join("list-nan-modified.json")).expect("golden"),
        )
        .expect("json");
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut cat =
            crate::cmd::index::open_catalog(Some(&tmp.path().join("c.db"))).expect("catalog");
        let dirs = vec![goldens.join("list-nan")];
        let (listed, _) =
            crate::cmd::index::refreshed_listing(&mut cat, &dirs, true).expect("listing");
        let mut p = Picker::new(Scope::Project, &listed, &dirs);
        let ids = |p: &Picker| -> Vec<String> {
            p.view
                .iter()
                .map(|v| p.rows[v.row].session_id.clone().unwrap_or_default())
                .collect()
        };
        assert_eq!(ids(&p), want, "recent");
        p.sort = Sort::Threaded;
        p.rebuild_view(None);
        assert_eq!(ids(&p), want, "threaded");
        p.sort = Sort::Created;
        p.rebuild_view(None);
        assert_eq!(p.view.len(), 70, "created: every row once");
        p.sort = Sort::Recent;
        p.query = "hi".into();
        p.rebuild_view(None);
        assert_eq!(ids(&p), want, "searching \"hi\"");
    }
}
