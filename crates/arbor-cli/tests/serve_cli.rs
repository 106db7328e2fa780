//! `arbor serve` from the command line: it listens on loopback, answers with the security
//! headers, refuses a foreign Host and a non-loopback address without --allow-remote.
use arbor_testkit::served::Served;
use std::path::Path;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

#[test]
fn serves_the_sessions_page_with_a_strict_csp() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let s = Served::start(
        bin(),
        &["--all"],
        &[("HOME", h), ("ARBOR_CATALOG", &format!("{h}/cat.db"))],
    );
    let page = s.get("/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let head = page.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{head}"
    );
    assert!(!page.contains("<script>"), "no inline script");
    // An address with no page: the error page, with the same headers.
    let none = s.get("/no/such/page%3Cb%3E");
    assert!(none.starts_with("HTTP/1.1 404"), "{none}");
    assert!(none.contains("no page at /no/such/"), "{none}");
    assert!(!none.contains("<b>"), "escaped: {none}");
    assert!(
        none.to_ascii_lowercase()
            .contains("content-security-policy: default-src 'none'"),
        "{none}"
    );
    let evil = s.request("GET", "/", &[("Host", "evil.example")], b"");
    // A page of another site whose name was rebound to 127.0.0.1 sends its own name.
    assert!(evil.starts_with("HTTP/1.1 403"), "{evil}");
}

#[test]
fn refuses_a_non_loopback_address_without_allow_remote() {
    let out = std::process::Command::new(bin())
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address"), "{err}");
}

/// `--open` where no browser can be opened: one clear line naming the opener and the URL,
/// and the server serves on.
#[test]
fn open_without_a_browser_says_so_and_serves_on() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let cat = format!("{h}/cat.db");
    // No xdg-open at all.
    let empty = home.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    // An xdg-open that fails, as it does without a desktop.
    let failing = home.path().join("failing-bin");
    std::fs::create_dir(&failing).unwrap();
    let opener = failing.join("xdg-open");
    std::fs::write(&opener, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (path, says) in [(&empty, "xdg-open: "), (&failing, "xdg-open failed: ")] {
        let p = path.to_str().unwrap();
        let s = Served::start(
            bin(),
            &["--all", "--no-watch", "--open"],
            &[("HOME", h), ("ARBOR_CATALOG", &cat), ("PATH", p)],
        );
        let line = s
            .stderr
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a line about the browser");
        assert!(
            line.starts_with("arbor serve: cannot open a browser (")
                && line.contains(says)
                && line.ends_with(&format!("open {}/", s.url)),
            "{line}"
        );
        let page = s.get("/");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    }
}

#[test]
fn ctrl_c_and_sigterm_stop_the_server_cleanly() {
    let home = tempfile::tempdir().expect("tmp");
    let h = home.path().to_string_lossy().into_owned();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut s = Served::start(bin(), &["--all", "--no-watch"], &[("HOME", h.as_str())]);
        assert!(s.get("/").starts_with("HTTP/1.1 200"));
        let status = s.signal(sig).expect("arbor serve exits after the signal");
        assert!(status.success(), "signal {sig}: {status:?}");
    }
}
