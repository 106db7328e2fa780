//! Sessions with secrets planted in random places and spellings, for the property tests
//! of redaction (`arbor-view/tests/redaction.rs`, `arbor-cli/tests/secrets_cli.rs`).
use proptest::prelude::*;

/// A pi header line (no newline).
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"01a2031c-aa28-755e-9ecf-bfbc78024bb1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// The bytes of a session with `lines` after `header`.
pub fn session(header: &str, lines: &[String]) -> String {
    let mut s = String::from(header);
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// A user message line whose content is the JSON `content_json`.
pub fn user(id: &str, parent: Option<&str>, content_json: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{content_json},"timestamp":1}}}}"#,
        parent.map_or("null".to_string(), |p| format!("\"{p}\""))
    )
}

/// A secret of one of the kinds, made from random characters.
pub fn secret() -> impl Strategy<Value = String> {
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
    // A shrunk value (`aaaaaaaaaaas`) is no longer random: only what the rules call a
    // secret is planted.
    .prop_filter("a secret by the rules", |s| {
        !arbor_view::secrets::find(s).is_empty()
    })
}

/// Where a secret goes, as a JSON string literal (already encoded).
#[derive(Debug, Clone)]
pub enum Spelling {
    Plain,
    /// The first character as `\u00XX`.
    Escaped,
    /// After a newline.
    AfterNewline,
    /// As the value of `"api_key"` in JSON text inside the string.
    JsonInJson,
}

pub fn literal(secret: &str, how: &Spelling) -> String {
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
pub fn body(secret: &str) -> String {
    let s = secret
        .rsplit(['_', '-', '=', ':', ' '])
        .next()
        .unwrap_or(secret);
    s.split('@').next().unwrap_or(s).to_string()
}

pub fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::Plain),
        Just(Spelling::Escaped),
        Just(Spelling::AfterNewline),
        Just(Spelling::JsonInJson),
    ]
}

/// A session with `plants` (secret, spelling, place 0..8) put in various places.
pub fn planted_session(plants: &[(String, Spelling, u8)]) -> String {
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
