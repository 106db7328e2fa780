//! `arbor stats`: tokens and cost, split into the path each session resumes and the branches
//! it left, a fork's copies of its parent's turns counted once. The counting is
//! [`arbor_view`]'s ([`arbor_view::aggregate_stats`], from the catalog's cached spends:
//! [`arbor_view::stats_catalog`]); here: the flags and the table.
use crate::term::{self, Out, Paint, Term};
use anyhow::Result;
use arbor_index::Catalog;
use arbor_store::locate::Locator;
use arbor_view::{Counted, StatsRow};
use std::collections::HashMap;
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
    /// Per agent (pi, omp, claude, codex, opencode).
    Agent,
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
            By::Agent => arbor_view::StatsBy::Agent,
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
    /// `--agent`: only this agent's sessions.
    pub agent: Option<crate::cli::Tool>,
}

/// Other agents' sessions in scope as counted sessions (their spends kept by the catalog;
/// Claude Code's and Codex's costs estimated), with the label of each in the session table.
fn foreign_counted(
    o: &StatsOpts<'_>,
    catalog: Option<&Path>,
) -> Result<(Vec<Counted>, HashMap<String, String>)> {
    let mut labels = HashMap::new();
    if !o.sessions.is_empty() || o.no_catalog {
        return Ok((Vec::new(), labels));
    }
    let mut cat = super::index::open_catalog(catalog)?;
    let got = super::agents::in_scope(&mut cat, o.scope.scope(), o.agent)?;
    let refs: Vec<&arbor_index::ForeignRow> = got.rows.iter().collect();
    let ids = super::agents::short_ids(&refs);
    let mut out = Vec::new();
    for (r, id) in got.rows.iter().zip(ids) {
        let (c, label) = super::agents::counted(r, &id);
        labels.insert(c.file.to_string_lossy().into_owned(), label);
        out.push(c);
    }
    Ok((out, labels))
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

/// Reads every file ([`arbor_view::stats_from_files`]); says which were not counted.
fn files_counted(files: &[PathBuf]) -> Vec<Counted> {
    let (counted, failed) = arbor_view::stats_from_files(files);
    for (f, e) in failed {
        not_counted(&f, &super::why_not(&f, &e));
    }
    counted
}

/// The sessions of `dirs`, from the catalog ([`arbor_view::stats_catalog::counted`]), with
/// what was not counted said on stderr.
fn from_catalog(cat: &mut Catalog, dirs: &[PathBuf], since: Option<f64>) -> Result<Vec<Counted>> {
    use arbor_view::stats_catalog::Note;
    Ok(arbor_view::stats_catalog::counted(
        cat,
        dirs,
        since,
        None,
        &mut |n| match n {
            Note::NotCounted { file, why } => not_counted(&file, &why),
            Note::KnownNotCounted(known) => say_err!(
                "arbor: {} not counted, as said before (--no-catalog names {})",
                arbor_view::count(known as u64, "file", "files"),
                if known == 1 { "it" } else { "them" }
            ),
            Note::NotStored(e) => say_err!("arbor: warning: the catalog was not updated: {e}"),
            _ => {}
        },
    )?)
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
    foreign: &HashMap<String, String>,
) -> Vec<String> {
    let groups = stats.rows.iter().map(|r| r.group.as_str());
    match o.by {
        By::Session => {
            let files: Vec<PathBuf> = groups
                .filter(|g| !foreign.contains_key(*g))
                .map(PathBuf::from)
                .collect();
            let ids = super::ls::ShortIds::new(loc, files.iter().map(PathBuf::as_path));
            let titles = titles_of(&files, o.no_catalog, catalog);
            let short: Vec<String> = files.iter().map(|f| ids.of(f)).collect();
            let idw = short.iter().map(|i| term::width(i)).max().unwrap_or(0);
            let labels = files
                .iter()
                .zip(&short)
                .map(|(f, id)| {
                    let title = titles.get(f).map(String::as_str).unwrap_or("");
                    let title = arbor_view::one_line(title, 200);
                    format!("{} {title}", term::pad(id, idw))
                        .trim_end()
                        .to_string()
                })
                .collect::<Vec<String>>();
            // Other agents' sessions among them, in the rows' order.
            let mut pi_labels = labels.into_iter();
            stats
                .rows
                .iter()
                .map(|r| match foreign.get(&r.group) {
                    Some(l) => l.clone(),
                    None => pi_labels.next().unwrap_or_default(),
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
    // Another agent's sessions named (a source file, an id, a prefix): counted from the
    // catalog's spends, as `stats` counts them in a listing.
    let mut named_foreign = Vec::new();
    for s in o.sessions {
        match loc.resolve_session(s) {
            Ok(p) => match super::agents::foreign_row(&p.to_string_lossy()) {
                Some(r) => named_foreign.push(r),
                None => files.push(p),
            },
            Err(e) => match super::agents::foreign_row(s) {
                Some(r) => named_foreign.push(r),
                None => return Err(e.into()),
            },
        }
    }
    let scope = o.scope.scope();
    let listed = o.sessions.is_empty() || o.scope.named();
    let (mut foreign, mut foreign_labels) = foreign_counted(o, catalog)?;
    let refs: Vec<&arbor_index::ForeignRow> = named_foreign.iter().collect();
    for (r, id) in named_foreign.iter().zip(super::agents::short_ids(&refs)) {
        let (c, label) = super::agents::counted(r, &id);
        foreign_labels.insert(c.file.to_string_lossy().into_owned(), label);
        foreign.push(c);
    }
    let pi_too = super::agents::wants_pi(o.agent);
    let mut sessions = if !pi_too {
        Vec::new()
    } else if listed && o.sessions.is_empty() && !o.no_catalog {
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
    sessions.extend(foreign);
    let stats = arbor_view::aggregate_stats(&sessions, o.by.into(), o.since_ms);
    if o.json {
        stats.write_json(&mut crate::report::stdout())?;
        return Ok(ExitCode::SUCCESS);
    }
    let labels = row_labels(o, &stats, loc, catalog, &foreign_labels);
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
    // `~`: the row's cost is estimated, in part or whole, from the price table.
    let est = |r: &StatsRow| {
        if r.estimated.tokens().cost > 0.0 {
            "~"
        } else {
            ""
        }
    };
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
                format!("{}${:.2}", est(r), kept.tokens().cost),
                format!("{}${:.2}", est(r), r.other.tokens().cost),
            ))
            .nl();
    };
    for (r, label) in stats.rows.iter().zip(&labels) {
        line(&mut out, label, r);
    }
    out.paint(Paint::Dim, "").nl();
    line(&mut out, "total", &stats.total);
    if stats.total.estimated.tokens().cost > 0.0 {
        out.paint(
            Paint::Dim,
            &format!(
                "~ estimated from arbor's price table ({}): no dollars recorded",
                arbor_agents::listing::price_table_date()
            ),
        )
        .nl();
    }
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
