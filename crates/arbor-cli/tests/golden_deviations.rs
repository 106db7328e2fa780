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

/// `"message": null` (goldens/pi/edge-message-not-object): pi's buildSessionContext throws on
/// every leaf below such an entry (error.txt). arbor answers with `null` in its place, warns
/// naming the file, line and entry, and `check` reports it as a problem it does not guess at.
#[test]
fn a_null_message_is_answered_with_a_warning_and_reported_by_check() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = goldens().join("edge-message-not-object.jsonl");
    let error = std::fs::read_to_string(goldens().join("edge-message-not-object.error.txt"))
        .expect("pi's error");
    assert!(error.contains("Cannot read properties of null (reading 'role')"));
    let copy = tmp.path().join("s.jsonl");
    std::fs::copy(&f, &copy).expect("copy");
    let s = copy.to_str().expect("utf8");
    let o = run(&["context", s], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let msgs = v["messages"].as_array().expect("messages");
    assert!(msgs.contains(&serde_json::Value::Null), "{v}");
    assert_eq!(
        msgs.last().and_then(|m| m["content"].as_str()),
        Some("below the null")
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s.jsonl:7: entry n0000006 has \"message\": null"),
        "{err}"
    );
    // Above the null entry there is nothing to say.
    let o = run(&["context", s, "--leaf", "n0000005"], tmp.path());
    assert!(o.status.success() && o.stderr.is_empty());
    let o = run(&["check", "--json", s], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let f0 = &v[0]["findings"][0];
    assert_eq!(
        (f0["kind"].as_str(), f0["line"].as_u64()),
        (Some("message_null"), Some(7))
    );
    assert_eq!(f0["repairable"], false);
}

/// The same message entries in an omp file (goldens/omp/edge-message-not-object*, made by the
/// real omp 18.2.3): omp's `SessionManager.open` throws on `"message": null`, and its
/// `convertToLlm` on a string or number message (not on `[]`). arbor opens the session and
/// answers, warns naming file, line, entry and what omp does, and `check` reports each.
#[test]
fn messages_omp_cannot_read_are_answered_with_a_warning_and_reported_by_check() {
    let omp = goldens().join("../omp");
    let open_err = std::fs::read_to_string(omp.join("edge-message-not-object.error.txt"))
        .expect("omp's error");
    assert!(
        open_err.contains("SessionManager.open(copy): throw"),
        "{open_err}"
    );
    let llm_err = std::fs::read_to_string(omp.join("edge-message-not-object-no-null.error.txt"))
        .expect("omp's error");
    assert!(llm_err.contains("convertToLlm(buildSessionContext(entries, \"n0000004\"): throw"));
    assert!(!llm_err.contains("\"n0000003\""), "[] is read: {llm_err}");
    // The inputs have no title slot (pi files to arbor); give them omp's, as omp writes it.
    let slot = std::fs::read(omp.join("edge-title-slot.jsonl")).expect("slot");
    let slot = &slot[..256];
    let tmp = tempfile::tempdir().expect("tempdir");
    for (name, want) in [
        (
            "edge-message-not-object",
            &[
                (5, "n0000004", "message_not_object", "a number"),
                (4, "n0000003", "message_not_object", "a string"),
                (7, "n0000006", "message_null", "null"),
            ][..],
        ),
        (
            "edge-message-not-object-no-null",
            &[
                (5, "n0000004", "message_not_object", "a string"),
                (7, "n0000006", "message_not_object", "a number"),
            ][..],
        ),
    ] {
        let mut bytes = slot.to_vec();
        bytes.extend(std::fs::read(omp.join(format!("{name}.jsonl"))).expect("input"));
        let file = tmp.path().join(format!("{name}.jsonl"));
        std::fs::write(&file, &bytes).expect("write");
        let s = file.to_str().expect("utf8");
        for llm in [false, true] {
            let mut args = vec!["context", s];
            if llm {
                args.push("--llm");
            }
            let o = run(&args, tmp.path());
            assert!(
                o.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
            let last = v["messages"].as_array().and_then(|m| m.last()).cloned();
            assert_eq!(
                last.as_ref().map(|m| m["role"].clone()),
                Some("user".into())
            );
            let err = String::from_utf8_lossy(&o.stderr);
            for (line, id, _, what) in want {
                let line = line + 1; // the title slot
                let warning =
                    format!("{name}.jsonl:{line}: entry {id} has \"message\": {what}; omp cannot");
                assert!(err.contains(&warning), "{name} {args:?}: {err}");
            }
            assert_eq!(err.lines().count(), want.len(), "{err}");
        }
        let o = run(&["check", "--json", s], tmp.path());
        assert_eq!(o.status.code(), Some(1), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let mut found: Vec<(u64, String)> = v[0]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                assert_eq!(f["repairable"], false);
                (
                    f["line"].as_u64().expect("line"),
                    f["kind"].as_str().expect("kind").to_string(),
                )
            })
            .collect();
        found.sort();
        let mut expected: Vec<(u64, String)> = want
            .iter()
            .map(|(l, _, k, _)| (*l as u64 + 1, (*k).to_string()))
            .collect();
        expected.sort();
        assert_eq!(found, expected, "{name}");
    }
}
