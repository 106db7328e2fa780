//! `arbor stats`: tokens and cost, split into the path each session resumes and the branches
//! it left, a fork's copies of its parent's turns counted once.
use crate::term::{self, Out, Paint, Term};
use anyhow::Result;
use arbor_store::locate::{Locator, Scope};
use arbor_store::usage::{Spend, Tokens};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How rows are grouped.
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

/// What `arbor stats` was asked for.
pub struct StatsOpts<'a> {
    /// Sessions named.
    pub sessions: &'a [String],
    /// `--dir`.
    pub dir: Option<&'a Path>,
    /// `--all`.
    pub all: bool,
    /// `--by`.
    pub by: By,
    /// `--since`, ms.
    pub since_ms: Option<f64>,
    /// `--json`.
    pub json: bool,
}

#[derive(Default)]
struct Row {
    path: Tokens,
    other: Tokens,
    side: Tokens,
    turns: u64,
}

fn group_key(by: By, file: &Path, cwd: &str, s: &Spend) -> String {
    let ts = s.timestamp.as_deref().unwrap_or("");
    match by {
        By::Session => file.to_string_lossy().into_owned(),
        By::Day => ts.get(..10).unwrap_or("(no date)").to_string(),
        By::Month => ts.get(..7).unwrap_or("(no date)").to_string(),
        By::Week => match arbor_core::time::parse_iso_ms(ts) {
            Some(ms) => {
                // Days since the epoch (a Thursday); Monday = 4 days before a Thursday start.
                let day = (ms / 86_400_000.0).floor() as i64;
                let monday = day - (day + 3).rem_euclid(7);
                let iso = arbor_core::time::format_iso_ms(monday * 86_400_000);
                iso.get(..10).unwrap_or(&iso).to_string()
            }
            None => "(no date)".into(),
        },
        By::Model => s.model.clone(),
        By::Project => cwd.to_string(),
    }
}

/// `arbor stats`.
pub fn stats(o: &StatsOpts<'_>, term: &Term, loc: &Locator) -> Result<ExitCode> {
    let mut files: Vec<PathBuf> = Vec::new();
    for s in o.sessions {
        files.push(loc.resolve_session(s)?);
    }
    if o.dir.is_some() || o.all || files.is_empty() {
        let scope = match (o.dir, o.all) {
            (Some(d), _) => Scope::Dir(d),
            (None, true) => Scope::All,
            (None, false) => Scope::Current,
        };
        if files.is_empty() || o.dir.is_some() || o.all {
            for d in loc.project_dirs(scope)? {
                files.extend(arbor_store::discover::session_files(&d));
            }
        }
    }
    let mut sessions = Vec::new();
    let mut cwds = BTreeMap::new();
    for f in files {
        let doc = match arbor_store::load_doc(&f) {
            Ok(d) => d,
            Err(e) => {
                say_err!("arbor: {}: not counted: {e}", f.display());
                continue;
            }
        };
        let parent = doc.header_str("parentSession");
        cwds.insert(f.clone(), doc.header_str("cwd").unwrap_or_default());
        sessions.push((f, parent, arbor_store::usage::spends(&doc)));
    }
    let dropped = arbor_store::usage::drop_fork_copies(&mut sessions);
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut total = Row::default();
    for (f, _, spends) in &sessions {
        let cwd = cwds.get(f).cloned().unwrap_or_default();
        for s in spends {
            if let Some(since) = o.since_ms {
                let t = s
                    .timestamp
                    .as_deref()
                    .and_then(arbor_core::time::parse_iso_ms);
                // A turn without a readable time is not "since" anything.
                if t.is_none_or(|t| t < since) {
                    continue;
                }
            }
            let key = group_key(o.by, f, &cwd, s);
            for r in [rows.entry(key).or_default(), &mut total] {
                r.turns += u64::from(!s.side);
                if s.side {
                    r.side.add(&s.tokens);
                } else if s.on_path {
                    r.path.add(&s.tokens);
                } else {
                    r.other.add(&s.tokens);
                }
            }
        }
    }
    if o.json {
        let mut out = Vec::new();
        let mut env = arbor_core::json::JsonObject::new(&mut out);
        let tok = |t: &Tokens| {
            format!(
                "{{\"input\":{},\"output\":{},\"cacheRead\":{},\"cacheWrite\":{},\"cost\":{}}}",
                t.input, t.output, t.cache_read, t.cache_write, t.cost
            )
        };
        let row_json = |name: &str, r: &Row| {
            let mut b = Vec::new();
            let mut j = arbor_core::json::JsonObject::new(&mut b);
            j.str("group", name)
                .uint("turns", r.turns)
                .raw("currentPath", tok(&r.path).as_bytes())
                .raw("otherBranches", tok(&r.other).as_bytes())
                .raw("summaries", tok(&r.side).as_bytes());
            j.finish();
            b
        };
        let mut list = Vec::new();
        let mut arr = arbor_core::json::JsonArray::new(&mut list);
        for (k, r) in &rows {
            arr.raw(&row_json(k, r));
        }
        arr.finish();
        env.str("by", &format!("{:?}", o.by).to_lowercase())
            .uint("sessions", sessions.len() as u64)
            .uint("forkCopiesSkipped", dropped as u64)
            .raw("rows", &list)
            .raw("total", &row_json("total", &total));
        env.finish();
        out.push(b'\n');
        std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
        return Ok(ExitCode::SUCCESS);
    }
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
    let gw = rows
        .keys()
        .map(|k| term::width(&crate::cmd::index::home_short(k)))
        .max()
        .unwrap_or(5)
        .clamp(5, term.width.saturating_sub(70).max(12));
    out.paint(
        Paint::Header,
        &format!(
            "{} {:>6} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10}",
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
    let line = |out: &mut Out, name: &str, r: &Row| {
        let mut all = r.path;
        all.add(&r.other);
        all.add(&r.side);
        out.put(&term::pad(&crate::cmd::index::home_short(name), gw))
            .put(&format!(
                " {:>6} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10}",
                r.turns,
                num(all.input),
                num(all.output),
                num(all.cache_read),
                num(all.cache_write),
                format!("${:.2}", r.path.cost + r.side.cost),
                format!("${:.2}", r.other.cost),
            ))
            .nl();
    };
    for (k, r) in &rows {
        line(&mut out, k, r);
    }
    out.paint(Paint::Dim, "").nl();
    line(&mut out, "total", &total);
    out.print(term, false)?;
    if dropped > 0 {
        say_err!("arbor: {dropped} turns copied by forks from their parent session counted once");
    }
    Ok(ExitCode::SUCCESS)
}
