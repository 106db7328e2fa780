//! Issue 26's one catalog, through the real `arbor` binary on a private HOME holding all five
//! agents (the goldens' sources laid out as each agent lays them out, plus a pi and an omp
//! session): `ls --all` shows every one with its TOOL, `--agent` filters, the default scope is
//! the current project across agents, a malformed or future-version source of each kind is
//! reported and skipped, `stats` prices tokens-only agents (`estimated`), and nothing arbor
//! does ever changes a byte or an mtime of another agent's files.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

/// `arbor ARGS` in `cwd` with `home` as HOME, no agent roots from the caller's environment.
fn run_in(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("PWD", cwd)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env("COLUMNS", "80")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CONFIG_DIR")
        .env_remove("OMP_PROFILE")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run arbor")
}

fn ok_in(home: &Path, cwd: &Path, args: &[&str]) -> (String, String) {
    let o = run_in(home, cwd, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "arbor {args:?}: {err}");
    (String::from_utf8(o.stdout).expect("utf-8"), err)
}

fn ok(home: &Path, args: &[&str]) -> (String, String) {
    ok_in(home, home, args)
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

/// A pi session (or omp's, in omp's directory) for `cwd`.
fn pi_session(home: &Path, omp: bool, cwd: &str, id: &str, text: &str) {
    let agent = if omp { ".omp/agent" } else { ".pi/agent" };
    let dir = home.join(agent).join("sessions").join(format!(
        "--{}--",
        cwd.trim_start_matches('/').replace('/', "-")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let body = format!(
        concat!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-11-20T10:00:00.000Z","cwd":"{cwd}"}}"#,
            "\n",
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-20T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#,
            "\n"
        ),
        id = id,
        cwd = cwd,
        text = text
    );
    std::fs::write(
        dir.join(format!("2026-11-20T10-00-00-000Z_{id}.jsonl")),
        body,
    )
    .unwrap();
}

/// A HOME with Claude Code's, Codex's and opencode's goldens where each agent keeps them, and
/// a pi and an omp session of `/work/app` (the goldens' cwd).
fn five_agents() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    copy_tree(
        &goldens().join("claude/projects"),
        &h.join(".claude/projects"),
    );
    copy_tree(
        &goldens().join("codex/sessions"),
        &h.join(".codex/sessions"),
    );
    std::fs::create_dir_all(h.join(".local/share/opencode")).unwrap();
    std::fs::copy(
        goldens().join("opencode/opencode.db"),
        h.join(".local/share/opencode/opencode.db"),
    )
    .unwrap();
    pi_session(
        h,
        false,
        "/work/app",
        "11111111-aaaa-4bbb-8ccc-000000000001",
        "pi walrus",
    );
    pi_session(
        h,
        true,
        "/work/app",
        "22222222-aaaa-4bbb-8ccc-000000000002",
        "omp walrus",
    );
    home
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

/// The TOOL column of each row of an `ls` table.
fn tools(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

#[test]
fn ls_all_shows_every_agent_with_its_tool_and_agent_filters() {
    let home = five_agents();
    let h = home.path();
    let (out, err) = ok(h, &["ls", "--all"]);
    let mut seen = tools(&out);
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        ["claude", "codex", "omp", "opencode", "pi"],
        "{out}\n{err}"
    );
    // Claude Code's session and its subagent, Codex's two rollouts, opencode's session and
    // its subagent, pi's and omp's.
    assert_eq!(tools(&out).len(), 8, "{out}");
    for (agent, n) in [
        ("claude", 2),
        ("codex", 2),
        ("opencode", 2),
        ("pi", 1),
        ("omp", 1),
    ] {
        let (only, _) = ok(h, &["ls", "--all", "--agent", agent]);
        assert_eq!(
            tools(&only),
            vec![agent.to_string(); n],
            "--agent {agent}: {only}"
        );
    }
    // `--tool` is the same flag.
    let (only, _) = ok(h, &["ls", "--all", "--tool", "codex"]);
    assert_eq!(tools(&only), ["codex", "codex"]);
    // The titles the agents gave, and the JSON rows say which agent.
    assert!(out.contains("add-test"), "{out}");
    let (json, _) = ok(h, &["ls", "--all", "--agent", "claude", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r["agent"] == "claude" && r["cwd"] == "/work/app"));
    assert_eq!(
        rows.iter()
            .filter(|r| r.get("parentSessionId").is_some())
            .count(),
        1,
        "the subagent names its parent: {json}"
    );
}

/// The 80-column table of `ls --all --agent claude|codex|opencode`, ages masked (they grow
/// with the date the test runs on).
#[test]
fn ls_all_at_80_columns() {
    let home = five_agents();
    let h = home.path();
    let mut got = String::new();
    for agent in ["claude", "codex", "opencode"] {
        let (out, _) = ok(h, &["ls", "--all", "--agent", agent]);
        for l in out.lines() {
            // The golden Codex rollouts' ids share their first 32 characters (made by hand):
            // their unique prefixes push that table past 80 columns; real ids (UUID v7, a
            // millisecond clock first) part within 12.
            assert!(
                agent == "codex" || unicode_width(l) <= 80,
                "wider than 80: {l:?}"
            );
            // The AGE column: the third field, at a fixed place per table.
            let head = out.lines().next().unwrap();
            let at = head.find("AGE").unwrap();
            let mut l = l.to_string();
            if !l.starts_with("ID") {
                l.replace_range(at..at + 5, "<age>");
            }
            got.push_str(l.trim_end());
            got.push('\n');
        }
    }
    let want = "\
ID       TOOL   AGE     MSGS   SIZE  BR  TITLE                         PROJECT
0b7c3f0e claude <age>     13      -   -  add-test fix                  /work/app
a1b2c3d  claude <age>      4      -   -  Read README.md and report t…  /work/app
ID                                TOOL  AGE     MSGS   SIZE  BR  TITLE       PROJECT
019a4c1e-0000-7000-8000-00000000f codex <age>      4      -   -  Why does …  /work/app
019a4c1e-0000-7000-8000-00000000c codex <age>     15      -   -  Fix the b…  /work/app
ID       TOOL     AGE     MSGS   SIZE  BR  TITLE                       PROJECT
ses_01ma opencode <age>     11      -   -  Update index.ts             /work/app
ses_02su opencode <age>      2      -   -  Explore (@general subagen…  /work/app
";
    assert_eq!(got, want, "got:\n{got}");
}

fn unicode_width(s: &str) -> usize {
    s.chars().count()
}

#[test]
fn the_default_scope_is_the_current_project_across_agents() {
    let home = five_agents();
    let h = home.path();
    let proj = h.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let cwd = proj.to_str().unwrap();
    // A Claude Code session of `proj`, where Claude Code keeps it.
    let dir = h.join(".claude/projects").join(cwd.replace('/', "-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("5e5e5e5e-0000-4000-8000-000000000001.jsonl"),
        format!(
            "{}\n",
            serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"5e5e5e5e-0000-4000-8000-000000000001","cwd":cwd,"timestamp":"2026-11-25T10:00:00Z","message":{"role":"user","content":"the narwhal question"}})
        ),
    )
    .unwrap();
    pi_session(
        h,
        false,
        cwd,
        "33333333-aaaa-4bbb-8ccc-000000000003",
        "pi here",
    );
    let (out, err) = ok_in(h, &proj, &["ls"]);
    assert_eq!(tools(&out), ["claude", "pi"], "{out}\n{err}");
    assert!(out.contains("the narwhal question"), "{out}");
    // Elsewhere, not.
    let other = h.join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let o = run_in(h, &other, &["ls"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("narwhal"));
}

#[test]
fn a_bad_source_of_each_kind_is_reported_and_skipped() {
    let home = five_agents();
    let h = home.path();
    // Claude Code: a file of lines that are not JSON.
    let claude = h.join(".claude/projects/-work-bad");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("badbadba-0000-4000-8000-000000000001.jsonl"),
        "{not json\n\u{0}\u{1}\n",
    )
    .unwrap();
    // Codex: a rollout of a future version (an envelope this arbor does not know).
    let codex = h.join(".codex/sessions/2026/11/20");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("rollout-2026-11-20T10-00-00-0badc0de-0000-7000-8000-000000000001.jsonl"),
        "{\"timestamp\":\"2026-11-20T10:00:00Z\",\"type\":\"session_meta_v9\",\"payload\":{\"id\":\"x\"}}\n{\"timestamp\":\"2026-11-20T10:00:01Z\",\"type\":\"response_item_v9\",\"payload\":{}}\n",
    )
    .unwrap();
    // opencode: a database that is not one (its data directory has nothing else).
    std::fs::write(
        h.join(".local/share/opencode/opencode.db"),
        b"not a database at all, 4096 bytes? no",
    )
    .unwrap();
    // pi and omp: a session file that is not one.
    for agent in [".pi/agent", ".omp/agent"] {
        let d = h.join(agent).join("sessions/--work-app--");
        std::fs::write(
            d.join("2026-11-21T10-00-00-000Z_bad.jsonl"),
            "\u{0}garbage\n",
        )
        .unwrap();
    }
    let before = sources(h);
    let (out, err) = ok(h, &["ls", "--all"]);
    // The good sessions are still listed.
    let mut seen = tools(&out);
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["claude", "codex", "omp", "pi"], "{out}\n{err}");
    assert!(!out.contains("badbadba"), "{out}");
    // Each bad source of another agent is named, with what was wrong.
    assert!(
        err.contains("skipped a claude source")
            && err.contains("badbadba-0000-4000-8000-000000000001.jsonl")
            && err.contains("line 1"),
        "{err}"
    );
    assert!(
        err.contains("skipped a codex source")
            && err.contains("0badc0de")
            && err.contains("does not know"),
        "{err}"
    );
    assert!(
        err.contains("skipped a opencode source") || err.contains("skipped an opencode source"),
        "{err}"
    );
    // A second listing (from the catalog: nothing changed) says so again.
    let (_, err2) = ok(h, &["ls", "--all"]);
    assert!(err2.contains("badbadba"), "{err2}");
    assert_eq!(before, sources(h), "arbor wrote into another agent's files");
}

#[test]
fn nothing_arbor_reads_is_written() {
    let home = five_agents();
    let h = home.path();
    let before = sources(h);
    for args in [
        &["ls", "--all"][..],
        &["ls", "--all", "--agent", "opencode", "--json"],
        &["ls", "--all", "--long"],
        &["stats", "--all"],
        &["stats", "--all", "--json"],
        &["search", "--all", "walrus"],
    ] {
        let o = run_in(h, h, args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(before, sources(h), "arbor wrote into another agent's files");
}

#[test]
fn stats_prices_tokens_only_agents_as_estimated_and_keeps_opencode_s_dollars() {
    let home = five_agents();
    let h = home.path();
    let (json, err) = ok(h, &["stats", "--all", "--json"]);
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}\n{err}"));
    let rows = v["rows"].as_array().unwrap();
    let row = |g: &str| {
        rows.iter()
            .find(|r| r["group"] == g)
            .unwrap_or_else(|| panic!("no row {g}: {json}"))
    };
    let cost = |r: &serde_json::Value| {
        r["currentPath"]["cost"].as_f64().unwrap() + r["otherBranches"]["cost"].as_f64().unwrap()
    };
    // Claude Code's golden: usage once per message.id (84/131/2100/600, docs/agents.md), its
    // models priced from the table: marked estimated.
    let claude = row("claude:0b7c3f0e-1111-4222-8333-444455556666");
    assert_eq!(claude["estimated"], true, "{claude}");
    let tok = |r: &serde_json::Value, k: &str| {
        r["currentPath"][k].as_f64().unwrap() + r["otherBranches"][k].as_f64().unwrap()
    };
    assert_eq!(
        [
            tok(claude, "input"),
            tok(claude, "output"),
            tok(claude, "cacheRead"),
            tok(claude, "cacheWrite")
        ],
        [84.0, 131.0, 2100.0, 600.0]
    );
    assert!(
        cost(claude) > 0.0
            && (cost(claude) - claude["estimatedCost"].as_f64().unwrap()).abs() < 1e-9
    );
    // Codex's golden: one reply per token_count (3100/290/24000), priced (gpt-5-codex).
    let codex = row("codex:019a4c1e-0000-7000-8000-00000000c0de");
    assert_eq!(codex["estimated"], true, "{codex}");
    assert_eq!(tok(codex, "input"), 3100.0);
    let want = (3100.0 * 1.25 + 290.0 * 10.0 + 24000.0 * 0.125) / 1e6;
    assert!(
        (cost(codex) - want).abs() < 1e-9,
        "{} != {want}",
        cost(codex)
    );
    // opencode records dollars: used as they are, not estimated.
    let oc = rows
        .iter()
        .find(|r| {
            r["group"]
                .as_str()
                .is_some_and(|g| g.starts_with("opencode:"))
        })
        .expect("an opencode row");
    assert!(oc.get("estimated").is_none(), "{oc}");
    assert!(cost(oc) > 0.0, "{oc}");
    // The table says so.
    let (table, _) = ok(h, &["stats", "--all"]);
    assert!(
        table.contains("~$") && table.contains("~ estimated"),
        "{table}"
    );
    let (only, _) = ok(h, &["stats", "--all", "--agent", "opencode"]);
    assert!(!only.contains('~') && only.contains("opencode"), "{only}");
}

#[test]
fn search_finds_claude_codex_and_opencode_texts() {
    let home = five_agents();
    let h = home.path();
    let json = |args: &[&str]| -> serde_json::Value {
        let (out, err) = ok(h, args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
    };
    // A Codex prompt, an opencode prompt, a Claude Code subagent's prompt, and pi's own.
    for (q, agent, text) in [
        ("build fail", "codex", "Why does the build fail"),
        ("sqlite transcript", "opencode", "sqlite transcript data"),
        ("typos", "claude", "report typos"),
    ] {
        let v = json(&["search", "--all", "--json", q]);
        let hits = v["hits"].as_array().unwrap();
        assert!(
            hits.iter()
                .any(|h| h["agent"] == agent && h["snippet"].as_str().unwrap().contains(text)),
            "{q}: {v}"
        );
        // --agent keeps them, another agent's filter does not.
        let only = json(&["search", "--all", "--json", "--agent", agent, q]);
        assert!(
            !only["hits"].as_array().unwrap().is_empty(),
            "{q} --agent {agent}"
        );
        let other = if agent == "codex" { "claude" } else { "codex" };
        let o = run_in(h, h, &["search", "--all", "--json", "--agent", other, q]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            v["hits"]
                .as_array()
                .unwrap()
                .iter()
                .all(|h| h["agent"] == other),
            "{q} --agent {other}: {v}"
        );
    }
    // pi's own hits are still there, without an agent.
    let v = json(&["search", "--all", "--json", "walrus"]);
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{v}");
    assert!(hits.iter().all(|h| h.get("agent").is_none()));
    // The table names the agent.
    let (table, _) = ok(h, &["search", "--all", "build fail"]);
    assert!(
        table.contains("[codex] Fix the build") && table.contains("Why does the build fail?"),
        "{table}"
    );
}

/// `arbor mcp --all` over stdio: each call's structured answer, by id.
fn mcp_calls(home: &Path, calls: &[&str]) -> Vec<serde_json::Value> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["mcp", "--all"])
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for (k, c) in calls.iter().enumerate() {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{c}}}"#,
            k + 1
        )
        .unwrap();
    }
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut answers = vec![serde_json::Value::Null; calls.len()];
    let mut got = 0;
    while got < calls.len() + 1 {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "closed early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v.get("id").and_then(|i| i.as_u64()) {
            got += 1;
            if id > 0 {
                answers[id as usize - 1] = v["result"].clone();
            }
        }
    }
    drop(stdin);
    child.wait().unwrap();
    answers
}

#[test]
fn mcp_lists_and_searches_every_agent() {
    let home = five_agents();
    let h = home.path();
    let before = sources(h);
    let a = mcp_calls(
        h,
        &[
            r#"{"name":"list_sessions","arguments":{}}"#,
            r#"{"name":"list_sessions","arguments":{"agent":"codex"}}"#,
            r#"{"name":"search_sessions","arguments":{"query":"sqlite transcript"}}"#,
            r#"{"name":"search_sessions","arguments":{"query":"typos","agent":"claude"}}"#,
            r#"{"name":"get_usage","arguments":{"by":"session"}}"#,
        ],
    );
    let rows = a[4]["structuredContent"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", a[4]));
    let claude = rows
        .iter()
        .find(|r| r["group"] == "claude:0b7c3f0e-1111-4222-8333-444455556666")
        .unwrap_or_else(|| panic!("{}", a[4]));
    assert!(claude["estimated_cost"].as_f64().unwrap() > 0.0, "{claude}");
    assert!(rows
        .iter()
        .any(|r| r["group"].as_str().unwrap().starts_with("opencode:")
            && r.get("estimated_cost").is_none()));
    let agents = |v: &serde_json::Value| -> Vec<String> {
        let mut a: Vec<String> = v["structuredContent"]["sessions"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|s| s["agent"].as_str().unwrap().to_string())
            .collect();
        a.sort();
        a.dedup();
        a
    };
    assert_eq!(
        agents(&a[0]),
        ["claude", "codex", "omp", "opencode", "pi"],
        "{}",
        a[0]
    );
    assert_eq!(agents(&a[1]), ["codex"], "{}", a[1]);
    let hits = |v: &serde_json::Value| v["structuredContent"]["hits"].as_array().unwrap().clone();
    assert!(
        hits(&a[2]).iter().any(|h| h["snippet"]
            .as_str()
            .unwrap()
            .contains("**sqlite** **transcript**")),
        "{}",
        a[2]
    );
    assert!(
        hits(&a[3])
            .iter()
            .any(|h| h["snippet"].as_str().unwrap().contains("**typos**")),
        "{}",
        a[3]
    );
    assert_eq!(
        before,
        sources(h),
        "arbor mcp wrote into another agent's files"
    );
}

#[test]
fn pi_only_commands_on_another_agent_s_session_say_so_and_write_nothing() {
    let home = five_agents();
    let h = home.path();
    let before = sources(h);
    let file = h.join(".claude/projects/-work-app/0b7c3f0e-1111-4222-8333-444455556666.jsonl");
    let file = file.to_str().unwrap();
    for (args, agent) in [
        (vec!["name", file, "renamed"], "claude"),
        (
            vec![
                "append",
                "0b7c3f0e",
                r#"{"type":"custom","customType":"x"}"#,
            ],
            "claude",
        ),
        (vec!["fork", "ses_01ma"], "opencode"),
        (vec!["check", "--repair", file], "claude"),
        // show/tree/context/export read it in memory now (tests/foreign_read.rs); the
        // commands that write still refuse.
        (vec!["rm", "019a4c1e-0000-7000-8000-00000000c0de"], "codex"),
        (vec!["name", "0b7c3f0e", "x"], "claude"),
    ] {
        let o = run_in(h, h, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("another agent's") && err.contains(&format!("arbor import {agent} ")),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        before,
        sources(h),
        "a pi-only command wrote into another agent's files"
    );
}
