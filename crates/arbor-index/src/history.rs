//! Prompt history in omp's `history.db` (`<agentDir>/history.db`), readable and writable by
//! omp 18 (`@oh-my-pi/pi-coding-agent` 18.2, `src/session/history-storage.ts`):
//!
//! * the same file, schema (`history` with unique prompts, the external-content `history_fts`
//!   FTS5 table and its insert trigger), pragmas (WAL, `synchronous=NORMAL`) and data version
//!   (`PRAGMA user_version = 1`; an older database gets omp's one-time rebuild: prompts
//!   normalized, the newest row kept per prompt, the FTS index rebuilt);
//! * the same write: prompts normalized (CRLF and CR to LF, trailing whitespace of every line
//!   removed, trimmed), empty ones ignored, an upsert where the latest submission wins
//!   (`created_at` in Unix seconds, `cwd`, `session_id`);
//! * the same reads: recent prompts by `created_at DESC, id DESC`; search by FTS5 prefix
//!   phrases of the query's words (split on anything that is not a letter or a digit,
//!   lowercased) merged with a case-insensitive substring match of every word; limits clamped
//!   to 0..=1000.
//!
//! Reading never changes the file: a database omp has not upgraded yet is read as it is.
//! A damaged database is reported, never replaced (omp sets it aside when it opens it).
use crate::error::{IndexError, SqlContext};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

/// omp's `HISTORY_DATA_VERSION`.
pub const HISTORY_DATA_VERSION: i64 = 1;

const NOW: &str = "CAST(strftime('%s','now') AS INTEGER)";

fn table_ddl() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS history (\n\tid INTEGER PRIMARY KEY AUTOINCREMENT,\n\tprompt TEXT NOT NULL UNIQUE,\n\t\
         created_at INTEGER NOT NULL DEFAULT ({NOW}),\n\tcwd TEXT,\n\tsession_id TEXT\n);\n\
         CREATE INDEX IF NOT EXISTS idx_history_created_at ON history(created_at DESC);\n"
    )
}

const FTS_DDL: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(prompt, content='history', content_rowid='id');\n\n\
CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN\n\tINSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);\nEND;\n";

/// One stored prompt (omp's `HistoryEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// Row id.
    pub id: i64,
    /// The normalized prompt.
    pub prompt: String,
    /// Unix seconds of the latest submission.
    pub created_at: i64,
    /// Working directory of the latest submission.
    pub cwd: Option<String>,
    /// Session of the latest submission.
    pub session_id: Option<String>,
}

impl HistoryEntry {
    /// `JSON.stringify` of omp's `HistoryEntry`: `{"id","prompt","created_at","cwd"?,"sessionId"?}`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        use arbor_core::json::write_str_escaped;
        out.extend_from_slice(format!("{{\"id\":{},\"prompt\":", self.id).as_bytes());
        write_str_escaped(&self.prompt, out);
        out.extend_from_slice(format!(",\"created_at\":{}", self.created_at).as_bytes());
        if let Some(c) = &self.cwd {
            out.extend_from_slice(b",\"cwd\":");
            write_str_escaped(c, out);
        }
        if let Some(s) = &self.session_id {
            out.extend_from_slice(b",\"sessionId\":");
            write_str_escaped(s, out);
        }
        out.push(b'}');
    }
}

/// omp's `normalizePrompt`: `\r\n` and `\r` to `\n`, whitespace before each `\n` removed,
/// then trimmed.
pub fn normalize_prompt(prompt: &str) -> String {
    let unified = prompt.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = unified.split('\n').collect();
    let last = lines.len() - 1;
    let mut s = String::with_capacity(unified.len());
    for (i, line) in lines.iter().enumerate() {
        if i < last {
            // `[^\S\n]+\n` → `\n`: whitespace right before each newline goes.
            s.push_str(line.trim_end_matches(arbor_core::js::is_whitespace));
            s.push('\n');
        } else {
            s.push_str(line);
        }
    }
    s.trim_matches(arbor_core::js::is_whitespace).to_string()
}

/// omp's `#tokenize`: lowercased, split on runs of characters that are neither letters nor
/// digits (`/[^\p{L}\p{N}]+/u`), empty tokens dropped.
pub fn tokenize(query: &str) -> Vec<String> {
    query
        .to_lowercase()
        .split(|c: char| !(c.is_alphabetic() || c.is_numeric()))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// omp's limit normalization: `min(max(0, floor(limit)), 1000)`, non-finite gives 0.
pub fn normalize_limit(limit: f64) -> usize {
    if !limit.is_finite() {
        return 0;
    }
    limit.floor().clamp(0.0, 1000.0) as usize
}

fn escape_like(t: &str) -> String {
    let mut s = String::with_capacity(t.len());
    for c in t.chars() {
        if matches!(c, '\\' | '%' | '_') {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// The prompt history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
    has_session_id: bool,
    has_table: bool,
}

/// `<agentDir>/history.db`.
pub fn history_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("history.db")
}

fn row_entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
    Ok(HistoryEntry {
        id: r.get(0)?,
        prompt: r.get(1)?,
        created_at: r.get(2)?,
        cwd: r.get(3)?,
        session_id: r.get(4)?,
    })
}

impl History {
    /// Opens (creating) `path` for writing as omp opens it: WAL, the schema, the one-time
    /// rebuild of an older database, the FTS index.
    pub fn open(path: &Path) -> Result<History, IndexError> {
        // A history.db arbor creates is private (0600, its directories 0700), as everything
        // arbor creates; an existing one (omp's) keeps its mode.
        crate::db_file::prepare_private(path)?;
        let conn = Connection::open(path).db(path)?;
        conn.busy_timeout(std::time::Duration::from_millis(5000))
            .db(path)?;
        let had_fts: bool = conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='history_fts'",
                [],
                |_| Ok(()),
            )
            .optional()
            .db(path)?
            .is_some();
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .db(path)?;
        conn.execute_batch("PRAGMA synchronous=NORMAL;").db(path)?;
        conn.execute_batch(&table_ddl()).db(path)?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
            has_session_id: true,
            has_table: true,
        };
        let rebuilt = h.rebuild_if_old()?;
        h.conn.execute_batch(FTS_DDL).db(path)?;
        if rebuilt || !had_fts {
            // omp logs and goes on when this fails.
            let _ = h
                .conn
                .execute_batch("INSERT INTO history_fts(history_fts) VALUES('rebuild')");
        }
        Ok(h)
    }

    /// Opens an existing database for reading only (`Ok(None)` when there is none). Works on
    /// databases omp has not upgraded yet (no `session_id` column).
    pub fn open_read_only(path: &Path) -> Result<Option<History>, IndexError> {
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .db(path)?;
        conn.busy_timeout(std::time::Duration::from_millis(5000))
            .db(path)?;
        let cols: Vec<String> = {
            let mut st = conn.prepare("PRAGMA table_info(history)").db(path)?;
            let v = st
                .query_map([], |r| r.get::<_, String>(1))
                .db(path)?
                .collect::<Result<Vec<_>, _>>()
                .db(path)?;
            v
        };
        let has_table = !cols.is_empty();
        let has_session_id = cols.iter().any(|c| c == "session_id");
        Ok(Some(History {
            conn,
            path: path.to_path_buf(),
            has_session_id,
            has_table,
        }))
    }

    /// omp's `#rebuildHistory`, gated by `PRAGMA user_version`.
    fn rebuild_if_old(&mut self) -> Result<bool, IndexError> {
        let path = self.path.clone();
        let v: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .db(&path)?;
        if v >= HISTORY_DATA_VERSION {
            return Ok(false);
        }
        let has_sid = {
            let mut st = self.conn.prepare("PRAGMA table_info(history)").db(&path)?;
            let cols = st
                .query_map([], |r| r.get::<_, String>(1))
                .db(&path)?
                .collect::<Result<Vec<_>, _>>()
                .db(&path)?;
            cols.iter().any(|c| c == "session_id")
        };
        let sel = if has_sid {
            "session_id"
        } else {
            "NULL AS session_id"
        };
        let rows: Vec<HistoryEntry> = {
            let mut st = self
                .conn
                .prepare(&format!(
                    "SELECT id, prompt, created_at, cwd, {sel} FROM history"
                ))
                .db(&path)?;
            let v = st
                .query_map([], row_entry)
                .db(&path)?
                .collect::<Result<Vec<_>, _>>()
                .db(&path)?;
            v
        };
        // The newest submission of each normalized prompt wins, in first-seen order.
        let mut order: Vec<String> = Vec::new();
        let mut winners: std::collections::HashMap<String, HistoryEntry> =
            std::collections::HashMap::new();
        for row in rows {
            let prompt = normalize_prompt(&row.prompt);
            if prompt.is_empty() {
                continue;
            }
            let wins = match winners.get(&prompt) {
                None => {
                    order.push(prompt.clone());
                    true
                }
                Some(inc) => {
                    row.created_at > inc.created_at
                        || (row.created_at == inc.created_at && row.id > inc.id)
                }
            };
            if wins {
                winners.insert(prompt.clone(), HistoryEntry { prompt, ..row });
            }
        }
        let tx = self.conn.transaction().db(&path)?;
        tx.execute_batch(
            "DROP INDEX IF EXISTS idx_history_created_at; DROP TRIGGER IF EXISTS history_ai; \
             DROP TABLE IF EXISTS history_fts; DROP TABLE history;",
        )
        .db(&path)?;
        tx.execute_batch(&table_ddl()).db(&path)?;
        {
            let mut ins = tx
                .prepare("INSERT INTO history (id, prompt, created_at, cwd, session_id) VALUES (?, ?, ?, ?, ?)")
                .db(&path)?;
            for p in &order {
                if let Some(r) = winners.get(p) {
                    ins.execute(params![r.id, r.prompt, r.created_at, r.cwd, r.session_id])
                        .db(&path)?;
                }
            }
        }
        tx.execute_batch(&format!("PRAGMA user_version = {HISTORY_DATA_VERSION}"))
            .db(&path)?;
        tx.commit().db(&path)?;
        Ok(true)
    }

    /// omp's `add`: stores a prompt (normalized; empty prompts are ignored) with its latest
    /// provenance. Returns whether something was written.
    pub fn add(
        &self,
        prompt: &str,
        cwd: Option<&str>,
        session_id: Option<&str>,
    ) -> Result<bool, IndexError> {
        let p = normalize_prompt(prompt);
        if p.is_empty() {
            return Ok(false);
        }
        let sql = format!(
            "\nINSERT INTO history (prompt, created_at, cwd, session_id)\nVALUES (?, {NOW}, ?, ?)\nON CONFLICT(prompt) DO UPDATE SET\n\t\
             created_at = excluded.created_at,\n\tcwd = excluded.cwd,\n\tsession_id = excluded.session_id\n\t\t"
        );
        let session = session_id.filter(|s| !s.is_empty());
        self.conn
            .execute(&sql, params![p, cwd, session])
            .db(&self.path)?;
        Ok(true)
    }

    fn cols(&self) -> &'static str {
        if self.has_session_id {
            "id, prompt, created_at, cwd, session_id"
        } else {
            "id, prompt, created_at, cwd, NULL AS session_id"
        }
    }

    /// omp's `getRecent(limit)`: the latest prompts.
    pub fn recent(&self, limit: f64) -> Result<Vec<HistoryEntry>, IndexError> {
        let n = normalize_limit(limit);
        if n == 0 || !self.has_table {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM history ORDER BY created_at DESC, id DESC LIMIT ?",
            self.cols()
        );
        let mut st = self.conn.prepare(&sql).db(&self.path)?;
        let v = st
            .query_map([n as i64], row_entry)
            .db(&self.path)?
            .collect::<Result<Vec<_>, _>>()
            .db(&self.path)?;
        Ok(v)
    }

    /// omp's `search(query, limit)`: prompts containing every word of `query` (as a word
    /// prefix through FTS5, or anywhere, case-insensitively), newest first.
    pub fn search(&self, query: &str, limit: f64) -> Result<Vec<HistoryEntry>, IndexError> {
        let n = normalize_limit(limit);
        if n == 0 || !self.has_table {
            return Ok(Vec::new());
        }
        let tokens = tokenize(query);
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let fts_query = tokens
            .iter()
            .map(|t| format!("\"{}\"*", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" ");
        let cols = if self.has_session_id {
            "h.id, h.prompt, h.created_at, h.cwd, h.session_id"
        } else {
            "h.id, h.prompt, h.created_at, h.cwd, NULL AS session_id"
        };
        let fts_sql = format!(
            "SELECT {cols} FROM history_fts f JOIN history h ON h.id = f.rowid WHERE history_fts MATCH ? \
             ORDER BY h.created_at DESC, h.id DESC LIMIT ?"
        );
        // A failing FTS query (or a missing FTS table) falls through to the substring search.
        let fts_rows: Vec<HistoryEntry> = self
            .conn
            .prepare(&fts_sql)
            .and_then(|mut st| {
                st.query_map(params![fts_query, n as i64], row_entry)?
                    .collect()
            })
            .unwrap_or_default();
        let where_ = vec!["prompt LIKE ? ESCAPE '\\' COLLATE NOCASE"; tokens.len()].join(" AND ");
        let sub_sql = format!(
            "SELECT {} FROM history WHERE {where_} ORDER BY created_at DESC, id DESC LIMIT ?",
            self.cols()
        );
        let mut args: Vec<rusqlite::types::Value> = tokens
            .iter()
            .map(|t| rusqlite::types::Value::Text(format!("%{}%", escape_like(t))))
            .collect();
        args.push(rusqlite::types::Value::Integer(n as i64));
        let sub_rows: Vec<HistoryEntry> = {
            let mut st = self.conn.prepare(&sub_sql).db(&self.path)?;
            let v = st
                .query_map(rusqlite::params_from_iter(args), row_entry)
                .db(&self.path)?
                .collect::<Result<Vec<_>, _>>()
                .db(&self.path)?;
            v
        };
        if fts_rows.is_empty() {
            return Ok(sub_rows);
        }
        let mut seen = std::collections::HashSet::new();
        let mut all: Vec<HistoryEntry> = Vec::new();
        for r in fts_rows.into_iter().chain(sub_rows) {
            if seen.insert(r.id) {
                all.push(r);
            }
        }
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        all.truncate(n);
        Ok(all)
    }

    /// omp's `matchingSessionIds`: sessions whose prompts match, by prompt recency, once each.
    pub fn matching_session_ids(&self, query: &str, limit: f64) -> Result<Vec<String>, IndexError> {
        let mut seen = std::collections::HashSet::new();
        Ok(self
            .search(query, limit)?
            .into_iter()
            .filter_map(|e| e.session_id)
            .filter(|s| seen.insert(s.clone()))
            .collect())
    }

    /// Checkpoints the WAL and closes (omp does this at exit).
    pub fn close(self) -> Result<(), IndexError> {
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        self.conn.close().map_err(|(_, e)| e).db(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_as_omp() {
        assert_eq!(normalize_prompt("  a  \r\n b \t\rc  "), "a\n b\nc");
        assert_eq!(normalize_prompt("x\u{a0}\ny"), "x\ny");
        assert_eq!(normalize_prompt(" \n\t "), "");
        assert_eq!(
            normalize_prompt("keep  inner  spaces"),
            "keep  inner  spaces"
        );
        assert_eq!(
            tokenize("Git-Commit  fix_it café"),
            vec!["git", "commit", "fix", "it", "café"]
        );
        assert_eq!(normalize_limit(f64::NAN), 0);
        assert_eq!(normalize_limit(5000.0), 1000);
        assert_eq!(normalize_limit(3.9), 3);
        assert_eq!(normalize_limit(-2.0), 0);
    }

    #[test]
    fn add_search_recent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("agent").join("history.db");
        let h = History::open(&p).unwrap();
        assert!(h
            .add("fix the git-commit hook  \r\n", Some("/w"), Some("s1"))
            .unwrap());
        assert!(!h.add("   ", None, None).unwrap());
        h.add("refactor the parser", Some("/w"), None).unwrap();
        h.add("fix the git-commit hook", Some("/other"), Some("s2"))
            .unwrap();
        let r = h.recent(100.0).unwrap();
        assert_eq!(r.len(), 2);
        let fix = r.iter().find(|e| e.prompt.starts_with("fix")).unwrap();
        assert_eq!(
            (fix.cwd.as_deref(), fix.session_id.as_deref()),
            (Some("/other"), Some("s2"))
        );
        assert_eq!(h.search("git comm", 10.0).unwrap().len(), 1);
        // substring fallback: "mit" is inside "commit" (no word starts with it)
        assert_eq!(h.search("mit", 10.0).unwrap().len(), 1);
        assert_eq!(h.search("parser FIX", 10.0).unwrap().len(), 0);
        assert_eq!(
            h.matching_session_ids("hook", 10.0).unwrap(),
            vec!["s2".to_string()]
        );
        h.close().unwrap();
        let ro = History::open_read_only(&p).unwrap().unwrap();
        assert_eq!(ro.recent(1.0).unwrap().len(), 1);
    }

    #[test]
    fn old_database_is_rebuilt_as_omp_does() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("history.db");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(
                "CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT (unixepoch()), cwd TEXT);
                 INSERT INTO history(prompt, created_at, cwd) VALUES ('a  \nb', 10, '/x'), ('a\nb', 20, '/y'), ('  ', 5, NULL), ('c', 7, NULL);",
            )
            .unwrap();
        }
        // reading does not upgrade
        let ro = History::open_read_only(&p).unwrap().unwrap();
        assert_eq!(ro.recent(10.0).unwrap().len(), 4);
        drop(ro);
        let h = History::open(&p).unwrap();
        let r = h.recent(10.0).unwrap();
        assert_eq!(
            r.iter()
                .map(|e| (e.prompt.as_str(), e.created_at))
                .collect::<Vec<_>>(),
            vec![("a\nb", 20), ("c", 7)]
        );
        assert_eq!(h.search("b", 10.0).unwrap().len(), 1);
        let v: i64 = h
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 1);
    }
}
