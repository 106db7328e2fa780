//! Validating scanner: finds object members as byte ranges without allocating a tree.
//!
//! Also holds the byte-level helpers shared by the parser ([`super::JsValue::parse`]) and the
//! streaming transcoder ([`super::canonicalize`]): string-run scanning, escape checks, number
//! tokens, lossy UTF-8 and WTF-8 encoding.
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

/// A byte that ends a run of plain string bytes: `"`, `\` or a control character.
#[inline(always)]
fn is_special(b: u8) -> bool {
    (b == b'"') | (b == b'\\') | (b < 0x20)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// SWAR test of 8 bytes (little-endian word): the high bit of each byte is set where the byte
/// is `"`, `\` or < 0x20, and (with `NON_ASCII`) also where it is >= 0x80. Bytes above a
/// flagged byte may be flagged falsely (borrows), so only the lowest flag is exact, which is
/// all the callers use.
#[inline(always)]
fn special_mask<const NON_ASCII: bool>(x: u64) -> u64 {
    let q = x ^ (LO * u64::from(b'"'));
    let bs = x ^ (LO * u64::from(b'\\'));
    let ctl = x.wrapping_sub(LO * 0x20) & !x;
    let m = (q.wrapping_sub(LO) & !q) | (bs.wrapping_sub(LO) & !bs) | ctl;
    if NON_ASCII {
        (m | x) & HI
    } else {
        m & HI
    }
}

/// Index of the first byte at or after `start` that is `"`, `\`, a control character (and,
/// with `NON_ASCII`, a byte >= 0x80), or `s.len()`. Scans 16 bytes per step (SWAR).
#[inline(always)]
fn find<const NON_ASCII: bool>(s: &[u8], start: usize) -> usize {
    let mut i = start;
    while let Some(w) = s.get(i..i + 16) {
        let (Ok(a), Ok(b)) = (<[u8; 8]>::try_from(&w[..8]), <[u8; 8]>::try_from(&w[8..])) else {
            break;
        };
        let ma = special_mask::<NON_ASCII>(u64::from_le_bytes(a));
        let mb = special_mask::<NON_ASCII>(u64::from_le_bytes(b));
        if ma != 0 {
            return i + (ma.trailing_zeros() / 8) as usize;
        }
        if mb != 0 {
            return i + 8 + (mb.trailing_zeros() / 8) as usize;
        }
        i += 16;
    }
    while let Some(&b) = s.get(i) {
        if is_special(b) || (NON_ASCII && b >= 0x80) {
            return i;
        }
        i += 1;
    }
    s.len()
}

/// Index of the first `"`, `\` or control byte (< 0x20) at or after `start`, or `s.len()`.
#[inline]
pub(crate) fn find_special(s: &[u8], start: usize) -> usize {
    find::<false>(s, start)
}

/// Index of the first `"`, `\`, control byte or byte >= 0x80 at or after `start`, or `s.len()`.
#[inline]
pub(crate) fn find_special_or_non_ascii(s: &[u8], start: usize) -> usize {
    find::<true>(s, start)
}

/// The UTF-8 sequence starting at `s[i]` (a byte >= 0x80): `Ok(len)` when valid, else
/// `Err(n)`, the length (>= 1) of the maximal subpart to replace with one U+FFFD (the
/// WHATWG / Unicode "maximal subpart" rule, as `String::from_utf8_lossy` and Node apply).
#[inline]
pub(crate) fn utf8_seq(s: &[u8], i: usize) -> Result<usize, usize> {
    let (n, lo, hi) = match s.get(i) {
        Some(0xC2..=0xDF) => (2, 0x80, 0xBF),
        Some(0xE0) => (3, 0xA0, 0xBF),
        Some(0xE1..=0xEC | 0xEE..=0xEF) => (3, 0x80, 0xBF),
        Some(0xED) => (3, 0x80, 0x9F),
        Some(0xF0) => (4, 0x90, 0xBF),
        Some(0xF1..=0xF3) => (4, 0x80, 0xBF),
        Some(0xF4) => (4, 0x80, 0x8F),
        _ => return Err(1),
    };
    match s.get(i + 1) {
        Some(&b) if (lo..=hi).contains(&b) => {}
        _ => return Err(1),
    }
    for k in 2..n {
        match s.get(i + k) {
            Some(0x80..=0xBF) => {}
            _ => return Err(k),
        }
    }
    Ok(n)
}

/// Copies the plain string bytes from `start` up to the next `"`, `\` or control byte (or the
/// end) into `out`, replacing invalid UTF-8 with U+FFFD; returns the index where it stopped.
/// One pass: SWAR scanning, with UTF-8 checked only where a byte >= 0x80 occurs.
#[inline]
pub(crate) fn copy_run_lossy(s: &[u8], start: usize, out: &mut Vec<u8>) -> usize {
    let mut flushed = start;
    let mut i = start;
    loop {
        i = find::<true>(s, i);
        match s.get(i) {
            Some(&b) if b >= 0x80 => match utf8_seq(s, i) {
                Ok(n) => i += n,
                Err(n) => {
                    out.extend_from_slice(s.get(flushed..i).unwrap_or_default());
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    i += n;
                    flushed = i;
                }
            },
            _ => {
                out.extend_from_slice(s.get(flushed..i).unwrap_or_default());
                return i;
            }
        }
    }
}

#[inline]
fn hex_val(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some(u32::from(b - b'0')),
        b'a'..=b'f' => Some(u32::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u32::from(b - b'A' + 10)),
        _ => None,
    }
}

/// The 4 hex digits at `src[pos..pos + 4]` as a UTF-16 code unit.
#[inline]
pub(crate) fn hex4(src: &[u8], pos: usize) -> Result<u32, JsonError> {
    let mut v = 0u32;
    for k in 0..4 {
        match src.get(pos + k) {
            Some(&b) => match hex_val(b) {
                Some(d) => v = (v << 4) | d,
                None => return Err(err(pos + k, "invalid \\u escape")),
            },
            None => return Err(err(src.len(), "unterminated string")),
        }
    }
    Ok(v)
}

/// Decodes the escape whose backslash is at `src[i]`: returns the code point (a UTF-16
/// surrogate pair escaped as `\uD8xx\uDCxx` gives the combined code point; a lone surrogate
/// gives the surrogate itself) and the index just past the escape.
#[inline]
pub(crate) fn decode_escape(src: &[u8], i: usize) -> Result<(u32, usize), JsonError> {
    let c = match src.get(i + 1) {
        Some(b'"') => 0x22,
        Some(b'\\') => 0x5c,
        Some(b'/') => 0x2f,
        Some(b'b') => 0x08,
        Some(b'f') => 0x0c,
        Some(b'n') => 0x0a,
        Some(b'r') => 0x0d,
        Some(b't') => 0x09,
        Some(b'u') => {
            let u = hex4(src, i + 2)?;
            if (0xD800..0xDC00).contains(&u)
                && src.get(i + 6) == Some(&b'\\')
                && src.get(i + 7) == Some(&b'u')
            {
                if let Ok(lo) = hex4(src, i + 8) {
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                        return Ok((cp, i + 12));
                    }
                }
            }
            return Ok((u, i + 6));
        }
        Some(_) => return Err(err(i + 1, "invalid escape")),
        None => return Err(err(src.len(), "unterminated string")),
    };
    Ok((c, i + 2))
}

/// Validates the escape whose backslash is at `src[i]`; returns the index just past it.
#[inline]
fn skip_escape(src: &[u8], i: usize) -> Result<usize, JsonError> {
    match src.get(i + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
        Some(b'u') => hex4(src, i + 2).map(|_| i + 6),
        Some(_) => Err(err(i + 1, "invalid escape")),
        None => Err(err(src.len(), "unterminated string")),
    }
}

/// Validates a string whose opening quote is just before `pos`; returns the index just past
/// the closing quote. Any byte >= 0x20 is accepted raw (invalid UTF-8 included).
///
/// On x86_64 the string is scanned 64 bytes per step with SSE2 (part of the x86_64 baseline)
/// and without a branch per escape: the escaped characters of a block are found with the
/// carry trick of simdjson (odd runs of backslashes), the string ends at the first unescaped
/// quote, and a block is only looked at byte by byte for its escape characters (one table
/// lookup each). Real sessions have an escape every 20 bytes or so (`\\n`, `\\t`, `\\"` in
/// tool output), so a scan that stopped at each one spent most of a load there. Anything
/// unusual (a control byte, an invalid or `\\u` escape that does not check out, the last
/// bytes of the input) is handed to the byte-wise loop, which gives the exact errors.
#[inline]
pub(crate) fn skip_string(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    #[cfg(target_arch = "x86_64")]
    {
        match simd::skip_string_blocks(src, pos) {
            simd::Skip::Done(end) => Ok(end),
            simd::Skip::From(i) => skip_string_scalar(src, i),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        skip_string_scalar(src, pos)
    }
}

/// [`skip_string`] one escape at a time (the reference, and the path for errors and tails).
#[inline]
fn skip_string_scalar(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    let mut i = pos;
    loop {
        i = find_special(src, i);
        match src.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => i = skip_escape(src, i)?,
            Some(_) => return Err(err(i, "control character in string")),
            None => return Err(err(i, "unterminated string")),
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use simd::canonical_string_end;

#[cfg(target_arch = "x86_64")]
mod simd;

/// A number token found by [`scan_number`].
pub(crate) struct NumberToken {
    /// Index just past the token.
    pub end: usize,
    /// The token is exactly what `JSON.stringify` writes for its value, so it can be copied:
    /// an integer `0` or `-?[1-9][0-9]{0,14}` (not `-0`), or a decimal without exponent whose
    /// last digit is not 0, with at most 15 significant digits and a value >= 1e-6 (at most
    /// five zeros after `0.`). Any decimal of at most 15 significant digits survives the round
    /// trip through f64 (DBL_DIG), and no other decimal as short maps to the same double, so
    /// the shortest round-trip spelling JS prints is the token itself.
    pub canonical: bool,
}

/// Validates the number token starting at `start` (JSON grammar: `-?(0|[1-9][0-9]*)
/// (\.[0-9]+)?([eE][+-]?[0-9]+)?`).
#[inline]
pub(crate) fn scan_number(src: &[u8], start: usize) -> Result<NumberToken, JsonError> {
    let mut i = start;
    let neg = src.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let int_start = i;
    match src.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while matches!(src.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return Err(err(i, "invalid number")),
    }
    let int_len = i - int_start;
    let int_zero = src.get(int_start) == Some(&b'0');
    let mut canonical = int_len <= 15 && !(neg && int_zero);
    if src.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        if !matches!(src.get(i), Some(b'0'..=b'9')) {
            return Err(err(i, "invalid number"));
        }
        while matches!(src.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        let frac = src.get(frac_start..i).unwrap_or_default();
        canonical = if frac.last() == Some(&b'0') {
            false
        } else if int_zero {
            let zeros = frac.iter().take_while(|&&b| b == b'0').count();
            zeros <= 5 && frac.len() - zeros <= 15
        } else {
            int_len + frac.len() <= 15
        };
    }
    if matches!(src.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(src.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(src.get(i), Some(b'0'..=b'9')) {
            return Err(err(i, "invalid number"));
        }
        while matches!(src.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        canonical = false;
    }
    Ok(NumberToken { end: i, canonical })
}

/// Parses a validated number token to f64 with correct rounding (as JS does).
#[inline]
pub(crate) fn number_value(token: &[u8], offset: usize) -> Result<f64, JsonError> {
    std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| err(offset, "invalid number"))
}

/// Checks that `src[i..]` starts with the literal `lit`; returns the index past it.
#[inline]
pub(crate) fn expect_literal(src: &[u8], i: usize, lit: &'static [u8]) -> Result<usize, JsonError> {
    match src.get(i..i + lit.len()) {
        Some(s) if s == lit => Ok(i + lit.len()),
        _ => Err(err(i, "invalid literal")),
    }
}

/// Appends code point `cp` (surrogates included, as WTF-8 / generalized UTF-8).
#[inline]
pub(crate) fn push_wtf8(cp: u32, out: &mut Vec<u8>) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

/// A stack of container kinds (object or array) as bits, inline for the first 256 levels.
struct KindStack {
    depth: usize,
    inline: [u64; 4],
    spill: Vec<u64>,
}

impl KindStack {
    fn new() -> Self {
        KindStack {
            depth: 0,
            inline: [0; 4],
            spill: Vec::new(),
        }
    }
    fn word(&mut self, w: usize) -> Option<&mut u64> {
        if w < self.inline.len() {
            self.inline.get_mut(w)
        } else {
            let k = w - self.inline.len();
            if self.spill.len() <= k {
                self.spill.resize(k + 1, 0);
            }
            self.spill.get_mut(k)
        }
    }
    fn push(&mut self, object: bool) {
        let d = self.depth;
        if let Some(word) = self.word(d / 64) {
            let bit = 1u64 << (d % 64);
            if object {
                *word |= bit;
            } else {
                *word &= !bit;
            }
        }
        self.depth += 1;
    }
    /// `Some(true)` for an object on top, `Some(false)` for an array, `None` when empty.
    fn top(&self) -> Option<bool> {
        let d = self.depth.checked_sub(1)?;
        let w = d / 64;
        let word = if w < self.inline.len() {
            self.inline.get(w)
        } else {
            self.spill.get(w - self.inline.len())
        };
        Some(word.is_some_and(|x| x & (1u64 << (d % 64)) != 0))
    }
    fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// Validates a key string at `i` (whitespace already skipped), the `:` after it and the
/// whitespace after that; returns the index of the value.
#[inline]
fn skip_key_colon<const WS: bool>(src: &[u8], i: usize) -> Result<usize, JsonError> {
    if src.get(i) != Some(&b'"') {
        return Err(err(i, "expected string key"));
    }
    let j = ws::<WS>(src, skip_string(src, i + 1)?);
    if src.get(j) != Some(&b':') {
        return Err(err(j, "expected ':'"));
    }
    Ok(ws::<WS>(src, j + 1))
}

/// What the `_noting` scans look for while they validate: whether any string value (not a
/// key) starts with `prefix` exactly as written (no escape in the prefix). A caller that
/// needs the lines holding some kind of string finds them during the one validating pass,
/// instead of by another search of every line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixNote<'p> {
    /// The bytes a string value's content starts with.
    pub prefix: &'p [u8],
    /// Set when a string value starting with `prefix` was seen.
    pub seen: bool,
}

impl<'p> PrefixNote<'p> {
    /// A note for `prefix`, nothing seen yet.
    pub const fn new(prefix: &'p [u8]) -> PrefixNote<'p> {
        PrefixNote {
            prefix,
            seen: false,
        }
    }
}

/// The note of the scans that note nothing.
fn no_note() -> PrefixNote<'static> {
    PrefixNote::new(b"")
}

/// Validates the value at `pos` (after optional whitespace), allowing `max_depth` levels of
/// nesting; returns the index just past it. Iterative: no recursion at any depth. With
/// `NOTE`, sets `note.seen` when a string value (not a key) starts with `note.prefix`.
fn validate<const WS: bool, const NOTE: bool>(
    src: &[u8],
    pos: usize,
    max_depth: usize,
    note: &mut PrefixNote<'_>,
) -> Result<usize, JsonError> {
    let mut stack = KindStack::new();
    let mut i = ws::<WS>(src, pos);
    'value: loop {
        match src.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                if stack.depth >= max_depth {
                    return Err(err(i, "nesting too deep"));
                }
                let object = open == b'{';
                let close = if object { b'}' } else { b']' };
                i = ws::<WS>(src, i + 1);
                if src.get(i) == Some(&close) {
                    i += 1;
                } else {
                    stack.push(object);
                    if object {
                        i = skip_key_colon::<WS>(src, i)?;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => {
                if NOTE && src.get(i + 1..i + 1 + note.prefix.len()) == Some(note.prefix) {
                    note.seen = true;
                }
                i = skip_string(src, i + 1)?
            }
            Some(b'-' | b'0'..=b'9') => i = scan_number(src, i)?.end,
            Some(b't') => i = expect_literal(src, i, b"true")?,
            Some(b'f') => i = expect_literal(src, i, b"false")?,
            Some(b'n') => i = expect_literal(src, i, b"null")?,
            Some(_) => return Err(err(i, "unexpected character")),
            None => return Err(err(i, "unexpected end of input")),
        }
        // A value just ended at `i`: close containers until one wants another element.
        loop {
            let Some(object) = stack.top() else {
                return Ok(i);
            };
            i = ws::<WS>(src, i);
            match src.get(i) {
                Some(b',') => {
                    i = ws::<WS>(src, i + 1);
                    if object {
                        i = skip_key_colon::<WS>(src, i)?;
                    }
                    continue 'value;
                }
                Some(b'}') if object => {
                    stack.pop();
                    i += 1;
                }
                Some(b']') if !object => {
                    stack.pop();
                    i += 1;
                }
                None => return Err(err(i, "unexpected end of input")),
                Some(_) if object => return Err(err(i, "expected ',' or '}'")),
                Some(_) => return Err(err(i, "expected ',' or ']'")),
            }
        }
    }
}

/// Validates the JSON value starting at `pos` (after optional whitespace) and returns the index
/// just past it. Lone surrogate escapes are accepted, as `JSON.parse` accepts them. Nesting
/// depth is limited (to 10 000) so hostile input cannot overflow the stack.
pub fn value_end(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    validate::<true, false>(src, pos, MAX_DEPTH, &mut no_note())
}

/// [`value_end`] in compact mode: the value must start at `pos` and hold no whitespace between
/// its tokens (what `JSON.stringify` writes). An `Err` only says "not compact valid JSON":
/// callers then use [`value_end`], which gives the exact error.
pub fn value_end_compact(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    validate::<false, false>(src, pos, MAX_DEPTH, &mut no_note())
}

/// [`value_end_compact`] that also sets `note.seen` when a string value in it starts with
/// `note.prefix` (see [`PrefixNote`]).
pub fn value_end_compact_noting(
    src: &[u8],
    pos: usize,
    note: &mut PrefixNote<'_>,
) -> Result<usize, JsonError> {
    validate::<false, true>(src, pos, MAX_DEPTH, note)
}

/// Scans `src` as one JSON object (surrounding JSON whitespace allowed, nothing else after it)
/// and returns its members. Nested values are validated but not decoded.
/// Errors if the text is not valid JSON or the value is not an object.
pub fn scan_object(src: &[u8]) -> Result<ObjectScan, JsonError> {
    let start = skip_ws(src, 0);
    let mut members = Vec::new();
    let span = scan_object_from::<true, false>(src, start, &mut no_note(), &mut members)?;
    let scan = ObjectScan { members, span };
    let i = scan.span.end;
    if skip_ws(src, i) != src.len() {
        return Err(err(skip_ws(src, i), "unexpected data after value"));
    }
    Ok(scan)
}

/// The object that starts exactly at `src[start]`, in compact mode (no whitespace between
/// tokens, what `JSON.stringify` writes), whatever follows it: its members (ranges in `src`)
/// and its span. Used to read a line without first searching for its end: in compact mode a
/// `\n` can be neither skipped as whitespace nor be inside a string (a control byte), so the
/// object cannot run past its line. An `Err` only says "not a compact object here": callers
/// then use [`scan_object`], which gives the exact error.
pub fn scan_object_compact_at(src: &[u8], start: usize) -> Result<ObjectScan, JsonError> {
    let mut members = Vec::new();
    let span = scan_object_from::<false, false>(src, start, &mut no_note(), &mut members)?;
    Ok(ObjectScan { members, span })
}

/// [`scan_object_compact_at`] that also sets `note.seen` when a string value in the object
/// starts with `note.prefix` (see [`PrefixNote`]), and puts the members into `members`
/// (cleared first; a buffer the caller reuses) instead of a new vector. Returns the span.
pub fn scan_object_compact_into(
    src: &[u8],
    start: usize,
    note: &mut PrefixNote<'_>,
    members: &mut Vec<Member>,
) -> Result<Range<usize>, JsonError> {
    members.clear();
    scan_object_from::<false, true>(src, start, note, members)
}

fn scan_object_from<const WS: bool, const NOTE: bool>(
    src: &[u8],
    start: usize,
    note: &mut PrefixNote<'_>,
    members: &mut Vec<Member>,
) -> Result<Range<usize>, JsonError> {
    match src.get(start) {
        Some(b'{') => {}
        Some(_) => return Err(err(start, "expected object")),
        None => return Err(err(start, "unexpected end of input")),
    }
    let mut i = ws::<WS>(src, start + 1);
    if src.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if src.get(i) != Some(&b'"') {
                return Err(err(i, "expected string key"));
            }
            let key_end = skip_string(src, i + 1)?;
            let key = i + 1..key_end - 1;
            let j = ws::<WS>(src, key_end);
            if src.get(j) != Some(&b':') {
                return Err(err(j, "expected ':'"));
            }
            let v = ws::<WS>(src, j + 1);
            let kind = match src.get(v) {
                Some(&b) => {
                    ValueKind::from_first_byte(b).ok_or_else(|| err(v, "unexpected character"))?
                }
                None => return Err(err(v, "unexpected end of input")),
            };
            let v_end = validate::<WS, NOTE>(src, v, MAX_DEPTH - 1, note)?;
            members.push(Member {
                key,
                value: v..v_end,
                kind,
            });
            i = ws::<WS>(src, v_end);
            match src.get(i) {
                Some(b',') => i = ws::<WS>(src, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                Some(_) => return Err(err(i, "expected ',' or '}'")),
                None => return Err(err(i, "unexpected end of input")),
            }
        }
    }
    Ok(start..i)
}

/// Decodes string contents from `start` up to an unescaped `"` (when `quoted`) or to the end
/// of `src` (when not), into WTF-8. Returns the string and the index just past the closing
/// quote (or `src.len()`).
pub(crate) fn decode_string_at(
    src: &[u8],
    start: usize,
    quoted: bool,
) -> Result<(JsStr, usize), JsonError> {
    let mut out = Vec::new();
    let mut i = start;
    loop {
        let j = copy_run_lossy(src, i, &mut out);
        match src.get(j) {
            Some(b'\\') => {
                let (cp, next) = decode_escape(src, j)?;
                push_wtf8(cp, &mut out);
                i = next;
            }
            Some(b'"') if quoted => return Ok((JsStr(out), j + 1)),
            Some(b'"') => return Err(err(j, "unescaped '\"' in string")),
            Some(_) => return Err(err(j, "control character in string")),
            None if quoted => return Err(err(j, "unterminated string")),
            None => return Ok((JsStr(out), j)),
        }
    }
}

/// Decodes the contents of a JSON string (the raw bytes between the quotes) into WTF-8.
///
/// Escapes are decoded (a `\uD83D\uDE00` pair to one code point, a lone surrogate escape to
/// the surrogate itself), invalid UTF-8 becomes U+FFFD (pi reads files lossily), and a raw
/// control character, a raw `"` or a bad escape is an error.
pub fn decode_string(raw: &[u8]) -> Result<JsStr, JsonError> {
    decode_string_at(raw, 0, false).map(|(s, _)| s)
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
}
