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
