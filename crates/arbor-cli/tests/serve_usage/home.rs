//! The sessions of the usage page's tests: a HOME with pi's sessions of two projects (one with
//! a branch left, a compaction's usage entry and a fork of it), an omp session, and Claude
//! Code's golden session (tokens only: its costs estimated from arbor's price table).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

fn asst(id: &str, parent: &str, ts: &str, model: &str, input: u32, cost: f64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"anthropic","model":"{model}","usage":{{"input":{input},"output":3,"cacheRead":7,"cacheWrite":2,"totalTokens":{input},"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":1}}}}"#
    )
}

fn user(id: &str, parent: Option<&str>, ts: &str) -> String {
    let p = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{{"role":"user","content":"q","timestamp":1}}}}"#
    )
}

fn head(id: &str, cwd: &str, parent: Option<&Path>) -> String {
    let p = parent.map_or(String::new(), |p| {
        format!(r#","parentSession":"{}""#, p.display())
    });
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"{p}}}"#
    )
}

/// The session directory of `cwd` in pi's (or omp's) agent directory under `home`.
pub fn session_dir(home: &Path, omp: bool, cwd: &str) -> PathBuf {
    let agent = if omp { ".omp/agent" } else { ".pi/agent" };
    let d = home.join(agent).join("sessions").join(format!(
        "--{}--",
        cwd.trim_start_matches('/').replace('/', "-")
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A HOME with the sessions (see the module's doc); `proj` is a real directory (the second
/// project's cwd), so that `arbor stats` can run in it.
pub struct UsageHome {
    pub home: tempfile::TempDir,
    pub proj: PathBuf,
}

pub fn usage_home() -> UsageHome {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let proj = h.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let proj_s = proj.to_str().unwrap().to_string();
    arbor_testkit::goldens::copy_tree(
        &arbor_testkit::goldens::goldens_root().join("agents/claude/projects"),
        &h.join(".claude/projects"),
    );
    // /work/app: u1 → a1 ($1) → u2 → a2 ($2) [a branch left] and a1 → u3 → a3 ($4) (the
    // leaf), a compaction's usage entry ($0.5); turns on three days, Monday to Wednesday.
    let dir = session_dir(h, false, "/work/app");
    let a = dir.join("2026-01-05T09-00-00-000Z_aaaa.jsonl");
    let lines = [
        head("aaaa", "/work/app", None),
        user("u1", None, "2026-01-05T09:00:00.000Z"),
        asst("a1", "u1", "2026-01-05T09:10:00.000Z", "claude-x", 100, 1.0),
        user("u2", Some("a1"), "2026-01-06T14:00:00.000Z"),
        asst("a2", "u2", "2026-01-06T14:05:00.000Z", "claude-x", 200, 2.0),
        user("u3", Some("a1"), "2026-01-07T20:00:00.000Z"),
        asst("a3", "u3", "2026-01-07T20:30:00.000Z", "claude-y", 400, 4.0),
        r#"{"type":"usage","id":"s1","parentId":"a3","timestamp":"2026-01-07T21:00:00.000Z","kind":"compaction","provider":"anthropic","model":"claude-x","usage":{"input":50,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":55,"cost":{"total":0.5}}}"#.to_string(),
    ];
    std::fs::write(&a, lines.join("\n") + "\n").unwrap();
    // Its fork: the copied path to a1 (counted once), then its own turn ($8) weeks later.
    let b = dir.join("2026-02-02T09-00-00-000Z_bbbb.jsonl");
    let lines = [
        head("bbbb", "/work/app", Some(&a)),
        user("u1", None, "2026-01-05T09:00:00.000Z"),
        asst("a1", "u1", "2026-01-05T09:10:00.000Z", "claude-x", 100, 1.0),
        user("v1", Some("a1"), "2026-02-02T09:00:00.000Z"),
        asst("b1", "v1", "2026-02-02T09:15:00.000Z", "claude-y", 800, 8.0),
    ];
    std::fs::write(&b, lines.join("\n") + "\n").unwrap();
    // The second project (a real directory): a pi session and an omp one.
    let dir = session_dir(h, false, &proj_s);
    let lines = [
        head("cccc", &proj_s, None),
        user("w1", None, "2026-01-10T23:00:00.000Z"),
        asst("c1", "w1", "2026-01-10T23:30:00.000Z", "claude-x", 50, 0.25),
    ];
    std::fs::write(
        dir.join("2026-01-10T23-00-00-000Z_cccc.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    let dir = session_dir(h, true, &proj_s);
    let lines = [
        head("dddd", &proj_s, None),
        user("x1", None, "2026-01-11T08:00:00.000Z"),
        asst("d1", "x1", "2026-01-11T08:01:00.000Z", "claude-y", 70, 0.75),
    ];
    std::fs::write(
        dir.join("2026-01-11T08-00-00-000Z_dddd.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    UsageHome { home, proj }
}

impl UsageHome {
    /// The environment of `arbor` and `arbor serve` over this HOME.
    pub fn envs(&self) -> Vec<(&'static str, String)> {
        let h = self.home.path();
        vec![
            ("HOME", h.to_str().unwrap().to_string()),
            (
                "XDG_DATA_HOME",
                h.join(".local/share").to_str().unwrap().to_string(),
            ),
            (
                "ARBOR_CATALOG",
                h.join("catalog.db").to_str().unwrap().to_string(),
            ),
        ]
    }

    /// `arbor stats ARGS --json` in `cwd`, parsed.
    pub fn stats_in(&self, cwd: &Path, args: &[&str]) -> serde_json::Value {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbor"));
        cmd.arg("stats")
            .args(args)
            .arg("--json")
            .current_dir(cwd)
            .env("PWD", cwd)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CONFIG_DIR");
        for (k, v) in self.envs() {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        assert!(
            o.status.success(),
            "arbor stats {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
    }

    /// `arbor stats ARGS --json` in HOME.
    pub fn stats(&self, args: &[&str]) -> serde_json::Value {
        self.stats_in(self.home.path(), args)
    }
}
