//! A pi v3 session of one user message, written as `DIR/NAME.jsonl` (session id NAME), for the
//! catalog's tests here and in arbor-cli (`#[path]`).

/// Writes the session; `text` goes into the JSON as it is (no quotes or backslashes in it).
pub fn session(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(
        dir.join(format!("{name}.jsonl")),
        format!(
            "{}\n{}\n",
            r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#
                .replace("ID", name),
            format_args!(
                r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
            )
        ),
    )
    .expect("write session");
}
