//! `arbor stats` on a session with a branch and its fork: the path apart from the branch left,
//! usage entries apart, the fork's copies of its parent's turns counted once.
use serde_json::Value;
use std::process::Command;

fn asst(id: &str, parent: &str, day: u32, input: u32, cost: f64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-{day:02}T10:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"anthropic","model":"claude-x","usage":{{"input":{input},"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":{input},"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":1}}}}"#
    )
}

fn user(id: &str, parent: Option<&str>, day: u32) -> String {
    let p = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-01-{day:02}T09:00:00.000Z","message":{{"role":"user","content":"q","timestamp":1}}}}"#
    )
}

#[test]
fn path_branches_summaries_and_fork_copies() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a.jsonl");
    let b = tmp.path().join("b.jsonl");
    let head = |id: &str, parent: Option<&str>| {
        let p = parent.map_or(String::new(), |p| format!(r#","parentSession":"{p}""#));
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"{p}}}"#
        )
    };
    // a: u1 → a1 ($1) → u2 → a2 ($2) [left branch], and u1 → a1 → u3 → a3 ($4) (the leaf),
    // plus a usage entry for a compaction summary ($0.5).
    let lines_a = [
        head("A", None),
        user("u1", None, 1),
        asst("a1", "u1", 1, 100, 1.0),
        user("u2", Some("a1"), 2),
        asst("a2", "u2", 2, 200, 2.0),
        user("u3", Some("a1"), 3),
        asst("a3", "u3", 3, 400, 4.0),
        r#"{"type":"usage","id":"s1","parentId":"a3","timestamp":"2026-01-03T11:00:00.000Z","kind":"compaction","provider":"anthropic","model":"claude-x","usage":{"input":50,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":55,"cost":{"total":0.5}}}"#.to_string(),
    ];
    std::fs::write(&a, lines_a.join("\n") + "\n").expect("write a");
    // b: a fork of a's path to a1 (copied entries), then its own turn ($8).
    let lines_b = [
        head("B", Some(&a.to_string_lossy())),
        user("u1", None, 1),
        asst("a1", "u1", 1, 100, 1.0),
        user("v1", Some("a1"), 5),
        asst("b1", "v1", 5, 800, 8.0),
    ];
    std::fs::write(&b, lines_b.join("\n") + "\n").expect("write b");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", tmp.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).expect("json")
    };
    let (sa, sb) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let v = run(&["stats", sa, sb, "--json"]);
    assert_eq!(v["forkCopiesSkipped"], 1);
    let t = &v["total"];
    assert_eq!(t["currentPath"]["cost"], 1.0 + 4.0 + 8.0);
    assert_eq!(t["otherBranches"]["cost"], 2.0);
    assert_eq!(t["summaries"]["cost"], 0.5);
    assert_eq!(t["turns"], 4, "a1 counted once");
    // Alone, the fork keeps its copy.
    let v = run(&["stats", sb, "--json"]);
    assert_eq!(v["total"]["currentPath"]["cost"], 9.0);
    // By day and --since.
    let v = run(&[
        "stats",
        sa,
        sb,
        "--by",
        "day",
        "--json",
        "--since",
        "2026-01-03",
    ]);
    let groups: Vec<&str> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["group"].as_str().expect("group"))
        .collect();
    assert_eq!(groups, ["2026-01-03", "2026-01-05"]);
}

fn asst_at(id: &str, parent: &str, ts: &str, model: &str, input: u32, cost: f64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"p","model":"{model}","usage":{{"input":{input},"output":3,"cacheRead":7,"cacheWrite":2,"totalTokens":{input},"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":1}}}}"#
    )
}

/// The catalog's totals are the files' totals: every --by, --since inside a day and on a day's
/// edge, a fork in the directory, one whose parent is elsewhere and one naming its parent by
/// id (omp), a usage entry, a file that is not a session, and after files were appended to and
/// rewritten.
#[test]
fn catalog_totals_equal_file_totals() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(".pi/agent/sessions/--p--");
    let other = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&other).expect("other");
    let head = |id: &str, parent: Option<&std::path::Path>| {
        let p = parent.map_or(String::new(), |p| {
            format!(r#","parentSession":"{}""#, p.display())
        });
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p/{id}"{p}}}"#
        )
    };
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    let c = dir.join("c.jsonl");
    let d = dir.join("d.jsonl");
    let e = other.join("e.jsonl");
    let f = dir.join("f.jsonl");
    let write = |p: &std::path::Path, lines: &[String]| {
        std::fs::write(p, lines.join("\n") + "\n").expect("write");
    };
    write(
        &a,
        &[
            head("A", None),
            user("u1", None, 1),
            asst_at("a1", "u1", "2026-01-01T10:00:00.000Z", "m1", 100, 0.1),
            user("u2", Some("a1"), 2),
            asst_at("a2", "u2", "2026-01-02T10:00:00.000Z", "m2", 200, 0.2),
            user("u3", Some("a1"), 3),
            asst_at("a3", "u3", "2026-01-03T10:00:00.000Z", "m1", 400, 0.3),
            asst_at("a4", "a3", "2026-01-03T18:00:00+02:00", "m1", 1, 0.7),
            asst_at("a5", "a4", "not a time", "m1", 1, 0.01),
            r#"{"type":"usage","id":"s1","parentId":"a5","timestamp":"2026-01-03T20:00:00.000Z","kind":"compaction","provider":"p","model":"m3","usage":{"input":50,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":55,"cost":{"total":0.05}}}"#.to_string(),
        ],
    );
    // b: a fork of a (copies u1, a1), its own turns.
    write(
        &b,
        &[
            head("B", Some(&a)),
            user("u1", None, 1),
            asst_at("a1", "u1", "2026-01-01T10:00:00.000Z", "m1", 100, 0.1),
            user("v1", Some("a1"), 5),
            asst_at("b1", "v1", "2026-01-05T10:00:00.000Z", "m2", 800, 0.8),
        ],
    );
    // c: a fork of b (copies what b copied from a, and b1).
    write(
        &c,
        &[
            head("C", Some(&b)),
            user("u1", None, 1),
            asst_at("a1", "u1", "2026-01-01T10:00:00.000Z", "m1", 100, 0.1),
            user("v1", Some("a1"), 5),
            asst_at("b1", "v1", "2026-01-05T10:00:00.000Z", "m2", 800, 0.8),
            user("w1", Some("b1"), 6),
            asst_at("c1", "w1", "2026-01-06T10:00:00.000Z", "m2", 30, 0.03),
        ],
    );
    // d: a fork of e, which is not in the directory (--dir keeps d's copies, --all too).
    write(
        &e,
        &[
            head("E", None),
            user("x1", None, 7),
            asst_at("e1", "x1", "2026-01-07T10:00:00.000Z", "m1", 9, 0.09),
        ],
    );
    write(
        &d,
        &[
            head("D", Some(&e)),
            user("x1", None, 7),
            asst_at("e1", "x1", "2026-01-07T10:00:00.000Z", "m1", 9, 0.09),
        ],
    );
    std::fs::write(&f, "not json\n").expect("f");
    // g: an omp fork of a, naming its parent by session id.
    write(
        &dir.join("g.jsonl"),
        &[
            r#"{"type":"session","version":3,"id":"G","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p/G","parentSession":"A"}"#.to_string(),
            user("u1", None, 1),
            asst_at("a1", "u1", "2026-01-01T10:00:00.000Z", "m1", 100, 0.1),
            user("g1", Some("a1"), 9),
            asst_at("g2", "g1", "2026-01-09T10:00:00.000Z", "m1", 3, 0.3),
        ],
    );
    let cat = tmp.path().join("catalog.db");
    let run = |args: &[&str]| -> String {
        let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", tmp.path())
            .env("ARBOR_CATALOG", &cat)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("utf-8")
    };
    let dir_s = dir.to_str().expect("utf-8");
    let compare = |what: &str| {
        for scope in [vec!["--all"], vec!["--dir", dir_s]] {
            for by in ["session", "day", "week", "month", "model", "project"] {
                for since in [
                    None,
                    Some("2026-01-03"),
                    Some("2026-01-03T12:00:00Z"),
                    Some("2026-01-05T10:00:00Z"),
                ] {
                    let mut args = vec!["stats", "--json", "--by", by];
                    args.extend(scope.iter().copied());
                    if let Some(s) = since {
                        args.extend(["--since", s]);
                    }
                    let from_catalog = run(&args);
                    // Twice: the second from the rows the first kept.
                    assert_eq!(run(&args), from_catalog, "{what}: {args:?}, twice");
                    args.push("--no-catalog");
                    assert_eq!(run(&args), from_catalog, "{what}: {args:?}");
                }
            }
        }
    };
    compare("fresh");
    let v: Value = serde_json::from_str(&run(&["stats", "--all", "--json"])).expect("json");
    assert_eq!(v["sessions"], 5, "a, b, c, d, g; f is not a session");
    assert_eq!(
        v["forkCopiesSkipped"],
        1 + 2 + 1,
        "a1 in b; a1 and b1 in c; a1 in g (parent by id)"
    );
    // Appended: a new branch of a (a3, a4 and a5 leave the path), and a turn of b that c copies
    // then (a fork whose parent changed has its copies marked again).
    let mut more = std::fs::read_to_string(&a).expect("read a");
    more.push_str(&(user("u4", Some("a1"), 8) + "\n"));
    more.push_str(&(asst_at("a6", "u4", "2026-01-08T10:00:00.000Z", "m1", 5, 0.5) + "\n"));
    std::fs::write(&a, more).expect("append a");
    let mut more = std::fs::read_to_string(&b).expect("read b");
    more.push_str(&(user("w1", Some("b1"), 6) + "\n"));
    more.push_str(&(asst_at("c1", "w1", "2026-01-06T10:00:00.000Z", "m2", 30, 0.03) + "\n"));
    std::fs::write(&b, more).expect("append b");
    compare("appended");
    let v: Value = serde_json::from_str(&run(&["stats", "--all", "--json"])).expect("json");
    assert_eq!(v["forkCopiesSkipped"], 1 + 3 + 1, "c1 is b's now");
    // e moves into the directory: d's copy of e1 is counted once.
    std::fs::rename(&e, dir.join("e.jsonl")).expect("move e");
    let d_lines = std::fs::read_to_string(&d).expect("read d");
    std::fs::write(
        &d,
        d_lines.replace(
            &e.display().to_string(),
            &dir.join("e.jsonl").display().to_string(),
        ),
    )
    .expect("rewrite d");
    compare("moved");
    let v: Value = serde_json::from_str(&run(&["stats", "--all", "--json"])).expect("json");
    assert_eq!(v["forkCopiesSkipped"], 1 + 3 + 1 + 1);
}
