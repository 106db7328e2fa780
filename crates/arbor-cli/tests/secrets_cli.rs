//! `arbor secrets` on a corpus with planted secrets: every one found, by line, entry and
//! kind, none printed; the demo sessions and the real fixture give none.
use std::process::Command;

const PLANTED: &[(&str, &str)] = &[
    ("AKIAQWERTYUIOPASDFGH", "aws-access-key"),
    ("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "github-token"),
    ("sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9", "openai-key"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"),
    ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
];

#[test]
fn every_planted_secret_is_found_and_none_is_printed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    );
    for (n, (secret, _)) in PLANTED.iter().enumerate() {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{n}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"toolName\":\"bash\",\"content\":[{{\"type\":\"text\",\"text\":\"export X={secret}\\n\"}}],\"isError\":false,\"timestamp\":1}}}}\n"
        ));
    }
    std::fs::write(&f, &text).expect("write");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", tmp.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run")
    };
    let o = run(&["secrets", f.to_str().expect("utf-8"), "--json"]);
    assert_eq!(o.status.code(), Some(1), "found: exit 1");
    let out = String::from_utf8(o.stdout).expect("utf-8");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let found: Vec<(u64, String)> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|x| {
            (
                x["line"].as_u64().expect("line"),
                x["kind"].as_str().expect("kind").to_string(),
            )
        })
        .collect();
    let want: Vec<(u64, String)> = PLANTED
        .iter()
        .enumerate()
        .map(|(n, (_, k))| (n as u64 + 2, k.to_string()))
        .collect();
    assert_eq!(found, want);
    assert_eq!(v[0]["field"], "message.content[0].text");
    let human = run(&["secrets", f.to_str().expect("utf-8")]);
    let all = format!(
        "{}{}{out}",
        String::from_utf8_lossy(&human.stdout),
        String::from_utf8_lossy(&human.stderr)
    );
    for (secret, _) in PLANTED {
        assert!(!all.contains(secret), "a secret was printed");
    }
    // The demo sessions, the real recorded fixture among them (a copy in the repository, so
    // that a checkout anywhere has it): no finding.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut args: Vec<String> = vec!["secrets".into()];
    for e in std::fs::read_dir(root.join("demo/sessions"))
        .expect("dir")
        .flatten()
    {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            args.push(e.path().to_string_lossy().into_owned());
        }
    }
    assert!(args
        .iter()
        .any(|a| a.ends_with("_pi-real-v1-fixture.jsonl")));
    assert!(args.len() >= 5);
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(&args)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn fork_redact_writes_a_copy_without_secrets_that_still_reads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let text = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        "{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"use AKIAQWERTYUIOPASDFGH\",\"timestamp\":1}}\n",
        "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stopReason\":\"stop\",\"timestamp\":2}}\n",
    );
    std::fs::write(&f, text).expect("write");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", tmp.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run")
    };
    let o = run(&["fork", f.to_str().expect("utf-8"), "--redact", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 secret redacted"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let copy = v["path"].as_str().expect("path");
    let bytes = std::fs::read_to_string(copy).expect("copy");
    assert!(!bytes.contains("AKIAQWERTYUIOPASDFGH") && bytes.contains("[REDACTED:aws-access-key]"));
    // The line without a secret is byte for byte the source's.
    assert!(bytes.contains(text.lines().nth(2).expect("line")));
    assert_eq!(run(&["secrets", copy]).status.code(), Some(0));
    let ctx = run(&["context", copy]);
    assert!(ctx.status.success());
    assert!(String::from_utf8_lossy(&ctx.stdout).contains("use [REDACTED:aws-access-key]"));
    assert_eq!(
        std::fs::read_to_string(&f).expect("src"),
        text,
        "the source is untouched"
    );
}

fn arbor(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run")
}

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"01a2031c-aa28-755e-9ecf-bfbc78024bb1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
const GHP: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

/// Every file in `dir`, recursively (to show that nothing was left behind).
fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            if e.file_type().expect("type").is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// A line nested 100 000 levels deep holding a token: `secrets` reports it (the recursive
/// walker died of a stack overflow, exit 134), `fork --redact` writes a copy without it and
/// leaves no lock (the crashed fork left an unredacted copy and its lock).
#[test]
fn deep_nesting_is_scanned_and_redacted_by_the_binary() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).expect("mkdir");
    let f = dir.join("deep.jsonl");
    let depth = 100_000;
    let text = format!(
        "{HEADER}{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}},\"deep\":{}\"{GHP}\"{}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(&f, &text).expect("write");
    let o = arbor(tmp.path(), &["secrets", f.to_str().expect("utf-8")]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "found: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("github-token") && !out.contains(GHP),
        "{}",
        &out[..out.len().min(500)]
    );
    assert!(out.len() < 1000, "the path is abridged");
    let o = arbor(
        tmp.path(),
        &["fork", f.to_str().expect("utf-8"), "--redact", "--json"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let copy = v["path"].as_str().expect("path").to_string();
    let bytes = std::fs::read_to_string(&copy).expect("copy");
    assert!(!bytes.contains(GHP) && bytes.contains("[REDACTED:github-token]"));
    assert_eq!(
        files_in(&dir),
        vec![copy.clone(), f.to_string_lossy().into_owned()],
        "the source and the copy, no lock"
    );
    assert_eq!(
        arbor(tmp.path(), &["secrets", &copy]).status.code(),
        Some(0)
    );
}

/// What `secrets` did not read fails the gate, named (file, line, problem), and a secret is
/// never printed, also not one that is an object key in a field path.
#[test]
fn what_is_not_scanned_fails_and_keys_are_masked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    std::fs::write(
        &f,
        format!(
            "{HEADER}{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"x\",\"arguments\":{{\"{GHP}\":true}}}}],\"timestamp\":1}}}}\n"
        ),
    )
    .expect("write");
    for args in [
        vec!["secrets", f.to_str().expect("utf-8")],
        vec!["secrets", f.to_str().expect("utf-8"), "--json"],
    ] {
        let o = arbor(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(1));
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!all.contains(&GHP[4..]), "a key was printed: {all}");
        assert!(all.contains("arguments.[REDACTED:github-token]"), "{all}");
    }
    // A malformed line (clean otherwise): exit 1, named by line.
    let g = tmp.path().join("m.jsonl");
    std::fs::write(
        &g,
        format!("{HEADER}{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"message\":{{\"role\":\"user\",\"content\":\"x {GHP}\n{{\"type\":\"label\",\"id\":\"b\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"targetId\":\"b\",\"label\":\"ok\"}}\n"),
    )
    .expect("write");
    let o = arbor(tmp.path(), &["secrets", g.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}:2: not scanned", g.display())),
        "{err}"
    );
    assert!(!err.contains(&GHP[4..]), "{err}");
    // A file that is not a session, whose first line's type is a token: named, exit 1, and
    // the token is not quoted in the reason.
    let t = tmp.path().join("t.jsonl");
    std::fs::write(&t, format!("{{\"type\":\"{GHP}\",\"id\":\"x\"}}\n")).expect("write");
    let o = arbor(tmp.path(), &["secrets", t.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not scanned") && !err.contains(&GHP[4..]),
        "{err}"
    );
    // A file that does not open as a session, and a sessions directory that cannot be read.
    let d = tmp.path().join("dir.jsonl");
    std::fs::create_dir(&d).expect("mkdir");
    let o = arbor(tmp.path(), &["secrets", d.to_str().expect("utf-8")]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("not scanned"));
    let agent = tmp.path().join("agent");
    std::fs::create_dir(&agent).expect("mkdir");
    std::fs::write(agent.join("sessions"), "not a directory").expect("file");
    let o = arbor(
        tmp.path(),
        &[
            "secrets",
            "--all",
            "--agent-dir",
            agent.to_str().expect("utf-8"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("sessions: not scanned"), "{err}");
}

/// Each export format and `fork --redact` of a session with secrets in every spelling and
/// place: no secret's bytes survive, and `secrets` finds nothing in the fork.
#[test]
fn every_export_and_the_fork_hold_no_planted_secret() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let proj = "sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9";
    let api = "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc";
    let header = HEADER.replace("\"/p\"", &format!("\"/home/{GHP}\""));
    let text = format!(
        "{header}{{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"a\\n{GHP} b \\u0073{}\",\"timestamp\":1}}}}\n{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"{GHP}\",\"arguments\":{{\"content\":\"{{\\\"api_key\\\": \\\"{api}\\\"}}\"}}}}],\"model\":\"{proj}\",\"stopReason\":\"error\",\"errorMessage\":\"{proj}\",\"timestamp\":2}}}}\n{{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"name\":\"{GHP}\"}}\n",
        &proj[1..]
    );
    std::fs::write(&f, &text).expect("write");
    let bodies = [&GHP[4..], &proj[8..], api];
    let scan = arbor(
        tmp.path(),
        &["secrets", f.to_str().expect("utf-8"), "--json"],
    );
    let found: serde_json::Value = serde_json::from_slice(&scan.stdout).expect("json");
    let reported = found.as_array().expect("array").len();
    assert_eq!(reported, 8, "{found}");
    for format in ["md", "json", "html"] {
        let o = arbor(
            tmp.path(),
            &["export", f.to_str().expect("utf-8"), "--format", format],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        for b in bodies {
            assert!(!out.contains(b), "{format}: {b} survived");
        }
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&format!("{reported} secrets redacted")),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = arbor(
        tmp.path(),
        &["fork", f.to_str().expect("utf-8"), "--redact", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("{reported} secrets redacted")));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let copy = v["path"].as_str().expect("path");
    let bytes = std::fs::read_to_string(copy).expect("copy");
    for b in bodies {
        assert!(!bytes.contains(b), "fork: {b} survived");
    }
    assert_eq!(arbor(tmp.path(), &["secrets", copy]).status.code(), Some(0));
}

use arbor_testkit::planted;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

    /// For sessions with secrets planted in random places and spellings: every export format
    /// (the whole tree) holds none of their bytes and nothing the scanner would report; the
    /// count each reports is the one `secrets` reported.
    #[test]
    fn no_export_format_keeps_a_planted_secret(
        plants in proptest::collection::vec(
            (planted::secret(), planted::spelling(), 0u8..8),
            1..5,
        )
    ) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let f = tmp.path().join("s.jsonl");
        std::fs::write(&f, planted::planted_session(&plants)).expect("write");
        let path = f.to_str().expect("utf-8");
        let scan = arbor(tmp.path(), &["secrets", path, "--json"]);
        let reported = serde_json::from_slice::<serde_json::Value>(&scan.stdout)
            .expect("json")
            .as_array()
            .map_or(0, Vec::len);
        proptest::prop_assert!(reported >= plants.len());
        for format in ["md", "json", "html"] {
            let o = arbor(tmp.path(), &["export", path, "--tree", "--format", format]);
            proptest::prop_assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let out = String::from_utf8_lossy(&o.stdout);
            for (s, _, _) in &plants {
                proptest::prop_assert!(!out.contains(&planted::body(s)), "{}: {} survived", format, s);
            }
            let left = arbor_view::secrets::find(&out);
            proptest::prop_assert!(left.is_empty(), "{}: {:?}", format, left);
            let err = String::from_utf8_lossy(&o.stderr);
            let said = format!("{reported} secret{} redacted", if reported == 1 { "" } else { "s" });
            proptest::prop_assert!(err.contains(&said), "{}: {}", format, err);
        }
    }
}

/// An export of one path still shows text from other branches (pi's session name is the last
/// `session_info` entry of any branch): the whole document is redacted, not only the path.
#[test]
fn a_name_set_on_another_branch_is_redacted_in_a_path_export() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let text = format!(
        "{HEADER}{}\n{}\n{}\n{}\n",
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"timestamp":2}}"#,
        format_args!(
            r#"{{"type":"session_info","id":"n1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","name":"deploy {GHP}"}}"#
        ),
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"more","timestamp":4}}"#,
    );
    std::fs::write(&f, text).expect("write");
    for format in ["md", "json", "html"] {
        let o = arbor(
            tmp.path(),
            &[
                "export",
                f.to_str().expect("utf-8"),
                "--leaf",
                "a2",
                "--format",
                format,
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("deploy [REDACTED:github-token]"),
            "{format}: the name is shown"
        );
        assert!(!out.contains(&GHP[4..]), "{format}: {out}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 6, ..Default::default() })]

    /// Secrets planted in strings an export reads in pieces (over 1 MB: a user's `content`,
    /// an assistant's text and thinking blocks, a tool call's arguments, a tool result's text
    /// block), anywhere in them (across the 1 MB pieces and the scanner's windows too), in
    /// every spelling: no export format keeps any of their bytes or anything the scanner
    /// would report, and each reports the count `secrets` reported (the secrets are replaced
    /// as each string is read: `secrets::redact_doc_deferring`).
    #[test]
    fn no_export_format_keeps_a_secret_planted_in_a_long_string(
        plants in proptest::collection::vec(
            (planted::secret(), planted::spelling(), 0u8..5, 0usize..2_300_000),
            1..4,
        )
    ) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let f = tmp.path().join("s.jsonl");
        let line = r"    let value = compute(&items[index], options.clone()); // step 42 of the export\n";
        let filler = line.repeat(2_400_000 / line.len());
        let mut lines = Vec::new();
        let mut parent: Option<String> = None;
        for (k, (s, how, place, at)) in plants.iter().enumerate() {
            let lit = planted::literal(s, how);
            // Between two lines' characters, never inside an escape.
            let at = at / line.len() * line.len() + (at % line.len()).min(line.len() - 3);
            let long = format!("\"{} {} {}\"", &filler[..at], &lit[1..lit.len() - 1], &filler[at..]);
            let id = format!("e{k:07}");
            let p = parent.as_deref().map_or("null".to_string(), |p| format!("\"{p}\""));
            let message = |role: &str, content: &str| format!(
                r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"{role}","content":{content},"timestamp":2}}}}"#
            );
            lines.push(match place {
                0 => message("user", &long),
                1 => message("assistant", &format!(r#"[{{"type":"text","text":{long}}}]"#)),
                2 => message("assistant", &format!(r#"[{{"type":"thinking","thinking":{long}}},{{"type":"text","text":"ok"}}]"#)),
                3 => message("assistant", &format!(
                    r#"[{{"type":"toolCall","id":"c","name":"write","arguments":{{"path":"/p/a.rs","content":{long}}}}}]"#
                )),
                _ => message("toolResult", &format!(r#"[{{"type":"text","text":{long}}}]"#)),
            });
            parent = Some(id);
        }
        std::fs::write(&f, planted::session(HEADER.trim_end(), &lines)).expect("write");
        let path = f.to_str().expect("utf-8");
        let scan = arbor(tmp.path(), &["secrets", path, "--json"]);
        let reported = serde_json::from_slice::<serde_json::Value>(&scan.stdout)
            .expect("json")
            .as_array()
            .map_or(0, Vec::len);
        proptest::prop_assert!(reported >= plants.len());
        for format in ["md", "json", "html"] {
            let o = arbor(tmp.path(), &["export", path, "--tree", "--format", format]);
            proptest::prop_assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let out = String::from_utf8_lossy(&o.stdout);
            for (s, _, _, _) in &plants {
                proptest::prop_assert!(!out.contains(&planted::body(s)), "{}: {} survived", format, s);
            }
            let left = arbor_view::secrets::find(&out);
            proptest::prop_assert!(left.is_empty(), "{}: {:?}", format, left);
            let err = String::from_utf8_lossy(&o.stderr);
            let said = format!("{reported} secret{} redacted", if reported == 1 { "" } else { "s" });
            proptest::prop_assert!(err.contains(&said), "{}: {}", format, err);
        }
    }
}
