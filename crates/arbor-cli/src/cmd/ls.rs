//! `arbor ls`: the table and the JSON listing, from one list of rows so that both agree on
//! order and age.
use super::index::{
    age, home_short, human_size, open_catalog, refreshed_listing, sessions_roots,
    watcher_may_answer,
};
use crate::term::{self, Out, Paint, Term};
use anyhow::Result;
use arbor_core::Dialect;
use arbor_index::Listed;
use arbor_store::locate::{id_of_file, Locator, Scope};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `arbor ls`.
pub struct LsOpts<'a> {
    /// `--dir` / `--all`.
    pub scope: &'a crate::cli::ScopeOpts,
    /// `--long`.
    pub long: bool,
    /// `--limit` (`-n`): at most this many rows, the newest.
    pub limit: Option<usize>,
    /// `--json`.
    pub json: bool,
    /// `--all-text`.
    pub all_text: bool,
    /// `--omp` / `--pi`: one tool's rules for every directory.
    pub rules: Option<Dialect>,
    /// `--since`, `--tool`, `--grep`, `--sort`, `--reverse`.
    pub filter: Filter<'a>,
}

/// Which listed sessions are shown, and in what order.
pub struct Filter<'a> {
    /// `--since`: only rows whose `modified` is at or after this (ms since the epoch).
    pub since_ms: Option<f64>,
    /// `--agent` (`--tool`): only this agent's sessions.
    pub tool: Option<crate::cli::Tool>,
    /// `--grep`: only rows whose title or first message holds this, in any case.
    pub grep: Option<&'a str>,
    /// `--sort`.
    pub sort: crate::cli::LsSort,
    /// `--reverse`.
    pub reverse: bool,
}

impl Filter<'_> {
    /// Whether the rows are the listing as it is (what the watcher's prepared answers hold).
    fn is_none(&self) -> bool {
        self.since_ms.is_none()
            && self.tool.is_none()
            && self.grep.is_none()
            && self.sort == crate::cli::LsSort::Modified
            && !self.reverse
    }

    /// Keeps the rows the filters let through, in the order asked (stable: rows that compare
    /// equal keep the listing's order).
    fn apply<'a>(&self, rows: &mut Vec<Row<'a>>, by_file: &HashMap<&OsStr, &'a Listed>) {
        use crate::cli::LsSort;
        let needle = self.grep.map(str::to_lowercase);
        rows.retain(|r| {
            let f = r.facts(by_file);
            self.since_ms.is_none_or(|t| r.modified >= t)
                && self.tool.is_none_or(|t| t == f.tool)
                && needle.as_deref().is_none_or(|n| {
                    f.title.to_lowercase().contains(n) || f.first.to_lowercase().contains(n)
                })
        });
        let desc = |a: f64, b: f64| b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal);
        match self.sort {
            LsSort::Modified => {}
            LsSort::Created => rows.sort_by(|a, b| {
                desc(
                    a.facts(by_file).created.unwrap_or(f64::NEG_INFINITY),
                    b.facts(by_file).created.unwrap_or(f64::NEG_INFINITY),
                )
            }),
            LsSort::Size => rows.sort_by_key(|r| std::cmp::Reverse(r.facts(by_file).size)),
            LsSort::Name => rows.sort_by_cached_key(|r| r.facts(by_file).title.to_lowercase()),
        }
        if self.reverse {
            rows.reverse();
        }
    }
}

/// What the filters and orders of `ls` look at in a row.
struct Facts<'a> {
    /// The agent the TOOL column names.
    tool: crate::cli::Tool,
    created: Option<f64>,
    size: u64,
    /// The title the table shows (name, omp title, else the first message).
    title: std::borrow::Cow<'a, str>,
    first: std::borrow::Cow<'a, str>,
}

/// One listed session, under the rules of its directory.
struct Row<'a> {
    /// The file.
    file: &'a Path,
    /// `modified` by the directory's rules (omp: the file's mtime; pi: the last activity).
    modified: f64,
    /// What the row shows.
    of: RowOf<'a>,
}

/// Whether a listed session is omp's in the TOOL column and for `--tool`: the directory
/// decides (omp reads a plain, pi-format session that lives in its directory; pi never does).
pub(crate) fn shown_as_omp(l: &Listed, in_omp_dir: bool) -> bool {
    l.shown_as_omp(in_omp_dir)
}

impl<'a> Row<'a> {
    /// The row of a pi session as the catalog lists it.
    fn pi(l: &'a Listed) -> Row<'a> {
        Row {
            file: &l.file,
            modified: l.info.modified_ms,
            of: RowOf::Pi(l),
        }
    }
}

impl<'a> Row<'a> {
    /// What `--since`, `--tool`, `--grep` and `--sort` look at: what the table shows (an omp
    /// directory's file the catalog lists is shown, and so filtered, by the catalog's row).
    fn facts(&self, by_file: &HashMap<&OsStr, &'a Listed>) -> Facts<'a> {
        use crate::cli::Tool;
        let in_omp_dir = matches!(self.of, RowOf::Omp(_));
        let of = match self.of {
            RowOf::Omp(_) => match by_file.get(self.file.as_os_str()) {
                Some(l) => RowOf::Pi(l),
                None => self.of,
            },
            RowOf::Pi(_) | RowOf::Foreign(..) => self.of,
        };
        match of {
            RowOf::Foreign(f, _) => Facts {
                tool: tool_of(f.agent),
                created: f.summary.created_ms.map(|t| t as f64),
                size: 0,
                title: std::borrow::Cow::Borrowed(f.display_title()),
                first: std::borrow::Cow::Borrowed(f.summary.first_message.as_str()),
            },
            RowOf::Pi(l) => Facts {
                tool: if shown_as_omp(l, in_omp_dir) {
                    Tool::Omp
                } else {
                    Tool::Pi
                },
                created: l.info.created_ms,
                size: l.size,
                title: l.display_title(),
                first: l.info.first_message.to_string_lossy(),
            },
            RowOf::Omp(i) => Facts {
                tool: Tool::Omp,
                created: i.created_ms,
                size: i.size,
                title: std::borrow::Cow::Borrowed(
                    i.title.as_deref().unwrap_or(i.first_message.as_str()),
                ),
                first: std::borrow::Cow::Borrowed(i.first_message.as_str()),
            },
        }
    }
}

/// Where a row's fields come from.
#[derive(Clone, Copy)]
enum RowOf<'a> {
    /// omp's own numbers, for a file pi's rules would not list.
    Omp(&'a arbor_store::omp_info::OmpSessionInfo),
    /// pi's listing, from the catalog.
    Pi(&'a Listed),
    /// Another agent's session, from the catalog, with its short id.
    Foreign(&'a arbor_index::ForeignRow, &'a str),
}

/// The TOOL column's value of another agent's session.
pub(crate) fn tool_of(a: arbor_agents::Agent) -> crate::cli::Tool {
    use crate::cli::Tool;
    match a {
        arbor_agents::Agent::Claude => Tool::Claude,
        arbor_agents::Agent::Codex => Tool::Codex,
        arbor_agents::Agent::Opencode => Tool::Opencode,
    }
}

/// The name the TOOL column shows.
pub(crate) fn tool_name(t: crate::cli::Tool) -> &'static str {
    use crate::cli::Tool;
    match t {
        Tool::Pi => "pi",
        Tool::Omp => "omp",
        Tool::Claude => "claude",
        Tool::Codex => "codex",
        Tool::Opencode => "opencode",
    }
}

/// `arbor ls`.
pub fn ls(o: &LsOpts<'_>, term: &Term, loc: &Locator, catalog: Option<&Path>) -> Result<ExitCode> {
    let scope = o.scope.scope();
    let dirs = loc.project_dirs(scope)?;
    let (omp_dirs, pi_dirs): (Vec<PathBuf>, Vec<PathBuf>) =
        dirs.iter().cloned().partition(|d| match o.rules {
            Some(r) => r == Dialect::Omp,
            None => arbor_store::locate::is_omp_dir(d),
        });
    // The catalog holds pi's listing, and what the table shows of every session.
    let mut cat = open_catalog(catalog)?;
    // Other agents' sessions in scope (their sources only `stat`ed unless they changed).
    let foreign = super::agents::in_scope(&mut cat, scope, o.filter.tool)?;
    let foreign_ids = super::agents::short_ids(&foreign.rows.iter().collect::<Vec<_>>());
    let (omp_dirs, pi_dirs) = if super::agents::wants_pi(o.filter.tool) {
        (omp_dirs, pi_dirs)
    } else {
        (Vec::new(), Vec::new())
    };
    // pi's directories alone, as JSON: a live watcher that vouches for them hands over the
    // whole document, prepared (the same bytes as below, made once for many commands).
    if o.json
        && foreign.rows.is_empty()
        && !o.all_text
        && o.limit.is_none()
        && omp_dirs.is_empty()
        && o.filter.is_none()
        && watcher_may_answer(&cat)
    {
        if let Some(doc) = arbor_index::watch::listing_json(cat.path(), &pi_dirs) {
            use std::io::Write;
            let mut out = crate::report::stdout();
            out.write_all(&doc)?;
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    // pi's directories alone, as the table: a live watcher that vouches for them and for
    // every sessions root hands over the table it made but for the ages (the same bytes
    // `make_table` makes below; its rows' files must be absolute paths for it to resolve them
    // as this command would).
    if !o.json
        && foreign.rows.is_empty()
        && o.limit.is_none()
        && omp_dirs.is_empty()
        && o.filter.is_none()
        && pi_dirs.iter().all(|d| d.is_absolute())
        && watcher_may_answer(&cat)
    {
        let made = table_opts(o, term, loc)
            .and_then(|opts| arbor_index::watch::listing_rendered(cat.path(), &opts, &pi_dirs))
            .and_then(|bytes| Table::decode(&bytes));
        if let Some(t) = made.filter(|t| !t.rows.is_empty()) {
            print_made(term, &t)?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let (mut listed, _) = refreshed_listing(&mut cat, &pi_dirs, o.all_text && o.json)?;
    let pi_count = listed.len();
    if !o.json && !omp_dirs.is_empty() {
        listed.extend(refreshed_listing(&mut cat, &omp_dirs, false)?.0);
    }

    // Each row's JSON is written as it is printed, into one scratch buffer (at 10,000
    // sessions a buffer per row and one for the whole list had the process touch some 30 MB
    // of fresh memory for 8.9 MB of output).
    let omp_infos = omp_listing(&omp_dirs, omp_dirs.len() > 1);
    let mut rows: Vec<Row<'_>> = omp_infos
        .iter()
        .map(|info| Row {
            file: &info.path,
            modified: info.modified_ms,
            of: RowOf::Omp(info),
        })
        .collect();
    let mut pi_rows: Vec<Row<'_>> = listed[..pi_count].iter().map(Row::pi).collect();
    // Other agents' sessions merge in by their last activity, as omp's rows do.
    let foreign_rows: Vec<Row<'_>> = foreign
        .rows
        .iter()
        .zip(&foreign_ids)
        .map(|(f, id)| Row {
            file: &f.source,
            modified: f.summary.modified_ms.map_or(f64::NAN, |t| t as f64),
            of: RowOf::Foreign(f, id),
        })
        .collect();
    if !foreign_rows.is_empty() {
        if rows.is_empty() && pi_rows.is_empty() {
            pi_rows = foreign_rows;
            arbor_core::js::v8_sort_slice_by_number(&mut pi_rows, |a, b| b.modified - a.modified);
        } else {
            rows.extend(foreign_rows);
        }
    }
    if rows.is_empty() {
        rows = pi_rows;
    } else if !pi_rows.is_empty() {
        // Both kinds: merged newest `modified` first (each row by its own rules; stable).
        rows.extend(pi_rows);
        // pi's comparator (`b.modified - a.modified`, NaN "equal") by V8's algorithm: a pi
        // row whose `modified` is an Invalid Date stays where pi's own sort leaves it.
        arbor_core::js::v8_sort_slice_by_number(&mut rows, |a, b| b.modified - a.modified);
    }

    // By the path's bytes (hashing a `Path` walks its components: at 10,000 rows that showed).
    let by_file: HashMap<&OsStr, &Listed> = if o.json {
        HashMap::new()
    } else {
        listed.iter().map(|l| (l.file.as_os_str(), l)).collect()
    };
    let before_filter = rows.len();
    o.filter.apply(&mut rows, &by_file);
    // `-n N`: the first N of what the filters kept, in their order.
    if let Some(n) = o.limit {
        rows.truncate(n);
    }
    if o.json {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, crate::report::stdout());
        arbor_index::prepared::write_json_list(&rows, &mut out, |r, json| -> Result<()> {
            match r.of {
                RowOf::Foreign(f, _) => foreign_json(f, json),
                RowOf::Omp(info) => info.write_json(json),
                RowOf::Pi(l) if o.all_text => {
                    let mut info = l.info.clone();
                    info.all_messages_text = cat.all_messages_text(&l.file)?;
                    info.write_json(json, true);
                }
                RowOf::Pi(l) => l.info.write_json(json, false),
            }
            Ok(())
        })?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() && before_filter > 0 {
        say_err!("arbor: no session matches ({before_filter} listed)");
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        no_sessions(scope, loc, "ls");
        return Ok(ExitCode::SUCCESS);
    }
    let ids = ShortIds::new(
        loc,
        rows.iter()
            .filter(|r| !matches!(r.of, RowOf::Foreign(..)))
            .map(|r| r.file),
    );
    print_made(
        term,
        &make_table(o.long, o.scope.all, term, &rows, &by_file, &ids),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// omp's `SessionManager.list()` of each directory (bounded reads, no catalog), pinned sessions
/// of omp's agent directory first within each directory.
fn omp_listing(dirs: &[PathBuf], merge: bool) -> Vec<arbor_store::omp_info::OmpSessionInfo> {
    let pins = arbor_store::omp_info::pinned_ids(&arbor_store::paths::agent_dir(Dialect::Omp));
    let mut out = Vec::new();
    for d in dirs {
        out.extend(arbor_store::omp_info::list_dir_omp(d, &pins));
    }
    if merge {
        arbor_store::omp_info::sort_omp(&mut out);
    }
    out
}

/// The cells of one table row.
struct Cells {
    id: String,
    tool: &'static str,
    /// What the age is of.
    modified: f64,
    msgs: String,
    size: String,
    branches: String,
    title: String,
    project: String,
    path: String,
}

/// The cells of another agent's session: its short id, the agent, no size or branch count
/// (a source may hold several sessions), the title or first message, its cwd.
fn foreign_cells(f: &arbor_index::ForeignRow, id: &str, modified: f64, long: bool) -> Cells {
    Cells {
        id: id.to_string(),
        tool: tool_name(tool_of(f.agent)),
        modified,
        msgs: f.summary.message_count.to_string(),
        size: "-".to_string(),
        branches: "-".to_string(),
        title: arbor_view::one_line(f.display_title(), 500),
        project: home_short(&f.summary.cwd),
        path: if long {
            home_short(&f.source.to_string_lossy())
        } else {
            String::new()
        },
    }
}

/// Another agent's session as a JSON object in pi's `SessionInfo` shape (`path` its source,
/// `agent` which agent, `parentSessionId` the parent's id for subagents and forks).
fn foreign_json(f: &arbor_index::ForeignRow, out: &mut Vec<u8>) {
    use serde_json::json;
    let iso = |ms: Option<i64>| ms.map(arbor_core::time::format_iso_ms).unwrap_or_default();
    let s = &f.summary;
    let mut v = json!({
        "path": f.source.to_string_lossy(),
        "id": s.id,
        "cwd": s.cwd,
        "created": iso(s.created_ms),
        "modified": iso(s.modified_ms),
        "messageCount": s.message_count,
        "firstMessage": s.first_message,
        "agent": f.agent.name(),
    });
    if let Some(t) = &s.title {
        v["name"] = json!(t);
    }
    if let Some(p) = &s.parent_id {
        v["parentSessionId"] = json!(p);
    }
    let _ = serde_json::to_writer(out, &v);
}

/// A table made but for its AGE column (the age is the command's: it changes with the
/// time): the header, then each row's text before the age and after it, with the `modified`
/// the age is of. What `arbor ls` prints is [`print_made`] of it, made here or by a live
/// watcher (which keeps it until something changes: [`render_for_watcher`]).
struct Table {
    /// The header's text, then each row's two parts, one after the other.
    text: String,
    /// Where the header ends.
    head_end: usize,
    /// Each row's `modified`, where its text before the age ends, and where its text ends.
    rows: Vec<(f64, usize, usize)>,
}

impl Table {
    /// The binary form handed over by the watcher ([`Table::decode`] reads it).
    fn encode(&self) -> Vec<u8> {
        use arbor_index::prepared::{put_bytes, put_f64, put_u64};
        let mut out = Vec::with_capacity(self.text.len() + self.rows.len() * 24 + 32);
        put_bytes(&mut out, self.text.as_bytes());
        put_u64(&mut out, self.head_end as u64);
        put_u64(&mut out, self.rows.len() as u64);
        for &(modified, pre, end) in &self.rows {
            put_f64(&mut out, modified);
            put_u64(&mut out, pre as u64);
            put_u64(&mut out, end as u64);
        }
        out
    }

    /// What [`Table::encode`] wrote, or `None` when `bytes` is not exactly such a table (cut
    /// short, bytes that are not UTF-8, parts out of order or not on a character's boundary).
    fn decode(bytes: &[u8]) -> Option<Table> {
        let mut r = arbor_index::prepared::Reader::new(bytes);
        let text = r.string()?;
        let at = |r: &mut arbor_index::prepared::Reader<'_>, from: usize| {
            let n = usize::try_from(r.u64()?).ok()?;
            (n >= from && text.is_char_boundary(n)).then_some(n)
        };
        let head_end = at(&mut r, 0)?;
        let n = r.u64()?;
        // Each row takes 24 bytes.
        if n > bytes.len() as u64 / 24 {
            return None;
        }
        let mut rows = Vec::with_capacity(n as usize);
        let mut last = head_end;
        for _ in 0..n {
            let modified = r.f64()?;
            let pre = at(&mut r, last)?;
            last = at(&mut r, pre)?;
            rows.push((modified, pre, last));
        }
        (r.is_empty() && last == text.len()).then_some(Table {
            text,
            head_end,
            rows,
        })
    }
}

/// Prints `t` with each row's age as of now.
fn print_made(term: &Term, t: &Table) -> Result<()> {
    let now = arbor_store::ids::now_ms() as f64;
    filled(term, t, now).print(term, false)?;
    Ok(())
}

/// `t` with each row's age as of `now` (ms since the epoch).
fn filled(term: &Term, t: &Table, now: f64) -> Out {
    let mut out = Out::new(term);
    out.reserve(t.text.len() + t.rows.len() * 16);
    let part = |a: usize, b: usize| t.text.get(a..b).unwrap_or_default();
    out.put_made(part(0, t.head_end));
    let mut last = t.head_end;
    for &(modified, pre, end) in &t.rows {
        out.put_made(part(last, pre));
        out.paint(Paint::Dim, &term::pad(&age(now - modified), 5));
        out.put_made(part(pre, end));
        last = end;
    }
    out
}

fn make_table(
    long: bool,
    all: bool,
    term: &Term,
    rows: &[Row<'_>],
    by_file: &HashMap<&OsStr, &Listed>,
    ids: &ShortIds,
) -> Table {
    let cells: Vec<Cells> = rows
        .iter()
        .map(|r| {
            let (l, omp_info) = match r.of {
                RowOf::Omp(i) => (by_file.get(r.file.as_os_str()).copied(), Some(i)),
                RowOf::Pi(l) => (Some(l), None),
                RowOf::Foreign(f, id) => return foreign_cells(f, id, r.modified, long),
            };
            let (msgs, size, branches, title, cwd, omp) = match (l, omp_info) {
                (Some(l), _) => (
                    l.info.message_count.to_string(),
                    human_size(l.size),
                    l.branches.to_string(),
                    l.display_title().into_owned(),
                    l.info.cwd.clone(),
                    shown_as_omp(l, omp_info.is_some()),
                ),
                (None, Some(i)) => (
                    i.message_count.to_string(),
                    human_size(i.size),
                    "-".to_string(),
                    i.title.clone().unwrap_or_else(|| i.first_message.clone()),
                    i.cwd.clone(),
                    true,
                ),
                (None, None) => Default::default(),
            };
            Cells {
                id: ids.of(r.file),
                tool: if omp { "omp" } else { "pi" },
                modified: r.modified,
                msgs,
                size,
                branches,
                title: arbor_view::one_line(&title, 500),
                project: home_short(&cwd),
                path: if long {
                    home_short(&r.file.to_string_lossy())
                } else {
                    String::new()
                },
            }
        })
        .collect();
    let idw = cells
        .iter()
        .map(|c| term::width(&c.id))
        .max()
        .unwrap_or(2)
        .max(2);
    let show_project = long || all;
    // TOOL is as wide as its widest name (4: pi and omp; `opencode` when it is listed).
    let toolw = cells.iter().map(|c| c.tool.len()).max().unwrap_or(4).max(4);
    // Fixed columns: ID TOOL AGE MSGS SIZE BR, then the title, then (all/long) the project.
    let fixed = idw + 1 + toolw + 1 + 5 + 1 + 6 + 1 + 6 + 1 + 3 + 2;
    let room = term.width.saturating_sub(fixed).max(20);
    let (title_w, proj_w) = if show_project {
        let proj_max = cells
            .iter()
            .map(|c| term::width(&c.project))
            .max()
            .unwrap_or(0);
        let proj = proj_max.min(room / 2).max(7);
        (room.saturating_sub(proj + 2).max(10), proj)
    } else {
        (room, 0)
    };
    let mut out = Out::new(term);
    // Each row's bytes, about (colours, and characters wider than a byte, are the margin).
    let per_row = fixed + title_w + proj_w + 64;
    let paths: usize = if long {
        cells.iter().map(|c| c.path.len() + idw + 2).sum()
    } else {
        0
    };
    out.reserve(cells.len() * per_row + paths + 256);
    let mut head = format!(
        "{} {} {} {} {} {}  {}",
        term::pad("ID", idw),
        term::pad("TOOL", toolw),
        term::pad("AGE", 5),
        term::pad_left("MSGS", 6),
        term::pad_left("SIZE", 6),
        term::pad_left("BR", 3),
        if show_project {
            term::pad("TITLE", title_w)
        } else {
            "TITLE".to_string()
        }
    );
    if show_project {
        head.push_str("  PROJECT");
    }
    out.paint(crate::term::Paint::Header, head.trim_end()).nl();
    let head_end = out.written();
    let mut made = Vec::with_capacity(cells.len());
    for c in &cells {
        out.paint(Paint::Id, &term::pad(&c.id, idw)).put(" ");
        out.put(&term::pad(c.tool, toolw)).put(" ");
        // The age goes here (`print_made`).
        let pre = out.written();
        out.put(" ");
        out.put(&term::pad_left(&c.msgs, 6)).put(" ");
        out.put(&term::pad_left(&c.size, 6)).put(" ");
        out.put(&term::pad_left(&c.branches, 3)).put("  ");
        if show_project {
            out.put(&term::pad(&c.title, title_w)).put("  ");
            out.paint(Paint::Dim, &term::fit(&c.project, proj_w));
        } else {
            out.put(&term::fit(&c.title, title_w));
        }
        out.nl();
        if long {
            out.put(&" ".repeat(idw + 1))
                .paint(Paint::Dim, &c.path)
                .nl();
        }
        made.push((c.modified, pre, out.written()));
    }
    Table {
        text: out.into_text(),
        head_end,
        rows: made,
    }
}

/// The first word of [`table_opts`]: a watcher started from a build whose table is laid out
/// otherwise must not hand its table to this one. Change it whenever [`make_table`]'s output or
/// [`Table::encode`] changes.
const TABLE_FORM: &str = "table2";

/// The options of a table a watcher may render for this command (see [`render_for_watcher`]):
/// its layout (width, colour, `--long`, `--all`) and what else the table depends on that the
/// watcher must share (the home directory, the sessions roots whose files the short ids are
/// unique among). `None` when one of them cannot be said in the request (a path that is not
/// UTF-8, or holds a separator).
fn table_opts(o: &LsOpts<'_>, term: &Term, loc: &Locator) -> Option<String> {
    let home = arbor_store::paths::home_dir();
    let home = home.to_str()?;
    let roots = roots_field(loc)?;
    if home.contains(['\x1e', '\x1f']) {
        return None;
    }
    Some(format!(
        "{TABLE_FORM}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{home}\x1f{roots}",
        term.width,
        u8::from(term.color),
        u8::from(o.long),
        u8::from(o.scope.all),
    ))
}

/// `loc`'s sessions roots ([`sessions_roots`]) as one field of [`table_opts`], or `None` when
/// one is not UTF-8 or holds a separator.
fn roots_field(loc: &Locator) -> Option<String> {
    let roots = sessions_roots(loc);
    let roots: Vec<&str> = roots.iter().map(|r| r.to_str()).collect::<Option<_>>()?;
    if roots.iter().any(|s| s.contains(['\x1e', '\x1f'])) {
        return None;
    }
    Some(roots.join("\x1e"))
}

/// The table of `listed` (pi's rows, in pi's order) for the options a command sent
/// ([`table_opts`]), made by a live watcher whose locator is `loc`, in the binary form the
/// command prints from; `None` when the options are not such, or the table would not be the
/// command's own: another home directory, other sessions roots, or a listed file named by a
/// relative path (its real path is the command's working directory's business).
pub fn render_for_watcher(loc: &Locator, opts: &str, listed: &[Listed]) -> Option<Vec<u8>> {
    let mut f = opts.split('\x1f');
    if f.next()? != TABLE_FORM {
        return None;
    }
    let width: usize = f.next()?.parse().ok()?;
    let flag = |s: Option<&str>| match s? {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    };
    let (color, long, all) = (flag(f.next())?, flag(f.next())?, flag(f.next())?);
    let home = f.next()?;
    let roots = f.next()?;
    if f.next().is_some() || arbor_store::paths::home_dir().to_str() != Some(home) {
        return None;
    }
    if roots_field(loc)? != roots || listed.iter().any(|l| !l.file.is_absolute()) {
        return None;
    }
    let term = Term {
        color,
        tty: false,
        width,
        sized: false,
        height: None,
    };
    let rows: Vec<Row<'_>> = listed.iter().map(Row::pi).collect();
    let ids = ShortIds::new(
        loc,
        rows.iter()
            .filter(|r| !matches!(r.of, RowOf::Foreign(..)))
            .map(|r| r.file),
    );
    Some(make_table(long, all, &term, &rows, &HashMap::new(), &ids).encode())
}

/// Says that `scope` holds no sessions, with where to look instead: what `ls`, `search` and
/// the other commands that take a scope say when they find nothing to read.
pub fn no_sessions(scope: Scope<'_>, loc: &Locator, command: &str) {
    match scope {
        Scope::Dir(d) => say_err!("arbor: no sessions in {}", d.display()),
        Scope::All => say_err!("arbor: no sessions under the agent directories"),
        Scope::Current => no_sessions_here(loc, command),
    }
}

/// Says there are no sessions for the current directory, and which parent directory has some
/// (`cd app/src; arbor ls` names `app`).
fn no_sessions_here(loc: &Locator, command: &str) {
    let Ok(cwd) = std::env::current_dir() else {
        say_err!("arbor: no sessions for this directory (try --all)");
        return;
    };
    for anc in cwd.ancestors().skip(1) {
        let dirs = loc.project_dirs_for_cwd(&anc.to_string_lossy());
        let n: usize = dirs
            .iter()
            .map(|d| arbor_store::discover::session_files(d).len())
            .sum();
        if n > 0 {
            say_err!(
                "arbor: no sessions for {}; its parent {} has {n} (arbor {command} --dir {}, or run arbor {command} there)",
                cwd.display(),
                anc.display(),
                dirs[0].display()
            );
            return;
        }
    }
    say_err!(
        "arbor: no sessions for {} (arbor {command} --all: every project)",
        cwd.display()
    );
}

/// The shortest unique prefix of each session's id, among every session the resolver can find
/// (the agent directories) and the listed ones: what `show`, `tree`, `context`, `fork` and
/// `rm` take. At least 6 characters (fewer only for a shorter id); the id is
/// [`id_of_file`]'s (the part of the file name after its last `_`, or the header's id for a
/// file whose name does not carry one), as the resolver reads it.
pub struct ShortIds {
    /// Every key the resolver matches a prefix against (ids and whole base names, lowercase),
    /// sorted, with the file each belongs to.
    keys: Vec<(String, usize)>,
    /// Each file's number and the id in its name, by its path as given to [`ShortIds::new`]
    /// (the path's bytes).
    given: HashMap<OsString, (usize, String)>,
}

const MIN_SHORT_ID: usize = 6;

impl ShortIds {
    /// Collects the keys of every session file under the agent directories and of `listed`.
    pub fn new<'a>(loc: &Locator, listed: impl Iterator<Item = &'a Path>) -> ShortIds {
        // Files by their real path (a session reached by two paths is one file).
        let mut files: HashMap<OsString, usize> = HashMap::new();
        let mut given: HashMap<OsString, (usize, String)> = HashMap::new();
        let mut real = RealPaths::default();
        let mut keys = Vec::new();
        let all = loc.all_session_files();
        let listed: Vec<PathBuf> = listed.map(Path::to_path_buf).collect();
        for (k, p) in all.iter().chain(listed.iter()).enumerate() {
            if given.contains_key(p.as_os_str()) {
                continue;
            }
            // A listed file is one of those regular files when its directory's real path
            // and its name are one of theirs (the listing may name the directory otherwise:
            // `a/../b`, a link to it); else it is resolved whole (pi lists symbolic links
            // too, which `all_session_files` leaves out).
            let canon = if k < all.len() {
                real.of_file(p)
            } else {
                Some(real.of_file(p))
                    .filter(|c| files.contains_key(c.as_os_str()))
                    .unwrap_or_else(|| canonical(p))
            };
            let id = id_of_file(p).unwrap_or_default();
            if let Some(&n) = files.get(canon.as_os_str()) {
                given.insert(p.as_os_str().to_owned(), (n, id));
                continue;
            }
            let n = files.len();
            files.insert(canon.into_os_string(), n);
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let lower = id.to_lowercase();
            given.insert(p.as_os_str().to_owned(), (n, id));
            if lower != stem {
                keys.push((stem, n));
            }
            keys.push((lower, n));
        }
        keys.sort();
        ShortIds { keys, given }
    }

    /// The short id of `file`. When its whole id is another file's too (files copied by
    /// hand keep their header's id), the id cannot pick it: the shortest unique prefix of its
    /// name's stem is shown instead, which the resolver matches as well.
    pub fn of(&self, file: &Path) -> String {
        let Some((me, id)) = self.given.get(file.as_os_str()) else {
            return id_of_file(file).unwrap_or_default();
        };
        if let Some(short) = self.shortest(*me, id) {
            return short;
        }
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.shortest(*me, &stem).unwrap_or_else(|| id.clone())
    }

    /// The shortest prefix of `key` (at least [`MIN_SHORT_ID`] characters) that no other
    /// file's key starts with; `None` when another file's key starts with the whole of it.
    fn shortest(&self, me: usize, key: &str) -> Option<String> {
        let lower = key.to_lowercase();
        let at = self
            .keys
            .partition_point(|(k, _)| k.as_str() < lower.as_str());
        let common = |k: &str| {
            k.chars()
                .zip(lower.chars())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let mut need = 0;
        // The longest common prefix with another file's key is found next to `lower` in
        // sorted order: walk outwards past this file's own keys.
        for dir in [-1isize, 1] {
            let mut i = at as isize + if dir < 0 { -1 } else { 0 };
            while i >= 0 && (i as usize) < self.keys.len() {
                let (k, f) = &self.keys[i as usize];
                if *f != me {
                    need = need.max(common(k) + 1);
                    break;
                }
                i += dir;
            }
        }
        let chars = key.chars().count();
        if need > chars {
            return None;
        }
        let len = need.max(MIN_SHORT_ID).min(chars);
        Some(key.chars().take(len).collect())
    }
}

/// Real paths (`canonicalize`) of session files known to be regular files (not symbolic
/// links: what [`Locator::all_session_files`] gives), each directory resolved once: at 10,000
/// sessions a `canonicalize` per file was 180,000 `readlink` calls, most of `arbor ls`'s time.
#[derive(Default)]
struct RealPaths {
    /// Each directory's real path (`None`: it could not be resolved).
    dirs: HashMap<PathBuf, Option<PathBuf>>,
    /// The directory asked for last, and its real path (files come directory by directory).
    last: Option<(PathBuf, Option<PathBuf>)>,
}

impl RealPaths {
    /// The real path of the regular file `p`: its directory's real path and its name; `p`
    /// itself when that cannot be resolved.
    fn of_file(&mut self, p: &Path) -> PathBuf {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            return canonical(p);
        };
        let hit = self
            .last
            .as_ref()
            .filter(|(d, _)| d.as_os_str() == dir.as_os_str());
        let real = match hit {
            Some((_, real)) => real,
            None => {
                let real = self
                    .dirs
                    .entry(dir.to_path_buf())
                    .or_insert_with(|| std::fs::canonicalize(dir).ok())
                    .clone();
                &self.last.insert((dir.to_path_buf(), real)).1
            }
        };
        match real {
            Some(real) => real.join(name),
            None => canonical(p),
        }
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(color: bool) -> Term {
        Term {
            color,
            tty: false,
            width: 100,
            sized: false,
            height: None,
        }
    }

    /// A table of two rows as `make_table` lays one out: the header, then each row's text
    /// before and after its age.
    fn two_rows() -> Table {
        let text = "ID AGE X\na1 | one\nb2 | two\n".to_string();
        Table {
            head_end: 9,
            rows: vec![(0.0, 12, 18), (90_000.0, 21, text.len())],
            text,
        }
    }

    #[test]
    fn the_ages_are_the_printing_time_s() {
        let t = two_rows();
        let day = 86_400_000.0;
        let a = filled(&term(false), &t, 120_000.0);
        assert_eq!(a.into_text(), "ID AGE X\na1 2m   | one\nb2 now  | two\n");
        // The same table printed a week later (what a watcher kept).
        let b = filled(&term(false), &t, 7.0 * day + 90_000.0);
        assert_eq!(b.into_text(), "ID AGE X\na1 1w   | one\nb2 1w   | two\n");
        // In colour the age is painted as the rest of the table paints it.
        let c = filled(&term(true), &t, 120_000.0).into_text();
        let mut want = Out::new(&term(true));
        want.paint(Paint::Dim, &term::pad("2m", 5));
        assert!(c.contains(&want.into_text()), "{c:?}");
    }

    #[test]
    fn a_table_comes_back_whole_or_not_at_all() {
        let t = two_rows();
        let bytes = t.encode();
        let back = Table::decode(&bytes).expect("decodes");
        assert_eq!(
            filled(&term(false), &back, 5.0).into_text(),
            filled(&term(false), &t, 5.0).into_text()
        );
        for n in 0..bytes.len() {
            assert!(Table::decode(&bytes[..n]).is_none(), "cut at {n}");
        }
        let mut more = bytes.clone();
        more.push(0);
        assert!(Table::decode(&more).is_none(), "a byte too many");
        // Parts out of order, past the end, or inside a character.
        for rows in [
            vec![(0.0, 18, 12), (0.0, 21, 27)],
            vec![(0.0, 12, 18), (0.0, 21, 99)],
            vec![(0.0, 8, 18), (0.0, 21, 27)],
        ] {
            let bad = Table { rows, ..two_rows() };
            assert!(Table::decode(&bad.encode()).is_none());
        }
        let wide = Table {
            text: "é|".to_string(),
            head_end: 1,
            rows: vec![],
        };
        assert!(
            Table::decode(&wide.encode()).is_none(),
            "inside a character"
        );
    }
}
