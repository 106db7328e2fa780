//! pi's `SessionInfo`, computed one line at a time.
//!
//! This is `buildSessionInfo` and `getSessionModifiedDate` of pi 0.73
//! (`@mariozechner/pi-coding-agent`, `core/session-manager.js`) as a state machine, so that a
//! listing can stream a file, and an index can store the state and continue from the byte
//! where it stopped. The rules, all pi's:
//!
//! * the file's content is trimmed (a BOM goes), split on `\n`; blank lines and lines that do
//!   not parse are skipped; the first value that parses must be an object with
//!   `type: "session"`, or the file is hidden;
//! * every `type: "message"` entry counts (all roles, all branches); `session_info` entries set
//!   the name (`name?.trim() || undefined`: the last one wins, a blank or missing name clears);
//! * user and assistant messages with a `content` key give their text (the string, or the
//!   `text` blocks joined with spaces): the first user text is `firstMessage`, all of them
//!   joined with spaces are `allMessagesText`; their `message.timestamp` (a number), else the
//!   entry's ISO `timestamp`, is the last activity;
//! * where pi's code would throw (a `message` entry without an object or with `null`, content
//!   that is neither a string nor an array, a `null` block, a non-string name, a `null` line)
//!   the file is hidden, as pi's `catch` hides it.
//!
//! One deliberate difference: a first line that is omp's 256-byte title slot is skipped (pi
//! hides such files; arbor lists omp sessions with pi's fields).
use crate::discover::{extract_text_of_raw, SessionInfo};
use arbor_core::entry::{Entry, EntryType, Fields, Role};
use arbor_core::json::{JsStr, ValueKind};
use std::path::Path;

/// How far the computation has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// No value has parsed yet; the first one must be the header.
    #[default]
    AwaitHeader,
    /// The header was read: pi lists the file.
    Listed,
    /// pi hides the file (no header first, or its code would throw on a later line).
    Hidden,
}

impl Phase {
    /// A small integer for storage.
    pub fn code(self) -> i64 {
        match self {
            Phase::AwaitHeader => 0,
            Phase::Listed => 1,
            Phase::Hidden => 2,
        }
    }
    /// The phase of [`Phase::code`] (unknown codes are `Hidden`).
    pub fn from_code(c: i64) -> Phase {
        match c {
            0 => Phase::AwaitHeader,
            1 => Phase::Listed,
            _ => Phase::Hidden,
        }
    }
}

/// The state after some prefix of a file's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InfoState {
    /// Where the computation stands.
    pub phase: Phase,
    /// Header `id` as canonical JSON (`None`: absent, omitted from JSON as pi's `undefined`).
    pub id: Option<String>,
    /// Header `cwd` when a string, else `""`.
    pub cwd: String,
    /// Header `parentSession` as canonical JSON, when present.
    pub parent_session_path: Option<String>,
    /// `new Date(header.timestamp)` in ms (`None`: Invalid Date).
    pub created_ms: Option<f64>,
    /// The header timestamp when it is a string that parses (the `modified` fallback).
    pub header_ts_ms: Option<f64>,
    /// The current name.
    pub name: Option<String>,
    /// `message` entries so far.
    pub message_count: u64,
    /// The first non-empty user text (WTF-8: lone surrogates kept).
    pub first_message: Option<JsStr>,
    /// Last user/assistant activity (ms), pi's running `Math.max`.
    pub last_activity: Option<f64>,
}

/// Which role a text pushed to `allMessagesText` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRole {
    /// A user message.
    User,
    /// An assistant message.
    Assistant,
}

/// A text pi appends to `allMessagesText` (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedText {
    /// The message's role.
    pub role: TextRole,
    /// `extractTextContent(message)` (WTF-8: lone surrogates kept).
    pub text: JsStr,
}

fn canonical(raw: &[u8]) -> String {
    let mut out = Vec::new();
    if arbor_core::json::canonicalize(raw, &mut out).is_err() {
        out = raw.to_vec();
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether pi's `extractTextContent` throws on a message's `content` (valid JSON, as
/// `raw`): anything but a string or an array, or an array holding `null` (`null.type`).
/// Looks only at the array's top level, skipping strings with `memchr`.
fn content_throws(raw: &[u8], kind: ValueKind) -> bool {
    match kind {
        ValueKind::String => false,
        ValueKind::Array => array_has_null(raw),
        _ => true,
    }
}

/// Whether a valid JSON array has a `null` element.
fn array_has_null(raw: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut expect_value = false;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        match b {
            b'"' => {
                // Skip to the closing quote (escapes skip the next byte).
                let mut j = i + 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', raw.get(j..).unwrap_or_default()) {
                        Some(k) if raw[j + k] == b'\\' => j += k + 2,
                        Some(k) => {
                            j += k + 1;
                            break;
                        }
                        None => return false,
                    }
                }
                i = j;
                expect_value = false;
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                expect_value = depth == 1 && b == b'[';
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                expect_value = false;
            }
            b',' => expect_value = depth == 1,
            b'n' if depth == 1 && expect_value => return true,
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => expect_value = false,
        }
        i += 1;
    }
    false
}

impl InfoState {
    /// Feeds a line that is valid JSON but not an object (`null`, a number, an array...).
    pub fn feed_non_object(&mut self, is_null: bool) {
        match self.phase {
            // `entries[0].type` of a non-object is not "session" (`null.type` throws).
            Phase::AwaitHeader => self.phase = Phase::Hidden,
            // `null.type` throws in the loop; other values have no `type`.
            Phase::Listed if is_null => self.phase = Phase::Hidden,
            _ => {}
        }
    }

    /// Feeds one line that parsed as a JSON object (`line` holds its bytes). Returns the text
    /// pi would append to `allMessagesText`.
    pub fn feed_entry(&mut self, line: &[u8], e: &Entry) -> Option<PushedText> {
        self.feed_entry_with(line, e, true)
    }

    /// [`InfoState::feed_entry`]; without `texts`, message texts are decoded only while the
    /// first user message is not known (the rest is only checked for what would make pi
    /// throw), and nothing is returned: the listing fields are the same, faster.
    pub fn feed_entry_with(&mut self, line: &[u8], e: &Entry, texts: bool) -> Option<PushedText> {
        match self.phase {
            Phase::Hidden => return None,
            Phase::AwaitHeader => {
                if e.line_no == 1 && matches!(&e.etype, EntryType::Other(t) if &**t == "title") {
                    return None; // omp's title slot
                }
                if e.etype != EntryType::Session {
                    self.phase = Phase::Hidden;
                    return None;
                }
                self.feed_header(line, &e.fields);
                return None;
            }
            Phase::Listed => {}
        }
        match e.etype {
            EntryType::SessionInfo => {
                match e.fields.get(line, "name") {
                    None | Some((_, ValueKind::Null)) => self.name = None,
                    Some((raw, ValueKind::String)) => {
                        let n =
                            arbor_core::entry::raw_str(raw, ValueKind::String).unwrap_or_default();
                        let t = arbor_core::js::trim(&n);
                        self.name = (!t.is_empty()).then(|| t.to_string());
                    }
                    Some(_) => {
                        self.phase = Phase::Hidden; // `name.trim` is not a function
                        return None;
                    }
                }
                None
            }
            EntryType::Message => self.feed_message(line, e, texts),
            _ => None,
        }
    }

    /// Feeds the header line (a `type: "session"` object): the file is listed from here on.
    pub fn feed_header(&mut self, line: &[u8], f: &Fields) {
        self.phase = Phase::Listed;
        self.id = f.get(line, "id").map(|(raw, _)| canonical(raw));
        self.cwd = f
            .str(line, "cwd")
            .map(|s| s.into_owned())
            .unwrap_or_default();
        self.parent_session_path = arbor_core::header::fork_link_key(line, f)
            .and_then(|k| f.get(line, k))
            .map(|(raw, _)| canonical(raw));
        self.created_ms =
            arbor_core::js::valid_time(arbor_core::js::date_ms_raw(f.get(line, "timestamp")));
        self.header_ts_ms = f
            .str(line, "timestamp")
            .and_then(|t| arbor_core::time::parse_iso_ms(&t));
    }

    fn feed_message(&mut self, line: &[u8], e: &Entry, texts: bool) -> Option<PushedText> {
        self.message_count += 1;
        let msg = match &e.message {
            Some(m) => m,
            None => match e.fields.get(line, "message") {
                None | Some((_, ValueKind::Null)) => {
                    self.phase = Phase::Hidden; // `message.role` of undefined / null throws
                    return None;
                }
                _ => return None, // a primitive or an array: no `role`
            },
        };
        let role = match e.role {
            Some(Role::User) => TextRole::User,
            Some(Role::Assistant) => TextRole::Assistant,
            _ => return None,
        };
        if !msg.has(line, "content") {
            return None;
        }
        let need_text = texts || (role == TextRole::User && self.first_message.is_none());
        let text = match msg.get(line, "content") {
            Some((raw, kind)) if need_text => extract_text_of_raw(raw, kind),
            Some((raw, kind)) => (!content_throws(raw, kind)).then(|| JsStr(Vec::new())),
            None => None,
        };
        let Some(text) = text else {
            self.phase = Phase::Hidden; // `content.filter` is not a function, or a null block
            return None;
        };
        let t = match msg.get(line, "timestamp") {
            Some((raw, ValueKind::Number)) => std::str::from_utf8(raw)
                .ok()
                .and_then(|s| s.parse::<f64>().ok()),
            // pi 1.5: `new Date(entry.timestamp).getTime()` whatever its type (0.73.1 read
            // only a string).
            _ => Some(e.date_ms(line)).filter(|t| !t.is_nan()),
        };
        if let Some(t) = t {
            self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(t));
        }
        if text.0.is_empty() || !need_text {
            return None;
        }
        if role == TextRole::User && self.first_message.is_none() {
            self.first_message = Some(text.clone());
        }
        texts.then_some(PushedText { role, text })
    }

    /// Parses `line` (one physical line without its `\n`, number `line_no`, 1-based) and feeds
    /// it. Blank and malformed lines are skipped, as pi skips them.
    pub fn feed_line(&mut self, line: &[u8], line_no: usize) -> Option<PushedText> {
        if self.phase == Phase::Hidden {
            return None;
        }
        match Entry::parse(line, arbor_core::LineRef::Owned(0), line_no) {
            Ok(e) => self.feed_entry(line, &e),
            Err(arbor_core::entry::LineError::NotObject) => {
                self.feed_non_object(line.trim_ascii() == b"null");
                None
            }
            Err(_) => None,
        }
    }

    /// `modified` in ms: the last activity when positive, else the header time, else the
    /// file's mtime. `None` is an Invalid Date.
    pub fn modified_ms(&self, mtime_ms: f64) -> Option<f64> {
        match self.last_activity {
            Some(t) if t > 0.0 => arbor_core::js::valid_time(t),
            _ => Some(self.header_ts_ms.unwrap_or(mtime_ms)),
        }
    }

    /// The `SessionInfo` pi returns, or `None` when pi hides the file.
    pub fn finish(
        &self,
        path: &Path,
        mtime_ms: f64,
        all_messages_text: JsStr,
    ) -> Option<SessionInfo> {
        if self.phase != Phase::Listed {
            return None;
        }
        Some(SessionInfo {
            path: path.to_path_buf(),
            id: self.id.clone(),
            cwd: self.cwd.clone(),
            name: self.name.clone(),
            parent_session_path: self.parent_session_path.clone(),
            created_ms: self.created_ms,
            modified_ms: self.modified_ms(mtime_ms).unwrap_or(f64::NAN),
            message_count: self.message_count as usize,
            first_message: self
                .first_message
                .clone()
                .unwrap_or_else(|| "(no messages)".into()),
            all_messages_text,
        })
    }
}

/// Reads `path` line by line (bounded memory) and computes pi's `SessionInfo`; `Ok(None)`
/// where pi hides the file.
pub fn session_info_streaming(path: &Path, mtime_ms: f64) -> std::io::Result<Option<SessionInfo>> {
    let mut s = crate::stream::LineStream::open(path, 0, None)?;
    let mut st = InfoState::default();
    let mut all: Vec<u8> = Vec::new();
    let mut n = 0;
    while let Some(l) = s.next_line()? {
        n += 1;
        let mut bytes = l.bytes;
        if n == 1 {
            bytes = bytes
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(bytes);
        }
        if let Some(p) = st.feed_line(bytes, n) {
            if !all.is_empty() {
                all.push(b' ');
            }
            all.extend_from_slice(&p.text.0);
        }
        if st.phase == Phase::Hidden {
            return Ok(None);
        }
    }
    Ok(st.finish(path, mtime_ms, JsStr(all)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(text: &str) -> Option<SessionInfo> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, text).unwrap();
        session_info_streaming(&p, 5.0).unwrap()
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn pi_rules() {
        let i = info(&format!("{H}\n")).unwrap();
        assert_eq!(
            (i.message_count, i.first_message.as_str(), i.modified_ms),
            (0, Some("(no messages)"), 1735689600000.0)
        );
        // junk first line, then a header: listed
        assert!(info(&format!("garbage\n{H}\n")).is_some());
        // a non-object first value hides
        assert!(info(&format!("42\n{H}\n")).is_none());
        // a null line anywhere hides (pi's `null.type` throws)
        assert!(info(&format!("{H}\nnull\n")).is_none());
        assert!(info(&format!("{H}\n[1]\n")).is_some());
        // message without `message`, or null: hidden; primitive: counted, skipped
        assert!(info(&format!("{H}\n{{\"type\":\"message\"}}\n")).is_none());
        assert!(info(&format!("{H}\n{{\"type\":\"message\",\"message\":null}}\n")).is_none());
        assert_eq!(
            info(&format!("{H}\n{{\"type\":\"message\",\"message\":5}}\n"))
                .unwrap()
                .message_count,
            1
        );
        // content neither string nor array: hidden
        assert!(info(&format!(
            "{H}\n{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":{{}}}}}}\n"
        ))
        .is_none());
        // names: last wins, blank clears, non-string hides
        let n = |names: &[&str]| {
            let mut s = format!("{H}\n");
            for v in names {
                s.push_str(&format!("{{\"type\":\"session_info\",\"name\":{v}}}\n"));
            }
            info(&s).map(|i| i.name)
        };
        assert_eq!(n(&["\"  A \""]), Some(Some("A".into())));
        assert_eq!(n(&["\"A\"", "\"   \""]), Some(None));
        assert_eq!(n(&["\"A\"", "null"]), Some(None));
        assert_eq!(n(&["\"A\"", "5"]), None);
        // texts, first user message, activity from message.timestamp then entry timestamp
        let s = format!(
            "{H}\n{}\n{}\n{}\n",
            r#"{"type":"message","timestamp":"2025-01-02T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a1"},{"type":"thinking","thinking":"t"},{"type":"text","text":"a2"}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":"u1","timestamp":1000}}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":"tool","timestamp":9999999999999}}"#
        );
        let i = info(&s).unwrap();
        assert_eq!(i.all_messages_text, JsStr::from("a1 a2 u1"));
        assert_eq!(i.first_message, JsStr::from("u1"));
        assert_eq!(i.modified_ms, 1735776000000.0);
        assert_eq!(i.message_count, 3);
        // created: Invalid Date for garbage, a number is a time value
        let i = info(r#"{"type":"session","id":"x","timestamp":"garbage","cwd":42}"#).unwrap();
        assert_eq!(
            (i.created_ms, i.modified_ms, i.cwd.as_str()),
            (None, 5.0, "")
        );
        let i = info(r#"{"type":"session","timestamp":12.7}"#).unwrap();
        assert_eq!((i.created_ms, i.id), (Some(12.0), None));
        // BOM and CRLF
        assert!(info(&format!("\u{feff}{H}\r\n")).is_some());
        for (raw, null) in [
            ("[]", false),
            ("[null]", true),
            ("[ {\"a\":null}, \"null\" ,[null], 1 , null ]", true),
            ("[{\"t\":\"x\\\"]null\"},2]", false),
            ("[\"a\",\n null]", true),
        ] {
            assert_eq!(array_has_null(raw.as_bytes()), null, "{raw}");
        }
    }
}
