//! arbor reads omp's history.db as omp does, and omp reads the history.db arbor writes: the
//! databases in goldens/history/ were written by arbor and by the real omp 18.2.3, and the JSON
//! next to them is what omp's `HistoryStorage` (getRecent(1000), search(q, 100)) returned for
//! each (tools/history/check.sh --goldens). arbor must answer the same on both.
use arbor_index::history::{History, HistoryEntry};
use std::path::Path;

fn to_json(v: &[HistoryEntry]) -> serde_json::Value {
    let mut out = vec![b'['];
    for (k, e) in v.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        e.write_json(&mut out);
    }
    out.push(b']');
    serde_json::from_slice(&out).unwrap()
}

fn check(name: &str) {
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/history");
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(g.join(format!("{name}.omp.json"))).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    std::fs::copy(g.join(format!("{name}.db")), &db).unwrap();
    let h = History::open_read_only(&db).unwrap().expect("database");
    assert_eq!(
        to_json(&h.recent(1000.0).unwrap()),
        want["recent"],
        "{name}: recent"
    );
    let searches = want["search"].as_object().unwrap();
    assert!(searches.len() >= 10);
    for (q, hits) in searches {
        assert_eq!(
            &to_json(&h.search(q, 100.0).unwrap()),
            hits,
            "{name}: search {q:?}"
        );
        let ids: Vec<String> = h.matching_session_ids(q, 500.0).unwrap();
        assert_eq!(
            serde_json::json!(ids),
            want["sessions"][q],
            "{name}: matchingSessionIds {q:?}"
        );
    }
    // Opening for writing (as omp does) changes nothing in what is read.
    drop(h);
    let w = History::open(&db).unwrap();
    assert_eq!(
        to_json(&w.recent(1000.0).unwrap()),
        want["recent"],
        "{name}: recent after open for writing"
    );
}

#[test]
fn arbor_reads_what_omp_wrote() {
    check("omp-written");
}

#[test]
fn omp_read_what_arbor_wrote_and_arbor_reads_it_the_same() {
    check("arbor-written");
}
