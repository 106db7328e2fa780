//! `arbor mcp` driven by the real clients: the official MCP Python SDK (PyPI `mcp` 2.3.0,
//! `ClientSession` over stdio and streamable HTTP, through `tests/mcp_clients/driver.py`) and the
//! official MCP Inspector CLI (npm `@modelcontextprotocol/inspector-cli` 1.0.3, `--cli --method
//! ...`), on a private HOME laid out as pi and omp lay it out (the demo sessions, `goldens/stats`'
//! forks and costs, two omp sessions). Each tool's answer is compared with the `arbor` CLI's for
//! the same question: the same session ids, entry ids, counts and numbers. The official
//! conformance suite (npm `@modelcontextprotocol/conformance` 0.1.16) runs server-side against
//! `arbor mcp --http`, with its known failures, each explained, in
//! `tests/mcp_clients/conformance-baseline.yml`.
//!
//! The clients are installed, pinned, by `tools/mcp-clients.sh` (which `tools/test.sh` runs) into
//! `$ARBOR_MCP_CLIENTS` (default `target/mcp-clients`). A test whose client is missing fails,
//! naming the command that installs it: these tests never pass without running.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The read-only tools (issue 25), offered by every `arbor mcp`.
const READ_TOOLS: [&str; 9] = [
    "search_sessions",
    "list_sessions",
    "get_session",
    "get_messages",
    "get_context",
    "get_tree",
    "get_tool_calls",
    "get_file_edits",
    "get_usage",
];
/// The write tools, offered only with `--allow-writes`.
const WRITE_TOOLS: [&str; 3] = ["label_entry", "name_session", "fork_session"];

const INSTALL: &str = "tools/mcp-clients.sh (tools/test.sh runs it)";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The clients' directory: `$ARBOR_MCP_CLIENTS`, else `target/mcp-clients` of this repository.
fn clients() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("ARBOR_MCP_CLIENTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo().join("target/mcp-clients"));
        for b in ["node", "python", "mcp-inspector-cli", "mcp-conformance"] {
            assert!(
                dir.join("bin").join(b).exists(),
                "the MCP clients are not installed ({} is missing): run {INSTALL}, or set \
                 ARBOR_MCP_CLIENTS to where they are",
                dir.join("bin").join(b).display()
            );
        }
        dir
    })
}

fn client_bin(name: &str) -> PathBuf {
    clients().join("bin").join(name)
}

/// A private HOME: pi's agent directory with the demo sessions (`/work/project`, and pi's own v1
/// session) and `goldens/stats`' sessions (forks, costs), omp's with two generated omp sessions.
struct Home {
    _tmp: tempfile::TempDir,
    home: PathBuf,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let copy = |from: &Path, to: &Path| {
            std::fs::create_dir_all(to).expect("mkdir");
            std::fs::copy(from, to.join(from.file_name().expect("name"))).expect("copy");
        };
        let pi = home.join(".pi/agent/sessions");
        for dir in ["demo/sessions", "goldens/stats/sessions"] {
            let to = pi.join(if dir.starts_with("demo") {
                "--work-project--"
            } else {
                "--work-demo--"
            });
            for e in std::fs::read_dir(repo().join(dir)).expect("read_dir") {
                let p = e.expect("entry").path();
                if p.extension().is_some_and(|x| x == "jsonl") {
                    copy(&p, &to);
                }
            }
        }
        let omp = home.join(".omp/agent/sessions/--work-project--");
        for f in ["gen-seed21-n40.jsonl", "gen-seed25-n150.jsonl"] {
            copy(&repo().join("goldens/omp").join(f), &omp);
        }
        Home { _tmp: tmp, home }
    }

    /// A command with this HOME, its catalog and nothing of the caller's agent directories.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("ARBOR_CATALOG", self.home.join("catalog.db"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("NO_COLOR")
            .env(
                "PATH",
                std::env::join_paths(
                    std::iter::once(clients().join("bin")).chain(
                        std::env::var_os("PATH")
                            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                            .unwrap_or_default(),
                    ),
                )
                .expect("PATH"),
            );
        c
    }

    /// `arbor ARGS` (the CLI), which must succeed; its stdout.
    fn cli(&self, args: &[&str]) -> String {
        let o = self
            .command(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .output()
            .expect("run arbor");
        assert!(
            o.status.success(),
            "arbor {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).expect("utf-8")
    }

    fn cli_json(&self, args: &[&str]) -> Value {
        let out = self.cli(args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("arbor {args:?}: not JSON: {e}\n{out}"))
    }

    /// Runs the Python SDK driver with `plan` against `target` (["stdio", arbor, "mcp", ...] or
    /// ["http", URL]); its JSON report.
    fn python(&self, target: &[&str], plan: &Value) -> Value {
        let driver = repo().join("crates/arbor-cli/tests/mcp_clients/driver.py");
        let mut child = self
            .command(client_bin("python"))
            .arg(&driver)
            .args(target)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the Python SDK driver");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(plan.to_string().as_bytes())
            .expect("write the plan");
        let o = wait_output(child, Duration::from_secs(120), "the Python SDK driver");
        assert!(
            o.status.success(),
            "the Python SDK driver {target:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "the Python SDK driver printed no JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
    }

    /// Runs the Inspector CLI: `--cli TARGET... ARGS...`; its JSON answer (the method's result).
    fn inspector(&self, target: &[&str], args: &[&str]) -> Value {
        // inspector-cli 1.0.3 looks for its own package.json at "../package.json" relative to the
        // working directory (and imports it relative to its module): it must run in its build/.
        let cli = client_bin("mcp-inspector-cli");
        let build = std::fs::canonicalize(&cli)
            .expect("inspector-cli")
            .parent()
            .expect("build dir")
            .to_path_buf();
        let child = self
            .command(client_bin("node"))
            .current_dir(build)
            .arg(&cli)
            .arg("--cli")
            .args(target)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the Inspector CLI");
        let o = wait_output(child, Duration::from_secs(120), "the Inspector CLI");
        assert!(
            o.status.success(),
            "the Inspector CLI {target:?} {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "the Inspector CLI printed no JSON ({e}): {}",
                String::from_utf8_lossy(&o.stdout)
            )
        })
    }

    /// `arbor mcp --http 127.0.0.1:PORT EXTRA...`, running until dropped; waits until it
    /// accepts connections.
    fn http(&self, extra: &[&str]) -> HttpServer {
        let mut child = self
            .command(env!("CARGO_BIN_EXE_arbor"))
            .args(["mcp", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start arbor mcp --http");
        // The listening event: the server's line `arbor mcp: listening on http://ADDR/ ...`
        // on stderr (port 0: the system's free port, which the line names). A thread reads
        // stderr to its end, so the server never blocks on a full pipe.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let t0 = Instant::now();
        let mut said = String::new();
        let url = loop {
            let left = Duration::from_secs(30).saturating_sub(t0.elapsed());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on ").nth(1) {
                        let url = rest.split_whitespace().next().expect("a URL").to_string();
                        break format!("{}mcp", url);
                    }
                    said.push_str(&line);
                    said.push('\n');
                }
                Err(e) => {
                    let _ = child.kill();
                    let status = child.wait().expect("wait");
                    panic!("arbor mcp --http did not say it listens ({e:?}; {status}): {said}");
                }
            }
        };
        HttpServer { child, url }
    }
}

/// A running `arbor mcp --http`, killed and reaped when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` (its stdout and stderr piped) at most `limit`; kills it past that.
fn wait_output(child: Child, limit: Duration, what: &str) -> std::process::Output {
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.expect("wait"),
        Err(_) => {
            // SAFETY: kill(2) on the pid of our own child, which has not been reaped (the
            // waiting thread still waits for it).
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("{what} did not finish within {limit:?}");
        }
    }
}

fn stdio_target(extra: &[&str]) -> Vec<String> {
    let mut t = vec![
        "stdio".to_string(),
        env!("CARGO_BIN_EXE_arbor").to_string(),
        "mcp".to_string(),
    ];
    t.extend(extra.iter().map(|s| s.to_string()));
    t
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn tool_names(tools: &Value) -> Vec<String> {
    let mut names: Vec<String> = tools
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect();
    names.sort();
    names
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// What every listing of the tools must hold: the documented names, each with a description
/// that says what is redacted (and that `--no-redact` exists), an input schema and an output
/// schema (structured output).
fn check_tool_list(tools: &Value, expected: &[&str], client: &str) {
    assert_eq!(tool_names(tools), sorted(expected), "{client}: tools/list");
    for t in tools.as_array().expect("tools") {
        let name = t["name"].as_str().unwrap_or("?");
        let desc = t["description"].as_str().unwrap_or("");
        // The write tools serve no session text: they say what they write, and that they
        // exist only with --allow-writes.
        if WRITE_TOOLS.contains(&name) {
            assert!(desc.contains("--allow-writes"), "{client}: {name}: {desc}");
        } else {
            assert!(
                desc.contains("redact") && desc.contains("--no-redact"),
                "{client}: {name}'s description does not say that answers are redacted \
                 unless --no-redact: {desc}"
            );
        }
        assert_eq!(t["inputSchema"]["type"], "object", "{client}: {name}");
        assert_eq!(
            t["outputSchema"]["type"], "object",
            "{client}: {name} has no output schema"
        );
    }
}

#[test]
fn python_sdk_and_inspector_list_the_tools_over_stdio_and_http() {
    let h = Home::new();
    let plan = json!({"calls": []});
    let ro = h.python(&strs(&stdio_target(&["--all"])), &plan);
    check_tool_list(&ro["tools"], &READ_TOOLS, "Python SDK, stdio");
    assert_eq!(ro["server"]["name"], "arbor", "{ro}");
    let rw = h.python(&strs(&stdio_target(&["--allow-writes"])), &plan);
    let all: Vec<&str> = READ_TOOLS
        .iter()
        .chain(WRITE_TOOLS.iter())
        .copied()
        .collect();
    check_tool_list(&rw["tools"], &all, "Python SDK, stdio, --allow-writes");

    let server = h.http(&[]);
    let over_http = h.python(&["http", &server.url], &plan);
    check_tool_list(&over_http["tools"], &READ_TOOLS, "Python SDK, HTTP");

    let arbor = env!("CARGO_BIN_EXE_arbor");
    let listed = h.inspector(&[arbor, "mcp"], &["--method", "tools/list"]);
    check_tool_list(&listed["tools"], &READ_TOOLS, "Inspector CLI, stdio");
    let listed = h.inspector(
        &[&server.url],
        &["--transport", "http", "--method", "tools/list"],
    );
    check_tool_list(&listed["tools"], &READ_TOOLS, "Inspector CLI, HTTP");
}

/// The official conformance suite, server side, against `arbor mcp --http`: every scenario of
/// its active suite passes but those in `tests/mcp_clients/conformance-baseline.yml`, each of
/// which the file explains (most test the reference "everything" server's own tools and prompts,
/// which arbor does not have). The suite fails on an unexpected failure and on a baseline entry
/// that passes (a stale one).
#[test]
fn the_conformance_suite_passes_against_arbor_mcp_over_http() {
    let h = Home::new();
    let server = h.http(&[]);
    let results = tempfile::tempdir().expect("tempdir");
    let baseline = repo().join("crates/arbor-cli/tests/mcp_clients/conformance-baseline.yml");
    let child = h
        .command(client_bin("node"))
        .arg(client_bin("mcp-conformance"))
        .args(["server", "--url", &server.url, "--expected-failures"])
        .arg(&baseline)
        .arg("-o")
        .arg(results.path())
        .current_dir(results.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the conformance suite");
    let o = wait_output(child, Duration::from_secs(300), "the conformance suite");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{report}");
    assert!(
        o.status.success(),
        "the conformance suite found failures not in {}: {report}",
        baseline.display()
    );
}

/// The structured answers of one call, every page (the driver follows `next_cursor`).
fn pages<'a>(report: &'a Value, i: usize, client: &str) -> Vec<&'a Value> {
    let call = &report["calls"][i];
    call["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| {
            assert!(
                p["client_error"].is_null() && p["isError"] == false,
                "{client}: {} {}: {p}",
                call["tool"],
                call["arguments"]
            );
            &p["structured"]
        })
        .collect()
}

/// One call's tool error (`isError: true`) and its text.
fn tool_error(report: &Value, i: usize, client: &str) -> String {
    let call = &report["calls"][i];
    let p = &call["pages"][0];
    assert!(
        p["client_error"].is_null() && p["isError"] == true,
        "{client}: {} {} should be a tool error (isError), not a crash or an answer: {p}",
        call["tool"],
        call["arguments"]
    );
    p["text"].as_str().expect("text").to_string()
}

/// The questions each client asks, in this order (`pages`: how many pages the Python driver
/// follows). Their answers are checked against the CLI's by [`check_against_cli`].
fn plan() -> Value {
    json!({"calls": [
        {"tool": "list_sessions", "arguments": {"limit": 4}, "pages": 10},
        {"tool": "search_sessions", "arguments": {"query": "refactor", "limit": 20}, "pages": 20},
        {"tool": "search_sessions", "arguments": {"query": "refactor", "role": ["user"]}, "pages": 20},
        {"tool": "list_sessions", "arguments": {"limit": 100000}},
        {"tool": "get_session", "arguments": {"session": "no-such-session"}},
        {"tool": "get_session", "arguments": {"session": "/etc/passwd"}},
        {"tool": "get_session", "arguments": {"session": "0195a000-0000-7000-8000-00000000000c"}},
        {"tool": "get_usage", "arguments": {}},
        {"tool": "get_usage", "arguments": {"by": "model"}},
        {"tool": "get_usage", "arguments": {"by": "day", "since": "2026-03-03"}},
        {"tool": "get_session", "arguments": {"session": "01a2031c-aa"}},
    ]})
}

/// `arbor ls --all --json`'s session ids, in its order.
fn ls_ids(h: &Home) -> Vec<String> {
    h.cli_json(&["ls", "--all", "--json"])
        .as_array()
        .expect("ls --json")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_string())
        .collect()
}

/// The hits of `arbor search --all --json ARGS`: (session id, entry id, role, on the current
/// branch), in its order.
fn cli_hits(h: &Home, args: &[&str]) -> Vec<(String, String, String, bool)> {
    let mut a = vec!["search", "--all", "--json", "--limit", "1000"];
    a.extend_from_slice(args);
    let v = h.cli_json(&a);
    v["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|x| {
            (
                x["sessionId"].as_str().expect("sessionId").to_string(),
                x["entryId"].as_str().expect("entryId").to_string(),
                x["role"].as_str().expect("role").to_string(),
                x["onCurrentBranch"].as_bool().expect("onCurrentBranch"),
            )
        })
        .collect()
}

fn mcp_hits(answers: &[&Value]) -> Vec<(String, String, String, bool)> {
    answers
        .iter()
        .flat_map(|a| a["hits"].as_array().expect("hits").iter())
        .map(|x| {
            (
                x["session"].as_str().expect("session").to_string(),
                x["entry_id"].as_str().expect("entry_id").to_string(),
                x["role"].as_str().expect("role").to_string(),
                x["on_current_branch"].as_bool().expect("on_current_branch"),
            )
        })
        .collect()
}

/// Each answer of [`plan`] (from `report`, the Python driver's, or the Inspector's in the same
/// shape) against the CLI's answer to the same question.
fn check_against_cli(h: &Home, report: &Value, client: &str) {
    // list_sessions, every page (limit 4: three pages of ten sessions): the ids of `ls`.
    let listed: Vec<String> = pages(report, 0, client)
        .iter()
        .flat_map(|a| a["sessions"].as_array().expect("sessions").iter())
        .map(|s| s["id"].as_str().expect("id").to_string())
        .collect();
    let ls = ls_ids(h);
    let mut a = listed.clone();
    let mut b = ls.clone();
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "{client}: list_sessions lists the sessions ls --all lists"
    );
    assert_eq!(
        pages(report, 0, client)[0]["total"],
        json!(ls.len()),
        "{client}: list_sessions' total"
    );
    // pi's sessions, row by row: the id, message count and last activity of `ls --json`
    // (omp's directory lists by omp's rules there: see list_sessions_orders_the_sessions_as_ls_does).
    let ls_rows = h.cli_json(&["ls", "--all", "--json"]);
    let mut compared = 0;
    for row in pages(report, 0, client)
        .iter()
        .flat_map(|a| a["sessions"].as_array().expect("sessions").iter())
        .filter(|r| {
            r["path"]
                .as_str()
                .is_some_and(|p| p.contains("/.pi/agent/"))
        })
    {
        let cli = ls_rows
            .as_array()
            .expect("ls")
            .iter()
            .find(|s| s["path"] == row["path"])
            .expect("the session in ls --json");
        assert_eq!(row["message_count"], cli["messageCount"], "{client}: {row}");
        assert_eq!(row["modified"], cli["modified"], "{client}: {row}");
        assert_eq!(row["id"], cli["id"], "{client}: {row}");
        compared += 1;
    }
    assert_eq!(compared, 8, "{client}: pi's eight sessions compared");
    // search_sessions, every page: the hits of `arbor search`, in its order.
    let cli = cli_hits(h, &["refactor"]);
    assert!(cli.len() > 20, "the question has more than one page");
    assert_eq!(
        mcp_hits(&pages(report, 1, client)),
        cli,
        "{client}: search_sessions refactor"
    );
    assert_eq!(
        pages(report, 1, client)[0]["matches"],
        json!(cli.len()),
        "{client}: search_sessions' count of matches"
    );
    assert_eq!(
        mcp_hits(&pages(report, 2, client)),
        cli_hits(h, &["refactor", "--role", "user"]),
        "{client}: search_sessions refactor, role user"
    );
    // Hostile arguments are tool errors that name the problem.
    let e = tool_error(report, 3, client);
    assert!(e.contains("limit") && e.contains("100000"), "{client}: {e}");
    let e = tool_error(report, 4, client);
    assert!(e.contains("no-such-session"), "{client}: {e}");
    let e = tool_error(report, 5, client);
    assert!(e.contains("/etc/passwd"), "{client}: {e}");
    // get_session: the overview's numbers are `arbor stats SESSION`'s total, its leaf and
    // entries `arbor tree --json`'s.
    let fork = "0195a000-0000-7000-8000-00000000000c";
    let overview = pages(report, 6, client)[0];
    assert_eq!(overview["id"], fork, "{client}");
    assert_eq!(
        snake(&overview["usage"]),
        snake(&h.cli_json(&["stats", "--json", fork])["total"]),
        "{client}: get_session's usage against arbor stats --json SESSION"
    );
    for (i, session) in [(6, fork), (10, "01a2031c-aa")] {
        let overview = pages(report, i, client)[0];
        let tree = h.cli_json(&["tree", "--json", session]);
        assert_eq!(
            overview["leaf_id"], tree["leaf"],
            "{client}: {session}'s leaf"
        );
        assert_eq!(
            overview["entries"],
            json!(tree["nodes"].as_array().expect("nodes").len()),
            "{client}: {session}'s entries against tree --json's nodes"
        );
        let labels: Vec<&Value> = tree["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .filter(|n| n["label"].is_string())
            .collect();
        assert_eq!(
            overview["labels"].as_array().expect("labels").len(),
            labels.len(),
            "{client}: {session}'s labels against tree --json's"
        );
    }
    // get_usage: `arbor stats --all --json` with the same grouping, row by row.
    for (i, args) in [
        (7, vec![]),
        (8, vec!["--by", "model"]),
        (9, vec!["--by", "day", "--since", "2026-03-03"]),
    ] {
        let mut a = vec!["stats", "--all", "--json"];
        a.extend(args.iter().copied());
        let cli = snake(&h.cli_json(&a));
        let mcp = snake(pages(report, i, client)[0]);
        for key in ["by", "sessions", "fork_copies_skipped", "rows", "total"] {
            assert_eq!(mcp[key], cli[key], "{client}: get_usage {args:?}: {key}");
        }
    }
}

/// A JSON value with its keys in snake_case and its numbers as floats: the CLI's `--json`
/// speaks camelCase (as pi's files do), the tools snake_case.
fn snake(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let mut s = String::new();
                    for c in k.chars() {
                        if c.is_ascii_uppercase() {
                            s.push('_');
                            s.push(c.to_ascii_lowercase());
                        } else {
                            s.push(c);
                        }
                    }
                    (s, snake(v))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(snake).collect()),
        Value::Number(n) => json!(n.as_f64().expect("a number")),
        other => other.clone(),
    }
}

#[test]
fn python_sdk_over_stdio_answers_as_the_cli_does() {
    let h = Home::new();
    let report = h.python(&strs(&stdio_target(&["--all"])), &plan());
    check_against_cli(&h, &report, "Python SDK, stdio");
}

#[test]
fn python_sdk_over_http_answers_as_the_cli_does() {
    let h = Home::new();
    let server = h.http(&["--all"]);
    let report = h.python(&["http", &server.url], &plan());
    check_against_cli(&h, &report, "Python SDK, HTTP");
}

/// The Inspector CLI's answers to a plan ([`plan`], [`read_plan`]), one `tools/call` per page (it follows no cursor:
/// the test passes each `next_cursor` back), in the Python driver's report shape.
fn inspector_report(h: &Home, target: &[&str], plan: &Value) -> Value {
    let mut calls = Vec::new();
    for call in plan["calls"].as_array().expect("calls") {
        let tool = call["tool"].as_str().expect("tool");
        let mut args: Vec<(String, Value)> = call["arguments"]
            .as_object()
            .expect("arguments")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut pages = Vec::new();
        for _ in 0..call["pages"].as_u64().unwrap_or(1) {
            let mut a = vec![
                "--method".to_string(),
                "tools/call".into(),
                "--tool-name".into(),
            ];
            a.push(tool.to_string());
            for (k, v) in &args {
                a.push("--tool-arg".into());
                // The Inspector parses a value as JSON first, else takes it as a string.
                a.push(format!(
                    "{k}={}",
                    v.as_str().map_or(v.to_string(), str::to_string)
                ));
            }
            let mut argv: Vec<&str> = target.to_vec();
            argv.extend(a.iter().map(String::as_str));
            let (t, rest) = argv.split_at(target.len());
            let r = h.inspector(t, rest);
            let text: String = r["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect();
            let structured = r["structuredContent"].clone();
            let next = structured["next_cursor"].as_str().map(str::to_string);
            pages.push(
                json!({"isError": r["isError"] == true, "text": text, "structured": structured}),
            );
            match next {
                Some(c) if r["isError"] != true => {
                    args.retain(|(k, _)| k != "cursor");
                    args.push(("cursor".into(), Value::String(c)));
                }
                _ => break,
            }
        }
        calls.push(json!({"tool": tool, "arguments": call["arguments"], "pages": pages}));
    }
    json!({ "calls": calls })
}

#[test]
fn inspector_cli_over_stdio_and_http_answers_as_the_cli_does() {
    let h = Home::new();
    let arbor = env!("CARGO_BIN_EXE_arbor");
    let report = inspector_report(&h, &[arbor, "mcp", "--all"], &plan());
    check_against_cli(&h, &report, "Inspector CLI, stdio");
    let server = h.http(&["--all"]);
    let report = inspector_report(&h, &[&server.url, "--transport", "http"], &plan());
    check_against_cli(&h, &report, "Inspector CLI, HTTP");
}

/// `list_sessions` lists every agent's sessions by one rule, last activity first (pi's), as
/// `arbor ls --pi` does (pi's rules whatever the directory): the same sessions in the same
/// order, with the same message counts. Plain `arbor ls` lists omp's directory by omp's own
/// rules (`modified`: the file's time, as omp's `SessionManager.list`), so a copied omp
/// session (its file newer than its last message) comes first there, and not here.
#[test]
fn list_sessions_orders_the_sessions_as_ls_does() {
    let h = Home::new();
    let report = h.python(
        &strs(&stdio_target(&["--all"])),
        &json!({"calls": [{"tool": "list_sessions", "arguments": {"limit": 1000}}]}),
    );
    let listed: Vec<(String, u64)> = pages(&report, 0, "Python SDK")[0]["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| {
            let id = s["id"].as_str().expect("id").to_string();
            (id, s["message_count"].as_u64().expect("message_count"))
        })
        .collect();
    let cli: Vec<(String, u64)> = h
        .cli_json(&["ls", "--all", "--pi", "--json"])
        .as_array()
        .expect("ls --json")
        .iter()
        .map(|s| {
            let id = s["id"].as_str().expect("id").to_string();
            (id, s["messageCount"].as_u64().expect("messageCount"))
        })
        .collect();
    assert!(listed.len() >= 10, "{listed:?}");
    assert_eq!(
        listed, cli,
        "list_sessions' order and counts against ls --all --pi --json's"
    );
    // The question the test asks must be able to fail: the omp session copied after its last
    // message is where omp's rules put it first, and not first here.
    assert_ne!(
        listed.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        ls_ids(&h),
        "plain ls orders omp's directory by omp's rules"
    );
}

/// Nothing unredacted reaches a real client by default: a session holding a GitHub token, asked
/// about through every way in (a search hit's snippet, the listing's title, the session as a
/// resource), from the Python SDK over stdio and over HTTP. With `--no-redact` the token is
/// served (so the check can fail).
#[test]
fn a_secret_in_a_session_reaches_no_client_unless_no_redact() {
    const TOKEN: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
    let h = Home::new();
    let dir = h.home.join(".pi/agent/sessions/--work-secret--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let id = "0199b000-0000-7000-8000-00000000000e";
    std::fs::write(
        dir.join(format!("2026-04-01T09-00-00-000Z_{id}.jsonl")),
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-04-01T09:00:00.000Z\",\"cwd\":\"/work/secret\"}}\n\
             {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-04-01T09:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"walrus deploy with {TOKEN} please\",\"timestamp\":1775034001000}}}}\n"
        ),
    )
    .expect("write");
    let plan = json!({
        "calls": [
            {"tool": "search_sessions", "arguments": {"query": "walrus"}},
            {"tool": "list_sessions", "arguments": {"project": "/work/secret"}},
        ],
        "resources": true,
        "read": [format!("arbor://session/{id}")],
    });
    let check = |report: &Value, client: &str, redacted: bool| {
        let text = report.to_string();
        let hits = pages(report, 0, client)[0]["hits"]
            .as_array()
            .expect("hits")
            .len();
        assert_eq!(hits, 1, "{client}: the search finds the session: {text}");
        assert!(
            report["read"][format!("arbor://session/{id}")]["text"]
                .as_str()
                .is_some_and(|t| t.contains("walrus")),
            "{client}: the session is read as a resource: {text}"
        );
        if redacted {
            assert!(
                !text.contains(TOKEN),
                "{client}: the token was served: {text}"
            );
            assert!(text.contains("[REDACTED:github-token]"), "{client}: {text}");
        } else {
            assert!(text.contains(TOKEN), "{client}, --no-redact: {text}");
        }
    };
    check(
        &h.python(&strs(&stdio_target(&["--all"])), &plan),
        "Python SDK, stdio",
        true,
    );
    let server = h.http(&["--all"]);
    check(
        &h.python(&["http", &server.url], &plan),
        "Python SDK, HTTP",
        true,
    );
    check(
        &h.python(&strs(&stdio_target(&["--all", "--no-redact"])), &plan),
        "Python SDK, stdio",
        false,
    );
}

/// The reading tools' questions (issue 25's `get_messages`, `get_context`, `get_tree`,
/// `get_tool_calls`, `get_file_edits`), on a demo session written by pi 0.73.1 (branches,
/// labels) and on pi's author's real v1 session (tool calls, edits).
fn read_plan() -> Value {
    json!({"calls": [
        {"tool": "get_messages", "arguments": {"session": "01a2031c-aa", "direction": "newer", "limit": 8}, "pages": 50},
        {"tool": "get_context", "arguments": {"session": "01a2031c-aa", "budget_tokens": 1000000, "budget": 200000, "images": true}},
        {"tool": "get_tree", "arguments": {"session": "01a2031c-aa", "limit": 1000}},
        {"tool": "get_tool_calls", "arguments": {"session": "d703a1", "limit": 100}, "pages": 50},
        {"tool": "get_file_edits", "arguments": {"session": "d703a1", "limit": 100}, "pages": 50},
        {"tool": "get_messages", "arguments": {"session": "d703a1", "entry_id": "no-such-entry"}},
    ]})
}

/// The answers of [`read_plan`] against `arbor show --json`, `arbor context` and `arbor tree
/// --json` for the same sessions.
fn check_reads_against_cli(h: &Home, report: &Value, client: &str) {
    // get_messages, every page: the messages of the path to the leaf, as show --json lists them.
    let show = h.cli_json(&["show", "--json", "01a2031c-aa"]);
    let want: Vec<String> = show["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| {
            matches!(
                e["entry"]["type"].as_str(),
                Some("message" | "custom_message" | "branch_summary" | "compaction")
            )
        })
        .map(|e| e["entry"]["id"].as_str().expect("id").to_string())
        .collect();
    let answers = pages(report, 0, client);
    assert!(
        answers.len() > 1,
        "{client}: get_messages took one page: {want:?}"
    );
    let got: Vec<String> = answers
        .iter()
        .flat_map(|a| a["messages"].as_array().expect("messages").iter())
        .map(|m| m["entry_id"].as_str().expect("entry_id").to_string())
        .collect();
    assert_eq!(
        got, want,
        "{client}: get_messages, walked, against show --json"
    );
    // get_context with room for everything: arbor context's JSON.
    let ctx = pages(report, 1, client)[0];
    assert_eq!(ctx["omitted_messages"], 0, "{client}");
    assert_eq!(
        ctx["context"],
        h.cli_json(&["context", "01a2031c-aa"]),
        "{client}: get_context against arbor context"
    );
    // get_tree: the leaf and the entries of arbor tree --json.
    let tree = h.cli_json(&["tree", "--json", "01a2031c-aa"]);
    let outline = pages(report, 2, client)[0];
    assert_eq!(
        outline["current_leaf"], tree["leaf"],
        "{client}: get_tree's leaf"
    );
    assert_eq!(
        outline["entries"],
        json!(tree["nodes"].as_array().expect("nodes").len()),
        "{client}: get_tree's entries"
    );
    // get_tool_calls and get_file_edits: the toolCall blocks of the file, and the paths of
    // its edit and write calls, as show --json holds them (the session has one path).
    let show = h.cli_json(&["show", "--json", "d703a1"]);
    let mut calls: Vec<(String, String)> = Vec::new();
    for e in show["entries"].as_array().expect("entries") {
        for b in e["entry"]["message"]["content"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if b["type"] == "toolCall" {
                calls.push((
                    b["id"].as_str().unwrap_or("").to_string(),
                    b["name"].as_str().expect("name").to_string(),
                ));
            }
        }
    }
    assert!(
        calls.len() > 100,
        "{client}: the session has many tool calls"
    );
    let answers = pages(report, 3, client);
    assert_eq!(
        answers[0]["total"],
        json!(calls.len()),
        "{client}: get_tool_calls' total"
    );
    let got: Vec<(String, String)> = answers
        .iter()
        .flat_map(|a| a["calls"].as_array().expect("calls").iter())
        .map(|c| {
            (
                c["call_id"].as_str().unwrap_or("").to_string(),
                c["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    assert_eq!(
        got, calls,
        "{client}: get_tool_calls' ids and names, every page"
    );
    let mut edited: Vec<String> = show["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .flat_map(|e| {
            e["entry"]["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .filter(|b| b["type"] == "toolCall" && (b["name"] == "edit" || b["name"] == "write"))
        .filter_map(|b| b["arguments"]["path"].as_str().map(str::to_string))
        .collect();
    assert!(!edited.is_empty(), "{client}: the session edits files");
    let mut got: Vec<String> = pages(report, 4, client)
        .iter()
        .flat_map(|a| a["edits"].as_array().expect("edits").iter())
        .map(|e| e["path"].as_str().expect("path").to_string())
        .collect();
    edited.sort();
    got.sort();
    assert_eq!(got, edited, "{client}: get_file_edits' paths");
    let e = tool_error(report, 5, client);
    assert!(e.contains("no-such-entry"), "{client}: {e}");
}

#[test]
fn the_reading_tools_answer_as_the_cli_does_from_both_clients() {
    let h = Home::new();
    let report = h.python(&strs(&stdio_target(&["--all"])), &read_plan());
    check_reads_against_cli(&h, &report, "Python SDK, stdio");
    let server = h.http(&["--all"]);
    let report = h.python(&["http", &server.url], &read_plan());
    check_reads_against_cli(&h, &report, "Python SDK, HTTP");
    let arbor = env!("CARGO_BIN_EXE_arbor");
    let report = inspector_report(&h, &[arbor, "mcp", "--all"], &read_plan());
    check_reads_against_cli(&h, &report, "Inspector CLI, stdio");
}
