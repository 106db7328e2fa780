//! A 100,000-entry chain loads, gives its path, tree and context without recursion (run on a
//! thread with a 256 KiB stack, where any per-entry recursion would overflow), and a
//! `parentId` cycle closed at the far end of such a chain is cut, not followed forever.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::{SessionDoc, SharedBytes};
use std::sync::Arc;

const N: usize = 100_000;

fn chain(cycle: bool) -> Vec<u8> {
    let mut s = String::with_capacity(N * 140);
    s.push_str(
        r#"{"type":"session","version":3,"id":"deep","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    s.push('\n');
    for i in 0..N {
        // The first entry's parent is the last one when `cycle`: the whole chain is one loop.
        let parent = if i == 0 {
            if cycle {
                format!("\"e{:07}\"", N - 1)
            } else {
                "null".into()
            }
        } else {
            format!("\"e{:07}\"", i - 1)
        };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        s.push_str(&format!(
            r#"{{"type":"message","id":"e{i:07}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"{role}","content":"m{i}","timestamp":1}}}}"#
        ));
        s.push('\n');
    }
    s.into_bytes()
}

fn on_small_stack<F: FnOnce() + Send + 'static>(f: F) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the deep chain overflowed the stack or panicked");
}

#[test]
fn a_100000_entry_chain_needs_no_deep_stack() {
    on_small_stack(|| {
        let bytes: SharedBytes = Arc::new(chain(false));
        let doc = SessionDoc::parse(bytes).expect("parse");
        assert_eq!(doc.entries().len(), N);
        let ctx = build_session_context(&doc, LeafSel::Current);
        assert_eq!(ctx.message_count(), N);
        assert_eq!(ctx.path().len(), N);
        assert!(!ctx.cycle());
        let tree = doc.index().tree(&doc);
        assert_eq!(tree.roots.len(), 1);
        assert_eq!(tree.preorder().len(), N);
        let mut out = Vec::new();
        tree.write_json(&doc, &mut out);
        assert!(out.len() > N * 40, "tree JSON of {} bytes", out.len());
        let mut json = Vec::new();
        ctx.write_json(&doc, &mut json);
        assert!(json.ends_with(b"}") || json.ends_with(b"}\n"));
    });
}

#[test]
fn a_cycle_through_100000_entries_is_cut() {
    on_small_stack(|| {
        let bytes: SharedBytes = Arc::new(chain(true));
        let doc = SessionDoc::parse(bytes).expect("parse");
        let ctx = build_session_context(&doc, LeafSel::Current);
        assert!(ctx.cycle(), "the cycle was not reported");
        // Each entry at most once.
        assert_eq!(ctx.path().len(), N);
        let tree = doc.index().tree(&doc);
        // Every entry is in the loop: pi's getTree() shows none of them.
        assert!(tree.roots.is_empty());
        assert_eq!(tree.unreachable.len(), N);
    });
}
