//! Search through the library: ranking, the rank window, filters, texts indexed on demand,
//! and a catalog damaged where only a search reads it.
use arbor_testkit::catalog::indexed;

use arbor_index::{Catalog, Kind, RefreshOptions, SearchQuery};
use std::path::Path;

fn session(dir: &Path, name: &str, mtime_s: u64, texts: &[&str]) {
    let mut s = String::from(r#"{"type":"session","version":3,"id":"SID","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#)
        .replace("SID", name);
    s.push('\n');
    let mut parent = "null".to_string();
    for (i, t) in texts.iter().enumerate() {
        let id = format!("{name}{i:03}");
        s.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-0{}T00:00:{:02}.000Z","message":{{"role":"user","content":"{t}"}}}}"#,
            1 + (mtime_s % 8),
            i % 60
        ));
        s.push('\n');
        parent = format!("\"{id}\"");
    }
    let p = dir.join(format!("{name}.jsonl"));
    std::fs::write(&p, s).unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + mtime_s))
        .unwrap();
}

#[test]
fn ranking_window_and_filters() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    // Older session: one very relevant text; newer sessions: many weak matches.
    session(&dir, "old", 1, &["walrus walrus walrus", "nothing here"]);
    for k in 0..5 {
        session(
            &dir,
            &format!("new{k}"),
            10 + k,
            &[
                "a walrus among many other words in a long sentence",
                "filler text",
            ],
        );
    }
    let mut cat = Catalog::open(&d.path().join("c.db")).unwrap();
    // A listing does not index texts; a search needs them.
    let (listed, st) = cat
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!((listed.len(), st.docs_added), (6, 0));
    // One reader thread: the texts' row ids then follow the files' age exactly (with several,
    // the writer takes the files' texts as the readers hand them over, so the old session's
    // may come after a new one's: the rank window below then held it, 3 times in 80 runs of
    // this test four at a time).
    let st = cat
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_texts(true).with_threads(1),
            &mut |_| {},
        )
        .unwrap()
        .1;
    assert_eq!(
        (st.appended, st.full, st.docs_added),
        (6, 0, 12),
        "texts caught up from the start of each file"
    );
    let mut q = SearchQuery::new("walrus");
    q.rank_window = 0;
    let hits = cat.search(&q).unwrap();
    assert_eq!(hits.len(), 6);
    assert_eq!(
        hits[0].entry_id.as_deref(),
        Some("old000"),
        "the most relevant first: {hits:?}"
    );
    // A window of the 3 newest matches leaves the old session out.
    q.rank_window = 3;
    let hits = cat.search(&q).unwrap();
    assert_eq!(hits.len(), 3);
    assert!(
        hits.iter()
            .all(|h| h.entry_id.as_deref().unwrap().starts_with("new")),
        "{hits:?}"
    );
    // Filters: kinds, since, directories.
    let mut q = SearchQuery::new("walrus");
    q.kinds = Some(vec![Kind::Assistant]);
    assert!(cat.search(&q).unwrap().is_empty());
    let mut q = SearchQuery::new("walrus");
    q.since_ms = arbor_core::time::parse_iso_ms("2025-01-05");
    assert!(cat
        .search(&q)
        .unwrap()
        .iter()
        .all(|h| h.timestamp.as_deref().unwrap() >= "2025-01-05"));
    let mut q = SearchQuery::new("walrus");
    q.dirs = Some(vec!["/nowhere".into()]);
    assert!(cat.search(&q).unwrap().is_empty());
    q.dirs = Some(vec![arbor_index::dir_key(&dir)]);
    assert_eq!(cat.search(&q).unwrap().len(), 6);
    // Phrase, prefix, NOT; an unreadable query is searched as words; an empty one is an error.
    assert_eq!(
        cat.search(&SearchQuery::new("\"many other\""))
            .unwrap()
            .len(),
        5
    );
    assert_eq!(cat.search(&SearchQuery::new("walr*")).unwrap().len(), 6);
    assert_eq!(
        cat.search(&SearchQuery::new("walrus NOT sentence"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(cat.search(&SearchQuery::new("walrus:")).unwrap().len(), 6);
    assert!(cat.search(&SearchQuery::new("  ")).is_err());
}

#[test]
fn damage_found_by_a_search_is_recovered_from() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    let text = ["zebra crossing ".repeat(40)];
    for k in 0..40 {
        session(
            &dir,
            &format!("s{k}"),
            k,
            &[&text[0], "more words about zebras and lions"],
        );
    }
    let db = d.path().join("c.db");
    {
        let cat = indexed(&db, &dir);
        cat.conn_checkpoint();
    }
    // Zero two pages near the end (FTS and text rows live there; the files table is at the
    // front), as a lost write would leave them.
    let mut b = std::fs::read(&db).unwrap();
    let page = 4096;
    let n = b.len() / page * page;
    for x in &mut b[n - 3 * page..n - page] {
        *x = 0;
    }
    std::fs::write(&db, &b).unwrap();
    let mut cat = Catalog::open(&db).unwrap();
    // The whole-file check (daily on open, and in `arbor index`) finds it; so would SQLite
    // when a search reads a damaged page.
    let r = cat
        .check_integrity()
        .and_then(|_| cat.search(&SearchQuery::new("zebra")));
    assert!(
        matches!(r, Err(arbor_index::IndexError::Corrupt { .. })),
        "{r:?}"
    );
    let aside = cat.recover().unwrap();
    assert!(aside.exists());
    cat.refresh_dirs(
        std::slice::from_ref(&dir),
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(cat.search(&SearchQuery::new("zebra")).unwrap().len(), 20);
    assert!(cat.check_integrity().is_ok());
}

mod any_query {
    //! Issue 10, item 12: every query string either searches or is arbor's own query error
    //! (`IndexError::Query`), never a raw SQLite error.
    use super::session;
    use arbor_index::{Catalog, IndexError, RefreshOptions, SearchQuery};
    use proptest::prelude::*;

    fn catalog() -> (tempfile::TempDir, Catalog) {
        let d = tempfile::tempdir().expect("tempdir");
        let dir = d.path().join("s");
        std::fs::create_dir(&dir).expect("mkdir");
        session(
            &dir,
            "a",
            1,
            &["hello world", "c++ and foo:bar", "NEAR the rowid"],
        );
        let mut cat = Catalog::open(&d.path().join("c.db")).expect("open");
        cat.refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_texts(true),
            &mut |_| {},
        )
        .expect("index");
        (d, cat)
    }

    fn assert_answers(cat: &Catalog, query: &str) {
        match cat.search(&SearchQuery::new(query)) {
            Ok(_) | Err(IndexError::Query(_)) => {}
            Err(e) => panic!("{query:?}: {e}"),
        }
    }

    #[test]
    fn queries_fts5_cannot_read_are_searched_or_refused_by_arbor() {
        let (_d, cat) = catalog();
        for q in [
            "*",
            "*llo",
            "**",
            "*rowid",
            "^",
            "^hello",
            "-",
            "+",
            ":",
            "a:",
            ":b",
            "rowid:1",
            "fts:x",
            "\"",
            "\"\"",
            "(",
            ")",
            "()",
            "NEAR",
            "NEAR(",
            "NEAR(a b",
            "AND",
            "OR",
            "NOT",
            "a AND",
            "OR b",
            "{a b}:c",
            "-x",
            "+x",
            "x*y",
            "\u{0}",
            "\u{1b}[2J",
            "'",
            "a'b",
            "c++",
            "foo:bar",
            "héllo*",
            "🙂",
            "x NEAR/3 y",
        ] {
            assert_answers(&cat, q);
        }
        let hits = cat
            .search(&SearchQuery::new("*llo"))
            .expect("searched as words");
        assert!(hits.is_empty() || hits.iter().all(|h| !h.snippet.is_empty()));
        assert!(matches!(
            cat.search(&SearchQuery::new("*")),
            Err(IndexError::Query(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(
            std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
        ))]
        #[test]
        fn every_query_string_answers(
            q in prop_oneof![
                any::<String>(),
                proptest::collection::vec(
                    prop_oneof![
                        Just("*".to_string()), Just("\"".to_string()), Just("^".to_string()),
                        Just(":".to_string()), Just("(".to_string()), Just(")".to_string()),
                        Just("+".to_string()), Just("-".to_string()), Just("{".to_string()),
                        Just("}".to_string()), Just(" ".to_string()), Just(",".to_string()),
                        Just("NEAR".to_string()), Just("AND".to_string()), Just("OR".to_string()),
                        Just("NOT".to_string()), Just("rowid".to_string()), Just("fts".to_string()),
                        Just("hello".to_string()), Just("wor".to_string()), Just("é".to_string()),
                        "[a-z0-9]{1,4}".prop_map(|s| s),
                    ],
                    0..12,
                ).prop_map(|v| v.concat()),
            ]
        ) {
            let (_d, cat) = catalog();
            assert_answers(&cat, &q);
        }
    }
}

/// Filters that keep every text the catalog holds (every indexed kind, every directory) are
/// left out of the window and the count (issue 21, item 15: counting 206,821 matches joined to
/// their rows took 447 ms): the answers are the same as with no filter, and a filter that
/// does remove something still counts only what it keeps.
#[test]
fn filters_that_keep_everything_give_the_same_answers() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    for k in 0..6 {
        session(&a, &format!("a{k}"), k, &["walrus one", "walrus two"]);
    }
    for k in 0..4 {
        session(&b, &format!("b{k}"), 10 + k, &["walrus three"]);
    }
    let mut cat = Catalog::open(&d.path().join("c.db")).unwrap();
    cat.refresh_dirs(
        &[a.clone(), b.clone()],
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    let run = |dirs: Option<Vec<String>>, kinds: Option<Vec<Kind>>, window: usize| {
        let mut q = SearchQuery::new("walrus");
        q.limit = 3;
        q.rank_window = window;
        q.dirs = dirs;
        q.kinds = kinds;
        let (hits, total) = cat.search_with_total(&q).unwrap();
        let ids: Vec<String> = hits.into_iter().filter_map(|h| h.entry_id).collect();
        (ids, total)
    };
    let both = Some(vec![arbor_index::dir_key(&a), arbor_index::dir_key(&b)]);
    let indexed: Vec<Kind> = Kind::ALL.into_iter().filter(|k| !k.is_opt_in()).collect();
    for window in [0, 5] {
        let plain = run(None, None, window);
        assert_eq!(plain.1, 16);
        assert_eq!(run(both.clone(), Some(indexed.clone()), window), plain);
        assert_eq!(run(both.clone(), None, window), plain);
        let only_a = run(Some(vec![arbor_index::dir_key(&a)]), None, window);
        let only_b = run(Some(vec![arbor_index::dir_key(&b)]), None, window);
        assert_eq!((only_a.1, only_b.1), (12, 4));
        assert_eq!(run(both.clone(), Some(vec![Kind::Assistant]), window).1, 0);
    }
}

/// The count stops at `limit + count_cap + 1` (issue 21, item 15: counting a phrase's 11,134
/// matches took 41 ms), whether the count query runs or the rank window's query already saw
/// that many matches; with a cap of 0, or under the cap, it is exact; a directory filter
/// counts only what it keeps either way.
#[test]
fn the_count_stops_at_its_cap_however_it_is_known() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    for k in 0..6 {
        session(&a, &format!("a{k}"), k, &["walrus one", "walrus two"]);
    }
    for k in 0..4 {
        session(&b, &format!("b{k}"), 10 + k, &["walrus three"]);
    }
    let mut cat = Catalog::open(&d.path().join("c.db")).unwrap();
    cat.refresh_dirs(
        &[a.clone(), b.clone()],
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    let total = |dirs: Option<Vec<String>>, window: usize, cap: usize| {
        let mut q = SearchQuery::new("walrus");
        q.limit = 3;
        q.rank_window = window;
        q.count_cap = cap;
        q.dirs = dirs;
        let (hits, total) = cat.search_with_total(&q).unwrap();
        assert_eq!(hits.len(), 3);
        total
    };
    // 16 matches; window 0: no window query; 10: it finds its 10th newest match (10 >= 3+2+1);
    // 5: it finds its 5th, too few to settle the count.
    for window in [0, 5, 10] {
        assert_eq!(total(None, window, 0), 16, "window {window}");
        assert_eq!(total(None, window, 2), 6, "window {window}");
        assert_eq!(total(None, window, 13), 16, "window {window}");
        assert_eq!(total(None, window, 100), 16, "window {window}");
        let only_b = Some(vec![arbor_index::dir_key(&b)]);
        assert_eq!(total(only_b.clone(), window, 0), 4, "window {window}");
        assert_eq!(total(only_b, window, 2), 4, "window {window}");
    }
}

/// The hits are the best `limit` of the ranked matches in the order rank, newest text, newest
/// row, whatever ties there are, with and without a rank window (issue 21, item 15: the
/// search reads the rows and makes the snippets of the matches that may be among the best
/// only, and breaks ties itself). The reference is FTS5's own `bm25()` in SQL: for a query of
/// one phrase the order is the same.
#[test]
fn hits_are_the_best_in_rank_then_time_order_with_ties() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    // Many equal texts (equal ranks), at times that repeat across sessions (equal times too).
    for k in 0..40 {
        let texts: Vec<&str> = match k % 4 {
            0 => vec!["walrus tusk", "walrus tusk", "nothing"],
            1 => vec![
                "walrus walrus tusk",
                "a walrus in a longer sentence here",
                "walrus tusk",
            ],
            2 => vec!["walrus tusk", "tusk only", "walrus"],
            _ => vec!["walrus", "walrus tusk", "walrus tusk"],
        };
        session(&dir, &format!("s{k:02}"), k % 3, &texts);
    }
    let db = d.path().join("c.db");
    let cat = indexed(&db, &dir);
    let raw = rusqlite::Connection::open(&db).unwrap();
    for query in ["walrus", "tusk", "\"walrus tusk\"", "walr*"] {
        for window in [0usize, 7, 30, 2000] {
            for limit in [1usize, 5, 20, 200] {
                let within = if window > 0 {
                    format!(" AND fts.rowid IN (SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rowid DESC LIMIT {window})")
                } else {
                    String::new()
                };
                let sql = format!(
                    "SELECT d.eid FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?1{within} \
                     ORDER BY bm25(fts), d.ts_ms DESC, fts.rowid DESC LIMIT {limit}"
                );
                let want: Vec<String> = raw
                    .prepare(&sql)
                    .unwrap()
                    .query_map([query], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                let mut q = SearchQuery::new(query);
                q.rank_window = window;
                q.limit = limit;
                let got: Vec<String> = cat
                    .search(&q)
                    .unwrap()
                    .into_iter()
                    .filter_map(|h| h.entry_id)
                    .collect();
                assert!(!want.is_empty());
                assert_eq!(got, want, "{query} window {window} limit {limit}");
            }
        }
    }
}

/// Issue 21, item 15: a prefix that completes to one term is searched as that term (FTS5
/// expands a prefix into every matching text before the first row; a term is read lazily):
/// every answer is the one FTS5's own expansion gives (the same query in parentheses, which
/// arbor leaves to FTS5), hits, ranks, snippets and totals, with one completion, several, none,
/// diacritics and case folded, several prefixes, and a window smaller than the matches.
#[test]
fn a_prefix_answers_as_fts5s_own_expansion() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    for k in 0..12u64 {
        session(
            &dir,
            &format!("p{k:02}"),
            k,
            &[
                &"Ωmega ".repeat(1 + k as usize % 3),
                "refactor the lock",
                if k % 2 == 0 {
                    "refactoring again"
                } else {
                    "crème brûlée"
                },
                &format!("Crème {k} and the Ωmega refactor, number {k}"),
            ],
        );
    }
    let cat = indexed(&d.path().join("c.db"), &dir);
    for query in [
        "Ωmeg*",
        "ωMEG*",
        "Ωmega*",
        "omeg*",
        "refacto*",
        "refactor*",
        "refactori*",
        "crè*",
        "CREM*",
        "brûl*",
        "Ωmeg* refactor",
        "Ωmeg* lock*",
        "zz*",
        "numb* Ωmeg*",
    ] {
        for (limit, window) in [(20, 2000), (3, 5), (1000, 0)] {
            let mut q = SearchQuery::new(query);
            q.limit = limit;
            q.rank_window = window;
            let got = cat.search_with_total(&q).unwrap();
            q.query = format!("({query})");
            let want = cat.search_with_total(&q).unwrap();
            assert_eq!(got, want, "{query:?}, limit {limit}, window {window}");
        }
    }
    // The texts are there to be found.
    let (hits, total) = cat.search_with_total(&SearchQuery::new("Ωmeg*")).unwrap();
    assert_eq!((hits.len(), total), (20, 24));
    assert!(hits.iter().all(|h| h.snippet.contains("**Ωmega**")));
}

/// `re:` hits come newest first by their time, not in the order the rows were written: a
/// session indexed after another (a later refresh, or a reader thread that finished later)
/// holds older hits here, and they come after the newer ones.
#[test]
fn regex_hits_come_newest_first_whatever_the_order_they_were_indexed_in() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    let mut cat = Catalog::open(&d.path().join("c.db")).unwrap();
    let refresh = |cat: &mut Catalog| {
        cat.refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_texts(true),
            &mut |_| {},
        )
        .unwrap();
    };
    // The newer session (2025-01-06) first, then the older one (2025-01-02): the older one's
    // rows are written last.
    session(&dir, "newer", 5, &["the quokka hopped"]);
    refresh(&mut cat);
    session(&dir, "older", 1, &["a quokka slept"]);
    refresh(&mut cat);
    let hits = cat.search(&SearchQuery::new("re:quokka")).unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.entry_id.clone().unwrap()).collect();
    assert_eq!(ids, ["newer000", "older000"]);
}
