//! The sessions page (`/`): this project or every project, every agent (pi's and omp's
//! sessions from the catalog's listing, other agents' from its foreign rows, as `arbor ls
//! --all` shows them), newest first; filters (project, agent, model, since, until; machine
//! and user in team mode) as the query of a GET form, so that every view is a link; the same
//! search as `arbor search` (the catalog's FTS, its ranking, snippets with the hit marked, the
//! other-branch mark); paging by a cursor ("next" link; the page's script loads the next page
//! when scrolled to the end, and shows new and grown sessions from `/events/sessions`).
use crate::given;
use crate::layout::{esc, page, seg, Nav, Page};
use crate::{App, ServeError};
use arbor_index::{Catalog, Listed};
use arbor_store::locate::Scope;
use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use std::path::PathBuf;
use std::sync::Arc;

/// Rows on one page of the list (and hits on one page of a search).
pub const PAGE: usize = 100;

/// The marks around matched words in a snippet: private-use characters no session text is
/// likely to hold, made `<mark>` once the snippet is escaped.
const MARKS: (char, char) = ('\u{e000}', '\u{e001}');

/// The sessions page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new().route("/", get(index))
}

/// The page's query: the filters, the search, the cursor. Empty values are no filter.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct Filters {
    /// `project` (this project) or `all` (every project); default: the server's `--all`.
    pub scope: Option<String>,
    /// `pi`, `omp`, `claude`, `codex`, `opencode`; empty: every agent.
    pub agent: Option<String>,
    /// A model (`provider/model`, or its part after the slash) the session used.
    pub model: Option<String>,
    /// The project (working directory) exactly.
    pub project: Option<String>,
    /// Last activity at or after this day (`YYYY-MM-DD`) or time (ISO 8601).
    pub since: Option<String>,
    /// Last activity before the end of this day, or before this time.
    pub until: Option<String>,
    /// Search words (`arbor search`'s query).
    pub q: Option<String>,
    /// The cursor: the last row shown (`MS~ID`), or the hits shown so far in a search.
    pub after: Option<String>,
    /// Team mode: the machine that pushed the session.
    pub machine: Option<String>,
    /// Team mode: the user who pushed the session.
    pub user: Option<String>,
    /// `rows`: only the rows and the next link (what the script appends when scrolled to the
    /// end).
    pub part: Option<String>,
}

impl Filters {
    /// Whether the view is every project's (else this project's, or `--dir`'s).
    fn all(&self, app: &App) -> bool {
        match given(&self.scope) {
            Some("all") => true,
            Some(_) => false,
            None => app.opts.all,
        }
    }

    /// The scope of the view.
    fn scope<'a>(&self, app: &'a App) -> Scope<'a> {
        Scope::of(app.opts.dir.as_deref(), self.all(app))
    }

    /// The query string of these filters (without the cursor and the search unless asked),
    /// `&`-joined and escaped for a URL.
    fn query(&self, with_q: bool) -> String {
        let none = None;
        crate::layout::query(&[
            ("scope", &self.scope),
            ("agent", &self.agent),
            ("model", &self.model),
            ("project", &self.project),
            ("since", &self.since),
            ("until", &self.until),
            ("machine", &self.machine),
            ("user", &self.user),
            ("q", if with_q { &self.q } else { &none }),
        ])
    }

    /// The time range in ms: `since` inclusive, `until` exclusive, read as the usage page
    /// and `arbor stats` read them ([`crate::time_given`]: a day is its start; spans back).
    fn range(&self) -> Result<(Option<f64>, Option<f64>), ServeError> {
        let now = arbor_store::ids::now_ms() as f64;
        Ok((
            crate::time_given("since", &self.since, now)?,
            crate::time_given("until", &self.until, now)?,
        ))
    }

    /// Which agents are wanted: pi's and omp's directories, other agents' rows (`None`:
    /// every other agent; `Some(None)`: none).
    fn agents(&self) -> Result<(bool, bool, Option<Option<arbor_agents::Agent>>), ServeError> {
        Ok(match given(&self.agent) {
            None => (true, true, None),
            Some("pi") => (true, false, Some(None)),
            Some("omp") => (false, true, Some(None)),
            Some(a) => match arbor_agents::Agent::from_name(a) {
                Some(f) => (false, false, Some(Some(f))),
                None => {
                    return Err(ServeError::BadRequest(format!(
                        "agent: unknown agent '{a}' (pi, omp, claude, codex, opencode)"
                    )))
                }
            },
        })
    }
}

/// One session of the list, whoever wrote it.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The id the session page takes.
    pub id: Option<String>,
    /// The title (unredacted).
    pub title: String,
    /// `pi`, `omp`, or the other agent's name.
    pub agent: &'static str,
    /// The working directory.
    pub project: String,
    /// Last activity (ms).
    pub modified: f64,
    /// Messages.
    pub messages: u64,
    /// Tips of the tree (`None`: not known, another agent's session).
    pub branches: Option<u64>,
    /// Dollars.
    pub cost: f64,
    /// Models used.
    pub models: Vec<String>,
    /// The file (never shown; team mode's origin is looked up by it).
    pub file: PathBuf,
}

impl Row {
    fn of_listed(l: &Listed, omp_dirs: &mut OmpDirs) -> Row {
        let in_omp_dir = omp_dirs.holds(&l.file);
        Row {
            id: l.session_id.clone(),
            title: l.display_title().into_owned(),
            agent: if l.shown_as_omp(in_omp_dir) {
                "omp"
            } else {
                "pi"
            },
            project: l.info.cwd.clone(),
            modified: l.info.modified_ms,
            messages: l.info.message_count as u64,
            branches: Some(l.branches),
            cost: l.usage.cost,
            models: l.models.clone(),
            file: l.file.clone(),
        }
    }

    fn of_foreign(f: &arbor_index::ForeignRow) -> Row {
        Row {
            id: Some(f.summary.id.clone()),
            title: f.display_title().to_string(),
            agent: f.agent.name(),
            project: f.summary.cwd.clone(),
            modified: f.summary.modified_ms.map_or(f64::NAN, |t| t as f64),
            messages: f.summary.message_count,
            branches: None,
            cost: f.summary.cost_recorded + f.summary.cost_estimated,
            models: f.summary.models.clone(),
            file: f.source.clone(),
        }
    }

    /// The cursor naming this row (`MS~ID`).
    fn cursor(&self) -> String {
        format!(
            "{}~{}",
            if self.modified.is_finite() {
                self.modified as i64
            } else {
                0
            },
            self.id.as_deref().unwrap_or("")
        )
    }
}

/// Which session directories are omp's ([`arbor_store::locate::is_omp_dir`] resolves real
/// paths: asked once per directory, not once per session).
#[derive(Default)]
pub(crate) struct OmpDirs(std::collections::HashMap<PathBuf, bool>);

impl OmpDirs {
    /// Whether the session `file` lies in one of omp's directories.
    fn holds(&mut self, file: &std::path::Path) -> bool {
        let Some(dir) = file.parent() else {
            return false;
        };
        if let Some(v) = self.0.get(dir) {
            return *v;
        }
        let v = arbor_store::locate::is_omp_dir(dir);
        self.0.insert(dir.to_path_buf(), v);
        v
    }
}

/// What the filters may choose from in the current scope and agents.
#[derive(Debug, Default)]
pub(crate) struct Choices {
    models: Vec<String>,
    projects: Vec<String>,
}

/// The session directories of the view (pi's and omp's as `agents` asks).
fn dirs_of(app: &App, f: &Filters, pi: bool, omp: bool) -> Result<Vec<PathBuf>, ServeError> {
    if !pi && !omp {
        return Ok(Vec::new());
    }
    let mut dirs = app
        .loc
        .project_dirs(f.scope(app))
        .map_err(|e| ServeError::Other(format!("session directories: {e}")))?;
    if let Some(p) = given(&f.project) {
        let of_project = app.loc.project_dirs_for_cwd(p);
        dirs.retain(|d| of_project.contains(d));
    }
    if !(pi && omp) {
        dirs.retain(|d| arbor_store::locate::is_omp_dir(d) == omp);
    }
    Ok(dirs)
}

/// Other agents' rows of the view: the catalog's, their sources refreshed (only changed ones
/// are read), those of the current project when the view is this project's.
fn foreign_of(
    cat: &mut Catalog,
    f: &Filters,
    app: &App,
    only: Option<Option<arbor_agents::Agent>>,
) -> Result<Vec<arbor_index::ForeignRow>, ServeError> {
    let only = match only {
        Some(None) => return Ok(Vec::new()),
        Some(Some(a)) => Some(a),
        None => None,
    };
    if app.team.is_some() {
        // Team mode serves the store's sessions only, not this machine's other agents'.
        return Ok(Vec::new());
    }
    Ok(cat.foreign_in_scope(f.scope(app), only, None)?)
}

/// The sessions of the view, newest first, filtered; and what the filters may choose from.
pub(crate) fn rows(app: &App, f: &Filters) -> Result<(Vec<Row>, Choices), ServeError> {
    let (pi, omp, others) = f.agents()?;
    let dirs = dirs_of(app, f, pi, omp)?;
    let (since, until) = f.range()?;
    let (listed, foreign) = {
        let mut cat = app.catalog()?;
        let listed = if dirs.is_empty() {
            Vec::new()
        } else {
            arbor_index::fresh::listing(
                &mut cat,
                &dirs,
                arbor_index::RefreshOptions::default(),
                &mut arbor_index::fresh::Quiet,
            )?
            .0
        };
        (listed, foreign_of(&mut cat, f, app, others)?)
    };
    let mut omp_dirs = OmpDirs::default();
    let mut rows: Vec<Row> = listed
        .iter()
        .map(|l| Row::of_listed(l, &mut omp_dirs))
        .collect();
    if !foreign.is_empty() {
        rows.extend(foreign.iter().map(Row::of_foreign));
        // Merged newest first, each by its own last activity, as `arbor ls` merges them.
        arbor_core::js::v8_sort_slice_by_number(&mut rows, |a, b| b.modified - a.modified);
    }
    let project = given(&f.project);
    if let Some(p) = project {
        let p = p.trim_end_matches('/');
        rows.retain(|r| r.project.trim_end_matches('/') == p);
    }
    rows.retain(|r| since.is_none_or(|s| r.modified >= s) && until.is_none_or(|u| r.modified < u));
    if let Some(team) = &app.team {
        let chosen = crate::team::Filter {
            machine: given(&f.machine).map(str::to_string),
            user: given(&f.user).map(str::to_string),
        };
        if !chosen.is_empty() {
            rows.retain(|r| team.keep(&r.file, &chosen));
        }
    }
    let mut choices = Choices::default();
    {
        let mut models = std::collections::BTreeSet::new();
        let mut projects = std::collections::HashSet::new();
        for r in &rows {
            for m in &r.models {
                if !models.contains(m.as_str()) {
                    models.insert(m.clone());
                }
            }
            // The projects most recently active first, at most 200.
            if choices.projects.len() < 200 && projects.insert(r.project.as_str()) {
                choices.projects.push(r.project.clone());
            }
        }
        choices.models = models.into_iter().collect();
    }
    if let Some(m) = given(&f.model) {
        rows.retain(|r| {
            r.models
                .iter()
                .any(|x| x == m || x.rsplit_once('/').is_some_and(|(_, name)| name == m))
        });
    }
    Ok((rows, choices))
}

/// Money as the tables show it.
fn dollars(c: f64) -> String {
    if c <= 0.0 || !c.is_finite() {
        String::from("—")
    } else if c < 0.01 {
        String::from("<$0.01")
    } else {
        format!("${c:.2}")
    }
}

/// A time as the page shows it (UTC, to the minute) inside `<time>` with the ISO value.
fn when(ms: f64) -> String {
    match arbor_core::js::valid_time(ms) {
        Some(v) => {
            let iso = arbor_core::time::format_iso_ms(v as i64);
            let shown = iso.get(..16).unwrap_or(&iso).replace('T', " ");
            format!("<time datetime=\"{}\">{}</time>", esc(&iso), esc(&shown))
        }
        None => String::from("—"),
    }
}

/// One row of the table (also what a live event carries): every session string redacted
/// (unless `--no-redact`) and escaped.
pub(crate) fn row_html(app: &App, r: &Row) -> String {
    let title = app.redact(&r.title);
    let title = if title.trim().is_empty() {
        "(no title)".into()
    } else {
        title
    };
    let title = esc(&arbor_view::one_line(&title, 200));
    let link = match &r.id {
        Some(id) => format!("<a href=\"/session/{}\">{title}</a>", seg(id)),
        None => title,
    };
    let project = app.redact(&r.project);
    let team = match &app.team {
        Some(t) => {
            let o = t.origin(&r.file).unwrap_or_default();
            format!(
                "<td class=\"machine\">{}</td><td class=\"user\">{}</td>",
                esc(o.machine_shown()),
                esc(o.user_shown())
            )
        }
        None => String::new(),
    };
    format!(
        "<tr data-key=\"{key}\" data-modified=\"{modified}\"><td class=\"title\">{link}</td><td class=\"agent\">{agent}</td>\
<td class=\"project\"><a href=\"/?scope=all&amp;project={pq}\">{project}</a></td><td class=\"when\">{when}</td>\
<td class=\"num messages\">{messages}</td><td class=\"num branches\">{branches}</td><td class=\"num cost\">{cost}</td>{team}</tr>\n",
        key = esc(r.id.as_deref().unwrap_or("")),
        modified = if r.modified.is_finite() { r.modified as i64 } else { 0 },
        agent = esc(r.agent),
        pq = esc(&seg(&r.project)),
        project = esc(&project),
        when = when(r.modified),
        messages = r.messages,
        branches = r.branches.map_or_else(|| "—".to_string(), |b| b.to_string()),
        cost = dollars(r.cost),
    )
}

/// The table's head.
fn head_html(app: &App) -> String {
    format!(
        "<thead><tr><th>Title</th><th>Agent</th><th>Project</th><th>Last activity</th>\
<th class=\"num\">Messages</th><th class=\"num\">Branches</th><th class=\"num\">Cost</th>{}</tr></thead>",
        if app.team.is_some() {
            "<th>Machine</th><th>User</th>"
        } else {
            ""
        }
    )
}

/// The rows after the cursor `after`, at most [`PAGE`]; and whether more follow.
fn page_of<'a>(rows: &'a [Row], after: Option<&str>) -> (&'a [Row], bool) {
    let start = match after.and_then(|a| a.split_once('~')) {
        None => 0,
        Some((ms, id)) => {
            let ms: f64 = ms.parse().unwrap_or(f64::INFINITY);
            match rows.iter().position(|r| {
                r.id.as_deref() == Some(id) && r.cursor() == format!("{}~{id}", ms as i64)
            }) {
                Some(k) => k + 1,
                // The row moved (it grew) or went: the first older one.
                None => rows
                    .iter()
                    .position(|r| r.modified < ms || r.modified.is_nan())
                    .unwrap_or(rows.len()),
            }
        }
    };
    let end = (start + PAGE).min(rows.len());
    (&rows[start.min(end)..end], end < rows.len())
}

async fn index(
    State(app): State<Arc<App>>,
    Query(f): Query<Filters>,
) -> Result<Html<String>, ServeError> {
    tokio::task::spawn_blocking(move || render(&app, &f))
        .await
        .map_err(|e| ServeError::Other(e.to_string()))?
}

fn render(app: &App, f: &Filters) -> Result<Html<String>, ServeError> {
    let rows_only = given(&f.part) == Some("rows");
    if let Some(q) = given(&f.q) {
        let body = search(app, f, q, rows_only)?;
        if rows_only {
            return Ok(Html(body));
        }
        return Ok(shell(app, f, &Choices::default(), &body));
    }
    let (rows, choices) = rows(app, f)?;
    let (shown, more) = page_of(&rows, given(&f.after));
    let mut body = String::new();
    for r in shown {
        body.push_str(&row_html(app, r));
    }
    let next = match shown.last() {
        Some(last) if more => {
            let q = f.query(false);
            format!(
                "<p class=\"next\"><a rel=\"next\" href=\"/?{}{}after={}\">Next {PAGE} sessions</a></p>",
                esc(&q),
                if q.is_empty() { "" } else { "&amp;" },
                esc(&seg(&last.cursor()))
            )
        }
        _ => String::new(),
    };
    if rows_only {
        return Ok(Html(format!("<table><tbody>{body}</tbody></table>{next}")));
    }
    let count = arbor_view::count(rows.len() as u64, "session", "sessions");
    let table = if rows.is_empty() {
        "<p class=\"empty\">No session matches.</p>".to_string()
    } else {
        format!(
            "<p class=\"count\">{count}</p><table class=\"sessions\">{}<tbody id=\"rows\">{body}</tbody></table>{next}",
            head_html(app)
        )
    };
    Ok(shell(app, f, &choices, &table))
}

/// The page around `body`: the filters' form, then `body`.
fn shell(app: &App, f: &Filters, choices: &Choices, body: &str) -> Html<String> {
    let all = f.all(app);
    let opt = |v: &str, label: &str, cur: Option<&str>| {
        format!(
            "<option value=\"{}\"{}>{}</option>",
            esc(v),
            if cur == Some(v) || (v.is_empty() && cur.is_none()) {
                " selected"
            } else {
                ""
            },
            esc(label)
        )
    };
    let scope = if app.opts.dir.is_some() {
        String::new()
    } else {
        let cur = Some(if all { "all" } else { "project" });
        format!(
            "<label>Scope <select name=\"scope\">{}{}</select></label>",
            opt("project", "This project", cur),
            opt("all", "All projects", cur)
        )
    };
    let agent_cur = given(&f.agent);
    let mut agents = opt("", "All agents", agent_cur);
    for a in ["pi", "omp", "claude", "codex", "opencode"] {
        agents.push_str(&opt(a, a, agent_cur));
    }
    let model_cur = given(&f.model);
    let mut models = opt("", "Any model", model_cur);
    for m in &choices.models {
        models.push_str(&opt(m, m, model_cur));
    }
    if let Some(m) = model_cur {
        if !choices.models.iter().any(|x| x == m) {
            models.push_str(&opt(m, m, model_cur));
        }
    }
    let mut projects = String::new();
    for p in &choices.projects {
        projects.push_str(&format!("<option value=\"{}\">", esc(&app.redact(p))));
    }
    let text = |name: &str, label: &str, v: &Option<String>, kind: &str, extra: &str| {
        format!(
            "<label>{label} <input type=\"{kind}\" name=\"{name}\" value=\"{}\"{extra}></label>",
            esc(given(v).unwrap_or(""))
        )
    };
    let team = match &app.team {
        Some(t) => {
            // A choice among the store's machines and users (team::UNKNOWN among them for
            // sessions pushed before the store recorded them).
            let select =
                |name: &str, label: &str, every: &str, v: &Option<String>, all: Vec<String>| {
                    let cur = given(v).unwrap_or("");
                    let mut o = format!("<option value=\"\">{every}</option>");
                    for x in all {
                        let sel = if x == cur { " selected" } else { "" };
                        o.push_str(&format!("<option value=\"{0}\"{sel}>{0}</option>", esc(&x)));
                    }
                    format!("<label>{label} <select name=\"{name}\">{o}</select></label>")
                };
            format!(
                "{}{}",
                select(
                    "machine",
                    "Machine",
                    "every machine",
                    &f.machine,
                    t.machines()
                ),
                select("user", "User", "every user", &f.user, t.users())
            )
        }
        None => String::new(),
    };
    let form = format!(
        "<form class=\"filters\" method=\"get\" action=\"/\">\
<label class=\"search\">Search <input type=\"search\" name=\"q\" value=\"{q}\" placeholder=\"words, \u{201c}a phrase\u{201d}, prefix*\"></label>\
{scope}<label>Agent <select name=\"agent\">{agents}</select></label>\
<label>Model <select name=\"model\">{models}</select></label>\
{project}<datalist id=\"projects\">{projects}</datalist>\
{since}{until}{team}<button type=\"submit\">Show</button> <a class=\"reset\" href=\"/\">Reset</a></form>",
        q = esc(given(&f.q).unwrap_or("")),
        project = text("project", "Project", &f.project, "text", " list=\"projects\""),
        since = text("since", "Since", &f.since, "text", " placeholder=\"2025-01-31 or 30d\" size=\"16\""),
        until = text("until", "Until", &f.until, "text", " placeholder=\"date or span\" size=\"12\""),
    );
    let live = if app.opts.watch || app.team.is_none() {
        format!(" data-events=\"/events/sessions?{}\"", esc(&f.query(false)))
    } else {
        String::new()
    };
    let attrs = if given(&f.q).is_some() {
        String::new()
    } else {
        live
    };
    page(
        Page {
            title: "Sessions",
            nav: Nav::Sessions,
            assets: &["sessions.css", "sessions.js"],
            body_attrs: attrs.trim_start(),
        },
        &format!("<main class=\"sessions\"><h1>Sessions</h1>{form}\n{body}</main>"),
    )
}

/// A search of the view: pi's and omp's sessions by the catalog's index (as `arbor search`),
/// other agents' beside them, by one relevance; the hits after `after` (a number), at most
/// [`PAGE`].
fn search(app: &App, f: &Filters, query: &str, rows_only: bool) -> Result<String, ServeError> {
    let (pi, omp, others) = f.agents()?;
    let dirs = dirs_of(app, f, pi, omp)?;
    let (since, until) = f.range()?;
    let offset: usize = given(&f.after).and_then(|a| a.parse().ok()).unwrap_or(0);
    if offset > 10_000 {
        return Err(ServeError::BadRequest(
            "after: too far (narrow the search)".into(),
        ));
    }
    let want = offset + PAGE + 1;
    // Only the sessions the other filters keep (model, team), when one is set: by file.
    let keep_files: Option<std::collections::HashSet<PathBuf>> =
        if given(&f.model).is_some() || given(&f.machine).is_some() || given(&f.user).is_some() {
            Some(rows(app, f)?.0.into_iter().map(|r| r.file).collect())
        } else {
            None
        };
    let marks = (MARKS.0.to_string(), MARKS.1.to_string());
    let (kinds, need) =
        arbor_index::fresh::search_kinds(&[] as &[&str], arbor_index::IndexKinds::default())
            .map_err(|r| ServeError::BadRequest(format!("unknown role {r}")))?;
    let mut cat = app.catalog()?;
    let foreign = foreign_of(&mut cat, f, app, others)?;
    let new_kinds = cat.require_kinds(need)?;
    let mut q = arbor_index::SearchQuery::new(query);
    q.kinds = Some(kinds);
    q.since_ms = since;
    q.dirs = Some(dirs.iter().map(|d| arbor_index::dir_key(d)).collect());
    q.marks = marks.clone();
    q.limit = want;
    let bad_query = |e: arbor_index::IndexError| {
        match e {
        arbor_index::IndexError::Query(m) => ServeError::BadRequest(format!(
            "search: {m} (words, \"phrases\", prefix*, AND/OR/NOT, NEAR; quote words with punctuation)"
        )),
        e => ServeError::from(e),
    }
    };
    let (mut hits, mut total) = if dirs.is_empty() {
        (Vec::new(), 0)
    } else {
        arbor_index::fresh::search(
            &mut cat,
            &q,
            &dirs,
            need,
            new_kinds,
            &mut arbor_index::fresh::Quiet,
        )
        .map_err(bad_query)?
    };
    if app.opts.redact {
        hits = arbor_view::secrets::redacted_hits(&cat, hits, &marks)?;
    }
    if !foreign.is_empty() {
        let in_scope: std::collections::HashSet<(&std::path::Path, &str)> = foreign
            .iter()
            .map(|r| (r.source.as_path(), r.summary.id.as_str()))
            .collect();
        let found = cat
            .search_foreign(query, q.kinds.as_deref(), since, want, &marks, &|r| {
                in_scope.contains(&(r.source.as_path(), r.summary.id.as_str()))
            })
            .map_err(bad_query)?;
        total += found.len() as u64;
        hits.extend(found.into_iter().map(|h| h.into_hit()));
        arbor_index::by_rank(&mut hits);
    }
    // The sessions' titles as the list shows them (a hit names only a session's name): the
    // catalog's rows of the hits' files.
    let files: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = hits.iter().map(|h| h.path.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    let titles: std::collections::HashMap<PathBuf, String> = cat
        .listed_files(&files)?
        .into_iter()
        .map(|l| {
            let t = l.display_title().into_owned();
            (l.file, t)
        })
        .collect();
    drop(cat);
    for h in &mut hits {
        if let Some(t) = titles.get(&h.path) {
            h.session_name = Some(t.clone());
        }
    }
    let mut omp_dirs = OmpDirs::default();
    let mut agent_of = |h: &arbor_index::Hit| -> &'static str {
        if let Some(r) = foreign
            .iter()
            .find(|r| r.source == h.path && h.session_id.as_deref() == Some(&r.summary.id))
        {
            return r.agent.name();
        }
        if omp_dirs.holds(&h.path) {
            "omp"
        } else {
            "pi"
        }
    };
    hits.retain(|h| {
        until.is_none_or(|u| {
            h.timestamp
                .as_deref()
                .and_then(arbor_core::time::parse_iso_ms)
                .is_some_and(|t| t < u)
        }) && keep_files.as_ref().is_none_or(|k| k.contains(&h.path))
    });
    let more = hits.len() > offset + PAGE;
    let shown = hits
        .get(offset..(offset + PAGE).min(hits.len()))
        .unwrap_or(&[]);
    let mut out = String::new();
    for h in shown {
        out.push_str(&hit_html(app, h, agent_of(h)));
    }
    let next = if more {
        let q = f.query(true);
        format!(
            "<p class=\"next\"><a rel=\"next\" href=\"/?{}&amp;after={}\">Next {PAGE} matches</a></p>",
            esc(&q),
            offset + PAGE
        )
    } else {
        String::new()
    };
    if rows_only {
        return Ok(format!("<ol>{out}</ol>{next}"));
    }
    if hits.is_empty() {
        return Ok(format!(
            "<p class=\"empty\">No match for <q>{}</q>.</p>",
            esc(query)
        ));
    }
    Ok(format!(
        "<p class=\"count\">{} for <q>{}</q></p><ol class=\"hits\" id=\"rows\" start=\"{}\">{out}</ol>{next}",
        arbor_view::count(total, "match", "matches"),
        esc(query),
        offset + 1
    ))
}

/// One hit: its session's title linking to the entry (that entry's branch, the entry in
/// view), the agent, the kind of text, the time, the snippet with the matched words marked,
/// and "other branch" when the entry is off the session's current path.
fn hit_html(app: &App, h: &arbor_index::Hit, agent: &str) -> String {
    let title = app.redact(h.session_name.as_deref().unwrap_or(""));
    let title = if title.trim().is_empty() {
        "(no title)".to_string()
    } else {
        arbor_view::one_line(&title, 200)
    };
    let href = match (&h.session_id, &h.entry_id) {
        (Some(s), Some(e)) => format!("/session/{}/entry/{}#{}", seg(s), seg(e), seg(e)),
        (Some(s), None) => format!("/session/{}", seg(s)),
        (None, _) => String::new(),
    };
    let title = if href.is_empty() {
        esc(&title)
    } else {
        format!("<a href=\"{}\">{}</a>", esc(&href), esc(&title))
    };
    let snippet = esc(&app.redact(&arbor_view::one_line(&h.snippet, 400)))
        .replace(MARKS.0, "<mark>")
        .replace(MARKS.1, "</mark>");
    let branch = if h.on_current_branch {
        ""
    } else {
        " <span class=\"other-branch\" title=\"this entry is on another branch than the session's current one\">other branch</span>"
    };
    let when = h
        .timestamp
        .as_deref()
        .and_then(arbor_core::time::parse_iso_ms)
        .map(when)
        .unwrap_or_default();
    format!(
        "<li class=\"hit\"><div class=\"hit-head\">{title} <span class=\"agent\">{}</span> <span class=\"kind\">{}</span> {when}{branch}</div>\
<p class=\"snippet\">{snippet}</p></li>\n",
        esc(agent),
        esc(h.kind.name()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ms: f64, id: &str) -> Row {
        Row {
            id: Some(id.into()),
            title: id.into(),
            agent: "pi",
            project: "/p".into(),
            modified: ms,
            messages: 1,
            branches: Some(1),
            cost: 0.0,
            models: vec![],
            file: PathBuf::from(id),
        }
    }

    #[test]
    fn paging_continues_after_the_cursor_even_when_rows_moved() {
        let rows: Vec<Row> = (0..250)
            .map(|k| row(1e12 - k as f64, &format!("s{k}")))
            .collect();
        let (first, more) = page_of(&rows, None);
        assert_eq!(first.len(), PAGE);
        assert!(more);
        let c = first[PAGE - 1].cursor();
        let (second, more) = page_of(&rows, Some(&c));
        assert_eq!(second[0].id.as_deref(), Some("s100"));
        assert!(more);
        let (third, more) = page_of(&rows, Some(&second[PAGE - 1].cursor()));
        assert_eq!(third.len(), 50);
        assert!(!more);
        // The cursor's row grew and moved to the top: the page goes on with the older rows.
        let mut moved = rows.clone();
        let r = moved.remove(99);
        moved.insert(
            0,
            Row {
                modified: 2e12,
                ..r
            },
        );
        let (second, _) = page_of(&moved, Some(&c));
        assert_eq!(second[0].id.as_deref(), Some("s100"));
    }

    #[test]
    fn a_range_reads_as_the_usage_page_and_arbor_stats_read_it() {
        // `until` a day is that day's start (exclusive), as `arbor stats --until`.
        let f = Filters {
            since: Some("2026-01-01".into()),
            until: Some("2026-01-02".into()),
            ..Filters::default()
        };
        let (s, u) = f.range().expect("range");
        assert_eq!(s, Some(1_767_225_600_000.0));
        assert_eq!(u.expect("until") - s.expect("since"), 86_400_000.0);
        // A span back from now.
        let f = Filters {
            since: Some("7d".into()),
            ..Filters::default()
        };
        let now = arbor_store::ids::now_ms() as f64;
        let s = f.range().expect("range").0.expect("since");
        assert!((now - 7.0 * 86_400_000.0 - s).abs() < 60_000.0, "{s}");
        let bad = Filters {
            since: Some("yesterday".into()),
            ..Filters::default()
        };
        assert!(bad.range().is_err());
    }
}
