//! pi's SessionManager conformance checklist (research notes §10), through the Rust API.
use arbor_core::context::LeafSel;
use arbor_core::doc::Dialect;
use arbor_core::json::JsValue;
use arbor_store::{ManagerOptions, SessionManager, StoreError};
use serde_json::{json, Value};

fn user(text: &str) -> Vec<u8> {
    format!(
        r#"{{"role":"user","content":{},"timestamp":1}}"#,
        serde_json::to_string(text).unwrap()
    )
    .into_bytes()
}

fn assistant(text: &str) -> Vec<u8> {
    format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"provider":"anthropic","model":"claude-test","timestamp":2}}"#,
        serde_json::to_string(text).unwrap()
    )
    .into_bytes()
}

fn ctx_json(sm: &SessionManager, leaf: LeafSel<'_>) -> Value {
    let ctx = sm.build_context_for(leaf);
    let mut out = Vec::new();
    ctx.write_json(sm.doc(), &mut out);
    serde_json::from_slice(&out).unwrap()
}

fn texts(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(a) => a
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => m["summary"].as_str().unwrap_or("").to_string(),
        })
        .collect()
}

fn mem() -> SessionManager {
    SessionManager::in_memory("/p", Dialect::Pi)
}

#[test]
fn appends_chain_and_move_the_leaf() {
    let mut sm = mem();
    assert_eq!(sm.leaf_id(), None);
    let a = sm.append_message(&user("1")).unwrap();
    let t = sm.append_thinking_level_change("high").unwrap();
    let b = sm.append_message(&assistant("2")).unwrap();
    assert_eq!(sm.entry(&a).unwrap().parent_id, None);
    assert_eq!(sm.entry(&t).unwrap().parent_id.as_deref(), Some(a.as_str()));
    assert_eq!(sm.entry(&b).unwrap().parent_id.as_deref(), Some(t.as_str()));
    assert_eq!(sm.leaf_id(), Some(b.as_str()));
    let path: Vec<_> = sm
        .branch_path(None)
        .iter()
        .map(|e| e.id.clone().unwrap())
        .collect();
    assert_eq!(
        path,
        vec![
            a.clone().into_boxed_str(),
            t.into_boxed_str(),
            b.into_boxed_str()
        ]
    );
    assert_eq!(sm.branch_path(Some(&a)).len(), 1);
    let c = ctx_json(&sm, LeafSel::Current);
    assert_eq!(c["thinkingLevel"], "high");
    assert_eq!(
        c["model"],
        json!({"provider":"anthropic","modelId":"claude-test"})
    );
    assert_eq!(texts(&c), vec!["1", "2"]);
}

#[test]
fn branching_labels_and_unknown_ids() {
    let mut sm = mem();
    let m1 = sm.append_message(&user("m1")).unwrap();
    let m2 = sm.append_message(&assistant("m2")).unwrap();
    let _m3 = sm.append_message(&user("m3")).unwrap();
    sm.branch(&m2).unwrap();
    let m4 = sm.append_message(&user("m4-branch")).unwrap();
    assert_eq!(
        texts(&ctx_json(&sm, LeafSel::Current)),
        vec!["m1", "m2", "m4-branch"]
    );
    let tree = sm.tree();
    let i2 = sm.doc().index().get(&m2).unwrap();
    assert_eq!(tree.children[i2].len(), 2);
    assert!(
        matches!(sm.branch("nonexistent"), Err(StoreError::NotFound(ref id)) if id == "nonexistent")
    );
    assert_eq!(
        sm.branch("nonexistent").unwrap_err().to_string(),
        "Entry nonexistent not found"
    );
    // Labels: set, replace, clear with "" and with None; unknown target throws.
    sm.append_label_change(&m1, Some("checkpoint")).unwrap();
    assert_eq!(sm.label(&m1), Some("checkpoint"));
    sm.append_label_change(&m1, Some("third")).unwrap();
    assert_eq!(sm.label(&m1), Some("third"));
    sm.append_label_change(&m1, Some("")).unwrap();
    assert_eq!(sm.label(&m1), None);
    sm.append_label_change(&m1, Some("again")).unwrap();
    sm.append_label_change(&m1, None).unwrap();
    assert_eq!(sm.label(&m1), None);
    assert_eq!(
        sm.append_label_change("non-existent", Some("x"))
            .unwrap_err()
            .to_string(),
        "Entry non-existent not found"
    );
    // Label entries are tree nodes on the leaf but never messages.
    assert_eq!(
        texts(&ctx_json(&sm, LeafSel::Current)),
        vec!["m1", "m2", "m4-branch"]
    );
    assert_eq!(
        sm.entry(&m4).unwrap().parent_id.as_deref(),
        Some(m2.as_str())
    );
    // resetLeaf: the next append is a new root and the null leaf gives the empty context.
    sm.reset_leaf();
    assert_eq!(
        ctx_json(&sm, LeafSel::Null),
        json!({"messages":[],"thinkingLevel":"off","model":null,"models":{},"injectedTtsrRules":[],"mode":"none"})
    );
    let r = sm.append_message(&user("root2")).unwrap();
    assert_eq!(sm.entry(&r).unwrap().parent_id, None);
}

#[test]
fn branch_with_summary_and_compaction_context() {
    let mut sm = mem();
    let ids: Vec<String> = (1..=4)
        .map(|i| {
            if i % 2 == 1 {
                sm.append_message(&user(&format!("{i}"))).unwrap()
            } else {
                sm.append_message(&assistant(&format!("{i}"))).unwrap()
            }
        })
        .collect();
    sm.append_compaction("First summary", &ids[2], 1000.0, None, None)
        .unwrap();
    sm.append_message(&user("6")).unwrap();
    sm.append_message(&assistant("7")).unwrap();
    let c = ctx_json(&sm, LeafSel::Current);
    assert_eq!(texts(&c), vec!["First summary", "3", "4", "6", "7"]);
    assert_eq!(c["messages"][0]["role"], "compactionSummary");
    assert_eq!(c["messages"][0]["tokensBefore"], 1000);
    // Branch with summary from id1: fromId equals the parent (pi's code), leaf moves to it.
    let bs = sm
        .branch_with_summary(Some(&ids[0]), "explored A", None, Some(false))
        .unwrap();
    assert_eq!(sm.leaf_id(), Some(bs.as_str()));
    let line = String::from_utf8(sm.entry_line(&bs).unwrap().to_vec()).unwrap();
    assert!(
        line.contains(&format!(r#""parentId":"{}","timestamp":"#, ids[0])),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            r#""fromId":"{}","summary":"explored A","fromHook":false}}"#,
            ids[0]
        )),
        "{line}"
    );
    let c = ctx_json(&sm, LeafSel::Current);
    assert_eq!(c["messages"][1]["role"], "branchSummary");
    assert_eq!(c["messages"][1]["fromId"], ids[0].as_str());
    let root = sm
        .branch_with_summary(
            None,
            "from root",
            Some(&JsValue::parse(br#"{"a":1}"#).unwrap()),
            None,
        )
        .unwrap();
    let line = String::from_utf8(sm.entry_line(&root).unwrap().to_vec()).unwrap();
    assert!(
        line.contains(r#""parentId":null"#)
            && line.contains(r#""fromId":"root","summary":"from root","details":{"a":1}}"#),
        "{line}"
    );
    assert!(sm
        .branch_with_summary(Some("nonexistent"), "x", None, None)
        .is_err());
}

#[test]
fn create_branched_session_keeps_path_and_its_labels() {
    let mut sm = mem();
    let m1 = sm.append_message(&user("m1")).unwrap();
    let m2 = sm.append_message(&assistant("m2")).unwrap();
    let m3 = sm.append_message(&user("m3")).unwrap();
    sm.append_label_change(&m2, Some("L2")).unwrap();
    sm.append_label_change(&m1, Some("L1")).unwrap();
    sm.append_label_change(&m3, Some("L3")).unwrap();
    sm.append_label_change(&m2, Some("L2b")).unwrap();
    assert_eq!(sm.create_branched_session(&m2).unwrap(), None);
    let types: Vec<_> = sm
        .entries()
        .iter()
        .map(|e| e.type_name().to_string())
        .collect();
    assert_eq!(types, vec!["message", "message", "label", "label"]);
    // Map order: m2 was labelled first and keeps its place.
    assert_eq!(sm.label(&m2), Some("L2b"));
    assert_eq!(sm.label(&m1), Some("L1"));
    assert_eq!(sm.label(&m3), None);
    let l = String::from_utf8(sm.doc().entry_line(2).to_vec()).unwrap();
    assert!(
        l.contains(&format!(r#""parentId":"{m2}""#)) && l.contains(r#""label":"L2b""#),
        "{l}"
    );
    assert!(matches!(
        sm.create_branched_session("nonexistent"),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn pi_key_orders_for_every_append_method() {
    let mut sm = mem();
    sm.append_model_change("anthropic", "claude").unwrap();
    sm.append_custom_entry("ext", None).unwrap();
    sm.append_custom_entry("ext2", Some(&JsValue::parse(br#"{"x":1}"#).unwrap()))
        .unwrap();
    sm.append_custom_message_entry("ct", &JsValue::String("content".into()), true, None)
        .unwrap();
    sm.append_session_info("  My Name  ").unwrap();
    let u = sm.append_message(&user("hi")).unwrap();
    sm.append_compaction(
        "sum2",
        &u,
        100.0,
        Some(&JsValue::parse(br#"{"readFiles":[]}"#).unwrap()),
        Some(true),
    )
    .unwrap();
    let lines: Vec<String> = (0..sm.entries().len())
        .map(|i| String::from_utf8(sm.doc().entry_line(i).to_vec()).unwrap())
        .collect();
    let shape = |l: &str| -> Vec<String> {
        let v: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
        v.keys().cloned().collect()
    };
    assert_eq!(
        shape(&lines[0]),
        ["type", "id", "parentId", "timestamp", "provider", "modelId"]
    );
    assert_eq!(
        shape(&lines[1]),
        ["type", "customType", "id", "parentId", "timestamp"]
    );
    assert_eq!(
        shape(&lines[2]),
        ["type", "customType", "data", "id", "parentId", "timestamp"]
    );
    assert_eq!(
        shape(&lines[3]),
        [
            "type",
            "customType",
            "content",
            "display",
            "id",
            "parentId",
            "timestamp"
        ]
    );
    assert_eq!(
        shape(&lines[4]),
        ["type", "id", "parentId", "timestamp", "name"]
    );
    assert!(lines[4].ends_with(r#""name":"My Name"}"#));
    assert_eq!(sm.session_name().as_deref(), Some("My Name"));
    assert_eq!(
        shape(&lines[6]),
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "details",
            "fromHook"
        ]
    );
}

#[test]
fn deferred_persistence_writes_once_the_conversation_starts() {
    // pi 1.5's `_hasConversation`: setup entries (a model, a system prompt) stay in memory;
    // the first user or assistant message writes everything (0.73.1 waited for an assistant
    // message, so a first prompt whose turn never completed was lost).
    let tmp = tempfile::tempdir().unwrap();
    let opts = ManagerOptions {
        deferred: true,
        ..Default::default()
    };
    let mut sm = SessionManager::create("/p", Some(tmp.path()), opts.clone()).unwrap();
    let path = sm.session_file().unwrap().to_path_buf();
    sm.append_model_change("p", "m").unwrap();
    sm.append_message(br#"{"role":"system","content":"be brief","timestamp":1}"#)
        .unwrap();
    assert!(!path.exists(), "nothing on disk before the conversation");
    sm.append_message(&user("hi")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 4);
    sm.append_message(&assistant("hello")).unwrap();
    sm.append_message(&user("more")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert_eq!(text.matches(r#""type":"session""#).count(), 1);
    drop(sm);
    // A header-only file opened and continued (pi writes the header twice here).
    let p2 = tmp.path().join("h.jsonl");
    std::fs::write(&p2, "{\"type\":\"session\",\"version\":3,\"id\":\"H\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n").unwrap();
    let mut sm = SessionManager::open(&p2, opts).unwrap();
    sm.append_message(&user("u")).unwrap();
    sm.append_message(&assistant("a")).unwrap();
    let text = std::fs::read_to_string(&p2).unwrap();
    assert_eq!(text.matches(r#""type":"session""#).count(), 1, "{text}");
    assert_eq!(text.lines().count(), 3);
}

#[test]
fn a_last_line_without_newline_is_never_glued_to() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("s.jsonl");
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"H\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}";
    let m = "{\"type\":\"message\",\"id\":\"aaaaaaaa\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}";
    std::fs::write(&p, format!("{header}\n{m}")).unwrap();
    let mut sm = SessionManager::open(&p, ManagerOptions::default()).unwrap();
    let id = sm.append_message(&assistant("y")).unwrap();
    drop(sm);
    let doc = arbor_store::load_doc(&p).unwrap();
    assert!(doc.report().is_clean(), "{:?}", doc.report());
    assert_eq!(doc.entries().len(), 2);
    assert_eq!(doc.entries()[1].id.as_deref(), Some(id.as_str()));
    assert_eq!(doc.entries()[1].parent_id.as_deref(), Some("aaaaaaaa"));
}

#[test]
fn fork_from_migrates_the_source() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("v1.jsonl");
    std::fs::write(
        &src,
        concat!(
            "{\"type\":\"session\",\"id\":\"S1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}}\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\",\"timestamp\":2}}\n",
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let sm = SessionManager::fork_from(&src, "/q", Some(&out), ManagerOptions::default()).unwrap();
    assert_eq!(sm.entries().len(), 2);
    assert!(sm.entries().iter().all(|e| e.id.is_some()));
    assert_eq!(texts(&ctx_json(&sm, LeafSel::Current)).len(), 2);
    let header = String::from_utf8(sm.header().to_vec()).unwrap();
    assert!(
        header.contains(r#""cwd":"/q","parentSession":""#),
        "{header}"
    );
    // The source is untouched.
    assert!(std::fs::read_to_string(&src)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("{\"type\":\"message\",\"timestamp\""));
}
