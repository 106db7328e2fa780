//! Bringing the catalog up to date with the files: which files changed (one `stat` each),
//! reading them on worker threads from where the catalog stopped, and writing the rows on
//! the calling thread.
use crate::catalog::{read_file_row, Catalog, FileRow, Listed, STORED_COLS};
use crate::error::{IndexError, SqlContext};
use crate::scan::{scan_job, Chunk, Job, Stat};
use crate::text::Usage;
use crate::tree::{TreeCache, TreeState};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Progress of a refresh, for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Files whose reading finished.
    pub files_done: u64,
    /// Files to read.
    pub files_total: u64,
    /// Bytes read.
    pub bytes_done: u64,
    /// Bytes to read (estimate).
    pub bytes_total: u64,
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefreshStats {
    /// Session files seen.
    pub files: u64,
    /// Files whose `stat` had not changed.
    pub unchanged: u64,
    /// Files read from the start (new, rewritten, shrunk, ...).
    pub full: u64,
    /// Files read from their last indexed byte.
    pub appended: u64,
    /// Rows dropped for files that are gone.
    pub removed: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Texts added to the full-text index.
    pub docs_added: u64,
    /// Files left as they were because another process indexed them at the same time.
    pub raced: u64,
    /// Files that could not be read, with the error.
    pub failed: Vec<(PathBuf, String)>,
}

/// How to refresh: `RefreshOptions::default()` and the `with_*` setters (the struct may gain
/// fields, so it is not built with a literal outside this crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefreshOptions {
    /// Reader threads (0: one per core).
    pub threads: usize,
    /// Run FTS5's `optimize` after adding at least this many texts.
    pub optimize_after: u64,
    /// Bring the searchable texts up to date too (search and `allMessagesText` need them; a
    /// listing does not). Texts that are current are kept current either way.
    pub texts: bool,
    /// Return the listing of the directories (`false`: only bring the catalog up to date,
    /// reading less of it, as a search does).
    pub listing: bool,
}

impl Default for RefreshOptions {
    fn default() -> Self {
        RefreshOptions {
            threads: 0,
            optimize_after: 10_000,
            texts: false,
            listing: true,
        }
    }
}

impl RefreshOptions {
    /// With [`RefreshOptions::threads`].
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// With [`RefreshOptions::optimize_after`].
    pub fn with_optimize_after(mut self, optimize_after: u64) -> Self {
        self.optimize_after = optimize_after;
        self
    }

    /// With [`RefreshOptions::texts`].
    pub fn with_texts(mut self, texts: bool) -> Self {
        self.texts = texts;
        self
    }

    /// With [`RefreshOptions::listing`].
    pub fn with_listing(mut self, listing: bool) -> Self {
        self.listing = listing;
        self
    }
}

/// Whether a stored row needs no work for `want_texts`.
fn up_to_date(s: &crate::scan::Stored, stat: &Stat, want_texts: bool) -> bool {
    s.fp.stat == *stat && (!want_texts || !s.meta.is_session || s.docs_to >= s.fp.indexed_to)
}

/// The `*.jsonl` files of one directory, as listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirListing {
    /// The directory as given (listed paths are joined onto it as Node's `path.join` does).
    pub shown: PathBuf,
    /// The catalog's key for it (canonical when it exists).
    pub key: String,
    /// Regular files ending in `.jsonl`, in directory order, with their `stat`.
    pub files: Vec<(String, Stat)>,
}

/// Node's `path.join(dir, name)` (lexical: `.` and `..` resolved, separators collapsed).
pub fn node_join(dir: &Path, name: &str) -> PathBuf {
    let joined = format!("{}/{}", dir.to_string_lossy(), name);
    let abs = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !abs {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let s = parts.join("/");
    PathBuf::from(match (abs, s.is_empty()) {
        (true, _) => format!("/{s}"),
        (false, true) => ".".to_string(),
        (false, false) => s,
    })
}

/// The catalog key of a directory: canonical when it exists, else absolute.
pub fn dir_key(dir: &Path) -> String {
    match std::fs::canonicalize(dir) {
        Ok(c) => c.to_string_lossy().into_owned(),
        Err(_) => std::path::absolute(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .to_string_lossy()
            .into_owned(),
    }
}

/// Lists `dir` as pi's `list` reads it: names ending in `.jsonl` in directory order (only
/// regular files; a directory named `x.jsonl` would be hidden by pi anyway).
pub fn read_dir_listing(dir: &Path) -> DirListing {
    let key = dir_key(dir);
    let mut files = Vec::new();
    // Each name is `stat`ed relative to the directory (`fstatat`, following symlinks as
    // `metadata` does), not by its whole path: a third of a warm search's time at 10,000
    // sessions went to walking the same directories' names again for every file.
    let dir_fd = std::fs::File::open(dir).ok();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") {
                continue;
            }
            let stat = match &dir_fd {
                Some(f) => stat_at(f, &e.file_name()),
                None => std::fs::metadata(e.path())
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| Stat::from_meta(&m)),
            };
            if let Some(st) = stat {
                files.push((name, st));
            }
        }
    }
    DirListing {
        shown: dir.to_path_buf(),
        key,
        files,
    }
}

/// `fstatat(dir, name)` following symlinks: the file's [`Stat`] when it is a regular file.
fn stat_at(dir: &std::fs::File, name: &std::ffi::OsStr) -> Option<Stat> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let c = std::ffi::CString::new(name.as_bytes()).ok()?;
    // SAFETY: `libc::stat` is plain data, for which all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat writes into `st`; the name is NUL-terminated and the directory's
    // descriptor stays open for the call.
    if unsafe { libc::fstatat(dir.as_raw_fd(), c.as_ptr(), &mut st, 0) } != 0 {
        return None;
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    Some(Stat {
        size: st.st_size as u64,
        mtime_ns: st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
        ino: st.st_ino as u64,
        dev: st.st_dev as u64,
    })
}

enum Msg {
    Chunk(Box<Chunk>),
    Failed(usize, std::io::Error),
}

/// Per-job state on the writing side.
struct JobState {
    fid: i64,
    skip: bool,
    tree: TreeState,
    labels: i64,
    models: Vec<String>,
    usage: Usage,
}

fn delete_docs(conn: &Connection, fid: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO fts(fts, rowid, text) SELECT 'delete', id, text FROM docs WHERE fid=?1",
    )?
    .execute([fid])?;
    conn.prepare_cached("DELETE FROM docs WHERE fid=?1")?
        .execute([fid])?;
    Ok(())
}

fn delete_file_rows(conn: &Connection, fid: i64) -> rusqlite::Result<()> {
    delete_docs(conn, fid)?;
    conn.prepare_cached("DELETE FROM trees WHERE fid=?1")?
        .execute([fid])?;
    conn.prepare_cached("DELETE FROM labels WHERE fid=?1")?
        .execute([fid])?;
    Ok(())
}

/// Drops a file and everything indexed from it.
/// Deletes the rows of the files `fids` in one transaction (all or nothing).
fn delete_files(conn: &mut Connection, fids: &[i64]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for fid in fids {
        delete_file(&tx, *fid)?;
    }
    tx.commit()
}

pub(crate) fn delete_file(conn: &Connection, fid: i64) -> rusqlite::Result<()> {
    delete_file_rows(conn, fid)?;
    conn.prepare_cached("DELETE FROM files WHERE fid=?1")?
        .execute([fid])?;
    Ok(())
}

fn split_path(p: &Path) -> (String, String) {
    let dir = p
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// Starts a job on the writing side: checks that nobody changed the row since it was read,
/// creates or resets the row. `None`: leave this job alone.
fn start_job(conn: &Connection, job: &Job, chunk: &Chunk) -> rusqlite::Result<Option<JobState>> {
    let blank = |fid| JobState {
        fid,
        skip: false,
        tree: TreeState::fresh(),
        labels: 0,
        models: Vec::new(),
        usage: Usage::default(),
    };
    match &job.stored {
        Some(s) => {
            let gen: Option<i64> = conn
                .prepare_cached("SELECT gen FROM files WHERE fid=?1")?
                .query_row([s.fid], |r| r.get(0))
                .optional()?;
            if gen != Some(s.gen) {
                return Ok(None);
            }
            if chunk.reset {
                delete_file_rows(conn, s.fid)?;
                return Ok(Some(blank(s.fid)));
            }
            let data: Option<Vec<u8>> = conn
                .prepare_cached("SELECT data FROM trees WHERE fid=?1")?
                .query_row([s.fid], |r| r.get(0))
                .optional()?;
            let cache = data
                .as_deref()
                .and_then(TreeCache::decode)
                .unwrap_or_default();
            let st = conn
                .prepare_cached(
                    "SELECT branches, tree_clean, labels, models, tok_input, tok_output, tok_cache_read, tok_cache_write, cost \
                     FROM files WHERE fid=?1",
                )?
                .query_row([s.fid], |r| {
                    Ok(JobState {
                        fid: s.fid,
                        skip: false,
                        tree: TreeState::stored(cache, r.get(0)?, r.get::<_, i64>(1)? != 0),
                        labels: r.get(2)?,
                        models: r.get::<_, String>(3)?.split('\n').filter(|m| !m.is_empty()).map(str::to_string).collect(),
                        usage: Usage {
                            input: r.get(4)?,
                            output: r.get(5)?,
                            cache_read: r.get(6)?,
                            cache_write: r.get(7)?,
                            cost: r.get(8)?,
                        },
                    })
                })?;
            Ok(Some(st))
        }
        None => {
            let path = job.path.to_string_lossy();
            let exists: Option<i64> = conn
                .prepare_cached("SELECT fid FROM files WHERE path=?1")?
                .query_row([&path], |r| r.get(0))
                .optional()?;
            if exists.is_some() {
                return Ok(None);
            }
            let (dir, name) = split_path(&job.path);
            conn.prepare_cached("INSERT INTO files(path, dir, name) VALUES (?1, ?2, ?3)")?
                .execute(params![path, dir, name])?;
            Ok(Some(blank(conn.last_insert_rowid())))
        }
    }
}

fn apply_chunk(conn: &Connection, st: &mut JobState, chunk: &Chunk) -> rusqlite::Result<()> {
    let fid = st.fid;
    st.tree.linear = chunk.meta.version < 2;
    if !chunk.nodes.is_empty() || chunk.reset {
        st.tree.apply(&chunk.nodes);
        conn.prepare_cached("INSERT OR REPLACE INTO trees(fid, data) VALUES (?1, ?2)")?
            .execute(params![fid, st.tree.cache.encode()])?;
    }
    // Texts.
    {
        let mut ins = conn.prepare_cached("INSERT INTO docs(fid, seq, eid, kind, ts, ts_ms, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?;
        let mut fts = conn.prepare_cached("INSERT INTO fts(rowid, text) VALUES (?1, ?2)")?;
        for d in &chunk.docs {
            ins.execute(params![
                fid,
                d.seq,
                d.eid,
                d.kind.code(),
                d.ts,
                d.ts_ms,
                crate::catalog::wtf8_param(&d.text)
            ])?;
            fts.execute(params![
                conn.last_insert_rowid(),
                crate::catalog::wtf8_param(&d.text)
            ])?;
        }
    }
    // Labels.
    if !chunk.labels.is_empty() {
        let mut set = conn.prepare_cached(
            "INSERT OR REPLACE INTO labels(fid, target, label) VALUES (?1, ?2, ?3)",
        )?;
        let mut del = conn.prepare_cached("DELETE FROM labels WHERE fid=?1 AND target=?2")?;
        for (target, label) in &chunk.labels {
            match label {
                Some(l) => set.execute(params![fid, target, l])?,
                None => del.execute(params![fid, target])?,
            };
        }
        st.labels = conn
            .prepare_cached("SELECT count(*) FROM labels WHERE fid=?1")?
            .query_row([fid], |r| r.get(0))?;
    }
    for m in &chunk.models {
        if !st.models.contains(m) {
            st.models.push(m.clone());
        }
    }
    st.usage.add(&chunk.usage);
    let fp = &chunk.fp;
    let i = &chunk.info;
    let m = &chunk.meta;
    let t = &st.tree;
    conn.prepare_cached(
        "UPDATE files SET gen=gen+1, size=?2, mtime_ns=?3, ino=?4, dev=?5, head_len=?6, head_hash=?7, slot_len=?8, \
         indexed_to=?9, lines=?10, last_line_at=?11, last_line_hash=?12, tail_open=?13, phase=?14, id_json=?15, cwd=?16, \
         parent_json=?17, created_ms=?18, header_ts_ms=?19, sname=?20, message_count=?21, first_message=?22, \
         last_activity=?23, version=?24, omp=?25, session_id=?26, slot_title=?27, header_title=?28, is_session=?29, \
         docs_to=?30, docs_lines=?31, branches=?32, tree_clean=?33, entries=?34, labels=?35, models=?36, tok_input=?37, \
         tok_output=?38, tok_cache_read=?39, tok_cache_write=?40, cost=?41 WHERE fid=?1",
    )?
    .execute(params![
        fid,
        fp.stat.size as i64,
        fp.stat.mtime_ns,
        fp.stat.ino as i64,
        fp.stat.dev as i64,
        fp.head_len as i64,
        fp.head_hash,
        fp.slot_len as i64,
        fp.indexed_to as i64,
        fp.lines as i64,
        fp.last_line_at as i64,
        fp.last_line_hash,
        i64::from(fp.tail_open),
        i.phase.code(),
        i.id,
        i.cwd,
        i.parent_session_path,
        i.created_ms,
        i.header_ts_ms,
        i.name,
        i.message_count as i64,
        i.first_message.as_ref().map(crate::catalog::wtf8_param),
        i.last_activity,
        m.version,
        i64::from(m.omp),
        m.session_id,
        m.slot_title,
        m.header_title,
        i64::from(m.is_session),
        chunk.docs_to as i64,
        chunk.docs_lines as i64,
        t.branches,
        i64::from(t.clean),
        t.cache.len() as i64,
        st.labels,
        st.models.join("\n"),
        st.usage.input,
        st.usage.output,
        st.usage.cache_read,
        st.usage.cache_write,
        st.usage.cost,
    ])?;
    Ok(())
}

/// Bytes between commits of a long refresh.
const COMMIT_BYTES: u64 = 256 << 20;

/// What decides whether a stored file needs work.
struct FileFp {
    fid: i64,
    stat: Stat,
    indexed_to: u64,
    docs_to: u64,
    is_session: bool,
}

impl Catalog {
    /// Calls `each` with the name and fingerprint of every file the catalog holds in the
    /// directory `key`, in the order of the names' bytes (the order of `str`'s `Ord`; SQLite's
    /// `BINARY`, read from the index `files_fp`), the name borrowed from the row.
    fn each_fingerprint_of_dir(
        &self,
        key: &str,
        each: &mut dyn FnMut(&str, FileFp),
    ) -> Result<(), IndexError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT name, fid, size, mtime_ns, ino, dev, indexed_to, docs_to, is_session FROM files WHERE dir=?1 ORDER BY name")
            .db(&self.path)?;
        let mut rows = st.query([key]).db(&self.path)?;
        while let Some(r) = rows.next().db(&self.path)? {
            let u = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)? as u64) };
            let fp = FileFp {
                fid: r.get(1).db(&self.path)?,
                stat: Stat {
                    size: u(2).db(&self.path)?,
                    mtime_ns: r.get(3).db(&self.path)?,
                    ino: u(4).db(&self.path)?,
                    dev: u(5).db(&self.path)?,
                },
                indexed_to: u(6).db(&self.path)?,
                docs_to: u(7).db(&self.path)?,
                is_session: r.get::<_, i64>(8).db(&self.path)? != 0,
            };
            let name = r
                .get_ref(0)
                .and_then(|v| v.as_str().map_err(rusqlite::Error::from))
                .db(&self.path)?;
            each(name, fp);
        }
        Ok(())
    }

    /// The stat the catalog holds of each file of the directory `key`, by name: what the
    /// files looked like at its last refresh (current while a live watcher vouches for the
    /// directory: [`crate::fresh::watcher_vouches`]).
    ///
    /// # Errors
    /// The catalog cannot be read.
    pub fn file_stats(&self, key: &str) -> Result<HashMap<String, Stat>, IndexError> {
        let mut out = HashMap::new();
        self.each_fingerprint_of_dir(key, &mut |name, fp| {
            out.insert(name.to_string(), fp.stat);
        })?;
        Ok(out)
    }

    fn stored_by_fid(&self, fid: i64) -> Result<Option<crate::scan::Stored>, IndexError> {
        let sql = format!("SELECT {STORED_COLS} FROM files WHERE fid=?1");
        Ok(self
            .conn
            .query_row(&sql, [fid], read_file_row)
            .optional()
            .db(&self.path)?
            .map(|r| r.stored))
    }

    /// Reads the rows of one directory.
    pub(crate) fn rows_of_dir(&self, key: &str) -> Result<Vec<FileRow>, IndexError> {
        let sql = format!("SELECT {STORED_COLS} FROM files WHERE dir=?1");
        let mut st = self.conn.prepare_cached(&sql).db(&self.path)?;
        let rows = st
            .query_map([key], read_file_row)
            .db(&self.path)?
            .collect::<Result<Vec<_>, _>>()
            .db(&self.path)?;
        Ok(rows)
    }

    /// Brings the rows of `dirs` up to date with the files (new files indexed, appended files
    /// read from their last indexed byte, rewritten files indexed again, deleted files
    /// dropped) and returns the listing of each directory, in directory order.
    pub fn refresh_dirs(
        &mut self,
        dirs: &[PathBuf],
        opts: RefreshOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Vec<Listed>, RefreshStats), IndexError> {
        let listings: Vec<DirListing> = dirs.iter().map(|d| read_dir_listing(d)).collect();
        self.refresh_listings(&listings, opts, progress)
    }

    /// [`Catalog::refresh_dirs`] for directories already read.
    pub fn refresh_listings(
        &mut self,
        listings: &[DirListing],
        opts: RefreshOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Vec<Listed>, RefreshStats), IndexError> {
        let kinds = self.kinds()?;
        let mut stats = RefreshStats::default();
        let mut jobs: Vec<Job> = Vec::new();
        let mut rows_by_dir: Vec<HashMap<String, FileRow>> = Vec::new();
        let mut gone: Vec<i64> = Vec::new();
        let mut seen_keys = HashSet::new();
        for l in listings {
            if !opts.listing {
                // Only what decides whether a file needs work; whole rows for those that do.
                // The directory's names and the catalog's rows are compared in name order,
                // one merge of two sorted lists (no name hashed or copied: at 10,000 sessions
                // the hashing and copying was a fifth of a search's CPU without a watcher).
                let mut order: Vec<&(String, Stat)> = l.files.iter().collect();
                order.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                // Files needing work: name, stat, the fid of the catalog's row for it.
                let mut work: Vec<(&str, Stat, Option<i64>)> = Vec::new();
                let mut next = 0;
                stats.files += order.len() as u64;
                if seen_keys.insert(l.key.clone()) {
                    self.each_fingerprint_of_dir(&l.key, &mut |name, f| {
                        // Listed files before this row's name have no row.
                        while let Some((n, st)) = order.get(next).copied() {
                            if n.as_str() >= name {
                                break;
                            }
                            work.push((n, *st, None));
                            next += 1;
                        }
                        match order.get(next).copied() {
                            Some((n, st)) if n.as_str() == name => {
                                next += 1;
                                if f.stat == *st
                                    && (!opts.texts || !f.is_session || f.docs_to >= f.indexed_to)
                                {
                                    stats.unchanged += 1;
                                } else {
                                    work.push((n, *st, Some(f.fid)));
                                }
                            }
                            // A row whose file is no longer listed.
                            _ => gone.push(f.fid),
                        }
                    })?;
                }
                for (n, st) in &order[next..] {
                    work.push((n, *st, None));
                }
                for (name, stat, fid) in work {
                    let stored = match fid {
                        Some(fid) => self.stored_by_fid(fid)?,
                        None => None,
                    };
                    jobs.push(Job {
                        idx: jobs.len(),
                        path: PathBuf::from(format!("{}/{}", l.key.trim_end_matches('/'), name)),
                        stat,
                        stored,
                        kinds,
                        want_docs: opts.texts,
                    });
                }
                rows_by_dir.push(HashMap::new());
                continue;
            }
            let names: HashSet<&str> = l.files.iter().map(|(n, _)| n.as_str()).collect();
            let rows: HashMap<String, FileRow> = if seen_keys.insert(l.key.clone()) {
                self.rows_of_dir(&l.key)?
                    .into_iter()
                    .map(|r| (r.name.clone(), r))
                    .collect()
            } else {
                HashMap::new()
            };
            for (name, r) in &rows {
                if !names.contains(name.as_str()) {
                    gone.push(r.stored.fid);
                }
            }
            for (name, stat) in &l.files {
                stats.files += 1;
                let row = rows.get(name);
                if row.is_some_and(|r| up_to_date(&r.stored, stat, opts.texts)) {
                    stats.unchanged += 1;
                    continue;
                }
                jobs.push(Job {
                    idx: jobs.len(),
                    path: PathBuf::from(format!("{}/{}", l.key.trim_end_matches('/'), name)),
                    stat: *stat,
                    stored: row.map(|r| r.stored.clone()),
                    kinds,
                    want_docs: opts.texts,
                });
            }
            rows_by_dir.push(rows);
        }
        if !gone.is_empty() {
            delete_files(&mut self.conn, &gone).db(&self.path)?;
            stats.removed = gone.len() as u64;
        }
        let changed = !jobs.is_empty();
        self.run_jobs(jobs, opts, &mut stats, progress)?;
        if !opts.listing {
            return Ok((Vec::new(), stats));
        }
        // The listing, in directory order.
        let mut out = Vec::new();
        let mut done_keys = HashSet::new();
        for (l, rows) in listings.iter().zip(rows_by_dir) {
            let fresh;
            let rows = if changed && done_keys.insert(l.key.clone()) {
                fresh = self
                    .rows_of_dir(&l.key)?
                    .into_iter()
                    .map(|r| (r.name.clone(), r))
                    .collect::<HashMap<_, _>>();
                &fresh
            } else {
                &rows
            };
            for (name, _) in &l.files {
                if let Some(r) = rows.get(name) {
                    if let Some(x) = r.listed(node_join(&l.shown, name)) {
                        out.push(x);
                    }
                }
            }
        }
        Ok((out, stats))
    }

    /// The listing of `dirs` as the catalog holds it, every field (without looking at the
    /// files: for a catalog a live watcher keeps fresh, see [`crate::watch::vouches`]),
    /// directory by directory (callers sort: [`crate::sort_like_pi`]).
    pub fn listed_as_indexed(&self, dirs: &[PathBuf]) -> Result<Vec<Listed>, IndexError> {
        let keyed: Vec<(String, PathBuf)> = dirs.iter().map(|d| (dir_key(d), d.clone())).collect();
        self.listed_as_indexed_keyed(&keyed)
    }

    /// [`Catalog::listed_as_indexed`] of directories given as `(key, path)`: the catalog's key
    /// ([`dir_key`], as the command that names the directory computed it) and the path the
    /// rows' `path` is shown under (what a live watcher is asked for, see the module `watch`).
    pub fn listed_as_indexed_keyed(
        &self,
        dirs: &[(String, PathBuf)],
    ) -> Result<Vec<Listed>, IndexError> {
        let mut out = Vec::new();
        let mut done = HashSet::new();
        for (key, d) in dirs {
            if !done.insert(key.clone()) {
                continue;
            }
            // Each row becomes its listing as it is read (no list of rows first), into a list
            // made once at its size: at 10,000 sessions most of the time went to zeroing the
            // fresh memory of lists that grew by doubling.
            let n: i64 = self
                .conn
                .prepare_cached("SELECT count(*) FROM files WHERE dir=?1")
                .db(&self.path)?
                .query_row([&key], |r| r.get(0))
                .db(&self.path)?;
            out.reserve(usize::try_from(n).unwrap_or(0));
            let sql = format!("SELECT {STORED_COLS} FROM files WHERE dir=?1");
            let mut st = self.conn.prepare_cached(&sql).db(&self.path)?;
            let mut rows = st.query([&key]).db(&self.path)?;
            while let Some(r) = rows.next().db(&self.path)? {
                let row = read_file_row(r).db(&self.path)?;
                if let Some(l) = row.listed(node_join(d, &row.name)) {
                    out.push(l);
                }
            }
        }
        Ok(out)
    }

    /// Indexes single files (outside any listed directory), as [`Catalog::refresh_dirs`] does.
    pub fn refresh_files(
        &mut self,
        files: &[PathBuf],
        opts: RefreshOptions,
    ) -> Result<RefreshStats, IndexError> {
        let kinds = self.kinds()?;
        let mut stats = RefreshStats::default();
        let mut jobs = Vec::new();
        for f in files {
            let Ok(stat) = Stat::of(f) else { continue };
            let key = PathBuf::from(dir_key(f.parent().unwrap_or(Path::new("."))))
                .join(f.file_name().unwrap_or_default());
            let sql = format!("SELECT {STORED_COLS} FROM files WHERE path=?1");
            let row = self
                .conn
                .query_row(&sql, [key.to_string_lossy()], read_file_row)
                .optional()
                .db(&self.path)?;
            stats.files += 1;
            if row
                .as_ref()
                .is_some_and(|r| up_to_date(&r.stored, &stat, opts.texts))
            {
                stats.unchanged += 1;
                continue;
            }
            jobs.push(Job {
                idx: jobs.len(),
                path: key,
                stat,
                stored: row.map(|r| r.stored),
                kinds,
                want_docs: opts.texts,
            });
        }
        self.run_jobs(jobs, opts, &mut stats, &mut |_| {})?;
        Ok(stats)
    }

    /// Drops rows of files that no longer exist (anywhere). Returns how many.
    pub fn sweep(&mut self) -> Result<u64, IndexError> {
        let mut st = self
            .conn
            .prepare("SELECT fid, path FROM files")
            .db(&self.path)?;
        let rows: Vec<(i64, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .db(&self.path)?
            .collect::<Result<_, _>>()
            .db(&self.path)?;
        drop(st);
        let gone: Vec<i64> = rows
            .into_iter()
            .filter(|(_, p)| !Path::new(p).is_file())
            .map(|(f, _)| f)
            .collect();
        if gone.is_empty() {
            return Ok(0);
        }
        delete_files(&mut self.conn, &gone).db(&self.path)?;
        Ok(gone.len() as u64)
    }

    fn run_jobs(
        &mut self,
        jobs: Vec<Job>,
        opts: RefreshOptions,
        stats: &mut RefreshStats,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), IndexError> {
        if jobs.is_empty() {
            return Ok(());
        }
        // With texts, oldest files first: the texts' row ids then follow recency roughly
        // (appends always get the newest), which the search's rank window relies on. Without,
        // largest first, which balances the reader threads best.
        let mut jobs = jobs;
        if jobs.iter().any(|j| {
            j.want_docs
                || j.stored
                    .as_ref()
                    .is_some_and(|s| s.docs_to >= s.fp.indexed_to && s.fp.indexed_to > 0)
        }) {
            jobs.sort_by_key(|j| j.stat.mtime_ns);
        } else {
            jobs.sort_by_key(|j| std::cmp::Reverse(j.stat.size));
        }
        for (i, j) in jobs.iter_mut().enumerate() {
            j.idx = i;
        }
        let threads = match opts.threads {
            0 => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            n => n,
        }
        .min(jobs.len())
        .max(1);
        let mut prog = Progress {
            files_total: jobs.len() as u64,
            bytes_total: jobs
                .iter()
                .map(|j| {
                    let from = j.stored.as_ref().map_or(0, |s| {
                        if j.want_docs {
                            s.docs_to.min(s.fp.indexed_to)
                        } else {
                            s.fp.indexed_to
                        }
                    });
                    j.stat.size.saturating_sub(from.min(j.stat.size))
                })
                .sum(),
            ..Progress::default()
        };
        progress(prog);
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let path = self.path.clone();
        let conn = &self.conn;
        let result = std::thread::scope(|s| -> Result<(), IndexError> {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(threads * 4);
            for _ in 0..threads {
                let tx = tx.clone();
                let (jobs, next, stop) = (&jobs, &next, &stop);
                s.spawn(move || loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = scan_job(job, &mut |c| {
                        let _ = tx.send(Msg::Chunk(Box::new(c)));
                    });
                    if let Err(e) = r {
                        let _ = tx.send(Msg::Failed(i, e));
                    }
                });
            }
            drop(tx);
            let mut apply_all = || -> Result<(), IndexError> {
                let mut states: HashMap<usize, JobState> = HashMap::new();
                let mut since_commit = 0u64;
                // Rolled back when dropped on an error; committed every COMMIT_BYTES.
                let mut tx =
                    Transaction::new_unchecked(conn, TransactionBehavior::Immediate).db(&path)?;
                for msg in rx.iter() {
                    match msg {
                        Msg::Failed(i, e) => {
                            stats.failed.push((jobs[i].path.clone(), e.to_string()));
                            prog.files_done += 1;
                            states.remove(&i);
                        }
                        Msg::Chunk(c) => {
                            let job = &jobs[c.job];
                            if let std::collections::hash_map::Entry::Vacant(slot) =
                                states.entry(c.job)
                            {
                                let st = match start_job(conn, job, &c).db(&path)? {
                                    Some(st) => st,
                                    None => JobState {
                                        fid: 0,
                                        skip: true,
                                        tree: TreeState::default(),
                                        labels: 0,
                                        models: Vec::new(),
                                        usage: Usage::default(),
                                    },
                                };
                                if st.skip {
                                    stats.raced += 1;
                                } else if c.reset {
                                    stats.full += 1;
                                } else {
                                    stats.appended += 1;
                                }
                                slot.insert(st);
                            }
                            let st = states
                                .get_mut(&c.job)
                                .ok_or_else(|| IndexError::Worker("job state".into()))?;
                            if !st.skip {
                                apply_chunk(conn, st, &c).db(&path)?;
                            }
                            stats.bytes_read += c.bytes;
                            if !st.skip {
                                stats.docs_added += c.docs.len() as u64;
                            }
                            prog.bytes_done += c.bytes;
                            since_commit += c.bytes;
                            if c.done {
                                prog.files_done += 1;
                                states.remove(&c.job);
                            }
                            if since_commit >= COMMIT_BYTES {
                                tx.commit().db(&path)?;
                                tx = Transaction::new_unchecked(
                                    conn,
                                    TransactionBehavior::Immediate,
                                )
                                .db(&path)?;
                                since_commit = 0;
                            }
                            progress(prog);
                        }
                    }
                }
                tx.commit().db(&path)?;
                Ok(())
            };
            let r = apply_all();
            if r.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            r
        });
        result?;
        progress(prog);
        if stats.docs_added >= opts.optimize_after {
            self.conn
                .execute_batch(
                    "INSERT INTO fts(fts) VALUES('optimize'); PRAGMA wal_checkpoint(TRUNCATE);",
                )
                .db(&self.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_join_is_lexical() {
        assert_eq!(
            node_join(Path::new("./a/"), "x.jsonl"),
            PathBuf::from("a/x.jsonl")
        );
        assert_eq!(
            node_join(Path::new("/a/b/../c"), "x"),
            PathBuf::from("/a/c/x")
        );
        assert_eq!(node_join(Path::new("../a"), "x"), PathBuf::from("../a/x"));
        assert_eq!(node_join(Path::new("."), "x"), PathBuf::from("x"));
        assert_eq!(node_join(Path::new("/"), "x"), PathBuf::from("/x"));
    }
}
