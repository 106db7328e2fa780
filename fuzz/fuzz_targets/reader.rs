//! Fuzzes the session reader and the repair built on it: any bytes either are refused as "not a
//! session" or load without panicking; the tree, the context, the lossless rewrite and `check`
//! never panic; a repair keeps every byte (what it keeps plus what it quarantines covers the
//! input) and its result is a session that needs no further repair.
#![no_main]
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::doc::SessionDoc;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = SessionDoc::parse(Arc::new(data.to_vec())) else { return };
    let _ = doc.index().tree(&doc);
    let ctx = build_session_context(&doc, LeafSel::Current);
    let mut out = Vec::new();
    ctx.write_json(&doc, &mut out);
    out.clear();
    ctx.write_llm_json(&doc, &mut out);
    let _ = ctx.outline_json(&doc);
    if let arbor_core::context::SessionContext::Pi(pi) = &ctx {
        let _ = pi.current_system_message(&doc);
    }
    // Every leaf (pi 1.5's context edits and compactions reach back along the path).
    for e in doc.entries().iter().take(64) {
        if let Some(id) = e.id.as_deref() {
            out.clear();
            build_session_context(&doc, LeafSel::Id(id)).write_json(&doc, &mut out);
        }
    }
    let _ = doc.rewritten_bytes();
    let _ = arbor_store::check::check_doc(&doc, None);
    if let Some((kept, removed)) = arbor_store::check::repaired_bytes(&doc) {
        // Nothing is lost: every input byte is kept or quarantined (a replaced line is in both).
        assert!(kept.len() + removed.len() >= data.len(), "bytes lost");
        let again = SessionDoc::parse(Arc::new(kept)).expect("a repaired session is still a session");
        assert!(arbor_store::check::repaired_bytes(&again).is_none(), "a repair is final");
    }
});
