//! Numeric flags (issue 10, item 10): every non-finite, negative or absurd duration, count or
//! span is a usage error (exit 2) naming the flag, never a panic (exit 101) and never silently
//! taken (`nan` used to become 0: fresh blobs became collectable).
use std::path::Path;
use std::process::Command;

fn arbor(args: &[&str], home: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor")
}

fn usage_error(args: &[&str], home: &Path, flag: &str) {
    let o = arbor(args, home);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.contains(flag), "{args:?} does not name {flag}: {err}");
}

#[test]
fn durations_counts_and_spans_out_of_range_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let o = arbor(&["new", "--dir", home.to_str().expect("utf8")], home);
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).expect("utf8");
    let s = s.trim();
    let body = r#"{"type":"message","message":{"role":"user","content":"x","timestamp":1}}"#;
    for v in [
        "inf", "infinity", "1e19", "1e308", "nan", "-inf", "-5", "1e300", "NaN", "", "soon",
    ] {
        let wait = format!("--wait={v}");
        usage_error(&["append", s, body, &wait], home, "--wait");
        usage_error(&["name", s, "n", &wait], home, "--wait");
        usage_error(&["check", "--repair", &wait, s], home, "--wait");
        usage_error(&["migrate", &wait, s], home, "--wait");
        let min_age = format!("--min-age={v}");
        usage_error(&["gc", "--blobs", &min_age], home, "--min-age");
        usage_error(&["history", &format!("--limit={v}")], home, "--limit");
    }
    for v in ["0", "-1", "1e3", "99999999999999999999999", "nan"] {
        usage_error(&["search", "x", &format!("--limit={v}")], home, "--limit");
    }
    for v in ["99999999999w", "infw", "nand", "-5d", "1e308m", "yesterday"] {
        usage_error(&["search", "x", &format!("--since={v}")], home, "--since");
    }
    // Nothing was written by any of them.
    let o = arbor(&["context", s], home);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("\"x\""));
}
