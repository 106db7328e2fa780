//! The store conformance suite (`arbor_store::backend::conformance`) on SQLite, with the demo
//! sessions read back byte for byte; and two stores on one database file (two processes'
//! view) keeping one writer per session.
use arbor_db::SqliteStore;
use arbor_store::backend::{conformance, BackendError, SessionStore};
use arbor_store::{ManagerOptions, SessionManager};
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
    if let Err(e) = conformance::one_writer_across_handles(a, b) {
        panic!("{e}");
    }
    // A schema newer than this arbor is refused, not used.
    let conn = rusqlite::Connection::open(&path).expect("raw");
    conn.execute("UPDATE arbor_schema SET version = 99", [])
        .expect("bump");
    let e = SqliteStore::open(&path).expect_err("newer schema");
    assert!(e.to_string().contains("newer"), "{e}");
}

/// The lease of a writer of this machine whose process is gone (killed while writing) is
/// taken over at once; one of a living process, or of another machine, is not.
#[test]
fn a_dead_local_writers_lease_is_taken_over_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open_with_lease(&db, Duration::from_secs(600)).expect("open"));
    let sm = SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).expect("c");
    let id = sm.session_id();
    std::mem::forget(sm); // a writer that never releases its lease
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let mut child = std::process::Command::new("true").spawn().expect("true");
    let dead = child.id();
    child.wait().expect("wait");
    let raw = rusqlite::Connection::open(&db).expect("raw");
    let set = |who: &str| {
        raw.execute(
            "UPDATE sessions SET holder = ?1, lease_until_ms = 9999999999999 WHERE id = ?2",
            rusqlite::params![who, id],
        )
        .expect("set holder");
    };
    for alive in [
        format!("{host} pid {}", std::process::id()),
        format!("another-machine-{host} pid {dead}"),
    ] {
        set(&alive);
        assert!(
            matches!(store.writer(&id, None), Err(BackendError::Busy { .. })),
            "{alive}"
        );
    }
    set(&format!("{host} pid {dead}"));
    let mut w = store
        .writer(&id, Some(Duration::from_secs(2)))
        .expect("taken over from the dead holder");
    w.append(&[br#"{"type":"custom","id":"c1","parentId":null,"timestamp":"t"}"#])
        .expect("append");
}
