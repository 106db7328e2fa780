//! The usage page (`/usage`): tokens and cost by day, week or month, by model, by project and
//! by agent, the current path against the branches left and the summaries, and when the
//! turns were (a heatmap of sessions and turns by day of the week and hour). The charts are
//! SVG made here ([`charts`]); each has its numbers as a table under it and as CSV and JSON
//! (`/usage/CHART.csv`, `/usage/CHART.json`, the page's query). The numbers are `arbor
//! stats`'s: the catalog's cached spends ([`arbor_view::stats_catalog::counted`]) grouped by
//! [`arbor_view::aggregate_stats_between`]; the JSON of a bar chart is what `arbor stats
//! --by … --json` prints for the same range and scope.
//!
//! The range and scope are GET parameters, so each view is a link: `since`, `until` (a date,
//! a date-time or a span back: `7d`), `project` (a working directory: the sessions `arbor
//! stats` counts when run there), `agent` (`pi`, `omp`, `claude`, `codex`, `opencode`: as
//! `arbor stats --agent`), `model` (`provider/model`: only its turns), `scope` (`current`
//! or `all`), `by` (`day`, `week`, `month`) and `metric` (`cost`, `tokens`).
pub mod charts;

use crate::given;
use crate::layout::{esc, page, Nav, Page};
use crate::{App, ServeError};
use arbor_view::{Counted, Stats, StatsActivity, StatsBy, StatsRow};
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use charts::{Bar, BarChart, Series, Unit};
use std::fmt::Write as _;
use std::sync::Arc;

/// The usage page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new()
        .route("/usage", get(index))
        .route("/usage/{file}", get(data))
}

/// The page's query: range, scope and grouping (every field optional).
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct UsageQuery {
    /// Only turns since (a date, a date-time, or a span back: `30m`, `12h`, `7d`, `2w`).
    pub since: Option<String>,
    /// Only turns before (the same forms).
    pub until: Option<String>,
    /// Only the sessions of this working directory.
    pub project: Option<String>,
    /// Only this agent's sessions (as `arbor stats --agent`).
    pub agent: Option<String>,
    /// Only this model's turns (`provider/model`).
    pub model: Option<String>,
    /// `current` (this project) or `all` (every project); default: the server's scope.
    pub scope: Option<String>,
    /// The time chart's grouping: `day` (default), `week`, `month`.
    pub by: Option<String>,
    /// `cost` (default) or `tokens`.
    pub metric: Option<String>,
    /// Team mode (`--from`): only the sessions this machine pushed.
    pub machine: Option<String>,
    /// Team mode (`--from`): only the sessions this user pushed.
    pub user: Option<String>,
}

/// Which agents a query counts: pi's and omp's sessions (as `arbor stats --agent pi|omp`,
/// both), another agent's only, or all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agents {
    All,
    Own,
    Foreign(arbor_agents::Agent),
}

/// A query checked: times in ms, names known.
#[derive(Debug, Clone)]
struct Checked {
    since: Option<f64>,
    until: Option<f64>,
    by: StatsBy,
    tokens: bool,
    agents: Agents,
    all: bool,
}

impl UsageQuery {
    fn check(&self, app: &App) -> Result<Checked, ServeError> {
        let now = arbor_store::ids::now_ms() as f64;
        let time = |name: &str, v: &Option<String>| crate::time_given(name, v, now);
        let by = match given(&self.by) {
            None | Some("day") => StatsBy::Day,
            Some("week") => StatsBy::Week,
            Some("month") => StatsBy::Month,
            Some(o) => {
                return Err(ServeError::BadRequest(format!(
                    "by: '{o}' is not day, week or month"
                )))
            }
        };
        let tokens = match given(&self.metric) {
            None | Some("cost") => false,
            Some("tokens") => true,
            Some(o) => {
                return Err(ServeError::BadRequest(format!(
                    "metric: '{o}' is not cost or tokens"
                )))
            }
        };
        let agents = match given(&self.agent) {
            None => Agents::All,
            Some("pi" | "omp") => Agents::Own,
            Some(a) => Agents::Foreign(arbor_agents::Agent::from_name(a).ok_or_else(|| {
                ServeError::BadRequest(format!(
                    "agent: '{a}' is not pi, omp, claude, codex or opencode"
                ))
            })?),
        };
        let all = match given(&self.scope) {
            None => app.opts.all,
            Some("all") => true,
            Some("current") => false,
            Some(o) => {
                return Err(ServeError::BadRequest(format!(
                    "scope: '{o}' is not current or all"
                )))
            }
        };
        Ok(Checked {
            since: time("since", &self.since)?,
            until: time("until", &self.until)?,
            by,
            tokens,
            agents,
            all,
        })
    }

    /// The query as a link's `?…`, with `key` set to `value` (removed when `None`).
    fn with(&self, key: &str, value: Option<&str>) -> String {
        let mut q = self.clone();
        let v = value.map(str::to_string);
        match key {
            "since" => q.since = v,
            "until" => q.until = v,
            "project" => q.project = v,
            "agent" => q.agent = v,
            "model" => q.model = v,
            "scope" => q.scope = v,
            "by" => q.by = v,
            "metric" => q.metric = v,
            "machine" => q.machine = v,
            "user" => q.user = v,
            _ => {}
        }
        q.encoded()
    }

    /// The query as `?a=b&…` (empty when nothing is set).
    fn encoded(&self) -> String {
        let s = crate::layout::query(&[
            ("since", &self.since),
            ("until", &self.until),
            ("project", &self.project),
            ("agent", &self.agent),
            ("model", &self.model),
            ("scope", &self.scope),
            ("by", &self.by),
            ("metric", &self.metric),
            ("machine", &self.machine),
            ("user", &self.user),
        ]);
        if s.is_empty() {
            s
        } else {
            format!("?{s}")
        }
    }
}

/// The counted sessions of a query: pi's and omp's from the catalog's cached spends (the
/// files read when the catalog cannot be), other agents' from the catalog's rows; as `arbor
/// stats` counts them.
fn counted(app: &App, q: &UsageQuery, c: &Checked) -> Result<Vec<Counted>, ServeError> {
    use arbor_store::locate::Scope;
    let project = given(&q.project).map(|p| p.trim_end_matches('/').to_string());
    let scope = Scope::of(app.opts.dir.as_deref(), c.all);
    let mut out = Vec::new();
    // Team mode serves the store's sessions only, not this machine's other agents'.
    if c.agents != Agents::Own && app.team.is_none() {
        // Other agents' sessions: none under --dir (a directory of pi's or omp's).
        if !matches!(scope, Scope::Dir(_)) {
            let only = match c.agents {
                Agents::Foreign(a) => Some(a),
                _ => None,
            };
            // A project named: its sessions, whatever the scope.
            let scope = if project.is_some() { Scope::All } else { scope };
            let rows = app
                .catalog()?
                .foreign_in_scope(scope, only, project.as_deref())?;
            out.extend(rows.iter().map(arbor_view::stats_catalog::counted_foreign));
        }
    }
    if !matches!(c.agents, Agents::Foreign(_)) {
        let dirs = match &project {
            Some(p) => {
                let mine = app.loc.project_dirs_for_cwd(p);
                match scope {
                    Scope::Dir(d) => mine.into_iter().filter(|m| m == d).collect(),
                    _ => mine,
                }
            }
            None => app
                .loc
                .project_dirs(scope)
                .map_err(|e| ServeError::Other(format!("session directories: {e}")))?,
        };
        let own = {
            let mut cat = app.catalog()?;
            arbor_view::stats_catalog::counted(&mut cat, &dirs, c.since, c.until, &mut |_| {})
        };
        match own {
            Ok(s) => out.extend(s),
            // As `arbor stats`: the catalog's totals cannot be read; the files are.
            Err(_) => {
                let files: Vec<_> = dirs
                    .iter()
                    .flat_map(|d| arbor_store::discover::session_files(d))
                    .collect();
                out.extend(arbor_view::stats_from_files(&files).0);
            }
        }
    }
    if let Some(team) = &app.team {
        let chosen = crate::team::Filter {
            machine: given(&q.machine).map(str::to_string),
            user: given(&q.user).map(str::to_string),
        };
        if !chosen.is_empty() {
            out.retain(|c| team.keep(&c.file, &chosen));
        }
    }
    if let Some(m) = given(&q.model) {
        arbor_view::stats_keep_model(&mut out, m);
    }
    Ok(out)
}

/// The charts the page draws, by their name in `/usage/NAME.csv|json`.
const CHARTS: [&str; 5] = ["time", "model", "project", "agent", "heatmap"];

/// Everything the page shows, counted once.
struct Usage {
    time: Stats,
    model: Stats,
    project: Stats,
    agent: Stats,
    activity: StatsActivity,
}

/// `sessions` grouped `by`, its group names (a project's directory, a model's name) redacted
/// unless `--no-redact`.
fn grouped(app: &App, sessions: &[Counted], c: &Checked, by: StatsBy) -> Stats {
    let mut s = arbor_view::aggregate_stats_between(sessions, by, c.since, c.until);
    for r in &mut s.rows {
        if let std::borrow::Cow::Owned(o) = app.redact(&r.group) {
            r.group = o;
        }
    }
    s
}

fn usage(app: &App, q: &UsageQuery, c: &Checked) -> Result<Usage, ServeError> {
    let sessions = counted(app, q, c)?;
    Ok(Usage {
        time: grouped(app, &sessions, c, c.by),
        model: grouped(app, &sessions, c, StatsBy::Model),
        project: grouped(app, &sessions, c, StatsBy::Project),
        agent: grouped(app, &sessions, c, StatsBy::Agent),
        activity: arbor_view::stats_activity(&sessions, c.since, c.until),
    })
}

/// Runs `f` off the async threads (it reads the catalog and files).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServeError> + Send + 'static,
) -> Result<T, ServeError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServeError::Other(e.to_string()))?
}

async fn index(
    State(app): State<Arc<App>>,
    Query(q): Query<UsageQuery>,
) -> Result<Html<String>, ServeError> {
    blocking(move || {
        let c = q.check(&app)?;
        let u = usage(&app, &q, &c)?;
        Ok(render(&q, &c, &u, app.team.as_ref()))
    })
    .await
}

async fn data(
    State(app): State<Arc<App>>,
    Path(file): Path<String>,
    Query(q): Query<UsageQuery>,
) -> Result<Response, ServeError> {
    let (name, ext) = file
        .rsplit_once('.')
        .filter(|(n, e)| CHARTS.contains(n) && matches!(*e, "csv" | "json"))
        .ok_or_else(|| {
            ServeError::NotFound(format!(
                "/usage/{file}: the charts' data are {}, each .csv or .json",
                CHARTS.join(", ")
            ))
        })?;
    let (name, json) = (name.to_string(), ext == "json");
    blocking(move || {
        let c = q.check(&app)?;
        // Only the chart asked for.
        let sessions = counted(&app, &q, &c)?;
        let by = match name.as_str() {
            "time" => Some(c.by),
            "model" => Some(StatsBy::Model),
            "project" => Some(StatsBy::Project),
            "agent" => Some(StatsBy::Agent),
            _ => None,
        };
        let body = match (by, json) {
            (Some(by), true) => {
                let mut b = Vec::new();
                grouped(&app, &sessions, &c, by).write_json(&mut b)?;
                String::from_utf8_lossy(&b).into_owned()
            }
            (Some(by), false) => stats_csv(&grouped(&app, &sessions, &c, by)),
            (None, json) => {
                let a = arbor_view::stats_activity(&sessions, c.since, c.until);
                if json {
                    activity_json(&a)
                } else {
                    activity_csv(&a)
                }
            }
        };
        let kind = if json {
            "application/json"
        } else {
            "text/csv; charset=utf-8"
        };
        Ok((
            [
                (http::header::CONTENT_TYPE, kind.to_string()),
                (
                    http::header::CONTENT_DISPOSITION,
                    format!(
                        "inline; filename=\"usage-{name}.{ext}\"",
                        ext = if json { "json" } else { "csv" }
                    ),
                ),
            ],
            body,
        )
            .into_response())
    })
    .await
}

/// A CSV field: quoted when it holds a comma, quote or line break; a leading `=`, `+`, `-`,
/// `@`, tab or carriage return prefixed with `'`, so that a spreadsheet does not run a
/// session's string as a formula.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A bar chart's numbers as CSV: a row per group and the total, the fields of `arbor stats
/// --json` (`currentPath.cost`, ...).
fn stats_csv(s: &Stats) -> String {
    let mut out = String::from("group,turns");
    for part in ["currentPath", "otherBranches", "summaries"] {
        for f in ["input", "output", "cacheRead", "cacheWrite", "cost"] {
            let _ = write!(out, ",{part}.{f}");
        }
    }
    out.push_str(",estimatedCost\r\n");
    for r in s.rows.iter().chain(std::iter::once(&s.total)) {
        let _ = write!(out, "{},{}", csv_field(&r.group), r.turns);
        for sums in [&r.path, &r.other, &r.side] {
            let t = sums.tokens();
            let _ = write!(
                out,
                ",{},{},{},{},{}",
                t.input, t.output, t.cache_read, t.cache_write, t.cost
            );
        }
        if r.estimated != Default::default() {
            let _ = write!(out, ",{}", r.estimated.tokens().cost);
        } else {
            out.push(',');
        }
        out.push_str("\r\n");
    }
    out
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The heatmap's numbers as JSON: `{days, hours, turns: [[…24]…7], sessions, undated}`.
fn activity_json(a: &StatsActivity) -> String {
    serde_json::json!({
        "timeZone": "UTC",
        "days": DAYS,
        "hours": (0..24).collect::<Vec<u32>>(),
        "turns": a.turns,
        "sessions": a.sessions,
        "undatedTurns": a.undated,
    })
    .to_string()
        + "\n"
}

/// The heatmap's numbers as CSV: a row per day and hour.
fn activity_csv(a: &StatsActivity) -> String {
    let mut out = String::from("day,hour,turns,sessions\r\n");
    for (d, name) in DAYS.iter().enumerate() {
        for h in 0..24 {
            let _ = write!(out, "{name},{h},{},{}\r\n", a.turns[d][h], a.sessions[d][h]);
        }
    }
    out
}

const SERIES: [Series; 3] = [
    Series {
        name: "current path",
        class: "s-path",
    },
    Series {
        name: "branches left",
        class: "s-other",
    },
    Series {
        name: "summaries",
        class: "s-side",
    },
];

/// A row's three values (current path, branches left, summaries): dollars, or all tokens.
fn values(r: &StatsRow, tokens: bool) -> Vec<f64> {
    [&r.path, &r.other, &r.side]
        .iter()
        .map(|s| {
            let t = s.tokens();
            if tokens {
                t.input + t.output + t.cache_read + t.cache_write
            } else {
                t.cost
            }
        })
        .collect()
}

/// The most bars a time chart draws with its empty days, weeks or months filled in; past
/// it only the groups with turns are drawn.
const MOST_TIME_BARS: usize = 1000;

/// The next group after `g` (a day `YYYY-MM-DD`, a week's Monday, a month `YYYY-MM`).
fn next_group(by: StatsBy, g: &str) -> Option<String> {
    let day_ms = |d: &str| arbor_core::time::parse_iso_ms(&format!("{d}T00:00:00.000Z"));
    let iso_day = |ms: f64| {
        let iso = arbor_core::time::format_iso_ms(ms as i64);
        iso.get(..10).map(str::to_string)
    };
    match by {
        StatsBy::Day => iso_day(day_ms(g)? + 86_400_000.0),
        StatsBy::Week => iso_day(day_ms(g)? + 7.0 * 86_400_000.0),
        StatsBy::Month => {
            let (y, m) = g.split_once('-')?;
            let (y, m): (i32, u32) = (y.parse().ok()?, m.parse().ok()?);
            let (y, m) = if m >= 12 { (y + 1, 1) } else { (y, m + 1) };
            Some(format!("{y:04}-{m:02}"))
        }
        _ => None,
    }
}

/// A time chart's bars with the days (weeks, months) without turns between the first and
/// the last drawn as empty bars, so that the axis is time; the groups that are not dates
/// (`(no date)`) kept where they were. As they were when that would draw more than
/// [`MOST_TIME_BARS`].
fn fill_gaps(by: StatsBy, bars: Vec<Bar>) -> Vec<Bar> {
    let (dated, undated): (Vec<Bar>, Vec<Bar>) = bars
        .into_iter()
        .partition(|b| b.label.starts_with(|c: char| c.is_ascii_digit()));
    let (Some(first), Some(last)) = (dated.first(), dated.last()) else {
        return undated.into_iter().chain(dated).collect();
    };
    let mut out = undated;
    let mut have = dated.iter().peekable();
    let mut g = first.label.clone();
    let end = last.label.clone();
    let mut filled = Vec::new();
    loop {
        match have.peek() {
            Some(b) if b.label == g => {
                filled.push((*b).clone());
                have.next();
            }
            _ => filled.push(Bar {
                label: g.clone(),
                values: vec![0.0; SERIES.len()],
            }),
        }
        if g >= end || filled.len() > MOST_TIME_BARS {
            break;
        }
        match next_group(by, &g) {
            Some(n) if n > g => g = n,
            _ => break,
        }
    }
    if have.peek().is_some() || filled.len() > MOST_TIME_BARS {
        // A group the steps did not meet, or too many: only the groups with turns.
        out.extend(dated);
    } else {
        out.extend(filled);
    }
    out
}

/// The most bars a lying chart draws (the table has every row).
const MOST_BARS: usize = 20;

/// A bar chart of `s`, its table, and its CSV and JSON links.
fn section(
    out: &mut String,
    q: &UsageQuery,
    c: &Checked,
    name: &str,
    heading: &str,
    s: &Stats,
    link: Option<&str>,
) {
    let unit = if c.tokens {
        Unit::Tokens
    } else {
        Unit::Dollars
    };
    let lying = link.is_some();
    let mut rows: Vec<&StatsRow> = s.rows.iter().collect();
    if lying {
        // The largest first.
        rows.sort_by(|a, b| {
            let t = |r: &StatsRow| values(r, c.tokens).iter().sum::<f64>();
            t(b).total_cmp(&t(a))
        });
    }
    let bars: Vec<Bar> = rows
        .iter()
        .take(if lying { MOST_BARS } else { usize::MAX })
        .map(|r| Bar {
            label: if r.group.is_empty() {
                "(none)".into()
            } else {
                r.group.clone()
            },
            values: values(r, c.tokens),
        })
        .collect();
    let bars = if lying { bars } else { fill_gaps(s.by, bars) };
    let _ = write!(
        out,
        "<section class=\"usage-chart\" id=\"{name}\" data-chart=\"{name}\"><h2>{}</h2>",
        esc(heading)
    );
    out.push_str(&charts::bars(&BarChart {
        title: heading,
        unit,
        series: &SERIES,
        bars: &bars,
        lying,
    }));
    if lying && rows.len() > MOST_BARS {
        let _ = write!(
            out,
            "<p class=\"muted\">The {MOST_BARS} largest of {}; every one is in the table.</p>",
            rows.len()
        );
    }
    let data = q.encoded();
    let _ = write!(
        out,
        "<p class=\"data-links\"><a href=\"/usage/{name}.csv{0}\">CSV</a> · <a href=\"/usage/{name}.json{0}\">JSON</a></p>",
        esc(&data)
    );
    let _ = write!(
        out,
        "<details><summary>The numbers</summary><table class=\"numbers\"><thead><tr><th>{}</th><th class=\"num\">turns</th><th class=\"num\">input</th><th class=\"num\">output</th><th class=\"num\">cache read</th><th class=\"num\">cache write</th><th class=\"num\">current path</th><th class=\"num\">branches left</th><th class=\"num\">summaries</th></tr></thead><tbody>",
        esc(heading.split(" by ").nth(1).unwrap_or("group"))
    );
    let money = |v: f64| format!("${v:.2}");
    for r in rows.iter().copied().chain(std::iter::once(&s.total)) {
        let mut all = r.path;
        all.add(&r.other);
        all.add(&r.side);
        let t = all.tokens();
        let group = if r.group.is_empty() {
            "(none)"
        } else {
            &r.group
        };
        let cell = match link {
            Some(key) if !std::ptr::eq(r, &s.total) => format!(
                "<a href=\"/usage{}\">{}</a>",
                esc(&q.with(key, Some(&r.group))),
                esc(group)
            ),
            _ => esc(group),
        };
        let est = if r.estimated.tokens().cost > 0.0 {
            "~"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr><td>{cell}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{est}{}</td><td class=\"num\">{est}{}</td><td class=\"num\">{est}{}</td></tr>",
            r.turns,
            charts::short(t.input),
            charts::short(t.output),
            charts::short(t.cache_read),
            charts::short(t.cache_write),
            money(r.path.tokens().cost),
            money(r.other.tokens().cost),
            money(r.side.tokens().cost),
        );
    }
    out.push_str("</tbody></table></details></section>\n");
}

/// The filter form (GET: each view is a link) and the quick ranges.
fn filters(out: &mut String, q: &UsageQuery, c: &Checked, team: Option<&crate::team::Team>) {
    let v = |o: &Option<String>| esc(given(o).unwrap_or(""));
    let opt = |name: &str, cur: &str, label: &str| {
        format!(
            "<option value=\"{name}\"{}>{label}</option>",
            if name == cur { " selected" } else { "" }
        )
    };
    let by = c.by.name();
    let _ = write!(
        out,
        "<form class=\"filters\" method=\"get\" action=\"/usage\">\
<label>Since <input name=\"since\" value=\"{}\" placeholder=\"2025-01-31 or 30d\" size=\"16\"></label>\
<label>Until <input name=\"until\" value=\"{}\" placeholder=\"date or span\" size=\"12\"></label>\
<label>Project <input name=\"project\" value=\"{}\" placeholder=\"/path/of/project\" size=\"22\"></label>\
<label>Agent <select name=\"agent\">{}{}{}{}{}{}</select></label>\
<label>Model <input name=\"model\" value=\"{}\" placeholder=\"provider/model\" size=\"18\"></label>\
<label>Scope <select name=\"scope\">{}{}</select></label>\
<label>By <select name=\"by\">{}{}{}</select></label>\
<label>Show <select name=\"metric\">{}{}</select></label>\
{}<button type=\"submit\">Show</button></form>",
        v(&q.since),
        v(&q.until),
        v(&q.project),
        opt("", given(&q.agent).unwrap_or(""), "every agent"),
        opt("pi", given(&q.agent).unwrap_or(""), "pi and omp"),
        opt("omp", given(&q.agent).unwrap_or(""), "omp and pi"),
        opt("claude", given(&q.agent).unwrap_or(""), "claude"),
        opt("codex", given(&q.agent).unwrap_or(""), "codex"),
        opt("opencode", given(&q.agent).unwrap_or(""), "opencode"),
        v(&q.model),
        opt("current", if c.all { "all" } else { "current" }, "this project"),
        opt("all", if c.all { "all" } else { "current" }, "every project"),
        opt("day", by, "day"),
        opt("week", by, "week"),
        opt("month", by, "month"),
        opt("cost", if c.tokens { "tokens" } else { "cost" }, "cost"),
        opt("tokens", if c.tokens { "tokens" } else { "cost" }, "tokens"),
        team.map_or(String::new(), |t| {
            // Team mode: the store's machines and users (team::UNKNOWN for sessions pushed
            // before the store recorded them).
            let pick = |name: &str, label: &str, every: &str, cur: &Option<String>, all: Vec<String>| {
                let cur = given(cur).unwrap_or("");
                let mut o = opt("", cur, every);
                for x in &all {
                    o.push_str(&opt(&esc(x), &esc(cur), &esc(x)));
                }
                format!("<label>{label} <select name=\"{name}\">{o}</select></label>")
            };
            pick("machine", "Machine", "every machine", &q.machine, t.machines())
                + &pick("user", "User", "every user", &q.user, t.users())
        }),
    );
    out.push_str("<nav class=\"ranges\" aria-label=\"Ranges\">");
    for (label, since) in [
        ("7 days", Some("7d")),
        ("30 days", Some("30d")),
        ("90 days", Some("90d")),
        ("a year", Some("365d")),
        ("all time", None),
    ] {
        let cur = given(&q.since) == since && given(&q.until).is_none();
        let mut link = q.clone();
        link.since = since.map(str::to_string);
        link.until = None;
        let href = format!("/usage{}", link.encoded());
        let _ = write!(
            out,
            "<a href=\"{}\" data-range=\"{}\"{}>{label}</a> ",
            esc(&href),
            since.unwrap_or("all"),
            if cur { " aria-current=\"true\"" } else { "" }
        );
    }
    out.push_str("</nav>");
}

fn render(
    q: &UsageQuery,
    c: &Checked,
    u: &Usage,
    team: Option<&crate::team::Team>,
) -> Html<String> {
    let mut body = String::from("<main class=\"usage\"><h1>Usage</h1>");
    filters(&mut body, q, c, team);
    // The current path against the branches left and the summaries, in figures.
    let t = &u.time.total;
    let cost = |s: &arbor_store::usage::Sums| format!("${:.2}", s.tokens().cost);
    let _ = write!(
        body,
        "<section class=\"totals\" aria-label=\"Totals\"><div><b>{}</b> on the current path</div><div><b>{}</b> in branches left</div><div><b>{}</b> in summaries</div><div><b>{}</b> turns in <b>{}</b> sessions</div>{}</section>",
        cost(&t.path),
        cost(&t.other),
        cost(&t.side),
        t.turns,
        u.time.sessions,
        if u.time.fork_copies_skipped > 0 {
            format!(
                "<div class=\"muted\">{} copied by forks counted once</div>",
                arbor_view::count(u.time.fork_copies_skipped, "turn", "turns")
            )
        } else {
            String::new()
        }
    );
    if t.estimated.tokens().cost > 0.0 {
        let _ = write!(
            body,
            "<p class=\"muted\">~ of which {} is estimated from arbor's price table ({}): other agents' sessions that record tokens, not dollars.</p>",
            cost(&t.estimated),
            esc(&arbor_agents::listing::price_table_date())
        );
    }
    let what = if c.tokens { "Tokens" } else { "Cost" };
    let when = format!("{what} by {}", c.by.name());
    section(&mut body, q, c, "time", &when, &u.time, None);
    section(
        &mut body,
        q,
        c,
        "model",
        &format!("{what} by model"),
        &u.model,
        Some("model"),
    );
    section(
        &mut body,
        q,
        c,
        "project",
        &format!("{what} by project"),
        &u.project,
        Some("project"),
    );
    section(
        &mut body,
        q,
        c,
        "agent",
        &format!("{what} by agent"),
        &u.agent,
        Some("agent"),
    );
    // When: sessions and turns by day of the week and hour.
    let hours: Vec<String> = (0..24).map(|h| format!("{h:02}")).collect();
    let turns: Vec<Vec<u64>> = u.activity.turns.iter().map(|r| r.to_vec()).collect();
    let sessions: Vec<Vec<u64>> = u.activity.sessions.iter().map(|r| r.to_vec()).collect();
    let _ = write!(
        body,
        "<section class=\"usage-chart\" id=\"heatmap\" data-chart=\"heatmap\"><h2>When (UTC): turns by day and hour</h2>{}",
        charts::heatmap(&charts::Heatmap {
            title: "Turns by day of the week and hour of the day, UTC",
            rows: &DAYS,
            cols: &hours,
            values: &turns,
            second: Some(("sessions", &sessions)),
            counts: "turns",
        })
    );
    let data = q.encoded();
    let _ = write!(
        body,
        "<p class=\"data-links\"><a href=\"/usage/heatmap.csv{0}\">CSV</a> · <a href=\"/usage/heatmap.json{0}\">JSON</a></p><details><summary>The numbers</summary><table class=\"numbers heat\"><thead><tr><th>turns (sessions)</th>",
        esc(&data)
    );
    for h in &hours {
        let _ = write!(body, "<th class=\"num\">{h}</th>");
    }
    body.push_str("</tr></thead><tbody>");
    for (d, name) in DAYS.iter().enumerate() {
        let _ = write!(body, "<tr><th>{name}</th>");
        for h in 0..24 {
            let _ = write!(
                body,
                "<td class=\"num\">{} ({})</td>",
                u.activity.turns[d][h], u.activity.sessions[d][h]
            );
        }
        body.push_str("</tr>");
    }
    body.push_str("</tbody></table></details></section></main>");
    page(
        Page {
            title: "Usage",
            nav: Nav::Usage,
            assets: &["usage.css", "usage.js"],
            body_attrs: "",
        },
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, v: f64) -> Bar {
        Bar {
            label: label.into(),
            values: vec![v, 0.0, 0.0],
        }
    }

    fn labels(bars: &[Bar]) -> Vec<&str> {
        bars.iter().map(|b| b.label.as_str()).collect()
    }

    #[test]
    fn time_bars_fill_the_days_weeks_and_months_without_turns() {
        let got = fill_gaps(
            StatsBy::Day,
            vec![bar("2026-02-27", 1.0), bar("2026-03-02", 2.0)],
        );
        assert_eq!(
            labels(&got),
            ["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"]
        );
        assert_eq!(got[1].values, [0.0, 0.0, 0.0]);
        assert_eq!(got[3].values[0], 2.0);
        let got = fill_gaps(
            StatsBy::Week,
            vec![bar("2025-12-22", 1.0), bar("2026-01-05", 1.0)],
        );
        assert_eq!(labels(&got), ["2025-12-22", "2025-12-29", "2026-01-05"]);
        let got = fill_gaps(
            StatsBy::Month,
            vec![
                bar("(no date)", 1.0),
                bar("2025-11", 1.0),
                bar("2026-02", 1.0),
            ],
        );
        assert_eq!(
            labels(&got),
            ["(no date)", "2025-11", "2025-12", "2026-01", "2026-02"]
        );
        // Years of days: only the days with turns.
        let got = fill_gaps(
            StatsBy::Day,
            vec![bar("2020-01-01", 1.0), bar("2026-01-01", 1.0)],
        );
        assert_eq!(labels(&got), ["2020-01-01", "2026-01-01"]);
        // A group the steps do not meet (a timestamp's own day spelling): as they were.
        let got = fill_gaps(
            StatsBy::Day,
            vec![bar("2026-01-01", 1.0), bar("2026-01-02x", 1.0)],
        );
        assert_eq!(labels(&got), ["2026-01-01", "2026-01-02x"]);
        assert!(fill_gaps(StatsBy::Day, Vec::new()).is_empty());
    }
}
