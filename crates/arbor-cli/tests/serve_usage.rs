//! The usage page of `arbor serve` (`/usage`) counts as `arbor stats` counts: its JSON is
//! `arbor stats --json` for the same grouping, range and scope (by day, week, month, model,
//! project and agent; since/until, project, agent and model filters), its CSV the same
//! numbers, over sessions with a branch left, a compaction's usage entry, a fork, an omp
//! session and Claude Code's session (its costs estimated).
use arbor_testkit::served::Served;
use serde_json::Value;
use std::path::Path;

#[path = "serve_usage/home.rs"]
mod home;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

fn serve(h: &home::UsageHome) -> Served {
    let envs = h.envs();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Served::start(bin(), &[], &envs)
}

/// The body of a 200 answer to `GET path`.
fn body(s: &Served, path: &str) -> String {
    let a = s.get(path);
    assert!(a.starts_with("HTTP/1.1 200"), "GET {path}: {a}");
    let (_, b) = a.split_once("\r\n\r\n").expect("a body");
    b.to_string()
}

fn json(s: &Served, path: &str) -> Value {
    let b = body(s, path);
    serde_json::from_str(&b).unwrap_or_else(|e| panic!("{path}: {e}: {b}"))
}

/// The charts' JSON asked for, and the `arbor stats` arguments that give the same.
fn chart_cases() -> Vec<(String, Vec<&'static str>)> {
    vec![
        ("time.json?scope=all".into(), vec!["--all", "--by", "day"]),
        (
            "time.json?scope=all&by=week".into(),
            vec!["--all", "--by", "week"],
        ),
        (
            "time.json?scope=all&by=month".into(),
            vec!["--all", "--by", "month"],
        ),
        (
            "model.json?scope=all".into(),
            vec!["--all", "--by", "model"],
        ),
        (
            "project.json?scope=all".into(),
            vec!["--all", "--by", "project"],
        ),
        (
            "agent.json?scope=all".into(),
            vec!["--all", "--by", "agent"],
        ),
        (
            "model.json?scope=all&since=2026-01-06".into(),
            vec!["--all", "--by", "model", "--since", "2026-01-06"],
        ),
        (
            "agent.json?scope=all&agent=claude".into(),
            vec!["--all", "--by", "agent", "--agent", "claude"],
        ),
        (
            "time.json?scope=all&agent=pi".into(),
            vec!["--all", "--by", "day", "--agent", "pi"],
        ),
    ]
}

#[test]
fn the_charts_json_is_arbor_stats_json() {
    let h = home::usage_home();
    let s = serve(&h);
    let proj = h.proj.to_str().unwrap();
    for (path, args) in &chart_cases() {
        let got = json(&s, &format!("/usage/{path}"));
        let want = h.stats(args);
        assert_eq!(got, want, "/usage/{path} against arbor stats {args:?}");
    }
    // What the cases cover: a branch left, a summary, a fork's copy, estimated costs.
    let all = h.stats(&["--all", "--by", "agent"]);
    assert_eq!(all["forkCopiesSkipped"], 1);
    let pi = &all["rows"][2];
    assert_eq!(pi["otherBranches"]["cost"], 2.0, "{pi}");
    assert_eq!(pi["summaries"]["cost"], 0.5, "{pi}");
    let agents: Vec<&str> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["claude", "omp", "pi"]);
    assert_eq!(all["rows"][0]["estimated"], true);
    // A project: the sessions `arbor stats` counts when run in it.
    let got = json(&s, &format!("/usage/model.json?project={proj}"));
    let want = h.stats_in(&h.proj, &["--by", "model"]);
    assert_eq!(got, want);
    assert_eq!(want["sessions"], 2, "{want}");
    // until: only the turns before it (arbor mcp's get_usage: arbor stats has no --until).
    let got = json(&s, "/usage/time.json?scope=all&until=2026-01-07");
    let days: Vec<&str> = got["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert!(days.iter().all(|d| *d < "2026-01-07"), "{days:?}");
    assert!(days.contains(&"2026-01-06"), "{days:?}");
    // model: only its turns.
    let got = json(&s, "/usage/agent.json?scope=all&model=anthropic/claude-y");
    assert_eq!(
        got["total"]["currentPath"]["cost"],
        4.0 + 8.0 + 0.75,
        "{got}"
    );
}

#[test]
fn the_charts_csv_carry_the_json_numbers() {
    let h = home::usage_home();
    let s = serve(&h);
    for chart in ["time", "model", "project", "agent"] {
        let j = json(&s, &format!("/usage/{chart}.json?scope=all"));
        let csv = body(&s, &format!("/usage/{chart}.csv?scope=all"));
        let mut lines = csv.split("\r\n").filter(|l| !l.is_empty());
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(header[..3], ["group", "turns", "currentPath.input"]);
        let rows: Vec<&Value> = j["rows"]
            .as_array()
            .unwrap()
            .iter()
            .chain(std::iter::once(&j["total"]))
            .collect();
        let lines: Vec<&str> = lines.collect();
        assert_eq!(lines.len(), rows.len(), "{chart}: {csv}");
        for (line, row) in lines.iter().zip(rows) {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells[0], row["group"].as_str().unwrap(), "{chart}");
            assert_eq!(cells[1], row["turns"].to_string());
            for (k, name) in header.iter().enumerate().skip(2) {
                let want = match name.split_once('.') {
                    Some((part, f)) => row[part][f].as_f64(),
                    None => row[*name].as_f64(),
                };
                let got: Option<f64> = cells[k].parse().ok();
                assert_eq!(got, want, "{chart} {name}: {line}");
            }
        }
    }
}

#[test]
fn the_heatmap_counts_turns_and_sessions_by_weekday_and_hour() {
    let h = home::usage_home();
    let s = serve(&h);
    let j = json(&s, "/usage/heatmap.json?scope=all");
    // pi's turns: a1 Mon 09 (the fork's copy counted once), a2 Tue 14, a3 Wed 20, b1 Mon 09
    // (another session), c1 Sat 23, d1 (omp) Sun 08.
    assert_eq!(j["turns"][0][9], 2, "{j}");
    assert_eq!(j["sessions"][0][9], 2, "{j}");
    assert_eq!(j["turns"][1][14], 1);
    assert_eq!(j["turns"][2][20], 1);
    assert_eq!(j["turns"][5][23], 1);
    assert_eq!(j["turns"][6][8], 1);
    // Every turn `arbor stats` counts is in a cell (Claude Code's too).
    let sum: u64 = j["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|v| v.as_u64().unwrap())
        .sum();
    let stats = h.stats(&["--all"]);
    assert_eq!(
        sum + j["undatedTurns"].as_u64().unwrap(),
        stats["total"]["turns"].as_u64().unwrap()
    );
    let csv = body(&s, "/usage/heatmap.csv?scope=all");
    assert!(csv.starts_with("day,hour,turns,sessions\r\n"), "{csv}");
    assert!(csv.contains("\r\nMon,9,2,2\r\n"), "{csv}");
}

#[test]
fn the_page_draws_the_numbers_and_refuses_what_it_does_not_know() {
    let h = home::usage_home();
    let s = serve(&h);
    let page = body(&s, "/usage?scope=all&by=month");
    assert!(page.contains("<svg class=\"chart upright\""), "{page}");
    assert!(page.contains("role=\"img\""));
    // A bar per month, its numbers in data attributes (as the JSON's).
    let j = json(&s, "/usage/time.json?scope=all&by=month");
    for r in j["rows"].as_array().unwrap() {
        let want = format!(
            "data-group=\"{}\" data-series=\"current path\" data-value=\"{}\"",
            r["group"].as_str().unwrap(),
            r["currentPath"]["cost"]
        );
        assert!(page.contains(&want), "{want}");
    }
    // Tokens instead of dollars: a bar is the four token counts added up.
    let page = body(&s, "/usage?scope=all&by=month&metric=tokens");
    assert!(page.contains("data-unit=\"tokens\""), "{page}");
    for r in j["rows"].as_array().unwrap() {
        let p = &r["currentPath"];
        let sum: f64 = ["input", "output", "cacheRead", "cacheWrite"]
            .iter()
            .map(|k| p[*k].as_f64().unwrap())
            .sum();
        let want = format!(
            "data-group=\"{}\" data-series=\"current path\" data-value=\"{sum}\"",
            r["group"].as_str().unwrap()
        );
        assert!(page.contains(&want), "{want}");
    }
    let page = body(&s, "/usage?scope=all&by=month");
    // Its data links keep the query.
    assert!(
        page.contains("href=\"/usage/time.csv?scope=all&amp;by=month\""),
        "{page}"
    );
    assert!(
        !page.contains("<script>") && !page.contains(" style="),
        "no inline script or style"
    );
    for bad in [
        "/usage?by=hour",
        "/usage?since=yesterday-ish",
        "/usage?agent=emacs",
        "/usage?scope=everywhere",
    ] {
        let a = s.get(bad);
        assert!(a.starts_with("HTTP/1.1 400"), "{bad}: {a}");
    }
    let a = s.get("/usage/secrets.json");
    assert!(a.starts_with("HTTP/1.1 404"), "{a}");
    let a = s.get("/usage/..%2f..%2fetc%2fpasswd");
    assert!(a.starts_with("HTTP/1.1 404"), "{a}");
}

#[test]
fn session_strings_are_escaped_and_redacted() {
    let h = home::usage_home();
    // A project whose directory name is markup and holds a secret, and a model named so.
    let evil =
        "/work/<script>alert(1)</script>sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let dir = home::session_dir(h.home.path(), false, "/work/evil");
    let lines = [
        format!(r#"{{"type":"session","version":3,"id":"eeee","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{evil}"}}"#),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-05T09:00:00.000Z","message":{"role":"user","content":"q","timestamp":1}}"#.to_string(),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-05T09:10:00.000Z","message":{"role":"assistant","content":[],"provider":"=cmd|' /C calc'!A0","model":"<img src=x onerror=alert(2)>","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.01}},"stopReason":"stop","timestamp":1}}"#.to_string(),
    ];
    std::fs::write(dir.join("e.jsonl"), lines.join("\n") + "\n").unwrap();
    let s = serve(&h);
    let page = body(&s, "/usage?scope=all");
    assert!(!page.contains("<script>alert"), "markup escaped");
    assert!(!page.contains("<img src=x"), "markup escaped");
    assert!(page.contains("&lt;script&gt;alert(1)"), "{page}");
    assert!(!page.contains("sk-ant-api03-AAAA"), "the secret redacted");
    let csv = body(&s, "/usage/project.csv?scope=all");
    assert!(!csv.contains("sk-ant-api03-AAAA"), "{csv}");
    // With --no-redact the key is there (so the checks above can fail), still escaped.
    let envs = h.envs();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let raw = Served::start(bin(), &["--no-redact"], &envs);
    let page = body(&raw, "/usage?scope=all");
    assert!(page.contains("sk-ant-api03-AAAA"), "--no-redact");
    assert!(!page.contains("<script>alert"), "markup escaped");
    drop(raw);
    let csv = body(&s, "/usage/model.csv?scope=all");
    // A spreadsheet does not run a model's name as a formula.
    assert!(!csv.contains("\r\n=cmd"), "{csv}");
    assert!(csv.contains("\r\n'=cmd|' /C calc'!A0/<img"), "{csv}");
}

/// Issue 27 (the usage page's speed): the server keeps the catalog fresh with a watcher of
/// its own (unless `--no-watch`), and while it vouches for the catalog the page takes the
/// catalog's stat of each session file instead of a `stat` of it
/// (`stats_catalog::counted`): the numbers stay those of `arbor stats --no-catalog`, which
/// reads every file (pi's and omp's sessions). Waits for the watcher's answer (an event), up to a minute.
#[test]
fn under_the_servers_own_watcher_the_charts_are_the_files_numbers() {
    let h = home::usage_home();
    let s = serve(&h);
    let home = h.home.path();
    let mut dirs = Vec::new();
    for agent in [".pi/agent/sessions", ".omp/agent/sessions"] {
        for d in std::fs::read_dir(home.join(agent)).expect("sessions") {
            dirs.push(d.expect("entry").path());
        }
    }
    let keys: Vec<String> = dirs.iter().map(|d| arbor_index::dir_key(d)).collect();
    let catalog = home.join("catalog.db");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !arbor_index::watch::vouches(&catalog, &keys) {
        assert!(
            std::time::Instant::now() < until,
            "the server's watcher never vouched for {dirs:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // pi's and omp's sessions (`--no-catalog` reads no other agent's).
    for agent in ["pi", "omp"] {
        for (path, args) in chart_cases() {
            if path.contains("agent=") {
                continue;
            }
            let path = format!("/usage/{path}&agent={agent}");
            let got = json(&s, &path);
            let mut args = args.clone();
            args.extend(["--agent", agent, "--no-catalog"]);
            let want = h.stats(&args);
            assert_eq!(got, want, "{path} against arbor stats {args:?}");
            assert!(want["sessions"].as_u64() > Some(0), "{path}: {want}");
        }
    }
}
