//! Other agents' sessions in the catalog (issue 26): Claude Code's and Codex's session files
//! and opencode's data directory, found under each agent's root, each source with its
//! fingerprint (`stat` of the file; Claude Code: with its subagents' files; opencode: its
//! database and the database's `-wal`, or every file of its older `storage/`), so that a
//! refresh reads again only the sources that changed. A source is read by arbor-agents'
//! lenient readers into the common model, and kept as one row per session and per subagent
//! ([`arbor_agents::listing::Summary`]).
//!
//! Read-only: the sources are opened for reading only (opencode's database is copied by its
//! reader and the copy read). A source that cannot be read, or from which no session could be
//! read (every line bad, a format from a future version), is kept as a problem, listed by
//! [`ForeignListing::problems`], and skipped: it never stops the listing.
use crate::catalog::Catalog;
use crate::error::{IndexError, SqlContext};
use crate::scan::Stat;
use arbor_agents::listing::Summary;
use arbor_agents::{claude, codex, Agent};
use rusqlite::{params, OptionalExtension};
use std::path::{Path, PathBuf};

/// Where each agent's sessions are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignRoots {
    /// Claude Code's `projects/` directory.
    pub claude: PathBuf,
    /// Codex's home (`sessions/` and `archived_sessions/` under it).
    pub codex: PathBuf,
    /// opencode's data directory (`opencode.db`, or `storage/`).
    pub opencode: PathBuf,
}

impl ForeignRoots {
    /// The agents' own defaults, with the environment overrides they honour
    /// (`$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, `$XDG_DATA_HOME`): arbor-agents' `sources`.
    pub fn from_env() -> ForeignRoots {
        use arbor_agents::sources::default_root;
        ForeignRoots {
            claude: default_root(Agent::Claude),
            codex: default_root(Agent::Codex),
            opencode: default_root(Agent::Opencode),
        }
    }
}

/// One listed session of another agent.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignRow {
    /// The agent.
    pub agent: Agent,
    /// The source it was read from (a file; opencode: its data directory).
    pub source: PathBuf,
    /// What the listing shows.
    pub summary: Summary,
}

impl ForeignRow {
    /// The title a table shows: the agent's title, else the first message.
    pub fn display_title(&self) -> &str {
        self.summary
            .title
            .as_deref()
            .unwrap_or(&self.summary.first_message)
    }

    /// The `arbor import` command that makes a pi session of this one (a Claude Code
    /// subagent is imported with its parent, by the parent's id): what the CLI's hints, the
    /// browser and `arbor mcp`'s refused writes tell the user to run.
    pub fn import_command(&self) -> String {
        let id = match (&self.summary.parent_id, self.agent) {
            (Some(p), Agent::Claude) => p,
            _ => &self.summary.id,
        };
        format!("arbor import {} {id}", self.agent)
    }
}

/// Keeps the rows of other agents' sessions that `scope` covers: every one under
/// [`Scope::All`], those whose cwd is the current directory ([`current_dir_spellings`]) under
/// [`Scope::Current`], none under [`Scope::Dir`] (a directory of pi's or omp's); and, when
/// `project` (a working directory) is given, only those whose cwd is it. The one rule of
/// `arbor ls`/`stats`, `arbor mcp` and `arbor serve`.
///
/// [`Scope::All`]: arbor_store::locate::Scope::All
/// [`Scope::Current`]: arbor_store::locate::Scope::Current
/// [`Scope::Dir`]: arbor_store::locate::Scope::Dir
pub fn keep_foreign_in_scope(
    rows: &mut Vec<ForeignRow>,
    scope: arbor_store::locate::Scope<'_>,
    project: Option<&str>,
) {
    use arbor_store::locate::Scope;
    match scope {
        Scope::Dir(_) => rows.clear(),
        Scope::All => {}
        Scope::Current => {
            let here = current_dir_spellings();
            rows.retain(|r| here.contains(&r.summary.cwd));
        }
    }
    let project = project
        .map(|p| p.trim().trim_end_matches('/'))
        .filter(|p| !p.is_empty());
    if let Some(p) = project {
        rows.retain(|r| r.summary.cwd.trim_end_matches('/') == p);
    }
}

/// The current directory as the agents record a cwd: as the process sees it, its real path,
/// and `$PWD` when that names the same directory. Another agent's session is in the current
/// project's scope when its cwd is one of these (`arbor ls`, the browser, `arbor mcp`).
pub fn current_dir_spellings() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(d) = std::env::current_dir() {
        out.push(d.to_string_lossy().into_owned());
        if let Ok(real) = std::fs::canonicalize(&d) {
            let real = real.to_string_lossy().into_owned();
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    if let Some(pwd) = std::env::var_os("PWD") {
        let pwd = pwd.to_string_lossy().into_owned();
        if !out.contains(&pwd)
            && std::fs::canonicalize(&pwd).ok()
                == std::env::current_dir()
                    .ok()
                    .and_then(|d| std::fs::canonicalize(d).ok())
        {
            out.push(pwd);
        }
    }
    out
}

/// A source that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignProblem {
    /// The agent.
    pub agent: Agent,
    /// The source.
    pub source: PathBuf,
    /// What was wrong.
    pub problem: String,
}

/// What [`Catalog::refresh_foreign`] found.
#[derive(Debug, Clone, Default)]
pub struct ForeignListing {
    /// The sessions, sources in path order, each source's sessions parents first.
    pub rows: Vec<ForeignRow>,
    /// Sources skipped.
    pub problems: Vec<ForeignProblem>,
    /// Sources read in this refresh (the others were unchanged).
    pub read: u64,
    /// Bytes of the sources read in this refresh.
    pub bytes_read: u64,
}

/// A source found on disk.
struct Found {
    agent: Agent,
    key: PathBuf,
    fp: String,
    bytes: u64,
}

/// The form of the rows a source gives (bump it when [`Summary`] or how it is made changes:
/// every source is then read again).
const ROW_FORM: &str = "rows4";

/// A source's fingerprint: the row form, then each file's name and `stat`.
fn fp_of(stats: &[(PathBuf, Stat)]) -> String {
    let mut s = format!("{ROW_FORM};");
    for (p, st) in stats {
        s.push_str(&format!(
            "{}:{}:{}:{}:{};",
            p.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            st.size,
            st.mtime_ns,
            st.ino,
            st.dev
        ));
    }
    s
}

/// `lstat` (a symbolic link's own stat: the readers pass links over).
fn lstat(p: &Path) -> Option<Stat> {
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| Stat::from_meta(&m))
}

/// The files a source is read from, with their `stat`: a Claude Code session file and its
/// subagents' transcripts (`<session id>/subagents/`), a Codex file, opencode's database and
/// its `-wal` (or every file of its older `storage/`). Empty when the source is not there.
fn source_stats(agent: Agent, key: &Path) -> Vec<(PathBuf, Stat)> {
    let mut stats = Vec::new();
    match agent {
        Agent::Claude => {
            let Some(st) = lstat(key) else { return stats };
            stats.push((key.to_path_buf(), st));
            if let Some(stem) = key.file_stem() {
                let dir = key.with_file_name(stem);
                for s in claude::subagent_files(&dir) {
                    if let Some(st) = lstat(&s) {
                        stats.push((s, st));
                    }
                }
            }
        }
        Agent::Codex => {
            if let Some(st) = lstat(key) {
                stats.push((key.to_path_buf(), st));
            }
        }
        Agent::Opencode => {
            let db = key.join("opencode.db");
            if db.is_file() {
                for p in [db.clone(), key.join("opencode.db-wal")] {
                    if let Some(st) = lstat(&p) {
                        stats.push((p, st));
                    }
                }
            } else if key.join("storage").is_dir() {
                walk(&key.join("storage"), &mut stats, 0);
            }
        }
    }
    stats
}

/// The fingerprint of `agent`'s source `source` (a file; opencode: its data directory) as a
/// refresh of the catalog takes it: every file it is read from, with its `stat`. Two equal
/// fingerprints: the source was not changed in between (what `arbor serve`'s live session
/// page watches). `None`: the source is not there.
pub fn foreign_fingerprint(agent: Agent, source: &Path) -> Option<String> {
    let stats = source_stats(agent, source);
    (!stats.is_empty()).then(|| fp_of(&stats))
}

/// Every source under `roots`, with its fingerprint.
fn discover(roots: &ForeignRoots, only: Option<Agent>) -> Vec<Found> {
    let want = |a: Agent| only.is_none_or(|o| o == a);
    let mut keys = Vec::new();
    if want(Agent::Claude) {
        keys.extend(
            claude::session_files(&roots.claude)
                .into_iter()
                .map(|f| (Agent::Claude, f)),
        );
    }
    if want(Agent::Codex) {
        keys.extend(
            codex::session_files(&roots.codex)
                .into_iter()
                .map(|f| (Agent::Codex, f)),
        );
    }
    if want(Agent::Opencode) {
        keys.push((Agent::Opencode, roots.opencode.clone()));
    }
    let mut out: Vec<Found> = keys
        .into_iter()
        .filter_map(|(agent, key)| {
            let stats = source_stats(agent, &key);
            if stats.is_empty() {
                return None;
            }
            Some(Found {
                agent,
                fp: fp_of(&stats),
                bytes: stats.iter().map(|(_, s)| s.size).sum(),
                key,
            })
        })
        .collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Every regular file under `dir` (opencode's `storage/`), with its stat; links not followed.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, Stat)>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&e.path(), out, depth + 1);
        } else if t.is_file() {
            if let Ok(m) = e.metadata() {
                out.push((e.path(), Stat::from_meta(&m)));
            }
        }
    }
}

/// Reads one source: its sessions' summaries, or why none could be read.
fn read_source(f: &Found) -> ReadResult {
    let sessions = match f.agent {
        // The listing's detail: the rows, spends and texts of the full read, without parsing
        // tool output and arguments.
        Agent::Claude => {
            vec![claude::read_with(&f.key, claude::Detail::Listing).map_err(|e| e.to_string())?]
        }
        Agent::Codex => vec![
            codex::read_with(&f.key, arbor_agents::model::Detail::Listing)
                .map_err(|e| e.to_string())?,
        ],
        Agent::Opencode => {
            let store = arbor_agents::opencode::Store::load(&f.key).map_err(|e| e.to_string())?;
            let mut v = Vec::new();
            for r in store.sessions.iter().filter(|r| r.parent_id.is_none()) {
                v.push(store.read(&r.id).map_err(|e| e.to_string())?);
            }
            v
        }
    };
    let mut out = Vec::new();
    let mut bad = None;
    for s in &sessions {
        if s.nodes.is_empty() && !s.report.is_clean() {
            // Nothing could be read: a malformed file, or a format this arbor does not know.
            bad = Some(problem_of(s));
            continue;
        }
        out.extend(arbor_agents::listing::summaries(s));
    }
    match bad {
        Some(p) if out.is_empty() => Err(p),
        _ => Ok(out),
    }
}

/// What a session's report says, in one line.
fn problem_of(s: &arbor_agents::Session) -> String {
    let r = &s.report;
    let mut parts = Vec::new();
    if let Some((line, p)) = r.bad_lines.first() {
        parts.push(format!(
            "{} unreadable line{} (line {line}: {p})",
            r.bad_lines.len(),
            if r.bad_lines.len() == 1 { "" } else { "s" }
        ));
    }
    if !r.unknown.is_empty() {
        let kinds: Vec<&str> = r.unknown.keys().map(String::as_str).take(3).collect();
        parts.push(format!(
            "record types this arbor does not know ({}; a newer {} version?)",
            kinds.join(", "),
            s.agent
        ));
    }
    format!("no session could be read: {}", parts.join("; "))
}

const ROW_COLS: &str = "source, n, agent, id, cwd, title, created_ms, modified_ms, message_count, \
    first_message, parent_id, models, tok_input, tok_output, tok_cache_read, tok_cache_write, \
    cost_recorded, cost_estimated, unpriced, problems, buckets";

/// One stored row of `foreign_sessions` selected as [`ROW_COLS`]: its agent's name, its source
/// and its summary (without texts). The one reading of a stored row, for the listing and the
/// search.
fn stored_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, PathBuf, Summary)> {
    let agent: String = r.get(2)?;
    let u = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
    let models: String = r.get(11)?;
    Ok((
        agent,
        PathBuf::from(r.get::<_, String>(0)?),
        Summary {
            id: r.get(3)?,
            cwd: r.get(4)?,
            title: r.get(5)?,
            created_ms: r.get(6)?,
            modified_ms: r.get(7)?,
            message_count: u(8)?,
            first_message: r.get(9)?,
            parent_id: r.get(10)?,
            models: models
                .split('\n')
                .filter(|m| !m.is_empty())
                .map(str::to_string)
                .collect(),
            tokens: [u(12)?, u(13)?, u(14)?, u(15)?],
            cost_recorded: r.get(16)?,
            cost_estimated: r.get(17)?,
            unpriced: u(18)?,
            problems: u(19)?,
            buckets: arbor_store::usage::decode_buckets(&r.get::<_, Vec<u8>>(20)?)
                .unwrap_or_default(),
            texts: Vec::new(),
        },
    ))
}

impl Catalog {
    /// Other agents' sessions (Claude Code, Codex, opencode) a reader of `scope` serves,
    /// refreshed ([`Catalog::refresh_foreign`]: only changed sources are read, never
    /// written): every one under [`Scope::All`], the current directory's under
    /// [`Scope::Current`] (matched by cwd as `arbor ls` matches them,
    /// [`current_dir_spellings`]), none under [`Scope::Dir`] (a directory of pi's or omp's);
    /// only `only`'s when given, only `project`'s (a working directory) when given: the rule
    /// of [`keep_foreign_in_scope`]. What `arbor mcp`'s readers and `arbor serve`'s session
    /// page serve.
    ///
    /// [`Scope::All`]: arbor_store::locate::Scope::All
    /// [`Scope::Current`]: arbor_store::locate::Scope::Current
    /// [`Scope::Dir`]: arbor_store::locate::Scope::Dir
    ///
    /// # Errors
    /// The catalog could not be read or written.
    pub fn foreign_in_scope(
        &mut self,
        scope: arbor_store::locate::Scope<'_>,
        only: Option<Agent>,
        project: Option<&str>,
    ) -> Result<Vec<ForeignRow>, IndexError> {
        if matches!(scope, arbor_store::locate::Scope::Dir(_)) {
            return Ok(Vec::new());
        }
        let mut rows = self.refresh_foreign(&ForeignRoots::from_env(), only)?.rows;
        keep_foreign_in_scope(&mut rows, scope, project);
        Ok(rows)
    }

    /// Brings the catalog's rows of other agents' sessions up to date with what is under
    /// `roots` (only `only`'s when given) and returns them: a source whose fingerprint is the
    /// one stored is not read again; a changed or new one is read (on worker threads), a gone
    /// one dropped. Sources are only read, never written.
    ///
    /// # Errors
    /// The catalog's own errors; a source that cannot be read is a problem in the answer.
    pub fn refresh_foreign(
        &mut self,
        roots: &ForeignRoots,
        only: Option<Agent>,
    ) -> Result<ForeignListing, IndexError> {
        self.refresh_foreign_with(roots, only, &mut |_, _| {})
    }

    /// [`Catalog::refresh_foreign`], telling `reading` how many sources it is about to read
    /// and their bytes before it reads them (nothing when none changed): a first refresh of a
    /// large history takes seconds, and a command can say so.
    ///
    /// # Errors
    /// As [`Catalog::refresh_foreign`].
    pub fn refresh_foreign_with(
        &mut self,
        roots: &ForeignRoots,
        only: Option<Agent>,
        reading: &mut dyn FnMut(usize, u64),
    ) -> Result<ForeignListing, IndexError> {
        let found = discover(roots, only);
        let path = self.path.clone();
        // The stored fingerprints, of the agents looked at.
        let mut stored: std::collections::HashMap<String, String> = Default::default();
        {
            let mut st = self
                .conn
                .prepare("SELECT key, agent, fp FROM foreign_sources")
                .db(&path)?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })
                .db(&path)?;
            for r in rows {
                let (k, a, fp) = r.db(&path)?;
                if only.is_none_or(|o| o.name() == a) {
                    stored.insert(k, fp);
                }
            }
        }
        let key_of = |p: &Path| p.to_string_lossy().into_owned();
        let todo: Vec<&Found> = found
            .iter()
            .filter(|f| stored.get(&key_of(&f.key)) != Some(&f.fp))
            .collect();
        if !todo.is_empty() {
            reading(todo.len(), todo.iter().map(|f| f.bytes).sum());
        }
        let tx = self.conn.transaction().db(&path)?;
        let present: std::collections::HashSet<String> =
            found.iter().map(|f| key_of(&f.key)).collect();
        for gone in stored.keys().filter(|k| !present.contains(*k)) {
            tx.execute("DELETE FROM foreign_sessions WHERE source=?1", [gone])
                .db(&path)?;
            drop_docs(&tx, gone, &path)?;
            tx.execute("DELETE FROM foreign_sources WHERE key=?1", [gone])
                .db(&path)?;
        }
        let mut bytes_read = 0;
        // Each source written as soon as it and those before it are read (in `todo`'s order):
        // the writes overlap the reading, and only the few sources read ahead are in memory.
        read_each(&todo, |i, got| {
            let f = todo[i];
            bytes_read += f.bytes;
            write_source(&tx, &path, &key_of(&f.key), f, got)
        })?;
        tx.commit().db(&path)?;
        let mut out = self.foreign_as_stored(only)?;
        out.read = todo.len() as u64;
        out.bytes_read = bytes_read;
        Ok(out)
    }

    /// The catalog's rows of other agents' sessions (only `only`'s when given), as the last
    /// refresh left them.
    ///
    /// # Errors
    /// The catalog's own errors.
    pub fn foreign_as_stored(&self, only: Option<Agent>) -> Result<ForeignListing, IndexError> {
        let path = &self.path;
        let mut out = ForeignListing::default();
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {ROW_COLS} FROM foreign_sessions ORDER BY source, n"
            ))
            .db(path)?;
        let rows = st.query_map([], stored_row).db(path)?;
        for r in rows {
            let (agent, source, summary) = r.db(path)?;
            let Some(agent) = Agent::from_name(&agent) else {
                continue;
            };
            if only.is_none_or(|o| o == agent) {
                out.rows.push(ForeignRow {
                    agent,
                    source,
                    summary,
                });
            }
        }
        let mut st = self
            .conn
            .prepare("SELECT key, agent, problem FROM foreign_sources WHERE problem IS NOT NULL ORDER BY key")
            .db(path)?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .db(path)?;
        for r in rows {
            let (key, agent, problem) = r.db(path)?;
            if let Some(agent) = Agent::from_name(&agent).filter(|a| only.is_none_or(|o| o == *a)) {
                out.problems.push(ForeignProblem {
                    agent,
                    source: PathBuf::from(key),
                    problem,
                });
            }
        }
        Ok(out)
    }

    /// Whether the catalog holds a row of `agent`'s source `key` (tests, diagnostics).
    #[doc(hidden)]
    pub fn foreign_fp(&self, key: &Path) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row(
                "SELECT fp FROM foreign_sources WHERE key=?1",
                [key.to_string_lossy()],
                |r| r.get(0),
            )
            .optional()
            .db(&self.path)
    }
}

/// Drops the texts of the source `key` from the text index and their rows. A source with no
/// texts stored (a new one: every source of a first refresh) is not handed to the text index
/// at all: FTS5 writes its pending terms to disk at the savepoint of each statement that
/// writes it with `INSERT … SELECT`, so a delete of nothing made one small segment per source
/// (and their merging: some 6% of a cold refresh's CPU time).
fn drop_docs(tx: &rusqlite::Transaction<'_>, key: &str, path: &Path) -> Result<(), IndexError> {
    let stored = tx
        .query_row(
            "SELECT 1 FROM foreign_docs WHERE source=?1 LIMIT 1",
            [key],
            |_| Ok(()),
        )
        .optional()
        .db(path)?
        .is_some();
    if !stored {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO foreign_fts(foreign_fts, rowid, text) SELECT 'delete', id, text FROM foreign_docs WHERE source=?1",
        [key],
    )
    .db(path)?;
    tx.execute("DELETE FROM foreign_docs WHERE source=?1", [key])
        .db(path)?;
    Ok(())
}

/// The catalog's kind of a text of another agent's session.
fn kind_of(k: arbor_agents::listing::TextKind) -> crate::text::Kind {
    use crate::text::Kind;
    use arbor_agents::listing::TextKind;
    match k {
        TextKind::User => Kind::User,
        TextKind::Assistant => Kind::Assistant,
        TextKind::Compaction => Kind::Compaction,
        TextKind::Title => Kind::Name,
    }
}

/// One hit in another agent's session.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignHit {
    /// The session's row (its source, agent and summary).
    pub row: ForeignRow,
    /// The node's key (empty: the title).
    pub node: String,
    /// What kind of text matched.
    pub kind: crate::text::Kind,
    /// The node's time (ms).
    pub ts_ms: Option<i64>,
    /// On the path to the session's last node.
    pub on_path: bool,
    /// The text around the match, matched words between `marks`.
    pub snippet: String,
    /// FTS5's `bm25()`: lower is better.
    pub rank: f64,
}

impl ForeignHit {
    /// The hit as a search of pi's sessions gives it (its session named by the agent's id
    /// and title; no entry for a hit in the title): the one conversion the CLI, the MCP
    /// server and `arbor serve` use to show other agents' hits beside pi's.
    pub fn into_hit(self) -> crate::search::Hit {
        crate::search::Hit {
            session_name: Some(self.row.display_title().to_string()),
            path: self.row.source,
            session_id: Some(self.row.summary.id),
            entry_id: (!self.node.is_empty()).then_some(self.node),
            kind: self.kind,
            timestamp: self.ts_ms.map(arbor_core::time::format_iso_ms),
            on_current_branch: self.on_path,
            snippet: self.snippet,
            rank: self.rank,
            seq: 0,
        }
    }
}

/// Orders hits of pi's sessions and other agents' by one relevance (BM25, lower first; a
/// stable sort: equal ranks keep their order).
pub fn by_rank(hits: &mut [crate::search::Hit]) {
    hits.sort_by(|a, b| {
        a.rank
            .partial_cmp(&b.rank)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}

impl Catalog {
    /// Searches the texts of other agents' sessions (every word of `query`, FTS5 syntax as
    /// [`crate::SearchQuery`] reads free text), only in the sessions `keep` lets through, of
    /// `kinds` when given, at or after `since_ms`, best first, at most `limit`.
    ///
    /// # Errors
    /// The catalog's own errors; a query FTS5 refuses.
    pub fn search_foreign(
        &self,
        query: &str,
        kinds: Option<&[crate::text::Kind]>,
        since_ms: Option<f64>,
        limit: usize,
        marks: &(String, String),
        keep: &dyn Fn(&ForeignRow) -> bool,
    ) -> Result<Vec<ForeignHit>, IndexError> {
        let q = crate::search::words_query(query);
        if q.is_empty() {
            return Err(IndexError::Query("empty query".into()));
        }
        let path = &self.path;
        // The text index first: which texts match, best first (no snippet yet: most matches
        // may be filtered out below).
        let mut st = self
            .conn
            .prepare(
                "SELECT d.id, d.source, d.n, d.node, d.kind, d.ts_ms, d.on_path, bm25(foreign_fts) \
                 FROM foreign_fts JOIN foreign_docs d ON d.id = foreign_fts.rowid \
                 WHERE foreign_fts MATCH ?1 ORDER BY bm25(foreign_fts)",
            )
            .db(path)?;
        let found = st
            .query_map(params![q], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<i64>>(5)?,
                    r.get::<_, bool>(6)?,
                    r.get::<_, f64>(7)?,
                ))
            })
            .map_err(|e| IndexError::Query(e.to_string()))?;
        // Then the rows of the sessions hit, each read once, by its key.
        let mut row_st = self
            .conn
            .prepare(&format!(
                "SELECT {ROW_COLS} FROM foreign_sessions WHERE source=?1 AND n=?2"
            ))
            .db(path)?;
        let mut rows: std::collections::HashMap<(String, i64), Option<ForeignRow>> =
            Default::default();
        let mut kept = Vec::new();
        let mut kept_docs = Vec::new();
        for f in found {
            let (doc, source, n, node, kind, ts_ms, on_path, rank) =
                f.map_err(|e| IndexError::Query(e.to_string()))?;
            let Some(kind) = crate::text::Kind::from_code(kind) else {
                continue;
            };
            if kinds.is_some_and(|ks| !ks.contains(&kind)) && kind != crate::text::Kind::Name {
                continue;
            }
            if since_ms.is_some_and(|s| ts_ms.is_none_or(|t| (t as f64) < s)) {
                continue;
            }
            let key = (source, n);
            if !rows.contains_key(&key) {
                let row = row_st
                    .query_row(params![key.0, key.1], stored_row)
                    .optional()
                    .db(path)?
                    .and_then(|(agent, source, summary)| {
                        Some(ForeignRow {
                            agent: Agent::from_name(&agent)?,
                            source,
                            summary,
                        })
                    });
                rows.insert(key.clone(), row);
            }
            let Some(Some(row)) = rows.get(&key) else {
                continue;
            };
            if !keep(row) {
                continue;
            }
            kept.push(ForeignHit {
                row: row.clone(),
                node,
                kind,
                ts_ms,
                on_path,
                snippet: String::new(),
                rank,
            });
            kept_docs.push(doc);
            if kept.len() >= limit {
                break;
            }
        }
        // The snippets of the hits kept only.
        let mut snip = self
            .conn
            .prepare(
                "SELECT snippet(foreign_fts, 0, ?2, ?3, '…', 16) FROM foreign_fts \
                 WHERE foreign_fts MATCH ?1 AND rowid = ?4",
            )
            .db(path)?;
        for (hit, doc) in kept.iter_mut().zip(&kept_docs) {
            hit.snippet = snip
                .query_row(params![q, marks.0, marks.1, doc], |r| r.get(0))
                .map_err(|e| IndexError::Query(e.to_string()))?;
        }
        let out = kept;
        Ok(out)
    }
}

/// What reading one source gives: its sessions' summaries, or why none could be read.
type ReadResult = Result<Vec<Summary>, String>;

/// Writes one source read (`got`) into the catalog under `key`, replacing what it had: its
/// row in `foreign_sources` (with its problem), its sessions' rows and their texts.
fn write_source(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    key: &str,
    f: &Found,
    got: ReadResult,
) -> Result<(), IndexError> {
    tx.execute("DELETE FROM foreign_sessions WHERE source=?1", [key])
        .db(path)?;
    drop_docs(tx, key, path)?;
    let problem = got.as_ref().err().cloned();
    tx.execute(
        "INSERT OR REPLACE INTO foreign_sources(key, agent, fp, problem) VALUES (?1, ?2, ?3, ?4)",
        params![key, f.agent.name(), f.fp, problem],
    )
    .db(path)?;
    let Ok(sums) = got else { return Ok(()) };
    let mut ins = tx
        .prepare_cached(&format!(
            "INSERT INTO foreign_sessions({ROW_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)"
        ))
        .db(path)?;
    for (n, s) in sums.iter().enumerate() {
        let t = |i: usize| s.tokens[i] as i64;
        ins.execute(params![
            key,
            n as i64,
            f.agent.name(),
            s.id,
            s.cwd,
            s.title,
            s.created_ms,
            s.modified_ms,
            s.message_count as i64,
            s.first_message,
            s.parent_id,
            s.models.join("\n"),
            t(0),
            t(1),
            t(2),
            t(3),
            s.cost_recorded,
            s.cost_estimated,
            s.unpriced as i64,
            s.problems as i64,
            arbor_store::usage::encode_buckets(&s.buckets),
        ])
        .db(path)?;
        let mut doc = tx
            .prepare_cached(
                "INSERT INTO foreign_docs(source, n, node, kind, ts_ms, on_path, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .db(path)?;
        let mut fts = tx
            .prepare_cached("INSERT INTO foreign_fts(rowid, text) VALUES (?1, ?2)")
            .db(path)?;
        for t in &s.texts {
            doc.execute(params![
                key,
                n as i64,
                t.node,
                kind_of(t.kind).code(),
                (t.ts_ms > 0).then_some(t.ts_ms),
                t.on_path,
                t.text
            ])
            .db(path)?;
            fts.execute(params![tx.last_insert_rowid(), t.text])
                .db(path)?;
        }
    }
    Ok(())
}

/// How many sources each reading thread may read ahead of the writer.
const READ_AHEAD: usize = 4;

/// Reads `todo` on worker threads (as many as the machine has cores, at most 8) and hands
/// each result to `write` on this thread, in `todo`'s order, as soon as it and those before
/// it are read: the writing overlaps the reading, and at most about [`READ_AHEAD`] sources per
/// thread wait in memory (the catalog's refresh held every source's texts before it wrote the
/// first: the peak memory grew with the sources). The first error of `write` stops the
/// reading and is returned.
fn read_each(
    todo: &[&Found],
    mut write: impl FnMut(usize, ReadResult) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(todo.len().max(1));
    if threads <= 1 {
        for (i, f) in todo.iter().enumerate() {
            write(i, read_source(f))?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (send, recv) = std::sync::mpsc::sync_channel::<(usize, ReadResult)>(threads * READ_AHEAD);
    std::thread::scope(|s| {
        for _ in 0..threads {
            let send = send.clone();
            let (next, stop) = (&next, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = todo.get(i) else { break };
                    if send.send((i, read_source(f))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        // Results that came before their turn.
        let mut early: std::collections::BTreeMap<usize, ReadResult> = Default::default();
        let mut turn = 0usize;
        let mut out = Ok(());
        for (i, r) in recv.iter() {
            early.insert(i, r);
            while let Some(r) = early.remove(&turn) {
                if let Err(e) = write(turn, r) {
                    out = Err(e);
                    break;
                }
                turn += 1;
            }
            if out.is_err() {
                break;
            }
        }
        if out.is_err() {
            stop.store(true, Ordering::Relaxed);
            drop(recv);
            return out;
        }
        // A reading thread that failed (a panic) left its source unread.
        for i in turn..todo.len() {
            write(i, Err("the reading thread failed".to_string()))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(n: usize) -> Vec<Found> {
        (0..n)
            .map(|i| Found {
                agent: Agent::Claude,
                key: PathBuf::from(format!("/nonexistent/arbor-read-each/{i:04}.jsonl")),
                fp: String::new(),
                bytes: 1,
            })
            .collect()
    }

    /// The search as it was before it looked up only its hits' rows (every stored row loaded,
    /// every match's snippet made): the oracle of `search_looks_up_only_its_hits_rows_same_answers`.
    fn search_loading_every_row(
        cat: &Catalog,
        query: &str,
        kinds: Option<&[crate::text::Kind]>,
        since_ms: Option<f64>,
        limit: usize,
        marks: &(String, String),
        keep: &dyn Fn(&ForeignRow) -> bool,
    ) -> Vec<ForeignHit> {
        let q = crate::search::words_query(query);
        let rows = cat.foreign_as_stored(None).unwrap().rows;
        let mut by_key: std::collections::HashMap<(String, i64), &ForeignRow> = Default::default();
        let mut counters: std::collections::HashMap<String, i64> = Default::default();
        for r in &rows {
            let src = r.source.to_string_lossy().into_owned();
            let n = counters.entry(src.clone()).or_insert(0);
            by_key.insert((src, *n), r);
            *n += 1;
        }
        let mut st = cat
            .conn
            .prepare(
                "SELECT d.source, d.n, d.node, d.kind, d.ts_ms, d.on_path, snippet(foreign_fts, 0, ?2, ?3, '…', 16), bm25(foreign_fts) FROM foreign_fts JOIN foreign_docs d ON d.id = foreign_fts.rowid WHERE foreign_fts MATCH ?1 ORDER BY bm25(foreign_fts)",
            )
            .unwrap();
        let found = st
            .query_map(params![q, marks.0, marks.1], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, bool>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, f64>(7)?,
                ))
            })
            .unwrap();
        let mut out = Vec::new();
        for f in found {
            let (source, n, node, kind, ts_ms, on_path, snippet, rank) = f.unwrap();
            let Some(row) = by_key.get(&(source, n)) else {
                continue;
            };
            let kind = crate::text::Kind::from_code(kind).unwrap();
            if kinds.is_some_and(|ks| !ks.contains(&kind)) && kind != crate::text::Kind::Name {
                continue;
            }
            if since_ms.is_some_and(|s| ts_ms.is_none_or(|t| (t as f64) < s)) {
                continue;
            }
            if !keep(row) {
                continue;
            }
            out.push(ForeignHit {
                row: (*row).clone(),
                node,
                kind,
                ts_ms,
                on_path,
                snippet,
                rank,
            });
            if out.len() >= limit {
                break;
            }
        }
        out
    }

    /// A Claude Code session of `turns` exchanges with words of a small vocabulary (so that
    /// many texts match, many equally), its title, under cwd `/w/{cwd}`.
    fn claude_session(dir: &Path, i: usize, cwd: &str, turns: usize) {
        const WORDS: [&str; 8] = [
            "merge", "cache", "tree", "module", "walrus", "parser", "branch", "index",
        ];
        let sid = format!("{i:08}-0000-4000-8000-000000000000");
        let mut s = format!(
            "{{\"type\":\"summary\",\"summary\":\"the {} work\",\"leafUuid\":\"a{}\"}}\n",
            WORDS[i % 8],
            turns - 1
        );
        let mut parent = "null".to_string();
        for t in 0..turns {
            let w = |k: usize| WORDS[(i * 7 + t * 3 + k) % 8];
            let ts = format!("2026-11-{:02}T10:{:02}:00.000Z", 1 + i % 20, t % 60);
            s.push_str(&format!(
                "{{\"parentUuid\":{parent},\"isSidechain\":false,\"cwd\":\"/w/{cwd}\",\"sessionId\":\"{sid}\",\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"fix the {} and the {}\"}},\"uuid\":\"u{t}\",\"timestamp\":\"{ts}\"}}\n",
                w(0),
                w(1)
            ));
            s.push_str(&format!(
                "{{\"parentUuid\":\"u{t}\",\"isSidechain\":false,\"cwd\":\"/w/{cwd}\",\"sessionId\":\"{sid}\",\"type\":\"assistant\",\"message\":{{\"model\":\"claude-sonnet-4-5\",\"id\":\"msg_{i}_{t}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"the {} {} is done\"}}],\"usage\":{{\"input_tokens\":3,\"output_tokens\":4}}}},\"uuid\":\"a{t}\",\"timestamp\":\"{ts}\"}}\n",
                w(2),
                w(3)
            ));
            parent = format!("\"a{t}\"");
        }
        std::fs::write(dir.join(format!("{sid}.jsonl")), s).unwrap();
    }

    /// A pi session (the catalog holds pi's texts beside the others').
    fn pi_session(dir: &Path, i: usize) {
        let mut s = format!("{{\"type\":\"session\",\"version\":3,\"id\":\"pi{i}\",\"timestamp\":\"2026-11-01T00:00:00.000Z\",\"cwd\":\"/w/a\"}}\n");
        s.push_str(&format!("{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":null,\"timestamp\":\"2026-11-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"merge the cache tree {i}\"}}}}\n"));
        std::fs::write(dir.join(format!("pi{i}.jsonl")), s).unwrap();
    }

    #[test]
    fn search_looks_up_only_its_hits_rows_same_answers() {
        let t = tempfile::tempdir().unwrap();
        let h = t.path();
        let proj = h.join("claude/projects/-w");
        std::fs::create_dir_all(&proj).unwrap();
        for i in 0..40 {
            claude_session(&proj, i, ["a", "b", "c"][i % 3], 1 + i % 5);
        }
        let pi = h.join("pi");
        std::fs::create_dir_all(&pi).unwrap();
        for i in 0..10 {
            pi_session(&pi, i);
        }
        let roots = ForeignRoots {
            claude: h.join("claude/projects"),
            codex: h.join("codex"),
            opencode: h.join("opencode"),
        };
        let mut cat = Catalog::open(&h.join("catalog.db")).unwrap();
        let opts = crate::RefreshOptions {
            texts: true,
            ..Default::default()
        };
        cat.refresh_dirs(std::slice::from_ref(&pi), opts, &mut |_| {})
            .unwrap();
        let listed = cat.refresh_foreign(&roots, None).unwrap();
        assert_eq!(listed.rows.len(), 40);
        let marks = ("[".to_string(), "]".to_string());
        let all = |_: &ForeignRow| true;
        let in_a = |r: &ForeignRow| r.summary.cwd == "/w/a";
        let none = |_: &ForeignRow| false;
        let keeps: [&dyn Fn(&ForeignRow) -> bool; 3] = [&all, &in_a, &none];
        let user = [crate::text::Kind::User];
        let assistant = [crate::text::Kind::Assistant];
        let kindss: [Option<&[crate::text::Kind]>; 3] = [None, Some(&user), Some(&assistant)];
        let since = arbor_core::time::parse_iso_ms("2026-11-10T00:00:00.000Z");
        let mut compared = 0;
        let mut nonempty = 0;
        for query in ["merge", "cache tree", "walrus", "work", "nothing", "the"] {
            for kinds in kindss {
                for since in [None, since] {
                    for limit in [1, 3, 1000] {
                        for keep in keeps {
                            let got = cat
                                .search_foreign(query, kinds, since, limit, &marks, keep)
                                .unwrap();
                            let want = search_loading_every_row(
                                &cat, query, kinds, since, limit, &marks, keep,
                            );
                            assert_eq!(got, want, "{query:?} {kinds:?} {since:?} {limit}");
                            compared += 1;
                            nonempty += usize::from(!got.is_empty());
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 6 * 3 * 2 * 3 * 3);
        assert!(nonempty > 100, "{nonempty}");
        // A hit's row and snippet are its own.
        let hits = cat
            .search_foreign("walrus", None, None, 1000, &marks, &all)
            .unwrap();
        assert!(hits.len() > 20);
        for hit in &hits {
            assert!(hit.snippet.contains("[walrus]"), "{}", hit.snippet);
            assert!(hit.row.summary.id.starts_with("000000"));
        }
    }

    #[test]
    fn a_source_read_again_leaves_none_of_its_old_texts() {
        // A new source's texts are written without a delete first (drop_docs skips the text
        // index when nothing is stored); a changed one's old texts must still go.
        let t = tempfile::tempdir().unwrap();
        let h = t.path();
        let proj = h.join("claude/projects/-w");
        std::fs::create_dir_all(&proj).unwrap();
        for i in 0..3 {
            claude_session(&proj, i, "a", 2);
        }
        let roots = ForeignRoots {
            claude: h.join("claude/projects"),
            codex: h.join("codex"),
            opencode: h.join("opencode"),
        };
        let mut cat = Catalog::open(&h.join("catalog.db")).unwrap();
        cat.refresh_foreign(&roots, None).unwrap();
        let marks = ("[".to_string(), "]".to_string());
        let count = |cat: &Catalog, q: &str| {
            cat.search_foreign(q, None, None, 1000, &marks, &|_| true)
                .unwrap()
                .len()
        };
        let before = count(&cat, "fix");
        assert!(before >= 6, "{before}");
        // Session 1 rewritten with other words: its old texts go, the others' stay.
        let f = proj.join("00000001-0000-4000-8000-000000000000.jsonl");
        let old = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, old.replace("fix the", "mend the")).unwrap();
        let r = cat.refresh_foreign(&roots, None).unwrap();
        assert_eq!(r.read, 1);
        assert_eq!(count(&cat, "fix"), before - 2);
        assert_eq!(count(&cat, "mend"), 2);
        cat.conn
            .execute(
                "INSERT INTO foreign_fts(foreign_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )
            .unwrap();
    }

    #[test]
    fn foreign_scope_keeps_all_the_current_directory_s_or_none_and_a_project_s() {
        let here = std::env::current_dir()
            .expect("cwd")
            .to_string_lossy()
            .into_owned();
        let row = |cwd: &str| ForeignRow {
            agent: Agent::Claude,
            source: PathBuf::from(format!("/s/{cwd}")),
            summary: arbor_agents::listing::Summary {
                cwd: cwd.to_string(),
                ..Default::default()
            },
        };
        let rows = vec![row(&here), row("/elsewhere"), row("/p/")];
        let cwds = |scope, project: Option<&str>| {
            let mut r = rows.clone();
            keep_foreign_in_scope(&mut r, scope, project);
            r.into_iter().map(|r| r.summary.cwd).collect::<Vec<_>>()
        };
        use arbor_store::locate::Scope;
        assert_eq!(cwds(Scope::All, None).len(), 3);
        assert_eq!(cwds(Scope::Current, None), [here]);
        assert!(cwds(Scope::Dir(Path::new("/x")), None).is_empty());
        assert_eq!(cwds(Scope::All, Some("/p")), ["/p/"]);
        assert_eq!(cwds(Scope::All, Some(" /p/ ")), ["/p/"]);
        assert!(cwds(Scope::Current, Some("/p")).is_empty());
        assert_eq!(
            cwds(Scope::All, Some("")).len(),
            3,
            "a blank project is none"
        );
    }

    #[test]
    fn read_each_writes_every_source_once_in_order() {
        let found = missing(40);
        let todo: Vec<&Found> = found.iter().collect();
        let mut seen = Vec::new();
        read_each(&todo, |i, got| {
            // Each result is its own source's (a missing file: an error naming it).
            let err = got.expect_err("a missing file is not read");
            assert!(err.contains(&format!("{i:04}.jsonl")), "{err}");
            seen.push(i);
            Ok(())
        })
        .expect("no write failed");
        assert_eq!(seen, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn read_each_stops_at_the_first_failed_write() {
        let found = missing(40);
        let todo: Vec<&Found> = found.iter().collect();
        let mut seen = Vec::new();
        let r = read_each(&todo, |i, _| {
            seen.push(i);
            if i == 5 {
                Err(IndexError::Query("disk full".into()))
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err(IndexError::Query(ref m)) if m == "disk full"));
        assert_eq!(seen, (0..=5).collect::<Vec<_>>());
    }

    #[test]
    fn a_sources_fingerprint_changes_with_any_of_its_files_and_is_the_refreshs() {
        let d = tempfile::tempdir().expect("tempdir");
        let f = d.path().join("s1.jsonl");
        assert_eq!(foreign_fingerprint(Agent::Claude, &f), None, "not there");
        std::fs::write(&f, "{}\n").expect("write");
        let one = foreign_fingerprint(Agent::Claude, &f).expect("there");
        // A subagent's transcript is part of the source: one written, one grown, change it.
        let sub = d.path().join("s1/subagents");
        std::fs::create_dir_all(&sub).expect("dirs");
        std::fs::write(sub.join("agent-a.jsonl"), "{}\n").expect("write");
        let two = foreign_fingerprint(Agent::Claude, &f).expect("there");
        assert_ne!(one, two);
        std::fs::write(sub.join("agent-a.jsonl"), "{}\n{}\n").expect("write");
        let three = foreign_fingerprint(Agent::Claude, &f).expect("there");
        assert_ne!(two, three);
        assert_eq!(foreign_fingerprint(Agent::Claude, &f), Some(three.clone()));
        // The one a refresh stores for the source.
        let roots = ForeignRoots {
            claude: d.path().join("none"),
            codex: d.path().join("none"),
            opencode: d.path().join("none"),
        };
        assert!(discover(&roots, None).is_empty());
        let projects = d.path().join("projects/-w");
        std::fs::create_dir_all(&projects).expect("dirs");
        let g = projects.join("s2.jsonl");
        std::fs::write(&g, "{}\n").expect("write");
        let roots = ForeignRoots {
            claude: d.path().join("projects"),
            ..roots
        };
        let found = discover(&roots, Some(Agent::Claude));
        assert_eq!(found.len(), 1);
        assert_eq!(
            Some(found[0].fp.clone()),
            foreign_fingerprint(Agent::Claude, &g)
        );
        // Codex: its file; opencode: its database (and `-wal`).
        assert!(foreign_fingerprint(Agent::Codex, &g).is_some());
        assert_eq!(foreign_fingerprint(Agent::Opencode, d.path()), None);
        std::fs::write(d.path().join("opencode.db"), "x").expect("write");
        let db = foreign_fingerprint(Agent::Opencode, d.path()).expect("there");
        std::fs::write(d.path().join("opencode.db-wal"), "y").expect("write");
        assert_ne!(foreign_fingerprint(Agent::Opencode, d.path()), Some(db));
    }
}
