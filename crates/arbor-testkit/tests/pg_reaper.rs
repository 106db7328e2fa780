//! A server that is never dropped is still stopped and its directory removed when the test
//! process ends: the process that started it is killed (`SIGKILL`, as a CI timeout does)
//! and the server and its directory go. Before the reaper, every run of a test binary that
//! kept its server in a `static` left a running PostgreSQL and its data under /tmp.
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arbor_testkit::pg::TestServer;

const CHILD_ENV: &str = "ARBOR_TEST_REAPER_CHILD";

/// In the child: start a server, say where it lives, and wait to be killed.
#[test]
fn reaper_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return; // only the parent test runs this one, in its own process
    }
    let server = TestServer::start().expect("server");
    let pid = server.pid().map(|p| p.to_string()).unwrap_or_default();
    println!(
        "SERVER {} {pid}",
        server
            .dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default()
    );
    let _kept = Box::leak(Box::new(server)); // never dropped, as a `static` is not
    loop {
        std::thread::park();
    }
}

#[test]
fn a_killed_test_process_leaves_no_server_and_no_directory() {
    match TestServer::start() {
        Ok(s) if s.owns_server() => {}
        Ok(_) => {
            return arbor_testkit::skip::skip("ARBOR_PG_URL names a server: nothing is started")
        }
        Err(e) => return arbor_testkit::skip::skip(&format!("no PostgreSQL server here: {e}")),
    }
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args(["--exact", "reaper_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("child");
    let out = child.stdout.take().expect("stdout");
    let mut line = String::new();
    for l in BufReader::new(out).lines() {
        let l = l.expect("line");
        if l.contains("SERVER ") {
            line = l;
            break;
        }
    }
    let mut words = line
        .split("SERVER ")
        .nth(1)
        .expect("the child's line")
        .split(' ');
    let dir = words.next().expect("dir").to_owned();
    let pid: u32 = words.next().expect("pid").parse().expect("pid number");
    assert!(Path::new(&dir).join("data").is_dir(), "{dir}");
    child.kill().expect("kill");
    child.wait().expect("wait");
    // The event: the directory is gone and the postmaster with it (the reaper's work).
    let deadline = Instant::now() + Duration::from_secs(60);
    let running = |pid: u32| Path::new(&format!("/proc/{pid}")).exists();
    while (Path::new(&dir).exists() || running(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!Path::new(&dir).exists(), "{dir} is still there");
    assert!(!running(pid), "the server (pid {pid}) still runs");
}
