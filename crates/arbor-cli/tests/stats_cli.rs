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
