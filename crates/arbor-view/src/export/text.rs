//! Message text for the exports, whole or in pieces: a long string of a session is decoded
//! from its line a piece at a time ([`arbor_core::json::StrPieces`]) while the map's pages
//! behind are released, so that no export holds the whole text (nor the whole line) at once.
//!
//! Every text the exports fence, escape or trim goes through here, short or long: [`layout`]
//! reads it once (where the fenced code blocks are, what trimming leaves, the longest
//! backtick run of each block) and [`write_ops`] reads it again to write it. A short text is
//! one piece, a long one many; the bytes written are the same.
use crate::secrets::Secret;
use arbor_core::entry::{key_is, Entry};
use arbor_core::json::{JsValue, StrPieces, ValueKind};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::Range;

/// A string longer than this (raw bytes in its line) is read in pieces.
pub(crate) const LONG: usize = 1 << 20;

/// How much text a piece holds (at least; a piece ends at a line end).
const PIECE: usize = 1 << 20;

/// A text to render.
#[derive(Clone)]
pub(crate) enum Src<'a> {
    /// In memory.
    Str(Cow<'a, str>),
    /// A JSON string's raw contents (between its quotes), in the session's line: decoded a
    /// piece at a time, lossily (lone surrogates and invalid UTF-8 as U+FFFD), as
    /// `JsStr::to_string_lossy` decodes it whole; pieces of `piece` bytes (at least); its
    /// `secrets` (ranges of the decoded text, in order) replaced by `[REDACTED:kind]` as it
    /// is read ([`Redactions`]).
    Raw {
        raw: &'a [u8],
        piece: usize,
        secrets: &'a [Secret],
    },
    /// Texts one after the other (a tool result's blocks, `\n` between them as texts of
    /// their own).
    Cat(Vec<Src<'a>>),
    /// A JSON value of the session's line as `JSON.stringify` writes it (tool-call
    /// arguments), its long strings spelled a piece at a time ([`JsonText`]).
    Json(&'a JsonText<'a>),
}

impl<'a> Src<'a> {
    /// A JSON string's raw contents, read in pieces of [`PIECE`] bytes, the secrets `red` has
    /// for it replaced as it is read.
    pub(crate) fn raw_redacted(raw: &'a [u8], red: Option<&'a Redactions>) -> Self {
        Src::Raw {
            raw,
            piece: PIECE,
            secrets: red.map_or(&[], |r| r.of(raw)),
        }
    }

    /// How long a line [`Src::each`] may cut (and [`layout`] records the backtick runs of):
    /// the smallest piece of the texts read in pieces; none for a text in memory.
    fn piece(&self) -> usize {
        match self {
            Src::Str(_) => usize::MAX,
            Src::Raw { piece, .. } => *piece,
            Src::Cat(parts) => parts.iter().map(Src::piece).min().unwrap_or(usize::MAX),
            Src::Json(j) => j.piece,
        }
    }

    /// Calls `f` with the text's consecutive chunks as they are decoded (any size; a long
    /// string's pages behind are released as it goes).
    fn chunks(&self, f: &mut dyn FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        match self {
            Src::Str(s) => f(s),
            Src::Raw {
                raw,
                piece,
                secrets,
            } => {
                let mut pieces = StrPieces::new(raw, *piece);
                let mut released = 0;
                let mut redacting = Redacting::new(secrets);
                while let Some(p) = pieces.next() {
                    let p = p.map_err(bad_text)?;
                    redacting.piece(&p, f)?;
                    drop(p);
                    released = release_behind(raw, released, pieces.consumed());
                }
                Ok(())
            }
            Src::Cat(parts) => parts.iter().try_for_each(|p| p.chunks(f)),
            Src::Json(j) => j.chunks(f),
        }
    }
}

/// Replaces secrets (ranges of a decoded text, in order, not overlapping) by
/// `[REDACTED:kind]` in the text's consecutive pieces, as `secrets::redact_value` replaces
/// them in the text whole.
struct Redacting<'s> {
    secrets: &'s [Secret],
    /// Where the next piece starts in the decoded text.
    at: usize,
}

impl<'s> Redacting<'s> {
    fn new(secrets: &'s [Secret]) -> Self {
        Redacting { secrets, at: 0 }
    }

    /// Calls `f` with the next piece, redacted (in one or more parts).
    fn piece(&mut self, p: &str, f: &mut dyn FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let start = self.at;
        self.at += p.len();
        let mut i = 0;
        while i < p.len() {
            let pos = start + i;
            match self.secrets.first() {
                Some(s) if s.end <= pos => self.secrets = &self.secrets[1..],
                Some(s) if s.start <= pos => {
                    if s.start == pos {
                        f(&format!("[REDACTED:{}]", s.kind))?;
                    }
                    i = (s.end - start).min(p.len());
                }
                Some(s) => {
                    let to = (s.start - start).min(p.len());
                    f(p.get(i..to).unwrap_or_default())?;
                    i = to;
                }
                None => {
                    f(p.get(i..).unwrap_or_default())?;
                    i = p.len();
                }
            }
        }
        Ok(())
    }
}

/// The secrets of the long strings an export reads in pieces, left in their lines by
/// [`crate::secrets::redact_doc_deferring`] (see `long_strings`): by where each
/// string's raw contents are (the session's map is not changed while the export runs).
#[derive(Debug, Default)]
pub struct Redactions {
    strings: HashMap<usize, Vec<Secret>>,
    /// The entries that hold them.
    entries: std::collections::HashSet<usize>,
}

impl Redactions {
    /// Of what `redact_doc_deferring` gave for `doc`.
    pub(crate) fn new(
        doc: &arbor_core::doc::SessionDoc,
        deferred: crate::secrets::Deferred,
    ) -> Self {
        let mut r = Redactions::default();
        for (i, strings) in deferred {
            let line = doc.entry_line(i).as_ptr() as usize;
            r.entries.insert(i);
            for (range, secrets) in strings {
                r.strings.insert(line + range.start, secrets);
            }
        }
        r
    }

    /// The secrets of the string whose raw contents are `raw` (none: it has none, or its
    /// line was redacted whole).
    pub(crate) fn of(&self, raw: &[u8]) -> &[Secret] {
        self.strings
            .get(&(raw.as_ptr() as usize))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether entry `i` holds strings redacted as they are read.
    pub(crate) fn holds(&self, i: usize) -> bool {
        self.entries.contains(&i)
    }
}

/// The long strings of a message that the export reads in pieces (a `content` string, a
/// block's `text` or `thinking`, the long strings of a tool call's `arguments`): byte ranges
/// of their raw contents in `line`, in order, for `redact_doc_deferring`. Only a user's, an
/// assistant's or a tool result's (the others' lines are redacted whole).
pub(crate) fn long_strings(e: &Entry, line: &[u8]) -> Vec<Range<usize>> {
    use arbor_core::entry::Role;
    // No string of a short line is long (and its message is not parsed for nothing).
    if line.len() <= LONG
        || !matches!(
            e.role,
            Some(Role::User | Role::Assistant | Role::ToolResult)
        )
    {
        return Vec::new();
    }
    let p = message(e, line, true, None);
    let at = |raw: &[u8]| {
        let start = raw.as_ptr() as usize - line.as_ptr() as usize;
        start..start + raw.len()
    };
    let mut out = Vec::new();
    if let Some(Src::Raw { raw, .. }) = &p.content {
        out.push(at(raw));
    }
    for (_, _, l) in &p.blocks.0 {
        match l {
            Long::Str(raw, _) => out.push(at(raw)),
            Long::Json(j) => out.extend(j.marks.iter().map(|(_, raw, _)| at(raw))),
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

/// The `content` of entry `i` (a message whose long strings hold secrets `red` has, see
/// [`Redactions::holds`]) as raw JSON with each long string cut to its first characters,
/// redacted: enough for what [`crate::render::describe_with`] reads of it (200 characters),
/// which it would read from the line redacted whole. `None` for another entry.
pub(crate) fn redacted_content(
    doc: &arbor_core::doc::SessionDoc,
    i: usize,
    red: Option<&Redactions>,
) -> Option<(Vec<u8>, ValueKind)> {
    let red = red.filter(|r| r.holds(i))?;
    let e = doc.entries().get(i)?;
    let line = doc.line(&e.line);
    let (raw, kind) = e.message.as_ref()?.get(line, "content")?;
    let base = raw.as_ptr() as usize - line.as_ptr() as usize;
    let mut out = Vec::new();
    let mut from = 0;
    for r in long_strings(e, line) {
        let (Some(start), Some(end)) = (r.start.checked_sub(base), r.end.checked_sub(base)) else {
            continue;
        };
        out.extend_from_slice(raw.get(from..start)?);
        let head = one_line_prefix(&Src::raw_redacted(line.get(r)?, Some(red)), 256);
        let mut q = Vec::new();
        arbor_core::json::write_str_escaped(&head, &mut q);
        out.extend_from_slice(q.get(1..q.len() - 1)?);
        from = end;
    }
    out.extend_from_slice(raw.get(from..)?);
    Some((out, kind))
}

/// The first `n` characters of a text (all of it when shorter), reading no more of it.
fn one_line_prefix(src: &Src<'_>, n: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    // Stopping early is an error that only ends the reading.
    let _ = src.each(false, |_, p| {
        for c in p.chars() {
            if count == n {
                return Err(io::Error::other("enough"));
            }
            out.push(c);
            count += 1;
        }
        Ok(())
    });
    out
}

/// A long text that does not decode, as an I/O error of the export.
fn bad_text(e: arbor_core::json::JsonError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("a message text: {e}"))
}

/// Releases the map's pages of `raw[released..done]` (the part of a long string a pass has
/// read and does not read again; a page that straddles the last release is included the
/// next time); returns where the next release starts.
fn release_behind(raw: &[u8], released: usize, done: usize) -> usize {
    arbor_store::release_pages(raw.get(released..done).unwrap_or_default());
    done.saturating_sub(1 << 16)
}

impl<'a> From<&'a str> for Src<'a> {
    fn from(s: &'a str) -> Self {
        Src::Str(Cow::Borrowed(s))
    }
}

impl Src<'_> {
    /// Calls `f(offset, piece)` for consecutive pieces of the text (`offset` in bytes of the
    /// decoded text). With `lines`, a piece ends with `\n` but for the last one and a line
    /// at least [`Src::piece`] bytes long, which is cut (pieces of about that many bytes);
    /// without, a piece ends at any character. An empty text has no pieces.
    pub(crate) fn each(
        &self,
        lines: bool,
        mut f: impl FnMut(usize, &str) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Src::Str(s) = self {
            return if s.is_empty() { Ok(()) } else { f(0, s) };
        }
        let piece = self.piece();
        let mut carry = String::new();
        let mut at = 0;
        self.chunks(&mut |p| {
            if p.is_empty() {
                return Ok(());
            }
            if !lines {
                f(at, p)?;
                at += p.len();
                return Ok(());
            }
            carry.push_str(p);
            // A line at least a piece long is cut (its end is not waited for).
            let nl = carry.rfind('\n').map_or(0, |n| n + 1);
            let cut = if carry.len() - nl >= piece {
                carry.len()
            } else {
                nl
            };
            if cut > 0 {
                let rest = carry[cut..].to_string();
                carry.truncate(cut);
                f(at, &carry)?;
                at += carry.len();
                carry = rest;
            }
            Ok(())
        })?;
        if !carry.is_empty() {
            f(at, &carry)?;
        }
        Ok(())
    }
}

/// A JSON value as `JSON.stringify(JSON.parse(raw))` spells it, without its long strings
/// in memory: the value with each string value longer than [`LONG`] replaced by a marker
/// is spelled whole (`json::canonicalize`, small), and each marker's place is filled, as the
/// text is read, with its string spelled a piece at a time (`StrPieces::next_wtf8`, then
/// `write_js_str`: the escapes are per character, so the pieces spell the whole).
pub(crate) struct JsonText<'a> {
    /// The spelling with markers.
    text: String,
    /// Each marker's range in `text` (between its quotes), the long string's raw contents
    /// and its secrets ([`Redactions`]), in order.
    marks: Vec<(Range<usize>, &'a [u8], &'a [Secret])>,
    piece: usize,
}

impl<'a> JsonText<'a> {
    /// The value `raw` (a whole JSON value of the line), and the value parsed with the
    /// markers in place of its long strings (for the short members a renderer reads, see
    /// [`JsonText::long_of`]); `None` when it holds no long string or is not JSON.
    pub(crate) fn new(
        raw: &'a [u8],
        long: usize,
        piece: usize,
        red: Option<&'a Redactions>,
    ) -> Option<(Self, JsValue)> {
        use arbor_core::json::{skip_ws, value_end};
        // The long string values: a string followed by `:` is a key.
        let mut longs = Vec::new();
        let mut i = 0;
        while let Some(q) = memchr::memchr(b'"', raw.get(i..)?).map(|q| i + q) {
            let end = value_end(raw, q).ok()?;
            if end - q - 2 > long && raw.get(skip_ws(raw, end)) != Some(&b':') {
                longs.push(q + 1..end - 1);
            }
            i = end;
        }
        if longs.is_empty() {
            return None;
        }
        // A marker no string of the value spells: a nonce not in the masked spelling.
        for nonce in 0..16u32 {
            let mark = |k: usize| format!("\\u0000arbor-long-{nonce}-{k}\\u0000");
            let mut masked = Vec::with_capacity(
                raw.len() - longs.iter().map(|r| r.len()).sum::<usize>() + 64 * longs.len(),
            );
            let mut from = 0;
            for (k, r) in longs.iter().enumerate() {
                masked.extend_from_slice(raw.get(from..r.start)?);
                masked.extend_from_slice(mark(k).as_bytes());
                from = r.end;
            }
            masked.extend_from_slice(raw.get(from..)?);
            let mut out = Vec::new();
            arbor_core::json::canonicalize(&masked, &mut out).ok()?;
            let text = String::from_utf8(out).ok()?;
            let prefix = format!("\\u0000arbor-long-{nonce}-");
            if text.matches(prefix.as_str()).count() != longs.len() {
                continue;
            }
            let mut marks = Vec::with_capacity(longs.len());
            for (k, r) in longs.iter().enumerate() {
                let m = mark(k);
                let at = text.find(m.as_str())?;
                let contents = raw.get(r.clone())?;
                let secrets = red.map_or(&[][..], |red| red.of(contents));
                marks.push((at..at + m.len(), contents, secrets));
            }
            // In the spelling's order (a value may move: integer-like keys first).
            marks.sort_by_key(|(r, _, _)| r.start);
            let value = JsValue::parse(&masked).ok()?;
            return Some((JsonText { text, marks, piece }, value));
        }
        None
    }

    /// The long string whose marker `s` is (a string of the value [`JsonText`] spells).
    pub(crate) fn long_of(&self, s: &str) -> Option<Src<'a>> {
        let spelled = {
            let mut v = Vec::new();
            arbor_core::json::write_str_escaped(s, &mut v);
            v
        };
        let inner = spelled.get(1..spelled.len().checked_sub(1)?)?;
        self.marks
            .iter()
            .find(|(r, _, _)| self.text.as_bytes().get(r.clone()) == Some(inner))
            .map(|(_, raw, secrets)| Src::Raw {
                raw,
                piece: self.piece,
                secrets,
            })
    }

    fn chunks(&self, f: &mut dyn FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let mut from = 0;
        for (r, raw, secrets) in &self.marks {
            f(self.text.get(from..r.start).unwrap_or_default())?;
            if !secrets.is_empty() {
                // Redacted, the string is spelled from its lossy text (as `redact_value`
                // replaces it: a lone surrogate is U+FFFD then).
                let mut spell = |t: &str| {
                    let mut q = Vec::with_capacity(t.len() + 16);
                    arbor_core::json::write_str_escaped(t, &mut q);
                    f(&String::from_utf8_lossy(
                        q.get(1..q.len() - 1).unwrap_or_default(),
                    ))
                };
                Src::Raw {
                    raw,
                    piece: self.piece,
                    secrets,
                }
                .chunks(&mut spell)?;
                from = r.end;
                continue;
            }
            let mut pieces = StrPieces::new(raw, self.piece);
            let mut released = 0;
            while let Some(p) = pieces.next_wtf8() {
                let p = p.map_err(bad_text)?;
                let mut spelled = Vec::with_capacity(p.0.len() + 16);
                arbor_core::json::write_js_str(&p, &mut spelled);
                drop(p);
                let inner = spelled.get(1..spelled.len() - 1).unwrap_or_default();
                f(&String::from_utf8_lossy(inner))?;
                released = release_behind(raw, released, pieces.consumed());
            }
            from = r.end;
        }
        f(self.text.get(from..).unwrap_or_default())
    }
}

/// A message's payload for rendering: the value of the entry's `message`, and, when its
/// `content` is a string longer than [`LONG`], that string's raw contents instead (the
/// value then has no `content`): a long text is not decoded whole. With `blocks`, an
/// assistant's `content` array longer than [`LONG`] has each `text` member longer than that
/// read the same way: the value holds `""` in its place, and [`Payload::blocks`] the raw
/// contents, by block index.
pub(crate) fn message<'l>(
    e: &Entry,
    line: &'l [u8],
    blocks: bool,
    red: Option<&'l Redactions>,
) -> Payload<'l> {
    let whole = || Payload {
        value: e.fields.value(line, "message"),
        content: None,
        blocks: LongBlocks::default(),
    };
    let Some(f) = &e.message else {
        return whole();
    };
    let (raw, kind) = match f.get(line, "content") {
        Some((raw, kind)) if raw.len() > LONG => (raw, kind),
        _ => return whole(),
    };
    use arbor_core::entry::Role;
    let array = kind == ValueKind::Array
        && blocks
        && matches!(
            e.role,
            Some(Role::Assistant | Role::User | Role::ToolResult)
        );
    if kind != ValueKind::String && !array {
        return whole();
    }
    let mut m = JsValue::Object(Vec::new());
    for member in f.members.iter() {
        if key_is(line, &member.key, "content") {
            continue;
        }
        let (Some(key), Some(value)) =
            (line.get(member.key.clone()), line.get(member.value.clone()))
        else {
            continue;
        };
        let (Ok(key), Ok(value)) = (arbor_core::json::decode_string(key), JsValue::parse(value))
        else {
            // As `Fields::value` does with a value it cannot parse.
            return whole();
        };
        m.set(&key.to_string_lossy(), value);
    }
    if !array {
        return Payload {
            value: Some(m),
            content: raw.get(1..raw.len() - 1).map(|r| Src::raw_redacted(r, red)),
            blocks: LongBlocks::default(),
        };
    }
    match long_blocks(raw, red) {
        Some((content, blocks)) => {
            m.set("content", content);
            Payload {
                value: Some(m),
                content: None,
                blocks,
            }
        }
        None => whole(),
    }
}

/// A long member of a content block, left in the line.
pub(crate) enum Long<'l> {
    /// A string's raw contents (`text`, `thinking`) and its secrets ([`Redactions`]).
    Str(&'l [u8], &'l [Secret]),
    /// A JSON value (a tool call's `arguments`).
    Json(JsonText<'l>),
}

/// The long members of content blocks ([`Payload::blocks`]): the block's index, the
/// member's name, the member.
#[derive(Default)]
pub(crate) struct LongBlocks<'l>(Vec<(usize, &'static str, Long<'l>)>);

impl<'l> LongBlocks<'l> {
    fn get(&self, i: usize, key: &str) -> Option<&Long<'l>> {
        self.0
            .iter()
            .find(|(k, name, _)| *k == i && *name == key)
            .map(|(_, _, l)| l)
    }

    /// The string member `key` of block `b` (at index `i`): read in pieces when it is long,
    /// else the value's (`""` when it is not a string).
    pub(crate) fn text<'s>(&'s self, i: usize, b: &'s JsValue, key: &str) -> Src<'s> {
        match self.get(i, key) {
            Some(Long::Str(raw, secrets)) => Src::Raw {
                raw,
                piece: PIECE,
                secrets,
            },
            _ => Src::Str(
                b.get(key)
                    .and_then(JsValue::as_str_lossy)
                    .unwrap_or_default(),
            ),
        }
    }

    /// The member `key` of block `b` (at index `i`) as `JSON.stringify` writes it: spelled
    /// in pieces when it holds a long string; `None` when the block has no such member.
    pub(crate) fn json<'s>(&'s self, i: usize, b: &'s JsValue, key: &str) -> Option<Src<'s>> {
        match self.get(i, key) {
            Some(Long::Json(j)) => Some(Src::Json(j)),
            _ => b
                .get(key)
                .map(|a| Src::Str(String::from_utf8_lossy(&a.to_json()).into_owned().into())),
        }
    }

    /// The string member `key` of block `b` (at index `i`) when it is one, whole or not;
    /// a member of the long JSON value `key` (a tool call's `arguments`) is looked up in it
    /// with `inner`.
    pub(crate) fn str_in<'s>(
        &'s self,
        i: usize,
        b: &'s JsValue,
        key: &str,
        inner: &str,
    ) -> Option<Src<'s>> {
        let v = b.get(key)?.get(inner)?.as_str_lossy()?;
        match self.get(i, key) {
            Some(Long::Json(j)) => Some(j.long_of(&v).unwrap_or(Src::Str(v))),
            _ => Some(Src::Str(v)),
        }
    }
}

/// What [`message`] gives.
pub(crate) struct Payload<'l> {
    /// The message (without what is in `content` or `blocks`).
    pub value: Option<JsValue>,
    /// A long `content` string, read in pieces.
    pub content: Option<Src<'l>>,
    /// Long members of `content` blocks.
    pub blocks: LongBlocks<'l>,
}

/// A message's content as one text, as [`crate::render::content_text`] writes it (a tool
/// result: its blocks' texts, `[thinking] …`, `[tool call NAME] ARGS`, `[image]`, one a
/// line), the long members of `long` read in pieces.
pub(crate) fn content<'s>(v: Option<&'s JsValue>, long: &'s LongBlocks<'s>) -> Src<'s> {
    let Some(JsValue::Array(blocks)) = v.filter(|_| !long.0.is_empty()) else {
        return Src::Str(crate::render::content_text(v).into());
    };
    let mut parts = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        let part = match b.get("type").and_then(JsValue::as_str_lossy).as_deref() {
            Some("text") => long.text(k, b, "text"),
            Some("thinking") => Src::Cat(vec!["[thinking] ".into(), long.text(k, b, "thinking")]),
            Some("toolCall") => Src::Cat(vec![
                Src::Str(
                    format!(
                        "[tool call {}] ",
                        b.get("name")
                            .and_then(JsValue::as_str_lossy)
                            .unwrap_or_default()
                    )
                    .into(),
                ),
                long.json(k, b, "arguments").unwrap_or("".into()),
            ]),
            Some("image") => "[image]".into(),
            _ => continue,
        };
        if !parts.is_empty() {
            parts.push("\n".into());
        }
        parts.push(part);
    }
    Src::Cat(parts)
}

/// A content array (raw) parsed with every long member of its blocks left in the line: a
/// `text` or `thinking` string longer than [`LONG`] (`""` in its place), a tool call's
/// `arguments` longer than that and holding such a string ([`JsonText`]; its markers in
/// place of the strings); `None` when it is not an array of values `JsValue::parse` reads.
fn long_blocks<'l>(
    raw: &'l [u8],
    red: Option<&'l Redactions>,
) -> Option<(JsValue, LongBlocks<'l>)> {
    use arbor_core::json::{scan_object, skip_ws, value_end};
    let mut items = Vec::new();
    let mut long = LongBlocks::default();
    let mut i = skip_ws(raw, 1);
    if raw.get(i) == Some(&b']') {
        return Some((JsValue::Array(items), long));
    }
    loop {
        let end = value_end(raw, i).ok()?;
        let item = raw.get(i..end)?;
        if item.first() == Some(&b'{') {
            let scan = scan_object(item).ok()?;
            let mut b = JsValue::Object(Vec::new());
            let k = items.len();
            for member in &scan.members {
                let key = arbor_core::json::decode_string(item.get(member.key.clone())?).ok()?;
                let value = item.get(member.value.clone())?;
                let name = match &key.0[..] {
                    b"text" => Some("text"),
                    b"thinking" => Some("thinking"),
                    b"arguments" => Some("arguments"),
                    _ => None,
                };
                // The last one counts (as `JSON.parse`), in the first one's place.
                if let Some(name) = name {
                    long.0.retain(|(j, n, _)| !(*j == k && *n == name));
                }
                let kept = match (name, member.kind) {
                    (Some(name @ ("text" | "thinking")), ValueKind::String)
                        if value.len() > LONG =>
                    {
                        let contents = value.get(1..value.len() - 1)?;
                        let secrets = red.map_or(&[][..], |r| r.of(contents));
                        long.0.push((k, name, Long::Str(contents, secrets)));
                        Some(JsValue::String(Default::default()))
                    }
                    (Some("arguments"), ValueKind::Object | ValueKind::Array)
                        if value.len() > LONG =>
                    {
                        JsonText::new(value, LONG, PIECE, red).map(|(j, v)| {
                            long.0.push((k, "arguments", Long::Json(j)));
                            v
                        })
                    }
                    _ => None,
                };
                let v = match kept {
                    Some(v) => v,
                    None => JsValue::parse(value).ok()?,
                };
                b.set(&key.to_string_lossy(), v);
            }
            items.push(b);
        } else {
            items.push(JsValue::parse(item).ok()?);
        }
        i = skip_ws(raw, end);
        match raw.get(i) {
            Some(b',') => i = skip_ws(raw, i + 1),
            Some(b']') => return Some((JsValue::Array(items), long)),
            _ => return None,
        }
    }
}

/// [`crate::render::one_line`] of a text, reading no more of it than the line needs.
pub(crate) fn one_line(src: &Src<'_>, max: usize) -> String {
    let mut one = crate::render::OneLine::new(max);
    // Stopping early is an error that only ends the reading.
    let _ = src.each(false, |_, p| {
        if one.push(p) {
            Ok(())
        } else {
            Err(io::Error::other("enough"))
        }
    });
    one.finish()
}

/// How many lines `str::lines` gives for the text.
pub(crate) fn line_count(src: &Src<'_>) -> io::Result<usize> {
    let mut n = 0;
    let mut last = None;
    src.each(false, |_, p| {
        n += p.bytes().filter(|&b| b == b'\n').count();
        last = p.bytes().last();
        Ok(())
    })?;
    Ok(n + usize::from(last.is_some_and(|b| b != b'\n')))
}

/// A part of a text: prose, or a fenced code block (its language); what trimming leaves of
/// it is in its offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// `Some(language)` for a code block (the fence's info string).
    pub code: Option<String>,
    /// The part's bytes (of the text without its trailing whitespace).
    pub range: Range<usize>,
    /// The first byte that is not `\n` (`range.end` when there is none).
    pub first_non_nl: usize,
    /// Just past the last byte that is not `\n` (`range.start` when there is none).
    pub last_non_nl: usize,
    /// Just past the last character that is not whitespace; `None`: only whitespace.
    pub last_non_ws: Option<usize>,
    /// The longest run of backticks.
    pub backticks: usize,
}

impl Part {
    fn new(code: Option<String>, start: usize) -> Self {
        Part {
            code,
            range: start..start,
            first_non_nl: usize::MAX,
            last_non_nl: start,
            last_non_ws: None,
            backticks: 0,
        }
    }

    /// Counts a line (read by [`Line`]) into the part.
    fn add(&mut self, line: &Line) {
        if self.first_non_nl == usize::MAX {
            if let Some(at) = line.first_non_nl {
                self.first_non_nl = at;
            }
        }
        if let Some(at) = line.last_non_nl {
            self.last_non_nl = at;
        }
        if line.last_non_ws.is_some() {
            self.last_non_ws = line.last_non_ws;
        }
        self.backticks = self.backticks.max(line.backticks);
    }
}

/// Where a fence line stands as it is read: its indent, then its fence's run, then the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// Leading spaces, so many.
    Indent(usize),
    /// The run of a fence character, so long.
    Run(u8, usize),
    /// Past the run.
    Rest(u8, usize),
    /// The line starts with neither ``` nor ~~~ (after spaces).
    Not,
}

/// One line of the text, read in chunks of any size (a long line is never held): what it
/// adds to its part and whether it opens or closes a fenced block. Only an opening fence
/// line's info string is kept.
struct Line {
    start: usize,
    /// Bytes read.
    len: usize,
    first_non_nl: Option<usize>,
    last_non_nl: Option<usize>,
    last_non_ws: Option<usize>,
    backticks: usize,
    run: usize,
    head: Head,
    /// The indent.
    indent: usize,
    /// Past the run, while the line may open a block.
    info: String,
    /// Past the run, only whitespace.
    rest_ws: bool,
    /// A backtick past a backtick fence's run: not a fence.
    tick: bool,
    /// Where the last backtick run of each length starts.
    runs: HashMap<usize, usize>,
    /// Where the backtick run being read starts.
    run_at: usize,
}

impl Line {
    fn new(start: usize) -> Self {
        Line {
            start,
            len: 0,
            first_non_nl: None,
            last_non_nl: None,
            last_non_ws: None,
            backticks: 0,
            run: 0,
            head: Head::Indent(0),
            indent: 0,
            info: String::new(),
            rest_ws: true,
            tick: false,
            runs: HashMap::new(),
            run_at: 0,
        }
    }

    /// The next chunk of the line (a `\n` only at its end), at `pos`; `open`: the open
    /// block's fence.
    fn chunk(&mut self, s: &str, pos: usize, open: Option<(u8, usize)>) {
        let b = s.as_bytes();
        if self.len == 0 && b.first().is_some_and(|&c| c != b'\n') {
            self.first_non_nl = Some(pos);
        }
        self.len += s.len();
        let body = s.trim_end_matches('\n');
        if !body.is_empty() {
            self.last_non_nl = Some(pos + body.len());
        }
        let t = s.trim_end();
        if !t.is_empty() {
            self.last_non_ws = Some(pos + t.len());
        }
        for (i, &c) in b.iter().enumerate() {
            if c == b'`' {
                if self.run == 0 {
                    self.run_at = pos + i;
                }
                self.run += 1;
                self.backticks = self.backticks.max(self.run);
            } else if self.run > 0 {
                self.runs.insert(std::mem::take(&mut self.run), self.run_at);
            }
        }
        // The fence: the line's head a byte at a time, its rest at once.
        let mut i = 0;
        while i < b.len() {
            match self.head {
                Head::Indent(n) => match b[i] {
                    b' ' => self.head = Head::Indent(n + 1),
                    c @ (b'`' | b'~') => {
                        self.indent = n;
                        self.head = Head::Run(c, 1);
                    }
                    _ => self.head = Head::Not,
                },
                Head::Run(c, n) if b[i] == c => self.head = Head::Run(c, n + 1),
                Head::Run(c, n) => {
                    self.head = Head::Rest(c, n);
                    continue;
                }
                Head::Rest(c, n) => {
                    let rest = &s[i..];
                    if self.indent <= 3 && n >= 3 && open.is_none() && !self.tick {
                        if c == b'`' && rest.contains('`') {
                            // Not a fence: the info is not needed.
                            self.tick = true;
                            self.info = String::new();
                        } else {
                            self.info.push_str(rest);
                        }
                    }
                    if self.rest_ws {
                        self.rest_ws = rest.chars().all(char::is_whitespace);
                    }
                    return;
                }
                Head::Not => return,
            }
            i += 1;
        }
    }

    /// What the line is, read whole: `Some(Some(info))` opens a block, `Some(None)` closes
    /// the open one, `None` is text.
    fn fence(&self, open: Option<(u8, usize)>) -> Option<(Option<String>, (u8, usize))> {
        let (c, run) = match self.head {
            Head::Run(c, n) | Head::Rest(c, n) => (c, n),
            _ => return None,
        };
        if self.indent > 3 {
            return None;
        }
        match open {
            None if run >= 3 && !self.tick => Some((Some(self.info.trim().to_string()), (c, run))),
            Some((c0, n0)) if c == c0 && run >= n0 && self.rest_ws => Some((None, (c, run))),
            _ => None,
        }
    }
}

/// Where a text's fenced code blocks are (``` or ~~~, up to three spaces in, closed by a
/// fence of the same character at least as long; an unclosed block runs to the end), read
/// in chunks, a line at a time without holding it.
struct Fences {
    parts: Vec<Part>,
    cur: Part,
    /// The open block's fence: its character and length.
    open: Option<(u8, usize)>,
    /// Split at fences (else every line is the one part's).
    fenced: bool,
    line: Line,
    /// The backtick runs of the lines at least this long are kept.
    long: usize,
    runs: Runs,
}

impl Fences {
    fn new(fenced: bool, long: usize) -> Self {
        Fences {
            long,
            runs: Runs::default(),
            parts: Vec::new(),
            cur: Part::new((!fenced).then(String::new), 0),
            open: None,
            fenced,
            line: Line::new(0),
        }
    }

    /// The next chunk of the text, at `pos`: it ends a line if it ends with `\n`.
    fn chunk(&mut self, s: &str, pos: usize) {
        self.line.chunk(s, pos, self.open);
        if s.ends_with('\n') {
            self.end_line(pos + s.len());
        }
    }

    /// The line read ends at `end`.
    fn end_line(&mut self, end: usize) {
        let mut line = std::mem::replace(&mut self.line, Line::new(end));
        if line.run > 0 {
            line.runs.insert(line.run, line.run_at);
        }
        if line.len >= self.long {
            self.runs
                .0
                .insert(line.start, std::mem::take(&mut line.runs));
        }
        let fence = if self.fenced {
            line.fence(self.open)
        } else {
            None
        };
        match fence {
            Some((Some(info), f)) => {
                self.end_part(line.start, Part::new(Some(info), end));
                self.open = Some(f);
            }
            Some((None, _)) => {
                self.end_part(line.start, Part::new(None, end));
                self.open = None;
            }
            None => self.cur.add(&line),
        }
    }

    fn end_part(&mut self, at: usize, next: Part) {
        let mut done = std::mem::replace(&mut self.cur, next);
        done.range.end = at;
        self.parts.push(done);
    }

    /// The parts of the text of `len` bytes, cut at `keep` (where its trailing whitespace
    /// starts): what is past `keep` is whitespace and belongs to no part.
    fn finish(mut self, len: usize, keep: usize) -> (Vec<Part>, Runs) {
        if self.line.len > 0 {
            self.end_line(len);
        }
        if !self.fenced {
            let mut whole = self.cur;
            whole.range = 0..len;
            whole.first_non_nl = whole.first_non_nl.min(len);
            return (vec![whole], self.runs);
        }
        self.end_part(len, Part::new(None, len));
        for p in &mut self.parts {
            let start = p.range.start.min(keep);
            let end = p.range.end.min(keep);
            if p.range.end > keep {
                // Only whitespace was cut: the last character kept ends at `keep`.
                p.last_non_nl = if end > start { keep } else { start };
                p.last_non_ws = (end > start).then_some(keep);
            }
            p.range = start..end;
            p.first_non_nl = p.first_non_nl.clamp(start, end);
        }
        (self.parts, self.runs)
    }
}

/// The parts of `src` without its trailing whitespace (`fenced`: split at its fenced code
/// blocks; else one code part, the whole text untrimmed), and the length of what is kept.
/// The text is read in pieces as they are decoded: no line is held whole. The [`Runs`] are
/// what [`write_ops`] needs to escape the text's long lines in Markdown.
pub(crate) fn layout(src: &Src<'_>, fenced: bool) -> io::Result<Layout> {
    let mut fences = Fences::new(fenced, src.piece());
    let mut len = 0;
    let mut keep = 0;
    src.each(false, |at, p| {
        let mut pos = 0;
        while pos < p.len() {
            let end = p[pos..].find('\n').map_or(p.len(), |i| pos + i + 1);
            fences.chunk(&p[pos..end], at + pos);
            pos = end;
        }
        let t = p.trim_end();
        if !t.is_empty() {
            keep = at + t.len();
        }
        len = at + p.len();
        Ok(())
    })?;
    let keep = if fenced { keep } else { len };
    let (parts, runs) = fences.finish(len, keep);
    Ok(Layout { parts, keep, runs })
}

/// What [`layout`] gives.
pub(crate) struct Layout {
    /// The parts.
    pub parts: Vec<Part>,
    /// The length of what is kept.
    pub keep: usize,
    /// The backtick runs of the long lines.
    pub runs: Runs,
}

/// The backtick runs of the lines [`Src::each`] may cut (at least a piece long), by where
/// the line starts: for each length, where the last run that long starts.
#[derive(Debug, Default)]
pub(crate) struct Runs(HashMap<usize, HashMap<usize, usize>>);

impl Runs {
    /// Whether a backtick run exactly `len` long starts at or after `from` on the line that
    /// starts at `line`, `s` (at `at`) holding the rest of the line unless the line is one
    /// of these.
    fn follows(&self, line: usize, from: usize, len: usize, s: &str, at: usize) -> bool {
        match self.0.get(&line) {
            Some(runs) => runs.get(&len).is_some_and(|&last| last >= from),
            None => from
                .checked_sub(at)
                .and_then(|i| s.get(i..))
                .and_then(|rest| super::run_follows(rest, 0, len))
                .unwrap_or(false),
        }
    }
}

/// How a range of the text is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Esc {
    /// As it is.
    Raw,
    /// [`super::md_text`] (by [`super::MdEsc`]: a long line in pieces).
    Md,
    /// [`super::escape_html`].
    Html,
    /// Inside a JSON string (no quotes).
    Json,
}

/// What to write: arbor's own text, or a range of the text.
pub(crate) enum Op {
    /// arbor's text.
    Lit(String),
    /// A range of the text, escaped.
    Text(Range<usize>, Esc),
    /// A short range of the text, handed whole to `write_ops`' `whole` with this number.
    Whole(Range<usize>, usize),
}

fn put<W: Write + ?Sized>(out: &mut W, s: &str, esc: Esc) -> io::Result<()> {
    let mut out = out;
    match esc {
        Esc::Raw => out.write_all(s.as_bytes()),
        // Through `write_ops`' `MdEsc`.
        Esc::Md => Ok(()),
        Esc::Html => super::write_pieces(&mut out, s, false, super::escape_html),
        Esc::Json => super::write_pieces(&mut out, s, false, |p| {
            let mut q = Vec::with_capacity(p.len() + 2);
            arbor_core::json::write_str_escaped(p, &mut q);
            // Without its quotes: the pieces make one string.
            String::from_utf8_lossy(q.get(1..q.len().saturating_sub(1)).unwrap_or_default())
                .into_owned()
        }),
    }
}

/// Writes `ops` (ranges in order, not overlapping), reading `src` once; `whole(out, n,
/// text)` writes an [`Op::Whole`]; `runs`: the text's [`Layout::runs`] (needed by
/// [`Esc::Md`] only).
pub(crate) fn write_ops<W: Write>(
    out: &mut W,
    src: &Src<'_>,
    ops: Vec<Op>,
    runs: &Runs,
    mut whole: impl FnMut(&mut W, usize, &str) -> io::Result<()>,
) -> io::Result<()> {
    let reads = ops.iter().any(|o| !matches!(o, Op::Lit(_)));
    // The Markdown escape looks ahead on a line: in the piece when the line ends there,
    // else in `runs` (a line a piece long); the others read one character at a time.
    let lines = ops.iter().any(|o| matches!(o, Op::Text(_, Esc::Md)));
    let mut md: Option<super::MdEsc> = None;
    let mut ops = ops
        .into_iter()
        .filter(|o| !matches!(o, Op::Text(r, _) if r.is_empty()))
        .peekable();
    let mut held = String::new();
    if reads {
        src.each(lines, |at, p| {
            let end = at + p.len();
            while let Some(op) = ops.peek() {
                match op {
                    Op::Lit(s) => out.write_all(s.as_bytes())?,
                    Op::Text(r, _) | Op::Whole(r, _) if r.start >= end && !r.is_empty() => break,
                    Op::Whole(r, _) if r.start > end => break,
                    Op::Text(r, Esc::Md) => {
                        let (a, b) = (r.start.max(at) - at, r.end.min(end) - at);
                        let e = md.get_or_insert_with(|| super::MdEsc::new(r.start, false));
                        let mut opens = |line, from, len| runs.follows(line, from, len, p, at);
                        // About a megabyte escaped at a time.
                        let mut i = a;
                        while i < b {
                            let mut j = (i + (1 << 20)).min(b);
                            while !p.is_char_boundary(j) {
                                j += 1;
                            }
                            let mut s = String::with_capacity(j - i + (j - i) / 16);
                            e.push(&mut s, p.get(i..j).unwrap_or_default(), at + i, &mut opens);
                            out.write_all(s.as_bytes())?;
                            i = j;
                        }
                        if r.end > end {
                            break;
                        }
                        let mut s = String::new();
                        e.finish(&mut s);
                        out.write_all(s.as_bytes())?;
                        md = None;
                    }
                    Op::Text(r, esc) => {
                        let (a, b) = (r.start.max(at) - at, r.end.min(end) - at);
                        put(out, p.get(a..b).unwrap_or_default(), *esc)?;
                        if r.end > end {
                            break;
                        }
                    }
                    Op::Whole(r, n) => {
                        if r.start < end {
                            let (a, b) = (r.start.max(at) - at, r.end.min(end) - at);
                            held.push_str(p.get(a..b).unwrap_or_default());
                        }
                        if r.end > end {
                            break;
                        }
                        whole(out, *n, &held)?;
                        held.clear();
                    }
                }
                ops.next();
            }
            Ok(())
        })?;
    }
    for op in ops {
        match op {
            Op::Lit(s) => out.write_all(s.as_bytes())?,
            Op::Whole(_, n) => {
                whole(out, n, &held)?;
                held.clear();
            }
            // Past the end of the text: nothing to write.
            Op::Text(..) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! A text read in pieces renders to the same bytes as the text whole, and both to the
    //! bytes of the renderers from before the pieces (kept here as the reference).
    use super::super::highlight::Highlighter;
    use super::super::{escape_html, md_escape, write_pieces};
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::sample::select;

    /// The reference: `fenced` as it was (the parts of a whole text).
    fn old_fenced(t: &str) -> Vec<(Option<&str>, &str)> {
        let mut parts = Vec::new();
        let mut text_from = 0;
        let mut pos = 0;
        let mut open: Option<(u8, usize, &str, usize)> = None;
        while pos < t.len() {
            let end = t[pos..].find('\n').map_or(t.len(), |i| pos + i + 1);
            let line = &t[pos..end];
            let trimmed = line.trim_start_matches(' ');
            let indent = line.len() - trimmed.len();
            let fence = trimmed
                .as_bytes()
                .first()
                .copied()
                .filter(|c| *c == b'`' || *c == b'~');
            let run = fence.map_or(0, |c| trimmed.bytes().take_while(|b| *b == c).count());
            match (open, fence) {
                (None, Some(c)) if indent <= 3 && run >= 3 => {
                    let info = trimmed[run..].trim();
                    if c == b'`' && info.contains('`') {
                        pos = end;
                        continue;
                    }
                    parts.push((None, &t[text_from..pos]));
                    open = Some((c, run, info, end));
                }
                (Some((c0, n0, lang, from)), Some(c))
                    if c == c0 && run >= n0 && indent <= 3 && trimmed[run..].trim().is_empty() =>
                {
                    parts.push((Some(lang), &t[from..pos]));
                    open = None;
                    text_from = end;
                }
                _ => {}
            }
            pos = end;
        }
        match open {
            Some((_, _, lang, from)) => parts.push((Some(lang), &t[from..])),
            None => parts.push((None, &t[text_from..])),
        }
        parts
    }

    /// The reference: `Writer::fence` as it was.
    fn old_fence(out: &mut Vec<u8>, lang: &str, body: &str) {
        let lang: String = lang
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '.' | '_' | '-'))
            .collect();
        let mut longest = 0;
        let mut run = 0;
        for c in body.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let f = "`".repeat((longest + 1).max(3));
        out.extend_from_slice(
            format!("{f}{lang}\n{}\n{f}\n\n", body.trim_end_matches('\n')).as_bytes(),
        );
    }

    /// The reference: `md_escape` as it was (a text held whole).
    fn old_md_escape(t: &str, closed: bool) -> String {
        let b = t.as_bytes();
        let mut out = String::with_capacity(t.len() + t.len() / 16);
        let mut i = 0;
        let mut plain_from = 0;
        let flush = |out: &mut String, s: &str, last: bool| {
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    ']' => match chars.peek() {
                        Some('(' | '[' | ':') => out.push_str("\\]"),
                        None if last && closed => out.push_str("\\]"),
                        _ => out.push(']'),
                    },
                    c => out.push(c),
                }
            }
        };
        while i < b.len() {
            if b[i] != b'`' {
                i += 1;
                continue;
            }
            let run = b[i..].iter().take_while(|&&c| c == b'`').count();
            // The closing run: as long, on the same line.
            let line_end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            let mut j = i + run;
            let mut close = None;
            while j < line_end {
                if b[j] == b'`' {
                    let r = b[j..line_end].iter().take_while(|&&c| c == b'`').count();
                    if r == run {
                        close = Some(j + r);
                        break;
                    }
                    j += r;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(end) => {
                    flush(&mut out, &t[plain_from..i], false);
                    out.push_str(&t[i..end]);
                    i = end;
                    plain_from = end;
                }
                None => i += run,
            }
        }
        flush(&mut out, &t[plain_from..], true);
        out
    }

    /// The reference: `Writer::text` as it was.
    fn old_md(t: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for (lang, x) in old_fenced(t.trim_end()) {
            match lang {
                None => {
                    let x = x.trim_matches('\n').trim_end();
                    if !x.trim().is_empty() {
                        write_pieces(&mut out, x, true, |l| old_md_escape(l, false))
                            .expect("in memory");
                        out.extend_from_slice(b"\n\n");
                    }
                }
                Some(lang) => old_fence(&mut out, lang, x),
            }
        }
        out
    }

    /// The reference: the HTML export's `body(.., "text")` as it was.
    fn old_html(t: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut hl = Highlighter::new();
        if t.trim().is_empty() {
            return out;
        }
        for (lang, x) in old_fenced(t.trim_end()) {
            match lang {
                None if !x.trim().is_empty() => {
                    out.extend_from_slice(b"<div class=\"text\">");
                    write_pieces(&mut out, x.trim_matches('\n'), false, escape_html)
                        .expect("in memory");
                    out.extend_from_slice(b"</div>");
                }
                None => {}
                Some(lang) => {
                    super::super::html::code_block(&mut out, &mut hl, lang, x).expect("in memory")
                }
            }
        }
        out
    }

    /// What each renderer writes of `src`.
    fn render(src: &Src<'_>) -> [Vec<u8>; 5] {
        let mut md = Vec::new();
        super::super::md_message_text(&mut md, src).expect("in memory");
        let mut fence = Vec::new();
        super::super::md_fence(&mut fence, "x", src).expect("in memory");
        let mut html = Vec::new();
        super::super::html::text_html(&mut html, &mut Highlighter::new(), src).expect("in memory");
        let mut json = Vec::new();
        write_ops(
            &mut json,
            src,
            vec![Op::Text(0..usize::MAX, Esc::Json)],
            &Runs::default(),
            |_, _, _| Ok(()),
        )
        .expect("in memory");
        let counts = format!(
            "{} {}",
            line_count(src).expect("in memory"),
            one_line(src, 20)
        );
        [md, fence, html, json, counts.into_bytes()]
    }

    /// Raw JSON string contents: fences and backtick runs, Markdown and HTML specials,
    /// whitespace (Unicode's too), multi-byte characters, escapes of every kind (a backtick
    /// or a newline escaped, surrogate pairs, lone surrogates) and invalid UTF-8.
    fn arb_raw() -> impl Strategy<Value = Vec<u8>> {
        let atoms = vec![
            "a",
            "b c",
            " ",
            "  ",
            r"\n",
            r"\n",
            r"\n",
            r"\n\n",
            "`",
            "``",
            "```",
            r"\u0060",
            "~~~",
            r"```rust\n",
            r"```js\n",
            r"   ```\n",
            r"    ```\n",
            r"~~~ py\n",
            r"``` a ` b\n",
            "]",
            "(",
            "[",
            ":",
            "<",
            "&",
            "\\\\",
            "\\\"",
            r"\t",
            r"\r",
            r"\u0001",
            "é",
            "😀",
            r"\ud83d\ude00",
            r"\ud83d",
            r"\ude00",
            "\u{3000}",
            r"\u3000",
            "\u{85}",
            "[x](y)",
            "`code`",
            "<script>",
            "let x = 1;",
            "\u{2028}",
        ];
        // Without a newline (escaped or not).
        let in_line: Vec<&str> = atoms
            .iter()
            .copied()
            .filter(|a| !a.contains(r"\n"))
            .collect();
        let atom = select(atoms);
        prop_oneof![
            9 => vec(atom, 0..40).prop_map(|v| v.concat().into_bytes()),
            // Long lines (longer than the pieces), the last without a newline.
            3 => (vec(vec(select(in_line), 20..120), 1..3),
                  select(vec!["", "```", "~~~ x", "   ```rust"]))
                .prop_map(|(lines, head)| {
                    let lines: Vec<String> = lines.iter().map(|l| l.concat()).collect();
                    format!("{head}{}", lines.join(r"\n")).into_bytes()
                }),
            1 => vec(select(vec![b"a".to_vec(), b"\xff".to_vec(), b"\xe2\x82".to_vec(),
                                 br"\n".to_vec(), b"`".to_vec()]), 0..20)
                .prop_map(|v| v.concat()),
        ]
    }

    /// The whole text of `src` (its pieces joined).
    fn joined(src: &Src<'_>) -> String {
        let mut all = String::new();
        src.each(false, |_, p| {
            all.push_str(p);
            Ok(())
        })
        .expect("in memory");
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Texts one after the other (a tool result's blocks, long ones in pieces) render as
        /// the text they make whole, in every renderer.
        #[test]
        fn texts_one_after_the_other_render_as_their_whole(
            a in arb_raw(), b in arb_raw(), piece in 1usize..24, short in "[a-z`\n ]{0,6}",
        ) {
            let dec = |r: &[u8]| arbor_core::json::decode_string(r)
                .expect("valid").to_string_lossy().into_owned();
            let whole = format!("{}\n[thinking] {}\n{short}", dec(&a), dec(&b));
            let cat = Src::Cat(vec![
                Src::Raw { raw: &a, piece, secrets: &[] },
                "\n".into(),
                Src::Cat(vec!["[thinking] ".into(), Src::Raw { raw: &b, piece: piece + 3, secrets: &[] }]),
                "\n".into(),
                Src::Str(short.as_str().into()),
            ]);
            prop_assert_eq!(render(&Src::from(whole.as_str())), render(&cat));
        }

        /// A text read in pieces of any size with secrets replaced as it is read
        /// ([`Redacting`]) is the text whole with them replaced, wherever a secret starts or
        /// ends against the pieces.
        #[test]
        fn secrets_are_replaced_across_pieces(
            raw in arb_raw(), piece in 1usize..24, cuts in vec((0usize..200, 0usize..12), 0..5),
        ) {
            let whole = arbor_core::json::decode_string(&raw)
                .expect("valid").to_string_lossy().into_owned();
            // Non-overlapping ranges on character boundaries, in order.
            let mut secrets = Vec::new();
            let mut at = 0;
            for (gap, len) in cuts {
                let mut start = at + gap;
                while start < whole.len() && !whole.is_char_boundary(start) {
                    start += 1;
                }
                let mut end = (start + len + 1).min(whole.len());
                while end < whole.len() && !whole.is_char_boundary(end) {
                    end += 1;
                }
                if start >= end {
                    break;
                }
                secrets.push(Secret { kind: "k", start, end });
                at = end;
            }
            let mut expected = String::new();
            let mut from = 0;
            for s in &secrets {
                expected.push_str(&whole[from..s.start]);
                expected.push_str("[REDACTED:k]");
                from = s.end;
            }
            expected.push_str(&whole[from..]);
            let src = Src::Raw { raw: &raw, piece, secrets: &secrets };
            prop_assert_eq!(joined(&src), expected.clone());
            prop_assert_eq!(render(&src), render(&Src::from(expected.as_str())));
        }

        /// A JSON value with its long strings spelled in pieces ([`JsonText`]) is what
        /// `JSON.stringify(JSON.parse(raw))` writes (`to_json`, as the exports wrote tool-call
        /// arguments): strings of every kind of escape, keys that move (integer-like first),
        /// duplicate keys, a long key (not a value: spelled with the rest), nesting; and
        /// each of its string members is found again by its marker.
        #[test]
        fn json_text_spells_what_to_json_writes(
            strs in vec(arb_raw(), 1..5),
            long in 0usize..12,
            piece in 1usize..24,
            shape in 0usize..4,
        ) {
            let q = |r: &Vec<u8>| format!("\"{}\"", String::from_utf8_lossy(r));
            let raw = match shape {
                0 => format!("{{\"path\":\"a.rs\",\"content\":{}}}", q(&strs[0])),
                1 => format!(
                    "{{\"b\": {} , \"2\":[1,{}], \"b\":{}, {}:null}}",
                    q(&strs[0]),
                    strs.get(1).map_or("true".into(), q),
                    strs.last().map_or("0".into(), q),
                    q(&strs[0]),
                ),
                2 => format!("[{}]", strs.iter().map(q).collect::<Vec<_>>().join(",")),
                _ => format!(
                    "{{\"x\":{{\"y\":[{{\"command\":{}}}]}},\"1\":{}}}",
                    q(&strs[0]),
                    strs.last().map_or("0".into(), q)
                ),
            };
            // Lossy bytes may have made a string that is not JSON: such is not a case.
            let Ok(v) = JsValue::parse(raw.as_bytes()) else { return Ok(()) };
            let expected = String::from_utf8_lossy(&v.to_json()).into_owned();
            // None: no string value longer than `long` (the export then parses the value
            // whole).
            if let Some((j, masked)) = JsonText::new(raw.as_bytes(), long, piece, None) {
                prop_assert_eq!(joined(&Src::Json(&j)), expected.clone());
                // The markers stand for the long strings, each found by its own.
                if let Some(JsValue::String(c)) = masked.get("content") {
                    let raw_of = j.long_of(&c.to_string_lossy());
                    let whole = v.get("content").and_then(JsValue::as_str_lossy);
                    // Not a marker: the string itself (a short one).
                    let got = raw_of.map_or_else(|| c.to_string_lossy().into_owned(), |r| joined(&r));
                    prop_assert_eq!(Some(got.as_str()), whole.as_deref());
                }
                let r = render(&Src::Json(&j));
                prop_assert_eq!(r, render(&Src::from(expected.as_str())));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        /// Markdown text, a fence, the HTML text, the JSON string, the line count and the
        /// title line of a text: the same bytes from pieces of any size as from the text
        /// whole, and (Markdown and HTML) as the renderers before pieces wrote.
        #[test]
        fn pieces_render_as_the_whole_text(raw in arb_raw(), piece in 1usize..24) {
            let whole = arbor_core::json::decode_string(&raw)
                .expect("valid")
                .to_string_lossy()
                .into_owned();
            let a = render(&Src::from(whole.as_str()));
            let b = render(&Src::Raw { raw: &raw, piece, secrets: &[] });
            prop_assert_eq!(&a, &b, "pieces of {} bytes: {:?}", piece, whole);
            prop_assert_eq!(&a[0], &old_md(&whole), "Markdown before: {:?}", whole);
            prop_assert_eq!(md_escape(&whole, false), old_md_escape(&whole, false));
            prop_assert_eq!(md_escape(&whole, true), old_md_escape(&whole, true));
            prop_assert_eq!(&a[2], &old_html(&whole), "HTML before: {:?}", whole);
            let mut fence = Vec::new();
            old_fence(&mut fence, "x", &whole);
            prop_assert_eq!(&a[1], &fence);
            let counts = format!(
                "{} {}",
                whole.lines().count(),
                crate::render::one_line(&whole, 20)
            );
            prop_assert_eq!(&a[4], counts.as_bytes());
        }
    }
}
