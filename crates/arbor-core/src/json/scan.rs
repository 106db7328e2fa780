//! Validating scanner: finds object members as byte ranges without allocating a tree.
//!
//! Also holds the byte-level helpers shared by the parser ([`super::JsValue::parse`]) and the
//! streaming transcoder ([`super::canonicalize`]): string-run scanning, escape checks, number
//! tokens, lossy UTF-8 and WTF-8 encoding. One module per kind of token: `strings` (runs,
//! escapes, UTF-8, decoding), `simd` (the x86-64 kernels behind the string runs), `number`,
//! and `validate` (values and objects, iteratively).
use super::{JsStr, JsonError};
use std::ops::Range;

/// The kind of a JSON value, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// a number token
    Number,
    /// a string (the range includes the quotes)
    String,
    /// an array
    Array,
    /// an object
    Object,
}

impl ValueKind {
    /// The kind of the value starting with byte `b`, or `None` if no JSON value starts so.
    /// Only the first byte is looked at: `t` gives [`ValueKind::Bool`] even for `tru`.
    pub fn from_first_byte(b: u8) -> Option<ValueKind> {
        Some(match b {
            b'n' => ValueKind::Null,
            b't' | b'f' => ValueKind::Bool,
            b'-' | b'0'..=b'9' => ValueKind::Number,
            b'"' => ValueKind::String,
            b'[' => ValueKind::Array,
            b'{' => ValueKind::Object,
            _ => return None,
        })
    }
}

/// One member of a scanned object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key's raw bytes between the quotes (escapes not decoded).
    pub key: Range<usize>,
    /// The value's bytes, from its first to its last byte (quotes and brackets included).
    pub value: Range<usize>,
    /// The value's kind.
    pub kind: ValueKind,
}

/// The members of one object, in source order (duplicates included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectScan {
    /// Members in the order they appear.
    pub members: Vec<Member>,
    /// Byte range of the whole object (`{` to `}` inclusive).
    pub span: Range<usize>,
}

impl ObjectScan {
    /// The value range of the *last* member named `key` (JS: the last duplicate wins).
    /// `key` is compared with the decoded key text.
    pub fn get(&self, src: &[u8], key: &str) -> Option<&Member> {
        self.members
            .iter()
            .rev()
            .find(|m| raw_key_eq(src, &m.key, key))
    }
}

/// Whether the raw (undecoded) key bytes `src[range]` decode to `want`.
fn raw_key_eq(src: &[u8], range: &Range<usize>, want: &str) -> bool {
    let Some(raw) = src.get(range.clone()) else {
        return false;
    };
    if raw == want.as_bytes() {
        // Equal bytes without a backslash are the same text; with a backslash, `want`
        // would have to contain one too, and then the decoded key could not hold it raw.
        return !raw.contains(&b'\\');
    }
    if !raw.contains(&b'\\') && raw.is_ascii() {
        return false;
    }
    decode_string(raw).is_ok_and(|s| s.0 == want.as_bytes())
}

/// Maximum nesting depth of arrays and objects accepted by the readers of this crate. Every
/// one of them is iterative, so the limit is only there to keep a count in range: a line
/// would have to be 2 GB long to reach it. `JSON.parse` has no limit either (V8 reads a
/// million levels), and a line pi reads must never be called malformed or torn because
/// arbor gave up on it.
pub const MAX_DEPTH: usize = 1 << 30;

#[inline]
pub(crate) fn err(offset: usize, message: &'static str) -> JsonError {
    JsonError { offset, message }
}

/// JSON whitespace: space, tab, LF, CR (and nothing else, as in `JSON.parse`).
#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Index of the first byte at or after `pos` that is not JSON whitespace (space, tab, LF, CR).
/// Returns `src.len()` when only whitespace follows (or when `pos` is past the end).
#[inline]
pub fn skip_ws(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while let Some(&b) = src.get(i) {
        if !is_ws(b) {
            return i;
        }
        i += 1;
    }
    src.len()
}

/// [`skip_ws`] when `WS`; `pos` itself when not. The scanner's compact mode (`WS == false`)
/// accepts no whitespace between tokens, so a line end can never be skipped as whitespace:
/// see [`scan_object_compact_at`].
#[inline(always)]
fn ws<const WS: bool>(src: &[u8], pos: usize) -> usize {
    if WS {
        skip_ws(src, pos)
    } else {
        pos
    }
}

mod number;
mod strings;
mod validate;

pub(crate) use number::*;
pub use strings::*;
pub use validate::*;

#[cfg(target_arch = "x86_64")]
pub(crate) use simd::canonical_string_end;

#[cfg(target_arch = "x86_64")]
mod simd;

/// Checks that `src[i..]` starts with the literal `lit`; returns the index past it.
#[inline]
pub(crate) fn expect_literal(src: &[u8], i: usize, lit: &'static [u8]) -> Result<usize, JsonError> {
    match src.get(i..i + lit.len()) {
        Some(s) if s == lit => Ok(i + lit.len()),
        _ => Err(err(i, "invalid literal")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_find(s: &[u8], start: usize, non_ascii: bool) -> usize {
        (start..s.len())
            .find(|&i| is_special(s[i]) || (non_ascii && s[i] >= 0x80))
            .unwrap_or(s.len())
    }

    /// Bytes biased towards the interesting ones, so runs of all lengths occur.
    fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                20 => 0x20u8..0x7f,
                1 => Just(b'"'),
                1 => Just(b'\\'),
                1 => 0u8..0x20,
                2 => 0x80u8..=0xff,
                1 => proptest::sample::select(vec![0xC3u8, 0xA9, 0xE2, 0x82, 0xAC, 0xED, 0xA0, 0xF0, 0x9F]),
            ],
            0..80,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn swar_find_matches_naive(s in arb_bytes(), start in 0usize..90) {
            prop_assert_eq!(find_special(&s, start), naive_find(&s, start, false).max(start.min(s.len())));
            prop_assert_eq!(
                find_special_or_non_ascii(&s, start),
                naive_find(&s, start, true).max(start.min(s.len()))
            );
        }

        #[test]
        fn lossy_copy_matches_std(s in arb_bytes()) {
            let mut out = Vec::new();
            let stop = copy_run_lossy(&s, 0, &mut out);
            prop_assert_eq!(stop, naive_find(&s, 0, false));
            let want = String::from_utf8_lossy(&s[..stop]);
            prop_assert_eq!(out, want.as_bytes());
        }

        #[test]
        fn utf8_seq_matches_std(
            lead in 0x80u8..=0xff,
            rest in proptest::collection::vec(
                prop_oneof![0x80u8..0xc0, any::<u8>()], 0..4),
        ) {
            let mut s = vec![lead];
            s.extend(rest);
            let chunk = s.utf8_chunks().next().expect("non-empty");
            let want = match chunk.valid().chars().next() {
                Some(c) => Ok(c.len_utf8()),
                None => Err(chunk.invalid().len()),
            };
            prop_assert_eq!(utf8_seq(&s, 0), want, "{:x?}", s);
        }

        /// Tokens flagged canonical are exactly what JS prints for their value.
        #[test]
        fn canonical_number_tokens(
            neg in any::<bool>(),
            int in prop_oneof![Just(String::from("0")), "[1-9][0-9]{0,17}"],
            frac in proptest::option::of("[0-9]{1,18}"),
            exp in proptest::option::of(-30i32..30),
        ) {
            let mut tok = String::new();
            if neg {
                tok.push('-');
            }
            tok.push_str(&int);
            if let Some(f) = &frac {
                tok.push('.');
                tok.push_str(f);
            }
            if let Some(e) = exp {
                tok.push_str(&format!("e{e}"));
            }
            let t = scan_number(tok.as_bytes(), 0).expect("valid token");
            prop_assert_eq!(t.end, tok.len());
            let n: f64 = tok.parse().expect("number");
            let mut js = Vec::new();
            super::super::write_js_number(n, &mut js);
            if t.canonical {
                prop_assert_eq!(&js, tok.as_bytes());
            }
            let mut out = Vec::new();
            super::super::canonicalize(tok.as_bytes(), &mut out).expect("valid");
            prop_assert_eq!(out, js);
        }
    }

    #[test]
    fn canonical_number_flags() {
        for (tok, canonical) in [
            ("0", true),
            ("-0", false),
            ("7", true),
            ("-123", true),
            ("123456789012345", true),
            ("1234567890123456", false),
            ("0.5", true),
            ("-0.5", true),
            ("0.000001", true),
            ("0.0000001", false),
            ("0.000009", true),
            ("0.10", false),
            ("1.0", false),
            ("123.456", true),
            ("12345678901234.5", true),
            ("123456789012345.6", false),
            ("0.123456789012345", true),
            ("0.1234567890123456", false),
            ("0.30000000000000004", false),
            ("1e2", false),
            ("1E2", false),
        ] {
            let t = scan_number(tok.as_bytes(), 0).expect("valid");
            assert_eq!(t.canonical, canonical, "{tok}");
        }
    }

    #[test]
    fn ws_and_kinds() {
        assert_eq!(skip_ws(b" \t\r\n x", 0), 5);
        assert_eq!(skip_ws(b"  ", 0), 2);
        assert_eq!(skip_ws(b"  ", 7), 2);
        // Form feed, vertical tab and NBSP are not JSON whitespace.
        assert_eq!(skip_ws(b"\x0c", 0), 0);
        assert_eq!(skip_ws(b"\x0b", 0), 0);
        assert_eq!(skip_ws("\u{a0}".as_bytes(), 0), 0);
        assert_eq!(ValueKind::from_first_byte(b'{'), Some(ValueKind::Object));
        assert_eq!(ValueKind::from_first_byte(b'x'), None);
    }

    #[test]
    fn value_end_basic() {
        assert_eq!(value_end(b"  {\"a\":[1,2,{}]} ,", 0), Ok(16));
        assert_eq!(value_end(b"\"ab\\\"c\"x", 0), Ok(7));
        assert_eq!(value_end(b"-12.5e+3]", 0), Ok(8));
        assert_eq!(value_end(b"true", 0), Ok(4));
        assert_eq!(value_end(b"[ ]", 0), Ok(3));
        assert_eq!(value_end(b"\"\\ud83d\"", 0), Ok(8));
        assert_eq!(value_end(b"\"\\udc00x\"", 0), Ok(9));
        assert_eq!(value_end(b"\"\xff\xfe\"", 0), Ok(4));
        for bad in [
            &b"[1,]"[..],
            b"{\"a\":1,}",
            b"{a:1}",
            b"01",
            b"-",
            b"1.",
            b".5",
            b"1e",
            b"+1",
            b"NaN",
            b"tru",
            b"nul",
            b"\"\x01\"",
            b"\"\\x\"",
            b"\"\\u12g4\"",
            b"\"\\u12",
            b"\"abc",
            b"[1 2]",
            b"{\"a\" 1}",
            b"{\"a\":1 \"b\":2}",
            b"",
            b"   ",
            b"/*c*/1",
            b"'a'",
        ] {
            let r = value_end(bad, 0).and_then(|e| {
                if skip_ws(bad, e) == bad.len() {
                    Ok(e)
                } else {
                    Err(err(e, "trailing"))
                }
            });
            assert!(r.is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(value_end(b"01", 0), Ok(1));
    }

    #[test]
    fn any_depth_is_read() {
        let deep = |n: usize| {
            let mut v = vec![b'['; n];
            v.extend(vec![b']'; n]);
            v
        };
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                // No depth gives up: pi reads these lines, so arbor must too.
                assert_eq!(value_end(&deep(1_000_000), 0), Ok(2_000_000));
                assert!(value_end(&deep(1_000_000)[..1_999_999], 0).is_err());
                let mut obj = b"{\"a\":".to_vec();
                obj.extend(deep(500_000));
                obj.push(b'}');
                assert_eq!(scan_object(&obj).map(|s| s.members.len()), Ok(1));
                // Mixed objects and arrays.
                let mut m = Vec::new();
                for _ in 0..5_000 {
                    m.extend_from_slice(b"{\"k\":[");
                }
                m.push(b'1');
                for _ in 0..5_000 {
                    m.extend_from_slice(b"]}");
                }
                assert_eq!(value_end(&m, 0), Ok(m.len()));
                assert!(value_end(&m[..m.len() - 1], 0).is_err());
            })
            .map(|h| h.join())
            .expect("spawn")
            .expect("join");
    }

    #[test]
    fn scan_object_members() {
        let src = br#" {"a" : 1, "b\"c":"x\ny", "d":[1,{"e":null}], "a": true , "":{}} "#;
        let scan = scan_object(src).expect("valid");
        assert_eq!(scan.members.len(), 5);
        assert_eq!(scan.span, 1..src.len() - 1);
        let m = &scan.members[1];
        assert_eq!(&src[m.key.clone()], br#"b\"c"#);
        assert_eq!(&src[m.value.clone()], br#""x\ny""#);
        assert_eq!(m.kind, ValueKind::String);
        assert_eq!(scan.members[2].kind, ValueKind::Array);
        assert_eq!(&src[scan.members[2].value.clone()], br#"[1,{"e":null}]"#);
        // Last duplicate wins.
        let a = scan.get(src, "a").expect("a");
        assert_eq!(&src[a.value.clone()], b"true");
        assert_eq!(a.kind, ValueKind::Bool);
        assert_eq!(
            scan.get(src, "b\"c").map(|m| m.kind),
            Some(ValueKind::String)
        );
        assert_eq!(scan.get(src, "").map(|m| m.kind), Some(ValueKind::Object));
        assert!(scan.get(src, "z").is_none());
        assert!(scan.get(src, "b\\\"c").is_none());

        let esc = br#"{"\u0061b":1}"#;
        let scan = scan_object(esc).expect("valid");
        assert!(scan.get(esc, "ab").is_some());
        assert!(scan.get(esc, "\\u0061b").is_none());

        assert_eq!(scan_object(b"{}").map(|s| s.members.len()), Ok(0));
        assert!(scan_object(b"[1]").is_err());
        assert!(scan_object(b"\"x\"").is_err());
        assert!(scan_object(b"{} x").is_err());
        assert!(scan_object(b"{}{}").is_err());
        assert!(scan_object(b"").is_err());
    }

    #[test]
    fn decode() {
        let d = |s: &[u8]| decode_string(s).map(|s| s.0);
        assert_eq!(
            d(br#"a\"b\\c\/d\b\f\n\r\t"#),
            Ok(b"a\"b\\c/d\x08\x0c\n\r\t".to_vec())
        );
        assert_eq!(d(br#"\u00e9\u00E9"#), Ok("éé".as_bytes().to_vec()));
        assert_eq!(d(br#"\ud83d\ude00"#), Ok("😀".as_bytes().to_vec()));
        assert_eq!(d(br#"\uD83D\uDE00"#), Ok("😀".as_bytes().to_vec()));
        assert_eq!(d(br#"\ud83d"#), Ok(vec![0xED, 0xA0, 0xBD]));
        assert_eq!(d(br#"\udc00x"#), Ok(vec![0xED, 0xB0, 0x80, b'x']));
        // High surrogate followed by a non-low escape: both kept.
        assert_eq!(d(br#"\ud83d\u0041"#), Ok(vec![0xED, 0xA0, 0xBD, b'A']));
        assert_eq!(
            d(br#"\ud83d\ud83d\ude00"#),
            Ok([&[0xED, 0xA0, 0xBD][..], "😀".as_bytes()].concat())
        );
        // Low then high: two lone surrogates.
        assert_eq!(
            d(br#"\ude00\ud83d"#),
            Ok(vec![0xED, 0xB8, 0x80, 0xED, 0xA0, 0xBD])
        );
        assert_eq!(d(br#"\u0000"#), Ok(vec![0]));
        // Invalid UTF-8 becomes U+FFFD (maximal subparts).
        assert_eq!(d(b"a\xffb"), Ok("a\u{FFFD}b".as_bytes().to_vec()));
        assert_eq!(d(b"\xe2\x82"), Ok("\u{FFFD}".as_bytes().to_vec()));
        assert_eq!(
            d(b"\xed\xa0\x80"),
            Ok("\u{FFFD}\u{FFFD}\u{FFFD}".as_bytes().to_vec())
        );
        assert_eq!(d("é€😀".as_bytes()), Ok("é€😀".as_bytes().to_vec()));
        assert!(d(b"\x1f").is_err());
        assert!(d(b"a\"b").is_err());
        assert!(d(b"\\").is_err());
        assert!(d(b"\\u00").is_err());
        assert!(d(b"\\a").is_err());
        assert!(d(b"\\U0041").is_err());
    }
}

#[cfg(test)]
mod skip_string_tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes biased towards what makes string scanning hard: quotes, runs of backslashes,
    /// `u` escapes with and without hex digits, control bytes, non-ASCII.
    fn arb_string_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                12 => 0x20u8..0x7f,
                3 => Just(b'\\'),
                2 => Just(b'"'),
                2 => proptest::sample::select(b"nrtbf/u".to_vec()),
                2 => proptest::sample::select(b"0123456789abcdefABCDEF".to_vec()),
                1 => 0u8..0x20,
                1 => 0x80u8..=0xff,
            ],
            0..400,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn block_scan_matches_scalar(s in arb_string_bytes(), start in 0usize..80) {
            let start = start.min(s.len());
            prop_assert_eq!(skip_string(&s, start), skip_string_scalar(&s, start));
        }

        #[cfg(target_arch = "x86_64")]
        #[test]
        fn sse2_blocks_match_scalar(s in arb_string_bytes(), start in 0usize..80) {
            let start = start.min(s.len());
            let got = match simd::blocks_sse2(&s, start) {
                simd::Skip::Done(end) => Ok(end),
                simd::Skip::From(i) => skip_string_scalar(&s, i),
            };
            prop_assert_eq!(got, skip_string_scalar(&s, start));
        }

        #[cfg(target_arch = "x86_64")]
        #[test]
        fn avx2_and_avx512_blocks_match_scalar(s in arb_string_bytes(), start in 0usize..80) {
            let start = start.min(s.len());
            let want = skip_string_scalar(&s, start);
            let finish = |r: simd::Skip| match r {
                simd::Skip::Done(end) => Ok(end),
                simd::Skip::From(i) => skip_string_scalar(&s, i),
            };
            if simd::has_avx2() {
                // SAFETY: the CPU has AVX2.
                prop_assert_eq!(finish(unsafe { simd::blocks_avx2(&s, start) }), want.clone());
            }
            if simd::has_avx512() {
                // SAFETY: the CPU has AVX-512 F, BW and VBMI.
                prop_assert_eq!(finish(unsafe { simd::blocks_avx512(&s, start) }), want);
            }
        }

        /// The AVX-512 canonical check gives the AVX2 one's answers (which the transcoder's
        /// proptests hold against the byte-wise path), on raw bytes and on UTF-8 text.
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn canonical_avx512_matches_avx2(
            s in arb_string_bytes(),
            text in "[a-z\\\\\"\u{1}\u{e9}\u{20ac}\u{1F600}/nu0-9]{0,200}",
            start in 0usize..80,
        ) {
            if simd::has_avx2() && simd::has_avx512() {
                for input in [s.clone(), text.into_bytes()] {
                    let start = start.min(input.len());
                    // SAFETY: the CPU has AVX2 and AVX-512 F, BW and VBMI.
                    let (a, b) = unsafe {
                        (simd::canonical_avx2(&input, start), simd::canonical_avx512(&input, start))
                    };
                    prop_assert_eq!(a, b);
                }
            }
        }

        #[test]
        fn block_scan_matches_scalar_on_escape_dense_text(words in proptest::collection::vec(
            proptest::sample::select(vec!["ab", "\\n", "\\\\", "\\\"", "\\u001b", "\\ud83d", "\\u00", "\\x", "\t", "x\"", "    ",
                // Near misses of hex digits for the block-wide `\\u` check.
                "\\uFfAe", "\\u0G0a", "\\u@abc", "\\u12/4", "\\u:123", "\\u`bcd", "\\u\u{e1}", "\\u123g", "\\uabc\\n", "\\u12"]), 0..120),
            pad in 0usize..70) {
            let mut s = vec![b'a'; pad];
            for w in &words { s.extend_from_slice(w.as_bytes()); }
            s.extend_from_slice(b"\"tail");
            prop_assert_eq!(skip_string(&s, pad), skip_string_scalar(&s, pad));
        }
    }

    #[test]
    fn backslash_runs_across_block_boundaries() {
        for pad in 0..130 {
            for run in 0..6 {
                let mut s = vec![b'x'; pad];
                s.extend(std::iter::repeat_n(b'\\', run));
                s.extend_from_slice(b"\"more\" and more text to fill the block ......................................\"");
                assert_eq!(
                    skip_string(&s, 0),
                    skip_string_scalar(&s, 0),
                    "pad {pad} run {run}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// A string skipped a segment at a time (as a long one is, with the bytes behind
        /// released) ends where, or fails as, the skip of the whole string does: for every
        /// segment length, whatever escape, hex run or backslash run the cut falls in.
        #[test]
        fn segments_skip_as_the_whole_string(words in proptest::collection::vec(
            proptest::sample::select(vec!["ab", "\\n", "\\\\", "\\\"", "\\u001b", "\\ud83d\\ude00",
                "\\u00", "\\x", "\t", "x\"", "deadbeef", "\\uFfAe", "\\u12", "u", "\u{e9}", "\\/"]), 0..60),
            pad in 0usize..70, seg in 1usize..90) {
            let mut s = vec![b'a'; pad];
            for w in &words { s.extend_from_slice(w.as_bytes()); }
            s.extend_from_slice(b"\"tail");
            proptest::prop_assert_eq!(
                skip_string_segments(&s, pad, seg),
                skip_string_scalar(&s, pad)
            );
            // Unterminated: the same error.
            let open = &s[..s.len() - 5];
            proptest::prop_assert_eq!(
                skip_string_segments(open, pad, seg),
                skip_string_scalar(open, pad)
            );
        }
    }
}

/// Items of a raw JSON array (already validated), as byte ranges of `raw` (none when `raw`
/// is not an array; the items up to the first invalid one when it is not valid).
pub fn array_items(raw: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    if raw.first() != Some(&b'[') {
        return out;
    }
    let mut i = skip_ws(raw, 1);
    if raw.get(i) == Some(&b']') {
        return out;
    }
    while let Ok(end) = value_end(raw, i) {
        out.push(i..end);
        i = skip_ws(raw, end);
        if raw.get(i) != Some(&b',') {
            break;
        }
        i = skip_ws(raw, i + 1);
    }
    out
}
