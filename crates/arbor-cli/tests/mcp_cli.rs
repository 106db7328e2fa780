//! `arbor mcp` through the binary: stdout carries only the protocol, the HTTP flags refuse
//! what they must, and a client that goes away mid-call leaves the store as it was.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An agent directory with `n` small sessions in one project.
fn corpus(n: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let project = agent.join("sessions").join("--work-p--");
    std::fs::create_dir_all(&project).expect("mkdir");
    for k in 0..n {
        let id = format!("{k:08x}-0000-7000-8000-000000000000");
        std::fs::write(
            project.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work/p\"}}\n\
                 {{\"type\":\"message\",\"id\":\"u{k}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"walrus number {k} and some words to index\",\"timestamp\":1767225601000}}}}\n"
            ),
        )
        .expect("write");
    }
    (tmp, agent)
}

fn arbor(tmp: &Path, agent: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
    c.arg("--agent-dir")
        .arg(agent)
        .env("HOME", tmp)
        .env("ARBOR_CATALOG", tmp.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_CACHE_HOME");
    c
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn stdio_carries_only_the_protocol() {
    let (tmp, agent) = corpus(3);
    let mut child = arbor(tmp.path(), &agent)
        .args(["mcp", "--all"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = [
        INIT,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"walrus"}}}"#,
    ];
    for l in lines {
        writeln!(stdin, "{l}").expect("write");
    }
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut answers = Vec::new();
    while answers.len() < 3 {
        let mut line = String::new();
        assert!(out.read_line(&mut line).expect("read") > 0, "closed early");
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout is protocol ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        if v.get("id").is_some() {
            answers.push(v);
        }
    }
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(
        status.success(),
        "the server ends when stdin closes: {status}"
    );
    assert_eq!(
        answers[2]["result"]["structuredContent"]["hits"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[test]
fn http_flags_refuse_a_remote_address_without_a_token() {
    let (tmp, agent) = corpus(1);
    let o = arbor(tmp.path(), &agent)
        .args(["mcp", "--http", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("not a loopback address"), "{e}");
    // --allow-remote without --token-file is a usage error.
    let o = arbor(tmp.path(), &agent)
        .args(["mcp", "--http", "0.0.0.0:0", "--allow-remote"])
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every file of a directory tree and its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                v.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn a_client_that_goes_away_mid_call_leaves_the_store_as_it_was() {
    let (tmp, agent) = corpus(3000);
    let before = snapshot(&agent);
    let mut child = arbor(tmp.path(), &agent)
        .args(["mcp", "--all"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{INIT}").expect("write");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("initialize answered");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("write");
    // A call that indexes 3,000 cold sessions, and the client gone while it runs: its pipes
    // closed and the server killed, as a client that dies takes its server with it.
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"search_sessions","arguments":{{"query":"walrus"}},"_meta":{{"progressToken":1}}}}}}"#
    )
    .expect("write");
    // The first progress notification: the refresh is under way.
    loop {
        line.clear();
        if out.read_line(&mut line).expect("read") == 0
            || line.contains("notifications/progress")
            || line.contains("\"id\":2")
        {
            break;
        }
    }
    drop(stdin);
    drop(out);
    let _ = child.kill();
    let _ = child.wait();
    // The session files are as they were, byte for byte.
    assert_eq!(snapshot(&agent), before, "no session file was touched");
    // The catalog is whole (SQLite's transactions), and the next command answers in full.
    let db = tmp.path().join("catalog.db");
    if db.exists() {
        let conn = rusqlite::Connection::open(&db).expect("open catalog");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity_check");
        assert_eq!(ok, "ok");
    }
    let o = arbor(tmp.path(), &agent)
        .args([
            "search",
            "--all",
            "walrus",
            "--json",
            "--limit",
            "5000",
            "--rank-all",
        ])
        .output()
        .expect("search");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["hits"].as_array().map(Vec::len), Some(3000));
}

#[test]
fn ctrl_c_and_sigterm_stop_the_http_server_cleanly() {
    use std::io::BufRead;
    let (tmp, agent) = corpus(1);
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut child = arbor(tmp.path(), &agent)
            .args(["mcp", "--http", "127.0.0.1:0", "--no-watch"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("arbor mcp starts");
        let err = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(err).lines();
        // The signal after the server says it listens (its handlers are installed by then).
        let listening = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.starts_with("arbor mcp: listening on "));
        assert!(listening, "arbor mcp --http said where it listens");
        let status = arbor_testkit::served::signal_and_wait(&mut child, sig)
            .expect("arbor mcp exits after the signal");
        assert!(status.success(), "signal {sig}: {status:?}");
    }
}
