//! `arbor serve` run as a user runs it, for the tests: the real binary on a free loopback
//! port, its URL read from the line it prints once it listens; stopped when dropped.
//!
//! ```no_run
//! # let bin = std::path::Path::new("target/debug/arbor");
//! let s = arbor_testkit::served::Served::start(bin, &["--all"], &[("HOME", "/tmp/h")]);
//! let page = s.get("/");
//! assert!(page.starts_with("HTTP/1.1 200"));
//! ```
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `arbor serve`.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// What it printed on stderr after the listening line, as it goes.
    pub stderr: mpsc::Receiver<String>,
}

impl Served {
    /// Starts `bin serve --addr 127.0.0.1:0 ARGS` with `envs` added to the environment
    /// without waiting for it to listen: the process and the lines of its stderr as they come
    /// (for a test that stops a server before it listens).
    pub fn spawn(
        bin: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> (Child, mpsc::Receiver<String>) {
        let mut cmd = Command::new(bin);
        cmd.arg("serve").arg("--addr").arg("127.0.0.1:0").args(args);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("arbor serve starts");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        (child, rx)
    }

    /// Starts `bin serve --addr 127.0.0.1:0 ARGS` with `envs` added to the environment and
    /// waits (up to 60 s) for the line saying where it listens.
    pub fn start(bin: &Path, args: &[&str], envs: &[(&str, &str)]) -> Served {
        let (mut child, rx) = Served::spawn(bin, args, envs);
        let mut seen = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    if let Some(url) = line.strip_prefix("arbor serve: listening on ") {
                        let url = url.trim().trim_end_matches('/').to_string();
                        let addr = url.trim_start_matches("http://").to_string();
                        return Served {
                            child,
                            url,
                            addr,
                            stderr: rx,
                        };
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("arbor serve did not say where it listens; it printed: {seen:?}");
                }
            }
        }
    }

    /// Sends `signal` (`libc::SIGTERM`, `libc::SIGINT`) to the server and waits (up to 30 s)
    /// for it to exit: its exit status, `None` when it did not exit in time (it is then
    /// killed).
    pub fn signal(&mut self, signal: i32) -> Option<std::process::ExitStatus> {
        signal_and_wait(&mut self.child, signal)
    }

    /// A raw HTTP/1.1 `GET path` (Host: the server's address): the whole answer, head and
    /// body, as text.
    pub fn get(&self, path: &str) -> String {
        self.request("GET", path, &[], b"")
    }

    /// A raw HTTP/1.1 request with extra headers (a `Host` among them replaces the server's
    /// address) and a body: the whole answer as text.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> String {
        let mut s = TcpStream::connect(&self.addr).expect("connect to arbor serve");
        s.set_read_timeout(Some(Duration::from_secs(60))).ok();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).expect("send");
        s.write_all(body).expect("send body");
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Sends `signal` to `child` and waits (up to 30 s, polling its state) for it to exit: its
/// exit status, `None` when it did not exit in time (it is then killed and reaped).
pub fn signal_and_wait(child: &mut Child, signal: i32) -> Option<std::process::ExitStatus> {
    let pid = i32::try_from(child.id()).ok()?;
    // SAFETY: kill(2) on our own child, not yet reaped (only `child` waits for it).
    unsafe { libc::kill(pid, signal) };
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < until {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
