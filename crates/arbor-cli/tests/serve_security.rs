//! `arbor serve`'s security layers, through the real binary: the token of `--token-file`
//! (every request needs it: `Authorization: Bearer`, or the cookie a first visit with
//! `?token=` sets; else 401), a token file others may read refused at start, a foreign Host
//! refused, the CSP on every answer (pages, assets, errors, refusals, event streams), and
//! session strings escaped and redacted on the sessions page (unless `--no-redact`).
use arbor_testkit::served::Served;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const CSP: &str = "content-security-policy: default-src 'none'; script-src 'self'";

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

fn token_file(dir: &Path, mode: u32) -> PathBuf {
    let f = dir.join(format!("token-{mode:o}"));
    std::fs::write(&f, format!("{TOKEN}\n")).expect("write token");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).expect("chmod");
    f
}

/// The head of an answer, lower-cased.
fn head(answer: &str) -> String {
    answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// The head of a streamed answer (server-sent events never end): read up to the blank line.
fn stream_head(s: &Served, path: &str, extra: &[(&str, &str)]) -> String {
    let mut c = std::net::TcpStream::connect(&s.addr).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n", s.addr);
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    c.write_all(req.as_bytes()).expect("send");
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(1) => got.push(b[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&got).to_ascii_lowercase()
}

fn home() -> (tempfile::TempDir, Vec<(String, String)>) {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path().to_string_lossy().into_owned();
    let env = vec![
        ("HOME".to_string(), h.clone()),
        ("ARBOR_CATALOG".to_string(), format!("{h}/cat.db")),
        ("XDG_CACHE_HOME".to_string(), format!("{h}/.cache")),
    ];
    (home, env)
}

fn start(args: &[&str], env: &[(String, String)]) -> Served {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Served::start(bin(), args, &env)
}

#[test]
fn every_request_needs_the_token_by_header_or_cookie() {
    let (home, env) = home();
    let f = token_file(home.path(), 0o600);
    let s = start(
        &[
            "--all",
            "--no-watch",
            "--token-file",
            f.to_str().expect("utf-8"),
        ],
        &env,
    );
    // None: 401 on every route, with the CSP and what to send.
    for path in [
        "/",
        "/assets/sessions.js",
        "/usage",
        "/events/sessions",
        "/nope",
    ] {
        let a = s.get(path);
        assert!(a.starts_with("HTTP/1.1 401"), "{path}: {a}");
        let h = head(&a);
        assert!(h.contains(CSP), "{path}: {h}");
        assert!(h.contains("www-authenticate: bearer"), "{path}: {h}");
    }
    // A wrong token, a token one byte short or long, another scheme: 401.
    let short = &TOKEN[..TOKEN.len() - 1];
    let long = format!("{TOKEN}0");
    for bad in [
        "Bearer 0123456789abcdef0123456789abcdeX".to_string(),
        format!("Bearer {short}"),
        format!("Bearer {long}"),
        format!("Basic {TOKEN}"),
    ] {
        let a = s.request("GET", "/", &[("Authorization", &bad)], b"");
        assert!(a.starts_with("HTTP/1.1 401"), "{bad}: {a}");
    }
    let cookie_bad = s.request("GET", "/", &[("Cookie", "arbor_token=00")], b"");
    assert!(cookie_bad.starts_with("HTTP/1.1 401"), "{cookie_bad}");
    let wrong_query = s.get("/?token=0123456789abcdef0123456789abcdeX");
    assert!(wrong_query.starts_with("HTTP/1.1 401"), "{wrong_query}");
    // The header.
    let bearer = format!("Bearer {TOKEN}");
    let a = s.request("GET", "/", &[("Authorization", &bearer)], b"");
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    // The link a person is given: the cookie (no script reads it, no other site sends it),
    // and the same address without the token.
    let a = s.get(&format!("/?scope=all&token={TOKEN}"));
    assert!(a.starts_with("HTTP/1.1 303"), "{a}");
    let h = head(&a);
    assert!(h.contains("location: /?scope=all\r\n"), "{h}");
    let cookie_line = h
        .lines()
        .find(|l| l.starts_with("set-cookie: "))
        .expect("a cookie")
        .to_string();
    assert!(
        cookie_line.contains("httponly") && cookie_line.contains("samesite=strict"),
        "{cookie_line}"
    );
    assert!(
        !cookie_line.contains(TOKEN),
        "the cookie is not the token as is"
    );
    let cookie = cookie_line["set-cookie: ".len()..]
        .split(';')
        .next()
        .expect("name=value")
        .to_string();
    for path in ["/", "/assets/sessions.js"] {
        let a = s.request("GET", path, &[("Cookie", &cookie)], b"");
        assert!(a.starts_with("HTTP/1.1 200"), "{path}: {a}");
        assert!(head(&a).contains(CSP), "{path}");
    }
    let ev = stream_head(&s, "/events/sessions", &[("Cookie", &cookie)]);
    assert!(ev.starts_with("http/1.1 200"), "{ev}");
    assert!(ev.contains("text/event-stream") && ev.contains(CSP), "{ev}");
}

#[test]
fn a_token_file_others_may_read_is_refused_at_start() {
    let (home, env) = home();
    let f = token_file(home.path(), 0o644);
    let out = std::process::Command::new(bin())
        .args(["serve", "--addr", "127.0.0.1:0", "--token-file"])
        .arg(&f)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("readable by others") && err.contains("chmod 600"),
        "{err}"
    );
    // --allow-remote without a token file: refused too.
    let out = std::process::Command::new(bin())
        .args(["serve", "--addr", "0.0.0.0:0", "--allow-remote"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--token-file"), "{err}");
}

#[test]
fn the_csp_is_on_every_answer_and_a_foreign_host_is_refused() {
    let (_home, env) = home();
    let s = start(&["--all", "--no-watch"], &env);
    for (path, status) in [
        ("/", "200"),
        ("/assets/sessions.js", "200"),
        ("/assets/sessions.css", "200"),
        ("/assets/nope.js", "404"),
        ("/?since=yesterday", "400"),
        ("/?agent=nobody", "400"),
    ] {
        let a = s.get(path);
        assert!(a.starts_with(&format!("HTTP/1.1 {status}")), "{path}: {a}");
        assert!(head(&a).contains(CSP), "{path}");
    }
    let ev = stream_head(&s, "/events/sessions", &[]);
    assert!(ev.contains("text/event-stream") && ev.contains(CSP), "{ev}");
    for host in ["evil.example", "evil.example:80", "127.0.0.1.evil.example"] {
        let a = s.request("GET", "/", &[("Host", host)], b"");
        assert!(a.starts_with("HTTP/1.1 403"), "{host}: {a}");
        assert!(head(&a).contains(CSP), "{host}");
    }
    for host in ["localhost", "127.0.0.1:1", "[::1]:8777"] {
        let a = s.request("GET", "/", &[("Host", host)], b"");
        assert!(a.starts_with("HTTP/1.1 200"), "{host}: {a}");
    }
}

/// A session whose title and project hold the HTML export's adversarial payloads and a
/// secret, laid out as pi lays it out.
fn hostile_session(home: &Path) {
    let cwd = "/work/<img src=x onerror=alert(1)>";
    let dir = home
        .join(".pi/agent/sessions")
        .join(arbor_store::paths::encode_cwd_pi(cwd));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"0b0b0b0b-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":cwd}),
        serde_json::json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"</td><script>alert('x')</script>\"'><svg onload=alert(2)> key AKIAQWERTYUIOPASDFGH","timestamp":1}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        dir.join("2026-01-01T00-00-00-000Z_0b0b0b0b-0000-4000-8000-000000000001.jsonl"),
        body,
    )
    .expect("write");
}

#[test]
fn session_strings_are_escaped_and_redacted() {
    let (home, env) = home();
    hostile_session(home.path());
    let s = start(&["--all", "--no-watch"], &env);
    for path in ["/", "/?q=AKIAQWERTYUIOPASDFGH", "/?q=alert"] {
        let page = s.get(path);
        assert!(page.starts_with("HTTP/1.1 200"), "{path}: {page}");
        let body = page.split("\r\n\r\n").nth(1).unwrap_or("");
        for bad in ["<script>alert", "<svg onload", "<img src=x", "</td><script"] {
            assert!(!body.contains(bad), "{path}: {bad} in {body}");
        }
        // What the page shows of the sessions (the query itself is the user's, echoed in
        // the search box and above the hits).
        let shown = body
            .split("</form>")
            .nth(1)
            .map(|b| b.split("<ol").nth(1).unwrap_or(b))
            .unwrap_or(body)
            .replace("<q>AKIAQWERTYUIOPASDFGH</q>", "");
        assert!(
            !shown.contains("AKIAQWERTYUIOPASDFGH"),
            "{path}: the secret is shown: {shown}"
        );
    }
    // A search for words beside the secret finds the session, its snippet redacted.
    let page = s.get("/?q=key");
    assert!(page.contains("<li class=\"hit\">"), "{page}");
    assert!(page.contains("[REDACTED:aws-access-key]"), "{page}");
    let page = s.get("/");
    assert!(page.contains("&lt;script&gt;alert"), "{page}");
    assert!(page.contains("[REDACTED:aws-access-key]"), "{page}");
    drop(s);
    let s = start(&["--all", "--no-watch", "--no-redact"], &env);
    let page = s.get("/");
    assert!(
        page.contains("AKIAQWERTYUIOPASDFGH"),
        "--no-redact shows it"
    );
    assert!(!page.contains("<script>alert"), "and still escapes");
}
