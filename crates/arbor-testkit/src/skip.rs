//! Skips that show. A test that cannot do what it is for here (it needs root to act as
//! another user, or a server of its own) passes without checking anything: that must not look
//! like a pass. [`skip`] says so on stderr (`SKIPPED: TEST: REASON`), appends the same line to
//! the file named by [`LOG_ENV`] (`tools/test.sh` sets it and counts the lines in its last
//! line, `N passed, N failed, N skipped`), and fails the test instead when [`REQUIRE_ENV`] is
//! `1` (CI, which runs as root, sets it: there nothing may be skipped).
//!
//! ```no_run
//! if !arbor_testkit::skip::unless_root("needs root to run arbor as another user") {
//!     return;
//! }
//! ```
use std::io::Write;

/// The file that collects one `SKIPPED: …` line per skip (appended to).
pub const LOG_ENV: &str = "ARBOR_SKIP_LOG";

/// When `1`, a skip is a failure.
pub const REQUIRE_ENV: &str = "ARBOR_REQUIRE_ALL";

/// Records that the calling test skipped what it is for, and why; panics instead when
/// [`REQUIRE_ENV`] is `1`. The test name is the test thread's (libtest names it after the
/// test).
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SKIPPED: {test}: {reason}");
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{line} ({REQUIRE_ENV}=1: a skip is a failure)");
    }
    eprintln!("{line}");
    if let Some(log) = std::env::var_os(LOG_ENV) {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            panic!(
                "{line}: cannot record the skip in {}: {e}",
                log.to_string_lossy()
            );
        }
    }
}

/// Whether the process runs as root (and may act as other users).
pub fn am_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `true` when running as root; otherwise [`skip`]s with `reason` and returns `false`.
pub fn unless_root(reason: &str) -> bool {
    if am_root() {
        return true;
    }
    skip(reason);
    false
}

#[cfg(test)]
mod tests {
    /// A skip appends its line to the log (the script counts them), and is a failure when
    /// every test is required to run.
    #[test]
    fn a_skip_is_logged_and_fails_when_everything_is_required() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("skips");
        let me = std::env::current_exe().expect("test binary");
        let run = |require: &str| {
            std::process::Command::new(&me)
                .args(["--exact", "skip::tests::child", "--test-threads=1"])
                .env("ARBOR_SKIP_CHILD", "1")
                .env(super::LOG_ENV, &log)
                .env(super::REQUIRE_ENV, require)
                .output()
                .expect("run")
        };
        let o = run("0");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        let logged = std::fs::read_to_string(&log).expect("log");
        assert_eq!(logged, "SKIPPED: skip::tests::child: the reason\n");
        let o = run("1");
        assert!(!o.status.success(), "ARBOR_REQUIRE_ALL=1 makes a skip fail");
        assert!(String::from_utf8_lossy(&o.stdout).contains("a skip is a failure"));
    }

    #[test]
    fn child() {
        if std::env::var_os("ARBOR_SKIP_CHILD").is_some() {
            super::skip("the reason");
        }
    }
}
