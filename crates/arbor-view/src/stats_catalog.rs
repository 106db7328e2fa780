//! Statistics from the catalog: each session's spends bucketed once and kept in the catalog
//! (`arbor_index::SpendRow`), read again only when its file changed. One implementation for
//! `arbor stats` and the MCP server's `get_usage`.
use crate::usage::{self, SpendKey};
use crate::{canon_of, parent_index, Counted, SessionSpends};
use arbor_index::{Catalog, SpendRow, Stat};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What [`counted`] tells its caller besides the counted sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// A file was read and could not be counted: why (without its path).
    NotCounted {
        /// The file.
        file: PathBuf,
        /// Why.
        why: String,
    },
    /// This many files were not counted, as said on an earlier run (the catalog kept why).
    KnownNotCounted(usize),
    /// The catalog could not keep what was read (the answer is right; the next run reads
    /// the files again).
    NotStored(String),
}

/// A session file read for its spends; the error as the catalog keeps it
/// ([`arbor_store::discover::why_not`]).
fn load(f: &Path) -> Result<SessionSpends, String> {
    SessionSpends::load(f).map_err(|e| arbor_store::discover::why_not(f, &e))
}

/// A reason the catalog kept for `f`, as [`arbor_store::discover::why_not`] gives it today: an older catalog kept the
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

/// The sessions of `dirs` counted for [`crate::aggregate_stats`], from the catalog's cached
/// spends: the files whose stat changed are read again (and kept), the others are the
/// catalog's rows. Adds up to exactly what [`crate::stats_from_files`] gives. A session
/// whose turns straddle `since` or `until` (ms) is read spend by spend. What was not counted
/// is told to `note`.
///
/// When a live watcher vouches for the catalog's rows of every one of `dirs`
/// ([`arbor_index::fresh::watcher_vouches`], the rule `arbor ls` lists by), a regular file's
/// stat is the catalog's, not a `stat` of the file (a symbolic link is looked at still).
///
/// # Errors
/// The catalog's spends cannot be read (the caller reads the files instead).
pub fn counted(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    since: Option<f64>,
    until: Option<f64>,
    note: &mut dyn FnMut(Note),
) -> Result<Vec<Counted>, arbor_index::IndexError> {
    let vouched = arbor_index::fresh::watcher_vouches(cat, dirs);
    counted_trusting(cat, dirs, since, until, vouched, note)
}

/// [`counted`], the catalog's stat of the regular files taken for theirs when `vouched`.
fn counted_trusting(
    cat: &mut Catalog,
    dirs: &[PathBuf],
    since: Option<f64>,
    until: Option<f64>,
    vouched: bool,
    note: &mut dyn FnMut(Note),
) -> Result<Vec<Counted>, arbor_index::IndexError> {
    let mut items: Vec<Item> = Vec::new();
    let mut gone: Vec<(String, String)> = Vec::new();
    for d in dirs {
        let key = arbor_index::dir_key(d);
        let mut rows = cat.spend_rows(&key)?;
        let known = if vouched {
            cat.file_stats(&key)?
        } else {
            HashMap::new()
        };
        let files = arbor_store::discover::session_files_typed(d);
        let names: HashSet<String> = files
            .iter()
            .filter_map(|(f, _)| f.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        gone.extend(
            rows.keys()
                .filter(|n| !names.contains(*n))
                .map(|n| (key.clone(), n.clone())),
        );
        for (f, kind) in files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // A regular file the vouched catalog holds: its stat, no look at the file.
            let trusted = kind
                .filter(std::fs::FileType::is_file)
                .and_then(|_| known.get(&name).copied());
            let looked = match trusted {
                Some(st) => Ok((false, Some(st))),
                None => std::fs::symlink_metadata(&f).map(|m| {
                    if m.file_type().is_symlink() {
                        (true, None)
                    } else {
                        (false, m.is_file().then(|| Stat::from_meta(&m)))
                    }
                }),
            };
            let (canon, stat) = match looked {
                Ok((true, _)) => (
                    canon_of(&f),
                    std::fs::metadata(&f)
                        .ok()
                        .filter(|m| m.is_file())
                        .map(|m| Stat::from_meta(&m)),
                ),
                Ok((false, stat)) => (format!("{}/{name}", key.trim_end_matches('/')), stat),
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
            if !e.is_empty() {
                note(Note::NotCounted {
                    file: i.file.clone(),
                    why: e.clone(),
                });
            }
        } else if let (None, Some(SpendRow { error: Some(e), .. })) = (&i.loaded, &i.row) {
            known += usize::from(!kept_why(&i.file, e).is_empty());
        }
    }
    if known > 0 {
        note(Note::KnownNotCounted(known));
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
        note(Note::NotStored(e.to_string()));
    }
    // A --since inside a bucket's times: that session's spends one by one.
    let mut out = Vec::new();
    for k in 0..items.len() {
        if !items[k].counted() {
            continue;
        }
        // Taken, not cloned: nothing reads item k's row after this (a parent's keys come from
        // its file).
        let Some(row) = items[k].row.take() else {
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
        let straddles = [since, until].into_iter().flatten().any(|s| {
            row.buckets
                .iter()
                .any(|b| b.utc_day.is_some() && b.min_ms < s && b.max_ms >= s)
        });
        let (cwd, mut buckets) = (row.cwd, row.buckets);
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

/// Another agent's session (Claude Code, Codex, opencode) as `arbor stats` counts it: the
/// catalog's spends of its replies (`arbor_agents::listing::Summary::buckets`), keyed
/// `AGENT:ID`, its costs estimated from arbor's price table unless the agent records dollars.
/// The one conversion `arbor stats` and the MCP server's `get_usage`/`get_session` use.
pub fn counted_foreign(r: &arbor_index::ForeignRow) -> Counted {
    Counted::new(
        std::path::PathBuf::from(format!("{}:{}", r.agent, r.summary.id)),
        r.summary.cwd.clone(),
        false,
        r.summary.buckets.clone(),
    )
    .estimated(!arbor_agents::listing::records_cost(r.agent))
    .by_agent(r.agent.name())
}
