//! The store conformance suite on a real PostgreSQL (a throwaway server from arbor-pgtest:
//! Debian's postgresql in a temporary directory, Unix socket only), a database per check; and
//! two stores on one database keeping one writer per session.
use arbor_db::PgStore;
use arbor_pgtest::TestServer;
use arbor_store::backend::{conformance, BackendError, SessionStore};
use arbor_store::{ManagerOptions, SessionManager, StoreError};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn sample_files() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo/sessions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("demo sessions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect()
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
    let mut w =
        SessionManager::create_in(a.clone(), "/p", ManagerOptions::default()).expect("create");
    w.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#)
        .expect("append");
    let id = w.session_id();
    match SessionManager::open_in(b.clone(), &id, ManagerOptions::default()) {
        Err(StoreError::Backend(BackendError::Busy { holder, .. })) => {
            assert!(holder.contains("pid"))
        }
        other => panic!("second writer: {other:?}"),
    }
    drop(w);
    let mut w2 =
        SessionManager::open_in(b.clone(), &id, ManagerOptions::default()).expect("after release");
    w2.append_message(br#"{"role":"user","content":"again","timestamp":2}"#)
        .expect("append");
    assert_eq!(a.read(&id, 0).expect("read").len(), 3);
    drop(w2);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
    c.execute("UPDATE arbor_schema SET version = 99", &[])
        .expect("bump");
    let e = PgStore::connect(&url).expect_err("newer schema");
    assert!(e.to_string().contains("upgrade arbor"), "{e}");
}
