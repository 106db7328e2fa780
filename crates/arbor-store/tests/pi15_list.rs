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

/// Issue 22 gap: a NaN `modified` among 70 sessions (`goldens/pi15/list-nan/`, written by
/// `tools/goldens/pi15/list-nan.mjs`: every 7th has a message timestamp of 9e15 ms, an Invalid
/// Date). pi sorts with `b.modified - a.modified` (NaN: "equal" to V8, not a total order); Rust's
/// `sort_by` may panic on that comparator and orders differently. `list_dir` must neither panic
/// nor differ from pi 1.5.2's recorded order (`goldens/pi15/list-nan-modified.json`).
#[test]
fn a_nan_modified_among_70_sessions_is_listed_in_pis_order() {
    let goldens = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15");
    let want: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(goldens.join("list-nan-modified.json")).expect("golden"),
    )
    .expect("json");
    let listed = arbor_store::discover::list_dir(&goldens.join("list-nan"));
    assert_eq!(
        listed.iter().filter(|s| s.modified_ms.is_nan()).count(),
        10,
        "the fixture has 10 NaN `modified`"
    );
    let got: Vec<String> = listed
        .into_iter()
        .map(|s| s.id.unwrap_or_default().trim_matches('"').to_string())
        .collect();
    assert_eq!(got, want);
}
