//! `arbor stats`: tokens and cost, split into the path each session resumes and the branches
//! it left, a fork's copies of its parent's turns counted once. The counting is
//! [`arbor_view`]'s ([`arbor_view::aggregate_stats`]); here: the flags, the catalog's cached
//! spends and the table.
use crate::term::{self, Out, Paint, Term};
use anyhow::Result;
use arbor_index::Catalog;
use arbor_index::SpendRow;
use arbor_index::Stat;
use arbor_store::locate::Locator;
use arbor_view::usage::{self, SpendKey};
use arbor_view::{canon_of, parent_index, Counted, SessionSpends, StatsRow};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How rows are grouped (`--by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One row per session.
    Session,
    /// Per UTC day of the turns.
    Day,
    /// Per ISO week (the Monday it starts on).
    Week,
    /// Per month.
    Month,
    /// Per provider/model.
    Model,
    /// Per project (the session's cwd).
    Project,
}

impl From<By> for arbor_view::StatsBy {
    fn from(b: By) -> Self {
        match b {
            By::Session => arbor_view::StatsBy::Session,
            By::Day => arbor_view::StatsBy::Day,
            By::Week => arbor_view::StatsBy::Week,
            By::Month => arbor_view::StatsBy::Month,
            By::Model => arbor_view::StatsBy::Model,
            By::Project => arbor_view::StatsBy::Project,
        }
    }
}

/// What `arbor stats` was asked for.
pub struct StatsOpts<'a> {
    /// Sessions named.
    pub sessions: &'a [String],
    /// `--dir` / `--all`.
    pub scope: &'a crate::cli::ScopeOpts,
    /// `--by`.
    pub by: By,
    /// `--since`, ms.
    pub since_ms: Option<f64>,
    /// `--json`.
    pub json: bool,
    /// `--no-catalog`: read every file.
    pub no_catalog: bool,
}

/// A session file read for its spends; the error as the catalog keeps it ([`super::why_not`]).
fn load(f: &Path) -> Result<SessionSpends, String> {
    SessionSpends::load(f).map_err(|e| super::why_not(f, &e))
}

/// Says that `f` was not counted and why, the path once; nothing for a file known not to be
/// a session (an empty `why`).
fn not_counted(f: &Path, why: &str) {
    if why.is_empty() {
        return;
    }
    // A reason kept by an older catalog still starts with the path.
    let path = format!("{}: ", f.display());
    let why = why.strip_prefix(&path).unwrap_or(why);
    say_err!("arbor: {}: not counted: {why}", f.display());
}

/// A reason the catalog kept for `f`, as [`super::why_not`] gives it today: an older catalog kept the
/// whole error text, the path included, also for a file known not to be a session.
fn kept_why(f: &Path, kept: &str) -> String {
    let empty = arbor_store::StoreError::NotASession {
        path: f.to_path_buf(),
        reason: arbor_core::NotASession::Empty,
    };
    if kept == empty.to_string() {
        String::new()
    } else {
        kept.to_string()
    }
}

/// Reads every file ([`arbor_view::stats_from_files`]); says which were not counted.
fn files_counted(files: &[PathBuf]) -> Vec<Counted> {
    let (counted, failed) = arbor_view::stats_from_files(files);
    for (f, e) in failed {
        not_counted(&f, &super::why_not(&f, &e));
    }
    counted
}

/// One listed file, on its way from the catalog.
struct Item {
    file: PathBuf,
    dir_key: String,
    name: String,
    canon: String,
    /// `None`: not a regular file (read every time, never kept).
    stat: Option<Stat>,
    /// The catalog's row, when the file's stat is the stored one.
    row: Option<SpendRow>,
    /// Read in this run.
    loaded: Option<Result<SessionSpends, String>>,
    /// The row changed: store it.
    dirty: bool,
}

impl Item {
    fn counted(&self) -> bool {
        match (&self.loaded, &self.row) {
            (Some(l), _) => l.is_ok(),
            (None, Some(r)) => r.error.is_none(),
            (None, None) => false,
        }
    }
    /// Its spends (read now if they were not).
    fn spends(&mut self) -> Option<&SessionSpends> {
        if self.loaded.is_none() {
            self.loaded = Some(load(&self.file));
        }
        self.loaded.as_ref().and_then(|l| l.as_ref().ok())
    }
}

/// Reads each file on the worker threads.
fn load_all(items: &mut [&mut Item]) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len())
        .max(1);
    let files: Vec<PathBuf> = items.iter().map(|i| i.file.clone()).collect();
    let results: Vec<(usize, Result<SessionSpends, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        out.push((i, load(f)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|_| vec![]))
            .collect()
    });
    for (i, r) in results {
        items[i].loaded = Some(r);
    }
}

/// The keys of the spends of `items[j]` (a parent), read once.
fn keys_of(items: &mut [Item], keys: &mut HashMap<usize, HashSet<SpendKey>>, j: usize) {
    if let std::collections::hash_map::Entry::Vacant(e) = keys.entry(j) {
        let k = items[j]
            .spends()
            .map(|l| usage::spend_keys(&l.spends))
            .unwrap_or_default();
        e.insert(k);
    }
}

/// The sessions of `dirs`, from the catalog: the files whose stat changed are read again (and
/// kept), the others are the catalog's rows. Adds up to exactly what [`files_counted`] gives.
fn from_catalog(cat: &mut Catalog, dirs: &[PathBuf], since: Option<f64>) -> Result<Vec<Counted>> {
    let mut items: Vec<Item> = Vec::new();
    let mut gone: Vec<(String, String)> = Vec::new();
    for d in dirs {
        let key = arbor_index::dir_key(d);
        let mut rows = cat.spend_rows(&key)?;
        let files = arbor_store::discover::session_files(d);
        let names: HashSet<String> = files
            .iter()
            .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        gone.extend(
            rows.keys()
                .filter(|n| !names.contains(*n))
                .map(|n| (key.clone(), n.clone())),
        );
        for f in files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (canon, stat) = match std::fs::symlink_metadata(&f) {
                Ok(m) if m.file_type().is_symlink() => (
                    canon_of(&f),
                    std::fs::metadata(&f)
                        .ok()
                        .filter(|m| m.is_file())
                        .map(|m| Stat::from_meta(&m)),
                ),
                Ok(m) => (
                    format!("{}/{name}", key.trim_end_matches('/')),
                    m.is_file().then(|| Stat::from_meta(&m)),
                ),
                Err(_) => (canon_of(&f), None),
            };
            let row = rows
                .remove(&name)
                .filter(|r| stat.is_some_and(|s| s == r.stat));
            items.push(Item {
                file: f,
                dir_key: key.clone(),
                name,
                canon,
                stat,
                row,
                loaded: None,
                dirty: false,
            });
        }
    }
    let mut stale: Vec<&mut Item> = items.iter_mut().filter(|i| i.row.is_none()).collect();
    load_all(&mut stale);
    // A file is named when it is found not to be countable; on later runs (its error kept in
    // the catalog, the file unchanged) one line counts them, so the same warnings do not come
    // back on every run.
    let mut known = 0usize;
    for i in &mut items {
        if let Some(Err(e)) = &i.loaded {
            not_counted(&i.file, e);
        } else if let (None, Some(SpendRow { error: Some(e), .. })) = (&i.loaded, &i.row) {
            known += usize::from(!kept_why(&i.file, e).is_empty());
        }
    }
    if known > 0 {
        say_err!(
            "arbor: {} not counted, as said before (--no-catalog names {})",
            arbor_view::count(known as u64, "file", "files"),
            if known == 1 { "it" } else { "them" }
        );
    }
    // The counted sessions by canonical path (the last of two alike, as from_files).
    let ids: Vec<Option<String>> = items
        .iter()
        .map(|i| match (&i.loaded, &i.row) {
            (Some(Ok(l)), _) => l.id.clone(),
            (None, Some(r)) => r.id.clone(),
            _ => None,
        })
        .collect();
    let by_canon: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.counted())
        .map(|(k, i)| (i.canon.as_str(), k))
        .collect();
    let by_id: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.counted())
        .filter_map(|(k, _)| Some((ids[k].as_deref()?, k)))
        .collect();
    let parent_of: Vec<Option<usize>> = items
        .iter()
        .map(|i| {
            let parent = match (&i.loaded, &i.row) {
                (Some(Ok(l)), _) => l.parent.as_deref(),
                (None, Some(r)) if r.error.is_none() => r.parent.as_deref(),
                _ => None,
            };
            parent.and_then(|p| parent_index(p, &by_canon, &by_id))
        })
        .collect();
    let canons: Vec<String> = items.iter().map(|i| i.canon.clone()).collect();
    let mut parent_keys: HashMap<usize, HashSet<SpendKey>> = HashMap::new();
    for k in 0..items.len() {
        if !items[k].counted() {
            if let (Some(Err(e)), Some(stat)) = (&items[k].loaded, items[k].stat) {
                // Kept, so that it is not read again until it changes.
                let row = SpendRow {
                    stat,
                    error: Some(e.clone()),
                    cwd: String::new(),
                    id: None,
                    parent: None,
                    parent_seen: None,
                    buckets: Vec::new(),
                };
                items[k].row = Some(row);
                items[k].dirty = true;
            }
            continue;
        }
        let pj = parent_of[k];
        let seen = pj.and_then(|j| Some((canons[j].clone(), items[j].stat?)));
        let fresh = items[k].loaded.is_none()
            && items[k]
                .row
                .as_ref()
                .is_some_and(|r| pj.is_none() || r.parent_seen == seen);
        if fresh {
            continue;
        }
        // Read (or read again) and bucketed, a fork's copies marked against its parent.
        if let Some(j) = pj {
            keys_of(&mut items, &mut parent_keys, j);
        }
        let Some(stat) = items[k].stat else { continue };
        let parent_set = pj.and_then(|j| parent_keys.get(&j));
        let Some(l) = items[k].spends() else { continue };
        let row = SpendRow {
            stat,
            error: None,
            cwd: l.cwd.clone(),
            id: l.id.clone(),
            parent: l.parent.clone(),
            parent_seen: seen,
            buckets: usage::buckets(&l.spends, parent_set, false),
        };
        items[k].row = Some(row);
        items[k].dirty = true;
    }
    let dirty: Vec<(String, String, SpendRow)> = items
        .iter()
        .filter(|i| i.dirty)
        .filter_map(|i| Some((i.dir_key.clone(), i.name.clone(), i.row.clone()?)))
        .collect();
    if let Err(e) = cat.put_spend_rows(&dirty, &gone) {
        say_err!("arbor: warning: the catalog was not updated: {e}");
    }
    // A --since inside a bucket's times: that session's spends one by one.
    let mut out = Vec::new();
    for k in 0..items.len() {
        if !items[k].counted() {
            continue;
        }
        let Some(row) = items[k].row.as_ref() else {
            // Not a regular file yet read: counted from what was read.
            let pj = parent_of[k];
            if let Some(j) = pj {
                keys_of(&mut items, &mut parent_keys, j);
            }
            let parent_set = pj.and_then(|j| parent_keys.get(&j));
            let file = items[k].file.clone();
            if let Some(l) = items[k].spends() {
                out.push(Counted::new(
                    file,
                    l.cwd.clone(),
                    pj.is_some(),
                    usage::buckets(&l.spends, parent_set, true),
                ));
            }
            continue;
        };
        let straddles = since.is_some_and(|s| {
            row.buckets
                .iter()
                .any(|b| b.utc_day.is_some() && b.min_ms < s && b.max_ms >= s)
        });
        let (cwd, mut buckets) = (row.cwd.clone(), row.buckets.clone());
        let pj = parent_of[k];
        if straddles {
            if let Some(j) = pj {
                keys_of(&mut items, &mut parent_keys, j);
            }
            let parent_set = pj.and_then(|j| parent_keys.get(&j));
            if let Some(l) = items[k].spends() {
                buckets = usage::buckets(&l.spends, parent_set, true);
            }
        }
        out.push(Counted::new(
            items[k].file.clone(),
            cwd,
            pj.is_some(),
            buckets,
        ));
    }
    Ok(out)
}

/// Columns of a row after its GROUP cell: the numbers and the spaces between them.
const NUMBERS: usize = 5 + 6 + 6 + 7 + 7 + 9 + 8 + 7;

/// What each row of `stats` is called in the table: a session as `ls` names it (its short id
/// and title), a project by its directory (`~` for the home directory), the others as they
/// are.
fn row_labels(
    o: &StatsOpts<'_>,
    stats: &arbor_view::Stats,
    loc: &Locator,
    catalog: Option<&Path>,
) -> Vec<String> {
    let groups = stats.rows.iter().map(|r| r.group.as_str());
    match o.by {
        By::Session => {
            let files: Vec<PathBuf> = groups.map(PathBuf::from).collect();
            let ids = super::ls::ShortIds::new(loc, files.iter().map(PathBuf::as_path));
            let titles = titles_of(&files, o.no_catalog, catalog);
            let short: Vec<String> = files.iter().map(|f| ids.of(f)).collect();
            let idw = short.iter().map(|i| term::width(i)).max().unwrap_or(0);
            files
                .iter()
                .zip(&short)
                .map(|(f, id)| {
                    let title = titles.get(f).map(String::as_str).unwrap_or("");
                    let title = arbor_view::one_line(title, 200);
                    format!("{} {title}", term::pad(id, idw))
                        .trim_end()
                        .to_string()
                })
                .collect()
        }
        By::Project => groups
            .map(|g| match g {
                "" => "(no cwd)".to_string(),
                g => crate::cmd::index::home_short(g),
            })
            .collect(),
        _ => groups.map(str::to_string).collect(),
    }
}

/// The titles of session files as `ls` shows them: from the catalog's listing of their
/// directories, or (`--no-catalog`, or a catalog that cannot be read) from each file.
fn titles_of(
    files: &[PathBuf],
    no_catalog: bool,
    catalog: Option<&Path>,
) -> HashMap<PathBuf, String> {
    let mut titles = HashMap::new();
    if !no_catalog {
        let mut dirs: Vec<PathBuf> = files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        dirs.sort();
        dirs.dedup();
        let listed = super::index::open_catalog(catalog)
            .ok()
            .and_then(|mut cat| super::index::refreshed_listing(&mut cat, &dirs, false).ok());
        if let Some((listed, _)) = listed {
            for l in &listed {
                titles.insert(l.file.clone(), l.display_title().into_owned());
            }
        }
    }
    for f in files {
        if titles.contains_key(f) {
            continue;
        }
        if let Ok(Some(info)) = arbor_store::info::session_info_streaming(f, 0.0) {
            let title = info
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| info.first_message.to_string_lossy().into_owned());
            titles.insert(f.clone(), title);
        }
    }
    titles
}

/// A row's label cut to `cols` columns, keeping the part that tells rows apart: a session's
/// short id and the start of its title, a project's last directories (`…/work/webapp`).
fn fit_label(label: &str, cols: usize, by: By) -> String {
    if by != By::Project || term::width(label) <= cols {
        return term::pad(label, cols);
    }
    // The end of the path: whole components while they fit, after an ellipsis.
    let mut kept = String::new();
    for part in label.rsplit('/') {
        let next = if kept.is_empty() {
            part.to_string()
        } else {
            format!("{part}/{kept}")
        };
        if term::width(&next) + 2 > cols {
            break;
        }
        kept = next;
    }
    let tail = if kept.is_empty() {
        // One component longer than the cell: its end.
        let chars: Vec<char> = label.chars().collect();
        let mut t = String::new();
        for c in chars.iter().rev() {
            if term::width(&t) + term::width(&c.to_string()) + 1 > cols {
                break;
            }
            t.insert(0, *c);
        }
        format!("…{t}")
    } else {
        format!("…/{kept}")
    };
    term::pad(&tail, cols)
}

/// `arbor stats`.
pub fn stats(
    o: &StatsOpts<'_>,
    term: &Term,
    loc: &Locator,
    catalog: Option<&Path>,
) -> Result<ExitCode> {
    let mut files: Vec<PathBuf> = Vec::new();
    for s in o.sessions {
        files.push(loc.resolve_session(s)?);
    }
    let scope = o.scope.scope();
    let listed = files.is_empty() || o.scope.named();
    let sessions = if listed && files.is_empty() && !o.no_catalog {
        let dirs = loc.project_dirs(scope)?;
        let mut cat = super::index::open_catalog(catalog)?;
        match from_catalog(&mut cat, &dirs, o.since_ms) {
            Ok(s) => s,
            Err(e) => {
                say_err!("arbor: warning: the catalog's totals cannot be read ({e}); reading the session files");
                for d in &dirs {
                    files.extend(arbor_store::discover::session_files(d));
                }
                files_counted(&files)
            }
        }
    } else {
        if listed {
            for d in loc.project_dirs(scope)? {
                files.extend(arbor_store::discover::session_files(&d));
            }
        }
        files_counted(&files)
    };
    let stats = arbor_view::aggregate_stats(&sessions, o.by.into(), o.since_ms);
    if o.json {
        stats.write_json(&mut crate::report::stdout())?;
        return Ok(ExitCode::SUCCESS);
    }
    let labels = row_labels(o, &stats, loc, catalog);
    let mut out = Out::new(term);
    let num = |x: f64| {
        if x >= 1e6 {
            format!("{:.1}M", x / 1e6)
        } else if x >= 1e4 {
            format!("{:.0}K", x / 1e3)
        } else {
            format!("{x:.0}")
        }
    };
    // The numbers take NUMBERS columns; GROUP the rest of the screen (at least 12), or what
    // its widest label needs.
    let gw = labels
        .iter()
        .map(|l| term::width(l))
        .max()
        .unwrap_or(5)
        .clamp(5, term.width.saturating_sub(NUMBERS + 1).max(12));
    out.paint(
        Paint::Header,
        &format!(
            "{} {:>5} {:>6} {:>6} {:>7} {:>7} {:>9} {:>8}",
            term::pad("GROUP", gw),
            "TURNS",
            "INPUT",
            "OUTPUT",
            "CACHE-R",
            "CACHE-W",
            "COST PATH",
            "BRANCHES"
        ),
    )
    .nl();
    let line = |out: &mut Out, label: &str, r: &StatsRow| {
        let mut sum = r.path;
        sum.add(&r.other);
        sum.add(&r.side);
        let all = sum.tokens();
        let mut kept = r.path;
        kept.add(&r.side);
        out.put(&fit_label(label, gw, o.by))
            .put(&format!(
                " {:>5} {:>6} {:>6} {:>7} {:>7} {:>9} {:>8}",
                r.turns,
                num(all.input),
                num(all.output),
                num(all.cache_read),
                num(all.cache_write),
                format!("${:.2}", kept.tokens().cost),
                format!("${:.2}", r.other.tokens().cost),
            ))
            .nl();
    };
    for (r, label) in stats.rows.iter().zip(&labels) {
        line(&mut out, label, r);
    }
    out.paint(Paint::Dim, "").nl();
    line(&mut out, "total", &stats.total);
    out.print(term, false)?;
    let dropped = stats.fork_copies_skipped;
    if dropped > 0 {
        say_err!(
            "arbor: {} copied by forks from their parent session counted once",
            arbor_view::count(dropped as u64, "turn", "turns")
        );
    }
    Ok(ExitCode::SUCCESS)
}
