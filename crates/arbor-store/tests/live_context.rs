//! `SessionManager::live_context`: the incrementally maintained context equals a full
//! `build_session_context` after appends, branches, compactions and reopen.
use arbor_core::ContextChange;
use arbor_store::{Durability, ManagerOptions, SessionManager};

fn full_json(sm: &SessionManager) -> Vec<u8> {
    let mut out = Vec::new();
    sm.build_session_context().write_json(sm.doc(), &mut out);
    out
}

fn live_json(sm: &mut SessionManager) -> (Vec<u8>, ContextChange, Vec<u8>) {
    let live = sm.live_context();
    let mut out = Vec::new();
    live.context.write_json(live.doc, &mut out);
    let mut new = Vec::new();
    live.write_new_messages(&mut new);
    (out, live.change, new)
}

fn user(text: &str) -> Vec<u8> {
    format!(r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}"#)
        .into_bytes()
}

fn assistant(text: &str) -> Vec<u8> {
    format!(r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":2}}"#).into_bytes()
}

#[test]
fn live_context_tracks_a_growing_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = ManagerOptions::default().with_durability(Durability::None);
    let mut sm = SessionManager::create("/work", Some(dir.path()), opts.clone()).expect("create");
    let first = sm.append_message(&user("hello")).expect("append");
    let (j, change, _) = live_json(&mut sm);
    assert_eq!(j, full_json(&sm));
    assert_eq!(change, ContextChange::Rebuilt);
    for turn in 0..50 {
        sm.append_message(&assistant(&format!("answer {turn}")))
            .expect("append");
        sm.append_message(&user(&format!("question {turn}")))
            .expect("append");
        let (j, change, new) = live_json(&mut sm);
        assert_eq!(j, full_json(&sm), "turn {turn}");
        assert!(
            matches!(change, ContextChange::Extended { entries: 2, .. }),
            "{change:?}"
        );
        // Only the two new messages are written.
        assert!(
            new.starts_with(b"[{\"role\":\"assistant\""),
            "{}",
            String::from_utf8_lossy(&new)
        );
        assert_eq!(new.iter().filter(|&&b| b == b'{').count(), 4);
    }
    sm.append_thinking_level_change("high").expect("append");
    sm.append_model_change("openai", "gpt").expect("append");
    assert_eq!(live_json(&mut sm).0, full_json(&sm));
    // pi's branch(): the leaf moves back, the next append starts a branch.
    sm.branch(&first).expect("branch");
    sm.append_message(&assistant("other way")).expect("append");
    let (j, change, _) = live_json(&mut sm);
    assert_eq!(j, full_json(&sm));
    assert_eq!(change, ContextChange::Rebuilt);
    sm.append_compaction("summary", &first, 1000.0, None, None)
        .expect("compaction");
    sm.append_message(&user("after compaction"))
        .expect("append");
    assert_eq!(live_json(&mut sm).0, full_json(&sm));
    sm.append_message(&assistant("fine")).expect("append");
    let (j, change, _) = live_json(&mut sm);
    assert_eq!(j, full_json(&sm));
    assert!(matches!(change, ContextChange::Extended { entries: 1, .. }));
    // A reopened session starts from a rebuild.
    let path = sm.session_file().expect("file").to_path_buf();
    drop(sm);
    let mut sm = SessionManager::open(&path, opts).expect("open");
    let (j, change, _) = live_json(&mut sm);
    assert_eq!(j, full_json(&sm));
    assert_eq!(change, ContextChange::Rebuilt);
}

/// Issue 11's bug: for omp sessions the live context wrote omp's outline through pi's message
/// writer (keeping `redactedThinking` and `thinkingSignature`, which omp strips). Every golden
/// session of both dialects: the live context's messages are the whole context's.
#[test]
fn live_messages_equal_the_whole_context_on_every_golden() {
    use arbor_core::json::JsValue;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens");
    let (mut compared, mut omp) = (0, 0);
    for dir in ["pi", "pi15", "omp", "omp-context", "readback"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.to_string_lossy();
                n.ends_with(".jsonl") && !n.ends_with(".open.jsonl")
            })
            .collect();
        files.sort();
        for f in files {
            let Ok(mut sm) = SessionManager::open_read_only(&f) else {
                continue;
            };
            let whole = {
                let mut out = Vec::new();
                sm.build_session_context().write_json(sm.doc(), &mut out);
                let v = JsValue::parse(&out).expect("whole context is JSON");
                v.get("messages").expect("messages").to_json()
            };
            let is_omp = sm.doc().dialect() == arbor_core::doc::Dialect::Omp;
            let live = sm.live_context();
            let mut out = Vec::new();
            live.write_new_messages(&mut out);
            let live = JsValue::parse(&out)
                .expect("live messages are JSON")
                .to_json();
            assert!(
                live == whole,
                "{}: live messages differ from the whole context's",
                f.display()
            );
            compared += 1;
            omp += usize::from(is_omp);
        }
    }
    eprintln!("live vs whole: {compared} sessions, {omp} of them omp");
    assert!(
        compared >= 80 && omp >= 19,
        "{compared} compared, {omp} omp"
    );
}
