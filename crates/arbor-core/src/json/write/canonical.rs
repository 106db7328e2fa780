//! The canonicalizer: any raw JSON value to exactly the bytes `JSON.stringify(JSON.parse(raw))`
//! gives, streaming, without a DOM (stored messages that already are are kept as they are).
use super::*;
use crate::json::scan::{
    decode_escape, err, expect_literal, find_special_or_non_ascii, number_value, scan_number,
    skip_ws, utf8_seq, MAX_DEPTH,
};
use crate::json::JsonError;
use std::collections::hash_map::{Entry, HashMap};
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
    if let Some(end) = crate::json::scan::canonical_string_end(raw, pos) {
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

/// Writes a member value as `JSON.stringify(JSON.parse(raw))` would, for values taken from a
/// line the scanner has already accepted: the canonical form, or `raw` itself when it is not
/// valid JSON after all (nothing read from a file is ever dropped).
pub fn write_canonical(raw: &[u8], out: &mut Vec<u8>) {
    if let Some(kept) = canonical_or_keep(raw, out) {
        out.extend_from_slice(kept);
    }
}

/// [`write_canonical`], except that a value whose bytes are already its output (or that is
/// not valid JSON, which is kept as it is) is returned instead of copied to `out`.
pub fn canonical_or_keep<'r>(raw: &'r [u8], out: &mut Vec<u8>) -> Option<&'r [u8]> {
    let mark = out.len();
    match canonicalize_with(raw, out, true) {
        Ok(Canonical::AsIs) => Some(raw),
        Ok(Canonical::Written) => None,
        Err(_) => {
            out.truncate(mark);
            Some(raw)
        }
    }
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
            if let Some(end) = crate::json::scan::canonical_string_end(&raw, 0) {
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
            if let Some(end) = crate::json::scan::canonical_string_end(&raw, 0) {
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
