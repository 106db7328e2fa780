//! SIGKILL of a process appending through `SessionManager` on PostgreSQL and on SQLite: every
//! append it acknowledged is in the database after the kill, whole, and the session opens
//! clean; the next writer takes over at once (the killed one's connection is gone, or its
//! lease is a dead local process's).
//!
//! The appender is this test binary run again (`ARBOR_PG_APPEND_CHILD` naming the store:
//! `sqlite:PATH` or a PostgreSQL URL), printing `ack ID` after each append returns.
//! `ARBOR_STORE_CRASH_KILLS` sets the number of kills per database (default 8; the issue's
//! figure is 200).
use arbor_db::SqliteStore;
use arbor_store::backend::SessionStore;
use arbor_store::{ManagerOptions, SessionManager};
#[cfg(feature = "postgres")]
use arbor_testkit::pg::TestServer;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "ARBOR_PG_APPEND_CHILD";

/// The store `target` names: `sqlite:PATH`, else a PostgreSQL URL.
fn open(target: &str) -> Arc<dyn SessionStore> {
    match target.strip_prefix("sqlite:") {
        Some(path) => Arc::new(SqliteStore::open(std::path::Path::new(path)).expect("sqlite")),
        None => arbor_db::connect_postgres(target).expect("connect"),
    }
}

fn child(url: &str, id: &str, round: &str) {
    let store = open(url);
    let opts = ManagerOptions::default().with_wait(Some(Duration::from_secs(20)));
    let mut sm = SessionManager::open_in(store, id, opts).expect("open");
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        // Some lines large enough to take several network packets (and TOAST rows).
        let text = if i % 7 == 3 {
            "x".repeat(300_000)
        } else {
            format!("round {round} turn {i}")
        };
        let body = format!(r#"{{"role":"user","content":"{text}","timestamp":{i}}}"#);
        let eid = sm.append_message(body.as_bytes()).expect("append");
        writeln!(out, "ack {eid}").expect("stdout");
        out.flush().expect("flush");
    }
}

/// In the appender this binary runs as (`CHILD` set): appends until killed; `true` then.
fn run_as_child() -> bool {
    let Ok(url) = std::env::var(CHILD) else {
        return false;
    };
    let id = std::env::var("ARBOR_PG_APPEND_SESSION").expect("session");
    let round = std::env::var("ARBOR_PG_APPEND_ROUND").unwrap_or_default();
    child(&url, &id, &round);
    true
}

#[test]
#[cfg(feature = "postgres")]
fn killed_appenders_lose_nothing_acknowledged() {
    const NAME: &str = "killed_appenders_lose_nothing_acknowledged";
    if run_as_child() {
        return;
    }
    let server = TestServer::start().expect("a PostgreSQL server (.ci/run installs postgresql)");
    let url = server.url_for(&server.unique_database("arbor_crash").expect("database"));
    killed_appenders(&url, NAME);
}

#[test]
fn killed_sqlite_appenders_lose_nothing_acknowledged() {
    const NAME: &str = "killed_sqlite_appenders_lose_nothing_acknowledged";
    if run_as_child() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", dir.path().join("store.db").display());
    killed_appenders(&url, NAME);
}

/// Kills appenders of one session of the store `url` names, each at a moment of its own,
/// and checks after each kill that every acknowledged entry is stored whole.
fn killed_appenders(url: &str, name: &str) {
    let kills: usize = std::env::var("ARBOR_STORE_CRASH_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(8);
    let url = url.to_string();
    let store = open(&url);
    let mut sm =
        SessionManager::create_in(store.clone(), "/crash", ManagerOptions::default()).expect("c");
    sm.append_message(br#"{"role":"user","content":"start","timestamp":0}"#)
        .expect("first");
    let id = sm.session_id();
    drop(sm);
    let me = std::env::current_exe().expect("test binary");
    let mut acked: Vec<String> = Vec::new();
    let mut seed = 0x2545_f491_u64;
    for round in 0..kills {
        let mut c = Command::new(&me)
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(CHILD, &url)
            .env("ARBOR_PG_APPEND_SESSION", &id)
            .env("ARBOR_PG_APPEND_ROUND", round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("appender");
        let stdout = c.stdout.take().expect("stdout");
        // Each acknowledgement as it comes (the reader ends when the killed child's stdout
        // closes).
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(a) = l.strip_prefix("ack ") {
                    if tx.send(a.to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        // Kill once the appender is under way: after its first acknowledgement (an event,
        // however long a busy machine takes to start it and connect), then a moment later
        // that differs each round (xorshift), so that the kill lands anywhere in an append.
        let first = rx.recv_timeout(Duration::from_secs(120));
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        if first.is_ok() {
            // Up to 400 ms over the default 8 kills; shorter over many (the session, reread
            // after each kill, stays of a size a test can read 200 times).
            let most = (3200 / kills.max(1) as u64).clamp(20, 400);
            std::thread::sleep(Duration::from_millis(seed % most));
        }
        let _ = c.kill(); // SIGKILL
        let _ = c.wait();
        reader.join().expect("reader");
        let mut got: Vec<String> = first.into_iter().collect();
        got.extend(rx.try_iter());
        assert!(
            !got.is_empty(),
            "round {round}: the appender acknowledged nothing in 120 s"
        );
        acked.extend(got);
        // What is stored opens clean, and holds every acknowledged entry.
        let view = SessionManager::open_in(
            store.clone(),
            &id,
            ManagerOptions::default().with_read_only(true),
        )
        .expect("reopen");
        assert!(
            view.doc().report().is_clean(),
            "round {round}: {:?}",
            view.doc().report()
        );
        for a in &acked {
            assert!(
                view.entry(a).is_some(),
                "round {round}: acknowledged {a} is gone"
            );
        }
        let listed = store.list().expect("list");
        let s = listed.iter().find(|s| s.meta.id == id).expect("listed");
        assert_eq!(
            s.lines as usize,
            view.entries().len() + 1,
            "round {round}: counts"
        );
    }
    assert!(acked.len() > kills, "{} appends acknowledged", acked.len());
    println!(
        "{}: {} appends acknowledged over {kills} killed appenders, all there",
        store.describe(),
        acked.len()
    );
    // A writer now takes the session at once and appends.
    let t = Instant::now();
    let mut w = SessionManager::open_in(
        store.clone(),
        &id,
        ManagerOptions::default().with_wait(Some(Duration::from_secs(20))),
    )
    .expect("writer after the kills");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    w.append_message(br#"{"role":"user","content":"after","timestamp":1}"#)
        .expect("append after");
}
