//! A JSON DOM with ECMAScript semantics, used only where a whole value must be rebuilt.
use super::scan::{
    decode_string_at, err, expect_literal, number_value, scan_number, skip_ws, MAX_DEPTH,
};
use super::JsonError;
use std::borrow::Cow;
use std::collections::HashMap;

/// A JS string held as WTF-8: UTF-8 that may also contain surrogate code points
/// (encoded as the 3-byte sequences `ED A0..BF xx`), so lone surrogates round-trip.
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct JsStr(pub Vec<u8>);

impl JsStr {
    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The text as `&str` when it holds no surrogate code point.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
    /// The text with every lone surrogate replaced by U+FFFD.
    ///
    /// Each surrogate (3 WTF-8 bytes) becomes one U+FFFD, as `TextEncoder` and
    /// `Buffer.from(s)` do in JS. Bytes that are not WTF-8 at all (only possible when the
    /// vector was filled by hand) are replaced as a lossy UTF-8 decoder would.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        match std::str::from_utf8(&self.0) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                let mut out = String::with_capacity(self.0.len());
                let mut rest = &self.0[..];
                while !rest.is_empty() {
                    match std::str::from_utf8(rest) {
                        Ok(s) => {
                            out.push_str(s);
                            break;
                        }
                        Err(e) => {
                            let (valid, bad) = rest.split_at(e.valid_up_to());
                            out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                            out.push('\u{FFFD}');
                            let skip = if surrogate_at(bad).is_some() {
                                3
                            } else {
                                e.error_len().unwrap_or(bad.len())
                            };
                            rest = bad.get(skip..).unwrap_or_default();
                        }
                    }
                }
                Cow::Owned(out)
            }
        }
    }
    /// Length in UTF-16 code units (JS `string.length`): a supplementary code point counts 2,
    /// a surrogate (3 WTF-8 bytes) counts 1, every other code point 1.
    pub fn utf16_len(&self) -> usize {
        // Every code point has exactly one non-continuation byte; 4-byte sequences
        // (leading byte F0..F4) are the ones needing a UTF-16 pair.
        self.0
            .iter()
            .map(|&b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
            .sum()
    }
    /// Whether the string holds a lone surrogate (is not valid UTF-8).
    pub fn has_surrogate(&self) -> bool {
        std::str::from_utf8(&self.0).is_err()
    }
}

/// The surrogate code unit encoded (as WTF-8) at the start of `b`, if any.
#[inline]
pub(crate) fn surrogate_at(b: &[u8]) -> Option<u32> {
    match b {
        [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
            Some(0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F))
        }
        _ => None,
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> Self {
        JsStr(s.as_bytes().to_vec())
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> Self {
        JsStr(s.into_bytes())
    }
}

impl std::fmt::Debug for JsStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

/// A parsed JSON value with `JSON.parse` semantics: numbers are f64, object members keep
/// insertion order, and a duplicate key replaces the earlier value in the earlier position.
#[derive(Debug, PartialEq)]
pub enum JsValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number (JS numbers are IEEE doubles).
    Number(f64),
    /// A string.
    String(JsStr),
    /// An array.
    Array(Vec<JsValue>),
    /// An object, members in JS insertion order (duplicates already merged).
    Object(Vec<(JsStr, JsValue)>),
}

/// Dropping does not recurse: a value nested a million levels deep (which `JSON.parse`
/// accepts, and so does [`JsValue::parse`]) is taken apart on the heap, not on the stack.
impl Drop for JsValue {
    fn drop(&mut self) {
        fn children(v: &mut JsValue, into: &mut Vec<JsValue>) {
            match v {
                JsValue::Array(items) => into.append(items),
                JsValue::Object(members) => into.extend(members.drain(..).map(|(_, v)| v)),
                _ => {}
            }
        }
        let shallow = |v: &JsValue| match v {
            JsValue::Array(items) => items.iter().all(|x| !x.is_container()),
            JsValue::Object(members) => members.iter().all(|(_, x)| !x.is_container()),
            _ => true,
        };
        if shallow(self) {
            return;
        }
        let mut stack = Vec::new();
        children(self, &mut stack);
        while let Some(mut v) = stack.pop() {
            children(&mut v, &mut stack);
        }
    }
}

/// Cloning does not recurse either (see the `Drop` above).
impl Clone for JsValue {
    fn clone(&self) -> JsValue {
        enum Job<'a> {
            Visit(&'a JsValue),
            Array(usize),
            Object(&'a [(JsStr, JsValue)]),
        }
        let mut jobs = vec![Job::Visit(self)];
        let mut done: Vec<JsValue> = Vec::new();
        while let Some(job) = jobs.pop() {
            match job {
                Job::Visit(JsValue::Array(items)) => {
                    jobs.push(Job::Array(items.len()));
                    jobs.extend(items.iter().rev().map(Job::Visit));
                }
                Job::Visit(JsValue::Object(members)) => {
                    jobs.push(Job::Object(members));
                    jobs.extend(members.iter().rev().map(|(_, v)| Job::Visit(v)));
                }
                Job::Visit(JsValue::Null) => done.push(JsValue::Null),
                Job::Visit(JsValue::Bool(b)) => done.push(JsValue::Bool(*b)),
                Job::Visit(JsValue::Number(n)) => done.push(JsValue::Number(*n)),
                Job::Visit(JsValue::String(s)) => done.push(JsValue::String(s.clone())),
                Job::Array(n) => {
                    let items = done.split_off(done.len().saturating_sub(n));
                    done.push(JsValue::Array(items));
                }
                Job::Object(members) => {
                    let values = done.split_off(done.len().saturating_sub(members.len()));
                    let object = members.iter().map(|(k, _)| k.clone()).zip(values).collect();
                    done.push(JsValue::Object(object));
                }
            }
        }
        done.pop().unwrap_or(JsValue::Null)
    }
}

impl JsValue {
    fn is_container(&self) -> bool {
        matches!(self, JsValue::Array(_) | JsValue::Object(_))
    }

    /// Parses one JSON value (surrounding whitespace allowed, nothing else) like `JSON.parse`.
    ///
    /// Strings may hold lone surrogate escapes (kept as WTF-8) and invalid UTF-8 (replaced by
    /// U+FFFD); numbers are rounded to f64 (`1e400` is infinity, written back as `null`);
    /// any nesting depth is read (as `JSON.parse` reads it). The parser, `Drop`, `Clone` and
    /// [`JsValue::to_json`] do not recurse.
    pub fn parse(src: &[u8]) -> Result<JsValue, JsonError> {
        parse_value(src)
    }
    /// The member `key` of an object, if this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        match self {
            JsValue::Object(m) => m
                .iter()
                .find(|(k, _)| k.0 == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }
    /// Mutable access to member `key` of an object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        match self {
            JsValue::Object(m) => m
                .iter_mut()
                .find(|(k, _)| k.0 == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }
    /// Sets `key` (replacing in place if present, else appending), as JS property assignment.
    /// Does nothing when `self` is not an object (JS ignores assignment to a primitive).
    pub fn set(&mut self, key: &str, value: JsValue) {
        if let JsValue::Object(m) = self {
            match m.iter_mut().find(|(k, _)| k.0 == key.as_bytes()) {
                Some((_, v)) => *v = value,
                None => m.push((JsStr::from(key), value)),
            }
        }
    }
    /// Removes `key` from an object (JS `delete`), returning the old value.
    pub fn remove(&mut self, key: &str) -> Option<JsValue> {
        match self {
            JsValue::Object(m) => {
                let p = m.iter().position(|(k, _)| k.0 == key.as_bytes())?;
                Some(m.remove(p).1)
            }
            _ => None,
        }
    }
    /// The string value, if this is a string.
    pub fn as_js_str(&self) -> Option<&JsStr> {
        match self {
            JsValue::String(s) => Some(s),
            _ => None,
        }
    }
    /// The string value as UTF-8 text (lossy for lone surrogates), if this is a string.
    pub fn as_str_lossy(&self) -> Option<Cow<'_, str>> {
        self.as_js_str().map(JsStr::to_string_lossy)
    }
    /// JS truthiness (`""`, `0`, `NaN`, `null`, `false` are falsy).
    pub fn is_truthy(&self) -> bool {
        match self {
            JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Number(n) => *n != 0.0 && !n.is_nan(),
            JsValue::String(s) => !s.0.is_empty(),
            JsValue::Array(_) | JsValue::Object(_) => true,
        }
    }
    /// `JSON.stringify(self)` as bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        super::write::write_js_value(self, &mut out);
        out
    }
}

/// An open container while parsing.
enum Frame {
    Array(Vec<JsValue>),
    Object(ObjectBuilder),
}

/// Object members being collected, with JS duplicate-key semantics.
struct ObjectBuilder {
    members: Vec<(JsStr, JsValue)>,
    /// The key of the member whose value is being parsed.
    key: JsStr,
    /// Key → position, built once the object grows large (linear search below that).
    index: Option<HashMap<JsStr, usize>>,
}

/// Objects with more members than this get a hash index for duplicate detection.
const LINEAR_LIMIT: usize = 32;

impl ObjectBuilder {
    fn new(key: JsStr) -> Self {
        ObjectBuilder {
            members: Vec::new(),
            key,
            index: None,
        }
    }
    /// Adds a member; a duplicate key replaces the earlier value in the earlier position.
    fn insert(&mut self, key: JsStr, value: JsValue) {
        if let Some(index) = &mut self.index {
            match index.get(&key) {
                Some(&p) => {
                    if let Some(slot) = self.members.get_mut(p) {
                        slot.1 = value;
                    }
                }
                None => {
                    index.insert(key.clone(), self.members.len());
                    self.members.push((key, value));
                }
            }
            return;
        }
        if let Some(slot) = self.members.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        self.members.push((key, value));
        if self.members.len() > LINEAR_LIMIT {
            let index = self
                .members
                .iter()
                .enumerate()
                .map(|(p, (k, _))| (k.clone(), p))
                .collect();
            self.index = Some(index);
        }
    }
}

/// Parses the key string at `i` (whitespace skipped), the `:` and the whitespace after it.
/// Returns the key and the index of the value.
fn parse_key(src: &[u8], i: usize) -> Result<(JsStr, usize), JsonError> {
    if src.get(i) != Some(&b'"') {
        return Err(err(i, "expected string key"));
    }
    let (key, end) = decode_string_at(src, i + 1, true)?;
    let j = skip_ws(src, end);
    if src.get(j) != Some(&b':') {
        return Err(err(j, "expected ':'"));
    }
    Ok((key, skip_ws(src, j + 1)))
}

/// The iterative `JSON.parse`.
fn parse_value(src: &[u8]) -> Result<JsValue, JsonError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = skip_ws(src, 0);
    'value: loop {
        let mut value = match src.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(i, "nesting too deep"));
                }
                let object = open == b'{';
                i = skip_ws(src, i + 1);
                match (object, src.get(i)) {
                    (true, Some(b'}')) => {
                        i += 1;
                        JsValue::Object(Vec::new())
                    }
                    (false, Some(b']')) => {
                        i += 1;
                        JsValue::Array(Vec::new())
                    }
                    (true, _) => {
                        let (key, next) = parse_key(src, i)?;
                        stack.push(Frame::Object(ObjectBuilder::new(key)));
                        i = next;
                        continue 'value;
                    }
                    (false, _) => {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
            }
            Some(b'"') => {
                let (s, end) = decode_string_at(src, i + 1, true)?;
                i = end;
                JsValue::String(s)
            }
            Some(b'-' | b'0'..=b'9') => {
                let tok = scan_number(src, i)?;
                let n = number_value(src.get(i..tok.end).unwrap_or_default(), i)?;
                i = tok.end;
                JsValue::Number(n)
            }
            Some(b't') => {
                i = expect_literal(src, i, b"true")?;
                JsValue::Bool(true)
            }
            Some(b'f') => {
                i = expect_literal(src, i, b"false")?;
                JsValue::Bool(false)
            }
            Some(b'n') => {
                i = expect_literal(src, i, b"null")?;
                JsValue::Null
            }
            Some(_) => return Err(err(i, "unexpected character")),
            None => return Err(err(i, "unexpected end of input")),
        };
        // `value` is complete: store it in its container, closing containers as they end.
        loop {
            let Some(top) = stack.last_mut() else {
                let end = skip_ws(src, i);
                if end != src.len() {
                    return Err(err(end, "unexpected data after value"));
                }
                return Ok(value);
            };
            i = skip_ws(src, i);
            match top {
                Frame::Array(items) => {
                    items.push(value);
                    match src.get(i) {
                        Some(b',') => {
                            i = skip_ws(src, i + 1);
                            continue 'value;
                        }
                        Some(b']') => i += 1,
                        Some(_) => return Err(err(i, "expected ',' or ']'")),
                        None => return Err(err(i, "unexpected end of input")),
                    }
                }
                Frame::Object(obj) => {
                    let key = std::mem::take(&mut obj.key);
                    obj.insert(key, value);
                    match src.get(i) {
                        Some(b',') => {
                            let (key, next) = parse_key(src, skip_ws(src, i + 1))?;
                            obj.key = key;
                            i = next;
                            continue 'value;
                        }
                        Some(b'}') => i += 1,
                        Some(_) => return Err(err(i, "expected ',' or '}'")),
                        None => return Err(err(i, "unexpected end of input")),
                    }
                }
            }
            value = match stack.pop() {
                Some(Frame::Array(items)) => JsValue::Array(items),
                Some(Frame::Object(obj)) => JsValue::Object(obj.members),
                None => return Err(err(i, "internal error")),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(members: &[(&str, JsValue)]) -> JsValue {
        JsValue::Object(
            members
                .iter()
                .map(|(k, v)| (JsStr::from(*k), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn parse_basic() {
        let v = JsValue::parse(br#" {"a": [1, -2.5, true, false, null, "x\u0041"], "b": {}} "#)
            .expect("valid");
        assert_eq!(
            v,
            obj(&[
                (
                    "a",
                    JsValue::Array(vec![
                        JsValue::Number(1.0),
                        JsValue::Number(-2.5),
                        JsValue::Bool(true),
                        JsValue::Bool(false),
                        JsValue::Null,
                        JsValue::String("xA".into()),
                    ])
                ),
                ("b", JsValue::Object(vec![])),
            ])
        );
        assert_eq!(JsValue::parse(b"[]"), Ok(JsValue::Array(vec![])));
        assert_eq!(
            JsValue::parse(b"\"\""),
            Ok(JsValue::String(JsStr::default()))
        );
        assert_eq!(JsValue::parse(b" 0 "), Ok(JsValue::Number(0.0)));
    }

    #[test]
    fn parse_numbers() {
        let n = |s: &str| match JsValue::parse(s.as_bytes()) {
            Ok(JsValue::Number(n)) => n,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(n("12345678901234567890"), 12345678901234567890.0);
        assert_eq!(n("1E2"), 100.0);
        assert_eq!(n("1e-2"), 0.01);
        assert_eq!(n("0.1"), 0.1);
        assert!(n("-0").is_sign_negative() && n("-0") == 0.0);
        assert_eq!(n("1e400"), f64::INFINITY);
        assert_eq!(n("-1e400"), f64::NEG_INFINITY);
        assert_eq!(n("1e-400"), 0.0);
        assert_eq!(n("9007199254740993"), 9007199254740992.0);
        for bad in [
            "01", "-01", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "Infinity", "1_000",
        ] {
            assert!(JsValue::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn parse_errors() {
        for bad in [
            &b""[..],
            b" ",
            b"[1,]",
            b"[,1]",
            b"{\"a\":1,}",
            b"{,}",
            b"{\"a\"}",
            b"{\"a\":}",
            b"{1:2}",
            b"[1] [2]",
            b"[1]x",
            b"\"\t\"",
            b"\"\\'\"",
            b"\"\\u00\"",
            b"[true false]",
            b"nulll",
            b"\x0c1",
            b"\xef\xbb\xbf1",
        ] {
            assert!(
                JsValue::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let e = JsValue::parse(b"[1, 2 x").expect_err("invalid");
        assert_eq!(e.offset, 6);
    }

    #[test]
    fn duplicates_last_wins_first_position() {
        let v = JsValue::parse(br#"{"a":1,"b":2,"a":3,"\u0062":4}"#).expect("valid");
        assert_eq!(
            v,
            obj(&[("a", JsValue::Number(3.0)), ("b", JsValue::Number(4.0))])
        );
        // Past the linear-search limit, the hash index takes over.
        let mut src = String::from("{");
        for k in 0..100 {
            src.push_str(&format!("\"k{k}\":{k},"));
        }
        src.push_str("\"k5\":\"five\",\"k99\":null,\"new\":1}");
        let v = JsValue::parse(src.as_bytes()).expect("valid");
        let JsValue::Object(m) = &v else { panic!() };
        assert_eq!(m.len(), 101);
        assert_eq!(m[5], (JsStr::from("k5"), JsValue::String("five".into())));
        assert_eq!(m[99].1, JsValue::Null);
        assert_eq!(m[100].0, JsStr::from("new"));
    }

    #[test]
    fn strings_wtf8() {
        let s = |src: &str| match JsValue::parse(src.as_bytes()).as_ref() {
            Ok(JsValue::String(s)) => s.clone(),
            other => panic!("{src}: {other:?}"),
        };
        let lone = s(r#""\ud83d""#);
        assert_eq!(lone.0, vec![0xED, 0xA0, 0xBD]);
        assert_eq!(lone.as_str(), None);
        assert!(lone.has_surrogate());
        assert_eq!(lone.to_string_lossy(), "\u{FFFD}");
        assert_eq!(lone.utf16_len(), 1);
        let pair = s(r#""\ud83d\ude00""#);
        assert_eq!(pair.as_str(), Some("😀"));
        assert_eq!(pair.utf16_len(), 2);
        let mixed = s(r#""a\udc00b😀é€\ud800""#);
        assert_eq!(mixed.to_string_lossy(), "a\u{FFFD}b😀é€\u{FFFD}");
        assert_eq!(mixed.utf16_len(), 1 + 1 + 1 + 2 + 1 + 1 + 1);
        assert_eq!(JsStr::from("").utf16_len(), 0);
        // Not WTF-8 at all (filled by hand): lossy UTF-8 replacement.
        assert_eq!(
            JsStr(vec![b'a', 0xFF, b'b']).to_string_lossy(),
            "a\u{FFFD}b"
        );
        assert_eq!(JsStr(vec![0xE2, 0x82]).to_string_lossy(), "\u{FFFD}");
        // Raw invalid UTF-8 in the input decodes to U+FFFD.
        let raw = JsValue::parse(b"\"a\xffb\"").expect("valid");
        assert_eq!(raw.as_str_lossy().as_deref(), Some("a\u{FFFD}b"));
        assert_eq!(format!("{:?}", lone), "\"\u{FFFD}\"");
    }

    #[test]
    fn accessors() {
        let mut v = JsValue::parse(br#"{"a":1,"b":"x","c":null}"#).expect("valid");
        assert_eq!(v.get("a"), Some(&JsValue::Number(1.0)));
        assert_eq!(v.get("z"), None);
        assert_eq!(
            v.get("b").and_then(JsValue::as_js_str),
            Some(&JsStr::from("x"))
        );
        assert_eq!(
            v.get("b").and_then(JsValue::as_str_lossy).as_deref(),
            Some("x")
        );
        assert_eq!(v.get("a").and_then(JsValue::as_js_str), None);
        if let Some(x) = v.get_mut("a") {
            *x = JsValue::Bool(true);
        }
        v.set("c", JsValue::Number(2.0));
        v.set("d", JsValue::Null);
        assert_eq!(v.to_json(), br#"{"a":true,"b":"x","c":2,"d":null}"#);
        assert_eq!(v.remove("b"), Some(JsValue::String("x".into())));
        assert_eq!(v.remove("b"), None);
        assert_eq!(v.to_json(), br#"{"a":true,"c":2,"d":null}"#);
        let mut n = JsValue::Number(1.0);
        n.set("a", JsValue::Null);
        assert_eq!(n, JsValue::Number(1.0));
        assert_eq!(n.get("a"), None);
        assert_eq!(n.remove("a"), None);
    }

    #[test]
    fn truthiness() {
        for (v, t) in [
            (JsValue::Null, false),
            (JsValue::Bool(false), false),
            (JsValue::Bool(true), true),
            (JsValue::Number(0.0), false),
            (JsValue::Number(-0.0), false),
            (JsValue::Number(f64::NAN), false),
            (JsValue::Number(0.5), true),
            (JsValue::Number(f64::INFINITY), true),
            (JsValue::String("".into()), false),
            (JsValue::String("0".into()), true),
            (JsValue::Array(vec![]), true),
            (JsValue::Object(vec![]), true),
        ] {
            assert_eq!(v.is_truthy(), t, "{v:?}");
        }
    }

    #[test]
    fn deep_nesting_on_small_stack() {
        // A million levels (V8's JSON.parse reads them) on a 2 MB thread: parse, clone,
        // stringify, canonicalize, validate and drop must all work without recursing.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let n = 1_000_000;
                let mut src = Vec::new();
                for _ in 0..n / 2 {
                    src.extend_from_slice(b"{\"a\":[");
                }
                src.extend_from_slice(b"\"x\"");
                for _ in 0..n / 2 {
                    src.extend_from_slice(b"]}");
                }
                let v = JsValue::parse(&src).expect("a million levels are read");
                assert_eq!(v.to_json(), src);
                let c = v.clone();
                assert_eq!(c.to_json(), src);
                drop(c);
                let mut out = Vec::new();
                crate::json::canonicalize(&src, &mut out).expect("canonicalize");
                assert_eq!(out, src);
                assert_eq!(crate::json::value_end(&src, 0), Ok(src.len()));
                drop(v);
                // Still an error: what is not JSON.
                let mut torn = src.clone();
                torn.pop();
                assert!(JsValue::parse(&torn).is_err());
                assert!(crate::json::value_end(&torn, 0).is_err());
            })
            .map(|h| h.join())
            .expect("spawn")
            .expect("join");
    }
}
