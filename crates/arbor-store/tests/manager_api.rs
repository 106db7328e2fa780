//! pi's SessionManager conformance checklist (research notes §10), through the Rust API.
use arbor_core::context::LeafSel;
use arbor_core::doc::Dialect;
use arbor_store::{ManagerOptions, SessionManager};
use serde_json::Value;

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

/// The checklist of pi's manager (appends, branches, labels, summaries, compaction, branched
/// sessions, key orders) is shared with every backend
/// (`arbor_store::backend::conformance::checklist`); here it runs on a manager kept in no
/// store at all.
#[test]
fn the_manager_checklist_in_memory() {
    let make = || Ok(SessionManager::in_memory("/p", Dialect::Pi));
    arbor_store::backend::conformance::checklist::run(&make).unwrap();
}

#[test]
fn deferred_persistence_writes_once_the_conversation_starts() {
    // pi 1.5's `_hasConversation`: setup entries (a model, a system prompt) stay in memory;
    // the first user or assistant message writes everything (0.73.1 waited for an assistant
    // message, so a first prompt whose turn never completed was lost).
    let tmp = tempfile::tempdir().unwrap();
    let opts = ManagerOptions::default().with_deferred(true);
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

/// A fork's transform (arbor-view's redaction for `fork --redact`) sees the loaded copy before
/// a byte is written: what it changes is what the new file holds (also the header's `cwd`),
/// and when it refuses, nothing is written.
#[test]
fn a_fork_transform_changes_the_copy_before_it_is_written() {
    struct Upper(bool);
    impl arbor_store::ForkTransform for Upper {
        fn doc(
            &self,
            doc: &mut arbor_core::doc::SessionDoc,
        ) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
            if self.0 {
                return Err("refused".into());
            }
            let text = String::from_utf8_lossy(doc.base_bytes()).replace("secret", "XXXXXX");
            *doc = arbor_core::doc::SessionDoc::parse(std::sync::Arc::new(text.into_bytes()))
                .map_err(|e| e.to_string())?;
            Ok(1)
        }
        fn text(&self, text: &str) -> String {
            text.replace("secret", "XXXXXX")
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    let src = dir.join("2025-01-01T00-00-00-000Z_S1.jsonl");
    std::fs::write(
        &src,
        concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"S1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/secret\"}\n",
            "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a secret\",\"timestamp\":1}}\n",
        ),
    )
    .unwrap();
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let Err(err) =
        SessionManager::fork_transformed(&src, None, None, ManagerOptions::default(), &Upper(true))
    else {
        panic!("the refused fork was made");
    };
    assert!(
        matches!(err, arbor_store::StoreError::Transform(_)),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        before.len(),
        "nothing written"
    );
    for at in [None, Some("a1")] {
        let (sm, n) = SessionManager::fork_transformed(
            &src,
            at,
            None,
            ManagerOptions::default(),
            &Upper(false),
        )
        .unwrap();
        assert_eq!(n, 1);
        let path = sm.session_file().unwrap().to_path_buf();
        drop(sm);
        let bytes = std::fs::read_to_string(&path).unwrap();
        assert!(!bytes.contains("secret"), "{at:?}: {bytes}");
        assert!(bytes.contains("a XXXXXX"), "{at:?}: {bytes}");
    }
}
