//! [`PgStore`]: sessions in PostgreSQL, one row per line (the same tables as SQLite's, named
//! `arbor_*` so that they can share a database with others).
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
/// writer is free as soon as its connection is gone, and omp's blobs (`arbor_blobs`).
pub const PG_SCHEMA_VERSION: i32 = 2;

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

/// Whether a connection parameter holds a secret (in any case): libpq's `password`,
/// `sslpassword` (the client key's), `oauth_client_secret` and the SCRAM keys.
fn is_secret_key(key: &str) -> bool {
    [
        "password",
        "sslpassword",
        "oauth_client_secret",
        "scram_client_key",
        "scram_server_key",
    ]
    .iter()
    .any(|k| key.eq_ignore_ascii_case(k))
}

/// libpq's connection parameters (PostgreSQL 18). A parameter not among them is taken for a
/// piece of a password written without quotes (`password=a b=c`), and not shown.
const LIBPQ_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslkeylogfile",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
    "scram_client_key",
    "scram_server_key",
    "oauth_issuer",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
];

fn is_known_key(key: &str) -> bool {
    LIBPQ_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k))
}

/// `%XX` decoded (as the URL parser decodes parameter names); invalid escapes kept.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL prefix of a connection URL (`postgres://`, `postgresql://`, in any case), if `s`
/// is one.
fn url_prefix_len(s: &str) -> Option<usize> {
    ["postgres://", "postgresql://"].into_iter().find_map(|p| {
        s.get(..p.len())
            .filter(|h| h.eq_ignore_ascii_case(p))
            .map(|_| p.len())
    })
}

/// The byte ranges of `conninfo` that are (or may be) secret, in order, not overlapping:
///
/// - a URL (`postgres://` or `postgresql://`): the password of `USER:PASSWORD@` (up to the last
///   `@` before the host's end, so a raw `@` in a password is covered too), and the value of a
///   `password=` / `sslpassword=` parameter of the query (its name `%`-decoded, as the parser
///   decodes it);
/// - `sqlite:PATH`, or text without `=`: nothing;
/// - a parameter libpq does not know ([`LIBPQ_KEYS`]): it and all after it;
/// - libpq's `key=value` form (`password=pw`, `password = 'p w'`, `\` escapes): the value of
///   every `password` / `sslpassword`; from a place the grammar does not allow on, everything
///   (what arbor cannot parse is not shown).
fn secret_spans(conninfo: &str) -> Vec<std::ops::Range<usize>> {
    match url_prefix_len(conninfo) {
        Some(start) => url_secret_spans(conninfo, start),
        // A store of another kind (`sqlite:PATH`), or no `key=value` at all: nothing secret.
        None if conninfo.starts_with("sqlite:") || !conninfo.contains('=') => Vec::new(),
        None => keyword_secret_spans(conninfo),
    }
}

fn url_secret_spans(s: &str, start: usize) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let rest = &s[start..];
    let mut after_creds = start;
    // rust-postgres takes the credentials up to the first `@`, libpq up to the first `@`
    // before a `/`: masked is everything from the first `:` up to the last `@` before the
    // host part ends.
    if let Some(at) = rest.find('@') {
        let auth_end = rest[at..].find(['/', '?']).map_or(rest.len(), |e| at + e);
        let last_at = rest[..auth_end].rfind('@').unwrap_or(at);
        match rest[..at].find(':') {
            Some(colon) => spans.push(start + colon + 1..start + last_at),
            None if last_at > at => spans.push(start + at + 1..start + last_at),
            None => {}
        }
        after_creds = start + last_at + 1;
    }
    if let Some(q) = s[after_creds..].find('?') {
        let mut pos = after_creds + q + 1;
        for param in s[pos..].split('&') {
            let key = percent_decoded(param.split_once('=').map_or(param, |(k, _)| k));
            if !is_known_key(&key) {
                // Not a parameter: perhaps a piece of a password with a raw `&`.
                spans.push(pos..s.len());
                break;
            }
            if is_secret_key(&key) {
                let k = param
                    .split_once('=')
                    .map_or(param.len(), |(k, _)| k.len() + 1);
                spans.push(pos + k..pos + param.len());
            }
            pos += param.len() + 1;
        }
    }
    spans.retain(|r| !r.is_empty());
    spans
}

fn keyword_secret_spans(s: &str) -> Vec<std::ops::Range<usize>> {
    let b = s.as_bytes();
    let n = b.len();
    let mut spans = Vec::new();
    let ws = |c: u8| c.is_ascii_whitespace();
    let mut i = 0;
    loop {
        while i < n && ws(b[i]) {
            i += 1;
        }
        if i == n {
            break;
        }
        let key_start = i;
        while i < n && !ws(b[i]) && b[i] != b'=' {
            i += 1;
        }
        let key = &s[key_start..i];
        while i < n && ws(b[i]) {
            i += 1;
        }
        if key.is_empty() || i == n || b[i] != b'=' || !is_known_key(key) {
            // Not `key = value`: nothing from here on is shown.
            spans.push(key_start..n);
            break;
        }
        i += 1;
        while i < n && ws(b[i]) {
            i += 1;
        }
        let value_start = i;
        let mut closed = true;
        if i < n && b[i] == b'\'' {
            i += 1;
            closed = false;
            while i < n {
                match b[i] {
                    b'\\' => i += 2,
                    b'\'' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    _ => i += 1,
                }
            }
        } else {
            while i < n && !ws(b[i]) {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
        }
        let i_end = i.min(n);
        if !closed || i_end == value_start {
            spans.push(
                if is_secret_key(key) {
                    value_start
                } else {
                    key_start
                }..n,
            );
            break;
        }
        if is_secret_key(key) {
            spans.push(value_start..i_end);
        }
        i = i_end;
    }
    spans.retain(|r| !r.is_empty());
    spans
}

/// A connection string as it may be shown: every password replaced by `***` (see
/// `secret_spans` for the forms: `postgres://USER:PASSWORD@…`, `?password=…`,
/// `password=…` / `password='…'` key-value strings, `sslpassword`). The one masking of
/// arbor's: every message naming a PostgreSQL store goes through it.
///
/// ```
/// use arbor_db::redact_url;
/// assert_eq!(redact_url("postgres://ann:pw@db/s"), "postgres://ann:***@db/s");
/// assert_eq!(redact_url("postgres://db/s?password=pw&sslmode=require"), "postgres://db/s?password=***&sslmode=require");
/// assert_eq!(redact_url("host=db password='p w' dbname=s"), "host=db password=*** dbname=s");
/// ```
pub fn redact_url(conninfo: &str) -> String {
    let mut out = String::with_capacity(conninfo.len());
    let mut at = 0;
    for r in secret_spans(conninfo) {
        out.push_str(&conninfo[at..r.start]);
        out.push_str("***");
        at = r.end;
    }
    out.push_str(&conninfo[at..]);
    out
}

/// `text` (a message from the client library about `conninfo`) with every secret of
/// `conninfo` masked: each secret as written and as decoded, and each piece of it between
/// spaces, quotes and `=` of at least two characters (a parser's message may quote a piece of
/// an unquoted password with a space in it as an unknown option).
pub(crate) fn scrub(text: &str, conninfo: &str) -> String {
    let mut secrets: Vec<String> = Vec::new();
    for r in secret_spans(conninfo) {
        let raw = &conninfo[r];
        let unquoted = raw.trim_matches('\'');
        for v in [
            raw.to_string(),
            percent_decoded(raw),
            unquoted.replace('\\', ""),
        ] {
            secrets.extend(
                v.split(|c: char| c.is_whitespace() || c == '=' || c == '\'')
                    .filter(|p| p.chars().count() >= 2)
                    .map(str::to_string),
            );
            secrets.push(v);
        }
    }
    secrets.retain(|s| !s.is_empty());
    // Longest first: a whole secret is masked before its pieces.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for s in &secrets {
        out = out.replace(s.as_str(), "***");
    }
    out
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
        Self::connect_inner(url, lease).map_err(|e| match e {
            BackendError::Db { store, message } | BackendError::Database { store, message, .. } => {
                BackendError::Db {
                    store,
                    message: scrub(&message, url),
                }
            }
            other => other,
        })
    }

    fn connect_inner(url: &str, lease: Duration) -> Result<PgStore, BackendError> {
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
                "INSERT INTO arbor_sessions (id, cwd, created, header, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms, fence)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0) ON CONFLICT (id) DO NOTHING",
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
        let rows = self
            .client()
            .query(
                "SELECT id, cwd, created, name, parent_session, tool, machine, source_path, lines, bytes, modified_ms FROM arbor_sessions ORDER BY modified_ms DESC, id",
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

#[cfg(test)]
mod masking {
    use super::{redact_url, scrub};

    /// Every form libpq (and rust-postgres) takes a password in, and what is shown of it.
    const FORMS: &[(&str, &str)] = &[
        ("postgres://ann:S3kr1t@db/s", "postgres://ann:***@db/s"),
        (
            "postgresql://ann:S3kr1t@db:5432/s",
            "postgresql://ann:***@db:5432/s",
        ),
        ("POSTGRES://ann:S3kr1t@db/s", "POSTGRES://ann:***@db/s"),
        // A raw `@` or `/` in the password.
        ("postgres://ann:S3k@r1t@db/s", "postgres://ann:***@db/s"),
        ("postgres://ann:S3k/r1t@db/s", "postgres://ann:***@db/s"),
        (
            "postgres://ann:S3kr1t@h1,h2/s",
            "postgres://ann:***@h1,h2/s",
        ),
        (
            "postgres://db/s?password=S3kr1t",
            "postgres://db/s?password=***",
        ),
        (
            "postgres://db/s?sslmode=require&password=S3kr1t&application_name=x",
            "postgres://db/s?sslmode=require&password=***&application_name=x",
        ),
        (
            "postgres://db/s?pass%77ord=S3kr1t",
            "postgres://db/s?pass%77ord=***",
        ),
        (
            "postgres://db/s?PASSWORD=S3kr1t",
            "postgres://db/s?PASSWORD=***",
        ),
        (
            "postgres://db/s?sslpassword=S3kr1t",
            "postgres://db/s?sslpassword=***",
        ),
        (
            "postgres://ann:S3kr1t@db/s?password=S3kr1t",
            "postgres://ann:***@db/s?password=***",
        ),
        (
            "postgres://?host=/run/pg&password=S3kr1t",
            "postgres://?host=/run/pg&password=***",
        ),
        (
            "host=db password=S3kr1t dbname=s",
            "host=db password=*** dbname=s",
        ),
        (
            "host=db password = S3kr1t dbname=s",
            "host=db password = *** dbname=s",
        ),
        ("password='S3 kr1t' host=db", "password=*** host=db"),
        (r"password='S3\'kr1t' host=db", "password=*** host=db"),
        (r"password=S3\ kr1t host=db", "password=*** host=db"),
        ("host=db sslpassword=S3kr1t", "host=db sslpassword=***"),
        // Unterminated quote, and text the grammar does not allow: not shown.
        ("host=db password='S3 kr1t", "host=db password=***"),
        ("host=db password=S3 kr1t x", "host=db password=*** ***"),
        ("host=db junk password=S3kr1t", "host=db ***"),
        // A parameter libpq does not know after a password: a piece of it, not shown.
        ("host=db password=S3kr1t wOrd=x", "host=db password=*** ***"),
        (
            "postgres://db/s?password=S3k&r1t=x",
            "postgres://db/s?password=***&***",
        ),
        (
            "host=db oauth_client_secret=S3kr1t",
            "host=db oauth_client_secret=***",
        ),
        // Nothing secret: as it is.
        ("postgres://ann@db/s", "postgres://ann@db/s"),
        ("host=db user=ann", "host=db user=ann"),
        ("sqlite:/tmp/x.db", "sqlite:/tmp/x.db"),
    ];

    #[test]
    fn every_form_of_password_is_masked() {
        for (form, shown) in FORMS {
            let r = redact_url(form);
            assert_eq!(r, *shown, "{form}");
            for piece in ["S3k", "r1t"] {
                assert!(!r.contains(piece), "{form} -> {r}");
            }
        }
    }

    #[test]
    fn messages_lose_every_piece_of_the_password() {
        let url = "host=db password=S3cr3t wOrd=x";
        // rust-postgres reads `wOrd` as an option of its own and names it.
        let msg = "invalid connection string: unknown option `wOrd`";
        assert_eq!(
            scrub(msg, "host=db password='S3cr3t wOrd=x'"),
            "invalid connection string: unknown option `***`"
        );
        assert!(!scrub(msg, url).contains("wOrd"), "{}", scrub(msg, url));
        assert_eq!(
            scrub("auth failed for S3%63ret", "postgres://a:S3%63ret@h/d"),
            "auth failed for ***"
        );
        assert_eq!(
            scrub("auth failed for S3cret", "postgres://a:S3%63ret@h/d"),
            "auth failed for ***"
        );
    }
}
