//! pi's SessionManager checklist (research notes §10) on a session kept in a store: what
//! `tests/manager_api.rs` checks of the manager, run against every backend. Each check then
//! reopens the session from the store and compares it with the manager's own view (the same
//! lines, the same context).
use super::{e2s, user, Check, Fresh};
use crate::{ManagerOptions, SessionManager, StoreError};
use arbor_core::context::LeafSel;
use arbor_core::json::JsValue;
use std::time::Duration;

/// `Err` naming the line when the two sides differ.
macro_rules! check_eq {
    ($a:expr, $b:expr) => {{
        match (&$a, &$b) {
            (a, b) => {
                if a != b {
                    return Err(format!("line {}: {:?} != {:?}", line!(), a, b));
                }
            }
        }
    }};
}

/// `Err` naming the line when the condition does not hold.
macro_rules! check {
    ($c:expr) => {{
        if !$c {
            return Err(format!("line {}: {}", line!(), stringify!($c)));
        }
    }};
    ($c:expr, $($what:tt)+) => {{
        if !$c {
            return Err(format!("line {}: {}", line!(), format!($($what)+)));
        }
    }};
}

fn assistant(text: &str) -> Vec<u8> {
    let mut s = br#"{"role":"assistant","content":[{"type":"text","text":"#.to_vec();
    s.extend_from_slice(super::json_str(text).as_bytes());
    s.extend_from_slice(br#"}],"provider":"anthropic","model":"claude-test","timestamp":2}"#);
    s
}

fn ctx(sm: &SessionManager, leaf: LeafSel<'_>) -> Result<JsValue, String> {
    let mut out = Vec::new();
    sm.build_context_for(leaf).write_json(sm.doc(), &mut out);
    JsValue::parse(&out).map_err(e2s)
}

/// The same JSON (compared in its serialized form).
fn same_json(v: Option<&JsValue>, want: &str) -> bool {
    match (v, JsValue::parse(want.as_bytes())) {
        (Some(v), Ok(w)) => v.to_json() == w.to_json(),
        _ => false,
    }
}

fn str_of(v: Option<&JsValue>) -> Option<String> {
    v.and_then(|v| v.as_str_lossy()).map(|s| s.into_owned())
}

/// Each context message's text (a string content, text blocks joined, or a summary).
fn texts(v: &JsValue) -> Vec<String> {
    let Some(JsValue::Array(msgs)) = v.get("messages") else {
        return Vec::new();
    };
    msgs.iter()
        .map(|m| match m.get("content") {
            Some(JsValue::String(s)) => s.to_string_lossy().into_owned(),
            Some(JsValue::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| str_of(b.get("text")))
                .collect::<Vec<_>>()
                .join(""),
            _ => str_of(m.get("summary")).unwrap_or_default(),
        })
        .collect()
}

/// The keys of a line's object, in order.
fn keys(line: &[u8]) -> Vec<String> {
    match &JsValue::parse(line) {
        Ok(JsValue::Object(members)) => members
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect(),
        _ => Vec::new(),
    }
}

fn line_of(sm: &SessionManager, id: &str) -> String {
    String::from_utf8_lossy(sm.entry_line(id).unwrap_or_default()).into_owned()
}

/// Makes a new, empty session manager (`cwd` `/p`).
pub type Make<'a> = &'a dyn Fn() -> Result<SessionManager, String>;

type ChecklistFn = fn(Make<'_>) -> Check;

/// A manager of a new session in a fresh store of `fresh`.
pub(super) fn in_store(fresh: Fresh<'_>) -> Result<SessionManager, String> {
    SessionManager::create_in(
        fresh(Duration::from_secs(30)),
        "/p",
        ManagerOptions::default(),
    )
    .map_err(e2s)
}

/// Runs the checklist on managers from `make`: kept in a store (each check then reopens the
/// session from it), or not (`SessionManager::in_memory`).
///
/// # Errors
/// The failed check's name and what it found.
pub fn run(make: Make<'_>) -> Check {
    let checks: [(&str, ChecklistFn); 5] = [
        (
            "appends_chain_and_move_the_leaf",
            appends_chain_and_move_the_leaf,
        ),
        (
            "branching_labels_and_unknown_ids",
            branching_labels_and_unknown_ids,
        ),
        (
            "branch_with_summary_and_compaction_context",
            branch_with_summary_and_compaction_context,
        ),
        (
            "create_branched_session_keeps_path_and_its_labels",
            create_branched_session_keeps_path_and_its_labels,
        ),
        (
            "pi_key_orders_for_every_append_method",
            pi_key_orders_for_every_append_method,
        ),
    ];
    for (name, check) in checks {
        check(make).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// The session reopened from its store has the manager's lines and context.
fn reopens_the_same(sm: SessionManager) -> Check {
    let Some(store) = sm.store() else {
        return Ok(());
    };
    let id = sm.session_id();
    let want_lines: Vec<Vec<u8>> = sm
        .doc()
        .title_slot()
        .map(|s| sm.doc().line(&s.line).to_vec())
        .into_iter()
        .chain(std::iter::once(sm.header().to_vec()))
        .chain((0..sm.entries().len()).map(|i| sm.doc().entry_line(i).to_vec()))
        .collect();
    let mut want_ctx = Vec::new();
    sm.build_session_context()
        .write_json(sm.doc(), &mut want_ctx);
    drop(sm);
    let stored = store.read(&id, 0).map_err(e2s)?;
    check!(
        stored == want_lines,
        "the store holds {} lines, the manager {}",
        stored.len(),
        want_lines.len()
    );
    let again = SessionManager::open_in(store, &id, ManagerOptions::default().with_read_only(true))
        .map_err(e2s)?;
    let mut got_ctx = Vec::new();
    again
        .build_session_context()
        .write_json(again.doc(), &mut got_ctx);
    check!(
        got_ctx == want_ctx,
        "the reopened session's context differs"
    );
    Ok(())
}

/// Appends chain on the leaf; the path and the context follow (thinking level, model).
fn appends_chain_and_move_the_leaf(make: Make<'_>) -> Check {
    let mut sm = make()?;
    check_eq!(sm.leaf_id(), None);
    let a = sm.append_message(&user("1")).map_err(e2s)?;
    let t = sm.append_thinking_level_change("high").map_err(e2s)?;
    let b = sm.append_message(&assistant("2")).map_err(e2s)?;
    let parent = |sm: &SessionManager, id: &str| {
        sm.entry(id)
            .and_then(|e| e.parent_id.as_deref().map(str::to_string))
    };
    check_eq!(parent(&sm, &a), None);
    check_eq!(parent(&sm, &t), Some(a.clone()));
    check_eq!(parent(&sm, &b), Some(t.clone()));
    check_eq!(sm.leaf_id(), Some(b.as_str()));
    let path: Vec<String> = sm
        .branch_path(None)
        .iter()
        .filter_map(|e| e.id.as_deref().map(str::to_string))
        .collect();
    check_eq!(path, vec![a.clone(), t, b]);
    check_eq!(sm.branch_path(Some(&a)).len(), 1);
    let c = ctx(&sm, LeafSel::Current)?;
    check_eq!(str_of(c.get("thinkingLevel")).as_deref(), Some("high"));
    check!(same_json(
        c.get("model"),
        r#"{"provider":"anthropic","modelId":"claude-test"}"#
    ));
    check_eq!(texts(&c), vec!["1", "2"]);
    reopens_the_same(sm)
}

/// Branching, labels (set, replace, clear), unknown ids refused, the null leaf.
fn branching_labels_and_unknown_ids(make: Make<'_>) -> Check {
    let mut sm = make()?;
    let m1 = sm.append_message(&user("m1")).map_err(e2s)?;
    let m2 = sm.append_message(&assistant("m2")).map_err(e2s)?;
    sm.append_message(&user("m3")).map_err(e2s)?;
    sm.branch(&m2).map_err(e2s)?;
    let m4 = sm.append_message(&user("m4-branch")).map_err(e2s)?;
    check_eq!(
        texts(&ctx(&sm, LeafSel::Current)?),
        vec!["m1", "m2", "m4-branch"]
    );
    let tree = sm.tree();
    let i2 = sm.doc().index().get(&m2).ok_or("m2 not indexed")?;
    check_eq!(tree.children[i2].len(), 2);
    check!(
        matches!(sm.branch("nonexistent"), Err(StoreError::NotFound(ref id)) if id == "nonexistent")
    );
    check_eq!(
        sm.branch("nonexistent").err().map(|e| e.to_string()),
        Some("Entry nonexistent not found".to_string())
    );
    sm.append_label_change(&m1, Some("checkpoint"))
        .map_err(e2s)?;
    check_eq!(sm.label(&m1), Some("checkpoint"));
    sm.append_label_change(&m1, Some("third")).map_err(e2s)?;
    check_eq!(sm.label(&m1), Some("third"));
    sm.append_label_change(&m1, Some("")).map_err(e2s)?;
    check_eq!(sm.label(&m1), None);
    sm.append_label_change(&m1, Some("again")).map_err(e2s)?;
    sm.append_label_change(&m1, None).map_err(e2s)?;
    check_eq!(sm.label(&m1), None);
    check_eq!(
        sm.append_label_change("non-existent", Some("x"))
            .err()
            .map(|e| e.to_string()),
        Some("Entry non-existent not found".to_string())
    );
    check_eq!(
        texts(&ctx(&sm, LeafSel::Current)?),
        vec!["m1", "m2", "m4-branch"]
    );
    check_eq!(
        sm.entry(&m4)
            .and_then(|e| e.parent_id.as_deref().map(str::to_string)),
        Some(m2)
    );
    sm.reset_leaf();
    check!(same_json(
        Some(&ctx(&sm, LeafSel::Null)?),
        r#"{"messages":[],"thinkingLevel":"off","model":null,"models":{},"injectedTtsrRules":[],"mode":"none"}"#
    ));
    let r = sm.append_message(&user("root2")).map_err(e2s)?;
    check!(sm.entry(&r).is_some_and(|e| e.parent_id.is_none()));
    reopens_the_same(sm)
}

/// Compaction and branch summaries in the context; pi's line shapes for both.
fn branch_with_summary_and_compaction_context(make: Make<'_>) -> Check {
    let mut sm = make()?;
    let mut ids = Vec::new();
    for i in 1..=4 {
        let m = if i % 2 == 1 {
            user(&i.to_string())
        } else {
            assistant(&i.to_string())
        };
        ids.push(sm.append_message(&m).map_err(e2s)?);
    }
    sm.append_compaction("First summary", &ids[2], 1000.0, None, None)
        .map_err(e2s)?;
    sm.append_message(&user("6")).map_err(e2s)?;
    sm.append_message(&assistant("7")).map_err(e2s)?;
    let c = ctx(&sm, LeafSel::Current)?;
    check_eq!(texts(&c), vec!["First summary", "3", "4", "6", "7"]);
    let first = |c: &JsValue, i: usize, key: &str| match c.get("messages") {
        Some(JsValue::Array(m)) => m.get(i).and_then(|m| m.get(key)).map(JsValue::to_json),
        _ => None,
    };
    check_eq!(
        first(&c, 0, "role"),
        Some(br#""compactionSummary""#.to_vec())
    );
    check_eq!(first(&c, 0, "tokensBefore"), Some(b"1000".to_vec()));
    let bs = sm
        .branch_with_summary(Some(&ids[0]), "explored A", None, Some(false))
        .map_err(e2s)?;
    check_eq!(sm.leaf_id(), Some(bs.as_str()));
    let line = line_of(&sm, &bs);
    check!(
        line.contains(&format!(r#""parentId":"{}","timestamp":"#, ids[0])),
        "{line}"
    );
    check!(
        line.contains(&format!(
            r#""fromId":"{}","summary":"explored A","fromHook":false}}"#,
            ids[0]
        )),
        "{line}"
    );
    let c = ctx(&sm, LeafSel::Current)?;
    check_eq!(first(&c, 1, "role"), Some(br#""branchSummary""#.to_vec()));
    check_eq!(
        first(&c, 1, "fromId"),
        Some(format!("\"{}\"", ids[0]).into_bytes())
    );
    let details = JsValue::parse(br#"{"a":1}"#).map_err(e2s)?;
    let root = sm
        .branch_with_summary(None, "from root", Some(&details), None)
        .map_err(e2s)?;
    let line = line_of(&sm, &root);
    check!(
        line.contains(r#""parentId":null"#)
            && line.contains(r#""fromId":"root","summary":"from root","details":{"a":1}}"#),
        "{line}"
    );
    check!(sm
        .branch_with_summary(Some("nonexistent"), "x", None, None)
        .is_err());
    reopens_the_same(sm)
}

/// `createBranchedSession`: the path to a leaf and its labels, in a new session of the same
/// store; the source session is left as it was.
fn create_branched_session_keeps_path_and_its_labels(make: Make<'_>) -> Check {
    let mut sm = make()?;
    let source = sm.session_id();
    let m1 = sm.append_message(&user("m1")).map_err(e2s)?;
    let m2 = sm.append_message(&assistant("m2")).map_err(e2s)?;
    let m3 = sm.append_message(&user("m3")).map_err(e2s)?;
    sm.append_label_change(&m2, Some("L2")).map_err(e2s)?;
    sm.append_label_change(&m1, Some("L1")).map_err(e2s)?;
    sm.append_label_change(&m3, Some("L3")).map_err(e2s)?;
    sm.append_label_change(&m2, Some("L2b")).map_err(e2s)?;
    let store = sm.store();
    let source_lines = match &store {
        Some(store) => store.read(&source, 0).map_err(e2s)?,
        None => Vec::new(),
    };
    check_eq!(sm.create_branched_session(&m2).map_err(e2s)?, None);
    check!(sm.session_id() != source, "still the source session");
    let types: Vec<String> = sm
        .entries()
        .iter()
        .map(|e| e.type_name().to_string())
        .collect();
    check_eq!(types, vec!["message", "message", "label", "label"]);
    check_eq!(sm.label(&m2), Some("L2b"));
    check_eq!(sm.label(&m1), Some("L1"));
    check_eq!(sm.label(&m3), None);
    let l = String::from_utf8_lossy(sm.doc().entry_line(2)).into_owned();
    check!(
        l.contains(&format!(r#""parentId":"{m2}""#)) && l.contains(r#""label":"L2b""#),
        "{l}"
    );
    check!(matches!(
        sm.create_branched_session("nonexistent"),
        Err(StoreError::NotFound(_))
    ));
    // The branch is a session of the store, writable; the source is unchanged.
    sm.append_message(&user("on the branch")).map_err(e2s)?;
    if let Some(store) = store {
        check_eq!(store.read(&source, 0).map_err(e2s)?, source_lines);
        check_eq!(store.list().map_err(e2s)?.len(), 2);
    }
    reopens_the_same(sm)
}

/// pi's key order for every append method, and the session name.
fn pi_key_orders_for_every_append_method(make: Make<'_>) -> Check {
    let mut sm = make()?;
    sm.append_model_change("anthropic", "claude").map_err(e2s)?;
    sm.append_custom_entry("ext", None).map_err(e2s)?;
    let data = JsValue::parse(br#"{"x":1}"#).map_err(e2s)?;
    sm.append_custom_entry("ext2", Some(&data)).map_err(e2s)?;
    sm.append_custom_message_entry("ct", &JsValue::String("content".into()), true, None)
        .map_err(e2s)?;
    sm.append_session_info("  My Name  ").map_err(e2s)?;
    let u = sm.append_message(&user("hi")).map_err(e2s)?;
    let details = JsValue::parse(br#"{"readFiles":[]}"#).map_err(e2s)?;
    sm.append_compaction("sum2", &u, 100.0, Some(&details), Some(true))
        .map_err(e2s)?;
    let lines: Vec<Vec<u8>> = (0..sm.entries().len())
        .map(|i| sm.doc().entry_line(i).to_vec())
        .collect();
    let want: [&[&str]; 7] = [
        &["type", "id", "parentId", "timestamp", "provider", "modelId"],
        &["type", "customType", "id", "parentId", "timestamp"],
        &["type", "customType", "data", "id", "parentId", "timestamp"],
        &[
            "type",
            "customType",
            "content",
            "display",
            "id",
            "parentId",
            "timestamp",
        ],
        &["type", "id", "parentId", "timestamp", "name"],
        &["type", "id", "parentId", "timestamp", "message"],
        &[
            "type",
            "id",
            "parentId",
            "timestamp",
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "details",
            "fromHook",
        ],
    ];
    check_eq!(lines.len(), want.len());
    for (line, want) in lines.iter().zip(want) {
        check_eq!(keys(line), want.to_vec());
    }
    check!(lines[4].ends_with(br#""name":"My Name"}"#));
    check_eq!(sm.session_name().as_deref(), Some("My Name"));
    reopens_the_same(sm)
}
