//! What the session page's tests share: the path to an entry, a Claude Code session that
//! grows while its page is open.
use std::path::Path;

/// The ids on the path from the root to `leaf`, read from the file (parentId links).
pub fn path_to(file: &Path, leaf: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("session");
    let mut parent = std::collections::HashMap::new();
    for l in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(l).expect("json line");
        if let Some(id) = v["id"].as_str() {
            parent.insert(id.to_string(), v["parentId"].as_str().map(String::from));
        }
    }
    let mut out = vec![leaf.to_string()];
    let mut cur = leaf.to_string();
    while let Some(Some(p)) = parent.get(&cur) {
        out.push(p.clone());
        cur = p.clone();
    }
    out.reverse();
    out
}

/// The id of the Claude Code session [`claude_session`] writes.
pub const CLAUDE_ID: &str = "0c1a0de0-2222-4333-8444-555566667777";

/// A record of that session: `v` with its session id, cwd and `isSidechain`, as a line.
pub fn claude_line(v: serde_json::Value) -> String {
    let mut v = v;
    v["sessionId"] = CLAUDE_ID.into();
    v["cwd"] = "/work/app".into();
    v["isSidechain"] = false.into();
    format!("{v}\n")
}

/// A user record `uuid` under `parent` saying `text`, at second `t`.
pub fn claude_user(uuid: &str, parent: &str, text: &str, t: u32) -> String {
    claude_line(serde_json::json!({
        "type": "user", "uuid": uuid, "parentUuid": parent,
        "timestamp": format!("2026-11-01T10:00:{t:02}.000Z"),
        "message": {"role": "user", "content": text},
    }))
}

/// A line of the reply `msg_live1` (Claude writes each part of a reply as a line of its
/// own, sharing `message.id`): record `uuid` under `parent` holding `content`.
pub fn claude_reply(uuid: &str, parent: &str, content: serde_json::Value, t: u32) -> String {
    claude_line(serde_json::json!({
        "type": "assistant", "uuid": uuid, "parentUuid": parent,
        "timestamp": format!("2026-11-01T10:00:{t:02}.000Z"),
        "message": {"id": "msg_live1", "model": "claude-sonnet-4-5-20250929", "role": "assistant",
            "type": "message", "content": content, "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}},
    }))
}

/// Writes a Claude Code session as Claude begins it under the home directory `home`, where
/// `arbor serve --all` finds it (`.claude/projects/-work-app/`): a question, a reply begun
/// (its thinking; the rest of it comes later on lines of the same `message.id`) and a title.
/// Its file.
pub fn claude_session(home: &Path) -> std::path::PathBuf {
    let dir = home.join(".claude/projects/-work-app");
    std::fs::create_dir_all(&dir).expect("dirs");
    let file = dir.join(format!("{CLAUDE_ID}.jsonl"));
    let mut text = claude_user("u1", "", "Which files are there?", 1)
        .replace("\"parentUuid\":\"\"", "\"parentUuid\":null");
    text.push_str(&claude_reply(
        "a1",
        "u1",
        serde_json::json!([{"type": "thinking", "thinking": "Look at the tree first.", "signature": "sig"}]),
        2,
    ));
    text.push_str(&claude_line(
        serde_json::json!({"type": "ai-title", "aiTitle": "Files in the tree"}),
    ));
    std::fs::write(&file, text).expect("write");
    file
}
