//! [`SqliteStore`]: many sessions in one SQLite database file, one row per line.
use crate::schema::{SCHEMA_VERSION, SQLITE_BLOBS, SQLITE_SCHEMA, SQLITE_V3};
use arbor_core::entry::extract;
use arbor_store::backend::{
    check_lines, BackendError, Blobs, SessionMeta, SessionStore, SessionWriter, StoredSession,
};
use arbor_store::sqlite_file::Identity;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Sessions in a SQLite database (WAL, `synchronous=FULL`: an append is on disk when it
/// returns). Several processes may use the same file; the writer lease is a row of the
/// database, so one writer per session holds across them.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
    lease: Duration,
    /// Whether the sessions table has the `pushed_by` column (schema version 3; a store opened
    /// read-only may be older, and migrated by a writer while open).
    has_user: Arc<std::sync::atomic::AtomicBool>,
}

fn db_err(path: &Path) -> impl Fn(rusqlite::Error) -> BackendError + '_ {
    move |e| BackendError::Database {
        store: format!("sqlite:{}", path.display()),
        message: e.to_string(),
        source: Box::new(e),
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Who holds a lease, for messages: this machine and process.
pub(crate) fn holder() -> String {
    format!("{} pid {}", host_name(), std::process::id())
}

fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Whether a lease holder (as [`holder`] names it) is a process of this machine that no
/// longer exists: a writer killed while holding the lease, whose lease can be taken over at
/// once (its fence token is then stale, so it could not append even if it came back).
/// A holder on another machine, or a process id now reused, counts as alive: its lease
/// expires by itself.
pub(crate) fn holder_is_dead(who: &str) -> bool {
    let Some((host, pid)) = who.rsplit_once(" pid ") else {
        return false;
    };
    let Ok(pid) = pid.parse::<libc::pid_t>() else {
        return false;
    };
    if host != host_name() || pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists; no signal is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// SQLite `application_id` of arbor's sync store: "ARBS" (the catalog's is "ARBC").
pub const STORE_APP_ID: u32 = 0x4152_4253;

/// What a file at a store path is ([`arbor_store::sqlite_file::identify`] with
/// [`STORE_APP_ID`]; a store made before arbor set the id has the tables `arbor_schema`,
/// `sessions` and `entries`).
fn identify(path: &Path) -> Result<Identity, BackendError> {
    let legacy = |_: &Connection, tables: &[String]| {
        ["arbor_schema", "sessions", "entries"]
            .iter()
            .all(|t| tables.iter().any(|x| x == t))
    };
    arbor_store::sqlite_file::identify(path, STORE_APP_ID, &legacy).map_err(|e| {
        BackendError::Database {
            store: format!("sqlite:{}", path.display()),
            message: e.to_string(),
            source: Box::new(e),
        }
    })
}

/// Before arbor makes a new store at `path`: an empty file there, or an SQLite side file
/// (`-wal`, `-shm`, `-journal`, where SQLite would write the lines), that another user made is
/// refused (on a shared volume, whoever made it could read every session put there). An empty
/// file of the caller's own is made private (0600).
fn check_not_planted(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = arbor_store::euid();
    let mut names = vec![path.to_path_buf()];
    for side in ["-wal", "-shm", "-journal"] {
        names.push(arbor_store::paths::with_suffix(path, side));
    }
    for p in &names {
        if let Ok(m) = std::fs::symlink_metadata(p) {
            if m.uid() != me {
                return Err(format!(
                    "{} was made by another user (uid {}): arbor does not put sessions in a file \
                     someone else can read; nothing was written (remove it, or choose another path)",
                    p.display(),
                    m.uid()
                ));
            }
        }
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.is_file() && m.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Why an existing store was wanted at `path` and there is none (a reader creates nothing).
fn no_store_yet(path: &Path) -> String {
    if path.exists() {
        "is not an arbor sync store yet (it is empty): nothing to read".into()
    } else {
        "no such store (`sync push --to` creates one; nothing was created)".into()
    }
}

/// Brings the tables of the store at `path` to [`SCHEMA_VERSION`] (from 1: [`SQLITE_V3`]),
/// in one immediate transaction that reads the version again (two arbors opening an old
/// store at once migrate it once). A newer version is refused, an unknown older one too.
fn migrate(conn: &Connection, path: &Path) -> Result<(), BackendError> {
    let err = db_err(path);
    let refuse = |message: String| BackendError::Db {
        store: format!("sqlite:{}", path.display()),
        message,
    };
    conn.execute_batch("BEGIN IMMEDIATE").map_err(&err)?;
    let step = || -> Result<(), BackendError> {
        let v: i64 = conn
            .query_row("SELECT version FROM arbor_schema LIMIT 1", [], |r| r.get(0))
            .map_err(&err)?;
        match v {
            v if v == SCHEMA_VERSION => Ok(()),
            v if v > SCHEMA_VERSION => Err(refuse(format!(
                "schema version {v} is newer than this arbor's ({SCHEMA_VERSION}): upgrade arbor"
            ))),
            1 => {
                conn.execute_batch(SQLITE_V3).map_err(&err)?;
                conn.execute("UPDATE arbor_schema SET version = ?1", [SCHEMA_VERSION])
                    .map_err(&err)?;
                Ok(())
            }
            v => Err(refuse(format!(
                "schema version {v} has no migration to {SCHEMA_VERSION}"
            ))),
        }
    };
    match step() {
        Ok(()) => conn.execute_batch("COMMIT").map_err(&err),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl SqliteStore {
    /// Opens the store at `path`, creating it when missing (mode 0600, its directories 0700,
    /// never through a symlink), with the schema of this arbor version (an older schema is
    /// migrated; a newer one is refused). A file that is not arbor's store (another SQLite
    /// database, any other file) is refused and left as it is.
    ///
    /// # Errors
    /// [`BackendError::Db`] when the file is not arbor's store, cannot be opened, or its
    /// schema is newer.
    pub fn open(path: &Path) -> Result<SqliteStore, BackendError> {
        Self::open_with_lease(path, arbor_store::backend::memory::DEFAULT_LEASE)
    }

    /// [`SqliteStore::open`] of a store that must exist already (`sync pull`, `sync status`):
    /// a missing file, an empty one or another file is an error, and nothing is created.
    ///
    /// # Errors
    /// As [`SqliteStore::open`], and when there is no store at `path`.
    pub fn open_existing(path: &Path) -> Result<SqliteStore, BackendError> {
        Self::open_as(path, arbor_store::backend::memory::DEFAULT_LEASE, false)
    }

    /// [`SqliteStore::open`] with writer leases of `lease` past each append.
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open_with_lease(path: &Path, lease: Duration) -> Result<SqliteStore, BackendError> {
        Self::open_as(path, lease, true)
    }

    fn open_as(path: &Path, lease: Duration, create: bool) -> Result<SqliteStore, BackendError> {
        let refuse = |message: String| BackendError::Db {
            store: format!("sqlite:{}", path.display()),
            message,
        };
        match identify(path)? {
            Identity::Ours => {}
            Identity::Foreign(why) => {
                return Err(refuse(format!(
                "{why}; arbor keeps its sessions only in a store of its own (nothing was written)"
            )))
            }
            Identity::New if !create => return Err(refuse(no_store_yet(path))),
            Identity::New => {
                check_not_planted(path).map_err(refuse)?;
                arbor_store::sqlite_file::prepare_private(path)
                    .map_err(|e| refuse(arbor_store::symlink_refused(e).to_string()))?;
                // A symlink to nothing is not followed to create its target.
                if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                    return Err(refuse(
                        "is a symbolic link to nothing; arbor does not create its store through it"
                            .into(),
                    ));
                }
            }
        }
        let err = db_err(path);
        let conn = Connection::open(path).map_err(&err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(&err)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;",
        )
        .map_err(&err)?;
        let version: Option<i64> = conn
            .query_row("SELECT version FROM arbor_schema LIMIT 1", [], |r| r.get(0))
            .optional()
            .unwrap_or(None);
        if version.is_none() {
            conn.execute_batch(SQLITE_SCHEMA).map_err(&err)?;
        }
        if version != Some(SCHEMA_VERSION) {
            migrate(&conn, path)?;
        }
        conn.execute_batch(SQLITE_BLOBS).map_err(&err)?;
        // Marked as arbor's store (a store made before the mark gets it on its first open).
        let app_id: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(&err)?;
        if app_id != i64::from(STORE_APP_ID) {
            conn.execute_batch(&format!("PRAGMA application_id = {STORE_APP_ID}"))
                .map_err(&err)?;
        }
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path: path.to_path_buf(),
            lease,
            has_user: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }

    /// The existing store at `path` opened **read-only** (`SQLITE_OPEN_READ_ONLY`: nothing of
    /// the file is changed, not its journal mode, tables, application id or schema version),
    /// for a reader that must never write to it (`arbor serve --from sqlite:PATH`). A store of
    /// an older schema is read as it is (without version 3's user column, every session's
    /// user is unknown); a newer one is refused. Its writes fail.
    ///
    /// # Errors
    /// [`BackendError::Db`] when there is no store at `path`, the file is not arbor's store,
    /// or its schema is newer.
    pub fn open_read_only(path: &Path) -> Result<SqliteStore, BackendError> {
        let refuse = |message: String| BackendError::Db {
            store: format!("sqlite:{}", path.display()),
            message,
        };
        match identify(path)? {
            Identity::Ours => {}
            Identity::Foreign(why) => {
                return Err(refuse(format!("{why}; not an arbor sync store")));
            }
            Identity::New => return Err(refuse(no_store_yet(path))),
        }
        let err = db_err(path);
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(&err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(&err)?;
        let version: i64 = conn
            .query_row("SELECT version FROM arbor_schema LIMIT 1", [], |r| r.get(0))
            .optional()
            .map_err(&err)?
            .unwrap_or(0);
        if version > SCHEMA_VERSION {
            return Err(refuse(format!(
                "schema version {version} is newer than this arbor's ({SCHEMA_VERSION}): upgrade arbor"
            )));
        }
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path: path.to_path_buf(),
            lease: arbor_store::backend::memory::DEFAULT_LEASE,
            has_user: Arc::new(std::sync::atomic::AtomicBool::new(version >= 3)),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn name(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

fn insert_lines(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    from: u64,
    lines: &[&[u8]],
) -> rusqlite::Result<()> {
    let mut st = tx.prepare_cached(
        "INSERT INTO entries(session_id, seq, line, entry_id, parent_id, type, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for (k, l) in lines.iter().enumerate() {
        let x = extract(l);
        st.execute(params![
            id,
            (from + k as u64) as i64,
            l,
            x.id,
            x.parent_id,
            x.etype,
            x.timestamp
        ])?;
    }
    Ok(())
}

fn byte_len(lines: &[&[u8]]) -> i64 {
    lines.iter().map(|l| l.len() as i64 + 1).sum()
}

impl SessionStore for SqliteStore {
    fn describe(&self) -> String {
        self.name()
    }

    fn create(&self, meta: &SessionMeta, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.name(), lines)?;
        let err = db_err(&self.path);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let exists: bool = tx
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [&meta.id], |_| {
                Ok(true)
            })
            .optional()
            .map_err(&err)?
            .unwrap_or(false);
        if exists {
            return Err(BackendError::Exists {
                store: self.name(),
                id: meta.id.clone(),
            });
        }
        let header = arbor_core::header::locate(lines.iter().copied())
            .map(|(_, l, _)| l)
            .unwrap_or_default();
        tx.execute(
            "INSERT INTO sessions(id, cwd, created, header, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms, fence, pushed_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13)",
            params![
                meta.id,
                meta.cwd,
                meta.created,
                header,
                meta.name,
                meta.parent_session,
                meta.tool,
                meta.machine,
                meta.source_path,
                lines.len() as i64,
                byte_len(lines),
                now_ms(),
                meta.user
            ],
        )
        .map_err(&err)?;
        insert_lines(&tx, &meta.id, 0, lines).map_err(&err)?;
        tx.commit().map_err(&err)
    }

    fn read_into(
        &self,
        id: &str,
        from: u64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), BackendError> {
        let err = db_err(&self.path);
        let conn = self.conn();
        let exists: bool = conn
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(true))
            .optional()
            .map_err(&err)?
            .unwrap_or(false);
        if !exists {
            return Err(BackendError::NoSession {
                store: self.name(),
                id: id.to_string(),
            });
        }
        let mut st = conn
            .prepare_cached(
                "SELECT line FROM entries WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq",
            )
            .map_err(&err)?;
        // Row by row into `out`: one line in memory at a time.
        let mut rows = st
            .query(params![id, i64::try_from(from).unwrap_or(i64::MAX)])
            .map_err(&err)?;
        let name = self.name();
        while let Some(row) = rows.next().map_err(&err)? {
            let line = row.get_ref(0).map_err(&err)?;
            let line = line.as_blob().map_err(|e| err(e.into()))?;
            arbor_store::backend::write_line(&name, out, line)?;
        }
        Ok(())
    }

    fn read_range(&self, id: &str, from: u64, to: u64) -> Result<Vec<Vec<u8>>, BackendError> {
        let err = db_err(&self.path);
        let conn = self.conn();
        let mut st = conn
            .prepare_cached(
                "SELECT line FROM entries WHERE session_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
            )
            .map_err(&err)?;
        let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let rows = st
            .query_map(params![id, big(from), big(to)], |r| r.get::<_, Vec<u8>>(0))
            .map_err(&err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(&err)
    }

    fn list(&self) -> Result<Vec<StoredSession>, BackendError> {
        use std::sync::atomic::Ordering;
        let err = db_err(&self.path);
        let conn = self.conn();
        // A store read before version 3: looked at again, a writer may have migrated it.
        if !self.has_user.load(Ordering::Relaxed) {
            let v: i64 = conn
                .query_row("SELECT version FROM arbor_schema LIMIT 1", [], |r| r.get(0))
                .map_err(&err)?;
            if v >= 3 {
                self.has_user.store(true, Ordering::Relaxed);
            }
        }
        let user = if self.has_user.load(Ordering::Relaxed) {
            "pushed_by"
        } else {
            "NULL"
        };
        let mut st = conn
            .prepare(&format!(
                "SELECT id, cwd, created, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms, {user} FROM sessions ORDER BY modified_ms DESC, id",
            ))
            .map_err(&err)?;
        let rows = st
            .query_map([], |r| {
                Ok(StoredSession {
                    meta: SessionMeta {
                        id: r.get(0)?,
                        cwd: r.get(1)?,
                        created: r.get(2)?,
                        name: r.get(3)?,
                        parent_session: r.get(4)?,
                        tool: r.get(5)?,
                        machine: r.get(6)?,
                        user: r.get(11)?,
                        source_path: r.get(7)?,
                    },
                    lines: r.get::<_, i64>(8)? as u64,
                    bytes: r.get::<_, i64>(9)? as u64,
                    modified_ms: r.get(10)?,
                })
            })
            .map_err(&err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(&err)
    }

    fn writer(
        &self,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Box<dyn SessionWriter>, BackendError> {
        let err = db_err(&self.path);
        let deadline = wait.map(|w| Instant::now() + w);
        let me = holder();
        loop {
            let now = now_ms();
            let taken = {
                let conn = self.conn();
                conn.query_row(
                    "UPDATE sessions SET fence = fence + 1, holder = ?2, lease_until_ms = ?3
                     WHERE id = ?1 AND (lease_until_ms IS NULL OR lease_until_ms < ?4)
                     RETURNING fence, lines",
                    params![id, me, now + self.lease.as_millis() as i64, now],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
                .optional()
                .map_err(&err)?
            };
            if let Some((fence, lines)) = taken {
                return Ok(Box::new(SqliteWriter {
                    store: self.clone(),
                    id: id.to_string(),
                    fence: fence as u64,
                    len: lines as u64,
                }));
            }
            let held: Option<Option<String>> = self
                .conn()
                .query_row("SELECT holder FROM sessions WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(&err)?;
            let Some(who) = held else {
                return Err(BackendError::NoSession {
                    store: self.name(),
                    id: id.to_string(),
                });
            };
            if let Some(dead) = who.as_deref().filter(|w| holder_is_dead(w)) {
                // Taken over only from that same dead holder (another taker may be quicker).
                let taken = self
                    .conn()
                    .execute(
                        "UPDATE sessions SET lease_until_ms = NULL WHERE id = ?1 AND holder = ?2",
                        params![id, dead],
                    )
                    .map_err(&err)?;
                if taken > 0 {
                    continue;
                }
            }
            match deadline {
                Some(d) if Instant::now() < d => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    return Err(BackendError::Busy {
                        store: self.name(),
                        id: id.to_string(),
                        holder: who.unwrap_or_default(),
                    })
                }
            }
        }
    }

    fn set_name(&self, id: &str, name: &str) -> Result<(), BackendError> {
        let n = self
            .conn()
            .execute(
                "UPDATE sessions SET name = ?2 WHERE id = ?1",
                params![id, name],
            )
            .map_err(db_err(&self.path))?;
        if n == 0 {
            return Err(BackendError::NoSession {
                store: self.name(),
                id: id.to_string(),
            });
        }
        Ok(())
    }

    fn delete(&self, id: &str) -> Result<(), BackendError> {
        let err = db_err(&self.path);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let row: Option<(Option<String>, Option<i64>)> = tx
            .query_row(
                "SELECT holder, lease_until_ms FROM sessions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(&err)?;
        let Some((who, until)) = row else {
            return Err(BackendError::NoSession {
                store: self.name(),
                id: id.to_string(),
            });
        };
        if until.is_some_and(|u| u >= now_ms()) {
            return Err(BackendError::Busy {
                store: self.name(),
                id: id.to_string(),
                holder: who.unwrap_or_default(),
            });
        }
        tx.execute("DELETE FROM entries WHERE session_id = ?1", [id])
            .map_err(&err)?;
        tx.execute("DELETE FROM sessions WHERE id = ?1", [id])
            .map_err(&err)?;
        tx.commit().map_err(&err)
    }
}

impl Blobs for SqliteStore {
    fn has_blob(&self, hash: &str) -> Result<bool, BackendError> {
        self.conn()
            .query_row("SELECT 1 FROM blobs WHERE hash = ?1", [hash], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .map_err(db_err(&self.path))
    }

    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), BackendError> {
        arbor_store::backend::check_blob(&self.name(), hash, bytes)?;
        self.conn()
            .execute(
                "INSERT INTO blobs (hash, bytes) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING",
                params![hash, bytes],
            )
            .map(|_| ())
            .map_err(db_err(&self.path))
    }

    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.conn()
            .query_row("SELECT bytes FROM blobs WHERE hash = ?1", [hash], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db_err(&self.path))
    }
}

/// The writer of a [`SqliteStore`] session.
#[derive(Debug)]
struct SqliteWriter {
    store: SqliteStore,
    id: String,
    fence: u64,
    len: u64,
}

impl SqliteWriter {
    /// In one immediate transaction: checks the fence and the length, runs `change`, and
    /// renews the lease.
    fn with_lease(&mut self, replace: bool, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.store.name(), lines)?;
        let path = self.store.path.clone();
        let err = db_err(&path);
        let mut conn = self.store.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let row: Option<(i64, i64)> = tx
            .query_row(
                "SELECT fence, lines FROM sessions WHERE id = ?1",
                [&self.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(&err)?;
        let fenced = || BackendError::Fenced {
            store: format!("sqlite:{}", path.display()),
            id: self.id.clone(),
            fence: self.fence,
        };
        let Some((fence, n)) = row else {
            return Err(fenced());
        };
        if fence as u64 != self.fence {
            return Err(fenced());
        }
        if n as u64 != self.len {
            return Err(BackendError::Moved {
                store: format!("sqlite:{}", path.display()),
                id: self.id.clone(),
                expected: self.len,
                found: n as u64,
            });
        }
        let until = now_ms() + self.store.lease.as_millis() as i64;
        if replace {
            tx.execute("DELETE FROM entries WHERE session_id = ?1", [&self.id])
                .map_err(&err)?;
            insert_lines(&tx, &self.id, 0, lines).map_err(&err)?;
            tx.execute(
                "UPDATE sessions SET lines = ?2, bytes = ?3, modified_ms = ?4, lease_until_ms = ?5 WHERE id = ?1",
                params![self.id, lines.len() as i64, byte_len(lines), now_ms(), until],
            )
            .map_err(&err)?;
        } else {
            insert_lines(&tx, &self.id, self.len, lines).map_err(&err)?;
            tx.execute(
                "UPDATE sessions SET lines = lines + ?2, bytes = bytes + ?3, modified_ms = ?4, lease_until_ms = ?5 WHERE id = ?1",
                params![self.id, lines.len() as i64, byte_len(lines), now_ms(), until],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        self.len = if replace {
            lines.len() as u64
        } else {
            self.len + lines.len() as u64
        };
        Ok(())
    }
}

impl SessionWriter for SqliteWriter {
    fn len(&self) -> u64 {
        self.len
    }

    fn fence(&self) -> u64 {
        self.fence
    }

    fn append(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        self.with_lease(false, lines)
    }

    fn replace_all(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        self.with_lease(true, lines)
    }
}

impl Drop for SqliteWriter {
    fn drop(&mut self) {
        // Released only if still ours; an error here leaves the lease to expire.
        let _ = self.store.conn().execute(
            "UPDATE sessions SET holder = NULL, lease_until_ms = NULL WHERE id = ?1 AND fence = ?2",
            params![self.id, self.fence as i64],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database failure keeps the client's error as its cause (`source`), with the same
    /// text as before for people.
    #[test]
    fn a_database_error_keeps_its_cause() {
        let e = db_err(Path::new("/s.db"))(rusqlite::Error::QueryReturnedNoRows);
        assert_eq!(
            e.to_string(),
            format!("sqlite:/s.db: {}", rusqlite::Error::QueryReturnedNoRows)
        );
        let cause = std::error::Error::source(&e).expect("a cause");
        assert!(
            cause.downcast_ref::<rusqlite::Error>().is_some(),
            "{cause:?}"
        );
    }
}
