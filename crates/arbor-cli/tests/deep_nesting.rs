//! Lines nested deeper than arbor used to read (issue 10, item 3). pi reads any depth
//! (`JSON.parse` is iterative in V8: a million levels parse); arbor must read them too, and
//! must never call a complete line torn because its own parser gave up: an `append` after a
//! deep last line without a newline moved that entry to a `.torn` sidecar, and pi's entry
//! vanished from the session.
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn arbor(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("run arbor")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("utf8")
}

fn deep_line(id: &str, levels: usize) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"hello deep"}}],"extra":{}"deep"{},"timestamp":1}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

#[test]
fn a_deep_last_line_without_newline_is_kept_and_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let dir = home.join("s");
    let s = ok(arbor(
        &["new", "--dir", dir.to_str().expect("utf8"), "--cwd", "/w"],
        home,
    ));
    let s = s.trim();
    // The complete, valid last line pi wrote, without its newline yet.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(s)
        .expect("open");
    std::io::Write::write_all(&mut f, deep_line("deep0001", 100_000).as_bytes()).expect("write");
    drop(f);

    let body = r#"{"type":"message","message":{"role":"user","content":"after","timestamp":2}}"#;
    let id = ok(arbor(&["append", s, body], home));
    let id = id.trim();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains(".torn-")),
        "moved aside: {names:?}"
    );
    let text = std::fs::read_to_string(s).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "header, the deep entry, the new one");
    assert_eq!(lines[1], deep_line("deep0001", 100_000));
    assert!(lines[2].contains(&format!("\"id\":\"{id}\"")));
    assert!(
        lines[2].contains("\"parentId\":\"deep0001\""),
        "{}",
        lines[2]
    );

    // Every reader reads it.
    let ctx = ok(arbor(&["context", s], home));
    assert!(ctx.contains("hello deep") && ctx.contains("after"));
    assert!(ctx.contains(&format!("{}\"deep\"", "[".repeat(1000))));
    assert!(ok(arbor(&["context", s, "--llm"], home)).contains("hello deep"));
    assert!(ok(arbor(&["tree", s], home)).contains("deep0001"));
    assert!(ok(arbor(&["show", s], home)).contains("hello deep"));
    assert!(ok(arbor(&["check", "--verbose", s], home)).contains("ok (2 entries)"));
    let d = dir.to_str().expect("utf8");
    assert!(ok(arbor(&["ls", "--dir", d], home)).contains("hello deep"));
    assert!(ok(arbor(&["search", "hello", "--dir", d], home)).contains("deep0001"));
    // A repair finds nothing to take out.
    let before = std::fs::read(s).expect("read");
    ok(arbor(&["check", "--repair", s], home));
    assert_eq!(std::fs::read(s).expect("read"), before);
}

/// JS `ToString` of a deep array (`String([[["x"]]])` is `"x"`): pi's `convertToLlm` applies it to
/// a compaction summary and a `bashExecution` command, pi's listing to a text block's `text`.
/// arbor computed it recursively and overflowed its stack (an abort) in `context --llm`, `ls`
/// and `search`; it now reads the leaves out at any depth.
#[test]
fn deep_values_converted_to_text_are_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let dir = home.join("s");
    std::fs::create_dir(&dir).expect("dir");
    let n = 100_000;
    let deep = |leaf: &str| format!("{}\"{leaf}\"{}", "[".repeat(n), "]".repeat(n));
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        format!(
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":1}}}}"#,
            deep("firsttext")
        ),
        format!(
            r#"{{"type":"compaction","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","summary":{},"firstKeptEntryId":"a1","tokensBefore":1}}"#,
            deep("summarytext")
        ),
        format!(
            r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"bashExecution","command":{},"output":{},"exitCode":0,"cancelled":false,"truncated":false,"timestamp":3}}}}"#,
            deep("commandtext"),
            deep("outputtext")
        ),
    ];
    let file = dir.join("s.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let s = file.to_str().expect("utf8");
    let llm = ok(arbor(&["context", s, "--llm"], home));
    for text in ["summarytext", "Ran `commandtext`", "outputtext"] {
        assert!(llm.contains(text), "{text} missing");
    }
    let d = dir.to_str().expect("utf8");
    assert!(ok(arbor(&["ls", "--dir", d], home)).contains("firsttext"));
    assert!(ok(arbor(&["search", "firsttext", "--dir", d], home)).contains("a1"));
}
