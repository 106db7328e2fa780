//! Strings: finding the end of a run of plain bytes (word at a time), escapes, UTF-8
//! sequences, lossy copies and WTF-8, and decoding a string's contents.
use super::*;

/// A byte that ends a run of plain string bytes: `"`, `\` or a control character.
#[inline(always)]
pub(super) fn is_special(b: u8) -> bool {
    (b == b'"') | (b == b'\\') | (b < 0x20)
}

pub(super) const LO: u64 = 0x0101_0101_0101_0101;
pub(super) const HI: u64 = 0x8080_8080_8080_8080;

/// SWAR test of 8 bytes (little-endian word): the high bit of each byte is set where the byte
/// is `"`, `\` or < 0x20, and (with `NON_ASCII`) also where it is >= 0x80. Bytes above a
/// flagged byte may be flagged falsely (borrows), so only the lowest flag is exact, which is
/// all the callers use.
#[inline(always)]
pub(super) fn special_mask<const NON_ASCII: bool>(x: u64) -> u64 {
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
pub(super) fn find<const NON_ASCII: bool>(s: &[u8], start: usize) -> usize {
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
pub(super) fn hex_val(b: u8) -> Option<u32> {
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
pub(super) fn skip_escape(src: &[u8], i: usize) -> Result<usize, JsonError> {
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
///
/// A string longer than [`LONG_STRING`] is skipped that much at a time, and the pages of the
/// bytes behind are handed to the [`set_release_hook`] hook: a string of hundreds of
/// megabytes in a memory map is then not resident whole while it is skipped.
#[inline]
pub(crate) fn skip_string(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    skip_string_segments(src, pos, LONG_STRING)
}

/// How much of a string `skip_string` reads before it releases what is behind.
pub const LONG_STRING: usize = 8 << 20;

static RELEASE: std::sync::OnceLock<fn(&[u8])> = std::sync::OnceLock::new();

/// Sets what is done with the bytes a long string's skip has left behind (once per process;
/// a later call changes nothing): `arbor_store` releases the pages of its memory maps
/// (`map::release_pages`). Reading the bytes again must stay correct.
pub fn set_release_hook(release: fn(&[u8])) {
    let _ = RELEASE.set(release);
}

/// Hands `bytes`, which will not be read again soon, to the [`set_release_hook`] hook.
pub(crate) fn release(bytes: &[u8]) {
    if let Some(release) = RELEASE.get() {
        release(bytes);
    }
}

/// Searches a long `bytes` a `window` at a time, each window read `overlap` bytes into the
/// next, the bytes behind handed to the [`set_release_hook`] hook: a line of hundreds of
/// megabytes in a memory map is not resident whole while it is searched. `find` gets each
/// window's offset in `bytes`, the window with its overlap, and how many of its bytes are
/// its own (a match starting at or after that is found whole in the next window; in the last
/// window every byte is its own); the first `Some` it returns is the answer.
///
/// ```
/// use arbor_core::json::find_in_windows;
/// let b = b"aaaaaaaaXbb";
/// let at = find_in_windows(b, 3, 0, |from, w, _| w.iter().position(|&c| c == b'X').map(|i| from + i));
/// assert_eq!(at, Some(8));
/// // A needle across a window's end is found with an overlap of its length.
/// let two = find_in_windows(b, 8, 2, |_, w, _| w.windows(2).position(|p| p == b"aX"));
/// assert!(two.is_some());
/// ```
pub fn find_in_windows<T>(
    bytes: &[u8],
    window: usize,
    overlap: usize,
    mut find: impl FnMut(usize, &[u8], usize) -> Option<T>,
) -> Option<T> {
    let mut from: usize = 0;
    loop {
        let to = from.saturating_add(window.max(1)).min(bytes.len());
        let w = bytes
            .get(from..to.saturating_add(overlap).min(bytes.len()))
            .unwrap_or_default();
        let last = to == bytes.len();
        let own = if last { w.len() } else { to - from };
        if let Some(found) = find(from, w, own) {
            return Some(found);
        }
        if last {
            return None;
        }
        release(bytes.get(from..to).unwrap_or_default());
        from = to;
    }
}

/// [`skip_string`], `seg` bytes at a time: each segment is skipped in `src` cut at its end;
/// the skip is the same as over the whole of `src` unless it reached the cut still inside
/// the string. Then it resumes after the last byte before the cut that cannot be inside an
/// escape (not `\\`, `u` or a hex digit: after any other byte the skip is between two
/// characters), with the bytes behind released.
#[inline]
pub(crate) fn skip_string_segments(src: &[u8], pos: usize, seg: usize) -> Result<usize, JsonError> {
    let mut i = pos;
    loop {
        let cut = i.saturating_add(seg);
        let Some(part) = src.get(..cut).filter(|_| cut < src.len()) else {
            return skip_string_whole(src, i);
        };
        match skip_string_whole(part, i) {
            Err(e) if e.offset == cut && e.message == "unterminated string" => {}
            done => return done,
        }
        let mut safe = cut;
        while safe > i
            && matches!(src[safe - 1], b'\\' | b'u' | b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
        {
            safe -= 1;
        }
        if safe == i {
            return skip_string_whole(src, i);
        }
        // From a little before where the last release ended: a page it left half read.
        release(
            src.get(i.saturating_sub(1 << 16).max(pos)..safe)
                .unwrap_or_default(),
        );
        i = safe;
    }
}

#[inline]
fn skip_string_whole(src: &[u8], pos: usize) -> Result<usize, JsonError> {
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
pub(super) fn skip_string_scalar(src: &[u8], pos: usize) -> Result<usize, JsonError> {
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

/// Decodes string contents from `start` up to an unescaped `"` (when `quoted`) or to the end
/// of `src` (when not), into WTF-8. Returns the string and the index just past the closing
/// quote (or `src.len()`).
pub(crate) fn decode_string_at(
    src: &[u8],
    start: usize,
    quoted: bool,
) -> Result<(JsStr, usize), JsonError> {
    // Sized once by the raw length (escapes only shrink a string): grown by doubling, a
    // 100 MB string took up to three times its size while it was decoded.
    let raw_len = if quoted {
        skip_string(src, start).map_or(0, |end| end.saturating_sub(start + 1))
    } else {
        src.len().saturating_sub(start)
    };
    let mut out = Vec::with_capacity(raw_len);
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

/// The contents of a JSON string (the raw bytes between the quotes) decoded a piece at a
/// time: each item is the next piece of the text, lossy as [`JsStr::to_string_lossy`] (a
/// lone surrogate is U+FFFD, invalid UTF-8 is U+FFFD), of about `piece` bytes. The pieces
/// joined are exactly `decode_string(raw)?.to_string_lossy()`: a piece ends between two
/// escapes (a `\uD83D\uDE00` pair is one) or before a byte that starts a character, never
/// inside one. A long string is so read in bounded memory; [`StrPieces::consumed`] says how
/// much of `raw` is behind (the caller may release it). An error ends the pieces.
#[derive(Debug, Clone)]
pub struct StrPieces<'a> {
    src: &'a [u8],
    pos: usize,
    piece: usize,
    failed: bool,
}

impl<'a> StrPieces<'a> {
    /// The pieces of `raw` (the string's contents, without its quotes), about `piece` bytes
    /// each (at least 1).
    pub fn new(raw: &'a [u8], piece: usize) -> Self {
        StrPieces {
            src: raw,
            pos: 0,
            piece: piece.max(1),
            failed: false,
        }
    }

    /// How many bytes of `raw` the pieces returned so far were decoded from.
    pub fn consumed(&self) -> usize {
        self.pos
    }
}

impl StrPieces<'_> {
    /// The next piece as WTF-8 (a lone surrogate kept, as [`decode_string`] keeps it), for a
    /// writer that spells it again (`write_js_str`): the pieces joined are exactly
    /// `decode_string(raw)?`. The same pieces as the iterator's, before its lossy step.
    pub fn next_wtf8(&mut self) -> Option<Result<JsStr, JsonError>> {
        let src = self.src;
        if self.failed || self.pos >= src.len() {
            return None;
        }
        let mut out = Vec::with_capacity(self.piece.min(src.len() - self.pos) + 4);
        let mut i = self.pos;
        while out.len() < self.piece && i < src.len() {
            // Plain bytes up to a limit that is not inside a character: a byte that
            // continues one (10xxxxxx) is never where a run is cut.
            let mut lim = (i + (self.piece - out.len())).min(src.len());
            while lim > i && lim < src.len() && src[lim] & 0xC0 == 0x80 {
                lim -= 1;
            }
            if lim == i {
                lim = i + 1;
                while lim < src.len() && src[lim] & 0xC0 == 0x80 {
                    lim += 1;
                }
            }
            let j = copy_run_lossy(&src[..lim], i, &mut out);
            match src.get(j) {
                _ if j == lim && j > i => i = j,
                Some(b'\\') => match decode_escape(src, j) {
                    Ok((cp, next)) => {
                        push_wtf8(cp, &mut out);
                        i = next;
                    }
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                },
                Some(b'"') => {
                    self.failed = true;
                    return Some(Err(err(j, "unescaped '\"' in string")));
                }
                Some(_) => {
                    self.failed = true;
                    return Some(Err(err(j, "control character in string")));
                }
                None => i = j,
            }
        }
        self.pos = i;
        Some(Ok(JsStr(out)))
    }
}

impl Iterator for StrPieces<'_> {
    type Item = Result<String, JsonError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_wtf8()?.map(|s| match s.to_string_lossy() {
            std::borrow::Cow::Borrowed(_) => String::from_utf8(s.0).unwrap_or_default(),
            std::borrow::Cow::Owned(o) => o,
        }))
    }
}
