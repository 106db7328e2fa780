//! The reading tools (`get_messages`, `get_context`, `get_tree`, `get_tool_calls`,
//! `get_file_edits`) and the write tools, in process: nothing they serve holds a secret
//! unless the server runs with `--no-redact` (the structured content and the text both),
//! and the write tools are refused unless `--allow-writes`. Their answers against the CLI's
//! are in `arbor-cli/tests/mcp_read_tools.rs` (the real binary).
mod common;

use common::{Client, Corpus, SECRET};
use serde_json::{json, Value};

const SESSION: &str = "5ec2e7aa-0000-7000-8000-000000000001";

/// A session whose user message, tool call arguments and tool output all hold the secret.
fn with_tool_secret(c: &Corpus) {
    let lines = [
        json!({"type":"session","version":3,"id":"5ec2e7bb-0000-7000-8000-000000000002","timestamp":"2026-01-03T00:00:00.000Z","cwd":"/work/project"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-03T00:00:01.000Z","message":{"role":"user","content":format!("set the key {SECRET}"),"timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-03T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":format!("the key is {SECRET}")},{"type":"toolCall","id":"c1","name":"write","arguments":{"path":"/work/project/.env","content":format!("ANTHROPIC_API_KEY={SECRET}\n")}}],"timestamp":2}}),
        json!({"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-03T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"write","content":[{"type":"text","text":format!("wrote {SECRET}")}],"isError":false,"timestamp":3}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        c.project
            .join("2026-01-03T00-00-00-000Z_5ec2e7bb-0000-7000-8000-000000000002.jsonl"),
        text,
    )
    .expect("write");
}

/// Every call of the reading tools that can show the secrets' text (`get_file_edits` serves
/// paths and ids, no text of the session).
fn calls() -> Vec<(&'static str, Value)> {
    let two = "5ec2e7bb-0000-7000-8000-000000000002";
    vec![
        ("get_messages", json!({"session": SESSION})),
        (
            "get_messages",
            json!({"session": two, "tool_output": true, "thinking": true}),
        ),
        ("get_context", json!({"session": SESSION})),
        ("get_context", json!({"session": two})),
        ("get_tree", json!({"session": SESSION, "full": true})),
        ("get_tree", json!({"session": two, "full": true})),
        (
            "get_tool_calls",
            json!({"session": two, "arguments_chars": 20000}),
        ),
    ]
}

#[tokio::test]
async fn nothing_served_holds_a_secret_unless_no_redact() {
    let c = Corpus::new();
    with_tool_secret(&c);
    let key_part = &SECRET[20..60];
    let mut client = Client::start(c.opts()).await;
    for (tool, args) in calls() {
        let r = client.call(tool, args.clone()).await;
        assert_eq!(r["isError"], json!(false), "{tool} {args}: {r}");
        let all = r.to_string();
        assert!(
            !all.contains(key_part),
            "{tool} {args} served the secret: {all}"
        );
        assert!(
            all.contains("[REDACTED:"),
            "{tool} {args}: nothing redacted: {all}"
        );
    }
    // With --no-redact the same calls serve it (the test sees what it claims to).
    let mut opts = c.opts();
    opts.redact = false;
    let mut raw = Client::start(opts).await;
    for (tool, args) in calls() {
        let r = raw.call(tool, args.clone()).await;
        assert!(r.to_string().contains(key_part), "{tool} {args}: {r}");
    }
}

#[tokio::test]
async fn write_tools_only_with_allow_writes() {
    let c = Corpus::new();
    let file = c
        .files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains(SESSION))
        .expect("file");
    let before = std::fs::read(&file).expect("read");
    let mut client = Client::start(c.opts()).await;
    let list = client.request("tools/list", json!({})).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for t in [
        "get_messages",
        "get_context",
        "get_tree",
        "get_tool_calls",
        "get_file_edits",
    ] {
        assert!(names.contains(&t), "{t} not listed: {names:?}");
    }
    for t in ["label_entry", "name_session", "fork_session"] {
        assert!(!names.contains(&t), "{t} listed without --allow-writes");
    }
    let e = client
        .err(
            "label_entry",
            json!({"session": SESSION, "entry_id": "u1", "label": "x"}),
        )
        .await;
    assert!(e.contains("--allow-writes"), "{e}");
    let e = client
        .err("name_session", json!({"session": SESSION, "name": "x"}))
        .await;
    assert!(e.contains("--allow-writes"), "{e}");
    let e = client
        .err("fork_session", json!({"session": SESSION}))
        .await;
    assert!(e.contains("--allow-writes"), "{e}");
    assert_eq!(std::fs::read(&file).expect("read"), before);
    assert_eq!(c.files().len(), 5, "a file was made: {:?}", c.files());

    let mut opts = c.opts();
    opts.allow_writes = true;
    let mut w = Client::start(opts).await;
    let l = w
        .ok(
            "label_entry",
            json!({"session": SESSION, "entry_id": "a1", "label": "done"}),
        )
        .await;
    assert_eq!(l["label"], json!("done"));
    let tree = w
        .ok("get_tree", json!({"session": SESSION, "full": true}))
        .await;
    assert!(tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .any(|n| n["label"] == json!("done")));
    let f = w
        .ok(
            "fork_session",
            json!({"session": SESSION, "entry_id": "u1"}),
        )
        .await;
    // The answer is redacted as every answer; the copy is exact (the user's session).
    let copy = std::fs::read_to_string(f["path"].as_str().expect("path")).expect("read");
    assert!(copy.contains(SECRET));
    assert_eq!(f["resume_command"][0], json!("pi"));
    let red = w
        .ok("fork_session", json!({"session": SESSION, "redact": true}))
        .await;
    let copy = std::fs::read_to_string(red["path"].as_str().expect("path")).expect("read");
    assert!(!copy.contains(SECRET) && red["redacted"].as_u64() >= Some(1));
}
