//! Running `arbor` in a private home (its own trash, catalog and agent directory), for the CLI
//! tests of commands that write. [`private_home!`](crate::private_home!) defines, in the
//! calling test, `arbor(home, args)` (runs the `arbor` under test, `CARGO_BIN_EXE_arbor` of
//! the calling crate), `ok` (expects success, returns stdout) and `fails` (expects exit 1,
//! returns stderr), on [`run`], [`ok`] and [`fails`] here.
use std::path::Path;
use std::process::{Command, Output};

/// Runs `bin` with `HOME` (and so the freedesktop trash and pi's agent directory) and the
/// catalog inside `home`.
pub fn run(bin: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run arbor")
}

/// [`run`], which must succeed; its stdout.
pub fn ok(bin: &Path, home: &Path, args: &[&str]) -> String {
    let o = run(bin, home, args);
    assert!(
        o.status.success(),
        "arbor {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

/// [`run`], which must exit 1; its stderr.
pub fn fails(bin: &Path, home: &Path, args: &[&str]) -> String {
    let o = run(bin, home, args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "arbor {args:?} should fail: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stderr).expect("utf-8")
}

/// Defines the module `private_home` in the calling test crate: `arbor(home, args)`,
/// `ok(home, args)` and `fails(home, args)` of [`mod@crate::private_home`] on the crate's own
/// `arbor` binary (`CARGO_BIN_EXE_arbor` is known only when the calling test is compiled).
#[macro_export]
macro_rules! private_home {
    () => {
        mod private_home {
            #![allow(dead_code)]
            use std::path::Path;
            fn bin() -> &'static Path {
                Path::new(env!("CARGO_BIN_EXE_arbor"))
            }
            /// Runs the `arbor` under test in the private home `home`.
            pub fn arbor(home: &Path, args: &[&str]) -> std::process::Output {
                $crate::private_home::run(bin(), home, args)
            }
            /// [`arbor`], which must succeed; its stdout.
            pub fn ok(home: &Path, args: &[&str]) -> String {
                $crate::private_home::ok(bin(), home, args)
            }
            /// [`arbor`], which must exit 1; its stderr.
            pub fn fails(home: &Path, args: &[&str]) -> String {
                $crate::private_home::fails(bin(), home, args)
            }
        }
    };
}
