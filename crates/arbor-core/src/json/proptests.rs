//! Property tests for the JSON toolkit: round trips, `canonicalize` against an independent
//! model of `JSON.stringify(JSON.parse(raw))`, scanner ranges, truncation, serde agreement.
use super::scan::push_wtf8;
use super::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

fn arb_cp(surrogates: bool) -> BoxedStrategy<u32> {
    let common = prop_oneof![
        8 => 0x20u32..0x7f,
        2 => 0u32..0x20,
        1 => select(vec![0x22u32, 0x5c, 0x2f, 0x7f]),
        1 => select(vec![0x2028u32, 0x2029, 0xe9, 0x20ac, 0xfeff, 0xfffd, 0xffff, 0x1f600]),
        1 => 0x80u32..0xd800,
        1 => 0xe000u32..0x110000,
    ];
    if surrogates {
        prop_oneof![8 => common, 1 => 0xd800u32..0xdc00, 1 => 0xdc00u32..0xe000].boxed()
    } else {
        common.boxed()
    }
}

fn arb_jsstr(surrogates: bool) -> impl Strategy<Value = JsStr> {
    prop_oneof![
        4 => vec(arb_cp(surrogates), 0..8),
        1 => vec(arb_cp(surrogates), 30..90),
    ]
    .prop_map(|cps| {
        let mut v = Vec::new();
        for c in cps {
            push_wtf8(c, &mut v);
        }
        JsStr(v)
    })
}

fn arb_key(surrogates: bool) -> impl Strategy<Value = JsStr> {
    prop_oneof![
        1 => select(vec![
            "0", "1", "2", "10", "01", "00", "-1", "1.0", "4294967294", "4294967295",
            "a", "b", "", "role", "content", "é",
        ])
        .prop_map(JsStr::from),
        1 => arb_jsstr(surrogates),
    ]
}

fn arb_num() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<i32>().prop_map(f64::from),
        any::<i64>().prop_map(|i| i as f64),
        -1e6f64..1e6,
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (any::<i32>(), 0i32..20).prop_map(|(m, e)| f64::from(m) / 10f64.powi(e)),
        select(vec![
            0.0,
            -0.0,
            1e21,
            1e20,
            1e-7,
            1e-6,
            5e-324,
            f64::MAX,
            9007199254740993.0,
            0.1,
            1e15,
            1e16,
            123456789012345678.0,
        ]),
    ]
}

fn arb_value(surrogates: bool) -> impl Strategy<Value = JsValue> {
    arb_value_sized(surrogates, 4, 48)
}

fn arb_value_sized(surrogates: bool, depth: u32, size: u32) -> impl Strategy<Value = JsValue> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::Bool),
        arb_num().prop_map(JsValue::Number),
        arb_jsstr(surrogates).prop_map(JsValue::String),
    ];
    leaf.prop_recursive(depth, size, 6, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(JsValue::Array),
            vec((arb_key(surrogates), inner), 0..7).prop_map(JsValue::Object),
        ]
    })
}

// ---------------------------------------------------------------------------------------
// Reference model of JS semantics
// ---------------------------------------------------------------------------------------

/// Code points of a WTF-8 string (surrogates included).
fn cps(s: &JsStr) -> Vec<u32> {
    let b = &s.0;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (cp, n) = if c < 0x80 {
            (u32::from(c), 1)
        } else if c < 0xE0 {
            ((u32::from(c & 0x1F) << 6) | u32::from(b[i + 1] & 0x3F), 2)
        } else if c < 0xF0 {
            (
                (u32::from(c & 0x0F) << 12)
                    | (u32::from(b[i + 1] & 0x3F) << 6)
                    | u32::from(b[i + 2] & 0x3F),
                3,
            )
        } else {
            (
                (u32::from(c & 0x07) << 18)
                    | (u32::from(b[i + 1] & 0x3F) << 12)
                    | (u32::from(b[i + 2] & 0x3F) << 6)
                    | u32::from(b[i + 3] & 0x3F),
                4,
            )
        };
        out.push(cp);
        i += n;
    }
    out
}

/// The JS string as UTF-16 code units.
fn utf16(s: &JsStr) -> Vec<u16> {
    let mut out = Vec::new();
    for cp in cps(s) {
        if cp >= 0x10000 {
            out.push((0xD800 + ((cp - 0x10000) >> 10)) as u16);
            out.push((0xDC00 + ((cp - 0x10000) & 0x3FF)) as u16);
        } else {
            out.push(cp as u16);
        }
    }
    out
}

/// Well-formed WTF-8 for the same JS string (adjacent surrogate halves joined).
fn norm_str(s: &JsStr) -> JsStr {
    let units = utf16(s);
    let mut v = Vec::new();
    let mut i = 0;
    while i < units.len() {
        let u = u32::from(units[i]);
        if (0xD800..0xDC00).contains(&u) && i + 1 < units.len() {
            let lo = u32::from(units[i + 1]);
            if (0xDC00..0xE000).contains(&lo) {
                push_wtf8(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), &mut v);
                i += 2;
                continue;
            }
        }
        push_wtf8(u, &mut v);
        i += 1;
    }
    JsStr(v)
}

/// What `JSON.parse` of the value's literal spelling gives: duplicate keys merged (last value
/// in the first position), strings normalized.
fn normalize(v: &JsValue) -> JsValue {
    match v {
        JsValue::String(s) => JsValue::String(norm_str(s)),
        JsValue::Array(items) => JsValue::Array(items.iter().map(normalize).collect()),
        JsValue::Object(members) => {
            let mut out: Vec<(JsStr, JsValue)> = Vec::new();
            for (k, v) in members {
                let k = norm_str(k);
                let v = normalize(v);
                match out.iter_mut().find(|(k2, _)| *k2 == k) {
                    Some(slot) => slot.1 = v,
                    None => out.push((k, v)),
                }
            }
            JsValue::Object(out)
        }
        other => other.clone(),
    }
}

/// An independent `JSON.stringify` model: recursive, with a sort for key order and
/// per-code-unit string escaping.
fn model_stringify(v: &JsValue, out: &mut String) {
    match v {
        JsValue::Null => out.push_str("null"),
        JsValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JsValue::Number(n) => {
            if !n.is_finite() {
                out.push_str("null");
            } else if *n == 0.0 {
                out.push('0');
            } else {
                out.push_str(ryu_js::Buffer::new().format(*n));
            }
        }
        JsValue::String(s) => model_str(s, out),
        JsValue::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                model_stringify(item, out);
            }
            out.push(']');
        }
        JsValue::Object(members) => {
            let is_index = |k: &JsStr| -> Option<u64> {
                let s = k.as_str()?;
                let n: u64 = s.parse().ok()?;
                (n < 4294967295 && n.to_string() == s).then_some(n)
            };
            let mut idx: Vec<(u64, usize)> = Vec::new();
            let mut plain: Vec<usize> = Vec::new();
            for (p, (k, _)) in members.iter().enumerate() {
                match is_index(k) {
                    Some(n) => idx.push((n, p)),
                    None => plain.push(p),
                }
            }
            idx.sort();
            out.push('{');
            for (n, p) in idx.iter().map(|x| x.1).chain(plain).enumerate() {
                if n > 0 {
                    out.push(',');
                }
                model_str(&members[p].0, out);
                out.push(':');
                model_stringify(&members[p].1, out);
            }
            out.push('}');
        }
    }
}

fn model_str(s: &JsStr, out: &mut String) {
    out.push('"');
    let units = utf16(s);
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        match u {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0x0a => out.push_str("\\n"),
            0x0d => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0..=0x1f => out.push_str(&format!("\\u{u:04x}")),
            0xD800..=0xDBFF if i + 1 < units.len() && (0xDC00..0xE000).contains(&units[i + 1]) => {
                let cp =
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(units[i + 1]) - 0xDC00);
                out.push(char::from_u32(cp).expect("valid"));
                i += 1;
            }
            0xD800..=0xDFFF => out.push_str(&format!("\\u{u:04x}")),
            _ => out.push(char::from_u32(u32::from(u)).expect("valid")),
        }
        i += 1;
    }
    out.push('"');
}

fn model_json(v: &JsValue) -> Vec<u8> {
    let mut s = String::new();
    model_stringify(&normalize(v), &mut s);
    s.into_bytes()
}

// ---------------------------------------------------------------------------------------
// Random spelling of JSON text
// ---------------------------------------------------------------------------------------

struct Speller {
    state: u64,
    /// Escape everything outside ASCII (for serde agreement tests on ASCII text).
    ascii_only: bool,
    /// Sometimes put invalid UTF-8 bytes inside strings.
    bad_utf8: bool,
}

impl Speller {
    fn new(seed: u64) -> Self {
        Speller {
            state: seed,
            ascii_only: false,
            bad_utf8: false,
        }
    }
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn ws(&mut self, out: &mut Vec<u8>) {
        let w: &[u8] = match self.below(10) {
            0 => b" ",
            1 => b"\n",
            2 => b"\t",
            3 => b" \r\n  ",
            _ => b"",
        };
        out.extend_from_slice(w);
    }
    fn hex4(&mut self, u: u32, out: &mut Vec<u8>) {
        let s = format!("\\u{u:04x}");
        if self.below(2) == 0 {
            out.extend_from_slice(s.to_uppercase().replace("\\U", "\\u").as_bytes());
        } else {
            out.extend_from_slice(s.as_bytes());
        }
    }
    fn u_escape(&mut self, cp: u32, out: &mut Vec<u8>) {
        if cp >= 0x10000 {
            self.hex4(0xD800 + ((cp - 0x10000) >> 10), out);
            self.hex4(0xDC00 + ((cp - 0x10000) & 0x3FF), out);
        } else {
            self.hex4(cp, out);
        }
    }
    fn string(&mut self, s: &JsStr, out: &mut Vec<u8>) {
        out.push(b'"');
        for cp in cps(s) {
            if self.bad_utf8 && self.below(16) == 0 {
                let bad: &[u8] = match self.below(6) {
                    0 => &[0xFF],
                    1 => &[0xC3],
                    2 => &[0xE2, 0x82],
                    3 => &[0xED, 0xA0, 0x80],
                    4 => &[0x80],
                    _ => &[0xF0, 0x9F],
                };
                out.extend_from_slice(bad);
            }
            let short = match cp {
                0x22 => Some(&b"\\\""[..]),
                0x5c => Some(&b"\\\\"[..]),
                0x08 => Some(&b"\\b"[..]),
                0x0c => Some(&b"\\f"[..]),
                0x0a => Some(&b"\\n"[..]),
                0x0d => Some(&b"\\r"[..]),
                0x09 => Some(&b"\\t"[..]),
                0x2f => Some(&b"\\/"[..]),
                _ => None,
            };
            let must_escape =
                cp < 0x20 || cp == 0x22 || cp == 0x5c || (0xD800..0xE000).contains(&cp);
            let raw_ok = !(must_escape || (self.ascii_only && cp >= 0x80));
            match (short, raw_ok, self.below(3)) {
                (_, true, 0 | 1) => push_wtf8(cp, out),
                (Some(e), _, 0 | 1) => out.extend_from_slice(e),
                _ => self.u_escape(cp, out),
            }
        }
        out.push(b'"');
    }
    fn number(&mut self, n: f64, out: &mut Vec<u8>) {
        let s = match self.below(6) {
            0 => format!("{n}"),
            1 => {
                let e = format!("{n:e}");
                match self.below(3) {
                    0 => e.replace('e', "E"),
                    1 if !e.contains("e-") => e.replace('e', "e+"),
                    _ => e,
                }
            }
            2 => {
                let d = format!("{n}");
                if d.contains('.') {
                    d + "00"
                } else {
                    d + ".0"
                }
            }
            3 if n == 0.0 => select_str(self.below(4), &["-0", "0.0", "-0e5", "0E-3"]),
            _ => {
                let mut v = Vec::new();
                write_js_number(n, &mut v);
                String::from_utf8(v).expect("ascii")
            }
        };
        out.extend_from_slice(s.as_bytes());
    }
    fn value(&mut self, v: &JsValue, out: &mut Vec<u8>) {
        match v {
            JsValue::Null => out.extend_from_slice(b"null"),
            JsValue::Bool(true) => out.extend_from_slice(b"true"),
            JsValue::Bool(false) => out.extend_from_slice(b"false"),
            JsValue::Number(n) => self.number(*n, out),
            JsValue::String(s) => self.string(s, out),
            JsValue::Array(items) => {
                out.push(b'[');
                for (n, item) in items.iter().enumerate() {
                    self.ws(out);
                    if n > 0 {
                        out.push(b',');
                        self.ws(out);
                    }
                    self.value(item, out);
                }
                self.ws(out);
                out.push(b']');
            }
            JsValue::Object(members) => {
                self.object(members, out);
            }
        }
    }
    /// Spells an object; returns the (key, value) byte ranges of its members.
    fn object(
        &mut self,
        members: &[(JsStr, JsValue)],
        out: &mut Vec<u8>,
    ) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
        let mut ranges = Vec::new();
        out.push(b'{');
        for (n, (k, v)) in members.iter().enumerate() {
            self.ws(out);
            if n > 0 {
                out.push(b',');
                self.ws(out);
            }
            let ks = out.len();
            self.string(k, out);
            let ke = out.len();
            self.ws(out);
            out.push(b':');
            self.ws(out);
            let vs = out.len();
            self.value(v, out);
            ranges.push((ks + 1..ke - 1, vs..out.len()));
        }
        self.ws(out);
        out.push(b'}');
        ranges
    }
    fn document(&mut self, v: &JsValue) -> Vec<u8> {
        let mut out = Vec::new();
        self.ws(&mut out);
        self.value(v, &mut out);
        self.ws(&mut out);
        out
    }
}

/// Structural equality of serde_json values (member order aside: `to_json` moves index keys
/// first), numbers within a relative 1e-14: serde_json's default
/// float parser is not always correctly rounded (JsValue uses Rust's `str::parse`, which is).
fn approx_eq(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-14 * x.abs().max(y.abs()),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| approx_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| approx_eq(v, w)))
        }
        _ => a == b,
    }
}

fn select_str(i: u64, opts: &[&str]) -> String {
    opts[i as usize % opts.len()].to_string()
}

fn canon(raw: &[u8]) -> Result<Vec<u8>, JsonError> {
    let mut out = Vec::new();
    canonicalize(raw, &mut out).map(|()| out)
}

fn value_end_whole(raw: &[u8]) -> Result<usize, JsonError> {
    let e = value_end(raw, 0)?;
    if skip_ws(raw, e) == raw.len() {
        Ok(e)
    } else {
        Err(JsonError {
            offset: e,
            message: "trailing",
        })
    }
}

/// All readers agree on `raw` and nothing panics.
fn check_consistent(raw: &[u8]) -> Result<(), TestCaseError> {
    let parsed = JsValue::parse(raw);
    let canon = canon(raw);
    let end = value_end_whole(raw);
    let scan = scan_object(raw);
    prop_assert_eq!(parsed.is_ok(), canon.is_ok());
    prop_assert_eq!(parsed.is_ok(), end.is_ok());
    if let (Ok(p), Ok(c)) = (&parsed, &canon) {
        prop_assert_eq!(&p.to_json(), c);
    }
    prop_assert_eq!(scan.is_ok(), matches!(parsed, Ok(JsValue::Object(_))));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// (1) Stringify, parse, stringify again: the same bytes, and the independent model agrees.
    #[test]
    fn value_round_trip(v in arb_value(true)) {
        let norm = normalize(&v);
        let json = norm.to_json();
        prop_assert_eq!(&json, &model_json(&v));
        let back = JsValue::parse(&json).expect("stringify output parses");
        prop_assert_eq!(&back.to_json(), &json);
        // Duplicate keys in the text collapse as JS does.
        let dup = JsValue::parse(&v.to_json()).expect("parses");
        prop_assert_eq!(&dup.to_json(), &json);
        prop_assert_eq!(canon(&v.to_json()).expect("valid"), json);
    }

    /// (2) canonicalize == JSON.stringify(JSON.parse(raw)) for random spellings.
    #[test]
    fn canonicalize_matches_parse(v in arb_value(true), seed in any::<u64>(), bad in any::<bool>()) {
        let mut sp = Speller::new(seed);
        sp.bad_utf8 = bad;
        let raw = sp.document(&v);
        let parsed = JsValue::parse(&raw);
        prop_assert!(parsed.is_ok(), "{:?} {:?}", String::from_utf8_lossy(&raw), parsed);
        let c = canon(&raw).expect("canonicalize accepts");
        prop_assert_eq!(&c, &parsed.expect("ok").to_json());
        if !bad {
            prop_assert_eq!(&c, &model_json(&v));
        }
        prop_assert_eq!(value_end_whole(&raw).map(|_| ()), Ok(()));
        // Canonical output is a fixed point.
        prop_assert_eq!(&canon(&c).expect("valid"), &c);
        // canonicalize_or_keep: `AsIs` (nothing written) only when the input is its own
        // output; otherwise the same bytes as canonicalize, after what `out` already held.
        // (It may write an input that is its own output: a number with an exponent is
        // re-spelled, possibly to the same bytes.)
        for input in [&raw, &c] {
            let mut out = b"[prefix]".to_vec();
            let kept = canonicalize_or_keep(input, &mut out).expect("valid");
            let want = canon(input).expect("valid");
            match kept {
                Canonical::AsIs => {
                    prop_assert_eq!(&want, input);
                    prop_assert_eq!(&out[..], b"[prefix]".as_slice());
                }
                Canonical::Written => prop_assert_eq!(&out[8..], &want[..]),
            }
        }
    }

    /// (3) scan_object finds every member with exact key and value ranges.
    #[test]
    fn scan_object_ranges(
        members in vec((arb_key(true), arb_value(true)), 0..8),
        seed in any::<u64>(),
    ) {
        let mut sp = Speller::new(seed);
        let mut raw = Vec::new();
        sp.ws(&mut raw);
        let ranges = sp.object(&members, &mut raw);
        sp.ws(&mut raw);
        let scan = scan_object(&raw).expect("valid object");
        prop_assert_eq!(scan.members.len(), members.len());
        prop_assert_eq!(raw[scan.span.start], b'{');
        prop_assert_eq!(raw[scan.span.end - 1], b'}');
        for ((m, (k, v)), (kr, vr)) in scan.members.iter().zip(&members).zip(&ranges) {
            prop_assert_eq!(&m.key, kr);
            prop_assert_eq!(&m.value, vr);
            let key = decode_string(&raw[m.key.clone()]).expect("key decodes");
            prop_assert_eq!(&key, &norm_str(k));
            let val = JsValue::parse(&raw[m.value.clone()]).expect("value parses");
            prop_assert_eq!(&val, &normalize(v));
            let want_kind = match v {
                JsValue::Null => ValueKind::Null,
                JsValue::Bool(_) => ValueKind::Bool,
                JsValue::Number(_) => ValueKind::Number,
                JsValue::String(_) => ValueKind::String,
                JsValue::Array(_) => ValueKind::Array,
                JsValue::Object(_) => ValueKind::Object,
            };
            prop_assert_eq!(m.kind, want_kind);
        }
        // ObjectScan::get agrees with the DOM (last duplicate wins).
        let dom = JsValue::parse(&raw).expect("parses");
        for (k, _) in &members {
            if let Some(k) = k.as_str() {
                let m = scan.get(&raw, k).expect("present");
                let v = JsValue::parse(&raw[m.value.clone()]).expect("parses");
                prop_assert_eq!(Some(&v), dom.get(k));
            }
        }
    }

    /// (4) Every proper prefix of a valid object is an error for every reader.
    #[test]
    fn truncated_objects_fail(
        members in vec((arb_key(true), arb_value_sized(true, 3, 12)), 0..5),
        seed in any::<u64>(),
    ) {
        let mut sp = Speller::new(seed);
        let mut raw = Vec::new();
        sp.ws(&mut raw);
        sp.object(&members, &mut raw);
        for k in 0..raw.len() {
            let p = &raw[..k];
            prop_assert!(JsValue::parse(p).is_err());
            prop_assert!(canon(p).is_err());
            prop_assert!(scan_object(p).is_err());
            prop_assert!(value_end(p, 0).is_err());
        }
        prop_assert!(scan_object(&raw).is_ok());
    }

    /// (5) On ASCII text without lone surrogates, JsValue::parse accepts exactly what
    /// serde_json accepts, for random mutations of valid documents.
    #[test]
    fn serde_agreement(
        v in arb_value(false),
        seed in any::<u64>(),
        muts in vec((0u8..3, any::<Index>(), select(
            b"{}[]\":,0123456789-+.eE \t\n\\/ubfnrtaxAF\x01\x0c".to_vec())), 0..4),
    ) {
        let mut sp = Speller::new(seed);
        sp.ascii_only = true;
        let mut raw = sp.document(&v);
        for (op, at, b) in muts {
            let p = at.index(raw.len() + 1);
            match op {
                0 => raw.insert(p, b),
                1 if p < raw.len() => raw[p] = b,
                _ if p < raw.len() => { raw.remove(p); }
                _ => {}
            }
        }
        check_consistent(&raw)?;
        let ours = JsValue::parse(&raw);
        let theirs = serde_json::from_slice::<serde_json::Value>(&raw);
        if let Err(e) = &theirs {
            let e = e.to_string();
            // serde_json refuses lone surrogate escapes (JSON.parse keeps them, even in a
            // value a later duplicate key overwrites; a high surrogate followed by another
            // escape is "unexpected end of hex escape") and numbers that overflow f64
            // (JSON.parse gives Infinity).
            prop_assume!(
                !e.contains("surrogate")
                    && !e.contains("end of hex escape")
                    && !e.contains("number out of range")
            );
        }
        if let Ok(v) = &ours {
            fn has_surrogate(v: &JsValue) -> bool {
                match v {
                    JsValue::String(s) => s.has_surrogate(),
                    JsValue::Array(a) => a.iter().any(has_surrogate),
                    JsValue::Object(m) => m.iter().any(|(k, v)| k.has_surrogate() || has_surrogate(v)),
                    _ => false,
                }
            }
            prop_assert!(!has_surrogate(v) || theirs.is_err());
        }
        prop_assert_eq!(
            ours.is_ok(), theirs.is_ok(),
            "{:?}: ours {:?} serde {:?}", String::from_utf8_lossy(&raw), ours, theirs
        );
        if let (Ok(a), Ok(b)) = (&ours, &theirs) {
            // Same value (serde_json with preserve_order keeps first position, last value).
            let ours_text = String::from_utf8(a.to_json()).expect("utf8");
            let ours_back: serde_json::Value = serde_json::from_str(&ours_text).expect("valid");
            prop_assert!(approx_eq(&ours_back, b), "{} vs {}", ours_back, b);
        }
    }

    /// Random mutations (any byte) of valid documents: no panic, all readers agree.
    #[test]
    fn mutations_are_consistent(
        v in arb_value(true),
        seed in any::<u64>(),
        muts in vec((0u8..3, any::<Index>(), any::<u8>()), 0..4),
    ) {
        let mut raw = Speller::new(seed).document(&v);
        for (op, at, b) in muts {
            let p = at.index(raw.len() + 1);
            match op {
                0 => raw.insert(p, b),
                1 if p < raw.len() => raw[p] = b,
                _ if p < raw.len() => { raw.remove(p); }
                _ => {}
            }
        }
        check_consistent(&raw)?;
    }

    /// Arbitrary bytes: no panic, all readers agree.
    #[test]
    fn arbitrary_bytes(raw in vec(select(b"{}[]\":,01-.e \\u\"atrufnl\xff".to_vec()), 0..24)) {
        check_consistent(&raw)?;
        let _ = decode_string(&raw);
    }

    /// decode_string then write_js_str gives what canonicalize gives for the string.
    #[test]
    fn string_decode_and_write(s in arb_jsstr(true), seed in any::<u64>(), bad in any::<bool>()) {
        let mut sp = Speller::new(seed);
        sp.bad_utf8 = bad;
        let mut raw = Vec::new();
        sp.string(&s, &mut raw);
        let decoded = decode_string(&raw[1..raw.len() - 1]).expect("decodes");
        let mut out = Vec::new();
        write_js_str(&decoded, &mut out);
        prop_assert_eq!(&out, &canon(&raw).expect("valid"));
        if !bad {
            prop_assert_eq!(&decoded, &norm_str(&s));
            prop_assert_eq!(decoded.utf16_len(), utf16(&s).len());
            let mut m = String::new();
            model_str(&s, &mut m);
            prop_assert_eq!(out, m.into_bytes());
        }
        if let Some(t) = decoded.as_str() {
            let mut o2 = Vec::new();
            write_str_escaped(t, &mut o2);
            let mut o1 = Vec::new();
            write_js_str(&decoded, &mut o1);
            prop_assert_eq!(o1, o2);
        }
    }

    /// Numbers: JS spelling parses back to the same f64 and is a canonicalize fixed point.
    #[test]
    fn number_spelling(n in arb_num(), seed in any::<u64>()) {
        let mut out = Vec::new();
        write_js_number(n, &mut out);
        let mut rb = ryu_js::Buffer::new();
        let want = rb.format(if n == 0.0 { 0.0 } else { n });
        prop_assert_eq!(&out[..], want.as_bytes());
        let back: f64 = std::str::from_utf8(&out).expect("ascii").parse().expect("number");
        prop_assert_eq!(back, n);
        prop_assert_eq!(&canon(&out).expect("valid"), &out);
        let mut raw = Vec::new();
        Speller::new(seed).number(n, &mut raw);
        prop_assert_eq!(canon(&raw).expect("valid"), out);
    }
}

/// Raw JSON string contents for the piece decoder: plain ASCII, multi-byte UTF-8, every
/// escape (surrogate pairs, lone surrogates of both halves, a high one before a non-low
/// escape), and invalid UTF-8 (lone continuation bytes, truncated sequences).
fn arb_raw_string() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => select(vec!["a", "b", " ", "`", "]"])
            .prop_map(|s| s.as_bytes().to_vec()),
        2 => select(vec!["é", "€", "😀", "\u{2028}", "中"]).prop_map(|s| s.as_bytes().to_vec()),
        2 => select(vec![
            r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u0041", r"\u00e9",
            r"\ud83d\ude00", r"\ud83d", r"\ude00", r"\ud83d\u0041", r"\uD83D\uDE00", r"\u0000",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => select(vec![
            b"\x80".to_vec(), b"\xbf\xbf".to_vec(), b"\xe2\x82".to_vec(), b"\xf0\x9f\x98".to_vec(),
            b"\xed\xa0\x80".to_vec(), b"\xff".to_vec(), b"\xc3".to_vec(),
        ]),
    ];
    vec(atom, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The pieces of a string, joined, are the whole string decoded (lossily) at once, for
    /// every piece size: no escape, surrogate pair or character is cut, and invalid UTF-8
    /// becomes the same U+FFFD either way.
    #[test]
    fn str_pieces_join_to_the_whole_string(raw in arb_raw_string(), piece in 1usize..12) {
        let whole = decode_string(&raw).expect("decodes").to_string_lossy().into_owned();
        let mut pieces = StrPieces::new(&raw, piece);
        let mut joined = String::new();
        for p in pieces.by_ref() {
            let p = p.expect("a piece decodes");
            prop_assert!(!p.is_empty());
            joined.push_str(&p);
        }
        prop_assert_eq!(pieces.consumed(), raw.len());
        prop_assert_eq!(joined, whole);
    }

    /// The WTF-8 pieces (`next_wtf8`) join to the whole string decoded, and each spelled by
    /// `write_js_str` (without its quotes) joins to the whole string spelled: a lone
    /// surrogate stays `\udxxx`, as `JSON.stringify` of the parsed value writes it.
    #[test]
    fn wtf8_pieces_spell_the_whole_string(raw in arb_raw_string(), piece in 1usize..12) {
        let whole = decode_string(&raw).expect("decodes");
        let mut spelled_whole = Vec::new();
        write_js_str(&whole, &mut spelled_whole);
        let mut pieces = StrPieces::new(&raw, piece);
        let mut joined = Vec::new();
        let mut spelled = vec![b'"'];
        while let Some(p) = pieces.next_wtf8() {
            let p = p.expect("a piece decodes");
            prop_assert!(!p.is_empty());
            joined.extend_from_slice(&p.0);
            let mut one = Vec::new();
            write_js_str(&p, &mut one);
            spelled.extend_from_slice(&one[1..one.len() - 1]);
        }
        spelled.push(b'"');
        prop_assert_eq!(pieces.consumed(), raw.len());
        prop_assert_eq!(joined, whole.0);
        prop_assert_eq!(spelled, spelled_whole);
    }

    /// A string that does not decode gives an error as a piece, as `decode_string` does.
    #[test]
    fn str_pieces_fail_where_decode_string_fails(
        raw in vec(select(b"ab\\\"\x01u0n".to_vec()), 0..16), piece in 1usize..6,
    ) {
        let whole = decode_string(&raw);
        let pieces: Result<Vec<String>, JsonError> = StrPieces::new(&raw, piece).collect();
        prop_assert_eq!(whole.is_err(), pieces.is_err());
    }
}
