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

/// A lone UTF-16 surrogate in a message text: pi keeps it in `firstMessage` and
/// `allMessagesText` (JSON.stringify writes it as `\ud83d`), and so does arbor, through the
/// catalog (texts stored as WTF-8), cold and after an append. The expected strings are what
/// pi 1.5.2's `SessionManager.list("/p", dir)` returned for this file, as JSON.stringify wrote
/// them (serde_json cannot hold a lone surrogate, so the bytes are compared).
#[test]
fn lone_surrogates_are_kept_in_the_listing_texts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).expect("mkdir");
    let file = dir.join("sur.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"0199a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"lone \ud83d high and \udc00 low, pair \ud83d\ude00","timestamp":1767225601000}}"#,
            "\n",
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"end \ud83d"},{"type":"text","text":"\ude00 start"}],"timestamp":1767225602000}}"#,
            "\n",
        ),
    )
    .expect("write");
    let ls = |all_text: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(["ls", "--json", "--dir"]).arg(&dir);
        if all_text {
            c.arg("--all-text");
        }
        let out = c
            .env("HOME", tmp.path())
            .env("ARBOR_CATALOG", tmp.path().join("catalog.db"))
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run arbor");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    };
    let first = "\"firstMessage\":\"lone \\ud83d high and \\udc00 low, pair \u{1F600}\"";
    let all = "\"allMessagesText\":\"lone \\ud83d high and \\udc00 low, pair \u{1F600} end \\ud83d \\ude00 start\"";
    let cold = ls(true);
    assert!(cold.contains(first) && cold.contains(all), "{cold}");
    assert!(ls(false).contains(first));
    // Appended text is read from where the catalog stopped.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    std::io::Write::write_all(
        &mut f,
        concat!(
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"more \udfff","timestamp":1767225603000}}"#,
            "\n"
        )
        .as_bytes(),
    )
    .expect("append");
    drop(f);
    let warm = ls(true);
    assert!(warm.contains(first), "{warm}");
    assert!(warm.contains(" start more \\udfff\""), "{warm}");
    // The table and a search show the surrogate as U+FFFD.
    let search = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["search", "high", "--dir"])
        .arg(&dir)
        .env("HOME", tmp.path())
        .env("ARBOR_CATALOG", tmp.path().join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor");
    let text = String::from_utf8(search.stdout).expect("UTF-8");
    assert!(text.contains("lone \u{FFFD} high"), "{text}");
}

/// Issue 22 gap: 70 sessions, 10 with a NaN `modified` (a message timestamp of 9e15 ms, an
/// Invalid Date): `goldens/pi15/list-nan/`, written by `tools/goldens/pi15/list-nan.mjs`. pi sorts with
/// `b.modified - a.modified` (NaN: "equal" to V8); `ls` and `ls --json` must not panic and
/// must list in pi 1.5.2's recorded order (`goldens/pi15/list-nan-modified.json`).
#[test]
fn a_nan_modified_among_70_sessions_is_listed_in_pis_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15/list-nan");
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../goldens/pi15/list-nan-modified.json"
    );
    let want: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(golden).expect("golden")).expect("json");
    // Twice: cold, then from the catalog.
    for _ in 0..2 {
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
        assert_eq!(ids, want);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["ls", "--dir"])
        .arg(&dir)
        .env("HOME", tmp.path())
        .env("ARBOR_CATALOG", tmp.path().join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "{stderr}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let shown: Vec<usize> = want
        .iter()
        .filter_map(|id| text.find(&format!("hi {id}")))
        .collect();
    assert_eq!(shown.len(), 70, "{text}");
    assert!(
        shown.windows(2).all(|w| w[0] < w[1]),
        "human order differs: {text}"
    );
}
