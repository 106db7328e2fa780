//! Full-text search over the catalog (SQLite FTS5).
//!
//! A query is FTS5's own syntax: words (all must match), `"a phrase"`, `prefix*`, `AND`,
//! `OR`, `NOT`, `NEAR(a b, 5)` and parentheses. A query that FTS5 cannot read (`c++`,
//! `foo:bar`, an unbalanced quote) is searched as its words instead: each whitespace-separated
//! token becomes a quoted phrase (a trailing `*` stays a prefix), all of them required.
use crate::catalog::Catalog;
use crate::error::{IndexError, SqlContext};
use crate::text::Kind;
use rusqlite::types::Value;
use rusqlite::OptionalExtension;
use std::path::PathBuf;

/// A search.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchQuery {
    /// The query text.
    pub query: String,
    /// Only these kinds (`None`: every indexed kind).
    pub kinds: Option<Vec<Kind>>,
    /// Only texts of entries at or after this time (ms since the epoch).
    pub since_ms: Option<f64>,
    /// Only files in these directories (catalog keys, see [`crate::dir_key`]); `None`: all.
    pub dirs: Option<Vec<String>>,
    /// At most this many hits.
    pub limit: usize,
    /// Marks around matched words in snippets.
    pub marks: (String, String),
    /// Words of context in a snippet (1 to 64).
    pub snippet_words: u32,
    /// Rank at most this many matches, the most recently indexed ones (0: all). Ranking costs
    /// a few microseconds per matching text; a common word matches tens of thousands.
    pub rank_window: usize,
    /// Check the text index when the hits are fewer than the limit (FTS5 finds nothing in a
    /// damaged index; the check costs about 2.5 ms per MB of catalog) and the catalog file is
    /// not as arbor left it after a check (see the module `stamp`). An interactive search
    /// that runs at every keystroke turns it off.
    pub check_index: bool,
    /// Count every match when the limit cut the hits (`search_with_total`); off: the total
    /// is the number of hits.
    pub count_total: bool,
    /// Count at most this many matches past the limit (0: every one). A total above
    /// `limit + count_cap` means "more than `count_cap` past the hits": a phrase search has
    /// to check the positions of every match to count it (`"session manager"`, 11,134
    /// matches at 10,000 sessions: 41 ms to count them all, 2 ms to count 1,000).
    pub count_cap: usize,
}

/// How many matches past the limit a search counts by default (see
/// [`SearchQuery::count_cap`]).
pub const DEFAULT_COUNT_CAP: usize = 1000;

impl SearchQuery {
    /// A query with the defaults: every kind, every directory, 20 hits, `**` marks, a rank
    /// window of 2,000.
    pub fn new(query: &str) -> SearchQuery {
        SearchQuery {
            query: query.to_string(),
            kinds: None,
            since_ms: None,
            dirs: None,
            limit: 20,
            marks: ("**".into(), "**".into()),
            snippet_words: 16,
            rank_window: 2000,
            check_index: true,
            count_total: true,
            count_cap: DEFAULT_COUNT_CAP,
        }
    }
}

/// A matched text before it is a [`Hit`]: `(fid, seq, eid, kind, ts, snippet, rank)`.
type Raw = (i64, i64, Option<String>, i64, Option<String>, String, f64);

/// The regular expression of a `re:` query (`re:PATTERN`, case-insensitive; the one query
/// language of `arbor search` and the browser); `None` for any other query (FTS5).
///
/// # Errors
/// [`IndexError::Query`] for a pattern that does not compile (or would be too big).
pub fn regex_of(query: &str) -> Option<Result<regex::Regex, IndexError>> {
    let pattern = query.trim().strip_prefix("re:")?.trim();
    Some(
        regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                // The parser's message spans lines (the pattern, a caret): one line here.
                let text = e.to_string();
                IndexError::Query(format!(
                    "re: {}",
                    text.split_whitespace().collect::<Vec<_>>().join(" ")
                ))
            }),
    )
}

/// The text around a regular expression's match `start..end`, 40 bytes either side (at
/// character boundaries, `…` where cut), the match between `marks`.
pub fn regex_snippet(text: &str, start: usize, end: usize, marks: &(String, String)) -> String {
    let mut a = start.saturating_sub(40);
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (end + 40).min(text.len());
    while !text.is_char_boundary(b) {
        b += 1;
    }
    format!(
        "{}{}{}{}{}{}{}",
        if a > 0 { "…" } else { "" },
        &text[a..start],
        marks.0,
        &text[start..end],
        marks.1,
        &text[end..b],
        if b < text.len() { "…" } else { "" }
    )
}

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The session file.
    pub path: PathBuf,
    /// The session id (header `id`).
    pub session_id: Option<String>,
    /// The session's name or title, when it has one.
    pub session_name: Option<String>,
    /// The entry the text belongs to (for a label: the labelled entry).
    pub entry_id: Option<String>,
    /// What kind of text matched.
    pub kind: Kind,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// The entry is on the path from the session's leaf (the branch pi resumes) to its root.
    pub on_current_branch: bool,
    /// The matching text around the match, matched words marked.
    pub snippet: String,
    /// The relevance: BM25, lower is better (see the module `rank`; on one-phrase queries
    /// the order is FTS5's `bm25()`'s).
    pub rank: f64,
    /// The text's position in its file (entries in file order; see [`Catalog::texts_near`]).
    pub seq: i64,
}

/// Turns free text into an FTS5 query of required quoted words.
pub fn words_query(q: &str) -> String {
    q.split_whitespace()
        .filter_map(|t| {
            let (core, star) = match t.strip_suffix('*') {
                Some(c) => (c, "*"),
                None => (t, ""),
            };
            let core = core.trim_matches('"');
            (!core.is_empty()).then(|| format!("\"{}\"{star}", core.replace('"', "\"\"")))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether SQLite's error is FTS5 refusing the MATCH expression. Every statement of
/// [`Catalog::search`] is fixed and valid, so a plain `SQLITE_ERROR` (rusqlite's
/// `ErrorCode::Unknown`) there comes from the user's query ("fts5: syntax error", "unknown
/// special query", "no such column" for `col:word`, an unterminated string). A missing table
/// is a damaged catalog, not a query.
fn is_query_error(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::Unknown)
        && !e.to_string().contains("no such table")
}

/// Whether `w` is an FTS5 bareword (what its query syntax reads as one word unquoted).
fn is_bareword(w: &str) -> bool {
    !w.is_empty()
        && w.bytes()
            .all(|b| b >= 0x80 || b.is_ascii_alphanumeric() || b == b'_' || b == 0x1a)
}

impl Catalog {
    /// `expr` with each prefix (`Ωmeg*`) that completes to exactly one term of the text index
    /// written as that term (`"ωmega"`), or `None` when nothing is to be replaced.
    ///
    /// FTS5 (3.46) reads a prefix by copying the positions of every text of every completing
    /// term into one list before the first row, whatever the window (`Ωmeg*` at 10,000
    /// sessions: 294,519 texts, 9 ms of CPU), where a term is read lazily, newest first, as
    /// far as the window goes (0.1 ms). A prefix of one completion matches exactly the texts,
    /// at exactly the places, that the term does: the same hits, ranks (one phrase either way)
    /// and snippets. Only a query of plain words, some with a `*`, is rewritten; a prefix must
    /// be one token of the index's tokenizer, its completions are read from the index itself
    /// (`fts5vocab`, instance by instance: the first term at or after the prefix, then the
    /// first after that term), and anything else (an operator, a quote, a column, two
    /// completions, none) leaves the query to FTS5 as it is.
    fn complete_prefixes(&self, expr: &str) -> rusqlite::Result<Option<String>> {
        // Split where FTS5's query syntax does (its `fts5ExprIsspace`): any other byte is part
        // of a word, and decides whether it is a bareword.
        let words: Vec<&str> = expr
            .split([' ', '\t', '\n', '\r'])
            .filter(|w| !w.is_empty())
            .collect();
        if !words.iter().any(|w| w.ends_with('*')) {
            return Ok(None);
        }
        for w in &words {
            let core = w.strip_suffix('*').unwrap_or(w);
            if !is_bareword(core) || ["AND", "OR", "NOT", "NEAR"].contains(&core) {
                return Ok(None);
            }
        }
        // The tokenizer of the text index, on a scratch table of this connection's own
        // (`temp`: nothing is written to the catalog).
        self.conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.arbor_tok USING fts5(t, tokenize='{}');
             CREATE VIRTUAL TABLE IF NOT EXISTS temp.arbor_tok_terms USING fts5vocab(temp, arbor_tok, instance);
             CREATE VIRTUAL TABLE IF NOT EXISTS temp.arbor_terms USING fts5vocab(main, fts, instance);",
            crate::catalog::FTS_TOKENIZE
        ))?;
        let tokens = |text: &str| -> rusqlite::Result<Vec<Vec<u8>>> {
            self.conn.execute("DELETE FROM temp.arbor_tok", [])?;
            self.conn.execute(
                "INSERT INTO temp.arbor_tok(rowid, t) VALUES (1, ?1)",
                [text],
            )?;
            let mut st = self
                .conn
                .prepare_cached("SELECT term FROM temp.arbor_tok_terms ORDER BY \"offset\"")?;
            let rows = st.query_map([], |r| Ok(r.get_ref(0)?.as_bytes()?.to_vec()))?;
            rows.collect()
        };
        // The first term of the index at or after `from` (bytes, as FTS5 orders its terms).
        let first_from = |from: &[u8]| -> rusqlite::Result<Option<Vec<u8>>> {
            let mut st = self
                .conn
                .prepare_cached("SELECT term FROM temp.arbor_terms WHERE term >= ?1 LIMIT 1")?;
            let mut rows = st.query([rusqlite::types::ToSqlOutput::Borrowed(
                rusqlite::types::ValueRef::Text(from),
            )])?;
            match rows.next()? {
                Some(r) => Ok(Some(r.get_ref(0)?.as_bytes()?.to_vec())),
                None => Ok(None),
            }
        };
        let mut out = Vec::with_capacity(words.len());
        for w in &words {
            let Some(core) = w.strip_suffix('*') else {
                out.push((*w).to_string());
                continue;
            };
            let mut one = tokens(core)?;
            if one.len() != 1 {
                return Ok(None);
            }
            let prefix = one.remove(0);
            let Some(term) = first_from(&prefix)?.filter(|t| t.starts_with(&prefix)) else {
                return Ok(None);
            };
            // The first term after `term`: `term` and a NUL byte sort right after it.
            let mut after = term.clone();
            after.push(0);
            if first_from(&after)?.is_some_and(|t| t.starts_with(&prefix)) {
                return Ok(None);
            }
            let Ok(term) = String::from_utf8(term) else {
                return Ok(None);
            };
            // Quoted, the term must be read back as itself.
            if tokens(&term)? != [term.as_bytes().to_vec()] {
                return Ok(None);
            }
            out.push(format!("\"{}\"", term.replace('"', "\"\"")));
        }
        Ok(Some(out.join(" ")))
    }

    /// Searches the indexed texts; hits are ranked by relevance (BM25, with the document
    /// frequencies of a query of several phrases estimated: see the module `rank`), then
    /// newest first.
    ///
    /// Every query string either searches or is [`IndexError::Query`]: text FTS5 cannot read
    /// (`c++`, `*`, `foo:bar`, an unbalanced quote) is searched as quoted words, and a query
    /// that has no word at all is a query error, never a raw SQLite error.
    ///
    /// A search that finds fewer hits than its limit (none at all, or a short list) checks the
    /// text index first ([`Catalog::check_text_index`]) unless the catalog file is exactly as
    /// arbor left it after that check (see the module `stamp`): damage there makes FTS5
    /// silently find nothing, and "no match" must not be the answer of a damaged catalog.
    /// Damage is [`IndexError::Corrupt`] (the caller rebuilds the catalog and searches
    /// again), as is SQLite's own report of damage while the query runs.
    ///
    /// # Errors
    /// [`IndexError::Query`] for a query with no word, [`IndexError::Corrupt`] when the catalog
    /// (or its text index) is damaged, [`IndexError::Sqlite`] for any other SQLite failure.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<Hit>, IndexError> {
        self.search_with_total(q).map(|(hits, _)| hits)
    }

    /// [`search`](Self::search), with the number of texts that match in all (more than the
    /// hits when the limit cut the list; counted only then, and only up to
    /// `limit + count_cap + 1`: see [`SearchQuery::count_cap`]).
    ///
    /// # Errors
    /// As [`search`](Self::search).
    pub fn search_with_total(&self, q: &SearchQuery) -> Result<(Vec<Hit>, u64), IndexError> {
        let (hits, total) = self.search_unchecked(q)?;
        if q.check_index && hits.len() < q.limit && !self.trust.fts_ok.get() {
            self.check_text_index()?;
        }
        Ok((hits, total))
    }

    fn search_unchecked(&self, q: &SearchQuery) -> Result<(Vec<Hit>, u64), IndexError> {
        if q.query.trim().is_empty() {
            return Err(IndexError::Query("empty query".into()));
        }
        if let Some(rx) = regex_of(&q.query) {
            return self.search_regex(q, &rx?);
        }
        match self.search_expr(q, q.query.trim()) {
            Err(IndexError::Sqlite { source, .. }) if is_query_error(&source) => {
                let w = words_query(&q.query);
                if w.is_empty() {
                    return Err(IndexError::Query(format!(
                        "{:?} has no word to search for",
                        q.query
                    )));
                }
                match self.search_expr(q, &w) {
                    Err(IndexError::Sqlite { source, .. }) if is_query_error(&source) => Err(
                        IndexError::Query(format!("{:?} cannot be searched ({source})", q.query)),
                    ),
                    r => r,
                }
            }
            r => r,
        }
    }

    fn search_expr(&self, q: &SearchQuery, expr: &str) -> Result<(Vec<Hit>, u64), IndexError> {
        // One snapshot for the prefixes' completions, the window, the rank, the snippets and
        // the count.
        let _read = if self.conn.is_autocommit() {
            Some(self.conn.unchecked_transaction().db(&self.path)?)
        } else {
            None
        };
        // Anything that keeps the completions from being read leaves the query as it is.
        let completed = self.complete_prefixes(expr).unwrap_or(None);
        let expr = completed.as_deref().unwrap_or(expr);
        // The filters, shared by the window query and the ranked query (arguments from ?2).
        let mut filters = String::new();
        let mut fargs: Vec<Value> = vec![Value::Text(expr.to_string())];
        // A filter that keeps every text the catalog can hold is left out, so that the window
        // and the count need not join each match to its row (the count of 206,821 matches of
        // a two-word query at 10,000 sessions: 447 ms joined, 21 ms in FTS5 alone).
        let indexed = self.kinds()?;
        let all_kinds = |kinds: &[Kind]| {
            Kind::ALL
                .iter()
                .all(|k| kinds.contains(k) || (k.is_opt_in() && !indexed.includes(*k)))
        };
        let all_dirs = |dirs: &[String]| -> Result<bool, IndexError> {
            let mut st = self
                .conn
                .prepare_cached("SELECT DISTINCT dir FROM files")
                .db(&self.path)?;
            let have: Vec<String> = st
                .query_map([], |r| r.get(0))
                .db(&self.path)?
                .collect::<Result<_, _>>()
                .db(&self.path)?;
            Ok(have.iter().all(|h| dirs.contains(h)))
        };
        if let Some(kinds) = q.kinds.as_deref().filter(|k| !all_kinds(k)) {
            let codes: Vec<String> = kinds.iter().map(|k| k.code().to_string()).collect();
            filters.push_str(&format!(
                " AND d.kind IN ({})",
                if codes.is_empty() {
                    "NULL".into()
                } else {
                    codes.join(",")
                }
            ));
        }
        if let Some(t) = q.since_ms {
            fargs.push(Value::Real(t));
            filters.push_str(&format!(" AND d.ts_ms >= ?{}", fargs.len()));
        }
        if let Some(dirs) = &q.dirs {
            if dirs.is_empty() {
                return Ok((Vec::new(), 0));
            }
        }
        if let Some(dirs) = q.dirs.as_ref().filter(|d| !all_dirs(d).unwrap_or(false)) {
            let mut ph = Vec::new();
            for d in dirs {
                fargs.push(Value::Text(d.clone()));
                ph.push(format!("?{}", fargs.len()));
            }
            filters.push_str(&format!(
                " AND d.fid IN (SELECT fid FROM files WHERE dir IN ({}))",
                ph.join(",")
            ));
        }
        let matches = if filters.is_empty() {
            "fts"
        } else {
            "fts JOIN docs d ON d.id = fts.rowid"
        };
        // One scan of the matches ranks them and makes the snippets of the rows that may be
        // among the best (see the module `rank`): the newest `rank_window` matches (texts get
        // row ids in the order they are indexed, oldest files first, appends last), or every
        // match. `lo`/`hi` give `arbor_rank` the span of the row ids. Only those rows are
        // read from `docs` when no filter needs the others.
        let (lo, hi): (Option<i64>, Option<i64>) = self
            .conn
            .prepare_cached("SELECT (SELECT min(id) FROM docs), (SELECT max(id) FROM docs)")
            .db(&self.path)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .db(&self.path)?;
        let n = fargs.len();
        let limit = q.limit.min(100_000);
        let rank = format!("arbor_rank(fts, ?{}, ?{}, ?{})", n + 1, n + 2, n + 3);
        let window = if q.rank_window > 0 {
            format!(" ORDER BY fts.rowid DESC LIMIT {}", q.rank_window)
        } else {
            String::new()
        };
        let sql = format!(
            "SELECT fts.rowid, {rank}, \
             CASE WHEN arbor_best(fts, {limit}, {rank}) THEN snippet(fts, 0, ?{}, ?{}, '…', ?{}) END \
             FROM {matches} WHERE fts MATCH ?1{filters}{window}",
            n + 4,
            n + 5,
            n + 6,
        );
        let count_args = fargs.clone();
        let mut args = fargs;
        args.push(Value::Integer(lo.unwrap_or(0)));
        args.push(Value::Integer(hi.unwrap_or(0)));
        args.push(Value::Integer(crate::rank::SAMPLE));
        args.push(Value::Text(q.marks.0.clone()));
        args.push(Value::Text(q.marks.1.clone()));
        args.push(Value::Integer(i64::from(q.snippet_words.clamp(1, 64))));
        // (row id, rank, snippet) of the rows that may be among the best.
        let mut maybe: Vec<(i64, f64, String)> = Vec::new();
        let mut scanned = 0usize;
        {
            let mut st = self.conn.prepare(&sql).db(&self.path)?;
            let mut rows = st.query(rusqlite::params_from_iter(args)).db(&self.path)?;
            while let Some(r) = rows.next().db(&self.path)? {
                scanned += 1;
                // The texts are WTF-8 (a lone surrogate kept for pi's listing): shown lossily.
                let snippet = match r.get_ref(2).db(&self.path)? {
                    // Not among the best so far: no snippet made.
                    rusqlite::types::ValueRef::Null => continue,
                    rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => {
                        arbor_core::json::JsStr(b.to_vec())
                            .to_string_lossy()
                            .into_owned()
                    }
                    _ => String::new(),
                };
                maybe.push((r.get(0).db(&self.path)?, r.get(1).db(&self.path)?, snippet));
            }
        }
        let mut best: Vec<(crate::rank::Key, Raw)> = Vec::with_capacity(maybe.len());
        {
            let mut doc = self
                .conn
                .prepare_cached("SELECT fid, seq, eid, kind, ts, ts_ms FROM docs WHERE id=?1")
                .db(&self.path)?;
            for (id, rank, snippet) in maybe {
                type Doc = (i64, i64, Option<String>, i64, Option<String>, Option<f64>);
                let d: Option<Doc> = doc
                    .query_row([id], |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                        ))
                    })
                    .optional()
                    .db(&self.path)?;
                // The scan and this read share one snapshot: a row is always there.
                let Some((fid, seq, eid, kind, ts, ts_ms)) = d else {
                    continue;
                };
                let key = crate::rank::Key { rank, ts_ms, id };
                best.push((key, (fid, seq, eid, kind, ts, snippet, rank)));
            }
        }
        best.sort_unstable_by_key(|b| b.0);
        best.truncate(limit);
        // The scan saw every match unless the window was full: then there are at least that
        // many.
        let exact = (q.rank_window == 0 || scanned < q.rank_window).then_some(scanned);
        let hits = self.hits_of(best.into_iter().map(|(_, raw)| raw))?;
        let cap_total = q.limit.saturating_add(q.count_cap).saturating_add(1);
        let total = if q.count_total && hits.len() >= q.limit {
            let capped = |n: usize| if q.count_cap > 0 { n.min(cap_total) } else { n };
            if let Some(n) = exact {
                return Ok((hits, capped(n) as u64));
            }
            if q.count_cap > 0 && q.rank_window >= cap_total {
                // The scan already saw more matches than the count would stop at.
                return Ok((hits, cap_total as u64));
            }
            let sql = if q.count_cap > 0 {
                format!(
                    "SELECT count(*) FROM (SELECT 1 FROM {matches} WHERE fts MATCH ?1{filters} LIMIT {cap_total})"
                )
            } else {
                format!("SELECT count(*) FROM {matches} WHERE fts MATCH ?1{filters}")
            };
            let n: i64 = self
                .conn
                .prepare(&sql)
                .db(&self.path)?
                .query_row(rusqlite::params_from_iter(count_args.iter()), |r| r.get(0))
                .db(&self.path)?;
            (n.max(0) as u64).max(hits.len() as u64)
        } else {
            hits.len() as u64
        };
        Ok((hits, total))
    }

    /// The hits of matched texts `(fid, seq, eid, kind, ts, snippet, rank)`: each with its
    /// file, session id and name, and whether it is on the branch the session resumes.
    fn hits_of(&self, raw: impl Iterator<Item = Raw>) -> Result<Vec<Hit>, IndexError> {
        let mut file_q = self
            .conn
            .prepare_cached("SELECT path, session_id, coalesce(nullif(slot_title, ''), sname, header_title) FROM files WHERE fid=?1")
            .db(&self.path)?;
        let mut tree_q = self
            .conn
            .prepare_cached("SELECT data FROM trees WHERE fid=?1")
            .db(&self.path)?;
        let mut trees: std::collections::HashMap<i64, Option<crate::tree::TreeCache>> =
            std::collections::HashMap::new();
        let mut hits = Vec::new();
        for (fid, seq, eid, kind, ts, snippet, rank) in raw {
            let Some(kind) = Kind::from_code(kind) else {
                continue;
            };
            let (path, session_id, session_name): (String, Option<String>, Option<String>) = file_q
                .query_row([fid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .db(&self.path)?;
            if let std::collections::hash_map::Entry::Vacant(slot) = trees.entry(fid) {
                let data: Option<Vec<u8>> = tree_q
                    .query_row([fid], |r| r.get(0))
                    .optional()
                    .db(&self.path)?;
                slot.insert(data.as_deref().and_then(crate::tree::TreeCache::decode));
            }
            let tree = trees.get(&fid).and_then(|t| t.as_ref());
            let on: Option<bool> = match (kind, tree) {
                (Kind::Label, Some(t)) => eid.as_deref().and_then(|e| t.on_path_of(e)),
                (_, Some(t)) => t.on_path_at(seq),
                (_, None) => None,
            };
            // A header title is not an entry: it belongs to every branch.
            let on_current_branch = match on {
                Some(v) => v,
                None => kind == Kind::Name && eid.is_none(),
            };
            hits.push(Hit {
                path: PathBuf::from(path),
                session_id,
                session_name,
                entry_id: eid,
                kind,
                timestamp: ts,
                on_current_branch,
                snippet,
                rank,
                seq,
            });
        }
        Ok(hits)
    }

    /// A `re:` query ([`regex_of`]): the texts the regular expression finds, newest indexed
    /// first, filtered as an FTS5 query is (kinds, time, directories); the total counted as
    /// [`SearchQuery::count_cap`] says.
    fn search_regex(
        &self,
        q: &SearchQuery,
        rx: &regex::Regex,
    ) -> Result<(Vec<Hit>, u64), IndexError> {
        let _read = if self.conn.is_autocommit() {
            Some(self.conn.unchecked_transaction().db(&self.path)?)
        } else {
            None
        };
        let mut args: Vec<Value> = Vec::new();
        let mut sql =
            String::from("SELECT d.fid, d.seq, d.eid, d.kind, d.ts, d.ts_ms, d.text FROM docs d");
        if let Some(dirs) = &q.dirs {
            if dirs.is_empty() {
                return Ok((Vec::new(), 0));
            }
            let ph: Vec<String> = (1..=dirs.len()).map(|i| format!("?{i}")).collect();
            sql.push_str(&format!(
                " WHERE d.fid IN (SELECT fid FROM files WHERE dir IN ({}))",
                ph.join(",")
            ));
            args.extend(dirs.iter().map(|d| Value::Text(d.clone())));
        }
        sql.push_str(" ORDER BY d.id DESC");
        let cap_total = q.limit.saturating_add(q.count_cap).saturating_add(1);
        // Each found hit with its time: shown newest first, whatever order one refresh's
        // reader threads happened to write the rows in (the scan walks the rows newest-written
        // first, so which hits are found first follows recency only roughly).
        let mut found: Vec<(Option<f64>, i64, Raw)> = Vec::new();
        let mut total = 0usize;
        let mut st = self.conn.prepare(&sql).db(&self.path)?;
        let mut rows = st.query(rusqlite::params_from_iter(args)).db(&self.path)?;
        while let Some(r) = rows.next().db(&self.path)? {
            let kind: i64 = r.get(3).db(&self.path)?;
            let Some(k) = Kind::from_code(kind) else {
                continue;
            };
            if q.kinds.as_ref().is_some_and(|ks| !ks.contains(&k)) {
                continue;
            }
            let ts_ms: Option<f64> = r.get(5).db(&self.path)?;
            if let Some(since) = q.since_ms {
                if ts_ms.is_none_or(|t| t < since) {
                    continue;
                }
            }
            let text = crate::catalog::wtf8(r, 6)
                .db(&self.path)?
                .to_string_lossy()
                .into_owned();
            let Some(m) = rx.find(&text) else { continue };
            total += 1;
            if found.len() < q.limit {
                let snippet = regex_snippet(&text, m.start(), m.end(), &q.marks);
                let n = found.len() as i64;
                found.push((
                    ts_ms,
                    n,
                    (
                        r.get(0).db(&self.path)?,
                        r.get(1).db(&self.path)?,
                        r.get(2).db(&self.path)?,
                        kind,
                        r.get(4).db(&self.path)?,
                        snippet,
                        0.0,
                    ),
                ));
            } else if !q.count_total || (q.count_cap > 0 && total >= cap_total) {
                break;
            }
        }
        drop(rows);
        drop(st);
        // Newest hit first; a hit without a time after those with one; ties in scan order.
        found.sort_by(|a, b| {
            b.0.unwrap_or(f64::NEG_INFINITY)
                .total_cmp(&a.0.unwrap_or(f64::NEG_INFINITY))
                .then(a.1.cmp(&b.1))
        });
        let hits = self.hits_of(found.into_iter().map(|(_, _, raw)| raw))?;
        Ok((hits, total as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog in memory with one session of `texts` indexed.
    fn catalog_of(texts: &[&str]) -> (tempfile::TempDir, Catalog) {
        let d = tempfile::tempdir().expect("tempdir");
        let mut s = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        s.push('\n');
        for (i, t) in texts.iter().enumerate() {
            s.push_str(&format!(
                r#"{{"type":"message","id":"m{i}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{t}"}}}}"#
            ));
            s.push('\n');
        }
        std::fs::write(d.path().join("s.jsonl"), s).expect("write");
        let mut cat = Catalog::in_memory().expect("catalog");
        cat.refresh_dirs(
            &[d.path().to_path_buf()],
            crate::RefreshOptions::default().with_texts(true),
            &mut |_| {},
        )
        .expect("index");
        (d, cat)
    }

    #[test]
    fn a_prefix_of_one_completion_is_written_as_it() {
        let (_d, cat) = catalog_of(&["Ωmega refactor", "refactoring crème brûlée", "lock"]);
        let c = |q: &str| cat.complete_prefixes(q).expect("read");
        assert_eq!(c("Ωmeg*").as_deref(), Some("\"ωmega\""));
        assert_eq!(c("ΩMEGA*").as_deref(), Some("\"ωmega\""));
        assert_eq!(c("Ωmeg* lock").as_deref(), Some("\"ωmega\" lock"));
        assert_eq!(c("\tΩmeg*\r\nlock ").as_deref(), Some("\"ωmega\" lock"));
        assert_eq!(c("crè* lo*").as_deref(), Some("\"creme\" \"lock\""));
        assert_eq!(c("refactorin*").as_deref(), Some("\"refactoring\""));
        // Two completions, none, no prefix, or more than plain words: left to FTS5.
        for q in [
            "refac*",
            "zz*",
            "lock",
            "(Ωmeg*)",
            "\"Ωmeg\"*",
            "text:Ωmeg*",
            "Ωmeg* OR lock",
            "NOT*",
            "Ωmeg*x",
            "a_b*",
            "^Ωmeg*",
            // Not spaces to FTS5: inside a word (U+00A0 is two tokens) or no bareword.
            "lock Ωmeg\u{a0}lo*",
            "Ωmeg*\u{b}lock",
        ] {
            assert_eq!(c(q), None, "{q}");
        }
        // Nothing of it reaches the catalog file's own tables.
        let tables: i64 = cat
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'arbor_%'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(tables, 0);
    }

    #[test]
    fn words_query_quotes_every_token() {
        assert_eq!(words_query("c++ foo:bar"), "\"c++\" \"foo:bar\"");
        assert_eq!(words_query("say \"x  lock*"), "\"say\" \"x\" \"lock\"*");
        assert_eq!(words_query("  "), "");
    }
}
