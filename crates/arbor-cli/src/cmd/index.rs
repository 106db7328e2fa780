//! Commands on the session catalog: ls, index, search; and the prompt history.
use anyhow::{Context as _, Result};
use arbor_core::Dialect;
use arbor_index::history::{History, HistoryEntry};
use arbor_index::{
    Catalog, IndexError, IndexKinds, Listed, Progress, RefreshOptions, RefreshStats, SearchQuery,
};
use arbor_store::locate::Locator;
use arbor_store::paths;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn cwd_string() -> Result<String> {
    Ok(std::env::current_dir()
        .context("current directory")?
        .to_string_lossy()
        .into_owned())
}

/// Opens the catalog (`--catalog`, `$ARBOR_CATALOG`, else the XDG cache), in memory when the
/// file cannot be used, and says so once.
pub fn open_catalog(over: Option<&Path>) -> Result<Catalog> {
    let path = over
        .map(Path::to_path_buf)
        .unwrap_or_else(arbor_index::default_catalog_path);
    let c = Catalog::open_or_memory(&path).map_err(|e| match e {
        IndexError::NotACatalog { .. } => {
            anyhow::Error::new(e).context("--catalog / $ARBOR_CATALOG")
        }
        e => e.into(),
    })?;
    if let Some(a) = &c.report.set_aside {
        say_err!("arbor: warning: the catalog {} was damaged; it was moved to {} and is rebuilt from the session files", path.display(), a.display());
    }
    if let Some(why) = &c.report.in_memory_because {
        say_err!("arbor: warning: cannot use the catalog: {why}; indexing in memory for this run");
    }
    Ok(c)
}

/// The progress of a refresh that has real work to do (a cold catalog): a
/// [`crate::progress::Bar`] made at the first report big enough to need one.
struct Bar {
    bar: Option<crate::progress::Bar>,
    enabled: bool,
}

impl Bar {
    fn new() -> Bar {
        Bar {
            bar: None,
            enabled: crate::progress::allowed(),
        }
    }
    fn update(&mut self, p: Progress) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() {
            if p.bytes_total < crate::progress::MIN_BYTES && p.files_total < 200 {
                return;
            }
            self.bar = Some(crate::progress::Bar::bytes(
                "indexing",
                p.bytes_total,
                p.files_total,
                200,
            ));
        }
        if let Some(b) = &self.bar {
            b.set_total(p.bytes_total);
            b.set(p.bytes_done.min(p.bytes_total));
            b.message(format!(
                "{}/{}",
                p.files_done,
                arbor_view::count(p.files_total, "file", "files")
            ));
        }
    }
    fn finish(&mut self) {
        if let Some(mut b) = self.bar.take() {
            b.finish();
        }
    }
}

/// Runs `f` on the catalog ([`Catalog::recovering`]), warning once when it was found damaged.
fn with_recovery<T>(
    cat: &mut Catalog,
    mut f: impl FnMut(&mut Catalog) -> Result<T, IndexError>,
) -> Result<T> {
    with_rebuild(cat, |c, _| f(c))
}

/// [`with_recovery`] for work that needs the catalog's contents: `f` is told (`true`) when it
/// runs again on the fresh, empty catalog, so that it rebuilds what it reads first.
fn with_rebuild<T>(
    cat: &mut Catalog,
    f: impl FnMut(&mut Catalog, bool) -> Result<T, IndexError>,
) -> Result<T> {
    Ok(arbor_index::fresh::with_rebuild(
        cat,
        &mut CliReport::new(),
        f,
    )?)
}

/// What the CLI shows of a refresh (`arbor_index::fresh`): a progress bar when there is real
/// work, a warning when the catalog was rebuilt, the files that could not be indexed.
struct CliReport {
    bar: Bar,
}

impl CliReport {
    fn new() -> CliReport {
        CliReport { bar: Bar::new() }
    }
}

impl arbor_index::fresh::Report for CliReport {
    fn progress(&mut self, p: Progress) {
        self.bar.update(p);
    }
    fn finished(&mut self) {
        self.bar.finish();
    }
    fn recovered(&mut self, path: &Path, r: &arbor_index::Recovery) {
        say_err!(
            "arbor: warning: the catalog {} is damaged ({}); it was moved to {} and is rebuilt from the session files",
            path.display(),
            r.detail,
            r.aside.display()
        );
    }
    fn refreshed(&mut self, stats: &RefreshStats) {
        warn_failed(stats);
    }
}

fn warn_failed(stats: &RefreshStats) {
    for (p, e) in stats.failed.iter().take(5) {
        say_err!("arbor: warning: {}: not indexed: {e}", p.display());
    }
    if stats.failed.len() > 5 {
        say_err!(
            "arbor: warning: {} more not indexed",
            arbor_view::count(stats.failed.len() as u64 - 5, "file", "files")
        );
    }
}

/// Refreshes the catalog for `dirs` (with the searchable texts when `texts`) and returns their
/// sessions, newest `modified` first (ties keep directory order, as pi's stable sort does).
pub fn refreshed_listing(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    texts: bool,
) -> Result<(Vec<Listed>, RefreshStats)> {
    refresh_or_trust(cat, dirs, RefreshOptions::default().with_texts(texts))
}

/// Whether a live watcher of `cat` may be asked instead of looking at the files.
pub fn watcher_may_answer(cat: &Catalog) -> bool {
    arbor_index::fresh::watcher_may_answer(cat)
}

/// [`refresh`], or the catalog's rows when a live watcher vouches for them
/// ([`arbor_index::fresh::listing`]).
fn refresh_or_trust(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    opts: RefreshOptions,
) -> Result<(Vec<Listed>, RefreshStats)> {
    Ok(arbor_index::fresh::listing(
        cat,
        dirs,
        opts,
        &mut CliReport::new(),
    )?)
}

fn refresh(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    opts: RefreshOptions,
) -> Result<(Vec<Listed>, RefreshStats)> {
    Ok(arbor_index::fresh::refresh(
        cat,
        dirs,
        opts,
        &mut CliReport::new(),
    )?)
}

fn stdout_all(bytes: &[u8]) -> Result<()> {
    let mut out = crate::report::stdout();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Human-readable output: sanitized on its way to stdout (see `arbor_view::Human`).
fn human_all(bytes: &[u8]) -> Result<()> {
    let mut out = arbor_view::Human::new(crate::report::stdout());
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Snippet marks for human output: private-use characters no sanitizer touches, replaced by
/// the highlight after the snippet's text was sanitized.
const MARK_ON: &str = "\u{e000}";
const MARK_OFF: &str = "\u{e001}";
const MARK_ON_CHAR: char = '\u{e000}';
const MARK_OFF_CHAR: char = '\u{e001}';

/// pi's picker age: now, Nm, Nh, Nd, Nw, Nmo, Ny.
pub fn age(ms: f64) -> String {
    let m = (ms / 60_000.0).floor().max(0.0) as i64;
    let h = m / 60;
    let d = h / 24;
    match () {
        _ if m < 1 => "now".into(),
        _ if m < 60 => format!("{m}m"),
        _ if h < 24 => format!("{h}h"),
        _ if d < 7 => format!("{d}d"),
        _ if d < 30 => format!("{}w", d / 7),
        _ if d < 365 => format!("{}mo", d / 30),
        _ => format!("{}y", d / 365),
    }
}

pub use arbor_view::human_size;

/// A path with the home directory as `~`.
pub fn home_short(p: &str) -> String {
    let home = paths::home_dir().to_string_lossy().into_owned();
    match p.strip_prefix(&home) {
        Some(rest)
            if !home.is_empty() && home != "/" && (rest.is_empty() || rest.starts_with('/')) =>
        {
            format!("~{rest}")
        }
        _ => p.to_string(),
    }
}

/// `arbor index`.
pub fn index(
    rebuild: bool,
    kinds: IndexKinds,
    json: bool,
    watch: bool,
    loc: &Locator,
    catalog: Option<&Path>,
) -> Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let mut cat = open_catalog(catalog)?;
    if rebuild {
        with_recovery(&mut cat, |c| c.clear())?;
    } else {
        with_recovery(&mut cat, |c| c.check_integrity())?;
    }
    with_recovery(&mut cat, |c| c.require_kinds(kinds))?;
    let dirs = loc.all_project_dirs();
    let (listed, stats) = refresh(&mut cat, &dirs, RefreshOptions::default().with_texts(true))?;
    let swept = with_recovery(&mut cat, |c| c.sweep())?;
    let secs = t0.elapsed().as_secs_f64();
    let mb = stats.bytes_read as f64 / 1e6;
    if json {
        let mut out = Vec::new();
        let mut o = arbor_core::json::JsonObject::new(&mut out);
        o.str("catalog", &cat.path().to_string_lossy())
            .uint("directories", dirs.len() as u64)
            .uint("files", stats.files)
            .uint("sessions", listed.len() as u64)
            .uint("unchanged", stats.unchanged)
            .uint("full", stats.full)
            .uint("appended", stats.appended)
            .uint("removed", stats.removed + swept)
            .uint("bytesRead", stats.bytes_read)
            .raw("seconds", format!("{secs:.3}").as_bytes())
            .uint("failed", stats.failed.len() as u64);
        o.finish();
        out.push(b'\n');
        stdout_all(&out)?;
    } else {
        let k = cat.kinds()?;
        let extra = match (k.thinking, k.tools) {
            (false, false) => String::new(),
            (t, o) => format!(
                " (also {})",
                [t.then_some("thinking"), o.then_some("tool output")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        };
        say!(
            "{} in {} under {}{extra}\nread {:.1} MB in {:.2} s ({} new or rewritten, {} appended, {} unchanged, {} removed)\ncatalog: {}",
            arbor_view::count(listed.len() as u64, "session", "sessions"),
            arbor_view::count(stats.files, "file", "files"),
            arbor_view::count(dirs.len() as u64, "project directory", "project directories"),
            mb,
            secs,
            stats.full,
            stats.appended,
            stats.unchanged,
            stats.removed + swept,
            cat.path().display()
        );
    }
    if watch {
        return watch_catalog(&mut cat, loc);
    }
    Ok(if stats.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The sessions roots of `loc`'s agent directories that are directories now
/// ([`Locator::existing_sessions_roots`]).
pub fn sessions_roots(loc: &Locator) -> Vec<PathBuf> {
    loc.existing_sessions_roots()
}

/// `arbor index --watch`: keeps the catalog fresh until killed (see [`arbor_index::watch`]).
fn watch_catalog(cat: &mut Catalog, loc: &Locator) -> Result<ExitCode> {
    if let Some(why) = &cat.report.in_memory_because {
        anyhow::bail!("cannot watch: the catalog is in memory ({why})");
    }
    let roots = sessions_roots(loc);
    if roots.is_empty() {
        anyhow::bail!("cannot watch: no sessions directory under the agent directories");
    }
    let path = cat.path().to_path_buf();
    with_recovery(cat, |c| {
        let render = |opts: &str, listed: &[arbor_index::Listed]| {
            super::ls::render_for_watcher(loc, opts, listed)
        };
        arbor_index::watch::run(
            c,
            &roots,
            &|| loc.all_project_dirs(),
            &render,
            &mut |e| match e {
                arbor_index::watch::WatchEvent::Ready(_) => {
                    say_err!(
                    "arbor: watching {} for changes; the catalog {} is kept fresh (Ctrl-C stops)",
                    roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    path.display()
                );
                }
                arbor_index::watch::WatchEvent::Refreshed(s) => warn_failed(s),
                arbor_index::watch::WatchEvent::NotVouched(r) => say_err!(
                    "arbor: warning: {}: changes may be missed (a network or FUSE file system, or \
                 inotify reported an error): commands keep looking at its files themselves",
                    r.display()
                ),
            },
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Options of `arbor search`.
#[derive(Debug, Clone)]
pub struct SearchOpts<'a> {
    /// Query text.
    pub query: &'a str,
    /// `--dir` / `--all`.
    pub scope: &'a crate::cli::ScopeOpts,
    /// `--role` values.
    pub roles: &'a [String],
    /// `--since`.
    pub since: Option<crate::args::Since>,
    /// `--json`.
    pub json: bool,
    /// `--limit`.
    pub limit: usize,
    /// `--thinking`, `--tools`.
    pub kinds: IndexKinds,
    /// `--rank-all`.
    pub rank_all: bool,
    /// `--count-all`.
    pub count_all: bool,
    /// `--long`: each hit's file and entry time.
    pub long: bool,
    /// `--agent`: only this agent's sessions.
    pub agent: Option<crate::cli::Tool>,
}

/// `arbor search`. Exit status 1 when nothing matches (as grep).
pub fn search(
    o: &SearchOpts<'_>,
    term: &crate::term::Term,
    loc: &Locator,
    catalog: Option<&Path>,
) -> Result<ExitCode> {
    let (kinds, need) = arbor_index::fresh::search_kinds(o.roles, o.kinds).map_err(|part| {
        crate::report::Usage(format!(
            "--role: unknown role '{part}' ({})",
            arbor_index::fresh::ROLE_NAMES
        ))
    })?;
    let scope = o.scope.scope();
    let dirs = if super::agents::wants_pi(o.agent) {
        loc.project_dirs(scope)?
    } else {
        Vec::new()
    };
    let since_ms = o.since.map(|s| s.at(arbor_store::ids::now_ms() as f64));
    let mut cat = open_catalog(catalog)?;
    // Other agents' sessions in scope: refreshed, their texts searched beside pi's.
    let foreign = super::agents::in_scope(&mut cat, scope, o.agent)?;
    let new_kinds = with_recovery(&mut cat, |c| c.require_kinds(need))?;
    if new_kinds {
        say_err!(
            "arbor: indexing {} for the first time",
            if need.thinking && need.tools {
                "thinking and tool output"
            } else if need.thinking {
                "thinking"
            } else {
                "tool output"
            }
        );
    }
    let mut q = SearchQuery::new(o.query);
    q.kinds = Some(kinds);
    q.since_ms = since_ms;
    q.dirs = Some(dirs.iter().map(|d| arbor_index::dir_key(d)).collect());
    q.limit = o.limit;
    if o.rank_all {
        q.rank_window = 0;
    }
    if o.count_all {
        q.count_cap = 0;
    }
    // Matched words are marked with private-use characters, which no sanitizer touches and
    // no session text is likely to hold: replaced by colour, or turned into offsets for JSON.
    q.marks = (MARK_ON.into(), MARK_OFF.into());
    // A live watcher's answer, else a search while the files are checked (see
    // `arbor_index::fresh::search`).
    let (mut hits, mut total) = if dirs.is_empty() {
        (Vec::new(), 0)
    } else {
        arbor_index::fresh::search(&mut cat, &q, &dirs, need, new_kinds, &mut CliReport::new())?
    };
    let mut foreign_of: std::collections::HashMap<(PathBuf, String), &arbor_index::ForeignRow> =
        Default::default();
    if !foreign.rows.is_empty() {
        let in_scope: std::collections::HashSet<(&Path, &str)> = foreign
            .rows
            .iter()
            .map(|r| (r.source.as_path(), r.summary.id.as_str()))
            .collect();
        let found = cat.search_foreign(
            o.query,
            q.kinds.as_deref(),
            since_ms,
            o.limit,
            &q.marks,
            &|r| in_scope.contains(&(r.source.as_path(), r.summary.id.as_str())),
        )?;
        total += found.len() as u64;
        for f in found {
            let row = foreign
                .rows
                .iter()
                .find(|r| r.source == f.row.source && r.summary.id == f.row.summary.id);
            if let Some(row) = row {
                foreign_of.insert((row.source.clone(), row.summary.id.clone()), row);
            }
            hits.push(f.into_hit());
        }
        // pi's hits and theirs by one relevance (BM25, lower first), at most --limit.
        arbor_index::by_rank(&mut hits);
        hits.truncate(o.limit);
    }
    let mut more = total.saturating_sub(hits.len() as u64);
    // Counted up to the cap: past it, "more than `cap`".
    let capped = q.count_cap > 0 && more > q.count_cap as u64;
    if capped {
        more = q.count_cap as u64;
    }
    if o.json {
        let mut out = Vec::new();
        let mut env = arbor_core::json::JsonObject::new(&mut out);
        let mut list = Vec::new();
        let mut array = arbor_core::json::JsonArray::new(&mut list);
        for h in &hits {
            let (plain, spans) = unmark(&h.snippet);
            let mut hl = Vec::new();
            let mut ha = arbor_core::json::JsonArray::new(&mut hl);
            for (a, b) in &spans {
                ha.raw(format!("[{a},{b}]").as_bytes());
            }
            ha.finish();
            array.object(|j| {
                j.str("path", &h.path.to_string_lossy())
                    .opt_str("sessionId", h.session_id.as_deref())
                    .opt_str("entryId", h.entry_id.as_deref())
                    .str("role", h.kind.name())
                    .opt_str("timestamp", h.timestamp.as_deref())
                    .bool("onCurrentBranch", h.on_current_branch)
                    .str("snippet", &plain)
                    .raw("highlights", &hl)
                    .opt_str("sessionName", h.session_name.as_deref());
                if let Some(r) = h
                    .session_id
                    .as_ref()
                    .and_then(|id| foreign_of.get(&(h.path.clone(), id.clone())))
                {
                    j.str("agent", r.agent.name());
                }
            });
        }
        array.finish();
        env.raw("hits", &list).uint("more", more);
        if capped {
            env.bool("moreCapped", true);
        }
        env.finish();
        out.push(b'\n');
        stdout_all(&out)?;
    } else if hits.is_empty() {
        let none = foreign.rows.is_empty()
            && dirs
                .iter()
                .all(|d| arbor_store::discover::session_files(d).is_empty());
        if none {
            super::ls::no_sessions(scope, loc, "search");
        } else if dirs.is_empty() {
            say_err!(
                "arbor: no match in {}",
                arbor_view::count(
                    foreign.rows.len() as u64,
                    "session of other agents",
                    "sessions of other agents"
                )
            );
        } else {
            say_err!(
                "arbor: no match in {}",
                arbor_view::count(
                    dirs.len() as u64,
                    "project directory",
                    "project directories"
                )
            );
        }
    } else {
        let mut out = crate::term::Out::new(term);
        let mut sessions = HitSessions::new(&cat, &dirs, &hits, loc);
        sessions.add_foreign(&foreign_of);
        for h in &hits {
            print_hit(h, &sessions, o.long, term, &mut out);
        }
        out.print(term, false)?;
    }
    if more > 0 {
        say_err!(
            "arbor: {}{more} more match{} (--limit {} shown; raise --limit to see them{})",
            if capped { "over " } else { "" },
            if more == 1 && !capped { "" } else { "es" },
            hits.len(),
            if capped {
                ", --count-all to count them"
            } else {
                ""
            }
        );
    }
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A snippet without its marks, and the marked spans as character offsets into it.
fn unmark(s: &str) -> (String, Vec<(usize, usize)>) {
    let mut plain = String::with_capacity(s.len());
    let mut spans = Vec::new();
    let mut n = 0;
    let mut open = None;
    for c in s.chars() {
        match c {
            '\u{e000}' => open = Some(n),
            '\u{e001}' => {
                if let Some(a) = open.take() {
                    spans.push((a, n));
                }
            }
            c => {
                plain.push(c);
                n += 1;
            }
        }
    }
    (plain, spans)
}

/// The sessions of a list of hits as `ls` names them: short ids, titles and ages.
struct HitSessions {
    ids: super::ls::ShortIds,
    /// Title and last activity (ms) by file, from the catalog's listing.
    listed: std::collections::HashMap<PathBuf, (String, f64)>,
    /// The widest short id.
    idw: usize,
    now: f64,
    /// Other agents' sessions among the hits: (source, session id) to short id, agent,
    /// title and last activity.
    foreign: std::collections::HashMap<(PathBuf, String), (String, String, f64)>,
}

impl HitSessions {
    fn new(cat: &Catalog, dirs: &[PathBuf], hits: &[arbor_index::Hit], loc: &Locator) -> Self {
        let ids = super::ls::ShortIds::new(loc, hits.iter().map(|h| h.path.as_path()));
        let listed = cat
            .listed_as_stored(dirs)
            .unwrap_or_default()
            .into_iter()
            .map(|l| {
                let title = l.display_title().into_owned();
                (l.file, (title, l.info.modified_ms))
            })
            .collect();
        let idw = hits
            .iter()
            .map(|h| crate::term::width(&ids.of(&h.path)))
            .max()
            .unwrap_or(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as f64)
            .unwrap_or(0.0);
        HitSessions {
            ids,
            listed,
            idw,
            now,
            foreign: Default::default(),
        }
    }

    /// Names other agents' sessions among the hits as `ls` does (short id; the agent before
    /// the title).
    fn add_foreign(
        &mut self,
        rows: &std::collections::HashMap<(PathBuf, String), &arbor_index::ForeignRow>,
    ) {
        let list: Vec<&arbor_index::ForeignRow> = rows.values().copied().collect();
        let ids = super::agents::short_ids(&list);
        for (r, id) in list.iter().zip(ids) {
            self.idw = self.idw.max(crate::term::width(&id));
            self.foreign.insert(
                (r.source.clone(), r.summary.id.clone()),
                (
                    id,
                    format!("[{}] {}", r.agent, r.display_title()),
                    r.summary.modified_ms.map_or(f64::NAN, |t| t as f64),
                ),
            );
        }
    }
}

/// One hit: its session as `ls` names it (short id, age, title), what matched (role, entry
/// id, off the resumed branch), then the snippet; `--long` adds the file and the entry's time.
fn print_hit(
    h: &arbor_index::Hit,
    s: &HitSessions,
    long: bool,
    term: &crate::term::Term,
    out: &mut crate::term::Out,
) {
    use crate::term::{pad, pad_left, Paint};
    let foreign = h
        .session_id
        .as_ref()
        .and_then(|id| s.foreign.get(&(h.path.clone(), id.clone())));
    let (title, modified) = match (foreign, s.listed.get(&h.path)) {
        (Some((_, t, m)), _) => (t.as_str(), Some(*m)),
        (None, Some((t, m))) => (t.as_str(), Some(*m)),
        (None, None) => (h.session_name.as_deref().unwrap_or(""), None),
    };
    let short = match foreign {
        Some((id, _, _)) => id.clone(),
        None => s.ids.of(&h.path),
    };
    let age = modified.map(|m| age(s.now - m)).unwrap_or_default();
    let entry = h.entry_id.as_deref().unwrap_or("-");
    let mut what = format!("{} {entry}", h.kind.name());
    if !h.on_current_branch {
        what.push_str(" (other branch)");
    }
    let room = term
        .width
        .saturating_sub(s.idw + 1 + 4 + 2 + 2 + crate::term::width(&what))
        .max(10);
    out.paint(Paint::Id, &pad(&short, s.idw))
        .put(" ")
        .paint(Paint::Dim, &pad_left(&age, 4))
        .put("  ")
        .put(&pad(&arbor_view::one_line(title, 500), room))
        .put("  ")
        .paint(Paint::Dim, &format!("{} ", h.kind.name()))
        .paint(Paint::Id, entry);
    if !h.on_current_branch {
        out.paint(Paint::Dim, " (other branch)");
    }
    out.nl();
    if long {
        let ts = h
            .timestamp
            .as_deref()
            .map(|t| t.get(..16).unwrap_or(t).replace('T', " "))
            .unwrap_or_default();
        out.put("    ")
            .paint(Paint::Dim, &home_short(&h.path.to_string_lossy()))
            .put("  ")
            .paint(Paint::Dim, &ts)
            .nl();
    }
    out.put("    ");
    let snippet = h.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    let snippet = fit_marked(&snippet, term.width.saturating_sub(4).max(20));
    // Alternate plain and marked pieces.
    let mut rest = snippet.as_str();
    while let Some(a) = rest.find(MARK_ON) {
        out.put(&arbor_view::sanitize_line(&rest[..a]));
        let after = &rest[a + MARK_ON.len()..];
        let b = after.find(MARK_OFF).unwrap_or(after.len());
        out.paint(Paint::Hit, &arbor_view::sanitize_line(&after[..b]));
        rest = after.get(b + MARK_OFF.len()..).unwrap_or("");
    }
    out.put(&arbor_view::sanitize_line(rest)).nl();
}

/// A snippet with its match marks cut to `max` columns (the marks take none), `…` where it
/// was cut, a mark left open closed.
fn fit_marked(s: &str, max: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let plain = s.replace([MARK_ON_CHAR, MARK_OFF_CHAR], "");
    if crate::term::width(&plain) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let (mut w, mut open) = (0, false);
    for c in s.chars() {
        match c {
            MARK_ON_CHAR => open = true,
            MARK_OFF_CHAR => open = false,
            c => {
                let cw = c.width().unwrap_or(0);
                if w + cw + 1 > max {
                    break;
                }
                w += cw;
            }
        }
        out.push(c);
    }
    if open {
        out.push(MARK_OFF_CHAR);
    }
    out.push('…');
    out
}

/// `arbor history`.
pub fn history(
    query: Option<&str>,
    json: bool,
    limit: f64,
    add: Option<&str>,
    cwd: Option<&str>,
    session: Option<&str>,
    loc: &Locator,
) -> Result<ExitCode> {
    let agent = loc.agent_override();
    let agent_dir = agent
        .map(Path::to_path_buf)
        .unwrap_or_else(|| paths::agent_dir(Dialect::Omp));
    let db = paths::history_db(&agent_dir);
    if let Some(prompt) = add {
        let h = History::open(&db)?;
        let cwd = match cwd {
            Some(c) => c.to_string(),
            None => cwd_string()?,
        };
        let added = h.add(prompt, Some(&cwd), session)?;
        h.close()?;
        if !added {
            say_err!("arbor: empty prompt not recorded");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let entries: Vec<HistoryEntry> = match History::open_read_only(&db)? {
        None => Vec::new(),
        Some(h) => match query.map(str::trim).filter(|q| !q.is_empty()) {
            Some(q) => h.search(q, limit)?,
            None => h.recent(limit)?,
        },
    };
    let mut out = Vec::new();
    if json {
        out.push(b'[');
        for (k, e) in entries.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            e.write_json(&mut out);
        }
        out.extend_from_slice(b"]\n");
    } else {
        if entries.is_empty() {
            say_err!("arbor: no prompts in {}", db.display());
        }
        for e in &entries {
            let when = arbor_core::time::format_iso_ms(e.created_at * 1000);
            let when = when.get(..16).unwrap_or(&when).replace('T', " ");
            let cwd = e.cwd.as_deref().map(home_short).unwrap_or_default();
            out.extend_from_slice(
                format!("{when}  {}  {}\n", arbor_view::one_line(&e.prompt, 80), cwd).as_bytes(),
            );
        }
        return human_all(&out).map(|()| ExitCode::SUCCESS);
    }
    stdout_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_forms() {
        use crate::args::since;
        let now = 1_000_000_000_000.0;
        assert_eq!(since("2d").unwrap().at(now), now - 2.0 * 86_400_000.0);
        assert_eq!(since("90m").unwrap().at(now), now - 90.0 * 60_000.0);
        assert_eq!(since("2025-01-01").unwrap().at(now), 1_735_689_600_000.0);
        assert!(since("yesterday").is_err());
        assert_eq!(age(3_600_000.0 * 5.0), "5h");
    }
}
