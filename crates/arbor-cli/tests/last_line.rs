//! A last line without a newline is torn only if it is not a complete JSON value (issue 10,
//! item 3's rule). A complete one that is not an entry (`42`, `[1]`, `null`, `"s"`: pi keeps
//! such lines, arbor skips them as malformed) was left alone by `append`, which then wrote the
//! new entry right after it, on the same line: `"s"{"type":"message",...}` is one malformed line,
//! and the entry whose id `append` printed was unreadable by pi and by arbor.
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

const HEAD: &str = concat!(
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"u","timestamp":1}}"#,
    "\n"
);

#[test]
fn append_after_a_complete_last_line_without_newline_starts_a_new_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    for (k, last) in ["42", "[1]", "null", "\"s\"", "true", "{}", " [ [ ] ] "]
        .into_iter()
        .enumerate()
    {
        let dir = home.join(format!("d{k}"));
        std::fs::create_dir(&dir).expect("dir");
        let file = dir.join("s.jsonl");
        std::fs::write(&file, format!("{HEAD}{last}")).expect("write");
        let s = file.to_str().expect("utf8");
        let body =
            r#"{"type":"message","message":{"role":"user","content":"after","timestamp":2}}"#;
        let o = arbor(&["append", s, body], home);
        assert!(
            o.status.success(),
            "{last}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let id = String::from_utf8(o.stdout).expect("utf8");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["s.jsonl"], "{last}: something moved aside");
        let text = std::fs::read_to_string(&file).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{last}: {text}");
        assert_eq!(lines[2], last, "{last}: the line was changed");
        assert!(
            lines[3].starts_with(r#"{"type":"message","id":""#),
            "{last}: {text}"
        );
        assert!(text.ends_with('\n'));
        let o = arbor(&["context", s, "--leaf", id.trim()], home);
        assert!(
            o.status.success(),
            "{last}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ctx = String::from_utf8_lossy(&o.stdout);
        assert!(ctx.contains("\"after\""), "{last}: {ctx}");
    }
}
