//! One scanner: what `arbor secrets` reports (`scan_doc`) is exactly what redaction
//! (`redact_doc`, used by `fork --redact` and every export) removes, wherever a secret sits
//! in a session (any string, any key, the header, omp's title slot) and however it is
//! spelled in JSON (`\uXXXX` escapes, JSON inside a JSON string, after a `\n`).
use arbor_core::SessionDoc;
use arbor_view::secrets::{find, redact_doc, redact_line, scan_doc, scan_line};
use proptest::prelude::*;
use std::sync::Arc;

use arbor_testkit::planted::{body, planted_session, secret, session, spelling, user, HEADER};

fn doc(text: &str) -> SessionDoc {
    SessionDoc::parse(Arc::new(text.as_bytes().to_vec())).expect("a session")
}

const GHP: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
const PROJ: &str = "sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9";

/// Every spelling the raw-text redactor of `fork --redact` and the re-serialised export
/// missed: each is found by the scanner and gone after redaction.
#[test]
fn every_spelling_and_every_place_is_found_and_redacted() {
    let lines = vec![
        // A token that starts a line inside a message.
        user("a1", None, &format!(r#""see\n{GHP} there""#)),
        // A JSON-escaped token.
        user("a2", Some("a1"), &format!(r#""key \u0073{}""#, &PROJ[1..])),
        // Tool-call arguments that are JSON inside JSON.
        format!(
            r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c1","name":"write","arguments":{{"path":"cfg.json","content":"{{\"api_key\": \"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc\"}}"}}}}],"model":"m","timestamp":2}}}}"#
        ),
        // A secret as an object key, and one under a secret-like member name.
        format!(
            r#"{{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c2","name":"{GHP}","arguments":{{"{GHP}":1,"password":"Tr0ub4dor3xQ"}}}}],"model":"{PROJ}","timestamp":3}}}}"#
        ),
        // The session name.
        format!(
            r#"{{"type":"session_info","id":"a5","parentId":"a4","timestamp":"2026-01-01T00:00:04.000Z","name":"deploy {GHP}"}}"#
        ),
    ];
    let header = HEADER.replace("\"/p\"", &format!("\"/home/u/{GHP}\""));
    let text = session(&header, &lines);
    let mut d = doc(&text);
    let scan = scan_doc(&d);
    assert!(scan.unscanned.is_empty(), "{:?}", scan.unscanned);
    let kinds: Vec<(usize, &str, &str)> = scan
        .found
        .iter()
        .map(|f| (f.line, f.path.as_str(), f.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (1, "cwd", "github-token"),
            (2, "message.content", "github-token"),
            (3, "message.content", "openai-key"),
            (4, "message.content[0].arguments.content", "generic-secret"),
            (5, "message.content[0].name", "github-token"),
            (
                5,
                "message.content[0].arguments.[REDACTED:github-token]",
                "github-token"
            ),
            (5, "message.content[0].arguments.password", "password"),
            (5, "message.model", "openai-key"),
            (6, "name", "github-token"),
        ],
        "every place, the key masked in its path"
    );
    let n = redact_doc(&mut d, None).expect("redact");
    assert_eq!(
        n,
        scan.found.len(),
        "redaction removes exactly what is reported"
    );
    assert!(scan_doc(&d).found.is_empty(), "nothing left to report");
    assert_eq!(
        d.header_str("cwd").as_deref(),
        Some("/home/u/[REDACTED:github-token]")
    );
    assert_eq!(
        d.session_name().as_deref(),
        Some("deploy [REDACTED:github-token]")
    );
    let mut all = d.header_line().to_vec();
    for i in 0..d.entries().len() {
        all.extend_from_slice(d.entry_line(i));
    }
    let all = String::from_utf8_lossy(&all);
    for gone in [
        &GHP[4..],
        &PROJ[8..],
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc",
        "Tr0ub4dor3xQ",
    ] {
        assert!(!all.contains(gone), "{gone} survived: {all}");
    }
    // The tree is intact.
    assert_eq!(d.entries().len(), 5);
    assert_eq!(d.index().leaf, Some(4));
}

#[test]
fn omps_title_slot_is_scanned_and_redacted() {
    let slot = arbor_core::title::serialize_title_slot(
        Some(&format!("fix {GHP}")),
        None,
        "2026-01-01T00:00:00.000Z",
    )
    .expect("slot");
    let mut text = String::from_utf8(slot).expect("utf-8");
    text.push_str(&session(HEADER, &[user("a1", None, "\"hi\"")]));
    let mut d = doc(&text);
    assert!(d.title_slot().is_some(), "an omp file");
    let scan = scan_doc(&d);
    assert_eq!(scan.found.len(), 1, "{:?}", scan.found);
    assert_eq!(scan.found[0].line, 1);
    assert_eq!(scan.found[0].place, arbor_view::secrets::Place::TitleSlot);
    assert_eq!(redact_doc(&mut d, None).expect("redact"), 1);
    assert_eq!(
        d.session_name().as_deref(),
        Some("fix [REDACTED:github-token]")
    );
}

/// A line nested 100 000 levels deep: the walkers are iterative (the recursive ones died of
/// a stack overflow, exit 134). Run on a thread with a small stack to make the point.
#[test]
fn deep_nesting_does_not_exhaust_the_stack() {
    let depth = 100_000;
    let line = format!(
        r#"{{"type":"message","deep":{}"{GHP}"{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let found = scan_line(line.as_bytes()).expect("json");
            assert_eq!(found.len(), 1);
            assert!(found[0].path.len() < 400, "the path is abridged");
            let (clean, n) = redact_line(line.as_bytes())
                .expect("json")
                .expect("redacted");
            assert_eq!(n, 1);
            assert!(!String::from_utf8_lossy(&clean).contains(GHP));
            assert!(scan_line(&clean).expect("json").is_empty());
        })
        .expect("thread");
    t.join().expect("no stack overflow");
}

/// A secret-shaped key that redacts to the same text as another key keeps both members.
#[test]
fn redacted_keys_stay_distinct() {
    let other = "ghp_zZ3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY9";
    let line = format!(r#"{{"{GHP}":1,"{other}":2}}"#);
    let (clean, n) = redact_line(line.as_bytes())
        .expect("json")
        .expect("redacted");
    assert_eq!(n, 2);
    let v = arbor_core::json::JsValue::parse(&clean).expect("json");
    let arbor_core::json::JsValue::Object(m) = &v else {
        panic!("an object")
    };
    assert_eq!(m.len(), 2, "{}", String::from_utf8_lossy(&clean));
}

/// Lines that are not JSON are reported as not scanned (by line), never silently skipped.
#[test]
fn a_malformed_line_is_not_scanned_and_says_so() {
    let text = session(
        HEADER,
        &[user("a1", None, "\"hi\""), format!("{{\"x\": \"{GHP}")],
    );
    let mut text = text;
    text.push_str(&user("a2", Some("a1"), "\"after\""));
    text.push('\n');
    let d = doc(&text);
    let scan = scan_doc(&d);
    assert_eq!(scan.unscanned.len(), 1, "{:?}", scan.unscanned);
    assert_eq!(scan.unscanned[0].line, 3);
    assert!(
        !scan.unscanned[0].problem.contains("ghp_"),
        "never the text"
    );
}

// ----- the property: nothing `secrets` reports survives redaction ---------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// After `redact_doc`, `scan_doc` finds nothing, it removed exactly as many as were
    /// reported, and no planted secret's random part is left in any line.
    #[test]
    fn nothing_reported_survives_redaction(
        plants in proptest::collection::vec((secret(), spelling(), 0u8..8), 1..6)
    ) {
        let text = planted_session(&plants);
        let mut d = doc(&text);
        let before = scan_doc(&d);
        prop_assert!(before.unscanned.is_empty(), "{:?}", before.unscanned);
        prop_assert!(before.found.len() >= plants.len(), "every plant is found: {:?}", before.found);
        let n = redact_doc(&mut d, None).expect("redact");
        prop_assert_eq!(n, before.found.len());
        let after = scan_doc(&d);
        prop_assert!(after.found.is_empty(), "{:?}", after.found);
        let mut all = d.header_line().to_vec();
        for i in 0..d.entries().len() {
            all.extend_from_slice(d.entry_line(i));
            all.push(b'\n');
        }
        let all = String::from_utf8_lossy(&all).into_owned();
        for (s, _, _) in &plants {
            prop_assert!(!all.contains(&body(s)), "{} survived in {}", s, all);
        }
        prop_assert!(find(&all).is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `fork --redact` (whole session, and a branch up to the last entry): the new file
    /// holds no planted secret, `scan_doc` finds nothing in it, and the source is untouched.
    #[test]
    fn a_redacted_fork_holds_nothing_secrets_reports(
        plants in proptest::collection::vec((secret(), spelling(), 0u8..8), 1..5),
        branch in proptest::bool::ANY,
    ) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = tmp.path().join("s.jsonl");
        let text = planted_session(&plants);
        std::fs::write(&src, &text).expect("write");
        let last = format!("e{:07}", plants.len() - 1);
        let (sm, n) = arbor_view::fork_redacted(
            &src,
            branch.then_some(last.as_str()),
            None,
            arbor_store::ManagerOptions::default(),
        )
        .expect("fork");
        let path = sm.session_file().expect("a file").to_path_buf();
        sm.close().expect("close");
        prop_assert!(n >= plants.len());
        let bytes = std::fs::read_to_string(&path).expect("read");
        for (s, _, _) in &plants {
            prop_assert!(!bytes.contains(&body(s)), "{} survived in {}", s, bytes);
        }
        let copy = arbor_store::load_doc(&path).expect("load");
        let scan = scan_doc(&copy);
        prop_assert!(scan.found.is_empty() && scan.unscanned.is_empty(), "{:?}", scan);
        prop_assert_eq!(std::fs::read_to_string(&src).expect("src"), text);
        prop_assert!(!path.with_extension("jsonl.lock").exists(), "no lock left");
    }
}

/// A second `type: "session"` line (pi's duplicate-header bug) is not an entry, but it is in
/// the file: its secrets are reported.
#[test]
fn a_duplicate_header_line_is_scanned() {
    let dup = HEADER.replace("\"/p\"", &format!("\"/home/{GHP}\""));
    let text = session(HEADER, &[user("a1", None, "\"hi\""), dup]);
    let d = doc(&text);
    assert_eq!(d.report().extra_headers, vec![3]);
    let scan = scan_doc(&d);
    assert_eq!(scan.found.len(), 1, "{:?}", scan.found);
    assert_eq!(scan.found[0].line, 3);
    assert_eq!(scan.found[0].path, "cwd");
}
