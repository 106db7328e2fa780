//! `JSON.stringify` output: JS numbers, JS string escapes, integer-like keys first.
use super::scan::{
    decode_escape, err, expect_literal, find_special, find_special_or_non_ascii, number_value,
    scan_number, skip_ws, utf8_seq, MAX_DEPTH,
};
use super::value::surrogate_at;
use super::{JsStr, JsValue, JsonError};
use std::collections::hash_map::{Entry, HashMap};

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

// ---------------------------------------------------------------------------------------
// canonicalize
//
// Output is written lazily: `from` is the index in `raw` of the first byte not yet written.
// Bytes that are already canonical are never copied one at a time; they stay pending and are
// written in one `extend_from_slice` when something must differ (whitespace dropped, an escape
// or number re-spelled, invalid UTF-8 replaced, an object rearranged) or at the end. For input
// that is already canonical, a call is a validating scan plus a single copy. The output
// position of raw index `i` (with `i >= from`) is `out.len() + (i - from)`.
// ---------------------------------------------------------------------------------------

/// Writes the pending bytes `raw[*from..to]`; afterwards `*from == to`.
#[inline]
fn flush(raw: &[u8], out: &mut Vec<u8>, from: &mut usize, to: usize) {
    out.extend_from_slice(raw.get(*from..to).unwrap_or_default());
    *from = to;
}

/// Skips JSON whitespace at `i`; whitespace is dropped from the output.
#[inline]
fn skip_ws_out(raw: &[u8], out: &mut Vec<u8>, from: &mut usize, i: usize) -> usize {
    let j = skip_ws(raw, i);
    if j != i {
        flush(raw, out, from, i);
        *from = j;
    }
    j
}

/// Transcodes the string whose opening quote is at `pos - 1`; returns the index past the
/// closing quote. Plain text, valid UTF-8 and the escapes `JSON.stringify` itself writes
/// (`\" \\ \b \f \n \r \t`) stay pending; `\/`, `\uXXXX` and invalid UTF-8 are rewritten.
///
/// On x86_64 a string that is already canonical (nearly all of them: pi writes with
/// `JSON.stringify`) is recognised 64 bytes per step and left pending as a whole; any other
/// string is transcoded byte by byte.
#[inline]
fn canon_string(
    raw: &[u8],
    pos: usize,
    out: &mut Vec<u8>,
    from: &mut usize,
) -> Result<usize, JsonError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(end) = super::scan::canonical_string_end(raw, pos) {
        return Ok(end);
    }
    canon_string_bytewise(raw, pos, out, from)
}

/// [`canon_string`] byte by byte.
#[inline]
fn canon_string_bytewise(
    raw: &[u8],
    pos: usize,
    out: &mut Vec<u8>,
    from: &mut usize,
) -> Result<usize, JsonError> {
    let mut i = pos;
    loop {
        i = find_special_or_non_ascii(raw, i);
        match raw.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match raw.get(i + 1) {
                Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                _ => {
                    let (cp, next) = decode_escape(raw, i)?;
                    flush(raw, out, from, i);
                    push_js_char(cp, out);
                    i = next;
                    *from = i;
                }
            },
            Some(&b) if b >= 0x80 => match utf8_seq(raw, i) {
                Ok(n) => i += n,
                Err(n) => {
                    flush(raw, out, from, i);
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    i += n;
                    *from = i;
                }
            },
            Some(_) => return Err(err(i, "control character in string")),
            None => return Err(err(i, "unterminated string")),
        }
    }
}

/// One member of an object being transcoded.
struct MemberRec {
    /// Output position of the key's opening quote.
    start: usize,
    /// Output position just past the value (set when the value is complete).
    end: usize,
    /// Where the key's canonical bytes (quotes included) can be read: `raw[a..b]` when the key
    /// was already canonical, else `out[a..b]`.
    key_in_raw: bool,
    key_a: usize,
    key_b: usize,
    /// The key's array-index value, if it is one.
    index: Option<u32>,
    /// For a duplicate key: the position (in this object) of the key's first occurrence.
    dup_of: Option<u32>,
    /// Cheap fingerprint of the key bytes (length and first bytes), compared before them.
    fp: u64,
}

impl MemberRec {
    #[inline]
    fn key<'a>(&self, raw: &'a [u8], out: &'a [u8]) -> &'a [u8] {
        let src = if self.key_in_raw { raw } else { out };
        src.get(self.key_a..self.key_b).unwrap_or_default()
    }
}

/// Fingerprint of a canonical key (quotes included): its length and its first 8 bytes after
/// the opening quote. Equal keys have equal fingerprints.
#[inline]
fn key_fingerprint(key: &[u8]) -> u64 {
    let body = key.get(1..).unwrap_or_default();
    let n = body.len().min(8);
    let mut w = [0u8; 8];
    if let (Some(dst), Some(src)) = (w.get_mut(..n), body.get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_le_bytes(w) ^ (key.len() as u64).rotate_right(8)
}

/// An object being transcoded.
struct ObjFrame {
    /// Output position just past the `{`.
    body_start: usize,
    /// Index in the shared member list of this object's first member.
    first_member: usize,
    /// A duplicate key or an out-of-order array-index key was seen.
    needs_fix: bool,
    seen_plain: bool,
    last_index: Option<u32>,
    /// One bit per key fingerprint hash seen: a key whose bit is clear is not a duplicate.
    bloom: u64,
    /// Key bytes → position, built once the object has more than [`LINEAR_LIMIT`] members.
    keys: Option<HashMap<Box<[u8]>, u32>>,
}

enum CFrame {
    Array,
    Object(ObjFrame),
}

/// Objects with more members than this use a hash map to find duplicate keys.
const LINEAR_LIMIT: usize = 32;

/// State of a `canonicalize` call: the open containers, the member records of all open
/// objects and scratch space. Kept per thread between calls so the hot path does not allocate.
#[derive(Default)]
struct Canon {
    stack: Vec<CFrame>,
    members: Vec<MemberRec>,
    scratch: Vec<u8>,
}

thread_local! {
    static CANON: std::cell::RefCell<Canon> = std::cell::RefCell::new(Canon::default());
}

/// Appends to `out` exactly what `JSON.stringify(JSON.parse(raw))` gives for the JSON value in
/// `raw`, without building a DOM in the common case: strings are re-escaped the JS way,
/// numbers re-spelled, duplicate keys merged (last value in the first position) and
/// integer-like keys moved first. Bytes that are already canonical are copied as they are.
///
/// `raw` may have JSON whitespace around the value, nothing else. Invalid UTF-8 inside
/// strings becomes U+FFFD (as pi's lossy file decoding gives). The input is validated as it
/// is transcoded; on error, `out` may already hold part of the output, so a caller should
/// remember `out.len()` beforehand and truncate back to it. Iterative (no recursion), with the
/// same 10 000-level nesting limit as the parser. Canonical runs are copied lazily, so for
/// input that is already canonical a call costs one validating scan and one copy; working
/// memory is kept per thread between calls.
pub fn canonicalize(raw: &[u8], out: &mut Vec<u8>) -> Result<(), JsonError> {
    canonicalize_with(raw, out, false).map(|_| ())
}

/// What [`canonicalize_or_keep`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canonical {
    /// `raw` is already exactly what `JSON.stringify(JSON.parse(raw))` gives (no whitespace
    /// around or inside it either): nothing was written, `raw` itself is the output.
    AsIs,
    /// The output was appended to `out`.
    Written,
}

/// [`canonicalize`], except that when `raw` is already canonical as a whole nothing is copied:
/// the caller can write `raw` itself (from a memory map, say) instead of a copy of it.
/// `AsIs` is never answered for an input that differs from its output; an input equal to its
/// output may still be written (a number with an exponent is re-spelled, maybe the same).
pub fn canonicalize_or_keep(raw: &[u8], out: &mut Vec<u8>) -> Result<Canonical, JsonError> {
    canonicalize_with(raw, out, true)
}

fn canonicalize_with(raw: &[u8], out: &mut Vec<u8>, keep: bool) -> Result<Canonical, JsonError> {
    let reused = CANON.try_with(|cell| {
        cell.try_borrow_mut().ok().map(|mut st| {
            let r = st.run(raw, out, keep);
            st.reset();
            r
        })
    });
    match reused {
        Ok(Some(r)) => r,
        // Thread-local state unavailable (thread exiting, or re-entered): use a fresh one.
        _ => Canon::default().run(raw, out, keep),
    }
}

impl Canon {
    /// Empties the state for the next call, keeping modest allocations.
    fn reset(&mut self) {
        self.stack.clear();
        self.members.clear();
        self.scratch.clear();
        if self.stack.capacity() > 1024 {
            self.stack = Vec::new();
        }
        if self.members.capacity() > 4096 {
            self.members = Vec::new();
        }
        if self.scratch.capacity() > 1 << 20 {
            self.scratch = Vec::new();
        }
    }

    /// The transcoder proper (see [`canonicalize`]).
    /// With `keep`, a `raw` that is canonical as a whole is not copied ([`Canonical::AsIs`]).
    fn run(&mut self, raw: &[u8], out: &mut Vec<u8>, keep: bool) -> Result<Canonical, JsonError> {
        let mut stack = std::mem::take(&mut self.stack);
        let r = self.run_with(raw, out, &mut stack, keep);
        self.stack = stack;
        r
    }

    fn run_with(
        &mut self,
        raw: &[u8],
        out: &mut Vec<u8>,
        stack: &mut Vec<CFrame>,
        keep: bool,
    ) -> Result<Canonical, JsonError> {
        let mark = out.len();
        if !keep {
            out.reserve(raw.len());
        }
        let mut i = skip_ws(raw, 0);
        let mut from = i;
        'value: loop {
            match raw.get(i) {
                Some(&open @ (b'{' | b'[')) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(err(i, "nesting too deep"));
                    }
                    let object = open == b'{';
                    i = skip_ws_out(raw, out, &mut from, i + 1);
                    match (object, raw.get(i)) {
                        (true, Some(b'}')) | (false, Some(b']')) => i += 1,
                        (true, _) => {
                            let mut obj = ObjFrame {
                                body_start: out.len() + (i - from),
                                first_member: self.members.len(),
                                needs_fix: false,
                                seen_plain: false,
                                last_index: None,
                                bloom: 0,
                                keys: None,
                            };
                            i = self.key(&mut obj, raw, i, out, &mut from)?;
                            stack.push(CFrame::Object(obj));
                            continue 'value;
                        }
                        (false, _) => {
                            stack.push(CFrame::Array);
                            continue 'value;
                        }
                    }
                }
                Some(b'"') => i = canon_string(raw, i + 1, out, &mut from)?,
                Some(b'-' | b'0'..=b'9') => {
                    let tok = scan_number(raw, i)?;
                    if !tok.canonical {
                        let n = number_value(raw.get(i..tok.end).unwrap_or_default(), i)?;
                        flush(raw, out, &mut from, i);
                        write_js_number(n, out);
                        from = tok.end;
                    }
                    i = tok.end;
                }
                Some(b't') => i = expect_literal(raw, i, b"true")?,
                Some(b'f') => i = expect_literal(raw, i, b"false")?,
                Some(b'n') => i = expect_literal(raw, i, b"null")?,
                Some(_) => return Err(err(i, "unexpected character")),
                None => return Err(err(i, "unexpected end of input")),
            }
            // A value just ended at `i`: close containers until one wants another element.
            loop {
                let value_end = out.len() + (i - from);
                let Some(top) = stack.last_mut() else {
                    if skip_ws(raw, i) != raw.len() {
                        return Err(err(skip_ws(raw, i), "unexpected data after value"));
                    }
                    // Nothing written yet and nothing around the value: `raw` is the output.
                    if keep && from == 0 && i == raw.len() && out.len() == mark {
                        return Ok(Canonical::AsIs);
                    }
                    flush(raw, out, &mut from, i);
                    return Ok(Canonical::Written);
                };
                i = skip_ws_out(raw, out, &mut from, i);
                match top {
                    CFrame::Array => match raw.get(i) {
                        Some(b',') => {
                            i = skip_ws_out(raw, out, &mut from, i + 1);
                            continue 'value;
                        }
                        Some(b']') => i += 1,
                        Some(_) => return Err(err(i, "expected ',' or ']'")),
                        None => return Err(err(i, "unexpected end of input")),
                    },
                    CFrame::Object(obj) => {
                        if let Some(m) = self.members.last_mut() {
                            m.end = value_end;
                        }
                        match raw.get(i) {
                            Some(b',') => {
                                let k = skip_ws_out(raw, out, &mut from, i + 1);
                                i = self.key(obj, raw, k, out, &mut from)?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                if obj.needs_fix {
                                    flush(raw, out, &mut from, i);
                                    self.fix_object(obj, out);
                                }
                                self.members.truncate(obj.first_member);
                                i += 1;
                            }
                            Some(_) => return Err(err(i, "expected ',' or '}'")),
                            None => return Err(err(i, "unexpected end of input")),
                        }
                    }
                }
                stack.pop();
            }
        }
    }

    /// Transcodes the key at `raw[i]` (whitespace skipped), records it as a member of `obj`,
    /// and passes the `:`; returns the index of the value.
    fn key(
        &mut self,
        obj: &mut ObjFrame,
        raw: &[u8],
        i: usize,
        out: &mut Vec<u8>,
        from: &mut usize,
    ) -> Result<usize, JsonError> {
        if raw.get(i) != Some(&b'"') {
            return Err(err(i, "expected string key"));
        }
        let start = out.len() + (i - *from);
        let next = canon_string(raw, i + 1, out, from)?;
        // A key that was rewritten is completed in `out`, where it can be compared.
        let key_in_raw = *from <= i;
        let (key_a, key_b) = if key_in_raw {
            (i, next)
        } else {
            flush(raw, out, from, next);
            (start, out.len())
        };
        let j = skip_ws_out(raw, out, from, next);
        if raw.get(j) != Some(&b':') {
            return Err(err(j, "expected ':'"));
        }
        let value = skip_ws_out(raw, out, from, j + 1);

        let key = if key_in_raw { raw } else { &out[..] }
            .get(key_a..key_b)
            .unwrap_or_default();
        let index = match key.get(1) {
            Some(b'0'..=b'9') => array_index(key.get(1..key.len() - 1).unwrap_or_default()),
            _ => None,
        };
        let fp = key_fingerprint(key);
        let mine = self.members.get(obj.first_member..).unwrap_or_default();
        let pos = mine.len() as u32;
        let mut dup_of = None;
        match &mut obj.keys {
            Some(keys) => match keys.entry(key.into()) {
                Entry::Occupied(e) => dup_of = Some(*e.get()),
                Entry::Vacant(e) => {
                    e.insert(pos);
                }
            },
            None => {
                let bit = 1u64 << (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58);
                if obj.bloom & bit != 0 {
                    dup_of = mine
                        .iter()
                        .position(|m| m.fp == fp && m.dup_of.is_none() && m.key(raw, out) == key)
                        .map(|p| p as u32);
                }
                obj.bloom |= bit;
                if mine.len() >= LINEAR_LIMIT {
                    let mut keys: HashMap<Box<[u8]>, u32> = HashMap::new();
                    for (p, m) in mine.iter().enumerate() {
                        if m.dup_of.is_none() {
                            keys.insert(m.key(raw, out).into(), p as u32);
                        }
                    }
                    if dup_of.is_none() {
                        keys.insert(key.into(), pos);
                    }
                    obj.keys = Some(keys);
                }
            }
        }
        if dup_of.is_some() {
            obj.needs_fix = true;
        } else if let Some(ix) = index {
            if obj.seen_plain || obj.last_index.is_some_and(|l| l >= ix) {
                obj.needs_fix = true;
            }
            obj.last_index = Some(ix);
        } else {
            obj.seen_plain = true;
        }
        self.members.push(MemberRec {
            start,
            end: start,
            key_in_raw,
            key_a,
            key_b,
            index,
            dup_of,
            fp,
        });
        Ok(value)
    }

    /// Rewrites the body of object `obj` (all of it written to `out`, up to but not including
    /// the `}`): duplicates merged (the last value in the first position), then array-index
    /// keys first in ascending order, the others in insertion order.
    fn fix_object(&mut self, obj: &ObjFrame, out: &mut Vec<u8>) {
        let recs = self.members.get(obj.first_member..).unwrap_or_default();
        // (sort key, start, end) of each distinct key, in first-occurrence order.
        let mut slots: Vec<(u64, usize, usize)> = Vec::with_capacity(recs.len());
        let mut slot_of: Vec<usize> = Vec::with_capacity(recs.len());
        for r in recs {
            match r.dup_of.and_then(|d| slot_of.get(d as usize).copied()) {
                Some(s) => {
                    if let Some(slot) = slots.get_mut(s) {
                        slot.1 = r.start;
                        slot.2 = r.end;
                    }
                    slot_of.push(s);
                }
                None => {
                    slot_of.push(slots.len());
                    slots.push((r.index.map_or(u64::MAX, u64::from), r.start, r.end));
                }
            }
        }
        slots.sort_by_key(|s| s.0);
        let base = obj.body_start;
        self.scratch.clear();
        self.scratch
            .extend_from_slice(out.get(base..).unwrap_or_default());
        out.truncate(base);
        for (n, &(_, s, e)) in slots.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let bytes = self
                .scratch
                .get(s.saturating_sub(base)..e.saturating_sub(base))
                .unwrap_or_default();
            out.extend_from_slice(bytes);
        }
    }
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

#[cfg(all(test, target_arch = "x86_64"))]
mod canonical_fast_path_tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes of string contents: plain text, escapes of every kind (kept, rewritten, `\u`
    /// controls and surrogates in both cases), UTF-8 (valid, surrogate-encoded, cut), quotes.
    fn arb_contents() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            proptest::sample::select(vec![
                "abc",
                "hello world ",
                "    ",
                "\\n",
                "\\t",
                "\\\"",
                "\\\\",
                "\\/",
                "\\b",
                "\\f",
                "\\r",
                "\\u001b",
                "\\u001B",
                "\\u0041",
                "\\u000a",
                "\\ud83d",
                "\\uD83D",
                "\\ude00",
                "\\ud83d\\ude00",
                "é",
                "日本語",
                "😀",
                "\u{2028}",
                "\u{7f}",
                "\t",
                "\"",
                "\\x",
            ]),
            0..60,
        )
        .prop_flat_map(|parts| {
            let v: Vec<u8> = parts.concat().into_bytes();
            let n = v.len().max(1);
            (Just(v), 0..n, 0u8..4)
        })
        .prop_map(|(mut v, at, kind)| {
            // Sometimes a raw invalid byte (a surrogate lead or a cut UTF-8 sequence).
            if at < v.len() {
                match kind {
                    0 => v.insert(at, 0xED),
                    1 => v.insert(at, 0xE6),
                    _ => {}
                }
            }
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// When the fast path says "canonical", the byte-wise transcoder agrees: same end,
        /// and its output is the input.
        #[test]
        fn fast_path_only_accepts_canonical_strings(contents in arb_contents(), pad in 0usize..70) {
            let mut raw = vec![b'a'; pad];
            raw.extend_from_slice(&contents);
            raw.extend_from_slice(b"\" trailing bytes so that blocks of 64 fit ......................................");
            if let Some(end) = super::super::scan::canonical_string_end(&raw, 0) {
                let mut out = Vec::new();
                let mut from = 0;
                let slow = canon_string_bytewise(&raw, 0, &mut out, &mut from);
                prop_assert_eq!(slow, Ok(end));
                flush(&raw, &mut out, &mut from, end);
                prop_assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&raw[..end]));
                prop_assert_eq!(&out[..], &raw[..end]);
            }
        }

        /// The same at the very end of the input (the padded last block).
        #[test]
        fn fast_path_at_the_end_of_the_input(contents in arb_contents(), pad in 0usize..70, tail in 0usize..3) {
            let mut raw = vec![b'a'; pad];
            raw.extend_from_slice(&contents);
            raw.extend_from_slice(&b"\"}]"[..tail + 1]);
            if let Some(end) = super::super::scan::canonical_string_end(&raw, 0) {
                let mut out = Vec::new();
                let mut from = 0;
                prop_assert_eq!(canon_string_bytewise(&raw, 0, &mut out, &mut from), Ok(end));
                flush(&raw, &mut out, &mut from, end);
                prop_assert_eq!(&out[..], &raw[..end]);
            }
        }

        /// canonicalize gives the same bytes with and without the fast path.
        #[test]
        fn canonicalize_unchanged(contents in arb_contents(), pad in 0usize..70) {
            let mut raw = b"{\"k\":\"".to_vec();
            raw.extend(std::iter::repeat_n(b'a', pad));
            raw.extend_from_slice(&contents);
            raw.extend_from_slice(b"\",\"pad\":\"......................................................................\"}");
            let mut fast = Vec::new();
            let r = canonicalize(&raw, &mut fast);
            // Reference: every string through the byte-wise transcoder.
            let mut slow = Vec::new();
            let mut from = 0;
            let mut i = 0;
            let mut ok = true;
            while i < raw.len() {
                if raw[i] == b'"' {
                    match canon_string_bytewise(&raw, i + 1, &mut slow, &mut from) {
                        Ok(e) => i = e,
                        Err(_) => { ok = false; break; }
                    }
                } else {
                    i += 1;
                }
            }
            if ok && r.is_ok() {
                flush(&raw, &mut slow, &mut from, raw.len());
                prop_assert_eq!(fast, slow);
            }
        }
    }
}
