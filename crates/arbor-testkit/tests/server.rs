//! A real PostgreSQL server from arbor-testkit: exact bytes and text, advisory locks across
//! connections, and a clean stop on drop. With ARBOR_PG_URL set, the same tests (but the
//! stop) run against that server.

use arbor_testkit::pg::TestServer;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

fn start() -> TestServer {
    TestServer::start().unwrap_or_else(|e| panic!("starting the PostgreSQL test server: {e}"))
}

#[test]
fn bytes_and_text_read_back_exactly() {
    let server = start();
    let db = server
        .unique_database("exact")
        .expect("creating a database");
    let mut client = server
        .connect_to(&db)
        .expect("connecting to the new database");
    client
        .batch_execute(
            "CREATE TABLE lines (seq bigint PRIMARY KEY, raw bytea NOT NULL, line text NOT NULL)",
        )
        .expect("creating the table");

    // Every byte value, NUL and invalid UTF-8 included.
    let mut raw: Vec<u8> = (0..=255u8).collect();
    raw.extend_from_slice(b"\x00\xff\xfe{\"x\":1}\n\r\n");
    // A JSON line with unicode (accents, CJK, an emoji outside the BMP, a right-to-left
    // mark, escapes) and no NUL, which text cannot hold.
    let line = "{\"role\":\"user\",\"content\":\"h\u{e9}llo \u{6728} \u{1f333} \u{200f} \\\"quoted\\\" \\\\ \\n\",\"n\":-1.5e-7}";
    let empty: Vec<u8> = Vec::new();
    client
        .execute(
            "INSERT INTO lines (seq, raw, line) VALUES ($1, $2, $3), ($4, $5, $6)",
            &[&1i64, &raw, &line, &2i64, &empty, &""],
        )
        .expect("inserting");

    // Read back through another connection, opened from the URL form.
    let mut other = postgres::Client::connect(&server.url_for(&db), postgres::NoTls)
        .expect("connecting through the URL");
    let rows = other
        .query(
            "SELECT seq, raw, line, octet_length(line) FROM lines ORDER BY seq",
            &[],
        )
        .expect("selecting");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].get::<_, i64>(0), 1);
    assert_eq!(rows[0].get::<_, Vec<u8>>(1), raw, "bytea bytes differ");
    assert_eq!(rows[0].get::<_, String>(2), line, "text differs");
    assert_eq!(
        rows[0].get::<_, i32>(3) as usize,
        line.len(),
        "octet_length differs from the UTF-8 length"
    );
    assert_eq!(rows[1].get::<_, Vec<u8>>(1), empty);
    assert_eq!(rows[1].get::<_, String>(2), "");

    // The server's encoding is UTF8: a text value cannot hold NUL, and says so.
    let err = client
        .execute("INSERT INTO lines VALUES (3, ''::bytea, $1)", &[&"a\u{0}b"])
        .expect_err("a NUL in text must be refused");
    let msg = arbor_testkit::pg::pg_error(&err);
    assert!(msg.contains("0x00"), "unexpected error: {msg}");
}

#[test]
fn advisory_lock_held_until_disconnect() {
    let server = start();
    let mut first = server.connect().expect("first connection");
    let mut second = server.connect().expect("second connection");
    let try_lock = |c: &mut postgres::Client| -> bool {
        c.query_one("SELECT pg_try_advisory_lock(7001)", &[])
            .expect("pg_try_advisory_lock")
            .get(0)
    };
    assert!(
        try_lock(&mut first),
        "the first connection takes the free lock"
    );
    assert!(
        !try_lock(&mut second),
        "the second connection cannot take a held lock"
    );
    assert!(!try_lock(&mut second), "still held");

    // Disconnecting releases it (the backend exits shortly after the client closes).
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if try_lock(&mut second) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the lock was not released within 10 s of the disconnect"
        );
        thread::sleep(Duration::from_millis(10));
    }
    // Now the second holds it: a third connection cannot take it.
    let mut third = server.connect().expect("third connection");
    assert!(!try_lock(&mut third));
}

#[test]
fn drop_stops_the_server_and_removes_its_directory() {
    let server = start();
    if !server.owns_server() {
        arbor_testkit::skip::skip("ARBOR_PG_URL is set: no server of ours to stop");
        return;
    }
    let pid = server.pid().expect("a started server has a pid");
    let dir = server
        .dir()
        .expect("a started server has a directory")
        .to_path_buf();
    assert!(running(pid), "the postmaster {pid} runs");
    assert!(dir.join("data/postmaster.pid").is_file());
    let port = server
        .conn_string()
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("port=").map(str::to_string))
        .expect("a port");
    let socket = dir.join(format!(".s.PGSQL.{port}"));
    assert!(socket.exists(), "the socket {} exists", socket.display());
    // Unix socket only: no TCP socket of the postmaster (its own inodes, by /proc).
    assert!(!listens_on_tcp(pid), "the server listens on TCP");

    let mut client = server.connect().expect("connecting");
    drop(server);
    assert!(!running(pid), "the postmaster {pid} still runs after drop");
    assert!(!dir.exists(), "{} still exists after drop", dir.display());
    assert!(
        client.simple_query("SELECT 1").is_err(),
        "a connection outlived the server"
    );
}

/// Whether process `pid` runs (exists and is not a zombie left for init to reap).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Whether any socket of process `pid` is a TCP socket listening (state 0A) in
/// /proc/net/tcp or tcp6.
fn listens_on_tcp(pid: u32) -> bool {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("reading the postmaster's fds")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|t| {
            t.to_str()
                .and_then(|s| s.strip_prefix("socket:["))
                .and_then(|s| s.strip_suffix(']'))
                .map(str::to_string)
        })
        .collect();
    assert!(
        !inodes.is_empty(),
        "the postmaster has sockets (its Unix socket at least)"
    );
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter(|p| Path::new(p).exists())
        .any(|p| {
            std::fs::read_to_string(p)
                .expect("reading /proc/net/tcp")
                .lines()
                .skip(1)
                .any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9])
                })
        })
}

/// Start time, median of 3 (`cargo test --release -p arbor-testkit --test server -- --ignored
/// --nocapture start_time`).
#[test]
#[ignore]
fn start_time() {
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let server = start();
        times.push(t.elapsed());
        let t = Instant::now();
        drop(server);
        eprintln!(
            "start {:?}, stop {:?}",
            times.last().expect("a time"),
            t.elapsed()
        );
    }
    times.sort();
    eprintln!("TestServer::start median of 3: {:?}", times[1]);
}
