//! The store conformance suite (`arbor_store::backend::conformance`) on the in-memory store,
//! with the demo sessions and the recorded fixture read back byte for byte.
use arbor_store::backend::{conformance, memory::MemoryStore, SessionStore};
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
fn memory_store_conforms() {
    let fresh =
        |lease: Duration| -> Arc<dyn SessionStore> { Arc::new(MemoryStore::with_lease(lease)) };
    if let Err(e) = conformance::run_all(&fresh, &sample_files()) {
        panic!("{e}");
    }
}

#[test]
fn file_store_conforms() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let n = std::sync::atomic::AtomicUsize::new(0);
    let fresh = |_lease: Duration| -> Arc<dyn SessionStore> {
        let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Arc::new(arbor_store::backend::files::FileStore::new(
            &tmp.path().join(format!("agent{k}")),
        ))
    };
    if let Err(e) = conformance::run_all(&fresh, &sample_files()) {
        panic!("{e}");
    }
}

#[test]
fn a_file_store_session_is_a_pi_session_file() {
    // What the file store writes is where and how pi writes it: SessionManager::open reads it.
    let tmp = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn SessionStore> =
        Arc::new(arbor_store::backend::files::FileStore::new(tmp.path()));
    let mut sm =
        arbor_store::SessionManager::create_in(store.clone(), "/work/proj", Default::default())
            .expect("create");
    sm.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#)
        .expect("append");
    let id = sm.session_id();
    drop(sm);
    let dir = tmp.path().join("sessions").join("--work-proj--");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("project dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0]
        .to_string_lossy()
        .ends_with(&format!("_{id}.jsonl")));
    let opened = arbor_store::SessionManager::open_read_only(&files[0]).expect("open");
    assert_eq!(opened.entries().len(), 1);
}
