//! The catalog and the prompt history under hostile or unlucky conditions (issue 10, items 6,
//! 9, 11): created private; a `--catalog` that is not arbor's is never moved or written; a
//! damaged catalog never answers from its damage (the command answers from the rebuilt one);
//! an unwritable catalog of any kind falls back to memory with one warning.
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arbor_testkit::as_nobody::{as_nobody, unless_root};

const DEMO: &str = "2025-11-20T23-33-01-550Z_pi-real-v1-fixture.jsonl";

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    sessions: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().to_path_buf();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let sessions = root.join("s");
        std::fs::create_dir(&sessions).expect("mkdir");
        let demo = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../demo/sessions")
            .join(DEMO);
        for k in 0..3 {
            std::fs::copy(&demo, sessions.join(format!("x{k}.jsonl"))).expect("copy demo");
        }
        Env {
            _tmp: tmp,
            root,
            sessions,
        }
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", self.root.join("home"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env_remove("ARBOR_CATALOG")
            .env_remove("PI_CODING_AGENT_DIR")
            .stdin(Stdio::null());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
    }
    fn s(&self) -> &str {
        self.sessions.to_str().expect("utf8")
    }
    fn search(&self, catalog: &Path) -> Output {
        let c = catalog.to_str().expect("utf8");
        self.run(&["search", "mode", "--dir", self.s(), "--catalog", c])
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_catalog_and_the_history_are_created_private() {
    let env = Env::new();
    let o = env.run(&["search", "mode", "--dir", env.s()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cache = env.root.join("cache");
    for d in [cache.clone(), cache.join("arbor")] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    for f in std::fs::read_dir(cache.join("arbor"))
        .expect("dir")
        .flatten()
    {
        assert_eq!(mode(&f.path()), 0o600, "{}", f.path().display());
    }
    // The write-ahead log SQLite makes while a catalog is open has the same mode.
    let db = cache.join("arbor/catalog.db");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (1);",
    )
    .expect("write");
    assert_eq!(mode(&cache.join("arbor/catalog.db-wal")), 0o600);
    drop(conn);

    let o = env.run(&["history", "--add", "a prompt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let agent = env.root.join("home/.omp/agent");
    assert_eq!(mode(&agent.join("history.db")), 0o600);
    assert_eq!(mode(&agent), 0o700);
    assert_eq!(mode(&env.root.join("home/.omp")), 0o700);

    // An explicit --catalog in a new directory: the same.
    let c = env.root.join("elsewhere/deeper/cat.db");
    let o = env.search(&c);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&c), 0o600);
    assert_eq!(mode(&env.root.join("elsewhere")), 0o700);
}

#[test]
fn a_catalog_path_that_is_not_arbors_is_left_untouched() {
    let env = Env::new();
    let session = env.root.join("session.jsonl");
    std::fs::copy(env.sessions.join("x0.jsonl"), &session).expect("copy");
    let dotfile = env.root.join(".bashrc");
    std::fs::write(&dotfile, "export PATH=$PATH\n").expect("write");
    let other_app = env.root.join("history.db");
    {
        let c = rusqlite::Connection::open(&other_app).expect("sqlite");
        c.execute_batch("CREATE TABLE history(id INTEGER PRIMARY KEY, prompt TEXT); INSERT INTO history(prompt) VALUES ('x');")
            .expect("schema");
    }
    let with_id = env.root.join("app.db");
    {
        let c = rusqlite::Connection::open(&with_id).expect("sqlite");
        c.execute_batch("PRAGMA application_id = 1234; CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES ('schema', '3'); CREATE TABLE files(x);")
            .expect("schema");
    }
    for f in [&session, &dotfile, &other_app, &with_id] {
        let before = std::fs::read(f).expect("read");
        let c = f.to_str().expect("utf8");
        for args in [
            vec!["ls", "--dir", env.s(), "--catalog", c],
            vec!["search", "mode", "--dir", env.s(), "--catalog", c],
            vec!["index", "--catalog", c],
        ] {
            let o = env.run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("not an arbor catalog"), "{args:?}: {err}");
        }
        let o = env
            .cmd(&["ls", "--dir", env.s()])
            .env("ARBOR_CATALOG", f)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(f).expect("read"),
            before,
            "{} changed",
            f.display()
        );
    }
    let names: Vec<String> = std::fs::read_dir(&env.root)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains(".corrupt-")),
        "something was moved aside: {names:?}"
    );
}

#[test]
fn garbage_at_arbors_own_catalog_place_is_moved_aside_and_rebuilt() {
    let env = Env::new();
    let dir = env.root.join("cache/arbor");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("catalog.db"), vec![b'z'; 10_000]).expect("garbage");
    let o = env.run(&["ls", "--dir", env.s()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("moved to"), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 4);
}

/// Damage of the kinds found by hand: pages zeroed (SQLite notices when a search reads them)
/// and the text index's blocks overwritten (the b-trees stay valid; FTS5 silently finds
/// nothing). Either way the search answers from the rebuilt catalog.
#[test]
fn a_damaged_catalog_never_answers_a_search_with_no_match() {
    for damage in ["zero pages", "zero index blocks", "garbage index blocks"] {
        let env = Env::new();
        let cat = env.root.join("c.db");
        let o = env.search(&cat);
        assert!(o.status.success(), "{}", stderr(&o));
        let hits = String::from_utf8_lossy(&o.stdout).lines().count();
        assert!(hits > 10, "{hits}");
        match damage {
            "zero pages" => {
                let mut b = std::fs::read(&cat).expect("read");
                let page = 4096;
                assert!(b.len() >= 4 * page);
                // Everything after the schema page, as a lost write-back would leave it.
                for x in &mut b[2 * page..] {
                    *x = 0;
                }
                std::fs::write(&cat, &b).expect("write");
            }
            _ => {
                let c = rusqlite::Connection::open(&cat).expect("open");
                let f = if damage == "zero index blocks" {
                    "zeroblob(length(block))"
                } else {
                    "randomblob(length(block))"
                };
                c.execute_batch(&format!(
                    "UPDATE fts_data SET block = {f} WHERE id > 10; PRAGMA wal_checkpoint(TRUNCATE);"
                ))
                .expect("damage");
            }
        }
        let o = env.search(&cat);
        let err = stderr(&o);
        assert!(o.status.success(), "{damage}: {err}");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).lines().count(),
            hits,
            "{damage}: {err}"
        );
        assert_eq!(err.matches("warning").count(), 1, "{damage}: {err}");
        assert!(err.contains("damaged"), "{damage}: {err}");
    }
}

#[test]
fn an_unwritable_catalog_of_any_kind_falls_back_with_one_warning() {
    if !unless_root("needs root to run arbor as a user who cannot write (CI runs as root)") {
        return;
    }
    let env = Env::new();
    let build = env.root.join("c.db");
    assert!(env.search(&build).status.success());
    // A read-only catalog in a writable directory, and one in a read-only directory.
    let ro_file_dir = env.root.join("rw");
    let ro_dir = env.root.join("ro");
    for d in [&ro_file_dir, &ro_dir] {
        std::fs::create_dir(d).expect("mkdir");
        std::fs::copy(&build, d.join("c.db")).expect("copy");
        std::os::unix::fs::chown(d, Some(65534), Some(65534)).expect("chown");
        std::os::unix::fs::chown(d.join("c.db"), Some(65534), Some(65534)).expect("chown");
        std::fs::set_permissions(d.join("c.db"), std::fs::Permissions::from_mode(0o444))
            .expect("chmod");
    }
    std::fs::set_permissions(&ro_dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    for dir in [&ro_file_dir, &ro_dir] {
        let cat = dir.join("c.db");
        let before = std::fs::read(&cat).expect("read");
        let c = cat.to_str().expect("utf8");
        for args in [
            vec!["ls", "--dir", env.s(), "--catalog", c],
            vec!["search", "mode", "--dir", env.s(), "--catalog", c],
            vec!["index", "--catalog", c],
        ] {
            let mut cmd = env.cmd(&args);
            as_nobody(&mut cmd);
            let o = cmd.output().expect("run");
            let err = stderr(&o);
            assert!(o.status.success(), "{args:?}: {err}");
            assert_eq!(
                err.lines().filter(|l| l.contains("warning")).count(),
                1,
                "{args:?}: {err}"
            );
            assert!(
                err.contains("warning") && err.contains("in memory"),
                "{args:?}: {err}"
            );
            if args[2] != "index" {
                assert!(!o.stdout.is_empty(), "{args:?}");
            }
        }
        assert_eq!(std::fs::read(&cat).expect("read"), before);
    }
}
