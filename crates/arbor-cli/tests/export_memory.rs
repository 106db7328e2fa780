//! `arbor export` of a session made of one long message: the memory it takes does not grow
//! with the message (issue 21 item 17). Every format, with redaction (the default) and
//! `--no-redact`; the message line as pi writes it (compact) and with spaces after `:` and
//! `,` (another writer's; the loader reads such a line by another path); the text a user's
//! `content` string, an assistant's text block or thinking block, a tool call's arguments or
//! a tool result's text block.
//!
//! Peak RSS is the child's own, compared with the same export of a session of one
//! short message: before the text was read in pieces, a long message took two to three times
//! its size (the mapped line, the decoded text, an escaped copy).
use std::path::Path;
use std::process::Command;

/// How the long text is held.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// A user message's `content` string, the line compact.
    Compact,
    /// The same with spaces after `:` and `,`.
    Spaced,
    /// An assistant message's text blocks (the long text, then a short one), compact.
    Blocks,
    /// A user message's `content` string of one line (no newline, no fence: prose with a
    /// code span, links and HTML for the escapes), compact. (Not many backticks: the code
    /// before scanned to the line's end at each, quadratic on a long line.)
    OneLine,
    /// An assistant's thinking block (then a short text block), compact.
    Thinking,
    /// An assistant's `write` tool call whose `arguments.content` is the text, compact.
    ToolArgs,
    /// A tool result's text block, after a user message and a short tool call, compact.
    ToolResult,
    /// A user message's `content` string with a GitHub token in its middle, compact: its
    /// secrets are found and replaced as it is read.
    Secret,
}

/// The session: a header and one message whose text is `lines` lines of code in a fenced
/// block (as `bench/export.sh`'s single-message session).
fn session(path: &Path, lines: usize, shape: Shape) -> u64 {
    let spaced = matches!(shape, Shape::Spaced);
    let line =
        "    let value = compute(&items[index], options.clone()); // step 42 of the export\n";
    let text = match shape {
        Shape::OneLine => format!(
            "Here is `the` text: {}",
            "a [span] and [a](link) & <b>, then ]( or a \\ tick; ".repeat(lines * 3 / 2)
        ),
        Shape::Secret => format!(
            "Here is the file:\n```rust\n{}    let token = \"ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\";\n{}```\n",
            line.repeat(lines / 2),
            line.repeat(lines - lines / 2)
        ),
        _ => format!("Here is the file:\n```rust\n{}```\n", line.repeat(lines)),
    };
    let content = serde_json::to_string(&text).expect("json");
    let (c, s) = if spaced { (": ", ", ") } else { (":", ",") };
    let header = format!(
        "{{\"type\"{c}\"session\"{s}\"version\"{c}3{s}\"id\"{c}\"01a2031c-aa28-755e-9ecf-bfbc78024bb1\"{s}\"timestamp\"{c}\"2026-01-01T00:00:00.000Z\"{s}\"cwd\"{c}\"/p\"}}\n"
    );
    let call = |args: &str| {
        format!("[{{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"write\",\"arguments\":{{\"path\":\"/p/a.rs\",\"content\":{args}}}}}]")
    };
    let (role, content) = match shape {
        Shape::Blocks => (
            "assistant",
            format!(
                "[{{\"type\":\"text\",\"text\":{content}}},{{\"type\":\"text\",\"text\":\"done\"}}]"
            ),
        ),
        Shape::Thinking => (
            "assistant",
            format!(
                "[{{\"type\":\"thinking\",\"thinking\":{content}}},{{\"type\":\"text\",\"text\":\"done\"}}]"
            ),
        ),
        Shape::ToolArgs => ("assistant", call(&content)),
        Shape::ToolResult => (
            "toolResult",
            format!("[{{\"type\":\"text\",\"text\":{content}}}]"),
        ),
        _ => ("user", content),
    };
    let message = |id: &str, parent: &str, role: &str, content: &str| {
        format!(
            "{{\"type\"{c}\"message\"{s}\"id\"{c}\"{id}\"{s}\"parentId\"{c}{parent}{s}\"timestamp\"{c}\"2026-01-01T00:00:01.000Z\"{s}\"message\"{c}{{\"role\"{c}\"{role}\"{s}\"content\"{c}{content}{s}\"timestamp\"{c}1}}}}\n"
        )
    };
    let messages = match shape {
        // The tool result answers a short call.
        Shape::ToolResult => [
            message("u1", "null", "user", "\"write it\""),
            message("c1", "\"u1\"", "assistant", &call("\"x\"")),
            message("a1", "\"c1\"", role, &content),
        ]
        .concat(),
        _ => message("a1", "null", role, &content),
    };
    std::fs::write(path, format!("{header}{messages}")).expect("write session");
    std::fs::metadata(path).expect("stat").len()
}

/// Runs `arbor export ARGS`; its peak RSS in bytes: its `VmHWM` (the high-water mark of its
/// own memory since it started), read until it exits. (`wait4`'s `ru_maxrss` is no use
/// here: a child starts with the RSS of the process it was forked from, this test's.)
fn peak(args: &[&str]) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("export")
        .args(args)
        .env_remove("PI_CODING_AGENT_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run arbor");
    let status = format!("/proc/{}/status", child.id());
    let mut hwm = 0;
    loop {
        // Read before the exit is checked: the last reading is from after everything but
        // the exit itself.
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                hwm = hwm.max(kb * 1024);
            }
        }
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success(), "arbor export {args:?} failed: {st}");
            return hwm;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_long_message_is_exported_in_memory_that_does_not_grow_with_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let small = tmp.path().join("small.jsonl");
    let big = tmp.path().join("big.jsonl");
    let out = tmp.path().join("out");
    let out = out.to_str().expect("utf-8");
    for shape in [
        Shape::OneLine,
        Shape::Spaced,
        Shape::Compact,
        Shape::Blocks,
        Shape::Thinking,
        Shape::ToolArgs,
        Shape::ToolResult,
        Shape::Secret,
    ] {
        session(&small, 1, shape);
        // About 48 MB: the windows the reading keeps (8 MB each, two or three resident at
        // once: 18-27 MB over, measured) are a fixed cost; the code before took 1.7 times the
        // size over.
        let size = session(&big, 600_000, shape);
        let formats: &[&str] = match shape {
            Shape::Compact => &["md"],
            _ => &["md", "html", "json"],
        };
        for fmt in formats {
            for plain in [false, true] {
                let mut args = vec!["--format", fmt, "-o", out];
                if plain {
                    args.insert(0, "--no-redact");
                }
                let run = |s: &Path| {
                    let mut a = args.clone();
                    a.push(s.to_str().expect("utf-8"));
                    let p = peak(&a);
                    let written = std::fs::metadata(out).expect("output").len();
                    std::fs::remove_file(out).expect("rm output");
                    (p, written)
                };
                let (base, _) = run(&small);
                let (p, written) = run(&big);
                assert!(written > size * 9 / 10, "{fmt}: {written} bytes written");
                let grew = p.saturating_sub(base);
                assert!(
                    grew < size * 3 / 4,
                    "{fmt} (no-redact {plain}, {shape:?}): peak RSS {p} bytes, {grew} over a \
                     one-line session's, for a {size}-byte session"
                );
            }
        }
    }
}

/// A session of many entries as `arbor-gen` makes them (branches, tool calls, images): an
/// export follows the tree, so the lines it reads are not in file order, and each page fault
/// maps the pages around it too (the kernel's fault-around). The pages released behind the
/// reader are counted with them: counted by the lines' own bytes, 8 MB of lines kept most of
/// the file mapped (a 100 MB session peaked at 1.17 times its size in Markdown and HTML).
#[test]
fn a_session_of_many_entries_keeps_few_of_its_pages_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("many.jsonl");
    let out = tmp.path().join("out");
    let out = out.to_str().expect("utf-8");
    let file = std::fs::File::create(&big).expect("create");
    arbor_bench::gen::generate(&arbor_bench::gen::GenConfig::new(60 << 20, 1), file)
        .expect("generate");
    let size = std::fs::metadata(&big).expect("stat").len();
    // The whole peak (the release build stays under 0.8 times the file, `bench/export.sh`):
    // a debug build's code and tables add up to 20-50 MB whatever the session (measured on a
    // session of one short message), so the bound here is 1.2 times the file; the code before
    // took 1.3 to 1.6 times it (84-102 MB for 63 MB).
    for fmt in ["md", "html", "json"] {
        for plain in [false, true] {
            let mut args = vec!["--format", fmt, "-o", out, big.to_str().expect("utf-8")];
            if plain {
                args.insert(0, "--no-redact");
            }
            let p = peak(&args);
            std::fs::remove_file(out).expect("rm output");
            let _ = std::fs::remove_dir_all(format!("{out}.assets"));
            assert!(
                p < size * 6 / 5,
                "{fmt} (no-redact {plain}): peak RSS {p} bytes for a {size}-byte session"
            );
        }
    }
}

/// A session whose path skips most of the file: each short message on the path is followed
/// by a 60 KB entry of another branch. The load looks for a line start near each chunk
/// boundary of the file before it parses; those searches (and the pages the kernel mapped
/// around them) kept most of the file mapped before the parse began (82 MB for 60 MB).
#[test]
fn a_path_through_a_branched_session_keeps_few_pages_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = tmp.path().join("branched.jsonl");
    let out = tmp.path().join("out");
    let out = out.to_str().expect("utf-8");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"01a2031c-aa28-755e-9ecf-bfbc78024bb2\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    );
    let filler = "x".repeat(60_000);
    let mut parent = "null".to_string();
    for k in 0..1_000 {
        let id = format!("p{k:07}");
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"turn {k}\",\"timestamp\":1}}}}\n"
        ));
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"b{k:07}\",\"parentId\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{filler}\",\"timestamp\":1}}}}\n"
        ));
        parent = format!("\"{id}\"");
    }
    // The last line is on the path: pi resumes there.
    text.push_str(&format!(
        "{{\"type\":\"message\",\"id\":\"last\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"end\",\"timestamp\":1}}}}\n"
    ));
    std::fs::write(&big, &text).expect("write");
    let size = text.len() as u64;
    for fmt in ["md", "html", "json"] {
        let p = peak(&[
            "--no-redact",
            "--format",
            fmt,
            "-o",
            out,
            big.to_str().expect("utf-8"),
        ]);
        std::fs::remove_file(out).expect("rm output");
        // The code before kept 82 MB mapped for this 60 MB file (1.36x); now about 40 MB
        // (0.67x, debug build, whole process). The bound is the file's size, the export
        // promise: at 0.75x it failed once in three runs beside the other tests of this file
        // on a loaded machine.
        assert!(
            p < size,
            "{fmt}: peak RSS {p} bytes for a {size}-byte session whose path is 1,001 short lines"
        );
    }
}
