//! [`PgStore`]: sessions in PostgreSQL, one row per line (the same tables as SQLite's, named
//! `arbor_*` so that they can share a database with others).
use crate::conninfo::{redact_url, scrub};
use crate::sqlite::{holder, now_ms};
use arbor_core::entry::extract;
use arbor_store::backend::{
    check_lines, BackendError, Blobs, SessionMeta, SessionStore, SessionWriter, StoredSession,
};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::{Client, NoTls};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// PostgreSQL's tables (version 1).
const PG_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS arbor_schema (version integer NOT NULL);
INSERT INTO arbor_schema (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM arbor_schema);
CREATE TABLE IF NOT EXISTS arbor_sessions (
    id text PRIMARY KEY,
    cwd text NOT NULL,
    created text NOT NULL,
    header bytea NOT NULL,
    name text,
    parent_session text,
    tool text NOT NULL,
    machine text,
    source_path text,
    lines bigint NOT NULL,
    bytes bigint NOT NULL,
    modified_ms bigint NOT NULL,
    fence bigint NOT NULL DEFAULT 0,
    holder text,
    lease_until_ms bigint
);
CREATE TABLE IF NOT EXISTS arbor_entries (
    session_id text NOT NULL REFERENCES arbor_sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    line bytea NOT NULL,
    entry_id text,
    parent_id text,
    type text,
    timestamp text,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS arbor_entries_by_id ON arbor_entries (session_id, entry_id);
CREATE INDEX IF NOT EXISTS arbor_entries_by_parent ON arbor_entries (session_id, parent_id);
CREATE INDEX IF NOT EXISTS arbor_sessions_by_cwd ON arbor_sessions (cwd, modified_ms);
"#;

/// PostgreSQL's schema version: 1, the tables; 2, lines compressed with lz4 (when the
/// server has it) instead of pglz, which made reading a 100 MB session back half as fast,
/// the lease holder's server process (`holder_backend`), so that the lease of a killed
/// writer is free as soon as its connection is gone, and omp's blobs (`arbor_blobs`); 3, the
/// OS user who pushed each session (`arbor_sessions.pushed_by`, NULL for older rows).
pub const PG_SCHEMA_VERSION: i32 = 3;

enum Migrate {
    Pg(postgres::Error),
    Newer(i32),
}

impl From<postgres::Error> for Migrate {
    fn from(e: postgres::Error) -> Migrate {
        Migrate::Pg(e)
    }
}

/// Creates the tables or brings them to [`PG_SCHEMA_VERSION`], in one transaction under an
/// advisory lock (two arbors connecting to a new database at once do it once).
/// The schema version a database holds (0: no tables yet).
fn schema_version(c: &mut impl postgres::GenericClient) -> Result<i32, postgres::Error> {
    let has_table: bool = c
        .query_one("SELECT to_regclass('arbor_schema') IS NOT NULL", &[])?
        .get(0);
    if !has_table {
        return Ok(0);
    }
    Ok(
        c.query_opt("SELECT version FROM arbor_schema LIMIT 1", &[])?
            .map_or(0, |r| r.get(0)),
    )
}

fn migrate(client: &mut Client) -> Result<(), Migrate> {
    // Up to date, the common case: no transaction, no lock.
    match schema_version(client)? {
        v if v == PG_SCHEMA_VERSION => return Ok(()),
        v if v > PG_SCHEMA_VERSION => return Err(Migrate::Newer(v)),
        _ => {}
    }
    let mut tx = client.transaction()?;
    // The lock's key: "arbor" in ASCII. Read again under it: another arbor may have
    // migrated meanwhile.
    tx.execute("SELECT pg_advisory_xact_lock(435711701362)", &[])?;
    let mut version = schema_version(&mut tx)?;
    if version > PG_SCHEMA_VERSION {
        return Err(Migrate::Newer(version));
    }
    if version < 1 {
        tx.batch_execute(PG_SCHEMA)?;
        version = 1;
    }
    if version < 2 {
        // lz4 exists from PostgreSQL 14 on, in servers built with it; without it the lines
        // stay pglz-compressed (the same bytes, read back more slowly).
        {
            let mut sp = tx.savepoint("lz4")?;
            if sp
                .batch_execute("ALTER TABLE arbor_entries ALTER COLUMN line SET COMPRESSION lz4")
                .is_ok()
            {
                sp.commit()?;
            }
        }
        // The server process of the lease holder's connection: when it is gone (the holder
        // was killed, its connection closed), the lease is free at once.
        tx.batch_execute(
            "ALTER TABLE arbor_sessions ADD COLUMN IF NOT EXISTS holder_backend integer",
        )?;
        // omp's blobs (images, large outputs) that sessions name by hash.
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS arbor_blobs (hash text PRIMARY KEY, bytes bytea NOT NULL)",
        )?;
    }
    if version < 3 {
        tx.batch_execute("ALTER TABLE arbor_sessions ADD COLUMN IF NOT EXISTS pushed_by text")?;
    }
    if version < PG_SCHEMA_VERSION {
        tx.execute(
            "UPDATE arbor_schema SET version = $1",
            &[&PG_SCHEMA_VERSION],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// Lines above which an append goes through `COPY` instead of `INSERT`.
const COPY_FROM: usize = 32;

/// Sessions in a PostgreSQL database. The writer lease is a row of `arbor_sessions` (fence
/// token, holder, expiry), checked under `SELECT … FOR UPDATE` in the transaction of every
/// append, so a writer whose lease was taken over cannot append. The lease of a writer whose
/// connection is gone (the process was killed) is free at once; otherwise it lasts its
/// term past the last append.
#[derive(Clone)]
pub struct PgStore {
    client: Arc<Mutex<Client>>,
    name: String,
    lease: Duration,
    /// Whether `arbor_sessions` has the `pushed_by` column (schema version 3; a store
    /// connected read-only may be older, and migrated by a writer while connected).
    has_user: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("name", &self.name).finish()
    }
}

fn pg_err(name: &str) -> impl Fn(postgres::Error) -> BackendError + '_ {
    move |e| match e.as_db_error() {
        // The server's message; its error is not kept as a cause, whose text ("db error:
        // ERROR: ...") would be printed again after it.
        Some(d) => BackendError::Db {
            store: name.to_string(),
            message: d.message().to_string(),
        },
        // The client's own error and its causes (a TLS handshake names why it failed), the
        // error kept as the cause.
        None => {
            let mut m = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                let text = c.to_string();
                if !m.contains(&text) {
                    m.push_str(": ");
                    m.push_str(&text);
                }
                cause = c.source();
            }
            BackendError::Database {
                store: name.to_string(),
                message: m,
                source: Box::new(e),
            }
        }
    }
}

/// The password of a connection from `$PGPASSWORD` or the password file (`$PGPASSFILE`, else
/// `~/.pgpass`: `host:port:database:user:password` lines, `*` matching anything).
fn password_for(cfg: &postgres::Config) -> Option<Vec<u8>> {
    if let Ok(p) = std::env::var("PGPASSWORD") {
        return Some(p.into_bytes());
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| arbor_store::paths::home_dir().join(".pgpass"));
    let text = std::fs::read_to_string(file).ok()?;
    let host = cfg
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(s) => s.clone(),
            postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = cfg.get_ports().first().copied().unwrap_or(5432).to_string();
    let db = cfg.get_dbname().unwrap_or("").to_string();
    let user = cfg.get_user().unwrap_or("").to_string();
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let f: Vec<&str> = l.splitn(5, ':').collect();
        let ok = |i: usize, v: &str| f.get(i).is_some_and(|x| *x == "*" || *x == v);
        (f.len() == 5 && ok(0, &host) && ok(1, &port) && ok(2, &db) && ok(3, &user))
            .then(|| f[4].as_bytes().to_vec())
    })
}

/// The environment variable naming the certificates to trust instead of the system's
/// (PEM; libpq's name for it).
pub const ROOT_CERT_ENV: &str = "PGSSLROOTCERT";

/// A rustls connector trusting the certificates of `$PGSSLROOTCERT` when it is set (as libpq
/// does), else the system's root certificates.
fn tls(name: &str) -> Result<tokio_postgres_rustls::MakeRustlsConnect, BackendError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    match std::env::var_os(ROOT_CERT_ENV).filter(|v| !v.is_empty()) {
        Some(file) => {
            let bad = |e: String| BackendError::Db {
                store: name.to_string(),
                message: format!("{ROOT_CERT_ENV}={}: {e}", file.to_string_lossy()),
            };
            for cert in CertificateDer::pem_file_iter(&file).map_err(|e| bad(e.to_string()))? {
                roots
                    .add(cert.map_err(|e| bad(e.to_string()))?)
                    .map_err(|e| bad(e.to_string()))?;
            }
            if roots.is_empty() {
                return Err(bad("no certificate in it".into()));
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| BackendError::Db {
        store: name.to_string(),
        message: format!("TLS: {e}"),
    })?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PgStore {
    /// Connects to the database a `postgres://` URL (or `host=… dbname=…` string) names, with
    /// the password from the URL, `$PGPASSWORD` or the password file, and creates the tables
    /// when missing (a schema newer than this arbor is refused).
    ///
    /// # Errors
    /// [`BackendError::Db`] when the connection or the schema fails (the message never holds
    /// the password).
    pub fn connect(url: &str) -> Result<PgStore, BackendError> {
        Self::connect_with_lease(url, arbor_store::backend::memory::DEFAULT_LEASE)
    }

    /// [`PgStore::connect`] with writer leases of `lease` past each append.
    ///
    /// # Errors
    /// As [`PgStore::connect`].
    pub fn connect_with_lease(url: &str, lease: Duration) -> Result<PgStore, BackendError> {
        // A connection error's text is scrubbed of the URL's secrets, and its cause (whose
        // text is not) is dropped.
        Self::connect_inner(url, lease, false).map_err(|e| scrubbed(e, url))
    }

    /// The database a URL names, connected as [`PgStore::connect`] does (the same URL
    /// parsing, password file and TLS) but **read-only**: the session's transactions are
    /// read-only (`default_transaction_read_only`, so that the server refuses any write),
    /// and the schema is never created or migrated. A database of an older schema is read as
    /// it is (before version 3 every session's user is unknown); one without arbor's tables,
    /// or of a newer schema, is refused. A role with only `SELECT` rights on the `arbor_*`
    /// tables is enough (`arbor serve --from`).
    ///
    /// # Errors
    /// As [`PgStore::connect`], and when the database holds no arbor store.
    pub fn connect_read_only(url: &str) -> Result<PgStore, BackendError> {
        Self::connect_inner(url, arbor_store::backend::memory::DEFAULT_LEASE, true)
            .map_err(|e| scrubbed(e, url))
    }

    fn connect_inner(url: &str, lease: Duration, read_only: bool) -> Result<PgStore, BackendError> {
        let name = redact_url(url);
        let mut cfg: postgres::Config =
            url.parse().map_err(|e: postgres::Error| BackendError::Db {
                store: name.clone(),
                message: e.to_string(),
            })?;
        if cfg.get_password().is_none() {
            if let Some(p) = password_for(&cfg) {
                cfg.password(p);
            }
        }
        if cfg.get_user().is_none() {
            if let Ok(u) = std::env::var("PGUSER").or_else(|_| std::env::var("USER")) {
                cfg.user(&u);
            }
        }
        // TLS when the server asks for it (sslmode=prefer, the default, tries it over TCP;
        // sslmode=require insists; a Unix socket has none), with the system's root
        // certificates.
        let unix_only = cfg
            .get_hosts()
            .iter()
            .all(|h| matches!(h, postgres::config::Host::Unix(_)));
        let mut client = match cfg.get_ssl_mode() {
            // (no certificates loaded for a socket that never uses them)
            postgres::config::SslMode::Disable => cfg.connect(NoTls),
            _ if unix_only && !cfg.get_hosts().is_empty() => cfg.connect(NoTls),
            _ => cfg.connect(tls(&name)?),
        }
        .map_err(pg_err(&name))?;
        if read_only {
            client
                .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(pg_err(&name))?;
            let version = schema_version(&mut client).map_err(pg_err(&name))?;
            if version > PG_SCHEMA_VERSION {
                return Err(BackendError::Db {
                    store: name,
                    message: format!(
                        "schema version {version} is newer than this arbor's ({PG_SCHEMA_VERSION}): upgrade arbor"
                    ),
                });
            }
            if version < 1 {
                return Err(BackendError::Db {
                    store: name,
                    message: "holds no arbor sync store (no arbor_schema table): nothing to read"
                        .into(),
                });
            }
            return Ok(PgStore {
                client: Arc::new(Mutex::new(client)),
                name,
                lease,
                has_user: Arc::new(std::sync::atomic::AtomicBool::new(version >= 3)),
            });
        }
        migrate(&mut client).map_err(|e| match e {
            Migrate::Pg(e) => pg_err(&name)(e),
            Migrate::Newer(v) => BackendError::Db {
                store: name.clone(),
                message: format!(
                    "schema version {v} is newer than this arbor's ({PG_SCHEMA_VERSION}): upgrade arbor"
                ),
            },
        })?;
        Ok(PgStore {
            client: Arc::new(Mutex::new(client)),
            name,
            lease,
            has_user: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }

    fn client(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The size of session `id` as stored; [`BackendError::NoSession`] when there is none.
    fn stored_bytes(
        &self,
        tx: &mut postgres::Transaction<'_>,
        id: &str,
    ) -> Result<i64, BackendError> {
        tx.query_opt("SELECT bytes FROM arbor_sessions WHERE id = $1", &[&id])
            .map_err(pg_err(&self.name))?
            .map(|r| r.get(0))
            .ok_or_else(|| BackendError::NoSession {
                store: self.name.clone(),
                id: id.to_string(),
            })
    }
}

/// A connection error's text scrubbed of the URL's secrets, its cause (whose text is not)
/// dropped.
fn scrubbed(e: BackendError, url: &str) -> BackendError {
    match e {
        BackendError::Db { store, message } | BackendError::Database { store, message, .. } => {
            BackendError::Db {
                store,
                message: scrub(&message, url),
            }
        }
        other => other,
    }
}

fn insert_lines(
    tx: &mut postgres::Transaction<'_>,
    id: &str,
    from: u64,
    lines: &[&[u8]],
) -> Result<(), postgres::Error> {
    if lines.len() < COPY_FROM {
        let st = tx.prepare(
            "INSERT INTO arbor_entries (session_id, seq, line, entry_id, parent_id, type, timestamp) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )?;
        for (k, l) in lines.iter().enumerate() {
            let x = extract(l);
            tx.execute(
                &st,
                &[
                    &id,
                    &((from + k as u64) as i64),
                    l,
                    &x.id,
                    &x.parent_id,
                    &x.etype,
                    &x.timestamp,
                ],
            )?;
        }
        return Ok(());
    }
    let sink = tx.copy_in(
        "COPY arbor_entries (session_id, seq, line, entry_id, parent_id, type, timestamp) FROM STDIN BINARY",
    )?;
    let types = [
        Type::TEXT,
        Type::INT8,
        Type::BYTEA,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
    ];
    let mut w = BinaryCopyInWriter::new(sink, &types);
    for (k, l) in lines.iter().enumerate() {
        let x = extract(l);
        let seq = (from + k as u64) as i64;
        w.write(&[&id, &seq, l, &x.id, &x.parent_id, &x.etype, &x.timestamp])?;
    }
    w.finish()?;
    Ok(())
}

fn byte_len(lines: &[&[u8]]) -> i64 {
    lines.iter().map(|l| l.len() as i64 + 1).sum()
}

impl SessionStore for PgStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn create(&self, meta: &SessionMeta, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.name, lines)?;
        let err = pg_err(&self.name);
        let mut c = self.client();
        let mut tx = c.transaction().map_err(&err)?;
        let header = arbor_core::header::locate(lines.iter().copied())
            .map(|(_, l, _)| l)
            .unwrap_or_default();
        let n = tx
            .execute(
                "INSERT INTO arbor_sessions (id, cwd, created, header, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms, fence, pushed_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, $13) ON CONFLICT (id) DO NOTHING",
                &[
                    &meta.id,
                    &meta.cwd,
                    &meta.created,
                    &header,
                    &meta.name,
                    &meta.parent_session,
                    &meta.tool,
                    &meta.machine,
                    &meta.source_path,
                    &(lines.len() as i64),
                    &byte_len(lines),
                    &now_ms(),
                    &meta.user,
                ],
            )
            .map_err(&err)?;
        if n == 0 {
            return Err(BackendError::Exists {
                store: self.name.clone(),
                id: meta.id.clone(),
            });
        }
        insert_lines(&mut tx, &meta.id, 0, lines).map_err(&err)?;
        tx.commit().map_err(&err)
    }

    fn read_range(&self, id: &str, from: u64, to: u64) -> Result<Vec<Vec<u8>>, BackendError> {
        let err = pg_err(&self.name);
        let mut c = self.client();
        let mut tx = c
            .build_transaction()
            .read_only(true)
            .start()
            .map_err(&err)?;
        self.stored_bytes(&mut tx, id)?;
        let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let rows = tx
            .query(
                "SELECT line FROM arbor_entries WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq",
                &[&id, &big(from), &big(to)],
            )
            .map_err(&err)?;
        tx.commit().map_err(&err)?;
        Ok(rows.into_iter().map(|r| r.get::<_, Vec<u8>>(0)).collect())
    }

    fn read_into(
        &self,
        id: &str,
        from: u64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), BackendError> {
        use postgres::fallible_iterator::FallibleIterator;
        let err = pg_err(&self.name);
        let mut c = self.client();
        let mut tx = c
            .build_transaction()
            .read_only(true)
            .start()
            .map_err(&err)?;
        self.stored_bytes(&mut tx, id)?;
        let from = i64::try_from(from).unwrap_or(i64::MAX);
        // Rows as they arrive, straight into `out`: no vector per line, no whole session.
        let mut rows = tx
            .query_raw(
                "SELECT line FROM arbor_entries WHERE session_id = $1 AND seq >= $2 ORDER BY seq",
                [&id as &dyn postgres::types::ToSql, &from],
            )
            .map_err(&err)?;
        while let Some(row) = rows.next().map_err(&err)? {
            let line: &[u8] = row.try_get(0).map_err(&err)?;
            arbor_store::backend::write_line(&self.name, out, line)?;
        }
        drop(rows);
        tx.commit().map_err(&err)?;
        Ok(())
    }

    fn list(&self) -> Result<Vec<StoredSession>, BackendError> {
        use std::sync::atomic::Ordering;
        let mut c = self.client();
        // A store read before version 3: looked at again, a writer may have migrated it.
        if !self.has_user.load(Ordering::Relaxed)
            && schema_version(&mut *c).map_err(pg_err(&self.name))? >= 3
        {
            self.has_user.store(true, Ordering::Relaxed);
        }
        let user = if self.has_user.load(Ordering::Relaxed) {
            "pushed_by"
        } else {
            "NULL::text"
        };
        let rows = c
            .query(
                &format!("SELECT id, cwd, created, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms, {user} FROM arbor_sessions ORDER BY modified_ms DESC, id"),
                &[],
            )
            .map_err(pg_err(&self.name))?;
        Ok(rows
            .into_iter()
            .map(|r| StoredSession {
                meta: SessionMeta {
                    id: r.get(0),
                    cwd: r.get(1),
                    created: r.get(2),
                    name: r.get(3),
                    parent_session: r.get(4),
                    tool: r.get(5),
                    machine: r.get(6),
                    user: r.get(11),
                    source_path: r.get(7),
                },
                lines: r.get::<_, i64>(8) as u64,
                bytes: r.get::<_, i64>(9) as u64,
                modified_ms: r.get(10),
            })
            .collect())
    }

    fn writer(
        &self,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Box<dyn SessionWriter>, BackendError> {
        let err = pg_err(&self.name);
        let deadline = wait.map(|w| Instant::now() + w);
        let me = holder();
        loop {
            let now = now_ms();
            let until = now + self.lease.as_millis() as i64;
            let taken = self
                .client()
                .query_opt(
                    "UPDATE arbor_sessions SET fence = fence + 1, holder = $2, lease_until_ms = $3,
                         holder_backend = pg_backend_pid()
                     WHERE id = $1 AND (lease_until_ms IS NULL OR lease_until_ms < $4
                         OR (holder_backend IS NOT NULL AND NOT EXISTS
                             (SELECT 1 FROM pg_stat_activity WHERE pid = holder_backend)))
                     RETURNING fence, lines",
                    &[&id, &me, &until, &now],
                )
                .map_err(&err)?;
            if let Some(r) = taken {
                return Ok(Box::new(PgWriter {
                    store: self.clone(),
                    id: id.to_string(),
                    fence: r.get::<_, i64>(0) as u64,
                    len: r.get::<_, i64>(1) as u64,
                }));
            }
            let held = self
                .client()
                .query_opt("SELECT holder FROM arbor_sessions WHERE id = $1", &[&id])
                .map_err(&err)?;
            let Some(row) = held else {
                return Err(BackendError::NoSession {
                    store: self.name.clone(),
                    id: id.to_string(),
                });
            };
            match deadline {
                Some(d) if Instant::now() < d => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    return Err(BackendError::Busy {
                        store: self.name.clone(),
                        id: id.to_string(),
                        holder: row.get::<_, Option<String>>(0).unwrap_or_default(),
                    })
                }
            }
        }
    }

    fn set_name(&self, id: &str, name: &str) -> Result<(), BackendError> {
        let n = self
            .client()
            .execute(
                "UPDATE arbor_sessions SET name = $2 WHERE id = $1",
                &[&id, &name],
            )
            .map_err(pg_err(&self.name))?;
        if n == 0 {
            return Err(BackendError::NoSession {
                store: self.name.clone(),
                id: id.to_string(),
            });
        }
        Ok(())
    }

    fn delete(&self, id: &str) -> Result<(), BackendError> {
        let err = pg_err(&self.name);
        let mut c = self.client();
        let mut tx = c.transaction().map_err(&err)?;
        let row = tx
            .query_opt(
                "SELECT holder, lease_until_ms FROM arbor_sessions WHERE id = $1 FOR UPDATE",
                &[&id],
            )
            .map_err(&err)?;
        let Some(row) = row else {
            return Err(BackendError::NoSession {
                store: self.name.clone(),
                id: id.to_string(),
            });
        };
        let until: Option<i64> = row.get(1);
        if until.is_some_and(|u| u >= now_ms()) {
            return Err(BackendError::Busy {
                store: self.name.clone(),
                id: id.to_string(),
                holder: row.get::<_, Option<String>>(0).unwrap_or_default(),
            });
        }
        tx.execute("DELETE FROM arbor_sessions WHERE id = $1", &[&id])
            .map_err(&err)?;
        tx.commit().map_err(&err)
    }
}

impl Blobs for PgStore {
    fn has_blob(&self, hash: &str) -> Result<bool, BackendError> {
        self.client()
            .query_opt("SELECT 1 FROM arbor_blobs WHERE hash = $1", &[&hash])
            .map(|r| r.is_some())
            .map_err(pg_err(&self.name))
    }

    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), BackendError> {
        arbor_store::backend::check_blob(&self.name, hash, bytes)?;
        self.client()
            .execute(
                "INSERT INTO arbor_blobs (hash, bytes) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING",
                &[&hash, &bytes],
            )
            .map(|_| ())
            .map_err(pg_err(&self.name))
    }

    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.client()
            .query_opt("SELECT bytes FROM arbor_blobs WHERE hash = $1", &[&hash])
            .map(|r| r.map(|r| r.get::<_, Vec<u8>>(0)))
            .map_err(pg_err(&self.name))
    }
}

/// The writer of a [`PgStore`] session.
#[derive(Debug)]
struct PgWriter {
    store: PgStore,
    id: String,
    fence: u64,
    len: u64,
}

impl PgWriter {
    fn write(&mut self, replace: bool, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.store.name, lines)?;
        let name = self.store.name.clone();
        let err = pg_err(&name);
        let mut c = self.store.client();
        let mut tx = c.transaction().map_err(&err)?;
        let row = tx
            .query_opt(
                "SELECT fence, lines FROM arbor_sessions WHERE id = $1 FOR UPDATE",
                &[&self.id],
            )
            .map_err(&err)?;
        let fenced = || BackendError::Fenced {
            store: name.clone(),
            id: self.id.clone(),
            fence: self.fence,
        };
        let Some(row) = row else {
            return Err(fenced());
        };
        if row.get::<_, i64>(0) as u64 != self.fence {
            return Err(fenced());
        }
        let n = row.get::<_, i64>(1) as u64;
        if n != self.len {
            return Err(BackendError::Moved {
                store: name.clone(),
                id: self.id.clone(),
                expected: self.len,
                found: n,
            });
        }
        let until = now_ms() + self.store.lease.as_millis() as i64;
        if replace {
            tx.execute(
                "DELETE FROM arbor_entries WHERE session_id = $1",
                &[&self.id],
            )
            .map_err(&err)?;
            insert_lines(&mut tx, &self.id, 0, lines).map_err(&err)?;
            tx.execute(
                "UPDATE arbor_sessions SET lines = $2, bytes = $3, modified_ms = $4, lease_until_ms = $5 WHERE id = $1",
                &[&self.id, &(lines.len() as i64), &byte_len(lines), &now_ms(), &until],
            )
            .map_err(&err)?;
        } else {
            insert_lines(&mut tx, &self.id, self.len, lines).map_err(&err)?;
            tx.execute(
                "UPDATE arbor_sessions SET lines = lines + $2, bytes = bytes + $3, modified_ms = $4, lease_until_ms = $5 WHERE id = $1",
                &[&self.id, &(lines.len() as i64), &byte_len(lines), &now_ms(), &until],
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

impl SessionWriter for PgWriter {
    fn len(&self) -> u64 {
        self.len
    }

    fn fence(&self) -> u64 {
        self.fence
    }

    fn append(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        self.write(false, lines)
    }

    fn replace_all(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        self.write(true, lines)
    }
}

impl Drop for PgWriter {
    fn drop(&mut self) {
        // Released only if still ours; when this fails the lease expires by itself.
        let _ = self.store.client().execute(
            "UPDATE arbor_sessions SET holder = NULL, lease_until_ms = NULL WHERE id = $1 AND fence = $2",
            &[&self.id, &(self.fence as i64)],
        );
    }
}
