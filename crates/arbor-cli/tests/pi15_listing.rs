//! `arbor ls --json` orders sessions with the same `modified` as pi 1.5.2's
//! `SessionManager.list` does: it reads the names sorted by `localeCompare`, descending, and
//! sorts stably by `modified` (arbor took the raw directory order before). The expected order
//! was recorded from pi 1.5.2 on these files (`SessionManager.list("/p", dir)`).
use std::path::Path;
use std::process::{Command, Output};

fn ls_json(home: &Path, dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["ls", "--json", "--dir"])
        .arg(dir)
        .env("HOME", home)
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor")
}

#[test]
fn sessions_with_the_same_modified_are_listed_in_pis_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).expect("mkdir");
    for id in ["b-1", "a_2", "C3", "a-2", "10x", "9x", "Ab", "aB"] {
        let body = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n\
             {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1767225601000}}}}\n"
        );
        std::fs::write(dir.join(format!("{id}.jsonl")), body).expect("write");
    }
    let out = ls_json(tmp.path(), &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let ids: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["C3", "b-1", "Ab", "aB", "a-2", "a_2", "9x", "10x"]);
}

/// pi 1.5.2 counts a user or assistant message's activity from the entry's `timestamp`
/// whatever its type (`new Date(entry.timestamp)`) when the message has no numeric timestamp;
/// 0.73.1 read only a string. Recorded from 1.5.2: `modified` 2027-01-15T08:00:00.000Z.
#[test]
fn a_numeric_entry_timestamp_counts_as_activity() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(
        dir.join("a.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"nts\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
         {\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":1800000000000,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )
    .expect("write");
    let out = ls_json(tmp.path(), &dir);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v[0]["modified"], "2027-01-15T08:00:00.000Z");
}
