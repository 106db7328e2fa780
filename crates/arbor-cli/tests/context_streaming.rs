//! `arbor context` writes large contexts in chunks, messages stored as they are to be printed
//! straight from the map and the others re-spelled; the bytes must be exactly those of
//! `SessionContext::write_json` (one buffer), across chunk boundaries, through a pipe.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::doc::SessionDoc;
use std::process::Command;
use std::sync::Arc;

#[test]
fn chunked_output_equals_the_single_buffer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("2025-01-01T00-00-00-000Z_s.jsonl");
    let mut file = br#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec();
    file.push(b'\n');
    let mut parent = "null".to_string();
    // About 5 MB of messages: several 1 MB chunks, with escapes and non-ASCII text.
    for i in 0..100 {
        let text = format!("line {i} with \\\"quotes\\\", tabs\\t, ünïcödé 日本語 \\u001b[0m\\n")
            .repeat(700);
        let role = if i % 2 == 0 { "user" } else { "toolResult" };
        // Every third message is not spelled as JSON.stringify spells it (an escaped `/`, a
        // number with a trailing zero, a space): it is written re-spelled, between kept ones.
        let (text, n) = if i % 3 == 1 {
            (format!("{text}\\/"), "1.50 ")
        } else {
            (text, "1.5")
        };
        let line = format!(
            r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2025-01-01T00:00:{:02}.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"n":{n},"timestamp":{i}}}}}"#,
            i % 60
        );
        file.extend_from_slice(line.as_bytes());
        file.push(b'\n');
        parent = format!("\"e{i}\"");
    }
    std::fs::write(&path, &file).expect("write");
    let doc = SessionDoc::parse(Arc::new(file)).expect("session");
    let mut want = Vec::new();
    build_session_context(&doc, LeafSel::Current).write_json(&doc, &mut want);
    want.push(b'\n');
    assert!(want.len() > 4 << 20, "{}", want.len());
    let got = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("context")
        .arg(&path)
        .output()
        .expect("run arbor");
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(
        got.stdout == want,
        "arbor context differs from write_json ({} vs {} bytes)",
        got.stdout.len(),
        want.len()
    );
}
