//! Token and cost statistics over sessions: each session's spends bucketed
//! ([`arbor_store::usage`]), split into the path it resumes, the branches it left and its
//! summaries, a fork's copies of its parent's turns counted once, grouped into rows
//! ([`aggregate`]) and written as arbor's JSON ([`Stats::write_json`]). Printing them as a
//! table is the caller's.
use arbor_store::usage::{self, Bucket, Kind, Spend, SpendKey, Sums, Tokens};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How rows are grouped (in JSON and for `arbor mcp`'s `get_usage`: its lowercase name,
/// `"session"` the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum By {
    /// One row per session (its file).
    #[default]
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

impl By {
    /// Its name in the JSON (`session`, `day`, ...), as `arbor stats --by` spells it.
    pub fn name(self) -> &'static str {
        match self {
            By::Session => "session",
            By::Day => "day",
            By::Week => "week",
            By::Month => "month",
            By::Model => "model",
            By::Project => "project",
        }
    }
}

/// One row of the statistics: a group's turns and sums.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Row {
    /// The group (a session file, a day, a week's Monday, a month, a model, a project), or
    /// `total`.
    pub group: String,
    /// What the turns on the path each session resumes spent.
    pub path: Sums,
    /// What the turns on the branches it left spent.
    pub other: Sums,
    /// What its summaries (compaction, branch summaries) spent.
    pub side: Sums,
    /// Assistant turns (not summaries).
    pub turns: u64,
    /// The part of the sums whose cost is estimated from a price table (sessions of agents
    /// that record tokens, not dollars: [`Counted::estimated`]).
    pub estimated: Sums,
}

/// One counted session: its file and its spends in buckets.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Counted {
    /// The file, as named or listed.
    pub file: PathBuf,
    /// Header `cwd`.
    pub cwd: String,
    /// Its parent session is counted too: its copies of the parent's turns are not.
    pub parent_counted: bool,
    /// Its spends.
    pub buckets: Vec<Bucket>,
    /// Its costs are estimated from a price table (another agent's session that recorded
    /// tokens, not dollars), not recorded.
    pub estimated: bool,
}

impl Counted {
    /// A counted session of `file` (header `cwd`), its spends in `buckets`
    /// ([`usage::buckets`]); `parent_counted`: its parent session is counted too.
    pub fn new(file: PathBuf, cwd: String, parent_counted: bool, buckets: Vec<Bucket>) -> Self {
        Counted {
            file,
            cwd,
            parent_counted,
            buckets,
            estimated: false,
        }
    }

    /// The same, its costs marked as estimated ([`Counted::estimated`]).
    pub fn estimated(mut self, estimated: bool) -> Self {
        self.estimated = estimated;
        self
    }
}

/// What statistics need of a session file, read once.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Loaded {
    /// Its spends ([`usage::spends`]).
    pub spends: Vec<Spend>,
    /// Header `cwd`.
    pub cwd: String,
    /// Header `id`.
    pub id: Option<String>,
    /// Header `parentSession`.
    pub parent: Option<String>,
}

impl Loaded {
    /// Reads the session file `f`.
    ///
    /// # Errors
    /// The file could not be read as a session.
    pub fn load(f: &Path) -> Result<Loaded, arbor_store::StoreError> {
        let doc = arbor_store::load_doc(f)?;
        Ok(Loaded {
            spends: usage::spends(&doc),
            cwd: doc.header_str("cwd").unwrap_or_default(),
            id: doc.header_str("id"),
            parent: doc.fork_parent(),
        })
    }
}

/// The canonical path of a file (as given when it has none), as a parent is found by.
pub fn canon_of(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn week_of(utc_day: i64) -> String {
    // Days since the epoch (a Thursday); Monday = 4 days before a Thursday start.
    let monday = utc_day - (utc_day + 3).rem_euclid(7);
    let iso = arbor_core::time::format_iso_ms(monday * 86_400_000);
    iso.get(..10).unwrap_or(&iso).to_string()
}

fn group_key(by: By, s: &Counted, b: &Bucket) -> String {
    let no_date = || "(no date)".to_string();
    match by {
        By::Session => s.file.to_string_lossy().into_owned(),
        By::Day => b.day.clone().unwrap_or_else(no_date),
        By::Month => b.month.clone().unwrap_or_else(no_date),
        By::Week => b.utc_day.map(week_of).unwrap_or_else(no_date),
        By::Model => b.model.clone(),
        By::Project => s.cwd.clone(),
    }
}

/// Statistics over sessions ([`aggregate`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Stats {
    /// How the rows are grouped.
    pub by: By,
    /// The rows, in the order of their groups.
    pub rows: Vec<Row>,
    /// All rows added up (group `total`).
    pub total: Row,
    /// How many sessions were counted.
    pub sessions: usize,
    /// Turns copied by forks from their counted parent session, left out.
    pub fork_copies_skipped: u64,
}

/// The rows of `sessions` grouped `by`, with only the turns at or after `since` (ms since the
/// epoch) when given, and their total.
pub fn aggregate(sessions: &[Counted], by: By, since: Option<f64>) -> Stats {
    aggregate_between(sessions, by, since, None)
}

/// [`aggregate`] with only the turns before `until` (ms since the epoch) too, when given (a
/// bucket whose times straddle `until` was split into its spends before, as for `since`).
pub fn aggregate_between(
    sessions: &[Counted],
    by: By,
    since: Option<f64>,
    until: Option<f64>,
) -> Stats {
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut total = Row {
        group: "total".into(),
        ..Row::default()
    };
    let mut dropped = 0;
    for s in sessions {
        for b in &s.buckets {
            if b.copied && s.parent_counted {
                dropped += b.spends;
                continue;
            }
            if let Some(since) = since {
                // A turn without a readable time is not "since" anything. A bucket whose
                // times straddle `since` was split into its spends before.
                if b.utc_day.is_none() || b.min_ms < since {
                    continue;
                }
            }
            if let Some(until) = until {
                if b.utc_day.is_none() || b.max_ms >= until {
                    continue;
                }
            }
            let key = group_key(by, s, b);
            let row = rows.entry(key).or_insert_with_key(|k| Row {
                group: k.clone(),
                ..Row::default()
            });
            for r in [row, &mut total] {
                if b.kind != Kind::Side {
                    r.turns += b.spends;
                }
                if s.estimated {
                    r.estimated.add(&b.sums);
                }
                match b.kind {
                    Kind::Path => r.path.add(&b.sums),
                    Kind::Other => r.other.add(&b.sums),
                    Kind::Side => r.side.add(&b.sums),
                }
            }
        }
    }
    Stats {
        by,
        rows: rows.into_values().collect(),
        total,
        sessions: sessions.len(),
        fork_copies_skipped: dropped,
    }
}

/// The counted session a `parentSession` names: by its path (pi), else by its id (omp), in
/// maps of the counted sessions' canonical paths ([`canon_of`]) and ids to their index.
pub fn parent_index(
    parent: &str,
    by_canon: &HashMap<&str, usize>,
    by_id: &HashMap<&str, usize>,
) -> Option<usize> {
    by_canon
        .get(canon_of(Path::new(parent)).as_str())
        .or_else(|| by_id.get(parent))
        .copied()
}

/// Reads every file of `files` and counts them, a fork's copies marked against its parent when
/// that is among them. The files that could not be read are returned with their error, not
/// counted.
pub fn from_files(files: &[PathBuf]) -> (Vec<Counted>, Vec<(PathBuf, arbor_store::StoreError)>) {
    let mut loaded = Vec::new();
    let mut failed = Vec::new();
    for f in files {
        match Loaded::load(f) {
            Ok(l) => loaded.push((f.clone(), canon_of(f), l)),
            Err(e) => failed.push((f.clone(), e)),
        }
    }
    let keys: Vec<HashSet<SpendKey>> = loaded
        .iter()
        .map(|(_, _, l)| usage::spend_keys(&l.spends))
        .collect();
    let by_canon: HashMap<&str, usize> = loaded
        .iter()
        .enumerate()
        .map(|(k, (_, c, _))| (c.as_str(), k))
        .collect();
    let by_id: HashMap<&str, usize> = loaded
        .iter()
        .enumerate()
        .filter_map(|(k, (_, _, l))| Some((l.id.as_deref()?, k)))
        .collect();
    let counted = loaded
        .iter()
        .map(|(f, _, l)| {
            let parent = l
                .parent
                .as_deref()
                .and_then(|p| parent_index(p, &by_canon, &by_id))
                .map(|j| &keys[j]);
            Counted {
                file: f.clone(),
                cwd: l.cwd.clone(),
                parent_counted: parent.is_some(),
                buckets: usage::buckets(&l.spends, parent, true),
                estimated: false,
            }
        })
        .collect();
    (counted, failed)
}

impl Stats {
    /// The statistics as `arbor stats --json` writes them (one line).
    ///
    /// # Errors
    /// Writing to `out` failed.
    pub fn write_json(&self, mut out: impl Write) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut env = arbor_core::json::JsonObject::new(&mut buf);
        let tok = |t: &Tokens| {
            format!(
                "{{\"input\":{},\"output\":{},\"cacheRead\":{},\"cacheWrite\":{},\"cost\":{}}}",
                t.input, t.output, t.cache_read, t.cache_write, t.cost
            )
        };
        let row_json = |r: &Row| {
            let mut b = Vec::new();
            let mut j = arbor_core::json::JsonObject::new(&mut b);
            j.str("group", &r.group)
                .uint("turns", r.turns)
                .raw("currentPath", tok(&r.path.tokens()).as_bytes())
                .raw("otherBranches", tok(&r.other.tokens()).as_bytes())
                .raw("summaries", tok(&r.side.tokens()).as_bytes());
            // Costs estimated from the price table (other agents' sessions), when any.
            let est = r.estimated.tokens().cost;
            if r.estimated != Sums::default() {
                j.num("estimatedCost", est).raw("estimated", b"true");
            }
            j.finish();
            b
        };
        let mut list = Vec::new();
        let mut arr = arbor_core::json::JsonArray::new(&mut list);
        for r in &self.rows {
            arr.raw(&row_json(r));
        }
        arr.finish();
        env.str("by", self.by.name())
            .uint("sessions", self.sessions as u64)
            .uint("forkCopiesSkipped", self.fork_copies_skipped)
            .raw("rows", &list)
            .raw("total", &row_json(&self.total));
        env.finish();
        buf.push(b'\n');
        out.write_all(&buf)
    }
}
