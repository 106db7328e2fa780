//! pi 1.5.2's `SessionManager.list(cwd, sessionDir)`: a directory that is not `cwd`'s default
//! keeps only the sessions whose header `cwd` resolves to `cwd`. Expected answers recorded
//! from pi 1.5.2 on the same files (`list("/work/a", dir)` → s3 s2 s1).
use arbor_store::discover::list;

#[test]
fn a_shared_directory_is_filtered_by_cwd_as_pi_1_5_does() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    let cwds = [
        r#""/work/a""#,
        r#""/work/a/""#,
        r#""/work/a/../a""#,
        r#""/nowhere/proj""#,
        r#""""#,
        "null",
        r#""/work/b""#,
        r#""work/a""#,
    ];
    for (k, c) in cwds.iter().enumerate() {
        let n = k + 1;
        std::fs::write(
            shared.join(format!("s{n}.jsonl")),
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"s{n}\",\"timestamp\":\"2026-01-0{n}T00:00:00.000Z\",\"cwd\":{c}}}\n"
            ),
        )
        .expect("write");
    }
    let ids = |cwd: &str, dir: Option<&std::path::Path>| {
        list(cwd, dir, tmp.path())
            .into_iter()
            .map(|s| s.id.unwrap_or_default().trim_matches('"').to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("/work/a", Some(&shared)), ["s3", "s2", "s1"]);
    assert_eq!(ids("/work/b/", Some(&shared)), ["s7"]);
    // The cwd's own directory is not filtered: every session in it is listed.
    let own =
        arbor_store::paths::default_session_dir(arbor_core::Dialect::Pi, tmp.path(), "/work/z");
    std::fs::create_dir_all(&own).expect("mkdir");
    std::fs::copy(shared.join("s7.jsonl"), own.join("s7.jsonl")).expect("copy");
    assert_eq!(ids("/work/z", Some(&own)), ["s7"]);
    assert_eq!(ids("/work/z", None), ["s7"]);
}

/// The 70 sessions of `tools/goldens/pi15/list-nan.mjs`, byte for byte: every 7th (i % 7 == 3)
/// has a message timestamp of 9e15 ms, an Invalid Date, so its `modified` is NaN.
pub fn write_nan_sessions(dir: &std::path::Path) {
    for i in 0..70u64 {
        let id = format!("s{i:02}");
        let min = (i * 37) % 70;
        let hts = format!("2026-01-01T{:02}:{:02}:00.000Z", min / 60, min % 60);
        let mts = if i % 7 == 3 {
            9_000_000_000_000_000
        } else {
            1_767_225_600_000 + ((i * 53) % 70) * 60_000
        };
        let body = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{hts}\",\"cwd\":\"/p\"}}\n\
             {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"{hts}\",\"message\":{{\"role\":\"user\",\"content\":\"hi {id}\",\"timestamp\":{mts}}}}}\n"
        );
        std::fs::write(dir.join(format!("{id}.jsonl")), body).expect("write");
    }
}

/// Issue 22 gap: a NaN `modified` among 70 sessions. pi sorts with `b.modified - a.modified`
/// (NaN: "equal" to V8, not a total order); Rust's `sort_by` may panic on that comparator and
/// orders differently. `list` must neither panic nor differ from pi 1.5.2's recorded order
/// (`goldens/pi15/list-nan-modified.json`, made by `tools/goldens/pi15/list-nan.mjs`).
#[test]
fn a_nan_modified_among_70_sessions_is_listed_in_pis_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("nan");
    std::fs::create_dir(&dir).expect("mkdir");
    write_nan_sessions(&dir);
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../goldens/pi15/list-nan-modified.json"
    );
    let want: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(golden).expect("golden")).expect("json");
    let got: Vec<String> = arbor_store::discover::list_dir(&dir)
        .into_iter()
        .map(|s| s.id.unwrap_or_default().trim_matches('"').to_string())
        .collect();
    assert_eq!(got, want);
    assert!(
        arbor_store::discover::list_dir(&dir)
            .iter()
            .filter(|s| s.modified_ms.is_nan())
            .count()
            == 10,
        "the fixture has 10 NaN `modified`"
    );
}
