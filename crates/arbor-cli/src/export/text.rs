//! Message text for the exports, whole or in pieces: a long string of a session is decoded
//! from its line a piece at a time ([`arbor_core::json::StrPieces`]) while the map's pages
//! behind are released, so that no export holds the whole text (nor the whole line) at once.
//!
//! Every text the exports fence, escape or trim goes through here, short or long: [`layout`]
//! reads it once (where the fenced code blocks are, what trimming leaves, the longest
//! backtick run of each block) and [`write_ops`] reads it again to write it. A short text is
//! one piece, a long one many; the bytes written are the same.
use arbor_core::entry::{key_is, Entry};
use arbor_core::json::{JsValue, StrPieces, ValueKind};
use std::borrow::Cow;
use std::io::{self, Write};
use std::ops::Range;

/// A string longer than this (raw bytes in its line) is read in pieces.
pub(crate) const LONG: usize = 1 << 20;

/// How much text a piece holds (at least; a piece ends at a line end).
const PIECE: usize = 1 << 20;

/// A text to render.
pub(crate) enum Src<'a> {
    /// In memory.
    Str(Cow<'a, str>),
    /// A JSON string's raw contents (between its quotes), in the session's line: decoded a
    /// piece at a time, lossily (lone surrogates and invalid UTF-8 as U+FFFD), as
    /// `JsStr::to_string_lossy` decodes it whole; pieces of `piece` bytes (at least).
    Raw { raw: &'a [u8], piece: usize },
}

impl<'a> Src<'a> {
    /// A JSON string's raw contents, read in pieces of [`PIECE`] bytes.
    pub(crate) fn raw(raw: &'a [u8]) -> Self {
        Src::Raw { raw, piece: PIECE }
    }
}

impl<'a> From<&'a str> for Src<'a> {
    fn from(s: &'a str) -> Self {
        Src::Str(Cow::Borrowed(s))
    }
}

impl Src<'_> {
    /// Calls `f(offset, piece)` for consecutive pieces of the text (`offset` in bytes of the
    /// decoded text). With `lines`, every piece but the last ends with `\n`: a line is never
    /// cut (a line longer than a piece makes a longer piece); without, a piece ends at any
    /// character. An empty text has no pieces.
    pub(crate) fn each(
        &self,
        lines: bool,
        mut f: impl FnMut(usize, &str) -> io::Result<()>,
    ) -> io::Result<()> {
        match self {
            Src::Str(s) if s.is_empty() => Ok(()),
            Src::Str(s) => f(0, s),
            Src::Raw { raw, piece } => {
                let mut pieces = StrPieces::new(raw, *piece);
                let mut carry = String::new();
                let mut at = 0;
                let mut released = 0;
                while let Some(p) = pieces.next() {
                    let p = p.map_err(|e| {
                        io::Error::new(io::ErrorKind::InvalidData, format!("a message text: {e}"))
                    })?;
                    if !lines {
                        f(at, &p)?;
                        at += p.len();
                    } else {
                        carry.push_str(&p);
                    }
                    drop(p);
                    if let Some(nl) = carry.rfind('\n') {
                        let rest = carry[nl + 1..].to_string();
                        carry.truncate(nl + 1);
                        f(at, &carry)?;
                        at += carry.len();
                        carry = rest;
                    }
                    // The line's pages behind are not read again by this pass (a page that
                    // straddles the last release is included the next time).
                    let done = pieces.consumed();
                    arbor_store::map::release_pages(raw.get(released..done).unwrap_or_default());
                    released = done.saturating_sub(1 << 16);
                }
                if !carry.is_empty() {
                    f(at, &carry)?;
                }
                Ok(())
            }
        }
    }
}

/// A message's payload for rendering: the value of the entry's `message`, and, when its
/// `content` is a string longer than [`LONG`], that string's raw contents instead (the
/// value then has no `content`): a long text is not decoded whole. With `blocks`, an
/// assistant's `content` array longer than [`LONG`] has each `text` member longer than that
/// read the same way: the value holds `""` in its place, and [`Payload::blocks`] the raw
/// contents, by block index.
pub(crate) fn message<'l>(e: &Entry, line: &'l [u8], blocks: bool) -> Payload<'l> {
    let whole = || Payload {
        value: e.fields.value(line, "message"),
        content: None,
        blocks: Vec::new(),
    };
    let Some(f) = &e.message else {
        return whole();
    };
    let (raw, kind) = match f.get(line, "content") {
        Some((raw, kind)) if raw.len() > LONG => (raw, kind),
        _ => return whole(),
    };
    let array =
        kind == ValueKind::Array && blocks && e.role == Some(arbor_core::entry::Role::Assistant);
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
            content: raw.get(1..raw.len() - 1),
            blocks: Vec::new(),
        };
    }
    match long_text_blocks(raw) {
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

/// Long `text` strings of content blocks: the block's index, the raw contents.
pub(crate) type LongBlocks<'l> = Vec<(usize, &'l [u8])>;

/// What [`message`] gives.
pub(crate) struct Payload<'l> {
    /// The message (without what is in `content` or `blocks`).
    pub value: Option<JsValue>,
    /// A long `content` string's raw contents.
    pub content: Option<&'l [u8]>,
    /// Long `text` strings of `content` blocks.
    pub blocks: LongBlocks<'l>,
}

/// The long `text` of block `i` among `blocks` ([`Payload::blocks`]), if it is one.
pub(crate) fn block<'l>(blocks: &[(usize, &'l [u8])], i: usize) -> Option<&'l [u8]> {
    blocks.iter().find(|(k, _)| *k == i).map(|(_, raw)| *raw)
}

/// A content array (raw) parsed with every `text` member longer than [`LONG`] left out
/// (`""` in its place, the raw contents returned by block index); `None` when it is not an
/// array of values `JsValue::parse` reads.
fn long_text_blocks(raw: &[u8]) -> Option<(JsValue, LongBlocks<'_>)> {
    use arbor_core::json::{scan_object, skip_ws, value_end};
    let mut items = Vec::new();
    let mut long = Vec::new();
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
            let mut text = None;
            for member in &scan.members {
                let key = arbor_core::json::decode_string(item.get(member.key.clone())?).ok()?;
                let value = item.get(member.value.clone())?;
                if key.0 == b"text" {
                    // The last one counts (as `JSON.parse`), in the first one's place.
                    if text.is_none() {
                        b.set("text", JsValue::Null);
                    }
                    text = Some((value, member.kind));
                    continue;
                }
                b.set(&key.to_string_lossy(), JsValue::parse(value).ok()?);
            }
            match text {
                Some((value, ValueKind::String)) if value.len() > LONG => {
                    b.set("text", JsValue::String(Default::default()));
                    long.push((items.len(), value.get(1..value.len() - 1)?));
                }
                Some((value, _)) => b.set("text", JsValue::parse(value).ok()?),
                None => {}
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

    /// Counts `line` (at `pos`) into the part.
    fn add(&mut self, line: &str, pos: usize) {
        let b = line.as_bytes();
        if b.first().is_some_and(|&c| c != b'\n') && self.first_non_nl == usize::MAX {
            self.first_non_nl = pos;
        }
        let body = line.trim_end_matches('\n');
        if !body.is_empty() {
            self.last_non_nl = pos + body.len();
        }
        let t = line.trim_end();
        if !t.is_empty() {
            self.last_non_ws = Some(pos + t.len());
        }
        let mut run = 0;
        for &c in b {
            if c == b'`' {
                run += 1;
                self.backticks = self.backticks.max(run);
            } else {
                run = 0;
            }
        }
    }
}

/// Where a text's fenced code blocks are (``` or ~~~, up to three spaces in, closed by a
/// fence of the same character at least as long; an unclosed block runs to the end), read
/// one line at a time.
struct Fences {
    parts: Vec<Part>,
    cur: Part,
    /// The open block's fence: its character and length.
    open: Option<(u8, usize)>,
}

impl Fences {
    fn new() -> Self {
        Fences {
            parts: Vec::new(),
            cur: Part::new(None, 0),
            open: None,
        }
    }

    /// The next line (with its `\n`, if any), at `pos`.
    fn line(&mut self, line: &str, pos: usize) {
        let end = pos + line.len();
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let fence = trimmed
            .as_bytes()
            .first()
            .copied()
            .filter(|c| *c == b'`' || *c == b'~');
        let run = fence.map_or(0, |c| trimmed.bytes().take_while(|b| *b == c).count());
        match (self.open, fence) {
            (None, Some(c)) if indent <= 3 && run >= 3 => {
                let info = trimmed[run..].trim();
                if !(c == b'`' && info.contains('`')) {
                    let next = Part::new(Some(info.to_string()), end);
                    self.end_part(pos, next);
                    self.open = Some((c, run));
                    return;
                }
            }
            (Some((c0, n0)), Some(c))
                if c == c0 && run >= n0 && indent <= 3 && trimmed[run..].trim().is_empty() =>
            {
                self.end_part(pos, Part::new(None, end));
                self.open = None;
                return;
            }
            _ => {}
        }
        self.cur.add(line, pos);
    }

    fn end_part(&mut self, at: usize, next: Part) {
        let mut done = std::mem::replace(&mut self.cur, next);
        done.range.end = at;
        self.parts.push(done);
    }

    /// The parts of the text of `len` bytes, cut at `keep` (where its trailing whitespace
    /// starts): what is past `keep` is whitespace and belongs to no part.
    fn finish(mut self, len: usize, keep: usize) -> Vec<Part> {
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
        self.parts
    }
}

/// The parts of `src` without its trailing whitespace (`fenced`: split at its fenced code
/// blocks; else one code part, the whole text untrimmed), and the length of what is kept.
pub(crate) fn layout(src: &Src<'_>, fenced: bool) -> io::Result<(Vec<Part>, usize)> {
    let mut fences = Fences::new();
    let mut whole = Part::new(Some(String::new()), 0);
    let mut len = 0;
    let mut keep = 0;
    src.each(true, |at, p| {
        let mut pos = 0;
        while pos < p.len() {
            let end = p[pos..].find('\n').map_or(p.len(), |i| pos + i + 1);
            let line = &p[pos..end];
            if fenced {
                fences.line(line, at + pos);
                let t = line.trim_end();
                if !t.is_empty() {
                    keep = at + pos + t.len();
                }
            } else {
                whole.add(line, at + pos);
            }
            pos = end;
        }
        len = at + p.len();
        Ok(())
    })?;
    if fenced {
        Ok((fences.finish(len, keep), keep))
    } else {
        whole.range = 0..len;
        whole.first_non_nl = whole.first_non_nl.min(len);
        Ok((vec![whole], len))
    }
}

/// How a range of the text is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Esc {
    /// As it is.
    Raw,
    /// [`super::md_text`], a line at a time.
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
        Esc::Md => super::write_pieces(&mut out, s, true, super::md_text),
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
/// text)` writes an [`Op::Whole`].
pub(crate) fn write_ops<W: Write>(
    out: &mut W,
    src: &Src<'_>,
    ops: Vec<Op>,
    mut whole: impl FnMut(&mut W, usize, &str) -> io::Result<()>,
) -> io::Result<()> {
    let reads = ops.iter().any(|o| !matches!(o, Op::Lit(_)));
    // The Markdown escape reads whole lines; the others one character at a time.
    let lines = ops.iter().any(|o| matches!(o, Op::Text(_, Esc::Md)));
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
    use super::super::{escape_html, md_text, write_pieces};
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

    /// The reference: `Writer::text` as it was.
    fn old_md(t: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for (lang, x) in old_fenced(t.trim_end()) {
            match lang {
                None => {
                    let x = x.trim_matches('\n').trim_end();
                    if !x.trim().is_empty() {
                        write_pieces(&mut out, x, true, md_text).expect("in memory");
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
        let atom = select(vec![
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
        ]);
        prop_oneof![
            9 => vec(atom, 0..40).prop_map(|v| v.concat().into_bytes()),
            1 => vec(select(vec![b"a".to_vec(), b"\xff".to_vec(), b"\xe2\x82".to_vec(),
                                 br"\n".to_vec(), b"`".to_vec()]), 0..20)
                .prop_map(|v| v.concat()),
        ]
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
            let b = render(&Src::Raw { raw: &raw, piece });
            prop_assert_eq!(&a, &b, "pieces of {} bytes: {:?}", piece, whole);
            prop_assert_eq!(&a[0], &old_md(&whole), "Markdown before: {:?}", whole);
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
