//! The store conformance suite (`arbor_store::backend::conformance`) on SQLite, with the demo
//! sessions read back byte for byte; and two stores on one database file (two processes'
//! view) keeping one writer per session.
use arbor_db::SqliteStore;
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
    assert!(files.len() >= 4);
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect()
}

#[test]
fn sqlite_store_conforms() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let n = std::sync::atomic::AtomicUsize::new(0);
    let fresh = |lease: Duration| -> Arc<dyn SessionStore> {
        let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Arc::new(
            SqliteStore::open_with_lease(&tmp.path().join(format!("s{k}.db")), lease)
                .expect("open"),
        )
    };
    if let Err(e) = conformance::run_all(&fresh, &sample_files()) {
        panic!("{e}");
    }
}

#[test]
fn two_connections_to_one_file_keep_one_writer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("shared.db");
    let a: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).expect("open a"));
    let b: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).expect("open b"));
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
    let r = SessionManager::open_in(
        b.clone(),
        &id,
        ManagerOptions {
            read_only: true,
            ..Default::default()
        },
    )
    .expect("reader");
    assert_eq!(r.entries().len(), 1);
    drop(w);
    let mut w2 =
        SessionManager::open_in(b.clone(), &id, ManagerOptions::default()).expect("after release");
    w2.append_message(br#"{"role":"user","content":"again","timestamp":2}"#)
        .expect("append");
    assert_eq!(a.read(&id, 0).expect("read").len(), 3);
    // A schema newer than this arbor is refused, not used.
    drop((w2, r));
    let conn = rusqlite::Connection::open(&path).expect("raw");
    conn.execute("UPDATE arbor_schema SET version = 99", [])
        .expect("bump");
    let e = SqliteStore::open(&path).expect_err("newer schema");
    assert!(e.to_string().contains("newer"), "{e}");
}
