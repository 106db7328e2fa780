//! pi 1.5's `buildSessionContext` on random sessions: arbor against a plain model of pi
//! 1.5.2's `buildSessionProjection` written here over `serde_json` values, line by line after
//! pi's JavaScript (`session-manager.js`: `buildSessionPath`, `buildContextEntries`,
//! `sessionEntryToContextMessages`, `projectContextEntry`). The goldens in `goldens/pi15`
//! tie both to the real pi; this test walks the combinations the goldens cannot enumerate
//! (edits of every kind of entry, edits before their targets, compactions keeping system
//! messages, null contents, branches), at every leaf.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::SessionDoc;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// One generated entry: its kind and the choices made for it.
#[derive(Debug, Clone)]
enum Op {
    User(bool),
    Assistant(bool),
    ToolResult,
    System(u8),
    Custom(u8),
    BranchSummary(bool),
    /// `firstKeptEntryId`: an earlier entry (by fraction) or its own id; with a system message.
    Compaction(Option<f64>, bool),
    /// Target (fraction of the entries so far, or past the end: a later or unknown id) and
    /// replacement: 0 null, 1 string, 2 blocks, 3 without content.
    Edit(f64, u8),
    /// Continue from an earlier entry (fraction) instead of the last one.
    Branch(f64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<bool>().prop_map(Op::User),
        4 => any::<bool>().prop_map(Op::Assistant),
        1 => Just(Op::ToolResult),
        2 => (0u8..4).prop_map(Op::System),
        1 => (0u8..3).prop_map(Op::Custom),
        1 => any::<bool>().prop_map(Op::BranchSummary),
        1 => (proptest::option::of(0.0f64..1.0), any::<bool>()).prop_map(|(k, s)| Op::Compaction(k, s)),
        3 => (0.0f64..1.2, 0u8..4).prop_map(|(t, r)| Op::Edit(t, r)),
        1 => (0.0f64..1.0).prop_map(Op::Branch),
    ]
}

fn pick(ids: &[String], f: f64) -> Option<&String> {
    let k = (f * ids.len() as f64) as usize;
    ids.get(k)
}

/// The session's entries (without the header) for a list of operations.
fn entries(ops: &[Op]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut parent: Option<String> = None;
    for (n, op) in ops.iter().enumerate() {
        let id = format!("e{n:04}");
        let ts = format!("2026-01-01T00:{:02}:{:02}.000Z", n / 60 % 60, n % 60);
        let mut e = Map::new();
        let body: Value = match op {
            Op::Branch(f) => {
                parent = pick(&ids, *f).cloned();
                continue;
            }
            Op::User(null) => json!({"type": "message", "message": if *null {
                json!({"role": "user", "content": null, "timestamp": n})
            } else {
                json!({"role": "user", "content": format!("u{n}"), "timestamp": n})
            }}),
            Op::Assistant(missing) => {
                let mut m = json!({"role": "assistant", "content": [{"type": "text", "text": format!("a{n}")}],
                    "provider": "p", "model": "m", "stopReason": "stop", "timestamp": n});
                if *missing {
                    m.as_object_mut().map(|o| o.shift_remove("content"));
                }
                json!({"type": "message", "message": m})
            }
            Op::ToolResult => {
                json!({"type": "message", "message": {"role": "toolResult", "toolCallId": "c",
                "toolName": "bash", "content": [{"type": "text", "text": format!("r{n}")}], "isError": false, "timestamp": n}})
            }
            Op::System(v) => json!({"type": "message", "message": match v {
                0 => json!({"role": "system", "content": format!("s{n}"), "timestamp": n}),
                1 => json!({"role": "system", "content": null, "sections": {"a": format!("x{n}")}, "timestamp": n}),
                2 => json!({"role": "system", "timestamp": n}),
                _ => json!({"role": "system", "content": "", "toolsAdded": [{"name": "t"}], "timestamp": n}),
            }}),
            Op::Custom(v) => {
                let mut c =
                    json!({"type": "custom_message", "customType": "note", "display": true});
                match v {
                    0 => c["content"] = json!(format!("c{n}")),
                    1 => c["content"] = Value::Null,
                    _ => {}
                }
                c
            }
            Op::BranchSummary(empty) => json!({"type": "branch_summary", "fromId": "root",
                "summary": if *empty { String::new() } else { format!("b{n}") }}),
            Op::Compaction(keep, sys) => {
                let fk = keep
                    .and_then(|f| pick(&ids, f).cloned())
                    .unwrap_or_else(|| id.clone());
                let mut c = json!({"type": "compaction", "summary": format!("S{n}"), "firstKeptEntryId": fk, "tokensBefore": n});
                if *sys {
                    c["systemMessage"] =
                        json!({"role": "system", "content": format!("folded{n}"), "timestamp": 5});
                }
                c
            }
            Op::Edit(t, r) => {
                let target = pick(&ids, *t)
                    .cloned()
                    .unwrap_or_else(|| format!("e{:04}", n + 1));
                let replacement = match r {
                    0 => Value::Null,
                    1 => json!({"content": format!("edited{n}")}),
                    2 => json!({"content": [{"type": "text", "text": format!("blocks{n}")}]}),
                    _ => json!({"other": 1}),
                };
                json!({"type": "context_edit", "targetId": target, "replacement": replacement})
            }
        };
        let Value::Object(body) = body else {
            unreachable!()
        };
        e.insert("type".into(), body["type"].clone());
        e.insert("id".into(), json!(id));
        e.insert(
            "parentId".into(),
            parent.clone().map_or(Value::Null, Value::String),
        );
        e.insert("timestamp".into(), json!(ts));
        for (k, v) in body {
            if k != "type" {
                e.insert(k, v);
            }
        }
        out.push(Value::Object(e));
        parent = Some(id.clone());
        ids.push(id);
    }
    out
}

fn ms(ts: &Value) -> Value {
    let s = ts.as_str().unwrap_or("");
    // 2026-01-01T00:MM:SS.000Z
    let (m, sec) = (&s[14..16], &s[17..19]);
    let base = 1_767_225_600_000i64;
    json!(base + (m.parse::<i64>().unwrap_or(0) * 60 + sec.parse::<i64>().unwrap_or(0)) * 1000)
}

/// `{...message, content}`: in place when present, else last.
fn with_content(mut m: Value, content: Option<Value>) -> Value {
    let o = m.as_object_mut().expect("object");
    match content {
        Some(c) => {
            if let Some(slot) = o.get_mut("content") {
                *slot = c;
            } else {
                o.insert("content".into(), c);
            }
        }
        None => {
            o.shift_remove("content");
        }
    }
    m
}

/// pi 1.5.2's `buildSessionProjection(entries, leafId).messages`.
fn model(entries: &[Value], leaf: &str) -> Vec<Value> {
    let by_id: HashMap<&str, &Value> = entries
        .iter()
        .map(|e| (e["id"].as_str().unwrap_or(""), e))
        .collect();
    let mut path = Vec::new();
    let mut cur = by_id.get(leaf).copied();
    while let Some(e) = cur {
        path.push(e);
        cur = e["parentId"].as_str().and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    let compaction = path
        .iter()
        .rev()
        .find(|e| e["type"] == "compaction")
        .copied();
    let context: Vec<&Value> = match compaction {
        None => path.clone(),
        Some(c) => {
            let cpos = path.iter().position(|e| e["id"] == c["id"]).unwrap_or(0);
            let mut v = vec![c];
            let mut found = false;
            for e in &path[..cpos] {
                if e["id"] == c["firstKeptEntryId"] {
                    found = true;
                }
                if found && !(e["type"] == "message" && e["message"]["role"] == "system") {
                    v.push(e);
                }
            }
            v.extend(path[cpos + 1..].iter().copied());
            v
        }
    };
    let mut edits: HashMap<&str, &Value> = HashMap::new();
    for e in &context {
        if e["type"] == "context_edit" {
            if let Some(t) = e["targetId"].as_str() {
                edits.insert(t, e);
            }
        }
    }
    let mut out = Vec::new();
    for (k, e) in context.iter().enumerate() {
        let msgs: Vec<Value> = match e["type"].as_str() {
            Some("message") => {
                let m = e["message"].clone();
                let role = m["role"].as_str().unwrap_or("");
                let null = m.get("content").is_none_or(Value::is_null);
                vec![match role {
                    "system" if null => with_content(m, Some(json!(""))),
                    "user" | "assistant" | "toolResult" if null => with_content(m, Some(json!([]))),
                    _ => m,
                }]
            }
            Some("custom_message") => {
                let mut c = json!({"role": "custom", "customType": e["customType"],
                    "content": if e.get("content").is_none_or(Value::is_null) { json!([]) } else { e["content"].clone() },
                    "display": e["display"]});
                if let Some(d) = e.get("details") {
                    c["details"] = d.clone();
                }
                c["timestamp"] = ms(&e["timestamp"]);
                vec![c]
            }
            Some("branch_summary") if e["summary"].as_str().is_some_and(|s| !s.is_empty()) => {
                vec![
                    json!({"role": "branchSummary", "summary": e["summary"], "fromId": e["fromId"], "timestamp": ms(&e["timestamp"])}),
                ]
            }
            Some("compaction") if k == 0 => {
                let s = json!({"role": "compactionSummary", "summary": e["summary"], "tokensBefore": e["tokensBefore"], "timestamp": ms(&e["timestamp"])});
                match e.get("systemMessage") {
                    Some(sys) => vec![sys.clone(), s],
                    None => vec![s],
                }
            }
            _ => vec![],
        };
        let edit = e["id"].as_str().and_then(|id| edits.get(id));
        match edit {
            None => out.extend(msgs),
            Some(ed) if ed["replacement"].is_null() => {}
            Some(ed) => {
                let r = &ed["replacement"];
                for m in msgs {
                    let role = m["role"].as_str().unwrap_or("").to_string();
                    if !matches!(
                        role.as_str(),
                        "user" | "assistant" | "toolResult" | "custom"
                    ) {
                        out.push(m);
                        continue;
                    }
                    let c = r.get("content").cloned();
                    let c = match (role.as_str(), c) {
                        ("assistant" | "toolResult", Some(Value::String(s))) => {
                            Some(json!([{"type": "text", "text": s}]))
                        }
                        (_, c) => c,
                    };
                    out.push(with_content(m, c));
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn arbor_builds_pi_1_5_contexts_as_the_model_does(ops in proptest::collection::vec(op(), 1..40)) {
        let entries = entries(&ops);
        let mut text = String::from(r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#);
        text.push('\n');
        for e in &entries {
            text.push_str(&serde_json::to_string(e).expect("json"));
            text.push('\n');
        }
        let doc = SessionDoc::parse(Arc::new(text.into_bytes())).expect("parse");
        for e in &entries {
            let id = e["id"].as_str().expect("id");
            let mut out = Vec::new();
            build_session_context(&doc, LeafSel::Id(id)).write_json(&doc, &mut out);
            let have: Value = serde_json::from_slice(&out).expect("arbor JSON");
            let want = Value::Array(model(&entries, id));
            prop_assert_eq!(&have["messages"], &want, "leaf {}", id);
        }
    }
}
