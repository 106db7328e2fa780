//! pi 1.5.2's answers (goldens/pi15/, made by tools/goldens/pi15/make.sh with the real
//! `@earendil-works/pi-coding-agent` 1.5.2): system messages, context edits, usage entries,
//! compactions that carry the system message, `null` contents. Every entry of every session
//! is a leaf here: `buildSessionContext(entries, id)`, its `convertToLlm`, the tree.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::json::JsValue;
use arbor_core::SessionDoc;
use arbor_testkit::goldens::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Keys arbor writes beyond pi's object (omp's, documented in the README).
const EXTRA: &[&str] = &["models", "injectedTtsrRules", "mode"];

fn dir() -> PathBuf {
    goldens_root().join("pi15")
}

/// Minimised disagreements of the differential fuzzer (tools/fuzz-pi), with pi 1.5.2's answers.
fn fuzz_dir() -> PathBuf {
    goldens_root().join("fuzz-pi")
}

fn load(name: &str) -> SessionDoc {
    load_from(&dir(), name)
}

fn load_from(dir: &std::path::Path, name: &str) -> SessionDoc {
    let bytes = std::fs::read(dir.join(format!("{name}.jsonl"))).expect("read");
    SessionDoc::parse(Arc::new(bytes)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn leaf(key: &str) -> LeafSel<'_> {
    match key {
        "__open__" => LeafSel::Current,
        id => LeafSel::Id(id),
    }
}

fn answers(llm: bool) -> Tally {
    answers_in(&dir(), llm)
}

fn answers_in(dir: &std::path::Path, llm: bool) -> Tally {
    let ext = if llm { "llm.json" } else { "context.json" };
    let mut t = Tally::default();
    for (name, _) in inputs(dir) {
        let Some(want) = read_json_opt(&dir.join(format!("{name}.{ext}"))) else {
            continue;
        };
        t.files += 1;
        let doc = load_from(dir, &name);
        let raw_keys: Vec<arbor_core::entry::IdKey> = match &want {
            JsValue::Object(m) => m
                .iter()
                .map(|(k, _)| arbor_core::entry::IdKey::Str(k.0.clone().into()))
                .collect(),
            _ => Vec::new(),
        };
        for (n, (key, want)) in members(&want).into_iter().enumerate() {
            t.golden += 1;
            // A key with a lone surrogate is asked as pi asked it, not as its lossy decoding.
            let sel = if key.contains('\u{fffd}') {
                LeafSel::Key(&raw_keys[n])
            } else {
                leaf(&key)
            };
            let ctx = build_session_context(&doc, sel);
            let mut out = Vec::new();
            if llm {
                ctx.write_llm_json(&doc, &mut out);
            } else {
                ctx.write_json(&doc, &mut out);
            }
            let have = JsValue::parse(&out).expect("arbor wrote JSON");
            t.compared += 1;
            if let Err(d) = same_object(want, &have, EXTRA) {
                t.bad.push(format!("{name} {key}: {d}"));
            }
        }
        // A context edit without `replacement` makes pi 1.5.2 throw (recorded in
        // NAME.error.txt); arbor answers with the target as it is.
        for key in thrown_keys(dir, &name) {
            let ctx = build_session_context(&doc, leaf(&key));
            let mut out = Vec::new();
            ctx.write_json(&doc, &mut out);
            assert!(
                String::from_utf8_lossy(&out).contains(r#""content":"u1""#),
                "{name} {key}: the edited message is not kept as it is"
            );
            t.own += 1;
        }
    }
    t
}

#[test]
fn pi15_context_goldens() {
    answers(false).finish("pi 1.5.2 context.json");
}

#[test]
fn pi15_llm_goldens() {
    answers(true).finish("pi 1.5.2 llm.json");
}

#[test]
fn pi15_tree_goldens() {
    trees_in(&dir()).finish("pi 1.5.2 tree.json");
}

/// The fuzzer's minimised cases (each a disagreement when it was found): context, llm, tree.
#[test]
fn fuzz_pi_goldens() {
    answers_in(&fuzz_dir(), false).finish("fuzz-pi context.json");
    answers_in(&fuzz_dir(), true).finish("fuzz-pi llm.json");
    trees_in(&fuzz_dir()).finish("fuzz-pi tree.json");
}

fn trees_in(dir: &std::path::Path) -> Tally {
    let mut t = Tally::default();
    for (name, _) in inputs(dir) {
        let Some(want) = read_json_opt(&dir.join(format!("{name}.tree.json"))) else {
            continue;
        };
        t.files += 1;
        t.golden += 1;
        let doc = load_from(dir, &name);
        let mut out = Vec::new();
        doc.index().tree(&doc).write_json(&doc, &mut out);
        let have = JsValue::parse(&out).expect("tree JSON");
        t.compared += 1;
        if let Err(d) = same(&want, &have) {
            t.bad.push(format!("{name}: {d}"));
        }
    }
    t
}

/// The live context (folded forward on appends, rebuilt on compactions and context edits)
/// equals the whole context after every line of every pi 1.5 golden session.
#[test]
fn pi15_live_context_follows_every_append() {
    let mut lines_checked = 0;
    for (name, path) in inputs(&dir()) {
        let bytes = std::fs::read(&path).expect("read");
        let mut lines = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        let header = lines.next().expect("header");
        let mut doc = SessionDoc::parse(Arc::new([header, b"\n"].concat())).expect("header");
        let mut cache = arbor_core::ContextCache::new();
        for line in lines {
            // (A falsy non-object line, `0`, is no entry: pi skips it, push_line refuses it.)
            let pushed = doc.push_line(line.to_vec());
            if matches!(pushed, Err(arbor_core::entry::LineError::NotObject)) {
                continue;
            }
            pushed.expect("line");
            cache.update(&doc);
            let (mut live, mut whole) = (Vec::new(), Vec::new());
            cache
                .context()
                .expect("context")
                .write_json(&doc, &mut live);
            build_session_context(&doc, LeafSel::Current).write_json(&doc, &mut whole);
            assert_eq!(
                String::from_utf8_lossy(&live),
                String::from_utf8_lossy(&whole),
                "{name}: after {} lines",
                lines_checked
            );
            lines_checked += 1;
        }
    }
    assert!(lines_checked > 50, "{lines_checked}");
}

/// pi 1.5.2's `appendCompaction` stores `getCurrentSystemMessage` of the context at the
/// compaction's parent; arbor's fold of the same context gives the same object (its
/// `timestamp` is the compaction's time, set by the writer).
#[test]
fn pi15_compaction_system_message_is_pis_fold() {
    let mut checked = 0;
    for (name, _) in inputs(&dir()) {
        if name.starts_with("edge-") || name.starts_with("exact-") {
            continue; // hand-made: their systemMessage is not a fold
        }
        let doc = load(&name);
        for e in doc.entries() {
            let line = doc.line(&e.line);
            let Some(mut stored) = e.fields.value(line, "systemMessage") else {
                continue;
            };
            let Some(parent) = e.parent_id.as_deref() else {
                continue;
            };
            let arbor_core::context::SessionContext::Pi(ctx) =
                build_session_context(&doc, LeafSel::Id(parent))
            else {
                panic!("{name}: not a pi context");
            };
            let mut folded = ctx
                .current_system_message(&doc)
                .unwrap_or_else(|| panic!("{name}: no system message folded before {:?}", e.id));
            stored.set("timestamp", JsValue::Number(0.0));
            folded.set("timestamp", JsValue::Number(0.0));
            assert_eq!(
                String::from_utf8_lossy(&folded.to_json()),
                String::from_utf8_lossy(&stored.to_json()),
                "{name} {:?}",
                e.id
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} compactions checked");
}
