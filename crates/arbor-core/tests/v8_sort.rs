//! `arbor_core::js::v8_sort` against node's own `Array.prototype.sort` (V8 TimSort) with pi's
//! getTree comparator, NaN timestamps included (goldens/v8sort.json, made by
//! tools/goldens/v8sort/make.mjs): the same permutation at every length, runs, merges and
//! galloping included (issue 22, class 1: arbor used Rust's `sort_by` at 64 children and more,
//! which panicked on the inconsistent comparator and gave another order).
use arbor_core::json::JsValue;
use arbor_testkit::goldens::*;

#[test]
fn v8_sort_matches_node_at_every_length() {
    let bytes =
        std::fs::read(goldens_root().join("v8sort.json")).expect("read goldens/v8sort.json");
    let all = JsValue::parse(&bytes).expect("json");
    let arr = |v: Option<&JsValue>| match v {
        Some(JsValue::Array(a)) => a.clone(),
        _ => panic!("not an array"),
    };
    let num = |v: &JsValue| match v {
        JsValue::Number(n) => *n,
        _ => f64::NAN,
    };
    let cases = arr(all.get("cases"));
    let mut checked = 0;
    let mut long_with_nan = 0;
    for c in &cases {
        let ts: Vec<f64> = arr(c.get("ts")).iter().map(num).collect();
        let want: Vec<usize> = arr(c.get("order"))
            .iter()
            .map(|v| num(v) as usize)
            .collect();
        let mut have: Vec<usize> = (0..ts.len()).collect();
        arbor_core::js::v8_sort_by_number(&mut have, |a, b| ts[a] - ts[b]);
        assert_eq!(have, want, "n={} case {checked}", ts.len());
        checked += 1;
        if ts.len() >= 64 && ts.iter().any(|t| t.is_nan()) {
            long_with_nan += 1;
        }
    }
    assert!(
        checked >= 100 && long_with_nan >= 30,
        "{checked} {long_with_nan}"
    );
}
