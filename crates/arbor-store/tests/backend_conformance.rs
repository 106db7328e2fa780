//! The store conformance suite (`arbor_store::backend::conformance`) on the in-memory store,
//! with the demo sessions and the recorded fixture read back byte for byte.
use arbor_store::backend::{conformance, memory::MemoryStore, SessionStore};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The demo sessions (one a v1 recording) as bytes.
pub fn sample_files() -> Vec<Vec<u8>> {
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
fn memory_store_conforms() {
    let fresh =
        |lease: Duration| -> Arc<dyn SessionStore> { Arc::new(MemoryStore::with_lease(lease)) };
    if let Err(e) = conformance::run_all(&fresh, &sample_files()) {
        panic!("{e}");
    }
}
