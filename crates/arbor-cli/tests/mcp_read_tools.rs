//! `arbor mcp`'s reading and writing tools (issue 25, h-mcpread), driven as a client drives
//! them: the real binary over stdio, JSON-RPC lines in and out, on the goldens and the demo
//! sessions laid out in a private HOME as pi lays them out. Each answer is checked against
//! the `arbor` command's for the same question: `get_context` against `arbor context`,
//! `get_tree` against `arbor tree`, `get_messages` walked page by page against `arbor show
//! --json`, `fork_session` against `arbor fork`; then budgets and cursors, hostile
//! arguments, and the write tools refused without `--allow-writes`.
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    /// A HOME whose pi session directory for `/tmp/proj` holds `files`.
    fn with(files: &[PathBuf]) -> Home {
        let h = Home {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        std::fs::create_dir_all(h.sessions()).expect("mkdir");
        for f in files {
            let name = f.file_name().expect("name");
            std::fs::copy(f, h.sessions().join(name)).expect("copy");
        }
        h
    }
    fn sessions(&self) -> PathBuf {
        self.dir.path().join(".pi/agent/sessions/--tmp-proj--")
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", self.dir.path())
            .env("ARBOR_CATALOG", self.dir.path().join("catalog.db"))
            .env("XDG_DATA_HOME", self.dir.path().join(".local/share"))
            .env("COLUMNS", "200")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CONFIG_DIR")
            .env_remove("ARBOR_PI")
            .env_remove("ARBOR_OMP")
            .current_dir(self.dir.path());
        c
    }
    /// `arbor ARGS`'s stdout (it must succeed).
    fn arbor(&self, args: &[&str]) -> Vec<u8> {
        let o = self.cmd(args).output().expect("run arbor");
        assert!(
            o.status.success(),
            "arbor {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    }
    fn server(&self, flags: &[&str]) -> Client {
        let mut args = vec!["mcp", "--all"];
        args.extend_from_slice(flags);
        let mut child = self
            .cmd(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn arbor mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        c.notify("notifications/initialized");
        c
    }
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
    }
    fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }
    /// The response to a request (notifications before it skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed stdout");
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }
    /// A tool call's result (`isError` false: its structured content).
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call_raw(tool, args.clone());
        assert_ne!(r["isError"], json!(true), "{tool} {args}: {r}");
        r["structuredContent"].clone()
    }
    /// A tool call's result as it is (an error: `isError` true and its text).
    fn call_raw(&mut self, tool: &str, args: Value) -> Value {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        v.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool} {args}: a protocol error: {v}"))
    }
    /// The text of a tool error.
    fn error(&mut self, tool: &str, args: Value) -> String {
        let r = self.call_raw(tool, args.clone());
        assert_eq!(r["isError"], json!(true), "{tool} {args} did not fail: {r}");
        r["content"][0]["text"].as_str().unwrap_or("").to_string()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The golden sessions of `dir` (pi's, omp's) under 2 MB, by name.
fn goldens(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("goldens").join(dir))
        .expect("goldens")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() < 2 << 20)
        })
        .collect();
    v.sort();
    v
}

fn demo() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("demo/sessions"))
        .expect("demo")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    v
}

/// The copies in `home` of `files`, as strings.
fn copies(home: &Home, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| {
            home.sessions()
                .join(f.file_name().expect("name"))
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// `get_context` with room for everything equals `arbor context`'s JSON, for every golden
/// session both tools' rules read (pi's and omp's) and the demo sessions; a smaller budget
/// keeps the newest messages of the same context.
#[test]
fn get_context_is_arbor_context() {
    let mut files = goldens("pi");
    files.extend(goldens("omp"));
    files.extend(demo());
    let home = Home::with(&files);
    let mut c = home.server(&["--no-redact"]);
    let mut compared = 0;
    for f in copies(&home, &files) {
        let out = home.cmd(&["context", &f]).output().expect("run");
        if !out.status.success() {
            continue; // not a session arbor reads (a golden of a refused file)
        }
        // serde_json cannot hold a lone surrogate, which the context may spell: such files
        // are compared by the library's own tests (to_serde reads them lossily).
        let Ok(want) = serde_json::from_slice::<Value>(&out.stdout) else {
            continue;
        };
        let got = c.call(
            "get_context",
            json!({"session": f, "budget_tokens": 1_000_000, "budget": 200_000, "images": true}),
        );
        if got["omitted_messages"] != json!(0) {
            continue; // larger than one answer: the budget test below covers the cut
        }
        assert_eq!(got["context"], want, "{f}");
        compared += 1;
        // The newest part: the last messages of the same array.
        let all = want["messages"].as_array().expect("messages").clone();
        if all.len() >= 3 {
            let small = c.call(
                "get_context",
                json!({"session": f, "budget_tokens": 1, "budget": 200_000, "images": true}),
            );
            let kept = small["context"]["messages"]
                .as_array()
                .expect("messages")
                .clone();
            assert_eq!(
                small["omitted_messages"].as_u64().expect("n") as usize + kept.len(),
                all.len(),
                "{f}"
            );
            assert_eq!(kept[..], all[all.len() - kept.len()..], "{f}");
        }
    }
    assert!(compared >= 40, "only {compared} sessions compared");
}

/// The ids of `arbor tree`'s lines in order, a fold as `None`.
fn cli_tree_ids(text: &str) -> Vec<Option<String>> {
    text.lines()
        .filter_map(|l| {
            if l.contains('┊') {
                return Some(None);
            }
            let at = l.find(['●', '○'])?;
            let rest = &l[at..];
            let id = rest.split(' ').nth(1)?;
            Some(Some(id.to_string()))
        })
        .collect()
}

/// `get_tree`'s nodes are `arbor tree`'s lines (folded and `--full`), in order, for every
/// golden of pi and omp and the demo sessions.
#[test]
fn get_tree_is_arbor_tree() {
    let mut files = goldens("pi");
    files.extend(goldens("omp"));
    files.extend(demo());
    let home = Home::with(&files);
    let mut c = home.server(&["--no-redact"]);
    let mut compared = 0;
    for f in copies(&home, &files) {
        let out = home.cmd(&["tree", &f]).output().expect("run");
        if !out.status.success() {
            continue;
        }
        for full in [false, true] {
            let cli = if full {
                home.arbor(&["tree", "--full", &f])
            } else {
                out.stdout.clone()
            };
            let want = cli_tree_ids(&String::from_utf8_lossy(&cli));
            let mut got: Vec<Option<String>> = Vec::new();
            let mut cursor = Value::Null;
            loop {
                let page = c.call(
                    "get_tree",
                    json!({"session": f, "full": full, "limit": 1000, "budget": 200_000, "cursor": cursor}),
                );
                for n in page["nodes"].as_array().expect("nodes") {
                    got.push(n["entry_id"].as_str().map(str::to_string));
                }
                match page.get("next_cursor") {
                    Some(next) => cursor = next.clone(),
                    None => break,
                }
            }
            // A line's id is cut where an id holds a space; the lines are the same.
            assert_eq!(got.len(), want.len(), "{f} full={full}");
            for (g, w) in got.iter().zip(&want) {
                match (g, w) {
                    (Some(g), Some(w)) => assert!(g.starts_with(w.as_str()), "{f}: {g} {w}"),
                    (None, None) => {}
                    _ => panic!("{f} full={full}: {got:?} vs {want:?}"),
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} trees compared");
}

/// Walking `get_messages` page by page (older, then newer) gives every message of the path
/// once, in `arbor show --json`'s order, for the demo sessions and every pi golden whose
/// entries have ids.
#[test]
fn get_messages_walks_arbor_show() {
    let mut files = demo();
    files.extend(goldens("pi"));
    let home = Home::with(&files);
    let mut c = home.server(&[]);
    let mut walked = 0;
    for f in copies(&home, &files) {
        let out = home.cmd(&["show", "--json", &f]).output().expect("run");
        let Ok(show) = serde_json::from_slice::<Value>(&out.stdout) else {
            continue; // not a session arbor reads, or text serde_json cannot hold
        };
        let want: Vec<Option<String>> = show["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| {
                matches!(
                    e["entry"]["type"].as_str(),
                    Some("message" | "custom_message" | "branch_summary" | "compaction")
                )
            })
            .map(|e| e["entry"]["id"].as_str().map(str::to_string))
            .collect();
        // Entries without a string id (pi keeps them) are named otherwise by each.
        let Some(want) = want.into_iter().collect::<Option<Vec<String>>>() else {
            continue;
        };
        if want.is_empty() {
            continue;
        }
        walked += 1;
        for direction in ["older", "newer"] {
            let mut got: Vec<String> = Vec::new();
            let mut cursor = Value::Null;
            let mut pages = 0;
            loop {
                let page = c.call(
                    "get_messages",
                    json!({"session": f, "direction": direction, "limit": 4, "cursor": cursor}),
                );
                pages += 1;
                assert_eq!(page["total"], json!(want.len()));
                let ids: Vec<String> = page["messages"]
                    .as_array()
                    .expect("messages")
                    .iter()
                    .map(|m| m["entry_id"].as_str().expect("id").to_string())
                    .collect();
                assert!(!ids.is_empty() && ids.len() <= 4);
                if direction == "older" {
                    got.splice(0..0, ids);
                } else {
                    got.extend(ids);
                }
                match page.get("next_cursor") {
                    Some(next) => cursor = next.clone(),
                    None => break,
                }
            }
            assert_eq!(got, want, "{f} {direction}");
            assert_eq!(pages, want.len().div_ceil(4), "{f} {direction}");
        }
    }
    assert!(walked >= 30, "only {walked} sessions walked");
}

/// Every item of `field` over the pages of `tool`'s answers (`next_cursor` passed back).
fn walk(c: &mut Client, tool: &str, args: Value, field: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut a = args.clone();
        a["cursor"] = cursor;
        let page = c.call(tool, a);
        out.extend(page[field].as_array().expect("items").iter().cloned());
        match page.get("next_cursor") {
            Some(next) => cursor = next.clone(),
            None => return out,
        }
    }
}

/// `get_tool_calls` lists every `toolCall` block of the file, and `get_file_edits` the
/// `edit`/`write` calls' paths, in one session and across the served ones.
#[test]
fn tool_calls_and_file_edits() {
    let files = demo();
    let home = Home::with(&files);
    let mut c = home.server(&[]);
    let mut edits_everywhere = 0;
    for (f, orig) in copies(&home, &files).iter().zip(&files) {
        let mut calls: Vec<(String, String)> = Vec::new();
        for line in std::fs::read_to_string(orig).expect("read").lines() {
            let v: Value = serde_json::from_str(line).expect("json");
            if let Some(blocks) = v["message"]["content"].as_array() {
                for b in blocks.iter().filter(|b| b["type"] == "toolCall") {
                    calls.push((
                        // A v1 file's entries have no ids: arbor gives them its migration's.
                        v["id"].as_str().unwrap_or("").to_string(),
                        b["name"].as_str().expect("name").to_string(),
                    ));
                }
            }
        }
        let mut got: Vec<(String, String)> = Vec::new();
        let mut cursor = Value::Null;
        loop {
            let page = c.call(
                "get_tool_calls",
                json!({"session": f, "limit": 7, "cursor": cursor}),
            );
            assert_eq!(page["total"], json!(calls.len()));
            for k in page["calls"].as_array().expect("calls") {
                got.push((
                    k["entry_id"].as_str().expect("id").to_string(),
                    k["name"].as_str().expect("name").to_string(),
                ));
            }
            match page.get("next_cursor") {
                Some(next) => cursor = next.clone(),
                None => break,
            }
        }
        assert_eq!(got.len(), calls.len(), "{f}");
        for (g, w) in got.iter().zip(&calls) {
            assert!(w.0.is_empty() || g.0 == w.0, "{f}: {g:?} {w:?}");
            assert_eq!(g.1, w.1, "{f}");
        }
        let edits = walk(&mut c, "get_file_edits", json!({"session": f}), "edits");
        let n = calls
            .iter()
            .filter(|(_, name)| name == "edit" || name == "write")
            .count();
        assert!(edits.len() >= n, "{f}: {} edits of {n} calls", edits.len());
        edits_everywhere += n;
    }
    assert!(edits_everywhere > 0);
    // Across the sessions, by a path's part: every edit of that path, and only those.
    let rows = walk(&mut c, "get_file_edits", json!({}), "edits");
    assert!(rows.len() >= edits_everywhere, "{}", rows.len());
    let one = rows[0]["path"].as_str().expect("path").to_string();
    let part = one.rsplit('/').next().expect("name").to_string();
    let some = walk(&mut c, "get_file_edits", json!({"path": part}), "edits");
    let want: Vec<&Value> = rows
        .iter()
        .filter(|r| r["path"].as_str().is_some_and(|p| p.contains(&part)))
        .collect();
    assert_eq!(some.iter().collect::<Vec<_>>(), want);
    let exact = walk(
        &mut c,
        "get_file_edits",
        json!({"path": one, "exact": true}),
        "edits",
    );
    assert!(!exact.is_empty() && exact.iter().all(|r| r["path"] == json!(one)));
}

/// Bad arguments are tool errors naming the problem, never a protocol error or a crash; the
/// server answers the next call.
#[test]
fn hostile_arguments_are_tool_errors() {
    let files = demo();
    let home = Home::with(&files);
    let f = copies(&home, &files)[1].clone();
    let mut c = home.server(&[]);
    let cases = [
        (
            "get_messages",
            json!({"session": f, "entry_id": "no-such-entry"}),
            "no-such-entry",
        ),
        (
            "get_messages",
            json!({"session": f, "offset": 1_000_000_000_000u64}),
            "offset",
        ),
        ("get_messages", json!({"session": f, "budget": 0}), "budget"),
        (
            "get_messages",
            json!({"session": f, "budget": 1_000_000_000_000u64}),
            "budget",
        ),
        (
            "get_messages",
            json!({"session": f, "limit": 1_000_000_000_000u64}),
            "limit",
        ),
        (
            "get_messages",
            json!({"session": f, "cursor": "c1.0.0"}),
            "cursor",
        ),
        (
            "get_context",
            json!({"session": f, "entry_id": "nope"}),
            "nope",
        ),
        (
            "get_context",
            json!({"session": f, "budget_tokens": 0}),
            "budget_tokens",
        ),
        (
            "get_context",
            json!({"session": f, "budget_tokens": 1_000_000_000_000u64}),
            "budget_tokens",
        ),
        ("get_tree", json!({"session": "/etc/passwd"}), "session"),
        ("get_tree", json!({"session": "no-such-session"}), "session"),
        (
            "get_tool_calls",
            json!({"session": f, "arguments_chars": 0}),
            "arguments_chars",
        ),
        (
            "get_file_edits",
            json!({"session": "../../../../etc/passwd"}),
            "session",
        ),
    ];
    for (tool, args, names) in cases {
        let text = c.error(tool, args.clone());
        assert!(text.contains(names), "{tool} {args}: {text}");
    }
    // Still serving.
    let ok = c.call("get_messages", json!({"session": f, "limit": 1}));
    assert_eq!(ok["messages"].as_array().expect("messages").len(), 1);
}

fn tool_names(c: &mut Client) -> Vec<String> {
    let list = c.request("tools/list", json!({}));
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect()
}

/// Without `--allow-writes` the write tools are not listed, and calling one is a tool error
/// that writes nothing; with it they write as the CLI writes.
#[test]
fn writes_only_with_allow_writes() {
    let files = demo();
    let home = Home::with(&files);
    let f = copies(&home, &files)[1].clone();
    let before = std::fs::read(&f).expect("read");
    let mut c = home.server(&[]);
    let names = tool_names(&mut c);
    for t in [
        "get_messages",
        "get_context",
        "get_tree",
        "get_tool_calls",
        "get_file_edits",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} not in {names:?}");
    }
    for (t, args) in [
        (
            "label_entry",
            json!({"session": f, "entry_id": "x", "label": "l"}),
        ),
        ("name_session", json!({"session": f, "name": "n"})),
        ("fork_session", json!({"session": f})),
    ] {
        assert!(!names.iter().any(|n| n == t), "{t} listed");
        let text = c.error(t, args);
        assert!(text.contains("--allow-writes"), "{text}");
    }
    drop(c);
    assert_eq!(std::fs::read(&f).expect("read"), before);
    let files_before = std::fs::read_dir(home.sessions()).expect("dir").count();
    assert_eq!(files_before, files.len());

    let mut c = home.server(&["--allow-writes"]);
    let names = tool_names(&mut c);
    for t in ["label_entry", "name_session", "fork_session"] {
        assert!(names.iter().any(|n| n == t), "{t} not listed");
    }
    // A label, then the tree shows it (the tool and the CLI).
    let tree = c.call("get_tree", json!({"session": f, "limit": 1000}));
    let target = tree["nodes"][1]["entry_id"]
        .as_str()
        .expect("id")
        .to_string();
    let l = c.call(
        "label_entry",
        json!({"session": f, "entry_id": target, "label": "walrus point"}),
    );
    assert_eq!(l["label"], json!("walrus point"));
    let cli = String::from_utf8(home.arbor(&["tree", &f])).expect("utf-8");
    assert!(cli.contains("[walrus point]"), "{cli}");
    let tree = c.call("get_tree", json!({"session": f, "limit": 1000}));
    assert!(tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .any(|n| n["label"] == json!("walrus point")));
    // Cleared.
    c.call("label_entry", json!({"session": f, "entry_id": target}));
    let cli = String::from_utf8(home.arbor(&["tree", &f])).expect("utf-8");
    assert!(!cli.contains("[walrus point]"), "{cli}");
    assert!(c
        .error(
            "label_entry",
            json!({"session": f, "entry_id": "nope", "label": "x"})
        )
        .contains("nope"));
    // A name, as `arbor show` reads it.
    c.call(
        "name_session",
        json!({"session": f, "name": "  the walrus session "}),
    );
    let show = String::from_utf8(home.arbor(&["show", "--no-pager", &f])).expect("utf-8");
    assert!(show.starts_with("# the walrus session\n"), "{show}");
    assert!(c
        .error("name_session", json!({"session": f, "name": " \u{feff} "}))
        .contains("empty"));
}

/// `fork_session` at an entry writes what `arbor fork --at` writes (every line but the new
/// header), names the command that resumes it, and a fork that fails leaves nothing.
#[test]
fn fork_session_is_arbor_fork() {
    let files = demo();
    let home = Home::with(&files);
    let f = copies(&home, &files)[1].clone();
    let mut c = home.server(&["--allow-writes"]);
    let w = c.call("get_messages", json!({"session": f, "limit": 3}));
    let at = w["messages"][0]["entry_id"]
        .as_str()
        .expect("id")
        .to_string();
    let got = c.call("fork_session", json!({"session": f, "entry_id": at}));
    let cli: Value =
        serde_json::from_slice(&home.arbor(&["fork", &f, "--at", &at, "--json"])).expect("json");
    let mine = std::fs::read_to_string(got["path"].as_str().expect("path")).expect("read");
    let theirs = std::fs::read_to_string(cli["path"].as_str().expect("path")).expect("read");
    let body = |s: &str| s.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(body(&mine), body(&theirs));
    assert_eq!(got["parent_session"], cli["parentSession"]);
    assert_eq!(
        got["resume_command"],
        json!(["pi", "--session", got["path"].as_str().expect("path")])
    );
    // The new session reads as the source up to `at`.
    let ctx = c.call(
        "get_context",
        json!({"session": got["path"], "budget": 200_000, "budget_tokens": 1_000_000}),
    );
    let src = c.call(
        "get_context",
        json!({"session": f, "entry_id": at, "budget": 200_000, "budget_tokens": 1_000_000}),
    );
    assert_eq!(ctx["context"]["messages"], src["context"]["messages"]);

    // A fork that cannot be written (the directory made immutable) fails and leaves the
    // directory as it was.
    let dir = home.sessions();
    let listing = || {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .expect("dir")
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        v.sort();
        v
    };
    let before = listing();
    /// `chattr -i` on drop: a failing assertion does not leave an undeletable directory.
    struct Mutable<'a>(&'a Path);
    impl Drop for Mutable<'_> {
        fn drop(&mut self) {
            let _ = Command::new("chattr").arg("-i").arg(self.0).status();
        }
    }
    let immutable = Command::new("chattr").arg("+i").arg(&dir).status();
    let guard = Mutable(&dir);
    if !immutable.is_ok_and(|s| s.success()) {
        println!("skipped: the failing fork (chattr +i is not available here)");
        return;
    }
    let text = c.error("fork_session", json!({"session": f, "entry_id": at}));
    let text_whole = c.error("fork_session", json!({"session": f, "redact": true}));
    drop(guard);
    println!("the failing forks: {text} / {text_whole}");
    assert!(!text.is_empty() && !text_whole.is_empty());
    assert_eq!(listing(), before, "{text}");
}

/// A session whose messages are far larger than any answer (a 24 MB tool output, a tool call
/// writing 24 MB): every answer stays within its budget, says what it left out, and the
/// next page still comes.
#[test]
fn huge_messages_give_bounded_answers() {
    let home = Home::with(&[]);
    let big = "0123456789abcdef\n".repeat(24 << 20 >> 4);
    let lines = [
        json!({"type":"session","version":3,"id":"01a2031c-0000-7000-8000-00000000b16b","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/proj"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"write it","timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"write","arguments":{"path":"big.txt","content":big}}],"timestamp":2}}),
        json!({"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"write","content":[{"type":"text","text":big}],"isError":false,"timestamp":3}}),
        json!({"type":"message","id":"u2","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"thanks","timestamp":4}}),
    ];
    let f = home
        .sessions()
        .join("2026-01-01T00-00-00-000Z_01a2031c-0000-7000-8000-00000000b16b.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&f, text).expect("write");
    let f = f.to_string_lossy().into_owned();
    let mut c = home.server(&[]);
    let chars = |v: &Value| v.to_string().chars().count();
    for budget in [1_000u64, 5_000, 200_000] {
        for args in [
            json!({"session": f, "tool_output": true, "budget": budget}),
            json!({"session": f, "budget": budget}),
        ] {
            let r = c.call_raw("get_messages", args.clone());
            assert_ne!(r["isError"], json!(true), "{args}: {r}");
            // The structured answer and its text each within the budget (and their JSON).
            assert!(
                chars(&r["structuredContent"]) <= budget as usize + 200,
                "{args}"
            );
            assert!(
                r["content"][0]["text"]
                    .as_str()
                    .expect("text")
                    .chars()
                    .count()
                    <= budget as usize
            );
        }
        let r = c.call_raw("get_context", json!({"session": f, "budget": budget}));
        assert!(
            chars(&r["structuredContent"]) <= budget as usize + 200,
            "get_context {budget}: {} {}",
            chars(&r["structuredContent"]),
            r.to_string().chars().take(3000).collect::<String>()
        );
        let r = c.call_raw(
            "get_tool_calls",
            json!({"session": f, "budget": budget, "arguments_chars": 20000}),
        );
        assert!(chars(&r["structuredContent"]) <= budget as usize + 200);
    }
    // The tool output, asked for in full, is cut and says so; older pages still come.
    let w = c.call(
        "get_messages",
        json!({"session": f, "tool_output": true, "limit": 1, "offset": 2}),
    );
    let m = &w["messages"][0];
    assert_eq!(m["entry_id"], json!("r1"));
    assert_eq!(m["cut_from"], json!(big.chars().count()));
    let next = c.call(
        "get_messages",
        json!({"session": f, "tool_output": true, "limit": 1, "cursor": w["next_cursor"]}),
    );
    assert_eq!(next["messages"][0]["entry_id"], json!("a1"));
    // Folded, it is its size.
    let w = c.call(
        "get_messages",
        json!({"session": f, "limit": 1, "offset": 2}),
    );
    let t = w["messages"][0]["text"].as_str().expect("text");
    assert!(
        t.starts_with(&format!("[output: {} chars", big.chars().count())),
        "{t}"
    );
    // The context: the newest message fits, the tool output alone does not: left out and
    // counted.
    let ctx = c.call("get_context", json!({"session": f}));
    assert_eq!(ctx["context"]["messages"].as_array().expect("m").len(), 1);
    assert_eq!(ctx["omitted_messages"], json!(3));
    assert!(ctx["omitted_tokens_about"].as_u64().expect("n") > (2 * big.len() / 4) as u64);
}

/// A message nested 200,000 levels deep (pi reads such a line, and so does arbor:
/// `deep_nesting.rs`): every reader answers, and the server is still there. `get_context`
/// crashed the server with a stack overflow (the context read back into serde_json's
/// values recursively) before its values were cut at `agent::MAX_DEPTH` levels.
#[test]
fn deeply_nested_messages_do_not_crash_the_server() {
    let home = Home::with(&[]);
    let d = 200_000;
    let deep = format!("{}{}", "[".repeat(d), "]".repeat(d));
    let lines = [
        r#"{"type":"session","version":3,"id":"01a2031c-0000-7000-8000-0000000dee90","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/proj"}"#.to_string(),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"go","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c1","name":"edit","arguments":{{"path":"x","deep":{deep}}}}}],"timestamp":2}}}}"#),
        format!(r#"{{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"edit","content":[{{"type":"text","text":"ok"}}],"details":{deep},"isError":false,"timestamp":3}}}}"#),
    ];
    let f = home
        .sessions()
        .join("2026-01-01T00-00-00-000Z_01a2031c-0000-7000-8000-0000000dee90.jsonl");
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    let f = f.to_string_lossy().into_owned();
    let mut c = home.server(&[]);
    for (tool, args) in [
        ("get_messages", json!({"session": f, "tool_output": true})),
        (
            "get_context",
            json!({"session": f, "budget_tokens": 1_000_000}),
        ),
        ("get_tool_calls", json!({"session": f})),
        ("get_tree", json!({"session": f, "full": true})),
        ("get_file_edits", json!({"session": f})),
    ] {
        c.call(tool, args);
    }
    let ctx = c.call(
        "get_context",
        json!({"session": f, "budget_tokens": 1_000_000}),
    );
    let text = ctx["context"]["messages"][2]["details"].to_string();
    assert!(
        text.contains("nested deeper than"),
        "{}",
        &text[..text.len().min(300)]
    );
}
