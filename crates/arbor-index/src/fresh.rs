//! Answers from a fresh catalog: the listing and the search of some session directories,
//! with the catalog brought up to date first, or trusted when a live watcher vouches for it
//! (`arbor index --watch`). One implementation for both faces of arbor: the CLI (`ls`,
//! `search`) and the MCP server (`list_sessions`, `search_sessions`).
use crate::{
    dir_key, read_dir_listing, sort_like_pi, Catalog, Hit, IndexError, Listed, Progress, Recovery,
    RefreshOptions, RefreshStats, SearchQuery,
};
use std::path::PathBuf;

/// What a caller hears of the work done for it: progress of a refresh, a damaged catalog
/// rebuilt, files that could not be indexed. Every method does nothing by default.
pub trait Report {
    /// A refresh's progress.
    fn progress(&mut self, _p: Progress) {}
    /// The refresh is over (a progress bar is taken down).
    fn finished(&mut self) {}
    /// The catalog was found damaged, moved aside and rebuilt.
    fn recovered(&mut self, _catalog: &std::path::Path, _r: &Recovery) {}
    /// A refresh is over; some files may not have been indexed (`stats.failed`).
    fn refreshed(&mut self, _stats: &RefreshStats) {}
}

/// A [`Report`] that hears nothing.
pub struct Quiet;
impl Report for Quiet {}

/// Whether a live watcher of `cat` may be asked instead of looking at the files: a catalog
/// file (not one in memory) that was not just created.
pub fn watcher_may_answer(cat: &Catalog) -> bool {
    cat.report.in_memory_because.is_none() && !cat.report.created
}

/// Whether a live watcher of `cat` vouches for every one of `dirs` ([`watcher_may_answer`] and
/// [`crate::watch::vouches`]): the catalog's rows of their files are then as current as a
/// refresh would make them, and a caller may take them without a `stat` of each file (the
/// rule `arbor ls` lists by).
pub fn watcher_vouches(cat: &Catalog, dirs: &[PathBuf]) -> bool {
    if !watcher_may_answer(cat) {
        return false;
    }
    let keys: Vec<String> = dirs.iter().map(|d| dir_key(d)).collect();
    crate::watch::vouches(cat.path(), &keys)
}

/// Runs `f` on the catalog ([`Catalog::recovering`]): `f` is told (`true`) when it runs
/// again on the fresh, empty catalog, so that it rebuilds what it reads first.
pub fn with_rebuild<T>(
    cat: &mut Catalog,
    report: &mut dyn Report,
    f: impl FnMut(&mut Catalog, bool) -> Result<T, IndexError>,
) -> Result<T, IndexError> {
    let path = cat.path().to_path_buf();
    cat.recovering(f, &mut |r: &Recovery| report.recovered(&path, r))
}

/// Runs a refresh `f` with its progress told to `report`, the catalog rebuilt when found
/// damaged ([`Catalog::recovering`]), and `report` told when it is over, what was rebuilt and
/// what could not be indexed.
fn refreshing(
    cat: &mut Catalog,
    report: &mut dyn Report,
    mut f: impl FnMut(
        &mut Catalog,
        &mut dyn FnMut(Progress),
    ) -> Result<(Vec<Listed>, RefreshStats), IndexError>,
) -> Result<(Vec<Listed>, RefreshStats), IndexError> {
    let path = cat.path().to_path_buf();
    let mut recovered: Option<Recovery> = None;
    let r = {
        let mut progress = |p: Progress| report.progress(p);
        cat.recovering(|c, _| f(c, &mut progress), &mut |r: &Recovery| {
            recovered = Some(r.clone())
        })
    };
    report.finished();
    if let Some(rec) = &recovered {
        report.recovered(&path, rec);
    }
    if let Ok((_, stats)) = &r {
        report.refreshed(stats);
    }
    r
}

/// Refreshes the catalog for `dirs` and returns their sessions, newest `modified` first
/// (ties keep directory order, as pi's stable sort does).
pub fn refresh(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    opts: RefreshOptions,
    report: &mut dyn Report,
) -> Result<(Vec<Listed>, RefreshStats), IndexError> {
    let r = refreshing(cat, report, |c, progress| {
        c.refresh_dirs(dirs, opts, progress)
    });
    let (mut listed, stats) = r?;
    sort_like_pi(&mut listed, dirs.len() > 1);
    Ok((listed, stats))
}

/// [`refresh`], or, when a live watcher vouches that the catalog holds every change to `dirs`,
/// the catalog's rows without looking at the files: the listing the watcher prepared
/// ([`crate::watch::listing`]), or, when no listing is wanted, its word
/// ([`crate::watch::vouches`]).
pub fn listing(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    opts: RefreshOptions,
    report: &mut dyn Report,
) -> Result<(Vec<Listed>, RefreshStats), IndexError> {
    if watcher_may_answer(cat) {
        if opts.listing {
            if let Some(listed) = crate::watch::listing(cat.path(), dirs) {
                return Ok((listed, RefreshStats::default()));
            }
        } else {
            let keys: Vec<String> = dirs.iter().map(|d| dir_key(d)).collect();
            if crate::watch::vouches(cat.path(), &keys) {
                return Ok((Vec::new(), RefreshStats::default()));
            }
        }
    }
    refresh(cat, dirs, opts, report)
}

/// Searches `dirs` for `q` over a fresh catalog, and counts the matches (up to
/// `q.count_cap`). `need` is what the catalog must index for the query (thinking, tool
/// output); `new_kinds` says it was just asked to index them (no watcher knows of them yet).
///
/// A live watcher that vouches for the directories answers from its own connection (see
/// [`crate::watch::search`]). Without a watcher's word for the catalog, the directories are
/// read and `stat`ed on another thread while the catalog is searched (both take 10-30 ms at
/// 10,000 sessions); the answer is given only once the files are known to be as indexed,
/// else the catalog is brought up to date and searched again.
pub fn search(
    cat: &mut Catalog,
    q: &SearchQuery,
    dirs: &[PathBuf],
    need: crate::IndexKinds,
    new_kinds: bool,
    report: &mut dyn Report,
) -> Result<(Vec<Hit>, u64), IndexError> {
    let texts_only = RefreshOptions::default()
        .with_texts(true)
        .with_listing(false);
    let may_ask = !new_kinds && watcher_may_answer(cat);
    if may_ask {
        if let Some(answer) = crate::watch::search(cat, q, dirs) {
            return Ok(answer);
        }
    }
    let check_after = if !may_ask {
        refresh(cat, dirs, texts_only, report)?;
        false
    } else {
        let keys: Vec<String> = dirs.iter().map(|d| dir_key(d)).collect();
        !crate::watch::vouches(cat.path(), &keys)
    };
    let run = |cat: &mut Catalog, report: &mut dyn Report| {
        with_rebuild(cat, report, |c, rebuilt| {
            if rebuilt {
                c.require_kinds(need)?;
                c.refresh_dirs(dirs, texts_only, &mut |_| {})?;
            }
            c.search_with_total(q)
        })
    };
    if !check_after {
        return run(cat, report);
    }
    let (first, listings) = std::thread::scope(|s| {
        let reader = s.spawn(|| dirs.iter().map(|d| read_dir_listing(d)).collect::<Vec<_>>());
        let first = run(cat, report);
        (first, reader.join())
    });
    let listings = listings.map_err(|_| IndexError::Io {
        path: PathBuf::from("session directories"),
        source: std::io::Error::other("reading the session directories failed"),
    })?;
    let first = first?;
    let r = refreshing(cat, report, |c, progress| {
        c.refresh_listings(&listings, texts_only, progress)
    });
    let (_, stats) = r?;
    if stats.unchanged == stats.files && stats.removed == 0 {
        Ok(first)
    } else {
        run(cat, report)
    }
}

/// The role names a search may be limited to (`--role`, the MCP server's `role`).
pub const ROLE_NAMES: &str = "user, assistant, thinking, toolResult, bashExecution, tool, compaction, branchSummary, summary, name, label, system, contextEdit";

/// The kinds of text a search looks at, from role names (each may be comma-separated;
/// none: every kind the catalog indexes by default, and those `need` asks for), and what the
/// catalog must index for them (`need`, plus thinking or tool output when a role names
/// them). `Err` names the first unknown role.
///
/// ```
/// use arbor_index::{fresh::search_kinds, IndexKinds, Kind};
/// let (kinds, need) = search_kinds(&["user,thinking"], IndexKinds::default()).unwrap();
/// assert_eq!(kinds, vec![Kind::User, Kind::Thinking]);
/// assert!(need.thinking && !need.tools);
/// assert!(search_kinds(&["nobody"], IndexKinds::default()).is_err());
/// ```
pub fn search_kinds(
    roles: &[impl AsRef<str>],
    mut need: crate::IndexKinds,
) -> Result<(Vec<crate::Kind>, crate::IndexKinds), String> {
    use crate::Kind;
    let mut kinds: Option<Vec<Kind>> = None;
    if !roles.is_empty() {
        let mut v = Vec::new();
        for r in roles {
            for part in r.as_ref().split(',') {
                match Kind::parse_role(part) {
                    Some(ks) => v.extend(ks),
                    None => return Err(part.to_string()),
                }
            }
        }
        kinds = Some(v);
    }
    for k in kinds.iter().flatten() {
        match k {
            Kind::Thinking => need.thinking = true,
            Kind::ToolResult | Kind::BashExecution => need.tools = true,
            _ => {}
        }
    }
    // Opt-in kinds are searched only when asked for, even if the catalog holds them.
    let kinds = kinds.unwrap_or_else(|| {
        Kind::ALL
            .into_iter()
            .filter(|k| !k.is_opt_in() || need.includes(*k))
            .collect()
    });
    Ok((kinds, need))
}
