//! The binary on the golden inputs where arbor deliberately does not do what the real pi does
//! (goldens/README.md, "arbor's deliberate differences"; the answers themselves are compared in
//! crates/arbor-core/tests/pi_goldens.rs):
//!
//! * files without a valid header, which pi truncates to a fresh header of its own: arbor
//!   exits 1 with a message naming the file and leaves every byte as it was;
//! * `parentId` cycles, on which pi hangs: arbor answers at once and warns.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi")
}

/// Runs arbor with a deadline (a hang fails the test instead of blocking it).
fn run(args: &[&str], home: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn arbor");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("arbor {args:?} did not finish within 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn headerless_golden_inputs_are_refused_and_left_untouched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut runs = 0;
    for name in [
        "edge-empty",
        "edge-whitespace-only",
        "edge-no-header",
        "edge-header-id-number",
    ] {
        // pi's answer on these is a rewrite of the file (NAME.open.jsonl).
        assert!(
            goldens().join(format!("{name}.open.jsonl")).exists(),
            "{name}: pi's rewrite is not recorded"
        );
        let file = tmp.path().join(format!("{name}.jsonl"));
        let bytes = std::fs::read(goldens().join(format!("{name}.jsonl"))).expect("input");
        std::fs::write(&file, &bytes).expect("copy");
        let f = file.to_str().expect("utf-8 path");
        for args in [
            vec!["context", f],
            vec!["context", f, "--llm"],
            vec!["tree", f, "--json"],
            vec!["show", f],
            vec!["append", f, r#"{"type":"custom","customType":"x"}"#],
            vec!["name", f, "A name"],
        ] {
            let o = run(&args, tmp.path());
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {err}");
            assert!(
                err.contains(f) && err.contains("not a session"),
                "{name} {args:?}: {err}"
            );
            assert_eq!(
                std::fs::read(&file).expect("read"),
                bytes,
                "{name} {args:?} changed the file"
            );
            runs += 1;
        }
    }
    println!("headerless golden inputs: {runs} refusals checked");
    assert_eq!(runs, 24);
}

#[test]
fn cycles_pi_hangs_on_are_answered_with_a_warning() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut runs = 0;
    for (name, leaves) in [
        ("edge-self-parent", &["h0000002"][..]),
        ("edge-cycle2", &["i0000002", "i0000003", ""][..]),
    ] {
        let path = goldens().join(format!("{name}.jsonl"));
        let f = path.to_str().expect("utf-8 path");
        for leaf in leaves {
            let mut args = vec!["context", f];
            if !leaf.is_empty() {
                args.extend(["--leaf", leaf]);
            }
            let o = run(&args, tmp.path());
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{name} {args:?}: {err}");
            assert!(err.contains("cycle"), "{name} {args:?}: no warning: {err}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
            let n = v["messages"].as_array().map_or(0, Vec::len);
            assert!(n >= 1, "{name} {args:?}: no messages");
            runs += 1;
        }
        let o = run(&["tree", f, "--json"], tmp.path());
        assert_eq!(o.status.code(), Some(0), "{name} tree");
        runs += 1;
    }
    assert_eq!(runs, 6);
}
