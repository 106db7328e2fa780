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

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("stat").permissions().mode() & 0o777
}

/// A new store holds every line of every session: it is created 0600 (its `-wal` and `-shm`
/// too) whatever the umask, marked as arbor's (`application_id`), and a store that must exist
/// (pull, status) is found while another process writes it.
#[test]
fn a_new_store_is_private_and_marked() {
    // SAFETY: umask only sets the process's file-creation mask.
    unsafe { libc::umask(0o022) };
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("shared.db");
    let store = SqliteStore::open(&path).expect("open");
    let sm = SessionManager::create_in(Arc::new(store.clone()), "/p", ManagerOptions::default())
        .expect("create");
    drop(sm);
    for p in [
        path.clone(),
        tmp.path().join("shared.db-wal"),
        tmp.path().join("shared.db-shm"),
    ] {
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
    // While the first handle is open (its lines perhaps only in the WAL).
    let again = SqliteStore::open_existing(&path).expect("an existing store");
    assert_eq!(again.list().expect("list").len(), 1);
    drop((store, again));
    let conn = rusqlite::Connection::open(&path).expect("raw");
    let id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .expect("id");
    assert_eq!(id, i64::from(arbor_db::STORE_APP_ID));
}

/// arbor writes its tables only into a store of its own: another application's SQLite
/// database, one with other tables, a text file, a directory are refused and left byte for
/// byte as they were; a store that must exist (pull, status) is not created when missing or
/// empty, nor through a symlink to nothing; a store of an earlier arbor (no application id)
/// is still taken.
#[test]
fn only_a_store_of_arbors_own_is_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let other_app = d.join("other-app.db");
    {
        let c = rusqlite::Connection::open(&other_app).expect("raw");
        c.execute_batch(
            "PRAGMA application_id = 1234; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
        )
        .expect("other app");
    }
    let other_tables = d.join("notes.db");
    {
        let c = rusqlite::Connection::open(&other_tables).expect("raw");
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .expect("notes");
    }
    let text = d.join("notes.txt");
    std::fs::write(&text, "not a database\n").expect("text");
    for p in [&other_app, &other_tables, &text] {
        let before = std::fs::read(p).expect("read");
        let e = SqliteStore::open(p).expect_err("refused");
        assert!(e.to_string().contains("nothing was written"), "{e}");
        assert_eq!(std::fs::read(p).expect("read"), before, "{}", p.display());
        assert!(!Path::new(&format!("{}-wal", p.display())).exists());
    }
    assert!(SqliteStore::open(d).is_err(), "a directory");
    // Must exist: missing, empty, a dangling symlink.
    let typo = d.join("typo.db");
    let e = SqliteStore::open_existing(&typo).expect_err("missing");
    assert!(e.to_string().contains("no such store"), "{e}");
    assert!(!typo.exists());
    let empty = d.join("empty.db");
    std::fs::write(&empty, "").expect("empty");
    SqliteStore::open_existing(&empty).expect_err("empty");
    assert_eq!(std::fs::read(&empty).expect("read").len(), 0);
    let link = d.join("link.db");
    std::os::unix::fs::symlink(d.join("target.db"), &link).expect("symlink");
    SqliteStore::open(&link).expect_err("dangling symlink");
    assert!(!d.join("target.db").exists());
    // A store made before the mark: its tables, no application id.
    let old = d.join("old.db");
    {
        let c = rusqlite::Connection::open(&old).expect("raw");
        c.execute_batch(arbor_db::schema::SQLITE_SCHEMA)
            .expect("schema");
    }
    SqliteStore::open_existing(&old).expect("a store of an earlier arbor");
}

/// On a shared volume, an empty store file or an SQLite side file (`-wal`) that another user
/// made first is refused (whoever made it could read every line put there), and left as it
/// was; an empty file of the caller's own, world-readable, becomes a private store.
#[test]
fn a_store_file_another_user_planted_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let mine = d.join("mine.db");
    std::fs::write(&mine, "").expect("empty");
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    SqliteStore::open(&mine).expect("an empty file of my own");
    assert_eq!(mode(&mine), 0o600);
    if !arbor_testkit::skip::unless_root(
        "needs root to make files as another user (CI runs as root)",
    ) {
        return;
    }
    let nobody = 65534;
    let planted = d.join("planted.db");
    std::fs::write(&planted, "").expect("empty");
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    std::os::unix::fs::chown(&planted, Some(nobody), Some(nobody)).expect("chown");
    let e = SqliteStore::open(&planted).expect_err("planted store");
    assert!(e.to_string().contains("another user"), "{e}");
    assert_eq!(std::fs::read(&planted).expect("read").len(), 0);
    assert_eq!(mode(&planted), 0o666);
    let wal_only = d.join("fresh.db");
    let wal = d.join("fresh.db-wal");
    std::fs::write(&wal, "").expect("wal");
    std::os::unix::fs::chown(&wal, Some(nobody), Some(nobody)).expect("chown");
    let e = SqliteStore::open(&wal_only).expect_err("planted wal");
    assert!(e.to_string().contains("fresh.db-wal"), "{e}");
    assert!(!wal_only.exists());
    assert_eq!(std::fs::read(&wal).expect("read").len(), 0);
}

fn meta_by(id: &str, user: Option<&str>) -> arbor_store::backend::SessionMeta {
    arbor_store::backend::SessionMeta {
        id: id.into(),
        cwd: "/work/p".into(),
        created: "2026-01-01T00:00:00.000Z".into(),
        tool: "pi".into(),
        machine: Some("m1".into()),
        user: user.map(str::to_string),
        ..Default::default()
    }
}

fn header_of(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}}"#
    )
}

/// The digests of a store's files (the database, its WAL and journal), to see that nothing
/// changed. (The shared-memory index `-shm` is left out: every reader of a WAL database maps
/// it, a read-only one included, and SQLite creates it, with an empty `-wal`, when missing.)
fn files_of(db: &Path) -> Vec<(String, Option<String>)> {
    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    ["", "-wal", "-journal"]
        .iter()
        .map(|s| {
            let p = arbor_store::paths::with_suffix(db, s);
            let digest = std::fs::read(p)
                .ok()
                .map(|b| arbor_store::blobs::sha256_hex(&b))
                .filter(|d| d != EMPTY);
            (s.to_string(), digest)
        })
        .collect()
}

/// Schema version 3 on SQLite: a version-1 store (no `pushed_by`) is read as it is by a
/// read-only open (users unknown, its files unchanged), and an ordinary open migrates it:
/// the column exists, older rows have no user, new rows keep theirs.
#[test]
fn a_version_1_store_gains_the_user_column() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let store = SqliteStore::open(&db).expect("open");
    store
        .create(&meta_by("old-1", None), &[header_of("old-1").as_bytes()])
        .expect("create");
    drop(store);
    {
        let c = rusqlite::Connection::open(&db).expect("raw");
        c.execute_batch("ALTER TABLE sessions DROP COLUMN pushed_by; UPDATE arbor_schema SET version = 1; PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("back to version 1");
    }
    let before = files_of(&db);
    let ro = SqliteStore::open_read_only(&db).expect("read-only open of version 1");
    let l = ro.list().expect("list");
    assert_eq!((l.len(), l[0].meta.user.clone()), (1, None));
    assert_eq!(files_of(&db), before, "a read-only open changed the store");
    let rw = SqliteStore::open(&db).expect("migrating open");
    if let Err(e) = conformance::users_after_migration(&rw, &ro, "old-1") {
        panic!("SQLite, after the migration: {e}");
    }
    drop(rw);
    let c = rusqlite::Connection::open(&db).expect("raw");
    let v: i64 = c
        .query_row("SELECT version FROM arbor_schema", [], |r| r.get(0))
        .expect("version");
    assert_eq!(v, arbor_db::schema::SCHEMA_VERSION);
    assert_eq!(v, 3);
}

/// A store opened read-only writes nothing: its writes fail, its files are byte for byte
/// what they were, and a missing or empty file is refused without being created.
#[test]
fn a_read_only_store_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let store = SqliteStore::open(&db).expect("open");
    store
        .create(&meta_by("s-1", Some("ann")), &[header_of("s-1").as_bytes()])
        .expect("create");
    drop(store);
    let before = files_of(&db);
    let ro = SqliteStore::open_read_only(&db).expect("read-only");
    assert!(ro
        .create(&meta_by("s-2", None), &[header_of("s-2").as_bytes()])
        .is_err());
    assert!(ro.set_name("s-1", "x").is_err());
    assert!(ro.delete("s-1").is_err());
    assert_eq!(
        ro.list().expect("list")[0].meta.user.as_deref(),
        Some("ann")
    );
    drop(ro);
    assert_eq!(files_of(&db), before);
    let missing = dir.path().join("none.db");
    assert!(SqliteStore::open_read_only(&missing).is_err());
    assert!(!missing.exists());
}
