//! `load_doc_lean` (the export's load, which releases the map's pages behind the parse) reads
//! the same document as `load_doc`: every entry, its bytes, the tree, the labels.
use std::io::Write;

#[test]
fn lean_load_reads_what_load_reads() {
    let dir = tempfile_dir();
    let path = dir.join("s.jsonl");
    let mut f = std::fs::File::create(&path).expect("create");
    writeln!(
        f,
        r#"{{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}}"#
    )
    .expect("write");
    let pad = "x".repeat(1500);
    let mut parent = "null".to_string();
    // About 6 MB: mapped (over 1 MB), parsed by two threads in chunks, with labels throughout.
    for i in 0..4000 {
        let id = format!("e{i:05}");
        writeln!(
            f,
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{i} {pad}","timestamp":1}}}}"#
        )
        .expect("write");
        if i % 97 == 0 {
            writeln!(
                f,
                r#"{{"type":"label","id":"l{i:05}","parentId":"{id}","timestamp":"2026-01-01T00:00:00.000Z","targetId":"{id}","label":"mark {i}"}}"#
            )
            .expect("write");
            parent = format!("\"l{i:05}\"");
        } else {
            parent = format!("\"{id}\"");
        }
    }
    drop(f);
    let a = arbor_store::load_doc(&path).expect("load");
    let b = arbor_store::load_doc_lean(&path).expect("lean load");
    assert_eq!(a.entries().len(), b.entries().len());
    assert_eq!(a.entries().len(), 4000 + 42);
    for i in 0..a.entries().len() {
        assert_eq!(a.entry_line(i), b.entry_line(i), "entry {i}");
        assert_eq!(a.entries()[i].id, b.entries()[i].id);
    }
    assert_eq!(a.index().leaf, b.index().leaf);
    let path_a = a.index().path(&a, a.index().leaf.expect("leaf")).entries;
    let path_b = b.index().path(&b, b.index().leaf.expect("leaf")).entries;
    assert_eq!(path_a, path_b);
    assert_eq!(path_a.len(), 4042);
    for i in (0..4000).step_by(97) {
        let id = format!("e{i:05}");
        assert_eq!(b.index().labels.get(&id), a.index().labels.get(&id));
        assert_eq!(
            b.index().labels.get(&id).map(|s| s.to_string()),
            Some(format!("mark {i}"))
        );
    }
    // Reading the released pages again gives the same bytes.
    arbor_store::release_pages(b.base_bytes());
    assert_eq!(a.base_bytes(), b.base_bytes());
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arbor-lean-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tempdir");
    d
}
