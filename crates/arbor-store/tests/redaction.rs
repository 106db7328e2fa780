//! One scanner: what `arbor secrets` reports (`scan_doc`) is exactly what redaction
//! (`redact_doc`, used by `fork --redact` and every export) removes, wherever a secret sits
//! in a session (any string, any key, the header, omp's title slot) and however it is
//! spelled in JSON (`\uXXXX` escapes, JSON inside a JSON string, after a `\n`).
use arbor_core::SessionDoc;
use arbor_store::secrets::{find, redact_doc, redact_line, scan_doc, scan_line};
use proptest::prelude::*;
use std::sync::Arc;

fn doc(text: &str) -> SessionDoc {
    SessionDoc::parse(Arc::new(text.as_bytes().to_vec())).expect("a session")
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"01a2031c-aa28-755e-9ecf-bfbc78024bb1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// The bytes of a session with `lines` after the header.
fn session(header: &str, lines: &[String]) -> String {
    let mut s = String::from(header);
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

fn user(id: &str, parent: Option<&str>, content_json: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{content_json},"timestamp":1}}}}"#,
        parent.map_or("null".to_string(), |p| format!("\"{p}\""))
    )
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
    assert_eq!(scan.found[0].place, arbor_store::secrets::Place::TitleSlot);
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

/// A secret of one of the kinds, made from random characters.
fn secret() -> impl Strategy<Value = String> {
    let alnum = |n: usize| {
        proptest::collection::vec(
            prop::sample::select(
                "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
                    .chars()
                    .collect::<Vec<_>>(),
            ),
            n,
        )
        .prop_map(|v| v.into_iter().collect::<String>())
    };
    let hex = proptest::collection::vec(
        prop::sample::select("0123456789abcdef".chars().collect::<Vec<_>>()),
        32,
    )
    .prop_map(|v| v.into_iter().collect::<String>());
    prop_oneof![
        alnum(36).prop_map(|b| format!("ghp_{b}")),
        alnum(40).prop_map(|b| format!("sk-proj-{b}")),
        alnum(60).prop_map(|b| format!("sk-ant-oat01-{b}")),
        alnum(20).prop_map(|b| format!("glpat-{b}")),
        alnum(36).prop_map(|b| format!("npm_{b}")),
        alnum(34).prop_map(|b| format!("hf_{b}")),
        alnum(24).prop_map(|b| format!("xoxb-1234-{b}")),
        hex.prop_map(|h| format!("API_TOKEN={h}")),
        alnum(14).prop_map(|b| format!("postgres://app:{b}@db.internal/x")),
        alnum(30).prop_map(|b| format!("Authorization: Bearer {b}")),
        alnum(12).prop_map(|b| format!("DB_PASS={b}")),
    ]
}

/// Where a secret goes, as a JSON string literal (already encoded).
#[derive(Debug, Clone)]
enum Spelling {
    Plain,
    /// The first character as `\u00XX`.
    Escaped,
    /// After a newline.
    AfterNewline,
    /// As the value of `"api_key"` in JSON text inside the string.
    JsonInJson,
}

fn literal(secret: &str, how: &Spelling) -> String {
    let enc = |s: &str| {
        let mut out = Vec::new();
        arbor_core::json::write_str_escaped(s, &mut out);
        String::from_utf8(out).expect("utf-8")
    };
    match how {
        Spelling::Plain => enc(secret),
        Spelling::Escaped => {
            let first = secret.chars().next().unwrap_or('x');
            let rest = enc(&secret[first.len_utf8()..]);
            format!("\"\\u{:04x}{}", first as u32, &rest[1..])
        }
        Spelling::AfterNewline => enc(&format!("line one\n{secret} and more")),
        Spelling::JsonInJson => enc(&format!("{{\"api_key\": \"{secret}\"}}")),
    }
}

/// The random part of a secret that must not survive anywhere.
fn body(secret: &str) -> String {
    let s = secret
        .rsplit(['_', '-', '=', ':', ' '])
        .next()
        .unwrap_or(secret);
    s.split('@').next().unwrap_or(s).to_string()
}

fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::Plain),
        Just(Spelling::Escaped),
        Just(Spelling::AfterNewline),
        Just(Spelling::JsonInJson),
    ]
}

/// A session with `plants` (secret, spelling, place 0..8) put in various places.
fn planted_session(plants: &[(String, Spelling, u8)]) -> String {
    let mut cwd = "\"/p\"".to_string();
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    for (k, (s, how, place)) in plants.iter().enumerate() {
        let lit = literal(s, how);
        let id = format!("e{k:07}");
        let p = parent
            .as_deref()
            .map_or("null".to_string(), |p| format!("\"{p}\""));
        let line = match place {
            0 => user(&id, parent.as_deref(), &lit),
            1 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":{lit}}},{{"type":"toolCall","id":"c","name":{lit},"arguments":{{"command":{lit},"nested":{{"deeper":[{lit}]}}}}}}],"model":{lit},"stopReason":"error","errorMessage":{lit},"timestamp":2}}}}"#
            ),
            2 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":{lit},"content":[{{"type":"text","text":{lit}}}],"isError":false,"timestamp":2}}}}"#
            ),
            3 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"bashExecution","command":{lit},"output":{lit},"exitCode":0,"timestamp":2}}}}"#
            ),
            4 => format!(
                r#"{{"type":"session_info","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","name":{lit}}}"#
            ),
            5 => format!(
                r#"{{"type":"custom_message","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","customType":{lit},"content":{lit},"display":true}}"#
            ),
            6 => format!(
                r#"{{"type":"compaction","id":"{id}","parentId":{p},"timestamp":"2026-01-01T00:00:02.000Z","summary":{lit},"firstKeptEntryId":"{id}","tokensBefore":1}}"#
            ),
            _ if cwd == "\"/p\"" => {
                cwd = lit.clone();
                user(&id, parent.as_deref(), "\"hi\"")
            }
            _ => user(&id, parent.as_deref(), &lit),
        };
        lines.push(line);
        parent = Some(id);
    }
    let header = HEADER.replace("\"/p\"", &cwd);
    session(&header, &lines)
}

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
