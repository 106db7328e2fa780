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
    /// Per agent: `pi`, `omp` (by the session directory, [`arbor_store::locate::is_omp_dir`]),
    /// or another agent's name (`claude`, `codex`, `opencode`: [`Counted::agent`]).
    Agent,
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
            By::Agent => "agent",
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
    /// The agent that wrote it, when not pi's or omp's (`claude`, `codex`, `opencode`); pi's
    /// and omp's sessions are told apart by their directory ([`Counted::agent_name`]).
    pub agent: Option<&'static str>,
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
            agent: None,
        }
    }

    /// The same, its costs marked as estimated ([`Counted::estimated`]).
    pub fn estimated(mut self, estimated: bool) -> Self {
        self.estimated = estimated;
        self
    }

    /// The same, written by another agent ([`Counted::agent`]).
    pub fn by_agent(mut self, agent: &'static str) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The agent that wrote it: [`Counted::agent`], else `omp` for a file in one of omp's
    /// session directories ([`arbor_store::locate::is_omp_dir`]), else `pi`.
    pub fn agent_name(&self) -> &'static str {
        if let Some(a) = self.agent {
            return a;
        }
        match self.file.parent() {
            Some(d) if arbor_store::locate::is_omp_dir(d) => "omp",
            _ => "pi",
        }
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

fn group_key(by: By, s: &Counted, agent: &str, b: &Bucket) -> String {
    let no_date = || "(no date)".to_string();
    match by {
        By::Session => s.file.to_string_lossy().into_owned(),
        By::Day => b.day.clone().unwrap_or_else(no_date),
        By::Month => b.month.clone().unwrap_or_else(no_date),
        By::Week => b.utc_day.map(week_of).unwrap_or_else(no_date),
        By::Model => b.model.clone(),
        By::Project => s.cwd.clone(),
        By::Agent => agent.to_string(),
    }
}

/// Whether bucket `b` of session `s` is counted between `since` and `until` (ms since the
/// epoch, when given): not a fork's copy of its counted parent's turn, and its times inside.
/// A turn without a readable time is not "since" or "until" anything; a bucket whose times
/// straddle either was split into its spends before.
fn counts(s: &Counted, b: &Bucket, since: Option<f64>, until: Option<f64>) -> bool {
    if b.copied && s.parent_counted {
        return false;
    }
    if since.is_some_and(|since| b.utc_day.is_none() || b.min_ms < since) {
        return false;
    }
    !until.is_some_and(|until| b.utc_day.is_none() || b.max_ms >= until)
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
    // The agent of a session's directory, asked once per directory.
    let mut agents: HashMap<Option<&Path>, &'static str> = HashMap::new();
    for s in sessions {
        let agent = match (by, s.agent) {
            (By::Agent, None) => *agents
                .entry(s.file.parent())
                .or_insert_with(|| s.agent_name()),
            (_, a) => a.unwrap_or(""),
        };
        for b in &s.buckets {
            if b.copied && s.parent_counted {
                dropped += b.spends;
                continue;
            }
            if !counts(s, b, since, until) {
                continue;
            }
            let key = group_key(by, s, agent, b);
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

/// When the turns were: sessions and turns by day of the week and hour of the day (UTC), as
/// [`aggregate_between`] counts them (a fork's copies of its counted parent's turns left out,
/// only the turns between `since` and `until`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Activity {
    /// Assistant turns (not summaries) by day (0 = Monday .. 6 = Sunday) and hour (0 .. 23).
    pub turns: [[u64; 24]; 7],
    /// Sessions with at least one of those turns in the hour, by day and hour.
    pub sessions: [[u64; 24]; 7],
    /// Turns without a readable time (in no cell).
    pub undated: u64,
}

/// The day of the week (0 = Monday) and hour (0 .. 23) of a bucket's turns, UTC.
fn weekday_hour(b: &Bucket) -> Option<(usize, usize)> {
    let day = b.utc_day?;
    // Day 0 of the epoch was a Thursday (3 days after a Monday).
    let weekday = (day + 3).rem_euclid(7) as usize;
    Some((weekday, b.utc_hour.rem_euclid(24) as usize))
}

/// The [`Activity`] of `sessions` between `since` and `until` (ms since the epoch).
pub fn activity(sessions: &[Counted], since: Option<f64>, until: Option<f64>) -> Activity {
    let mut out = Activity::default();
    for s in sessions {
        let mut seen = [[false; 24]; 7];
        for b in &s.buckets {
            if b.kind == Kind::Side || !counts(s, b, since, until) {
                continue;
            }
            match weekday_hour(b) {
                Some((d, h)) => {
                    out.turns[d][h] += b.spends;
                    if !seen[d][h] {
                        seen[d][h] = true;
                        out.sessions[d][h] += 1;
                    }
                }
                None => out.undated += b.spends,
            }
        }
    }
    out
}

/// Keeps only the spends of `model` (`provider/model`, as [`By::Model`] groups them) in
/// `sessions`.
pub fn keep_model(sessions: &mut [Counted], model: &str) {
    for s in sessions {
        s.buckets.retain(|b| b.model == model);
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
                agent: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(ts: &str, model: &str, on_path: bool, side: bool, cost: f64) -> Spend {
        Spend {
            entry_id: Some(format!("e{ts}")),
            timestamp: Some(ts.to_string()),
            model: model.to_string(),
            on_path,
            side,
            tokens: Tokens {
                input: 10.0,
                output: 1.0,
                cost,
                ..Tokens::default()
            },
        }
    }

    fn session(file: &str, spends: &[Spend]) -> Counted {
        Counted::new(
            PathBuf::from(file),
            "/p".into(),
            false,
            usage::buckets(spends, None, false),
        )
    }

    #[test]
    fn activity_counts_turns_and_sessions_by_weekday_and_hour_utc() {
        // 2025-01-06 was a Monday; 2025-01-12 a Sunday.
        let a = session(
            "/s/a.jsonl",
            &[
                spend("2025-01-06T09:10:00.000Z", "p/m", true, false, 1.0),
                spend("2025-01-06T09:50:00.000Z", "p/m", false, false, 1.0),
                spend("2025-01-06T09:55:00.000Z", "p/m", true, true, 1.0), // a summary
                spend("2025-01-12T23:59:00.000Z", "p/m", true, false, 1.0),
            ],
        );
        let b = session(
            "/s/b.jsonl",
            &[spend("2025-01-13T09:00:00.000Z", "p/n", true, false, 1.0)],
        );
        let act = activity(&[a.clone(), b], None, None);
        assert_eq!(
            act.turns[0][9], 3,
            "two turns of a, one of b on Mondays at 9"
        );
        assert_eq!(act.sessions[0][9], 2);
        assert_eq!(act.turns[6][23], 1);
        assert_eq!(act.sessions[6][23], 1);
        let all: u64 = act.turns.iter().flatten().sum();
        assert_eq!(all, 4, "the summary is not a turn");
        // The range, as aggregate_between's.
        let since = arbor_core::time::parse_iso_ms("2025-01-07T00:00:00Z");
        let act = activity(&[a], since, None);
        assert_eq!(act.turns[0][9], 0);
        assert_eq!(act.turns[6][23], 1);
    }

    #[test]
    fn by_agent_groups_other_agents_by_name_and_keep_model_filters() {
        let mut s = vec![
            session(
                "/s/a.jsonl",
                &[
                    spend("2025-01-06T09:10:00.000Z", "p/m", true, false, 1.0),
                    spend("2025-01-06T09:20:00.000Z", "p/n", true, false, 2.0),
                ],
            ),
            session(
                "claude:x",
                &[spend("2025-01-06T09:10:00.000Z", "p/m", true, false, 4.0)],
            )
            .by_agent("claude"),
        ];
        let st = aggregate(&s, By::Agent, None);
        let groups: Vec<(&str, f64)> = st
            .rows
            .iter()
            .map(|r| (r.group.as_str(), r.path.tokens().cost))
            .collect();
        assert_eq!(groups, [("claude", 4.0), ("pi", 3.0)]);
        keep_model(&mut s, "p/m");
        let st = aggregate(&s, By::Agent, None);
        assert_eq!(st.total.path.tokens().cost, 5.0);
        assert_eq!(st.total.turns, 2);
    }
}
