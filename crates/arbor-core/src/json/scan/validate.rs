//! The validator: walks a value or an object iteratively (no recursion at any depth) and
//! returns its end or its members as byte ranges, optionally noting string values that start
//! with a prefix.
use super::*;
use std::ops::Range;

/// A stack of container kinds (object or array) as bits, inline for the first 256 levels.
pub(super) struct KindStack {
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
pub(super) fn skip_key_colon<const WS: bool>(src: &[u8], i: usize) -> Result<usize, JsonError> {
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
pub(super) fn no_note() -> PrefixNote<'static> {
    PrefixNote::new(b"")
}

/// Validates the value at `pos` (after optional whitespace), allowing `max_depth` levels of
/// nesting; returns the index just past it. Iterative: no recursion at any depth. With
/// `NOTE`, sets `note.seen` when a string value (not a key) starts with `note.prefix`.
pub(super) fn validate<const WS: bool, const NOTE: bool>(
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

pub(super) fn scan_object_from<const WS: bool, const NOTE: bool>(
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
