//! Human-readable output: the tree and the conversation.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::json::JsValue;
use std::io::Write;

/// How a character that would drive the terminal is shown instead: C0 controls as their
/// Unicode control pictures (ESC as `␛`, BEL as `␇`, CR as `␍`), DEL as `␡`, C1 controls
/// (U+0080-U+009F, which terminals also read as CSI, OSC, ...) and the invisible direction and
/// format characters that can make text read as something else (bidi overrides and isolates,
/// zero-width joiners aside) as `<U+XXXX>`. `None`: the character is printed as it is.
fn visible(c: char) -> Option<String> {
    match c {
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).map(String::from),
        '\x7f' => Some("␡".into()),
        '\u{80}'..='\u{9f}'
        | '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}' => Some(format!("<U+{:04X}>", c as u32)),
        _ => None,
    }
}

/// Text from a session (or a path, an id, an argument) made safe to print for a person:
/// newlines and tabs are kept, every other control or spoofing character is shown visibly
/// (see `visible`). `--json` output never goes through this: it stays exact.
pub fn sanitize_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            _ => match visible(c) {
                Some(v) => out.push_str(&v),
                None => out.push(c),
            },
        }
    }
    out
}

/// [`sanitize_text`] for one line: a newline is shown as `␤` too.
pub fn sanitize_line(s: &str) -> String {
    sanitize_text(&s.replace('\n', "␤"))
}

/// A writer for human-readable output: everything written through it is sanitized with
/// [`sanitize_text`] (bytes that are not UTF-8 become U+FFFD), so no print path can send a
/// session's escape sequences to the terminal. A UTF-8 sequence split between two writes is
/// kept until its end arrives.
pub struct Human<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Human<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Human<W> {
        Human {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Human<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        // Keep back at most 3 bytes of a UTF-8 sequence that may continue in the next write.
        let mut cut = self.pending.len();
        for back in 1..=3.min(self.pending.len()) {
            let b = self.pending[self.pending.len() - back];
            if b & 0xC0 == 0xC0 {
                let need = if b >= 0xF0 {
                    4
                } else if b >= 0xE0 {
                    3
                } else {
                    2
                };
                if back < need {
                    cut = self.pending.len() - back;
                }
                break;
            }
            if b & 0xC0 != 0x80 {
                break;
            }
        }
        let ready: Vec<u8> = self.pending.drain(..cut).collect();
        let text = String::from_utf8_lossy(&ready);
        self.inner.write_all(sanitize_text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let text = String::from_utf8_lossy(&rest);
            self.inner.write_all(sanitize_text(&text).as_bytes())?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Human<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A byte count for a person: `10B`, `1.5K`, `12M` (powers of 1024).
pub fn human_size(n: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n}B")
    } else if v < 10.0 {
        format!("{v:.1}{}", units[u])
    } else {
        format!("{v:.0}{}", units[u])
    }
}

/// One line of text, control characters folded to spaces, cut to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let mut one = OneLine::new(max);
    one.push(s);
    one.finish()
}

/// [`one_line`] of a text given in pieces (a long text decoded a piece at a time): `push`
/// each piece in order until it returns `false` (enough read), then `finish`.
pub struct OneLine {
    out: Vec<char>,
    space: bool,
    max: usize,
}

impl OneLine {
    /// An empty line of at most `max` characters.
    pub fn new(max: usize) -> Self {
        OneLine {
            out: Vec::with_capacity(max.min(4096) + 1),
            space: false,
            max,
        }
    }

    /// Reads the next piece of the text; `false` once the line is known to be cut (the
    /// rest of the text changes nothing).
    pub fn push(&mut self, s: &str) -> bool {
        // One pass: runs of whitespace and control characters become one space, the ends
        // trimmed; the reading stops one character past `max` (enough to know it was cut).
        for c in s.chars() {
            if self.out.len() > self.max {
                return false;
            }
            if c.is_whitespace() || c.is_control() || visible(c).is_some() {
                self.space = !self.out.is_empty();
                continue;
            }
            if self.space {
                self.out.push(' ');
                self.space = false;
            }
            self.out.push(c);
        }
        self.out.len() <= self.max
    }

    /// The line.
    pub fn finish(self) -> String {
        if self.out.len() > self.max {
            let mut cut: String = self.out[..self.max.saturating_sub(1)].iter().collect();
            cut.push('…');
            return cut;
        }
        self.out.into_iter().collect()
    }
}

/// The text of message content: a string, or the text blocks joined (thinking, tool calls
/// and images as `[thinking] …`, `[tool call NAME] ARGS`, `[image]`): [`content_text_with`]
/// with [`TextOpts::default`].
pub fn content_text(v: Option<&JsValue>) -> String {
    content_text_with(v, &TextOpts::default())
}

/// How [`content_text_with`] shows what is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOpts {
    /// Thinking in full (`[thinking] TEXT`); otherwise folded as `[thinking: N chars]`.
    pub thinking: bool,
    /// A tool call's arguments cut to one line of this many characters (`None`: the JSON
    /// whole).
    pub tool_args: Option<usize>,
    /// Images as `[image: MIME, N bytes]` (the decoded size); otherwise `[image]`.
    pub image_sizes: bool,
}

impl Default for TextOpts {
    /// Everything in full, images as `[image]` (what `arbor show` and the export print).
    fn default() -> Self {
        TextOpts {
            thinking: true,
            tool_args: None,
            image_sizes: false,
        }
    }
}

/// The decoded size of base64 `data` (padding aside).
fn base64_size(data: &str) -> usize {
    let body = data.trim_end_matches('=');
    body.len() / 4 * 3 + (body.len() % 4).saturating_sub(1)
}

/// A string member's text (`""` for anything else).
fn str_of(v: Option<&JsValue>) -> std::borrow::Cow<'_, str> {
    v.and_then(|t| t.as_str_lossy()).unwrap_or_default()
}

/// An image block in place of its picture: `[image: MIME, N bytes]` (N the decoded size),
/// or [`crate::unresolved_image`]'s note when its data is still an omp blob reference.
pub fn image_placeholder(block: &JsValue) -> String {
    let data = str_of(block.get("data"));
    match crate::unresolved_image(&data) {
        Some(note) => format!("[{note}]"),
        None => format!(
            "[image: {}, {} bytes]",
            one_line(&str_of(block.get("mimeType")), 64),
            base64_size(&data)
        ),
    }
}

/// The text of message content, a string or its blocks joined by newlines, non-text blocks
/// shown as `opts` says. An image whose data is still an omp blob reference gets
/// [`crate::unresolved_image`]'s note.
///
/// ```
/// use arbor_core::json::JsValue;
/// use arbor_view::{content_text_with, TextOpts};
/// let v = JsValue::parse(br#"[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hi"},{"type":"image","data":"AAAA","mimeType":"image/png"}]"#).unwrap();
/// let opts = TextOpts { thinking: false, tool_args: Some(100), image_sizes: true };
/// assert_eq!(content_text_with(Some(&v), &opts), "[thinking: 3 chars]\nhi\n[image: image/png, 3 bytes]");
/// ```
pub fn content_text_with(v: Option<&JsValue>, opts: &TextOpts) -> String {
    match v {
        Some(JsValue::String(s)) => s.to_string_lossy().into_owned(),
        Some(JsValue::Array(blocks)) => {
            let mut parts = Vec::new();
            for b in blocks {
                match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                    Some("text") => parts.push(str_of(b.get("text")).into_owned()),
                    Some("thinking") => {
                        let t = str_of(b.get("thinking"));
                        parts.push(if opts.thinking {
                            format!("[thinking] {t}")
                        } else {
                            format!("[thinking: {} chars]", t.chars().count())
                        })
                    }
                    Some("toolCall") => {
                        let args = b
                            .get("arguments")
                            .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                            .unwrap_or_default();
                        let args = match opts.tool_args {
                            Some(max) => one_line(&args, max),
                            None => args,
                        };
                        parts.push(format!("[tool call {}] {args}", str_of(b.get("name"))))
                    }
                    Some("image") if opts.image_sizes => parts.push(image_placeholder(b)),
                    Some("image") => {
                        let data = str_of(b.get("data"));
                        parts.push(match crate::unresolved_image(&data) {
                            Some(note) => format!("[{note}]"),
                            None => "[image]".to_string(),
                        })
                    }
                    _ => {}
                }
            }
            parts.join("\n")
        }
        _ => String::new(),
    }
}

/// A short description of an entry for the tree view.
pub fn describe(doc: &SessionDoc, i: usize) -> String {
    describe_with(doc, i, None)
}

/// [`describe`], a message's `content` read from `content` (raw JSON and its kind) instead
/// of its line when given (an export's redacted copy of a content left in its line).
pub fn describe_with(
    doc: &SessionDoc,
    i: usize,
    content: Option<(&[u8], arbor_core::json::ValueKind)>,
) -> String {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let s = |k: &str| {
        e.fields
            .str(line, k)
            .map(|v| v.into_owned())
            .unwrap_or_default()
    };
    match &e.etype {
        EntryType::Message => {
            let role = e.role.as_ref().map(Role::name).unwrap_or("?").to_string();
            // From the raw bytes: a huge tool output costs a scan, not a parse.
            let text = content
                .or_else(|| e.message.as_ref().and_then(|m| m.get(line, "content")))
                .map(|(raw, kind)| crate::snippet::content(raw, kind, 200))
                .unwrap_or_default();
            let text = if text.is_empty() {
                e.message_str(line, "command")
                    .map(|c| format!("$ {c}"))
                    .unwrap_or_default()
            } else {
                text
            };
            let mut out = format!("{role}: {}", one_line(&text, 200))
                .trim_end()
                .to_string();
            if e.role == Some(Role::System) {
                // What else a system message changes: sections and tools.
                let m = e.fields.value(line, "message").unwrap_or(JsValue::Null);
                let names = |k: &str| match m.get(k) {
                    Some(JsValue::Array(t)) => t
                        .iter()
                        .filter_map(|t| t.get("name").and_then(|n| n.as_str_lossy()))
                        .map(|n| n.into_owned())
                        .collect::<Vec<_>>(),
                    _ => Vec::new(),
                };
                if let Some(JsValue::Object(sec)) = m.get("sections") {
                    let list: Vec<String> = sec
                        .iter()
                        .map(|(k, v)| {
                            let sign = if *v == JsValue::Null { "-" } else { "" };
                            format!("{sign}{}", k.to_string_lossy())
                        })
                        .collect();
                    out.push_str(&format!(" [sections {}]", list.join(", ")));
                }
                for (k, sign) in [("toolsAdded", "+"), ("toolsRemoved", "-")] {
                    let n = names(k);
                    if !n.is_empty() {
                        out.push_str(&format!(" [tools {sign}{}]", n.join(&format!(", {sign}"))));
                    }
                }
            }
            out
        }
        EntryType::ContextEdit => {
            let target = s("targetId");
            match e.fields.get(line, "replacement") {
                Some((_, arbor_core::json::ValueKind::Null)) => {
                    format!("context edit: removes {target} from the context")
                }
                _ => {
                    let content = e
                        .fields
                        .value(line, "replacement")
                        .and_then(|r| r.get("content").cloned());
                    format!(
                        "context edit: {target} now reads {:?}",
                        one_line(&content_text(content.as_ref()), 50)
                    )
                }
            }
        }
        EntryType::Usage => {
            let u = e.fields.value(line, "usage").unwrap_or(JsValue::Null);
            let tokens = |k: &str| match u.get(k) {
                Some(v @ JsValue::Number(_)) => String::from_utf8_lossy(&v.to_json()).into_owned(),
                _ => "?".to_string(),
            };
            format!(
                "usage {}: {}/{} {} in, {} out",
                s("kind"),
                s("provider"),
                s("model"),
                tokens("input"),
                tokens("output")
            )
        }
        EntryType::ThinkingLevelChange => format!("thinking level → {}", s("thinkingLevel")),
        EntryType::ModelChange => {
            let m = s("model");
            if m.is_empty() {
                format!("model → {}/{}", s("provider"), s("modelId"))
            } else {
                format!("model → {m}")
            }
        }
        EntryType::Compaction => format!("compaction: {}", one_line(&s("summary"), 60)),
        EntryType::BranchSummary => format!("branch summary: {}", one_line(&s("summary"), 60)),
        EntryType::Custom => format!("custom {}", s("customType")),
        EntryType::CustomMessage => format!(
            "custom message {}: {}",
            s("customType"),
            one_line(&content_text(e.fields.value(line, "content").as_ref()), 50)
        ),
        EntryType::Label => {
            // pi keeps any truthy label (`42`, `["x"]`), read as JS `String()`.
            let label = e
                .fields
                .value(line, "label")
                .filter(|v| v.is_truthy())
                .map(|v| {
                    arbor_core::js::to_js_str(Some(&v))
                        .to_string_lossy()
                        .into_owned()
                })
                .unwrap_or_default();
            format!("label {} → {}", s("targetId"), label)
        }
        EntryType::SessionInfo => format!("name: {}", s("name")),
        other => other.name().to_string(),
    }
}

#[cfg(test)]
mod sanitize_tests {
    use super::*;

    const HOSTILE: &str = "a\x1b]0;pwned\x07b\x1b[2Jc\u{9b}31md\re\u{202e}f\x08g\x7fh\ti\nj";

    fn assert_inert(s: &str) {
        for c in s.chars() {
            assert!(
                c == '\n' || c == '\t' || (!c.is_control() && visible(c).is_none()),
                "{c:?} left in {s:?}"
            );
        }
    }

    #[test]
    fn sizes_for_a_person() {
        assert_eq!(human_size(1536), "1.5K");
        assert_eq!(human_size(10), "10B");
    }

    #[test]
    fn controls_are_shown_not_sent() {
        let t = sanitize_text(HOSTILE);
        assert_eq!(t, "a␛]0;pwned␇b␛[2Jc<U+009B>31md␍e<U+202E>f␈g␡h\ti\nj");
        assert_inert(&t);
        assert!(!sanitize_line(HOSTILE).contains('\n'));
        assert_inert(&one_line(HOSTILE, 100));
    }

    #[test]
    fn the_human_writer_sanitizes_across_split_writes() {
        let bytes = HOSTILE.as_bytes();
        for split in 0..bytes.len() {
            let mut out = Vec::new();
            {
                let mut h = Human::new(&mut out);
                h.write_all(&bytes[..split]).expect("write");
                h.write_all(&bytes[split..]).expect("write");
            }
            assert_eq!(
                String::from_utf8(out).expect("utf8"),
                sanitize_text(HOSTILE)
            );
        }
        let mut out = Vec::new();
        {
            let mut h = Human::new(&mut out);
            h.write_all(b"x\xff\xc2").expect("write");
        }
        assert_eq!(String::from_utf8(out).expect("utf8"), "x\u{fffd}\u{fffd}");
    }
}
