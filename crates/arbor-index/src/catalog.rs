//! The catalog database: schema, opening (WAL, integrity check, setting a damaged file
//! aside), and reading rows back as listings.
use crate::error::{IndexError, IoContext, SqlContext};
use crate::scan::{Fingerprint, Meta, Stat, Stored};
use crate::text::{IndexKinds, Usage};
use arbor_core::json::JsStr;
use arbor_store::discover::SessionInfo;
use arbor_store::info::{InfoState, Phase};
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::path::{Path, PathBuf};

/// Version of the schema below; a catalog with another version is rebuilt. 5: the listing's
/// texts (`first_message`, the user/assistant `docs`) are stored as WTF-8, lone surrogates kept.
/// 6: `spend_files`, what `arbor stats` adds up of each session. 7: a v1 file's texts carry
/// the ids its migration gives its entries (`arbor_core::migrate::V1Ids`), as `show` names them.
/// 8: other agents' sessions (`foreign_sources`, `foreign_sessions`: see foreign.rs); a catalog
/// of 7 or before is rebuilt (it never held them, and is never read as if it had).
pub const SCHEMA_VERSION: i64 = 8;

/// The text index's tokenizer, as `tokenize=` names it (one literal for the schema and for
/// the search's reading of prefixes, see [`FTS_TOKENIZE`]).
macro_rules! fts_tokenize {
    () => {
        "unicode61 remove_diacritics 2"
    };
}

/// The text index's tokenizer (`fts`'s `tokenize=`): the search reads a query's prefixes with
/// the same one.
pub(crate) const FTS_TOKENIZE: &str = fts_tokenize!();

const SCHEMA: &str = concat!(
    r#"
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
  fid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  dir TEXT NOT NULL,
  name TEXT NOT NULL,
  gen INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ns INTEGER NOT NULL DEFAULT 0,
  ino INTEGER NOT NULL DEFAULT 0,
  dev INTEGER NOT NULL DEFAULT 0,
  head_len INTEGER NOT NULL DEFAULT 0,
  head_hash INTEGER NOT NULL DEFAULT 0,
  slot_len INTEGER NOT NULL DEFAULT 0,
  indexed_to INTEGER NOT NULL DEFAULT 0,
  lines INTEGER NOT NULL DEFAULT 0,
  last_line_at INTEGER NOT NULL DEFAULT 0,
  last_line_hash INTEGER NOT NULL DEFAULT 0,
  tail_open INTEGER NOT NULL DEFAULT 0,
  phase INTEGER NOT NULL DEFAULT 0,
  id_json TEXT,
  cwd TEXT NOT NULL DEFAULT '',
  parent_json TEXT,
  created_ms REAL,
  header_ts_ms REAL,
  sname TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  first_message TEXT,
  last_activity REAL,
  version INTEGER NOT NULL DEFAULT 1,
  omp INTEGER NOT NULL DEFAULT 0,
  session_id TEXT,
  slot_title TEXT,
  header_title TEXT,
  is_session INTEGER NOT NULL DEFAULT 0,
  docs_to INTEGER NOT NULL DEFAULT 0,
  docs_lines INTEGER NOT NULL DEFAULT 0,
  branches INTEGER NOT NULL DEFAULT 0,
  tree_clean INTEGER NOT NULL DEFAULT 1,
  entries INTEGER NOT NULL DEFAULT 0,
  labels INTEGER NOT NULL DEFAULT 0,
  models TEXT NOT NULL DEFAULT '',
  tok_input REAL NOT NULL DEFAULT 0,
  tok_output REAL NOT NULL DEFAULT 0,
  tok_cache_read REAL NOT NULL DEFAULT 0,
  tok_cache_write REAL NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE INDEX IF NOT EXISTS files_sid ON files(session_id);
CREATE INDEX IF NOT EXISTS files_fp ON files(dir, name, fid, size, mtime_ns, ino, dev, indexed_to, docs_to, is_session);
-- Each file's tree (every entry's line, id, parent id and on-branch flag), compactly: see
-- tree::TreeCache::encode.
CREATE TABLE IF NOT EXISTS trees (
  fid INTEGER PRIMARY KEY,
  data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
  fid INTEGER NOT NULL,
  target TEXT NOT NULL,
  label TEXT NOT NULL,
  PRIMARY KEY (fid, target)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs (
  id INTEGER PRIMARY KEY,
  fid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  eid TEXT,
  kind INTEGER NOT NULL,
  ts TEXT,
  ts_ms REAL,
  text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_fid ON docs(fid, seq);
-- The FTS index is written by the indexer, row by row, never by triggers: FTS5 flushes its
-- in-memory terms at every savepoint, and a trigger opens one per row (2.5x slower loads).
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  text, content='docs', content_rowid='id', tokenize='"#,
    fts_tokenize!(),
    r#"'
);
-- What `arbor stats` adds up of each session file (see spends.rs), by the directory's key
-- and the file's name, valid while the file's stat is the one stored.
CREATE TABLE IF NOT EXISTS spend_files (
  dir TEXT NOT NULL,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  dev INTEGER NOT NULL,
  error TEXT,
  cwd TEXT NOT NULL DEFAULT '',
  sid TEXT,
  parent TEXT,
  parent_canon TEXT,
  parent_size INTEGER,
  parent_mtime_ns INTEGER,
  parent_ino INTEGER,
  parent_dev INTEGER,
  buckets BLOB NOT NULL,
  PRIMARY KEY (dir, name)
) WITHOUT ROWID;
-- Other agents' sources (a Claude Code or Codex file, opencode's data directory), each with
-- its fingerprint, and the sessions read from each (see foreign.rs).
CREATE TABLE IF NOT EXISTS foreign_sources (
  key TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  fp TEXT NOT NULL,
  problem TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS foreign_sessions (
  source TEXT NOT NULL,
  n INTEGER NOT NULL,
  agent TEXT NOT NULL,
  id TEXT NOT NULL,
  cwd TEXT NOT NULL DEFAULT '',
  title TEXT,
  created_ms INTEGER,
  modified_ms INTEGER,
  message_count INTEGER NOT NULL DEFAULT 0,
  first_message TEXT NOT NULL DEFAULT '',
  parent_id TEXT,
  models TEXT NOT NULL DEFAULT '',
  tok_input INTEGER NOT NULL DEFAULT 0,
  tok_output INTEGER NOT NULL DEFAULT 0,
  tok_cache_read INTEGER NOT NULL DEFAULT 0,
  tok_cache_write INTEGER NOT NULL DEFAULT 0,
  cost_recorded REAL NOT NULL DEFAULT 0,
  cost_estimated REAL NOT NULL DEFAULT 0,
  unpriced INTEGER NOT NULL DEFAULT 0,
  problems INTEGER NOT NULL DEFAULT 0,
  buckets BLOB NOT NULL DEFAULT x'',
  PRIMARY KEY (source, n)
) WITHOUT ROWID;
-- Their texts (user and assistant text, compaction summaries), keyed by the node's key
-- (there is no pi entry id until an import), and the text index over them.
CREATE TABLE IF NOT EXISTS foreign_docs (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  n INTEGER NOT NULL,
  node TEXT NOT NULL,
  kind INTEGER NOT NULL,
  ts_ms INTEGER,
  on_path INTEGER NOT NULL DEFAULT 1,
  text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS foreign_docs_source ON foreign_docs(source);
CREATE VIRTUAL TABLE IF NOT EXISTS foreign_fts USING fts5(
  text, content='foreign_docs', content_rowid='id', tokenize='"#,
    fts_tokenize!(),
    r#"'
);
"#
);

/// The covering index of [`crate::refresh`]'s fingerprint query (created in catalogs made
/// before it too).
const FILES_FP_INDEX: &str = "CREATE INDEX IF NOT EXISTS files_fp ON files(dir, name, fid, size, mtime_ns, ino, dev, indexed_to, docs_to, is_session);";

/// FTS5 settings (kept in the index): a 16 MB in-memory term buffer before a segment is
/// written (fewer, larger segments while a cold catalog is built, so less merging).
const FTS_TUNING: &str = "INSERT INTO fts(fts, rank) VALUES ('hashsize', 16777216);";

const DROP: &str = r#"
DROP TRIGGER IF EXISTS docs_ai;
DROP TABLE IF EXISTS foreign_fts;
DROP TABLE IF EXISTS foreign_docs;
DROP TABLE IF EXISTS foreign_sessions;
DROP TABLE IF EXISTS foreign_sources;
DROP TRIGGER IF EXISTS docs_ad;
DROP TABLE IF EXISTS spend_files;
DROP TABLE IF EXISTS fts;
DROP TABLE IF EXISTS docs;
DROP TABLE IF EXISTS labels;
DROP TABLE IF EXISTS nodes;
DROP TABLE IF EXISTS trees;
DROP TABLE IF EXISTS files;
DROP TABLE IF EXISTS meta;
"#;

/// How often opening runs the whole-file integrity check.
pub const FULL_CHECK_EVERY_MS: i64 = 24 * 3600 * 1000;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The default catalog file: `$ARBOR_CATALOG`, else `$XDG_CACHE_HOME/arbor/catalog.db`, else
/// `~/.cache/arbor/catalog.db`.
pub fn default_catalog_path() -> PathBuf {
    if let Some(p) = std::env::var_os("ARBOR_CATALOG").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    cache_catalog_path()
}

/// arbor's own place for the catalog: `$XDG_CACHE_HOME/arbor/catalog.db`, else
/// `~/.cache/arbor/catalog.db`. A file there is arbor's even if it is damaged beyond
/// recognition (it may be moved aside); anywhere else only a file arbor recognises is.
pub fn cache_catalog_path() -> PathBuf {
    let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) if Path::new(&x).is_absolute() => PathBuf::from(x),
        _ => arbor_store::paths::home_dir().join(".cache"),
    };
    cache.join("arbor").join("catalog.db")
}

/// How a catalog was opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenReport {
    /// The file did not exist (everything will be indexed).
    pub created: bool,
    /// A damaged catalog was moved here and a new one created.
    pub set_aside: Option<PathBuf>,
    /// The schema was from another arbor version: the catalog was emptied.
    pub schema_reset: bool,
    /// The file could not be used (unwritable, or an I/O or SQLite error opening it): this
    /// catalog is in memory for this run, and this is why ([`Catalog::open_or_memory`]).
    pub in_memory_because: Option<String>,
    /// The files table was checked (`quick_check`) because the file was not as arbor left it
    /// after a check (see the module `stamp`): a process died while writing, something else
    /// wrote it, or it is older than the stamps.
    pub checked: bool,
}

/// A catalog found damaged while it was used, set aside and replaced by an empty one
/// ([`Catalog::recovering`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// What SQLite (or a check) said.
    pub detail: String,
    /// Where the damaged file was moved.
    pub aside: PathBuf,
}

/// The session catalog: one row per session file, the tree nodes, labels and indexed texts.
pub struct Catalog {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    /// What opening found.
    pub report: OpenReport,
    /// What is known to be sound, and what to stamp when closing (see [`crate::stamp`]).
    pub(crate) trust: Trust,
}

/// What a [`Catalog`] knows to be sound (see [`crate::stamp`]).
#[derive(Debug, Default)]
pub(crate) struct Trust {
    /// The files table passed `quick_check`, or the file is as a stamp says it was then.
    pub(crate) files_ok: std::cell::Cell<bool>,
    /// The text index passed FTS5's integrity check, or the file is as a stamp says it was
    /// then.
    pub(crate) fts_ok: std::cell::Cell<bool>,
    /// The stamp found when opening.
    seen: Option<crate::stamp::Stamp>,
    /// Write a stamp when dropped (a file catalog that is still the one at `path`).
    stamp_on_drop: bool,
    /// The inode of the file opened: a stamp is only written for that file.
    ino: u64,
}

impl Drop for Catalog {
    /// Copies the log into the file and stamps the file's state with what was checked (see
    /// `stamp`), so that the next command need not check again.
    fn drop(&mut self) {
        self.stamp();
    }
}

impl Catalog {
    /// Copies the write-ahead log into the catalog file and, when the log is then empty,
    /// records the file's state with what was checked (see the module `stamp`): what a
    /// long-running process does after its writes, and every catalog when it is dropped.
    pub fn stamp(&mut self) {
        if !self.trust.stamp_on_drop || !self.trust.files_ok.get() {
            return;
        }
        // Only a log with something in it is copied: a checkpoint of an empty log still
        // changes every other connection's `data_version`, and a live watcher would take each
        // command that only read the catalog for another writer (and prepare its listings
        // again, see the module `watch`).
        let wal = arbor_store::paths::with_suffix(&self.path, "-wal");
        if std::fs::symlink_metadata(&wal).map_or(true, |m| m.len() > 0) {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        let Some(state) = crate::stamp::current(&self.path) else {
            return;
        };
        if state.ino() != self.trust.ino {
            return;
        }
        let stamp = crate::stamp::Stamp {
            state,
            files_ok: true,
            fts_ok: self.trust.fts_ok.get(),
        };
        if self.trust.seen == Some(stamp) {
            return;
        }
        // Another process (a watcher after its refresh) may have stamped this very state since
        // this one opened, knowing more (the text index checked): that stamp stays.
        let on_disk = crate::stamp::read(&self.path);
        if on_disk.is_some_and(|d| d.state == state && d.files_ok && (d.fts_ok || !stamp.fts_ok)) {
            self.trust.seen = on_disk;
            return;
        }
        crate::stamp::write(&self.path, &stamp);
        self.trust.seen = Some(stamp);
    }
}

/// One session as listed from the catalog.
#[derive(Debug, Clone)]
pub struct Listed {
    /// pi's `SessionInfo` (`all_messages_text` only when asked for); `path` as listed.
    pub info: SessionInfo,
    /// The catalog's key (absolute path).
    pub file: PathBuf,
    /// File size in bytes.
    pub size: u64,
    /// Tips of the tree (1 for a session that never branched).
    pub branches: u64,
    /// Entries (tree nodes).
    pub entries: u64,
    /// Labelled entries.
    pub labels: u64,
    /// Models used (`provider/model`), first-seen order.
    pub models: Vec<String>,
    /// Token and cost totals over all entries.
    pub usage: Usage,
    /// omp's title (slot, else header title).
    pub title: Option<String>,
    /// Written by omp.
    pub omp: bool,
    /// Header id when a string.
    pub session_id: Option<String>,
    /// Format version.
    pub version: i64,
    /// The file's modification time in ms.
    pub mtime_ms: f64,
}

/// Orders listed sessions as pi 1.5.2 does: newest `modified` first, ties as pi meets them.
/// pi's `list` (one directory) reads the names sorted by `localeCompare`, descending;
/// `listAll` (`all`: every project) orders files by modification time, newest first, then
/// by name descending; both then sort stably by `modified`.
///
/// ```
/// # use arbor_index::sort_like_pi;
/// let mut v: Vec<arbor_index::Listed> = Vec::new();
/// sort_like_pi(&mut v, false);
/// assert!(v.is_empty());
/// ```
pub fn sort_like_pi(listed: &mut [Listed], all: bool) {
    let name = |l: &Listed| {
        l.file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if all {
        // Newest file first, then names descending; each key made once (a name's collation
        // key allocates).
        listed.sort_by_cached_key(|l| {
            let micros = if l.mtime_ms.is_finite() {
                (l.mtime_ms * 1000.0) as i64
            } else {
                0
            };
            std::cmp::Reverse((micros, arbor_core::js::locale_key(&name(l))))
        });
    } else {
        listed.sort_by_cached_key(|l| std::cmp::Reverse(arbor_core::js::locale_key(&name(l))));
    }
    // pi's comparator, `b.modified - a.modified`, NaN for an Invalid Date: V8's algorithm.
    arbor_core::js::v8_sort_slice_by_number(listed, |a, b| b.info.modified_ms - a.info.modified_ms);
}

impl Listed {
    /// Whether the session is omp's (the TOOL column of `ls`, `--tool`, the MCP server's
    /// `agent`): the directory decides (omp reads a plain, pi-format session that lives in
    /// its directory; pi never does), else the file's own marks.
    pub fn shown_as_omp(&self, in_omp_dir: bool) -> bool {
        self.omp || in_omp_dir
    }

    /// What a table shows: the name, omp's title, or the first message (a lone surrogate
    /// shown as U+FFFD).
    pub fn display_title(&self) -> std::borrow::Cow<'_, str> {
        match self
            .title
            .as_deref()
            .filter(|t| !t.is_empty())
            .or(self.info.name.as_deref())
        {
            Some(t) => std::borrow::Cow::Borrowed(t),
            None => self.info.first_message.to_string_lossy(),
        }
    }
}

pub(crate) const STORED_COLS: &str = "fid, gen, size, mtime_ns, ino, dev, head_len, head_hash, slot_len, indexed_to, lines, \
    last_line_at, last_line_hash, tail_open, phase, id_json, cwd, parent_json, created_ms, header_ts_ms, sname, \
    message_count, first_message, last_activity, version, omp, session_id, slot_title, header_title, name, \
    branches, entries, labels, models, tok_input, tok_output, tok_cache_read, tok_cache_write, cost, path, \
    is_session, docs_to, docs_lines";

/// A `files` row read with [`STORED_COLS`].
pub(crate) struct FileRow {
    pub stored: Stored,
    pub name: String,
    pub path: String,
    pub branches: i64,
    pub entries: i64,
    pub labels: i64,
    pub models: String,
    pub usage: Usage,
}

pub(crate) fn read_file_row(r: &Row<'_>) -> rusqlite::Result<FileRow> {
    let u = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)? as u64) };
    let fp = Fingerprint {
        stat: Stat {
            size: u(2)?,
            mtime_ns: r.get(3)?,
            ino: u(4)?,
            dev: u(5)?,
        },
        head_len: u(6)?,
        head_hash: r.get(7)?,
        slot_len: u(8)?,
        indexed_to: u(9)?,
        lines: u(10)?,
        last_line_at: u(11)?,
        last_line_hash: r.get(12)?,
        tail_open: r.get::<_, i64>(13)? != 0,
    };
    let info = info_state(r, 14)?;
    let meta = Meta {
        version: r.get(24)?,
        omp: r.get::<_, i64>(25)? != 0,
        session_id: r.get(26)?,
        slot_title: r.get(27)?,
        header_title: r.get(28)?,
        is_session: r.get::<_, i64>(40)? != 0,
    };
    Ok(FileRow {
        stored: Stored {
            fid: r.get(0)?,
            gen: r.get(1)?,
            fp,
            info,
            meta,
            docs_to: r.get::<_, i64>(41)? as u64,
            docs_lines: r.get::<_, i64>(42)? as u64,
        },
        name: r.get(29)?,
        branches: r.get(30)?,
        entries: r.get(31)?,
        labels: r.get(32)?,
        models: r.get(33)?,
        usage: Usage {
            input: r.get(34)?,
            output: r.get(35)?,
            cache_read: r.get(36)?,
            cache_write: r.get(37)?,
            cost: r.get(38)?,
        },
        path: r.get(39)?,
    })
}

impl FileRow {
    /// The listing of this row, shown at `shown` (`None` when pi hides the file).
    pub(crate) fn listed(&self, shown: PathBuf) -> Option<Listed> {
        let s = &self.stored;
        let info = s
            .info
            .finish(&shown, s.fp.stat.mtime_ms(), JsStr(Vec::new()))?;
        let title = s
            .meta
            .slot_title
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| s.meta.header_title.clone());
        Some(Listed {
            info,
            file: PathBuf::from(&self.path),
            size: s.fp.stat.size,
            branches: self.branches.max(0) as u64,
            entries: self.entries.max(0) as u64,
            labels: self.labels.max(0) as u64,
            models: self
                .models
                .split('\n')
                .filter(|m| !m.is_empty())
                .map(str::to_string)
                .collect(),
            usage: self.usage,
            title,
            omp: s.meta.omp,
            session_id: s.meta.session_id.clone(),
            version: s.meta.version,
            mtime_ms: s.fp.stat.mtime_ms(),
        })
    }
}

fn set_aside(path: &Path) -> Result<PathBuf, IndexError> {
    crate::stamp::remove(path);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let to = arbor_store::paths::with_suffix(path, format!(".corrupt-{stamp}"));
    std::fs::rename(path, &to).at(path)?;
    for (suffix, keep) in [("-wal", true), ("-shm", false)] {
        let side = arbor_store::paths::with_suffix(path, suffix);
        if side.exists() {
            if keep {
                let _ = std::fs::rename(&side, arbor_store::paths::with_suffix(&to, suffix));
            } else {
                let _ = std::fs::remove_file(&side);
            }
        }
    }
    Ok(to)
}

impl Catalog {
    /// Opens (creating) the catalog at `path`. A damaged file is set aside (renamed to
    /// `<path>.corrupt-<ms>`) and a new catalog created; see [`Catalog::report`].
    ///
    /// Only arbor's catalog is ever written or moved aside: a file that is not (a session, a
    /// dotfile, another application's SQLite database: see `db_file::identify`) is
    /// [`IndexError::NotACatalog`] and stays byte-identical. A file at arbor's own place
    /// ([`cache_catalog_path`]) that is no longer recognisable is taken for a damaged
    /// catalog. A catalog the caller cannot write is an [`IndexError::Io`] error before
    /// anything is written (callers fall back to [`Catalog::in_memory`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let not_ours = dir.path().join("notes.txt");
    /// std::fs::write(&not_ours, "my notes\n").unwrap();
    /// let err = arbor_index::Catalog::open(&not_ours).err().unwrap();
    /// assert!(matches!(err, arbor_index::IndexError::NotACatalog { .. }));
    /// assert_eq!(std::fs::read_to_string(&not_ours).unwrap(), "my notes\n");
    /// ```
    pub fn open(path: &Path) -> Result<Catalog, IndexError> {
        use crate::db_file::{identify, Identity};
        let at_home = path == cache_catalog_path();
        match identify(path)? {
            Identity::Foreign(reason) if !at_home => {
                return Err(IndexError::NotACatalog {
                    path: path.to_path_buf(),
                    reason,
                })
            }
            Identity::Foreign(_) => {
                crate::db_file::check_writable(path)?;
                let aside = set_aside(path)?;
                let mut c = Catalog::try_open(path)?;
                c.report.set_aside = Some(aside);
                c.report.created = true;
                return Ok(c);
            }
            Identity::New | Identity::Ours => {}
        }
        crate::db_file::check_writable(path)?;
        match Catalog::try_open(path) {
            Err(IndexError::Corrupt { .. }) => {
                let aside = set_aside(path)?;
                let mut c = Catalog::try_open(path)?;
                c.report.set_aside = Some(aside);
                c.report.created = true;
                Ok(c)
            }
            other => other,
        }
    }

    fn try_open(path: &Path) -> Result<Catalog, IndexError> {
        let created = !path.exists()
            || std::fs::metadata(path)
                .map(|m| m.len() == 0)
                .unwrap_or(true);
        // The stamp is compared before SQLite opens the file (opening may create the log).
        let seen = crate::stamp::read(path);
        let as_stamped =
            seen.filter(|s| s.files_ok && crate::stamp::current(path) == Some(s.state));
        crate::db_file::prepare_private(path)?;
        let conn = Connection::open(path).db(path)?;
        crate::rank::register(&conn).db(path)?;
        let mut c = Catalog {
            conn,
            path: path.to_path_buf(),
            report: OpenReport {
                created,
                ..OpenReport::default()
            },
            trust: Trust {
                files_ok: std::cell::Cell::new(created || as_stamped.is_some()),
                fts_ok: std::cell::Cell::new(created || as_stamped.is_some_and(|s| s.fts_ok)),
                seen,
                stamp_on_drop: false,
                ino: 0,
            },
        };
        c.conn
            .busy_timeout(std::time::Duration::from_secs(30))
            .db(path)?;
        let mode: String = c
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .db(path)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(IndexError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("journal mode {mode}"),
            });
        }
        // No memory map: a command lives for milliseconds, and mapping the catalog cost it a
        // page fault per page read and the unmapping at exit (`ls --all --json` at 10,000
        // sessions: 88 -> 75-80 ms of CPU with reads instead; searches the same).
        c.conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536; PRAGMA mmap_size=0;")
            .db(path)?;
        if !c.trust.files_ok.get() {
            c.check_files_table()?;
            c.trust.files_ok.set(true);
            c.report.checked = true;
        }
        c.init_schema()?;
        {
            use std::os::unix::fs::MetadataExt;
            c.trust.ino = std::fs::metadata(path).at(path)?.ino();
        }
        c.trust.stamp_on_drop = true;
        // The whole file is checked once a day (about 0.15 s for the catalog of 1 GB of
        // sessions), and by `arbor index`.
        let now = now_ms();
        let checked: i64 = c
            .meta("checked_ms")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if created || checked == 0 {
            c.set_meta("checked_ms", &now.to_string())?;
        } else if now - checked > FULL_CHECK_EVERY_MS {
            c.check_integrity()?;
        }
        Ok(c)
    }

    /// [`Catalog::open`], falling back to a catalog in memory when the file cannot be used
    /// (an unwritable file or directory, an I/O or SQLite error): the reason is in
    /// `report.in_memory_because`. A file that is not arbor's catalog is still an error
    /// ([`IndexError::NotACatalog`]): the user named the wrong file, and must be told.
    pub fn open_or_memory(path: &Path) -> Result<Catalog, IndexError> {
        match Catalog::open(path) {
            Err(e @ (IndexError::Io { .. } | IndexError::Sqlite { .. })) => {
                let mut c = Catalog::in_memory()?;
                c.report.in_memory_because = Some(e.to_string());
                Ok(c)
            }
            other => other,
        }
    }

    /// Runs `work` on the catalog; if the catalog turns out to be damaged
    /// ([`IndexError::Corrupt`]), it is set aside ([`Catalog::recover`]), `on_recovery` is told,
    /// and `work` runs again on the new, empty catalog with `rebuilt = true`, so that work
    /// which reads the catalog's contents first rebuilds what it reads: the answer comes from
    /// the rebuilt catalog, never from the empty one.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut cat = arbor_index::Catalog::open(&dir.path().join("c.db")).unwrap();
    /// let n = cat
    ///     .recovering(|c, _rebuilt| c.file_count(), &mut |r| eprintln!("moved to {}", r.aside.display()))
    ///     .unwrap();
    /// assert_eq!(n, 0);
    /// ```
    pub fn recovering<T>(
        &mut self,
        mut work: impl FnMut(&mut Catalog, bool) -> Result<T, IndexError>,
        on_recovery: &mut dyn FnMut(&Recovery),
    ) -> Result<T, IndexError> {
        match work(self, false) {
            Err(IndexError::Corrupt { detail, .. }) => {
                let aside = self.recover()?;
                on_recovery(&Recovery { detail, aside });
                work(self, true)
            }
            r => r,
        }
    }

    /// A catalog in memory (when no file can be used): everything is indexed on each run.
    pub fn in_memory() -> Result<Catalog, IndexError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().db(&path)?;
        crate::rank::register(&conn).db(&path)?;
        let mut c = Catalog {
            conn,
            path,
            report: OpenReport {
                created: true,
                ..OpenReport::default()
            },
            trust: Trust::default(),
        };
        c.trust.files_ok.set(true);
        c.trust.fts_ok.set(true);
        c.init_schema()?;
        Ok(c)
    }

    fn init_schema(&mut self) -> Result<(), IndexError> {
        let c = self;
        let path = c.path.clone();
        let path = path.as_path();
        let version: Option<i64> = c
            .conn
            .query_row("SELECT value FROM meta WHERE key='schema'", [], |r| r.get::<_, String>(0))
            .optional()
            .or_else(|e| if matches!(e, rusqlite::Error::SqliteFailure(_, Some(ref m)) if m.starts_with("no such table")) { Ok(None) } else { Err(e) })
            .db(path)?
            .and_then(|v| v.parse().ok());
        if version != Some(SCHEMA_VERSION) {
            if version.is_some() {
                c.report.schema_reset = true;
            }
            c.conn.execute_batch(DROP).db(path)?;
            c.conn.execute_batch(SCHEMA).db(path)?;
            c.conn
                .execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?1)",
                    [SCHEMA_VERSION.to_string()],
                )
                .db(path)?;
            c.conn.execute_batch(FTS_TUNING).db(path)?;
        }
        // What decides whether a file needs work, in an index of its own: a refresh reads it
        // for every file of a directory, and the rows themselves are spread over the whole
        // file (3,400 pages at 10,000 sessions, against some 250 for this index).
        c.conn.execute_batch(FILES_FP_INDEX).db(path)?;
        let app_id: i64 = c
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .db(path)?;
        if app_id != i64::from(crate::db_file::CATALOG_APP_ID) {
            // Mark the file as arbor's, and put page 1 in the file itself (not only in the
            // WAL), where `identify` reads it.
            c.conn
                .execute_batch(&format!(
                    "PRAGMA application_id = {};",
                    crate::db_file::CATALOG_APP_ID
                ))
                .db(path)?;
            if path != Path::new(":memory:") {
                let _ = c
                    .conn
                    .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            }
        }
        Ok(())
    }

    /// SQLite's `quick_check` of the whole file (every page and b-tree read; indexes not
    /// cross-checked): a damaged file is reported as [`IndexError::Corrupt`]. Its cost grows
    /// with the catalog (about a second for the catalog of 10 GB of sessions), so `arbor index`
    /// runs it, and opening runs [`Catalog::check_files_table`].
    pub fn check_integrity(&self) -> Result<(), IndexError> {
        self.quick_check("PRAGMA quick_check")?;
        self.check_text_index()?;
        self.set_meta("checked_ms", &now_ms().to_string())
    }

    /// FTS5's own check of the text index (`'integrity-check'` with rank 0: every segment,
    /// term and position list of the index is read and checked against the index's own
    /// checksums, not against the texts). Garbage written over the index's pages leaves the
    /// b-trees intact, so `quick_check` does not see it, and a search then silently finds
    /// nothing: this does. Its cost grows with the index (measured in docs/security.md).
    pub fn check_text_index(&self) -> Result<(), IndexError> {
        match self.conn.execute(
            "INSERT INTO fts(fts, rank) VALUES('integrity-check', 0)",
            [],
        ) {
            Ok(_) => {
                self.trust.fts_ok.set(true);
                Ok(())
            }
            Err(e) if crate::error::is_corruption(&e) => Err(IndexError::Corrupt {
                path: self.path.clone(),
                detail: format!("the text index: {e}"),
            }),
            Err(e) => Err(e).db(&self.path),
        }
    }

    /// `quick_check` of the `files` table and its indexes only (what a listing reads; a few
    /// milliseconds): run on every open. The whole file is checked on open once a day, and
    /// damage elsewhere that SQLite reports when it reads it is handled the same way (the
    /// catalog is set aside and rebuilt).
    pub fn check_files_table(&self) -> Result<(), IndexError> {
        let has_files: bool = self
            .conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='files'",
                [],
                |_| Ok(()),
            )
            .optional()
            .db(&self.path)?
            .is_some();
        if !has_files {
            return self.quick_check("PRAGMA quick_check");
        }
        self.quick_check("PRAGMA quick_check(files)")
    }

    fn quick_check(&self, pragma: &str) -> Result<(), IndexError> {
        let mut st = self.conn.prepare(pragma).db(&self.path)?;
        let rows: Vec<String> = st
            .query_map([], |r| r.get(0))
            .db(&self.path)?
            .collect::<Result<_, _>>()
            .db(&self.path)?;
        if rows.len() == 1 && rows[0] == "ok" {
            Ok(())
        } else {
            Err(IndexError::Corrupt {
                path: self.path.clone(),
                detail: rows.join("; "),
            })
        }
    }

    /// Copies the write-ahead log into the database file (`wal_checkpoint(TRUNCATE)`).
    pub fn conn_checkpoint(&self) {
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }

    /// The catalog file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets the current catalog aside (after a [`IndexError::Corrupt`] error) and opens a new
    /// empty one in its place.
    pub fn recover(&mut self) -> Result<PathBuf, IndexError> {
        let path = self.path.clone();
        let fresh = Connection::open_in_memory().db(&path)?;
        drop(std::mem::replace(&mut self.conn, fresh));
        // This catalog's knowledge is of the damaged file: nothing is stamped from it.
        self.trust.stamp_on_drop = false;
        let aside = set_aside(&path)?;
        let mut c = Catalog::try_open(&path)?;
        c.report.set_aside = Some(aside.clone());
        c.report.created = true;
        *self = c;
        Ok(aside)
    }

    /// Empties the catalog (everything is indexed again on the next refresh).
    pub fn clear(&mut self) -> Result<(), IndexError> {
        let kinds = self.kinds()?;
        self.conn.execute_batch(DROP).db(&self.path)?;
        self.conn.execute_batch(SCHEMA).db(&self.path)?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?1)",
                [SCHEMA_VERSION.to_string()],
            )
            .db(&self.path)?;
        self.conn.execute_batch(FTS_TUNING).db(&self.path)?;
        self.set_meta("kinds", &kinds.to_setting())?;
        self.set_meta("epoch", &now_ms().to_string())?;
        self.conn.execute_batch("VACUUM").db(&self.path)?;
        Ok(())
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>, IndexError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key=?1", [key], |r| r.get(0))
            .optional()
            .db(&self.path)
    }

    pub(crate) fn set_meta(&self, key: &str, value: &str) -> Result<(), IndexError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .db(&self.path)?;
        Ok(())
    }

    /// What changes when the catalog is emptied ([`Catalog::clear`]) or replaced (set aside
    /// and created again): the file's inode and the time of the last emptying. A process that
    /// keeps the catalog fresh (the watcher) compares it to know that its rows are still there.
    pub fn epoch(&self) -> Result<(u64, String), IndexError> {
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(&self.path).map(|m| m.ino()).unwrap_or(0);
        Ok((ino, self.meta("epoch")?.unwrap_or_default()))
    }

    /// SQLite's `PRAGMA data_version` of this connection: it changes when another connection
    /// (another process) commits a change to the catalog, never for this connection's own
    /// writes. The watcher compares it to know that what it prepared from the rows still holds.
    pub fn data_version(&self) -> Result<i64, IndexError> {
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .db(&self.path)
    }

    /// What this catalog takes as checked without checking it again: `(files table, text
    /// index)`. Both hold for a file exactly as arbor left it after those checks (see the
    /// module `stamp`), for a new or in-memory catalog, and after the checks ran in this
    /// process; otherwise opening checks the files table and a search that finds fewer hits
    /// than its limit checks the text index.
    pub fn trusted(&self) -> (bool, bool) {
        (self.trust.files_ok.get(), self.trust.fts_ok.get())
    }

    /// The opt-in kinds this catalog indexes.
    pub fn kinds(&self) -> Result<IndexKinds, IndexError> {
        Ok(self
            .meta("kinds")?
            .map(|s| IndexKinds::from_setting(&s))
            .unwrap_or_default())
    }

    /// Makes the catalog index (at least) `want`; when that adds a kind, every file is indexed
    /// again on the next refresh. Returns whether it did.
    pub fn require_kinds(&mut self, want: IndexKinds) -> Result<bool, IndexError> {
        let have = self.kinds()?;
        let new = have.union(want);
        if new == have {
            return Ok(false);
        }
        self.clear()?;
        self.set_meta("kinds", &new.to_setting())?;
        Ok(true)
    }

    /// Number of files in the catalog.
    pub fn file_count(&self) -> Result<u64, IndexError> {
        self.conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .db(&self.path)
    }

    /// `allMessagesText` of a file: its user and assistant texts in file order, joined (WTF-8:
    /// lone surrogates kept).
    pub fn all_messages_text(&self, file: &Path) -> Result<JsStr, IndexError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT d.text FROM docs d JOIN files f ON f.fid = d.fid WHERE f.path = ?1 AND d.kind IN (1, 2) ORDER BY d.seq, d.id",
            )
            .db(&self.path)?;
        let texts: Vec<Vec<u8>> = st
            .query_map([file.to_string_lossy()], |r| Ok(wtf8(r, 0)?.0))
            .db(&self.path)?
            .collect::<Result<_, _>>()
            .db(&self.path)?;
        Ok(JsStr(texts.join(&b' ')))
    }

    /// Indexed texts of `file` with `seq` from `from` to `to` (inclusive), in file order, at
    /// most `limit`: what a preview shows around a search hit. Texts are WTF-8 read lossily.
    pub fn texts_near(
        &self,
        file: &Path,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<IndexedText>, IndexError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT d.seq, d.eid, d.kind, d.ts, d.text FROM docs d JOIN files f ON f.fid = d.fid \
                 WHERE f.path = ?1 AND d.seq BETWEEN ?2 AND ?3 ORDER BY d.seq, d.id LIMIT ?4",
            )
            .db(&self.path)?;
        let rows = st
            .query_map(
                rusqlite::params![file.to_string_lossy(), from, to, limit as i64],
                indexed_text,
            )
            .db(&self.path)?;
        rows.filter_map(|r| r.transpose())
            .collect::<Result<_, _>>()
            .db(&self.path)
    }

    /// Every indexed text of the files in the directories `dirs` (as [`crate::dir_key`] gives
    /// them), file by file in file order, until `f` returns `false`: for searches FTS5 cannot
    /// express (a regular expression).
    pub fn scan_texts(
        &self,
        dirs: &[String],
        f: &mut dyn FnMut(&Path, &IndexedText) -> bool,
    ) -> Result<(), IndexError> {
        if dirs.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=dirs.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT f.path, d.seq, d.eid, d.kind, d.ts, d.text FROM docs d JOIN files f ON f.fid = d.fid \
             WHERE f.dir IN ({}) ORDER BY d.fid, d.seq, d.id",
            marks.join(",")
        );
        let mut st = self.conn.prepare(&sql).db(&self.path)?;
        let mut rows = st
            .query(rusqlite::params_from_iter(dirs.iter()))
            .db(&self.path)?;
        while let Some(r) = rows.next().db(&self.path)? {
            let path: String = r.get(0).db(&self.path)?;
            let Some(kind) = crate::text::Kind::from_code(r.get(3).db(&self.path)?) else {
                continue;
            };
            let t = IndexedText {
                seq: r.get(1).db(&self.path)?,
                entry_id: r.get(2).db(&self.path)?,
                kind,
                timestamp: r.get(4).db(&self.path)?,
                text: wtf8(r, 5).db(&self.path)?.to_string_lossy().into_owned(),
            };
            if !f(Path::new(&path), &t) {
                break;
            }
        }
        Ok(())
    }

    /// The last `n` indexed texts of `file` (user and assistant text, summaries, names), in
    /// file order: a session's last turns, read from the catalog without opening the file.
    pub fn last_texts(&self, file: &Path, n: usize) -> Result<Vec<IndexedText>, IndexError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT d.seq, d.eid, d.kind, d.ts, d.text FROM docs d JOIN files f ON f.fid = d.fid \
                 WHERE f.path = ?1 AND d.kind IN (1, 2, 6, 7) ORDER BY d.seq DESC, d.id DESC LIMIT ?2",
            )
            .db(&self.path)?;
        let rows = st
            .query_map(
                rusqlite::params![file.to_string_lossy(), n as i64],
                indexed_text,
            )
            .db(&self.path)?;
        let mut v: Vec<IndexedText> = rows
            .filter_map(|r| r.transpose())
            .collect::<Result<_, _>>()
            .db(&self.path)?;
        v.reverse();
        Ok(v)
    }

    /// The listing of `dirs` as the catalog holds it, without looking at the files (what an
    /// interactive view shows at once, while [`Catalog::refresh_dirs`] runs elsewhere), in
    /// pi's order. Only what a list shows is read: `entries`, `labels`, `models` and `usage`
    /// are left empty.
    pub fn listed_as_stored(&self, dirs: &[PathBuf]) -> Result<Vec<Listed>, IndexError> {
        let mut out = Vec::new();
        for d in dirs {
            self.stored_rows("dir", &crate::dir_key(d), d, &mut out)?;
        }
        sort_like_pi(&mut out, dirs.len() > 1);
        Ok(out)
    }

    /// The rows of the sessions `files` (the catalog's keys, as [`Listed::file`] and a search
    /// hit's path give them) as [`Catalog::listed_as_stored`] reads them, without reading a
    /// whole directory's: what a page of search hits needs to name their sessions. A file
    /// the catalog does not hold is left out; the order is `files`'.
    pub fn listed_files(&self, files: &[PathBuf]) -> Result<Vec<Listed>, IndexError> {
        let mut out = Vec::new();
        for f in files {
            if let Some(d) = f.parent() {
                self.stored_rows("path", &f.to_string_lossy(), d, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Appends to `out` the rows of `files` whose column `column` (`dir` or `path`) is `key`,
    /// read as in the directory `d` ([`stored_row`]).
    fn stored_rows(
        &self,
        column: &str,
        key: &str,
        d: &std::path::Path,
        out: &mut Vec<Listed>,
    ) -> Result<(), IndexError> {
        let mut st = self
            .conn
            .prepare_cached(&format!("{STORED_ROW} WHERE {column}=?1"))
            .db(&self.path)?;
        let rows = st.query_map([key], |r| stored_row(r, d)).db(&self.path)?;
        for row in rows {
            if let Some(l) = row.db(&self.path)? {
                out.push(l);
            }
        }
        Ok(())
    }

    /// The files of the catalog whose session id starts with `prefix` (case-insensitive).
    pub fn files_with_id_prefix(&self, prefix: &str) -> Result<Vec<PathBuf>, IndexError> {
        let lower = prefix.to_lowercase();
        let mut st = self
            .conn
            .prepare("SELECT path, session_id FROM files WHERE session_id IS NOT NULL")
            .db(&self.path)?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .db(&self.path)?
            .collect::<Result<Vec<_>, _>>()
            .db(&self.path)?;
        Ok(rows
            .into_iter()
            .filter(|(_, id)| id.to_lowercase().starts_with(&lower))
            .map(|(p, _)| PathBuf::from(p))
            .collect())
    }
}

/// A JS string stored by [`wtf8_param`]: the column's bytes as they are (TEXT holding WTF-8,
/// which is UTF-8 except for lone surrogates).
pub(crate) fn wtf8(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<JsStr> {
    Ok(JsStr(r.get_ref(i)?.as_bytes()?.to_vec()))
}

/// [`wtf8`] of a column that may be NULL.
pub(crate) fn wtf8_opt(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<JsStr>> {
    let v = r.get_ref(i)?;
    if v == rusqlite::types::ValueRef::Null {
        return Ok(None);
    }
    Ok(Some(JsStr(v.as_bytes()?.to_vec())))
}

/// A JS string as a TEXT parameter, its WTF-8 bytes unchanged (SQLite stores TEXT without
/// checking it; FTS5's tokenizer reads a surrogate as a separator). Used for the listing's
/// texts so that a lone surrogate survives as pi keeps it (`rusqlite`'s `&str` parameters
/// would need valid UTF-8).
pub(crate) fn wtf8_param(s: &JsStr) -> rusqlite::types::ToSqlOutput<'_> {
    rusqlite::types::ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(&s.0))
}

/// A text of the catalog's search index, by where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedText {
    /// Position in the file (entries in file order).
    pub seq: i64,
    /// The entry it belongs to.
    pub entry_id: Option<String>,
    /// What kind of text.
    pub kind: crate::text::Kind,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// The text (a lone surrogate shown as U+FFFD).
    pub text: String,
}

/// One row of `seq, eid, kind, ts, text`; `None` for a kind this version does not know.
fn indexed_text(r: &Row<'_>) -> rusqlite::Result<Option<IndexedText>> {
    let Some(kind) = crate::text::Kind::from_code(r.get(2)?) else {
        return Ok(None);
    };
    Ok(Some(IndexedText {
        seq: r.get(0)?,
        entry_id: r.get(1)?,
        kind,
        timestamp: r.get(3)?,
        text: wtf8(r, 4)?.to_string_lossy().into_owned(),
    }))
}

/// The columns [`Catalog::listed_as_stored`] and [`Catalog::listed_files`] read, for
/// [`stored_row`].
const STORED_ROW: &str =
    "SELECT phase, id_json, cwd, parent_json, created_ms, header_ts_ms, sname, message_count, \
     first_message, last_activity, omp, session_id, slot_title, header_title, name, branches, \
     path, size, mtime_ns, version FROM files";

/// The [`InfoState`] in the ten columns of `r` from `at` (phase, id, cwd, parent, created,
/// header time, name, message count, first message, last activity: the `files` table's order).
fn info_state(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<InfoState> {
    Ok(InfoState {
        phase: Phase::from_code(r.get(at)?),
        id: r.get(at + 1)?,
        cwd: r.get(at + 2)?,
        parent_session_path: r.get(at + 3)?,
        created_ms: r.get(at + 4)?,
        header_ts_ms: r.get(at + 5)?,
        name: r.get(at + 6)?,
        message_count: r.get::<_, i64>(at + 7)? as u64,
        first_message: wtf8_opt(r, at + 8)?,
        last_activity: r.get(at + 9)?,
    })
}

/// One row of [`STORED_ROW`] of the directory `d` as a [`Listed`] (`None`: a row pi would not
/// list).
fn stored_row(r: &rusqlite::Row<'_>, d: &std::path::Path) -> rusqlite::Result<Option<Listed>> {
    let info = info_state(r, 0)?;
    let name: String = r.get(14)?;
    let mtime_ms = Stat {
        size: 0,
        mtime_ns: r.get(18)?,
        ino: 0,
        dev: 0,
    }
    .mtime_ms();
    let Some(info) = info.finish(
        &crate::refresh::node_join(d, &name),
        mtime_ms,
        JsStr(Vec::new()),
    ) else {
        return Ok(None);
    };
    let slot: Option<String> = r.get(12)?;
    let header: Option<String> = r.get(13)?;
    Ok(Some(Listed {
        info,
        file: PathBuf::from(r.get::<_, String>(16)?),
        size: r.get::<_, i64>(17)?.max(0) as u64,
        branches: r.get::<_, i64>(15)?.max(0) as u64,
        entries: 0,
        labels: 0,
        models: Vec::new(),
        usage: Usage::default(),
        title: slot.filter(|t| !t.is_empty()).or(header),
        omp: r.get::<_, i64>(10)? != 0,
        session_id: r.get(11)?,
        version: r.get(19)?,
        mtime_ms,
    }))
}
