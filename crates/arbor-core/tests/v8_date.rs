//! `arbor_core::time::parse_iso_ms` (V8's date parser, `arbor_core::v8date`) against node's own
//! `new Date(s).getTime()` with TZ=UTC (goldens/v8date.json, made by
//! tools/goldens/v8date/make.mjs): ISO forms, V8's legacy forms and 600 generated strings
//! (issue 22, class 2: arbor read only the ISO format and gave `null` where pi gave a time).
use arbor_core::json::JsValue;
use arbor_testkit::goldens::*;

#[test]
fn v8_date_parse_matches_node() {
    let bytes =
        std::fs::read(goldens_root().join("v8date.json")).expect("read goldens/v8date.json");
    let all = JsValue::parse(&bytes).expect("json");
    let Some(JsValue::Array(cases)) = all.get("cases") else {
        panic!("cases");
    };
    let mut bad = Vec::new();
    let mut dates = 0;
    for c in cases {
        let JsValue::Array(pair) = c else {
            panic!("case")
        };
        let s = match &pair[0] {
            JsValue::String(s) => s.to_string_lossy().into_owned(),
            _ => panic!("string"),
        };
        let want = match &pair[1] {
            JsValue::Number(n) => Some(*n),
            _ => None,
        };
        dates += usize::from(want.is_some());
        let have = arbor_core::time::parse_iso_ms(&s);
        if have != want {
            bad.push(format!("{s:?}: node {want:?}, arbor {have:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
    assert!(cases.len() > 700 && dates > 200, "{} {dates}", cases.len());
}
