//! What a person sees (issue 10, items 8 and 13): session content cannot drive the terminal
//! through any human-readable output (`show`, `tree`, `ls`, `search`, `history`, errors),
//! while `--json` stays exact; errors print each cause once and name what is wrong; every
//! `check --json` argument gets its object; `ls --dir` of something that is not a directory
//! fails; a bad stdin line of `append -` is named by its number.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().to_path_buf();
        Env { _tmp: tmp, home }
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", &self.home)
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ARBOR_CATALOG")
            .stdin(Stdio::null());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
    }
}

/// Terminal controls a session must never get to the terminal through human output.
fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for c in text.chars() {
        let bad = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!bad, "{what}: {c:?} reached the terminal in {text:?}");
    }
}

const HOSTILE: &str = r#"x\u001b]0;pwned\u0007 \u001b[2J \u009b31m \r spoof \u202e \b \u007f y"#;

fn hostile_session(env: &Env, dir: &Path) -> String {
    let o = env.run(&[
        "new",
        "--dir",
        dir.to_str().expect("utf8"),
        "--cwd",
        "/w/\u{1b}[31mred",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    let bodies = [
        format!(
            r#"{{"type":"message","message":{{"role":"user","content":"findme {HOSTILE}","timestamp":1}}}}"#
        ),
        format!(
            r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"text","text":"findme {HOSTILE}"}}],"model":"m{HOSTILE}","provider":"p","api":"a","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":2}}}}"#
        ),
        format!(r#"{{"type":"session_info","name":"name {HOSTILE}"}}"#),
    ];
    let mut c = env.cmd(&["append", &s, "-"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all((bodies.join("\n") + "\n").as_bytes())
            .expect("feed");
    }
    let o = child.wait_with_output().expect("append");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let first = String::from_utf8(o.stdout).expect("utf8");
    let first = first.lines().next().expect("an id").to_string();
    let label = format!(r#"{{"type":"label","targetId":"{first}","label":"lbl {HOSTILE}"}}"#);
    let o = env.run(&["append", &s, &label]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    s
}

#[test]
fn session_content_cannot_drive_the_terminal() {
    let env = Env::new();
    let dir = env.home.join("sessions");
    let s = hostile_session(&env, &dir);
    let d = dir.to_str().expect("utf8");
    for args in [
        vec!["show", s.as_str()],
        vec!["tree", s.as_str()],
        vec!["ls", "--dir", d],
        vec!["search", "findme", "--dir", d],
        vec!["search", "pwned", "--dir", d],
        vec!["check", "--verbose", s.as_str()],
    ] {
        let o = env.run(&args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!o.stdout.is_empty(), "{args:?} printed nothing");
        assert_inert(&format!("{args:?} stdout"), &o.stdout);
        assert_inert(&format!("{args:?} stderr"), &o.stderr);
    }
    // What was there is shown, visibly.
    let o = env.run(&["show", &s]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(shown.contains("␛]0;pwned␇"), "{shown}");
    assert!(shown.contains("<U+202E>"), "{shown}");

    // --json stays exact: the escapes are there, as JSON spells them.
    let o = env.run(&["context", &s]);
    let json = String::from_utf8_lossy(&o.stdout);
    assert!(json.contains(r"\u001b]0;pwned\u0007"), "{json}");
    assert!(
        json.contains('\u{9b}') && json.contains('\u{202e}'),
        "{json}"
    );
    let o = env.run(&["search", "findme", "--dir", d, "--json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(r"\u001b"));

    // Errors that quote a file's text or an argument are sanitized too.
    let o = env.run(&["show", &s, "--leaf", "no\u{1b}]0;t\u{7}such"]);
    assert_eq!(o.status.code(), Some(1));
    assert_inert("error", &o.stderr);
    let o = env.run(&["context", "/nonexistent/\u{1b}[2J.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    assert_inert("error", &o.stderr);
}

#[test]
fn errors_print_each_cause_once_and_say_what_is_wrong() {
    let env = Env::new();
    let file = env.home.join("plain-file");
    std::fs::write(&file, "x").expect("write");
    let f = file.to_str().expect("utf8");
    let o = env.run(&["new", "--dir", f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not a directory"), "{err}");
    assert!(!err.contains("File exists"), "{err}");
    let o = env.run(&["context", "/nonexistent.jsonl"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    let o = env.run(&["context", "/dev/zero"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("not a regular file").count(), 1, "{err}");

    for args in [
        vec!["ls", "--dir", "/nonexistent"],
        vec!["ls", "--dir", f],
        vec!["search", "x", "--dir", "/nonexistent"],
        vec!["search", "x", "--dir", f],
    ] {
        let o = env.run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(args[args.len() - 1]),
            "{args:?} names the path: {err}"
        );
    }
}

#[test]
fn check_json_has_an_object_for_every_argument() {
    let env = Env::new();
    let dir = env.home.join("s");
    let o = env.run(&["new", "--dir", dir.to_str().expect("utf8")]);
    let s = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    let d = dir.to_str().expect("utf8");
    let o = env.run(&["check", "--json", "/nonexistent.jsonl", d, &s]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let a = v.as_array().expect("array");
    assert_eq!(a.len(), 3, "{v}");
    assert_eq!(a[0]["path"], "/nonexistent.jsonl");
    assert_eq!(a[0]["ok"], false);
    assert_eq!(a[0]["findings"][0]["kind"], "unreadable");
    assert_eq!(a[1]["path"], d);
    assert_eq!(a[1]["ok"], false);
    assert!(a[1]["findings"][0]["message"]
        .as_str()
        .expect("message")
        .contains("is a directory"));
    assert_eq!(a[2]["ok"], true);
}

#[test]
fn a_bad_stdin_line_is_named_and_earlier_entries_stay() {
    use std::io::Write;
    let env = Env::new();
    let dir = env.home.join("s");
    let o = env.run(&["new", "--dir", dir.to_str().expect("utf8")]);
    let s = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    let body = |t: &str| {
        format!(r#"{{"type":"message","message":{{"role":"user","content":"{t}","timestamp":1}}}}"#)
    };
    let mut input = format!("{}\n{}\n", body("a"), body("b")).into_bytes();
    input.extend_from_slice(b"{\"type\":\"message\",\"x\":\"\xff\"}\n");
    input.extend_from_slice(format!("{}\n", body("c")).as_bytes());
    let mut c = env.cmd(&["append", &s, "-"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("feed");
    let o = child.wait_with_output().expect("append");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stdin line 3") && err.contains("UTF-8"),
        "{err}"
    );
    let ids: Vec<String> = String::from_utf8(o.stdout)
        .expect("utf8")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(ids.len(), 2);
    let text = std::fs::read_to_string(&s).expect("read");
    for id in &ids {
        assert!(text.contains(&format!("\"id\":\"{id}\"")), "{id} missing");
    }
    assert!(!text.contains("\"c\""), "appended past the bad line");
}
