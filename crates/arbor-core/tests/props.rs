//! Property tests: the loader never panics and never loses bytes, migrations are sound, and
//! the tree index keeps its invariants on arbitrary (also cyclic, duplicated) parent links.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::doc::SessionDoc;
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

fn parse(bytes: Vec<u8>) -> Result<SessionDoc, arbor_core::NotASession> {
    SessionDoc::parse(Arc::new(bytes))
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"h","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// One entry line with a chosen id, parent and timestamp second.
fn entry_line(id: usize, parent: Option<usize>, ts: u32, kind: u8) -> String {
    let parent = parent
        .map(|p| format!("\"e{p}\""))
        .unwrap_or_else(|| "null".into());
    let ts = format!("2025-01-01T00:{:02}:{:02}.000Z", ts / 60 % 60, ts % 60);
    match kind % 5 {
        0 => format!(
            r#"{{"type":"message","id":"e{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"u{id} \u00e9\ud83d","timestamp":{id}}}}}"#
        ),
        1 => format!(
            r#"{{"type":"message","id":"e{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"text","text":"a"}}],"provider":"p","model":"m{id}","timestamp":1.0}}}}"#
        ),
        2 => format!(
            r#"{{"type":"label","id":"e{id}","parentId":{parent},"timestamp":"{ts}","targetId":"e0","label":"L{id}"}}"#
        ),
        3 => format!(
            r#"{{"type":"compaction","id":"e{id}","parentId":{parent},"timestamp":"{ts}","summary":"s","firstKeptEntryId":"e1","tokensBefore":1e3}}"#
        ),
        _ => format!(
            r#"{{"type":"mystery_type","id":"e{id}","parentId":{parent},"timestamp":"{ts}","x":{{"2":1,"1":[true,null]}}}}"#
        ),
    }
}

fn session_strategy() -> impl Strategy<Value = Vec<(Option<usize>, u32, u8)>> {
    prop::collection::vec((prop::option::of(0usize..40), 0u32..50, any::<u8>()), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic the loader, and reading reports instead of dropping.
    #[test]
    fn loader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut with_header = HEADER.as_bytes().to_vec();
        with_header.push(b'\n');
        with_header.extend_from_slice(&bytes);
        for input in [bytes, with_header] {
            if let Ok(doc) = parse(input) {
                let ctx = build_session_context(&doc, LeafSel::Current);
                let mut out = Vec::new();
                ctx.write_json(&doc, &mut out);
                prop_assert!(arbor_core::json::JsValue::parse(&out).is_ok());
                let _ = doc.index().tree(&doc);
            }
        }
    }

    /// A v3 file is reproduced byte for byte by the rewrite path (nothing to migrate, every
    /// line kept, including malformed ones and CRLF ends).
    #[test]
    fn v3_rewrite_is_identity(spec in session_strategy(), junk in prop::collection::vec(0usize..40, 0..3), crlf in any::<bool>()) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = format!("{HEADER}{nl}");
        for (i, (p, ts, k)) in spec.iter().enumerate() {
            if junk.contains(&i) { text.push_str("{broken"); text.push_str(nl); }
            text.push_str(&entry_line(i, p.filter(|&p| p < i), *ts, *k));
            text.push_str(nl);
        }
        let doc = parse(text.clone().into_bytes()).expect("session");
        prop_assert!(doc.migration().is_none());
        prop_assert_eq!(doc.rewritten_bytes(), text.into_bytes());
        prop_assert_eq!(doc.entries().len(), spec.len());
    }

    /// Tree invariants on arbitrary parent links (cycles, self-parents, orphans, reused ids).
    #[test]
    fn tree_invariants(spec in session_strategy(), dup in prop::option::of(0usize..40)) {
        let mut text = format!("{HEADER}\n");
        for (i, (p, ts, k)) in spec.iter().enumerate() {
            let id = match dup { Some(d) if d < i && i % 7 == 3 => d, _ => i };
            text.push_str(&entry_line(id, *p, *ts, *k));
            text.push('\n');
        }
        let doc = parse(text.into_bytes()).expect("session");
        let n = doc.entries().len();
        // Paths terminate, run root first through real parent links, and never repeat.
        for i in 0..n {
            let path = doc.index().path(&doc, i);
            prop_assert_eq!(*path.entries.last().unwrap(), i);
            let uniq: HashSet<_> = path.entries.iter().collect();
            prop_assert_eq!(uniq.len(), path.entries.len());
            for w in path.entries.windows(2) {
                prop_assert_eq!(doc.index().parent(&doc, w[1]), Some(w[0]));
            }
        }
        // Every entry is in the tree once, or reported unreachable.
        let tree = doc.index().tree(&doc);
        let pre = tree.preorder();
        let seen: HashSet<_> = pre.iter().copied().collect();
        prop_assert_eq!(seen.len(), pre.len());
        for i in 0..n {
            prop_assert!(seen.contains(&i) ^ tree.unreachable.contains(&i), "entry {} lost", i);
        }
        // Children are ordered by timestamp.
        for kids in &tree.children {
            for w in kids.windows(2) {
                let (a, b) = (doc.entries()[w[0]].timestamp_ms(), doc.entries()[w[1]].timestamp_ms());
                prop_assert!(a <= b);
            }
        }
        // Contexts can be built for every leaf and are valid JSON.
        for i in 0..n {
            let id = doc.entries()[i].id.clone().unwrap();
            let ctx = build_session_context(&doc, LeafSel::Id(&id));
            let mut out = Vec::new();
            ctx.write_json(&doc, &mut out);
            prop_assert!(arbor_core::json::JsValue::parse(&out).is_ok());
        }
    }

    /// v1 migration: unique 8-hex ids, a linear chain, only id/parentId/version (and
    /// firstKeptEntryIndex→Id) change, and the result needs no further migration.
    #[test]
    fn v1_migration_is_sound(kinds in prop::collection::vec(any::<u8>(), 1..60)) {
        let mut text = String::from("{\"type\":\"session\",\"id\":\"S\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n");
        for (i, k) in kinds.iter().enumerate() {
            let line = match k % 3 {
                0 => format!(r#"{{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"m{i}","n":1.50}}}}"#),
                1 => format!(r#"{{"type":"compaction","timestamp":"2025-01-01T00:00:02.000Z","summary":"s","firstKeptEntryIndex":{},"tokensBefore":5}}"#, k % 7),
                _ => r#"{"type":"thinking_level_change","timestamp":"2025-01-01T00:00:03.000Z","thinkingLevel":"high"}"#.to_string(),
            };
            text.push_str(&line);
            text.push('\n');
        }
        let doc = parse(text.clone().into_bytes()).expect("session");
        prop_assert!(doc.migration().is_some());
        let ids: Vec<String> = doc.entries().iter().map(|e| e.id.clone().unwrap().into()).collect();
        let uniq: HashSet<_> = ids.iter().collect();
        prop_assert_eq!(uniq.len(), ids.len());
        for (i, e) in doc.entries().iter().enumerate() {
            prop_assert_eq!(e.id.as_ref().unwrap().len(), 8);
            let want = if i == 0 { None } else { Some(ids[i - 1].as_str()) };
            prop_assert_eq!(e.parent_id.as_deref(), want);
        }
        let rewritten = doc.rewritten_bytes();
        let again = parse(rewritten.clone()).expect("session");
        prop_assert!(again.migration().is_none());
        // Deterministic: a second reader computes the same migrated file.
        prop_assert_eq!(parse(text.into_bytes()).expect("session").rewritten_bytes(), rewritten.clone());
        let s = String::from_utf8(rewritten).unwrap();
        if kinds.iter().any(|k| k % 3 == 0) {
            prop_assert!(s.contains(r#""n":1.50"#));
        }
        prop_assert!(!s.contains("firstKeptEntryIndex"));
    }
}

mod nesting {
    //! Issue 10, item 3: any nesting depth is read (as `JSON.parse` reads it), and only what
    //! is not JSON is refused: a line is never torn or malformed because arbor gave up.
    use arbor_core::json::{canonicalize, value_end, JsValue};
    use proptest::prelude::*;

    fn nested(kinds: &[bool], leaf: &str) -> Vec<u8> {
        let mut s = Vec::new();
        for &object in kinds {
            s.extend_from_slice(if object { b"{\"k\":" } else { b"[" });
        }
        s.extend_from_slice(leaf.as_bytes());
        for &object in kinds.iter().rev() {
            s.push(if object { b'}' } else { b']' });
        }
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn deep_values_are_read_and_cut_ones_refused(
            kinds in proptest::collection::vec(any::<bool>(), 0..3),
            depth in prop_oneof![0usize..100, 9_990usize..10_010, 99_990usize..100_010, 400_000usize..400_001],
            cut in any::<proptest::sample::Index>(),
        ) {
            let pattern: Vec<bool> = (0..depth).map(|i| kinds.get(i % kinds.len().max(1)).copied().unwrap_or(false)).collect();
            let src = nested(&pattern, "\"x\"");
            let run = move || {
                prop_assert_eq!(value_end(&src, 0), Ok(src.len()));
                let v = JsValue::parse(&src).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(v.to_json(), src.clone());
                let mut out = Vec::new();
                canonicalize(&src, &mut out).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&out, &src);
                if src.len() > 1 {
                    let k = cut.index(src.len() - 1).max(1);
                    prop_assert!(value_end(&src[..k], 0).is_err());
                    prop_assert!(JsValue::parse(&src[..k]).is_err());
                }
                Ok(())
            };
            // The test harness's threads have 2 MB stacks, like any caller's might.
            std::thread::Builder::new().stack_size(2 << 20).spawn(run).expect("spawn").join().expect("join")?;
        }
    }
}
