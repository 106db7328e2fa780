//! Running `arbor` in a private home (its own trash, catalog and agent directory), for the CLI
//! tests of commands that write: `arbor(home, args)` runs it, `ok` expects success and returns
//! stdout, `fails` expects exit 1 and returns stderr.
#![allow(dead_code)]
use std::path::Path;
use std::process::{Command, Output};

/// Runs the `arbor` under test with `HOME` (and so the freedesktop trash and pi's agent
/// directory) and the catalog inside `home`.
pub fn arbor(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run arbor")
}

/// [`arbor`], which must succeed; its stdout.
pub fn ok(home: &Path, args: &[&str]) -> String {
    let o = arbor(home, args);
    assert!(
        o.status.success(),
        "arbor {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

/// [`arbor`], which must exit 1; its stderr.
pub fn fails(home: &Path, args: &[&str]) -> String {
    let o = arbor(home, args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "arbor {args:?} should fail: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stderr).expect("utf-8")
}
