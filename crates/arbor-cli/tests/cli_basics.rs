//! Integration tests through the `arbor` binary: create, append, read back, refuse damage.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn arbor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
}

fn run(args: &[&str]) -> Output {
    arbor().args(args).output().expect("run arbor")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "arbor {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 stdout")
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

fn new_session(dir: &Path) -> PathBuf {
    PathBuf::from(
        ok(&[
            "new",
            "--dir",
            dir.to_str().unwrap(),
            "--cwd",
            "/work/project",
        ])
        .trim(),
    )
}

#[test]
fn new_append_context_tree_roundtrip() {
    let tmp = tempfile::tempdir().unwrap();
    let s = new_session(tmp.path());
    let sp = s.to_str().unwrap();
    // The header is written at once, mode 0600, pi's key order.
    let text = std::fs::read_to_string(&s).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","version":3,"id":""#),
        "{text}"
    );
    assert!(text.contains(r#","cwd":"/work/project"}"#));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&s).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let u = ok(&[
        "append",
        sp,
        r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#,
    ]);
    let a = ok(&[
        "append",
        sp,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","timestamp":2}}"#,
    ]);
    let (u, a) = (u.trim().to_string(), a.trim().to_string());
    assert_eq!(u.len(), 8);
    let text = std::fs::read_to_string(&s).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[1].starts_with(&format!(
            r#"{{"type":"message","id":"{u}","parentId":null,"timestamp":""#
        )),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains(&format!(r#""parentId":"{u}""#)));

    let ctx = json(&["context", sp]);
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        ctx["model"],
        serde_json::json!({"provider":"p","modelId":"m"})
    );
    assert_eq!(ctx["thinkingLevel"], "off");

    // Branch from the user message with --parent, then label it.
    let b = ok(&[
        "append",
        sp,
        "--parent",
        &u,
        r#"{"type":"message","message":{"role":"user","content":"other","timestamp":3}}"#,
    ]);
    let b = b.trim();
    ok(&[
        "append",
        sp,
        &format!(r#"{{"type":"label","targetId":"{u}","label":"start"}}"#),
    ]);
    let tree = json(&["tree", sp, "--json"]);
    let nodes = tree["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes[0]["id"], u.as_str());
    assert_eq!(nodes[0]["label"], "start");
    assert_eq!(nodes[0]["children"].as_array().unwrap().len(), 2);
    assert_eq!(tree["roots"], serde_json::json!([u]));
    // The label entry hangs from the leaf at the time (the branch), as pi's does.
    let ctx = json(&["context", sp]);
    let msgs = ctx["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "{ctx}");
    assert_eq!(msgs[1]["content"], "other");
    let ctx_a = json(&["context", sp, "--leaf", &a]);
    assert_eq!(ctx_a["messages"][1]["role"], "assistant");
    assert!(!b.is_empty());
}

#[test]
fn stdin_append_prints_each_id_and_rejects_bad_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    let s = new_session(tmp.path());
    let mut child = arbor()
        .args(["append", s.to_str().unwrap(), "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"thinking_level_change","thinkingLevel":"high"}}"#
    )
    .unwrap();
    writeln!(stdin).unwrap();
    writeln!(
        stdin,
        r#"{{"type":"model_change","provider":"openai","modelId":"gpt-4o"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"type":"custom","customType":"ext","data":{{"n":1}}}}"#
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    let text = std::fs::read_to_string(&s).unwrap();
    assert!(
        text.contains(r#"{"type":"custom","customType":"ext","data":{"n":1},"id":""#),
        "{text}"
    );
    let ctx = json(&["context", s.to_str().unwrap()]);
    assert_eq!(ctx["thinkingLevel"], "high");
    assert_eq!(
        ctx["model"],
        serde_json::json!({"provider":"openai","modelId":"gpt-4o"})
    );

    for bad in [
        r#"{"type":"message"}"#,
        "not json",
        r#"{"type":"message","id":"x","message":{}}"#,
        r#"[1]"#,
    ] {
        let o = run(&["append", s.to_str().unwrap(), bad]);
        assert_eq!(o.status.code(), Some(1), "{bad} should fail");
        assert!(!o.stderr.is_empty());
    }
    // Failed appends left the file alone.
    assert_eq!(std::fs::read_to_string(&s).unwrap(), text);
}

#[test]
fn files_that_are_not_sessions_are_errors_and_stay_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[u8])] = &[
        ("empty.jsonl", b""),
        ("blank.jsonl", b"\n  \n"),
        (
            "headerless.jsonl",
            b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n",
        ),
        ("junk.jsonl", b"not json at all\n"),
    ];
    for (name, bytes) in cases {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        for args in [
            vec!["context", p.to_str().unwrap()],
            vec![
                "append",
                p.to_str().unwrap(),
                r#"{"type":"custom","customType":"x"}"#,
            ],
            vec!["tree", p.to_str().unwrap(), "--json"],
        ] {
            let o = run(&args);
            assert_eq!(o.status.code(), Some(1), "{name} {args:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(name) && err.contains("not a session"),
                "{name}: {err}"
            );
            assert_eq!(std::fs::read(&p).unwrap(), *bytes, "{name} was modified");
        }
    }
}

#[test]
fn migrate_rewrites_only_what_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("v1.jsonl");
    let v1 = concat!(
        "{\"type\":\"session\",\"id\":\"S1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}}\n",
        "not json\n",
        "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\",\"timestamp\":2,\"x\":1.0,\"y\":1e2,\"z\":{\"10\":1,\"2\":2}}}\n",
        "{\"type\":\"compaction\",\"timestamp\":\"2025-01-01T00:00:04.000Z\",\"summary\":\"S\",\"firstKeptEntryIndex\":1,\"tokensBefore\":5}\n",
        "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:05.000Z\",\"message\":{\"role\":\"hookMessage\",\"customType\":\"h\",\"content\":\"c\",\"display\":true,\"timestamp\":5}}\n",
    );
    std::fs::write(&p, v1).unwrap();
    let ps = p.to_str().unwrap();
    // Readers see the migrated view without writing.
    let before = json(&["context", ps]);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), v1);
    let dry = ok(&["migrate", "--dry-run", ps]);
    assert!(dry.contains("would migrate v1"), "{dry}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), v1);
    ok(&["migrate", ps]);
    let after = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[0],
        r#"{"type":"session","id":"S1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","version":3}"#
    );
    assert_eq!(lines[2], "not json", "malformed line kept in place");
    assert!(
        lines[3].contains(r#""x":1.0,"y":1e2,"z":{"10":1,"2":2}}"#),
        "payload bytes kept: {}",
        lines[3]
    );
    assert!(lines[4].starts_with(r#"{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"S","tokensBefore":5,"id":""#), "{}", lines[4]);
    assert!(lines[4].contains(r#""firstKeptEntryId":""#));
    assert!(lines[5].contains(r#""role":"custom""#));
    // The migrated file gives the same context as the in-memory view did.
    assert_eq!(json(&["context", ps]), before);
    assert_eq!(before["messages"][0]["role"], "compactionSummary");
    // firstKeptEntryIndex 1 is the first message: it is kept, so u, a, then the custom message.
    assert_eq!(before["messages"].as_array().unwrap().len(), 4, "{before}");
    assert!(ok(&["migrate", ps]).contains("already v3"));
}

#[test]
fn appends_never_hang_from_an_entry_that_does_not_exist() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = new_session(tmp.path());
    let s = s.to_str().expect("utf-8 path");
    let user = ok(&[
        "append",
        s,
        r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#,
    ]);
    let user = user.trim();
    let before = std::fs::read(s).expect("read");
    // A branch summary hangs from its fromId, as pi's branchWithSummary: an unknown one is
    // refused (it was written as a dangling parentId), and so is one that contradicts --parent.
    for args in [
        vec![
            "append",
            s,
            r#"{"type":"branch_summary","fromId":"nothere","summary":"x"}"#,
        ],
        vec![
            "append",
            s,
            "--parent",
            user,
            r#"{"type":"branch_summary","fromId":"nothere","summary":"x"}"#,
        ],
        vec![
            "append",
            s,
            "--parent",
            "nothere",
            r#"{"type":"custom","customType":"c"}"#,
        ],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(o.stdout.is_empty());
        assert_eq!(
            std::fs::read(s).expect("read"),
            before,
            "{args:?} changed the file"
        );
    }
    // With --parent alone the summary hangs there and names it as fromId.
    let id = ok(&[
        "append",
        s,
        "--parent",
        user,
        r#"{"type":"branch_summary","summary":"x"}"#,
    ]);
    let tree = json(&["tree", s, "--json"]);
    let node = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["id"] == id.trim())
        .expect("the summary is in the tree")
        .clone();
    assert_eq!(node["parentId"], user);
    let text = std::fs::read_to_string(s).expect("read");
    assert!(text.contains(&format!(r#""fromId":"{user}""#)));
}
