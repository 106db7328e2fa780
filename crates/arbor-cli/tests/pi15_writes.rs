//! `arbor append` writes pi 1.5's new entries as pi 1.5.2 does: context edits checked and
//! normalized like `appendContextEdit` (same refusals, same messages), usage entries, and
//! compactions that default `firstKeptEntryId` to their own id and capture the folded system
//! message. (That pi 1.5.2 reads such a file as arbor does is goldens/pi15/arbor-written.*.)
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn arbor(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor")
}

fn ok(home: &Path, args: &[&str]) -> String {
    let out = arbor(home, args);
    assert!(
        out.status.success(),
        "arbor {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn refused(home: &Path, args: &[&str], message: &str) {
    let out = arbor(home, args);
    assert!(!out.status.success(), "arbor {args:?} was accepted");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(message), "arbor {args:?}: {err}");
}

fn lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

#[test]
fn context_edits_usage_and_compactions_are_written_as_pi_1_5_writes_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let dir = home.join("s");
    let dir = dir.to_str().expect("utf-8");
    let file = ok(home, &["new", "--dir", dir, "--cwd", "/work/project"]);
    let f = file.as_str();
    let system = r#"{"type":"message","message":{"role":"system","content":"Be brief.","sections":{"env":"linux"},"toolsAdded":[{"name":"bash"},{"name":"read"}],"timestamp":1}}"#;
    let user = r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":2}}"#;
    let assistant = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"p","model":"m","stopReason":"stop","timestamp":3}}"#;
    let system2 = r#"{"type":"message","message":{"role":"system","content":"Also: be kind.","sections":{"env":null,"tone":"warm"},"toolsRemoved":[{"name":"bash"}],"timestamp":4}}"#;
    let s = ok(home, &["append", f, system]);
    let u = ok(home, &["append", f, user]);
    let a = ok(home, &["append", f, assistant]);
    ok(home, &["append", f, system2]);

    // A string for an assistant message becomes one text block.
    let edit = format!(
        r#"{{"type":"context_edit","targetId":"{a}","replacement":{{"content":"edited"}}}}"#
    );
    ok(home, &["append", f, &edit]);
    // pi's refusals, with pi's messages; nothing written for them.
    let before = lines(f).len();
    refused(
        home,
        &[
            "append",
            f,
            &format!(r#"{{"type":"context_edit","targetId":"{s}","replacement":null}}"#),
        ],
        &format!("Entry {s} does not contribute editable model content"),
    );
    refused(
        home,
        &[
            "append",
            f,
            r#"{"type":"context_edit","targetId":"zzzz0000","replacement":null}"#,
        ],
        "Entry zzzz0000 not found",
    );
    refused(
        home,
        &[
            "append",
            f,
            &format!(r#"{{"type":"context_edit","targetId":"{u}","replacement":{{"content":1}}}}"#),
        ],
        "Context edit replacement must be null or contain string/array content",
    );
    refused(
        home,
        &[
            "append",
            f,
            "--root",
            &format!(r#"{{"type":"context_edit","targetId":"{u}","replacement":null}}"#),
        ],
        &format!("Entry {u} is not on the active branch"),
    );
    assert_eq!(lines(f).len(), before, "a refused edit reached the file");

    ok(
        home,
        &[
            "append",
            f,
            r#"{"type":"usage","kind":"title","provider":"p","model":"m","usage":{"input":3,"output":1},"note":""}"#,
        ],
    );
    let c = ok(
        home,
        &[
            "append",
            f,
            r#"{"type":"compaction","summary":"S","tokensBefore":10}"#,
        ],
    );

    let all = lines(f);
    let by_type = |t: &str| all.iter().filter(|l| l["type"] == t).collect::<Vec<_>>();
    let edit = by_type("context_edit")[0];
    assert_eq!(
        edit["replacement"],
        serde_json::json!({"content": [{"type": "text", "text": "edited"}]})
    );
    let keys = |v: &Value| {
        v.as_object()
            .expect("object")
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(edit),
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "targetId",
            "replacement"
        ]
    );
    let usage = by_type("usage")[0];
    assert_eq!(
        keys(usage),
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "kind",
            "provider",
            "model",
            "usage"
        ],
        "an empty note is not written"
    );
    let compaction = by_type("compaction")[0];
    assert_eq!(compaction["firstKeptEntryId"], Value::String(c.clone()));
    // getCurrentSystemMessage: contents joined, sections patched (env deleted), tools by name.
    let sys = &compaction["systemMessage"];
    assert_eq!(sys["role"], "system");
    assert_eq!(sys["content"], "Be brief.\n\nAlso: be kind.");
    assert_eq!(sys["sections"], serde_json::json!({"tone": "warm"}));
    assert_eq!(sys["toolsAdded"], serde_json::json!([{"name": "read"}]));
    assert!(sys["timestamp"].as_f64().is_some_and(|t| t > 1.7e12));

    // What the model sees now: the folded system message, then the summary; arbor's
    // context agrees with the rules checked against pi 1.5.2 in goldens/pi15.
    let ctx: Value = serde_json::from_str(&ok(home, &["context", f])).expect("context JSON");
    let roles: Vec<&str> = ctx["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["system", "compactionSummary"]);
}

#[test]
fn new_takes_an_id_pi_1_5_accepts_and_refuses_the_others() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let dir = home.join("s");
    let dir = dir.to_str().expect("utf-8");
    let file = ok(
        home,
        &[
            "new",
            "--dir",
            dir,
            "--cwd",
            "/w",
            "--id",
            "review-2026.11_a",
        ],
    );
    assert!(file.ends_with("_review-2026.11_a.jsonl"), "{file}");
    assert_eq!(lines(&file)[0]["id"], "review-2026.11_a");
    for bad in ["", "-x", "x-", "a/b", "../up", "ünï", "a b", ".hidden"] {
        let flag = format!("--id={bad}");
        refused(
            home,
            &["new", "--dir", dir, &flag],
            "Session id must be non-empty, contain only alphanumeric characters",
        );
    }
    let made = std::fs::read_dir(home.join("s")).expect("dir").count();
    assert_eq!(made, 1, "a refused id left a file");
}

#[test]
fn tree_and_show_say_what_pi_1_5_entries_do() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15/arbor-written.jsonl");
    let f = f.to_str().expect("utf-8");
    let tree = ok(tmp.path(), &["tree", "--full", f]);
    for want in [
        "system: You are arbor's test agent. [tools +bash]",
        "system: [sections style] [tools +read] [tools -bash]",
        "usage title: anthropic/claude-haiku-4-5 10 in, 2 out",
        "context edit: removes 9633f384 from the context",
        "context edit: 63270fc1 now reads \"answer, edited\"",
    ] {
        assert!(tree.contains(want), "tree lacks {want:?}:\n{tree}");
    }
    let show = ok(tmp.path(), &["show", f, "--leaf", "6c65b787"]);
    assert!(
        show.contains("a.txt"),
        "before the edits the tool result is there:\n{show}"
    );
    let show = ok(tmp.path(), &["show", f, "--leaf", "060583ac"]);
    for want in [
        "edited by 613863aa",
        "answer, edited",
        "edited by 060583ac",
        "shorter note",
    ] {
        assert!(show.contains(want), "show lacks {want:?}:\n{show}");
    }
    assert!(
        !show.contains("a.txt"),
        "the removed tool result is shown:\n{show}"
    );
}

#[test]
fn search_finds_system_messages_and_context_edit_replacements() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let dir = home.join("s");
    std::fs::create_dir(&dir).expect("mkdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15");
    for f in ["sys-basic.jsonl", "edit-basic.jsonl"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy");
    }
    let d = dir.to_str().expect("utf-8");
    let hits = |q: &str, role: &str| -> Vec<Value> {
        let out = ok(home, &["search", "--dir", d, "--json", "--role", role, q]);
        let v: Value = serde_json::from_str(&out).expect("JSON");
        v["hits"].as_array().cloned().expect("hits")
    };
    let sys = hits("careful", "system");
    assert_eq!(sys.len(), 1, "{sys:?}");
    assert_eq!(sys[0]["role"], "system");
    assert_eq!(
        hits("terse", "system").len(),
        1,
        "a section's text is searchable"
    );
    let edits = hits("rephrased", "contextEdit");
    assert_eq!(edits.len(), 2, "{edits:?}");
    assert!(edits.iter().all(|h| h["role"] == "contextEdit"));
    // What an edit replaced stays searchable where it was written.
    assert_eq!(hits("secret", "assistant").len(), 1);
}
