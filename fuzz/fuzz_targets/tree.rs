//! Fuzzes pi's `getTree()` order (issue 22): the sibling sort is V8's TimSort with an
//! inconsistent comparator whenever a timestamp does not parse, at every length.
//!
//! * `v8_sort_by_number` on arbitrary numbers (NaN included, many ties, runs): never panics,
//!   always a permutation, and without NaN a stable ascending order.
//! * A session with one root and up to a few hundred children whose timestamps come from the
//!   input (ISO, V8's legacy forms, garbage, numbers), plus any bytes read as a session: the
//!   tree never panics and lists every entry exactly once (in the tree or as hidden).
#![no_main]
use arbor_core::doc::SessionDoc;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

const STAMPS: &[&str] = &[
    "2026-11-24T20:00:00.000Z",
    "2026-11-24 20:05:04Z",
    "Nov 24 2026 20:05:05 GMT",
    "2026-11-31T20:05:06Z",
    "garbage",
    "",
    "1",
    "2024/01/02",
    "2026-11-24T20:05:07z",
];

fn check_tree(doc: &SessionDoc) {
    let tree = doc.index().tree(doc);
    let mut out = Vec::new();
    tree.write_json(doc, &mut out);
    let n = doc.entries().len();
    let mut seen = vec![0usize; n];
    for i in tree.preorder() {
        seen[i] += 1;
    }
    for &i in &tree.unreachable {
        seen[i] += 1;
    }
    assert!(seen.iter().all(|&c| c == 1), "every entry once: {seen:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 3 {
        0 => {
            // Numbers from pairs of bytes: small values (ties, runs), NaN for 0xff.
            let ts: Vec<f64> = rest
                .chunks(2)
                .map(|c| match c {
                    [0xff, ..] => f64::NAN,
                    [a, b] => f64::from(*a % 32) * 256.0 + f64::from(*b),
                    [a] => f64::from(*a),
                    _ => 0.0,
                })
                .collect();
            let mut v: Vec<usize> = (0..ts.len()).collect();
            arbor_core::js::v8_sort_by_number(&mut v, |a, b| ts[a] - ts[b]);
            let mut p = v.clone();
            p.sort_unstable();
            assert!(p.iter().enumerate().all(|(i, &x)| i == x), "a permutation");
            if !ts.iter().any(|t| t.is_nan()) {
                assert!(v.windows(2).all(|w| ts[w[0]] < ts[w[1]] || (ts[w[0]] == ts[w[1]] && w[0] < w[1])));
            }
        }
        1 => {
            let mut s = String::from(
                "{\"type\":\"session\",\"version\":3,\"id\":\"f\",\"timestamp\":\"2026-11-24T20:00:00.000Z\",\"cwd\":\"/\"}\n\
                 {\"type\":\"message\",\"id\":\"r\",\"parentId\":null,\"timestamp\":\"2026-11-24T20:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"r\"}}\n",
            );
            for (i, &b) in rest.iter().enumerate().take(400) {
                let ts = if b & 0x80 != 0 {
                    format!("\"2026-11-24T20:{:02}:{:02}.000Z\"", (b >> 3) & 15, b & 7)
                } else {
                    format!("{:?}", STAMPS[usize::from(b) % STAMPS.len()])
                };
                s.push_str(&format!(
                    "{{\"type\":\"custom\",\"id\":\"c{i}\",\"parentId\":\"r\",\"timestamp\":{ts}}}\n"
                ));
            }
            let doc = SessionDoc::parse(Arc::new(s.into_bytes())).expect("a session");
            check_tree(&doc);
        }
        _ => {
            if let Ok(doc) = SessionDoc::parse(Arc::new(rest.to_vec())) {
                check_tree(&doc);
            }
        }
    }
});
