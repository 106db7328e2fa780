//! Property tests of the safety code, many cases each (`PROPTEST_CASES` overrides):
//! repair never loses a byte and is final, appends never corrupt, the title slot is always
//! 256 valid bytes, base64 round-trips, the persistence transform is idempotent.
use arbor_core::doc::SessionDoc;
use arbor_core::json::{JsStr, JsValue};
use arbor_store::check::{check_doc, repaired_bytes};
use proptest::prelude::*;
use std::sync::Arc;

fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        ..ProptestConfig::default()
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"prop","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// A damage applied to a valid session's lines.
#[derive(Debug, Clone)]
enum Damage {
    Garbage(usize, String),
    NonObject(usize),
    Duplicate(usize),
    Torn(usize),
    NoFinalNewline,
    Bom,
    Crlf(usize),
    Blank(usize),
    Cycle(usize, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), "[a-z{}\\[\\]\": ,]{1,30}").prop_map(|(i, s)| Damage::Garbage(i, s)),
        any::<usize>().prop_map(Damage::NonObject),
        any::<usize>().prop_map(Damage::Duplicate),
        any::<usize>().prop_map(Damage::Torn),
        Just(Damage::NoFinalNewline),
        Just(Damage::Bom),
        any::<usize>().prop_map(Damage::Crlf),
        any::<usize>().prop_map(Damage::Blank),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::Cycle(a, b)),
    ]
}

/// A valid session: entries with random parents (earlier entries or null).
fn session() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((any::<usize>(), "[a-zA-Z0-9 \\\\\"é😀]{0,40}"), 1..30).prop_map(|spec| {
        let mut lines = vec![HEADER.to_string()];
        for (k, (p, text)) in spec.iter().enumerate() {
            let parent = if k == 0 || p % 5 == 0 { "null".to_string() } else { format!("\"e{:07}\"", p % k) };
            let mut content = Vec::new();
            arbor_core::json::write_str_escaped(text, &mut content);
            lines.push(format!(
                r#"{{"type":"message","id":"e{k:07}","parentId":{parent},"timestamp":"2025-01-01T00:00:{:02}.000Z","message":{{"role":"user","content":{},"timestamp":1}}}}"#,
                k % 60,
                String::from_utf8_lossy(&content)
            ));
        }
        lines
    })
}

fn apply(mut lines: Vec<String>, damages: &[Damage]) -> Vec<u8> {
    let (mut bom, mut final_nl, mut torn) = (false, true, None);
    let mut crlf = std::collections::HashSet::new();
    for d in damages {
        let n = lines.len();
        match d {
            Damage::Garbage(i, s) => lines.insert(1 + i % n, format!("garbage {s}")),
            Damage::NonObject(i) => {
                lines.insert(1 + i % n, ["null", "5", "\"s\"", "[1]"][i % 4].to_string())
            }
            Damage::Duplicate(i) if n > 1 => {
                let l = lines[1 + i % (n - 1)].clone();
                lines.insert(1 + (i / 7) % n, l);
            }
            Damage::Torn(i) => torn = Some(*i),
            Damage::NoFinalNewline => final_nl = false,
            Damage::Bom => bom = true,
            Damage::Crlf(i) => {
                crlf.insert(i % n);
            }
            Damage::Blank(i) => lines.insert(1 + i % n, "   ".to_string()),
            Damage::Cycle(a, b) if n > 2 => {
                // Point an entry at a later one: a parent link no append can write.
                let (x, y) = (1 + a % (n - 1), 1 + b % (n - 1));
                let (lo, hi) = (x.min(y), x.max(y));
                if let Some(id) = lines[hi]
                    .split("\"id\":\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .map(str::to_string)
                {
                    if let Some(start) = lines[lo].find("\"parentId\":") {
                        let rest = &lines[lo][start + 11..];
                        let end = if rest.starts_with("null") {
                            4
                        } else {
                            rest[1..].find('"').map_or(0, |e| e + 2)
                        };
                        if end > 0 && lines[lo].starts_with("{\"type\":\"message\"") {
                            let new = format!(
                                "{}\"parentId\":\"{id}\"{}",
                                &lines[lo][..start],
                                &rest[end..]
                            );
                            lines[lo] = new;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    let last = lines.len() - 1;
    for (k, l) in lines.iter().enumerate() {
        out.extend_from_slice(l.as_bytes());
        if k < last || final_nl {
            out.extend_from_slice(if crlf.contains(&k) { b"\r\n" } else { b"\n" });
        }
    }
    if let Some(t) = torn {
        let piece =
            r#"{"type":"message","id":"torn","parentId":null,"message":{"role":"user","content":"#;
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        out.extend_from_slice(&piece.as_bytes()[..1 + t % (piece.len() - 1)]);
    }
    out
}

proptest! {
    #![proptest_config(cases(1500))]

    #[test]
    fn repair_loses_no_byte_and_is_final(lines in session(), damages in prop::collection::vec(damage(), 0..6)) {
        let bytes = apply(lines, &damages);
        let doc = SessionDoc::parse(Arc::new(bytes.clone())).expect("the header survives every damage");
        if let Some((kept, removed)) = repaired_bytes(&doc) {
            prop_assert!(kept.len() + removed.len() >= bytes.len());
            let fixed = SessionDoc::parse(Arc::new(kept.clone())).expect("still a session");
            prop_assert!(repaired_bytes(&fixed).is_none(), "a repair is final");
            let left: Vec<_> = check_doc(&fixed, None).into_iter().filter(|f| f.problem && f.repairable).collect();
            prop_assert!(left.is_empty(), "{:?}", left);
            // Every entry keeps its exact bytes, except a cut cycle link (now a root).
            for (i, e) in doc.entries().iter().enumerate() {
                let Some(id) = e.id.as_deref() else { continue };
                let k = fixed.index().get(id);
                prop_assert!(k.is_some(), "entry {} lost", id);
                let k = k.unwrap_or(0);
                if doc.index().get(id) == Some(i) && doc.entry_line(i) != fixed.entry_line(k) {
                    prop_assert!(e.parent_id.is_some() && fixed.entries()[k].parent_id.is_none(), "entry {} changed", id);
                }
            }
            // Only identical copies go (some become identical once a cycle link is cut).
            prop_assert!(fixed.entries().len() <= doc.entries().len() - count_identical_duplicates(&doc));
            prop_assert_eq!(fixed.index().id_count(), doc.index().id_count());
        }
    }

    #[test]
    fn title_slot_is_always_256_valid_bytes(title in "\\PC{0,200}", user in any::<bool>()) {
        let src = if user { Some(arbor_core::title::TitleSource::User) } else { None };
        let cleaned = arbor_core::title::clean_title(&title);
        let line = arbor_core::title::serialize_title_slot(Some(&cleaned), src, "2026-01-01T00:00:00.000Z").expect("fits");
        prop_assert_eq!(line.len(), 256);
        let info = arbor_core::title::parse_title_slot(&line[..255]).expect("valid");
        prop_assert!(cleaned.starts_with(&info.title));
    }

    #[test]
    fn base64_roundtrips(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        let enc = arbor_core::blobref::encode_base64(&bytes);
        prop_assert_eq!(arbor_core::blobref::decode_base64_js(&JsStr::from(enc.as_str())), bytes);
    }

    #[test]
    fn persistence_transform_is_idempotent(
        img in prop::collection::vec(any::<u8>(), 700..2000),
        text in "[a-z\\n]{0,50}",
        nest in 0usize..4,
        with_events in any::<bool>(),
    ) {
        let data = arbor_core::blobref::encode_base64(&img);
        let mut inner = format!(r#"{{"content":[{{"type":"image","data":"{data}","mimeType":"image/png"}},{{"type":"text","text":"{}"}}]}}"#, text.replace('\n', "\\n"));
        if with_events {
            inner = format!(r#"{{"jsonlEvents":[1,2],"content":"{}","lineCount":0,"x":{inner}}}"#, text.replace('\n', "\\n"));
        }
        for _ in 0..nest {
            inner = format!(r#"{{"details":{inner}}}"#);
        }
        let mut v = JsValue::parse(inner.as_bytes()).expect("json");
        let mut stored = Vec::new();
        let mut put = |b: arbor_core::persist::BlobPut<'_>| -> Result<String, ()> {
            stored.push(b.bytes.to_vec());
            Ok(arbor_store::blobs::sha256_hex(b.bytes))
        };
        let changed = arbor_core::persist::prepare_for_persistence(&mut v, &mut put).expect("ok");
        prop_assert_eq!(changed, data.len() >= 1024 || with_events);
        let once = v.to_json();
        let mut again = JsValue::parse(&once).expect("json");
        let changed_again = arbor_core::persist::prepare_for_persistence(&mut again, &mut put).expect("ok");
        prop_assert!(!changed_again, "idempotent");
        prop_assert!(!String::from_utf8_lossy(&once).contains("jsonlEvents"));
    }
}

fn count_identical_duplicates(doc: &SessionDoc) -> usize {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    let mut n = 0;
    for (i, e) in doc.entries().iter().enumerate() {
        if let Some(id) = e.id.as_deref() {
            match seen.get(id) {
                Some(&k) if doc.entry_line(k) == doc.entry_line(i) => n += 1,
                Some(_) => {}
                None => {
                    seen.insert(id, i);
                }
            }
        }
    }
    n
}

/// Found by `repair_loses_no_byte_and_is_final`: an identical copy of a self-parented entry
/// after a different entry with the same id. pi reads the last one (`byId`, last wins);
/// removing that copy instead of the earlier one handed the id to the different entry and
/// changed the session. The repair keeps the last copy and cuts its self-link.
#[test]
fn a_repair_keeps_the_copy_pi_reads() {
    let msg = |id: &str, parent: &str, s: u32| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:{s:02}.000Z","message":{{"role":"user","content":"","timestamp":1}}}}"#
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"prop","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        msg("e0000000", "null", 0),
        msg("e0000001", r#""e0000001""#, 1),
        msg("e0000001", r#""e0000000""#, 1),
        msg("e0000002", "null", 2),
        msg("e0000001", r#""e0000001""#, 1),
        msg("e0000003", "null", 3),
    ];
    let bytes = format!("{}\n", lines.join("\n")).into_bytes();
    let doc = SessionDoc::parse(Arc::new(bytes)).expect("session");
    let (kept, removed) = repaired_bytes(&doc).expect("something to repair");
    let fixed = SessionDoc::parse(Arc::new(kept.clone())).expect("still a session");
    let k = fixed.index().get("e0000001").expect("e0000001 kept");
    assert_eq!(
        fixed.entries()[k].parent_id,
        None,
        "the id went to another entry"
    );
    assert_eq!(
        fixed.entries()[k].line_no,
        5,
        "the last copy is the one kept"
    );
    // The earlier identical copy and the original bytes of the cut line went to quarantine;
    // the different entry stayed.
    assert_eq!(
        removed,
        format!("{}\n{}\n", lines[2], lines[5]).into_bytes()
    );
    assert!(String::from_utf8_lossy(&kept).contains(&lines[3]));
    assert!(repaired_bytes(&fixed).is_none(), "a repair is final");
}
