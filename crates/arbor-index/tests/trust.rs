//! Issue 21, item 15: the checks that catch a damaged catalog cost time that grows with the
//! catalog, so they run only when the catalog file is not exactly as arbor left it after
//! them (the stamp beside it, `<catalog>-verified`). These tests show both sides: a file as
//! arbor left it is not checked again (no `quick_check` on open, no FTS5 integrity check for
//! a search that finds little), and every other state (written by something else, a process
//! that died while writing, no stamp, a stamp that does not match) is checked as before, so
//! damage is still found.
use arbor_testkit::catalog::indexed;

use arbor_index::{Catalog, IndexError, RefreshOptions, SearchQuery};
use std::path::{Path, PathBuf};

use arbor_testkit::catalog::session;

struct World {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    db: PathBuf,
}

/// 40 sessions indexed with their texts; a search for a missing word ran (so the text index
/// was checked) and the catalog was closed.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    for k in 0..40 {
        session(
            &dir,
            &format!("s{k}"),
            &"zebra crossing and more words about lions ".repeat(20),
        );
    }
    let db = tmp.path().join("c.db");
    let cat = indexed(&db, &dir);
    assert!(cat
        .search(&SearchQuery::new("xylophone"))
        .unwrap()
        .is_empty());
    drop(cat);
    World { _tmp: tmp, dir, db }
}

/// Zeroes the text index's blocks (the b-trees stay valid, so `quick_check` does not see it,
/// and FTS5 silently finds nothing), through another SQLite connection.
fn damage_text_index(db: &Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(
        "UPDATE fts_data SET block = zeroblob(length(block)) WHERE id > 10; PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

#[test]
fn a_catalog_as_arbor_left_it_is_not_checked_again() {
    let w = world();
    assert!(w.db.with_file_name("c.db-verified").is_file());
    let cat = Catalog::open(&w.db).unwrap();
    assert!(
        !cat.report.checked,
        "quick_check ran on a catalog as arbor left it"
    );
    assert_eq!(cat.trusted(), (true, true));
    // The proof that a short search does not run the FTS5 check: damage that only the check
    // sees, with the file's mtime put back (size and inode do not change), is not seen. (On the
    // code before the stamp, this search ran the check and failed with `Corrupt`.)
    drop(cat);
    let before = mtime(&w.db);
    damage_text_index(&w.db);
    std::fs::File::options()
        .write(true)
        .open(&w.db)
        .unwrap()
        .set_modified(before)
        .unwrap();
    let cat = Catalog::open(&w.db).unwrap();
    assert!(!cat.report.checked);
    assert!(cat
        .search(&SearchQuery::new("xylophone"))
        .unwrap()
        .is_empty());
}

#[test]
fn a_catalog_written_by_something_else_is_checked_and_its_damage_found() {
    let w = world();
    damage_text_index(&w.db);
    let mut cat = Catalog::open(&w.db).unwrap();
    assert!(cat.report.checked, "the files table was not checked");
    assert_eq!(cat.trusted(), (true, false));
    let r = cat.search(&SearchQuery::new("xylophone"));
    assert!(matches!(r, Err(IndexError::Corrupt { .. })), "{r:?}");
    // Rebuilt, checked, and trusted again once closed.
    cat.recover().unwrap();
    cat.refresh_dirs(
        std::slice::from_ref(&w.dir),
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(cat.search(&SearchQuery::new("zebra")).unwrap().len(), 20);
    drop(cat);
    let cat = Catalog::open(&w.db).unwrap();
    assert!(!cat.report.checked);
    assert_eq!(cat.trusted(), (true, true));
}

#[test]
fn a_process_that_died_while_writing_leaves_a_catalog_that_is_checked() {
    let w = world();
    let mut cat = Catalog::open(&w.db).unwrap();
    session(&w.dir, "late", "a late walrus");
    cat.refresh_dirs(
        std::slice::from_ref(&w.dir),
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    // No clean close: the log holds the write, the stamp is the old one.
    std::mem::forget(cat);
    let cat = Catalog::open(&w.db).unwrap();
    assert!(cat.report.checked);
    assert_eq!(cat.trusted(), (true, false));
    assert_eq!(cat.search(&SearchQuery::new("walrus")).unwrap().len(), 1);
}

#[test]
fn a_missing_or_altered_stamp_is_not_trusted() {
    let w = world();
    let stamp = w.db.with_file_name("c.db-verified");
    let text = std::fs::read_to_string(&stamp).unwrap();
    for bad in [
        None,
        Some(text.replacen(" 1 1\n", " 1 0\n", 1)),
        Some(text.replacen("\n", "\n1", 1)),
        Some("garbage".to_string()),
    ] {
        match &bad {
            None => std::fs::remove_file(&stamp).unwrap(),
            Some(t) => std::fs::write(&stamp, t).unwrap(),
        }
        let cat = Catalog::open(&w.db).unwrap();
        match &bad {
            // The stamp says the text index was not checked: the files table is trusted.
            Some(t) if t.ends_with(" 1 0\n") => assert_eq!(cat.trusted(), (true, false)),
            _ => assert!(cat.report.checked, "{bad:?}"),
        }
        assert!(!cat.trusted().1, "{bad:?}");
        // Closing writes the stamp of what this process knows again.
        drop(cat);
    }
}

/// A process that knew less (it opened the catalog while it was not as stamped, so it did not
/// trust the text index) does not overwrite the stamp another process wrote, knowing more, for
/// the state the file is in when the first one closes: the next search need not check again.
#[test]
fn a_stamp_is_not_downgraded_by_a_process_that_knew_less() {
    let w = world();
    let stamp = w.db.with_file_name("c.db-verified");
    let good = std::fs::read_to_string(&stamp).unwrap();
    assert!(good.ends_with(" 1 1\n"), "{good}");
    std::fs::write(&stamp, good.replacen(" 1 1\n", " 1 0\n", 1)).unwrap();
    let a = Catalog::open(&w.db).unwrap();
    assert_eq!(a.trusted(), (true, false));
    // Another process writes, checks the text index and closes: it stamps the new state.
    let mut b = Catalog::open(&w.db).unwrap();
    session(&w.dir, "late", "a late walrus");
    b.refresh_dirs(
        std::slice::from_ref(&w.dir),
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .unwrap();
    assert!(b.search(&SearchQuery::new("xylophone")).unwrap().is_empty());
    drop(b);
    let by_b = std::fs::read_to_string(&stamp).unwrap();
    assert!(by_b.ends_with(" 1 1\n"), "{by_b}");
    drop(a);
    assert_eq!(std::fs::read_to_string(&stamp).unwrap(), by_b);
    assert_eq!(Catalog::open(&w.db).unwrap().trusted(), (true, true));
}

/// A stamp someone else owns (planted beside a catalog in a shared directory) is not taken.
#[test]
fn a_stamp_of_another_owner_is_not_trusted() {
    if !arbor_testkit::skip::unless_root(
        "needs root to give the stamp to another user (CI runs as root)",
    ) {
        return;
    }
    let w = world();
    let stamp = w.db.with_file_name("c.db-verified");
    std::os::unix::fs::chown(&stamp, Some(65534), Some(65534)).unwrap();
    let cat = Catalog::open(&w.db).unwrap();
    assert!(cat.report.checked);
    assert!(!cat.trusted().1);
}
