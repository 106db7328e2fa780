//! The store conformance suite on a real PostgreSQL (a throwaway server from arbor-testkit:
//! Debian's postgresql in a temporary directory, Unix socket only), a database per check; and
//! two stores on one database keeping one writer per session.
#![cfg(feature = "postgres")]
use arbor_db::PgStore;
use arbor_store::backend::{conformance, BackendError, SessionStore};
use arbor_store::{ManagerOptions, SessionManager};
use arbor_testkit::pg::TestServer;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The demo sessions (one a v1 recording) as bytes.
fn sample_files() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo/sessions");
    let files = conformance::session_files_in(&dir).expect("demo sessions");
    assert!(files.len() >= 4);
    files
}

fn fresh_db(server: &TestServer) -> String {
    let name = server.unique_database("arbor_t").expect("database");
    server.url_for(&name)
}

#[test]
fn postgres_store_conforms() {
    let server = TestServer::start().expect("a PostgreSQL server (.ci/run installs postgresql)");
    let fresh = |lease: Duration| -> Arc<dyn SessionStore> {
        Arc::new(PgStore::connect_with_lease(&fresh_db(&server), lease).expect("connect"))
    };
    if let Err(e) = conformance::run_all(&fresh, &sample_files()) {
        panic!("{e}");
    }
}

#[test]
fn two_connections_keep_one_writer_and_the_schema_version() {
    let server = TestServer::start().expect("server");
    let url = fresh_db(&server);
    let a: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).expect("a"));
    let b: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).expect("b"));
    if let Err(e) = conformance::one_writer_across_handles(a, b) {
        panic!("{e}");
    }
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    c.execute("UPDATE arbor_schema SET version = 99", &[])
        .expect("bump");
    let e = PgStore::connect(&url).expect_err("newer schema");
    assert!(e.to_string().contains("upgrade arbor"), "{e}");
}

/// A version-1 database (lines compressed with pglz) is brought to version 2 on connect:
/// new lines are stored with lz4, the old ones read back unchanged.
#[test]
fn a_version_1_database_is_migrated() {
    let server = TestServer::start().expect("server");
    let url = fresh_db(&server);
    let store: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).expect("connect"));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    let compression = |c: &mut postgres::Client| -> String {
        c.query_one(
            "SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'arbor_entries'::regclass AND attname = 'line'",
            &[],
        )
        .expect("attcompression")
        .get(0)
    };
    assert_eq!(
        compression(&mut c),
        "l",
        "a new database stores lines with lz4"
    );
    // Back to what version 1 made: pglz (the server's default) and version 1.
    c.batch_execute(
        "ALTER TABLE arbor_entries ALTER COLUMN line SET COMPRESSION pglz; UPDATE arbor_schema SET version = 1",
    )
    .expect("downgrade");
    let mut sm =
        SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).expect("create");
    let big = format!(
        r#"{{"role":"user","content":"{}","timestamp":1}}"#,
        "compressible ".repeat(2000)
    );
    sm.append_message(big.as_bytes()).expect("append");
    let id = sm.session_id();
    drop(sm);
    let before = store.read_joined(&id, 0).expect("read");
    drop(store);
    let again = PgStore::connect(&url).expect("migrating connect");
    let version: i32 = c
        .query_one("SELECT version FROM arbor_schema", &[])
        .expect("version")
        .get(0);
    assert_eq!(version, arbor_db::PG_SCHEMA_VERSION);
    assert_eq!(compression(&mut c), "l");
    assert_eq!(again.read_joined(&id, 0).expect("read after"), before);
    let rows: i64 = c
        .query_one("SELECT count(*) FROM arbor_schema", &[])
        .expect("count")
        .get(0);
    assert_eq!(rows, 1, "one version row");
}

/// A writer whose connection is gone (its process killed) leaves its lease at once, not
/// after the lease's term; its fence token is stale then.
#[test]
fn a_dead_writers_lease_is_taken_over_at_once() {
    let server = TestServer::start().expect("server");
    let url = fresh_db(&server);
    let a: Arc<dyn SessionStore> = Arc::new(
        PgStore::connect_with_lease(&url, std::time::Duration::from_secs(600)).expect("a"),
    );
    let b: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).expect("b"));
    let mut w = SessionManager::create_in(a.clone(), "/p", ManagerOptions::default()).expect("w");
    w.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#)
        .expect("append");
    let id = w.session_id();
    assert!(matches!(
        b.writer(&id, None),
        Err(BackendError::Busy { .. })
    ));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    c.execute(
        "SELECT pg_terminate_backend(holder_backend) FROM arbor_sessions WHERE id = $1",
        &[&id],
    )
    .expect("terminate");
    let t = std::time::Instant::now();
    let mut taken = b
        .writer(&id, Some(std::time::Duration::from_secs(5)))
        .expect("taken over");
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    taken
        .append(&[br#"{"type":"custom","id":"c1","parentId":null,"timestamp":"t"}"#])
        .expect("the new writer appends");
    assert!(w
        .append_message(br#"{"role":"user","content":"late","timestamp":2}"#)
        .is_err());
    assert_eq!(b.read(&id, 0).expect("read").len(), 3);
}

fn meta_by(id: &str, machine: &str, user: Option<&str>) -> arbor_store::backend::SessionMeta {
    arbor_store::backend::SessionMeta {
        id: id.into(),
        cwd: "/work/p".into(),
        created: "2026-01-01T00:00:00.000Z".into(),
        tool: "pi".into(),
        machine: Some(machine.into()),
        user: user.map(str::to_string),
        ..Default::default()
    }
}

fn header_of(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}}"#
    )
}

/// Schema version 3: a version-2 database (no `pushed_by`) is read as it is by a read-only
/// connection (users unknown, nothing migrated), and a read-write connection brings it to
/// version 3: the column exists, older rows have no user, new ones keep theirs.
#[test]
fn a_version_2_database_gains_the_user_column() {
    let server = TestServer::start().expect("server");
    let url = fresh_db(&server);
    let store = PgStore::connect(&url).expect("connect");
    store
        .create(
            &meta_by("old-1", "m1", None),
            &[header_of("old-1").as_bytes()],
        )
        .expect("create");
    drop(store);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    c.batch_execute(
        "ALTER TABLE arbor_sessions DROP COLUMN pushed_by; UPDATE arbor_schema SET version = 2",
    )
    .expect("back to version 2");
    let has_column = |c: &mut postgres::Client| -> bool {
        c.query_one(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'arbor_sessions' AND column_name = 'pushed_by'",
            &[],
        )
        .expect("columns")
        .get::<_, i64>(0)
            == 1
    };
    let version = |c: &mut postgres::Client| -> i32 {
        c.query_one("SELECT version FROM arbor_schema", &[])
            .expect("version")
            .get(0)
    };
    let ro = PgStore::connect_read_only(&url).expect("read-only connect of version 2");
    let listed = ro.list().expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].meta.user, None);
    assert_eq!(listed[0].meta.machine.as_deref(), Some("m1"));
    assert_eq!(
        version(&mut c),
        2,
        "a read-only connection does not migrate"
    );
    assert!(!has_column(&mut c));
    let rw = PgStore::connect(&url).expect("migrating connect");
    assert_eq!(version(&mut c), 3);
    assert_eq!(arbor_db::PG_SCHEMA_VERSION, 3);
    assert!(has_column(&mut c));
    if let Err(e) = conformance::users_after_migration(&rw, &ro, "old-1") {
        panic!("PostgreSQL, after the migration: {e}");
    }
}

/// A read-only connection writes nothing: the server refuses its writes (its transactions
/// are read-only), a role with only SELECT rights reads the store, and a database without
/// arbor's tables is refused without creating them.
#[test]
fn a_read_only_connection_writes_nothing() {
    let server = TestServer::start().expect("server");
    let url = fresh_db(&server);
    let store = PgStore::connect(&url).expect("connect");
    store
        .create(
            &meta_by("s-1", "m1", Some("ann")),
            &[header_of("s-1").as_bytes()],
        )
        .expect("create");
    drop(store);
    let ro = PgStore::connect_read_only(&url).expect("read-only");
    let e = ro
        .create(&meta_by("s-2", "m1", None), &[header_of("s-2").as_bytes()])
        .expect_err("a write through a read-only connection");
    assert!(e.to_string().contains("read-only"), "{e}");
    assert!(ro.set_name("s-1", "x").is_err());
    assert_eq!(ro.list().expect("list").len(), 1);
    // A role that may only SELECT.
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    c.batch_execute(
        "CREATE ROLE arbor_reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO arbor_reader",
    )
    .expect("reader role");
    let reader_url = url.replacen("postgres@", "arbor_reader@", 1);
    assert_ne!(reader_url, url);
    let reader = PgStore::connect_read_only(&reader_url).expect("the SELECT-only role connects");
    let l = reader.list().expect("list");
    assert_eq!(l[0].meta.user.as_deref(), Some("ann"));
    assert_eq!(
        reader.read_joined("s-1", 0).expect("read"),
        format!("{}\n", header_of("s-1")).into_bytes()
    );
    // An empty database: refused, and left without tables.
    let empty = fresh_db(&server);
    let e = PgStore::connect_read_only(&empty).expect_err("no store there");
    assert!(e.to_string().contains("no arbor sync store"), "{e}");
    let mut c = postgres::Client::connect(&empty, postgres::NoTls).expect("raw");
    let tables: i64 = c
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .expect("tables")
        .get(0);
    assert_eq!(tables, 0);
}
