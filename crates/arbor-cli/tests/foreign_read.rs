//! Issue 26: `show`, `context`, `tree` and `export` of another agent's session (Claude Code,
//! Codex, opencode), through the real `arbor` binary on a private HOME holding every golden
//! source where its agent keeps it. The session is read in memory as `arbor import` would make
//! it: `context` of each SOURCE equals pi 1.5.2's own context of its import
//! (goldens/agents/expected/NAME.pi.json), every reading command prints what it prints on the
//! imported file, write commands keep refusing, a malformed source is an error naming its file
//! and line, and not a byte or an mtime of another agent's files changes.
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

/// `arbor ARGS` with `home` as HOME, no agent roots from the caller's environment.
fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("PWD", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env("COLUMNS", "100")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CONFIG_DIR")
        .env_remove("OMP_PROFILE")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run arbor")
}

fn ok(home: &Path, args: &[&str]) -> (String, String) {
    let o = run(home, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "arbor {args:?}: {err}");
    (String::from_utf8(o.stdout).expect("utf-8"), err)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Two HOMEs: every Claude Code and Codex golden and opencode's generated database in the
/// first, the recorded opencode database (goldens/agents/opencode-real/dump.sql) in the
/// second (opencode keeps one database).
fn homes() -> (tempfile::TempDir, tempfile::TempDir) {
    let a = tempfile::tempdir().unwrap();
    let h = a.path();
    for (from, to) in [
        ("claude/projects", ".claude/projects"),
        ("claude-real/projects", ".claude/projects"),
        ("codex/sessions", ".codex/sessions"),
        ("codex-real/sessions", ".codex/sessions"),
    ] {
        copy_tree(&goldens().join(from), &h.join(to));
    }
    std::fs::create_dir_all(h.join(".local/share/opencode")).unwrap();
    std::fs::copy(
        goldens().join("opencode/opencode.db"),
        h.join(".local/share/opencode/opencode.db"),
    )
    .unwrap();
    let b = tempfile::tempdir().unwrap();
    let dir = b.path().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let sql = std::fs::read_to_string(goldens().join("opencode-real/dump.sql")).unwrap();
    rusqlite::Connection::open(dir.join("opencode.db"))
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    (a, b)
}

/// Every file under the other agents' roots with its bytes and mtime.
fn sources(home: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    for root in [".claude", ".codex", ".local/share/opencode"] {
        let mut stack = vec![home.join(root)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    let m = std::fs::symlink_metadata(e.path()).unwrap();
                    out.insert(
                        e.path(),
                        (std::fs::read(e.path()).unwrap(), m.modified().unwrap()),
                    );
                }
            }
        }
    }
    out
}

/// Each golden (goldens/agents/expected/NAME.pi.json): its name, agent, session id and which
/// HOME holds its source (0: the first, 1: the recorded opencode database's).
fn golden_sessions() -> Vec<(String, &'static str, String, usize)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(goldens().join("expected")).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".pi.json"))
        else {
            continue;
        };
        let (agent, id, home) = [
            ("claude-real-", "claude", 0),
            ("claude-", "claude", 0),
            ("codex-real-", "codex", 0),
            ("codex-", "codex", 0),
            ("opencode-real-", "opencode", 1),
            ("opencode-", "opencode", 0),
        ]
        .iter()
        .find_map(|(pre, agent, home)| name.strip_prefix(pre).map(|id| (*agent, id, *home)))
        .unwrap_or_else(|| panic!("{name}: which agent's?"));
        out.push((name.to_string(), agent, id.to_string(), home));
    }
    out.sort();
    assert_eq!(out.len(), 11, "every golden: {out:?}");
    out
}

fn pick(ctx: &Value) -> Value {
    serde_json::json!({
        "messages": ctx["messages"],
        "thinkingLevel": ctx["thinkingLevel"],
        "model": ctx["model"],
    })
}

#[test]
fn context_of_each_golden_source_is_pi_152s_context_of_its_import() {
    let (a, b) = homes();
    let before = [sources(a.path()), sources(b.path())];
    for (name, _, id, home) in golden_sessions() {
        let home = [a.path(), b.path()][home];
        let want: Value = serde_json::from_slice(
            &std::fs::read(goldens().join(format!("expected/{name}.pi.json"))).unwrap(),
        )
        .unwrap();
        let (out, err) = ok(home, &["context", &id]);
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(pick(&got), pick(&want["context"]), "{name}");
        // Said once: another agent's, read in memory, and how to import it.
        assert_eq!(
            err.matches("is another agent's, read in memory").count(),
            1,
            "{name}: {err}"
        );
        assert!(err.contains("arbor import "), "{name}: {err}");
    }
    assert_eq!(
        sources(a.path()),
        before[0],
        "not a byte or an mtime changed"
    );
    assert_eq!(
        sources(b.path()),
        before[1],
        "not a byte or an mtime changed"
    );
}

/// The import's file of each source session id (`arbor import AGENT --all --json`, children
/// included).
fn imports(home: &Path, agent: &str, out: &mut BTreeMap<String, (String, String)>) {
    fn walk(v: &Value, out: &mut BTreeMap<String, (String, String)>) {
        for s in v.as_array().into_iter().flatten() {
            out.insert(
                s["sourceId"].as_str().unwrap().to_string(),
                (
                    s["file"].as_str().unwrap().to_string(),
                    s["source"].as_str().unwrap().to_string(),
                ),
            );
            walk(&s["children"], out);
        }
    }
    let (json, _) = ok(home, &["import", agent, "--all", "--json"]);
    walk(&serde_json::from_str(&json).unwrap(), out);
}

/// `text` with the imported file's path, name and session id as the source's: the only
/// things that differ between a source read in memory and its import (the import's header
/// has a new session id and its own file).
fn same_names(text: &str, file: &str, source: &str, id: &str) -> String {
    let name = |p: &str| {
        Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let file_id = name(file)
        .trim_end_matches(".jsonl")
        .rsplit('_')
        .next()
        .unwrap_or_default()
        .to_string();
    text.replace(file, "SESSION")
        .replace(source, "SESSION")
        .replace(&name(file), "SESSION")
        .replace(&name(source), "SESSION")
        .replace(&file_id, id)
}

#[test]
fn reading_a_source_prints_what_reading_its_import_prints() {
    let (a, b) = homes();
    let commands: &[&[&str]] = &[
        &["show", "--no-pager"],
        &["show", "--json"],
        &["show", "--context", "--no-pager"],
        &["context"],
        &["context", "--llm"],
        &["tree", "--no-pager"],
        &["tree", "--json"],
        &["tree", "--full", "--no-pager"],
        &["export", "--format", "md"],
        &["export", "--format", "html"],
        &["export", "--format", "json"],
    ];
    let goldens = golden_sessions();
    // What each command prints on each source, before anything is imported.
    let mut read = BTreeMap::new();
    let before = [sources(a.path()), sources(b.path())];
    for (name, _, id, home) in &goldens {
        let home = [a.path(), b.path()][*home];
        for c in commands {
            let args: Vec<&str> = c.iter().copied().chain([id.as_str()]).collect();
            read.insert((name.clone(), c.join(" ")), ok(home, &args).0);
        }
    }
    assert_eq!(
        sources(a.path()),
        before[0],
        "not a byte or an mtime changed"
    );
    assert_eq!(
        sources(b.path()),
        before[1],
        "not a byte or an mtime changed"
    );
    let mut files = [BTreeMap::new(), BTreeMap::new()];
    for agent in ["claude", "codex", "opencode"] {
        imports(a.path(), agent, &mut files[0]);
    }
    imports(b.path(), "opencode", &mut files[1]);
    for (name, _, id, home) in &goldens {
        let (file, source) = files[*home]
            .get(id)
            .unwrap_or_else(|| panic!("{name}: not imported"));
        let h = [a.path(), b.path()][*home];
        for c in commands {
            let args: Vec<&str> = c.iter().copied().chain([file.as_str()]).collect();
            let (of_import, _) = ok(h, &args);
            let of_source = &read[&(name.clone(), c.join(" "))];
            assert_eq!(
                same_names(of_source, file, source, id),
                same_names(&of_import, file, source, id),
                "{name}: arbor {}",
                c.join(" ")
            );
        }
    }
}

#[test]
fn write_commands_refuse_another_agents_session_and_write_nothing() {
    let (a, _b) = homes();
    let h = a.path();
    let before = sources(h);
    let claude = "0b7c3f0e-1111-4222-8333-444455556666";
    for args in [
        vec!["name", claude, "renamed"],
        vec!["fork", claude],
        vec!["append", claude, "hi"],
        vec!["rm", claude],
        vec!["check", "--repair", claude],
        vec!["name", "ses_01main", "renamed"],
    ] {
        let o = run(h, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "arbor {args:?} must fail: {err}");
        assert!(!err.contains("read in memory"), "arbor {args:?}: {err}");
        assert!(
            err.contains("another agent's") && err.contains("To continue it in pi: arbor import"),
            "arbor {args:?}: {err}"
        );
    }
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
    assert!(!h.join(".pi").exists(), "nothing imported");
}

#[test]
fn a_malformed_source_is_an_error_naming_its_file_and_line() {
    let (a, _b) = homes();
    let h = a.path();
    let bad = h.join(".claude/projects/-work-app/deadbeef-0000-4000-8000-000000000000.jsonl");
    std::fs::write(&bad, "garbage\n{\"type\":\"user\"\n").unwrap();
    let before = sources(h);
    for cmd in ["show", "context", "tree", "export"] {
        let o = run(h, &[cmd, bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "arbor {cmd}: {err}");
        assert!(
            err.contains(&format!("{}: Claude Code's session file", bad.display()))
                && err.contains("line 1: not JSON"),
            "arbor {cmd}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // A source with a bad line among good ones is read, the line named.
    let (_, err) = ok(h, &["show", "--no-pager", "0b7c3f0e"]);
    assert!(
        err.contains("0b7c3f0e-1111-4222-8333-444455556666.jsonl:28: skipped: not JSON"),
        "{err}"
    );
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
}

/// `arbor mcp --all FLAGS` over stdio on `home`: each request's response, by order.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(home: &Path, flags: &[&str]) -> Mcp {
        use std::process::Stdio;
        let mut args = vec!["mcp", "--all"];
        args.extend_from_slice(flags);
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(&args)
            .current_dir(home)
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("ARBOR_CATALOG", home.join("catalog.db"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CONFIG_DIR")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn arbor mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = m.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        m.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }
    fn send(&mut self, v: &Value) {
        use std::io::Write;
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
        self.stdin.flush().unwrap();
    }
    fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        let id = self.next;
        self.next += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == Some(&serde_json::json!(id)) {
                return v;
            }
        }
    }
    /// A tool call's result as it is.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let v = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        v.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool}: a protocol error: {v}"))
    }
    /// A tool call's structured answer (it must not be a tool error).
    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_ne!(r["isError"], serde_json::json!(true), "{tool} {args}: {r}");
        r["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn arbor_mcp_reads_another_agents_session_as_the_cli_does() {
    use serde_json::json;
    let (a, b) = homes();
    let before = [sources(a.path()), sources(b.path())];
    let mut checked = 0;
    for (name, _, id, home) in golden_sessions() {
        let h = [a.path(), b.path()][home];
        let mut m = Mcp::start(h, &["--no-redact"]);
        // get_context: what `arbor context` prints (pi 1.5.2's context of the import).
        let want: Value = serde_json::from_str(&ok(h, &["context", &id]).0).unwrap();
        let got = m.ok(
            "get_context",
            json!({"session": id, "budget_tokens": 1_000_000, "budget": 200_000, "images": true}),
        );
        assert_eq!(got["omitted_messages"], json!(0), "{name}");
        assert_eq!(got["context"], want, "{name}");
        // get_session, get_tree, get_messages, get_tool_calls, get_file_edits answer.
        let s = m.ok("get_session", json!({"session": id}));
        assert_eq!(s["id"], json!(id), "{name}: {s}");
        let agent = name.split('-').next().unwrap();
        assert_eq!(s["agent"], json!(agent), "{name}: {s}");
        // get_tree's nodes are `arbor tree --full`'s lines, in order (ids are 12 hex digits).
        let tree = m.ok(
            "get_tree",
            json!({"session": id, "full": true, "limit": 1000, "budget": 200_000}),
        );
        let got: Vec<String> = tree["nodes"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {tree}"))
            .iter()
            .filter_map(|n| n["entry_id"].as_str().map(str::to_string))
            .collect();
        let text = ok(h, &["tree", "--full", "--no-pager", &id]).0;
        let want: Vec<String> = text
            .lines()
            .filter_map(|l| {
                let at = l.find(['●', '○'])?;
                l[at..].split(' ').nth(1).map(str::to_string)
            })
            .collect();
        assert!(!got.is_empty(), "{name}: {tree}");
        assert_eq!(got, want, "{name}");
        let msgs = m.ok(
            "get_messages",
            json!({"session": id, "limit": 1000, "budget": 200_000}),
        );
        assert!(
            msgs["messages"].as_array().is_some_and(|v| !v.is_empty()),
            "{name}: {msgs}"
        );
        m.ok("get_tool_calls", json!({"session": id}));
        // get_usage of the session: `arbor stats --json SESSION`'s total.
        let usage = m.ok("get_usage", json!({"session": id}));
        let stats: Value = serde_json::from_str(&ok(h, &["stats", "--json", &id]).0).unwrap();
        assert!(usage["total"]["turns"].is_u64(), "{name}: {usage}");
        assert_eq!(
            usage["total"]["turns"], stats["total"]["turns"],
            "{name}: {usage} vs {stats}"
        );
        m.ok("get_file_edits", json!({"session": id}));
        // The resource: the Markdown `arbor export` writes.
        let r = m.request(
            "resources/read",
            json!({"uri": format!("arbor://session/{id}")}),
        );
        let text = r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: {r}"));
        let md = ok(h, &["export", "--format", "md", "--no-redact", &id]).0;
        assert_eq!(text, md, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 11);
    assert_eq!(
        sources(a.path()),
        before[0],
        "not a byte or an mtime changed"
    );
    assert_eq!(
        sources(b.path()),
        before[1],
        "not a byte or an mtime changed"
    );
}

#[test]
fn arbor_mcp_write_tools_refuse_another_agents_session_naming_arbor_import() {
    use serde_json::json;
    let (a, _b) = homes();
    let h = a.path();
    let before = sources(h);
    let mut m = Mcp::start(h, &["--allow-writes"]);
    let id = "0b7c3f0e-1111-4222-8333-444455556666";
    for (tool, args) in [
        ("name_session", json!({"session": id, "name": "n"})),
        (
            "label_entry",
            json!({"session": id, "entry_id": "d92ddce82087", "label": "l"}),
        ),
        ("fork_session", json!({"session": "ses_01main"})),
    ] {
        let r = m.call(tool, args);
        assert_eq!(r["isError"], json!(true), "{tool}: {r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("arbor import"), "{tool}: {text}");
    }
    // A source outside the served roots is not served, even by its path.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join(format!("{id}.jsonl"));
    std::fs::copy(
        h.join(format!(".claude/projects/-work-app/{id}.jsonl")),
        &copy,
    )
    .unwrap();
    let r = m.call("get_context", json!({"session": copy.to_str().unwrap()}));
    assert_eq!(r["isError"], json!(true), "{r}");
    drop(m);
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
    assert!(!h.join(".pi").exists(), "nothing written for pi");
}

#[test]
fn secrets_and_stats_of_another_agents_session_and_no_secret_on_stderr() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join(".claude/projects/-w");
    std::fs::create_dir_all(&dir).unwrap();
    let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
    let id = "5ec2e7aa-0000-4000-8000-000000000001";
    let src = dir.join(format!("{id}.jsonl"));
    std::fs::write(
        &src,
        format!(
            concat!(
                r#"{{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"{id}","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"my token is {token}"}}}}"#,
                "\n",
                r#"{{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"{id}","timestamp":"2026-01-01T00:00:01Z","message":{{"id":"m1","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"noted"}}],"usage":{{"input_tokens":7,"output_tokens":3}}}}}}"#,
                "\n"
            ),
            id = id,
            token = token
        ),
    )
    .unwrap();
    let before = sources(h);
    // By id prefix and by path: found, its entry named, the line said to be the import's.
    for arg in ["5ec2e7aa", src.to_str().unwrap()] {
        let o = run(h, &["secrets", "--json", arg]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        let found: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(found[0]["kind"], "github-token", "{found}");
        assert_eq!(found[0]["readInMemory"], true, "{found}");
        assert_eq!(found[0]["path"], src.to_str().unwrap(), "{found}");
        assert!(!err.contains(token), "a secret on stderr: {err}");
    }
    let (md, err) = ok(h, &["export", "--format", "md", "5ec2e7aa"]);
    assert!(!md.contains(token) && !err.contains(token), "{err}");
    assert!(err.contains("[REDACTED:github-token]"), "{err}");
    // stats SESSION: the reply's tokens.
    let (json, _) = ok(h, &["stats", "--json", "5ec2e7aa"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["total"]["currentPath"]["input"], 7, "{v}");
    assert_eq!(v["total"]["currentPath"]["output"], 3, "{v}");
    assert_eq!(v["sessions"], 1, "{v}");
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
}

#[test]
fn a_prefix_of_several_pi_sessions_stays_ambiguous_though_it_names_a_foreign_one() {
    let (a, _b) = homes();
    let h = a.path();
    let dir = h.join(".pi/agent/sessions/--work-app--");
    std::fs::create_dir_all(&dir).unwrap();
    for id in [
        "0b7c3f0e-aaaa-4bbb-8ccc-000000000001",
        "0b7c3f0e-aaaa-4bbb-8ccc-000000000002",
    ] {
        std::fs::write(
            dir.join(format!("2026-11-20T10-00-00-000Z_{id}.jsonl")),
            format!(
                concat!(
                    r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-11-20T10:00:00.000Z","cwd":"/work/app"}}"#,
                    "\n",
                    r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-20T10:00:01.000Z","message":{{"role":"user","content":"hi","timestamp":1}}}}"#,
                    "\n"
                ),
                id = id
            ),
        )
        .unwrap();
    }
    // The Claude Code golden's id starts the same: the pi sessions' ambiguity is said.
    let o = run(h, &["show", "--no-pager", "0b7c3f0e"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("matches 2 sessions"), "{err}");
    assert!(!err.contains("read in memory"), "{err}");
    // Its whole id is the Claude Code session's.
    let (_, err) = ok(
        h,
        &["show", "--no-pager", "0b7c3f0e-1111-4222-8333-444455556666"],
    );
    assert!(err.contains("read in memory"), "{err}");
}
