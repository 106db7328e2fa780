//! `JSON.stringify` output: JS numbers, JS string escapes, integer-like keys first.
use super::scan::find_special;
use super::value::surrogate_at;
use super::{JsStr, JsValue};

mod canonical;
pub use canonical::{
    canonical_or_keep, canonicalize, canonicalize_or_keep, write_canonical, Canonical,
};

/// Appends `JSON.stringify(value)` to `out`: array-index keys (canonical decimal integers
/// 0..=4294967294) first in ascending numeric order, then the others in insertion order.
///
/// Iterative, so values nested 10 000 deep (the parser's limit) are fine.
pub fn write_js_value(value: &JsValue, out: &mut Vec<u8>) {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, JsValue>),
        /// Members, the order to write them in (empty: as they are), next position.
        Object(&'a [(JsStr, JsValue)], Vec<usize>, usize),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut cur = value;
    loop {
        match cur {
            JsValue::Null => out.extend_from_slice(b"null"),
            JsValue::Bool(true) => out.extend_from_slice(b"true"),
            JsValue::Bool(false) => out.extend_from_slice(b"false"),
            JsValue::Number(n) => write_js_number(*n, out),
            JsValue::String(s) => write_js_str(s, out),
            JsValue::Array(items) => {
                out.push(b'[');
                let mut it = items.iter();
                if let Some(first) = it.next() {
                    stack.push(Frame::Array(it));
                    cur = first;
                    continue;
                }
                out.push(b']');
            }
            JsValue::Object(members) => {
                out.push(b'{');
                let order = key_order(members);
                let first = order.first().copied().unwrap_or(0);
                if let Some((k, v)) = members.get(first) {
                    write_js_str(k, out);
                    out.push(b':');
                    stack.push(Frame::Object(members, order, 1));
                    cur = v;
                    continue;
                }
                out.push(b'}');
            }
        }
        // `cur` is written: find the next value to write, closing finished containers.
        loop {
            match stack.last_mut() {
                None => return,
                Some(Frame::Array(it)) => {
                    if let Some(v) = it.next() {
                        out.push(b',');
                        cur = v;
                        break;
                    }
                    out.push(b']');
                    stack.pop();
                }
                Some(Frame::Object(members, order, next)) => {
                    let p = if order.is_empty() {
                        *next
                    } else {
                        order.get(*next).copied().unwrap_or(usize::MAX)
                    };
                    *next += 1;
                    if let Some((k, v)) = members.get(p) {
                        out.push(b',');
                        write_js_str(k, out);
                        out.push(b':');
                        cur = v;
                        break;
                    }
                    out.push(b'}');
                    stack.pop();
                }
            }
        }
    }
}

/// The order `JSON.stringify` writes `members` in, or an empty vector when that is the
/// order they are in (no array-index key after a plain key or out of ascending order).
fn key_order(members: &[(JsStr, JsValue)]) -> Vec<usize> {
    let mut seen_plain = false;
    let mut last: Option<u32> = None;
    let mut in_order = true;
    for (k, _) in members {
        match array_index(&k.0) {
            Some(ix) => {
                if seen_plain || last.is_some_and(|l| l >= ix) {
                    in_order = false;
                    break;
                }
                last = Some(ix);
            }
            None => seen_plain = true,
        }
    }
    if in_order {
        return Vec::new();
    }
    let mut order: Vec<(u64, usize)> = members
        .iter()
        .enumerate()
        .map(|(p, (k, _))| (array_index(&k.0).map_or(u64::MAX, u64::from), p))
        .collect();
    // Stable: plain keys (u64::MAX) keep insertion order.
    order.sort_by_key(|&(ix, _)| ix);
    order.into_iter().map(|(_, p)| p).collect()
}

/// The value of `key` if it is an ECMAScript array index: the canonical decimal spelling
/// (no sign, no leading zero except `0` itself) of an integer in 0..=4294967294.
pub fn array_index(key: &[u8]) -> Option<u32> {
    match key {
        [] => None,
        [b'0'] => Some(0),
        [b'0', ..] => None,
        _ if key.len() > 10 => None,
        _ => {
            let mut v: u64 = 0;
            for &b in key {
                if !b.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + u64::from(b - b'0');
            }
            u32::try_from(v).ok().filter(|&v| v != u32::MAX)
        }
    }
}

/// Appends the JS `Number.prototype.toString` spelling of `n` (`1`, `0.5`, `1e+21`, `1e-7`);
/// NaN and infinities are written `null`, `-0` as `0`.
pub fn write_js_number(n: f64, out: &mut Vec<u8>) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        out.push(b'0');
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        // Exact small integers: plain decimal digits (faster than the general path).
        write_int(n as i64, out);
    } else {
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(n).as_bytes());
    }
}

fn write_int(v: i64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut p = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        p -= 1;
        buf[p] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[p..]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the `JSON.stringify` escape of the ASCII byte `b` (`"`, `\` or a control).
#[inline]
fn push_escaped_byte(b: u8, out: &mut Vec<u8>) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => push_u_escape(u32::from(b), out),
    }
}

/// Appends `\uxxxx` (lowercase hex) for a UTF-16 code unit.
#[inline]
fn push_u_escape(u: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&[
        b'\\',
        b'u',
        HEX[(u >> 12) as usize & 15],
        HEX[(u >> 8) as usize & 15],
        HEX[(u >> 4) as usize & 15],
        HEX[u as usize & 15],
    ]);
}

/// Appends code point `cp` the way `JSON.stringify` writes it inside a string.
#[inline]
fn push_js_char(cp: u32, out: &mut Vec<u8>) {
    if cp < 0x80 {
        let b = cp as u8;
        if b == b'"' || b == b'\\' || b < 0x20 {
            push_escaped_byte(b, out);
        } else {
            out.push(b);
        }
    } else if (0xD800..0xE000).contains(&cp) {
        push_u_escape(cp, out);
    } else {
        super::scan::push_wtf8(cp, out);
    }
}

/// Appends a run of WTF-8 bytes holding no `"`, `\` or control byte: surrogates become
/// `\udxxx` escapes (a high one directly followed by a low one is joined into the pair's
/// code point); bytes that are not WTF-8 become U+FFFD.
fn push_wtf8_run(run: &[u8], out: &mut Vec<u8>) {
    let mut rest = run;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                return;
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                out.extend_from_slice(valid);
                if let Some(hi) = surrogate_at(bad) {
                    let lo = bad.get(3..).and_then(surrogate_at);
                    match lo {
                        Some(lo) if hi < 0xDC00 && lo >= 0xDC00 => {
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            super::scan::push_wtf8(cp, out);
                            rest = bad.get(6..).unwrap_or_default();
                        }
                        _ => {
                            push_u_escape(hi, out);
                            rest = bad.get(3..).unwrap_or_default();
                        }
                    }
                } else {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    rest = bad
                        .get(e.error_len().unwrap_or(bad.len())..)
                        .unwrap_or_default();
                }
            }
        }
    }
}

/// Appends a JSON string literal (with quotes) for a WTF-8 string, escaped as
/// `JSON.stringify` escapes: `\" \\ \b \f \n \r \t`, other controls as `\u00xx` (lowercase),
/// lone surrogates as `\udxxx` (lowercase), everything else raw.
pub fn write_js_str(s: &JsStr, out: &mut Vec<u8>) {
    let b = &s.0[..];
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut i = 0;
    loop {
        let j = find_special(b, i);
        let run = b.get(i..j).unwrap_or_default();
        if run.is_ascii() {
            out.extend_from_slice(run);
        } else {
            push_wtf8_run(run, out);
        }
        match b.get(j) {
            Some(&c) => push_escaped_byte(c, out),
            None => break,
        }
        i = j + 1;
    }
    out.push(b'"');
}

/// Appends a JSON string literal (with quotes) for UTF-8 text, escaped as `JSON.stringify` does.
pub fn write_str_escaped(s: &str, out: &mut Vec<u8>) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut i = 0;
    loop {
        let j = find_special(b, i);
        out.extend_from_slice(b.get(i..j).unwrap_or_default());
        match b.get(j) {
            Some(&c) => push_escaped_byte(c, out),
            None => break,
        }
        i = j + 1;
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(raw: &str) -> String {
        canon_bytes(raw.as_bytes())
    }
    fn canon_bytes(raw: &[u8]) -> String {
        let mut out = Vec::new();
        canonicalize(raw, &mut out).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
        String::from_utf8(out).expect("utf8")
    }
    fn num(n: f64) -> String {
        let mut out = Vec::new();
        write_js_number(n, &mut out);
        String::from_utf8(out).expect("utf8")
    }
    fn js(s: &JsStr) -> Vec<u8> {
        let mut out = Vec::new();
        write_js_str(s, &mut out);
        out
    }
    fn esc(s: &str) -> String {
        let mut out = Vec::new();
        write_str_escaped(s, &mut out);
        String::from_utf8(out).expect("utf8")
    }

    const KEY_ORDER_IN: &str =
        r#"{"2":1,"1":2,"b":3,"a":4,"-1":5,"01":6,"4294967294":7,"4294967295":8}"#;
    const KEY_ORDER_OUT: &str =
        r#"{"1":2,"2":1,"4294967294":7,"b":3,"a":4,"-1":5,"01":6,"4294967295":8}"#;

    #[test]
    fn key_order_example() {
        let v = JsValue::parse(KEY_ORDER_IN.as_bytes()).expect("valid");
        assert_eq!(String::from_utf8(v.to_json()).expect("utf8"), KEY_ORDER_OUT);
        assert_eq!(canon(KEY_ORDER_IN), KEY_ORDER_OUT);
        assert_eq!(canon(KEY_ORDER_OUT), KEY_ORDER_OUT);
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"10"), Some(10));
        assert_eq!(array_index(b"4294967294"), Some(4294967294));
        assert_eq!(array_index(b"4294967295"), None);
        assert_eq!(array_index(b"9999999999"), None);
        assert_eq!(array_index(b"00"), None);
        assert_eq!(array_index(b"01"), None);
        assert_eq!(array_index(b"-1"), None);
        assert_eq!(array_index(b"+1"), None);
        assert_eq!(array_index(b"1.0"), None);
        assert_eq!(array_index(b"1e3"), None);
        assert_eq!(array_index(b" 1"), None);
        assert_eq!(array_index(b""), None);
        assert_eq!(array_index(b"42949672940"), None);
    }

    #[test]
    fn numbers() {
        for (n, s) in [
            (1.0, "1"),
            (1e2, "100"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (12345678901234567890.0, "12345678901234567000"),
            (-0.0, "0"),
            (0.0, "0"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (f64::NEG_INFINITY, "null"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5, "-1.5"),
            (9007199254740992.0, "9007199254740992"),
            (1e15, "1000000000000000"),
            (999999999999999.0, "999999999999999"),
            (-999999999999999.0, "-999999999999999"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (1.23e-18, "1.23e-18"),
            (123e18, "123000000000000000000"),
            (1.5e300, "1.5e+300"),
            (-1e-7, "-1e-7"),
        ] {
            assert_eq!(num(n), s, "{n:e}");
        }
    }

    #[test]
    fn string_escapes() {
        let all_controls: String = (0u8..0x20).map(char::from).collect();
        assert_eq!(
            esc(&all_controls),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\
             \\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\
             \\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""
        );
        assert_eq!(
            esc("a\"b\\c/d\u{7f}\u{2028}\u{2029}é😀"),
            "\"a\\\"b\\\\c/d\u{7f}\u{2028}\u{2029}é😀\""
        );
        assert_eq!(esc(""), "\"\"");
        let long = "x".repeat(100) + "\n" + &"y".repeat(70);
        assert_eq!(
            esc(&long),
            format!("\"{}\\n{}\"", "x".repeat(100), "y".repeat(70))
        );
        // WTF-8: lone surrogates escaped in lowercase hex.
        assert_eq!(js(&JsStr(vec![0xED, 0xA0, 0xBD])), b"\"\\ud83d\"");
        assert_eq!(
            js(&JsStr(vec![b'a', 0xED, 0xB0, 0x80, b'\n'])),
            b"\"a\\udc00\\n\""
        );
        assert_eq!(
            js(&JsStr(vec![0xED, 0xBF, 0xBF, 0xED, 0xA0, 0x80])),
            b"\"\\udfff\\ud800\""
        );
        assert_eq!(js(&"é\"".into()), "\"é\\\"\"".as_bytes());
        // A surrogate pair stored as two WTF-8 halves is one character for JS.
        assert_eq!(
            js(&JsStr(vec![0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80])),
            "\"😀\"".as_bytes()
        );
        // Bytes that are not WTF-8 become U+FFFD.
        assert_eq!(js(&JsStr(vec![b'a', 0xFF])), "\"a\u{FFFD}\"".as_bytes());
    }

    #[test]
    fn stringify_values() {
        let v = JsValue::Array(vec![
            JsValue::Null,
            JsValue::Bool(true),
            JsValue::Number(f64::NAN),
            JsValue::Object(vec![
                ("b".into(), JsValue::Number(1.0)),
                ("0".into(), JsValue::Array(vec![])),
                ("a".into(), JsValue::Object(vec![])),
            ]),
            JsValue::String("\u{1}".into()),
        ]);
        assert_eq!(
            v.to_json(),
            br#"[null,true,null,{"0":[],"b":1,"a":{}},"\u0001"]"#
        );
    }

    #[test]
    fn canonicalize_strings() {
        assert_eq!(canon(r#""\u00e9""#), "\"é\"");
        assert_eq!(canon(r#""\u00E9""#), "\"é\"");
        assert_eq!(canon(r#""\/""#), "\"/\"");
        assert_eq!(canon(r#""\u001f""#), r#""\u001f""#);
        assert_eq!(canon(r#""\u001F""#), r#""\u001f""#);
        assert_eq!(canon(r#""\u000a\u000A""#), r#""\n\n""#);
        assert_eq!(canon(r#""\u0008\u000c\u000d\u0009""#), r#""\b\f\r\t""#);
        assert_eq!(canon(r#""\u0022\u005c\u005C""#), r#""\"\\\\""#);
        assert_eq!(canon(r#""\"\\\b\f\n\r\t""#), r#""\"\\\b\f\n\r\t""#);
        assert_eq!(canon(r#""\u0041\u007f""#), "\"A\u{7f}\"");
        assert_eq!(canon(r#""\ud83d\ude00""#), "\"😀\"");
        assert_eq!(canon(r#""\uD83D\uDE00""#), "\"😀\"");
        assert_eq!(canon(r#""\uD83D""#), r#""\ud83d""#);
        assert_eq!(canon(r#""\udc00x""#), r#""\udc00x""#);
        assert_eq!(canon(r#""\ud83dx\ude00""#), r#""\ud83dx\ude00""#);
        assert_eq!(canon(r#""\ud83d\ud83d\ude00""#), "\"\\ud83d😀\"");
        assert_eq!(canon(r#""\u2028\u2029""#), "\"\u{2028}\u{2029}\"");
        assert_eq!(canon("\"é😀\u{2028}\""), "\"é😀\u{2028}\"");
        // Invalid UTF-8 becomes U+FFFD, as pi's lossy file decoding.
        assert_eq!(canon_bytes(b"\"a\xffb\xe2\x82\""), "\"a\u{FFFD}b\u{FFFD}\"");
        assert_eq!(
            canon_bytes(b"\"\xed\xa0\xbd\""),
            "\"\u{FFFD}\u{FFFD}\u{FFFD}\""
        );
    }

    #[test]
    fn canonicalize_numbers() {
        for (raw, want) in [
            ("1.0", "1"),
            ("1E2", "100"),
            ("1e+2", "100"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("0.10", "0.1"),
            ("0", "0"),
            ("-5", "-5"),
            ("123456789012345", "123456789012345"),
            ("1234567890123456", "1234567890123456"),
            ("12345678901234567890", "12345678901234567000"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("1e400", "null"),
            ("-1e400", "null"),
            ("1e-400", "0"),
            ("2.50e-3", "0.0025"),
        ] {
            assert_eq!(canon(raw), want, "{raw}");
        }
    }

    #[test]
    fn canonicalize_structure() {
        assert_eq!(
            canon(" { \"a\" : [ 1 , { } , [ ] ] , \"b\" :\ttrue\n}\r\n"),
            r#"{"a":[1,{},[]],"b":true}"#
        );
        assert_eq!(canon(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(
            canon(r#"{"a":1,"\u0061":2,"a":{"x":1}}"#),
            r#"{"a":{"x":1}}"#
        );
        // Duplicates between a key copied as is and a rewritten one, both ways round.
        assert_eq!(canon(r#"{"\u0061":1,"b":0,"a":2}"#), r#"{"a":2,"b":0}"#);
        assert_eq!(canon(r#"{"a":1,"b":0,"\u0061":2}"#), r#"{"a":2,"b":0}"#);
        assert_eq!(canon(r#"{"\/":1,"/":2,"\u002F":3}"#), r#"{"/":3}"#);
        assert_eq!(canon(r#"{"\u0031":1,"0":0}"#), r#"{"0":0,"1":1}"#);
        // Whitespace everywhere, with rewrites in between.
        assert_eq!(
            canon(" {\n\t\"k\\u0020\" :\r\n[ 1.50 ,\"\\/\" , { \"z\" : 1 , \"0\" : 2 } ] } \n"),
            r#"{"k ":[1.5,"/",{"0":2,"z":1}]}"#
        );
        assert_eq!(
            canon(r#"{"b":0,"a":1,"1":2,"a":3,"0":4,"1":5}"#),
            r#"{"0":4,"1":5,"b":0,"a":3}"#
        );
        // Fixes nested inside fixes.
        assert_eq!(
            canon(r#"{"z":{"1":1,"0":0,"1":"one"},"3":[{"b":1,"b":2,"5":5}],"z":{"k":"\/"}}"#),
            r#"{"3":[{"5":5,"b":2}],"z":{"k":"/"}}"#
        );
        assert_eq!(
            canon(r#"[{"1":1,"0":0},{"1":1,"0":0}]"#),
            r#"[{"0":0,"1":1},{"0":0,"1":1}]"#
        );
        // Large objects (hash-map duplicate detection).
        let mut src = String::from("{");
        let mut want = String::from("{");
        for k in 0..100 {
            src.push_str(&format!("\"k{k}\":{k},"));
            if k == 7 {
                want.push_str("\"k7\":\"last\",");
            } else {
                want.push_str(&format!("\"k{k}\":{k},"));
            }
        }
        src.push_str("\"k7\":1,\"9\":9,\"k7\":\"last\"}");
        want.pop();
        want.push('}');
        let want = want.replacen('{', "{\"9\":9,", 1);
        assert_eq!(canon(&src), want);
        let v = JsValue::parse(src.as_bytes()).expect("valid");
        assert_eq!(String::from_utf8(v.to_json()).expect("utf8"), want);
        // A duplicate found at the moment the hash map is built.
        let mut src = String::from("{");
        for k in 0..32 {
            src.push_str(&format!("\"k{k}\":{k},"));
        }
        src.push_str("\"k0\":\"x\",\"k1\":\"y\"}");
        let v = JsValue::parse(src.as_bytes()).expect("valid");
        assert_eq!(canon(&src).into_bytes(), v.to_json());
    }

    #[test]
    fn canonicalize_large_objects_with_escaped_keys() {
        // Past the linear limit, keys written as escapes are compared through the hash map.
        let mut src = String::from("{");
        for k in 0..60 {
            src.push_str(&format!("\"\\u006b{k}\":{k},"));
        }
        src.push_str("\"k3\":\"x\",\"\\u006B59\":\"y\",\"k60\":60}");
        let v = JsValue::parse(src.as_bytes()).expect("valid");
        assert_eq!(canon(&src).into_bytes(), v.to_json());
        assert!(canon(&src).contains(r#""k3":"x""#));
        assert!(canon(&src).ends_with(r#""k59":"y","k60":60}"#));
    }

    #[test]
    fn canonicalize_on_many_threads() {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for k in 0..200 {
                        let src = format!(r#"{{"b":{k},"{t}":[1.0, "\u00e9"],"b":{t}}}"#);
                        assert_eq!(canon(&src), format!(r#"{{"{t}":[1,"é"],"b":{t}}}"#));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("thread");
        }
    }

    #[test]
    fn canonical_input_is_kept_as_is() {
        let asis = [
            &br#"{"role":"user","content":[{"type":"text","text":"hi \"x\"\n\u001b[0m \ud800"}],"n":1.5,"t":true,"z":null}"#[..],
            br#"[]"#,
            br#""plain""#,
            br#"{"1":0,"a":{"2":[1,2,{}]}}"#,
        ];
        for raw in asis {
            let mut out = b"x".to_vec();
            assert_eq!(
                canonicalize_or_keep(raw, &mut out),
                Ok(Canonical::AsIs),
                "{raw:?}"
            );
            assert_eq!(out, b"x");
        }
        let written: [(&[u8], &[u8]); 6] = [
            (br#" {"a":1}"#, br#"{"a":1}"#),
            (br#"{"a":1} "#, br#"{"a":1}"#),
            (br#"{"a":1.0}"#, br#"{"a":1}"#),
            (br#"{"a":"\/"}"#, br#"{"a":"/"}"#),
            (br#"{"a":1,"a":2}"#, br#"{"a":2}"#),
            (br#"{"b":1,"2":2}"#, br#"{"2":2,"b":1}"#),
        ];
        for (raw, want) in written {
            let mut out = b"x".to_vec();
            assert_eq!(
                canonicalize_or_keep(raw, &mut out),
                Ok(Canonical::Written),
                "{raw:?}"
            );
            assert_eq!(&out[1..], want);
        }
    }

    #[test]
    fn canonicalize_errors() {
        for bad in [
            "",
            "{",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\":1,}",
            "[1,]",
            "[1 2]",
            "\"abc",
            "\"\\u12\"",
            "\"\\x\"",
            "\"\u{1}\"",
            "01",
            "1.",
            "-",
            "tru",
            "[1]]",
            "{} {}",
            "{\"a\" 1}",
            "{a:1}",
            "[\"a\":1]",
            "{\"a\",1}",
        ] {
            let mut out = Vec::new();
            assert!(canonicalize(bad.as_bytes(), &mut out).is_err(), "{bad:?}");
        }
        // Output already in `out` is kept: canonicalize appends.
        let mut out = b"prefix".to_vec();
        canonicalize(b"[1]", &mut out).expect("valid");
        assert_eq!(out, b"prefix[1]");
    }
}
