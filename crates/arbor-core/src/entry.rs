//! The entry model: one JSONL line's envelope, with the payload left as raw bytes.
//!
//! Loading parses only what tree and context work need (`type`, `id`, `parentId`,
//! `timestamp`, the message role) and remembers where every top-level member sits in the
//! line, so any other field can be read later without keeping a DOM (docs/design-notes.md, decision 1).
use crate::json::{self, JsStr, JsValue, Member, ValueKind};
use std::borrow::Cow;
use std::ops::Range;

/// Every entry type arbor knows by name; anything else is kept as [`EntryType::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntryType {
    /// `session`: the header (or a stray header-typed line after it).
    Session,
    /// `message`: an agent message (user, assistant, toolResult, bashExecution, custom, ...).
    Message,
    /// `thinking_level_change`
    ThinkingLevelChange,
    /// `model_change` (pi: `provider`/`modelId`; omp: `model`/`role`)
    ModelChange,
    /// `compaction`
    Compaction,
    /// `branch_summary`
    BranchSummary,
    /// `custom`: extension state, never in the context.
    Custom,
    /// `custom_message`: extension message, part of the context.
    CustomMessage,
    /// `label`
    Label,
    /// `session_info` (pi's session name)
    SessionInfo,
    /// `ttsr_injection` (omp)
    TtsrInjection,
    /// `session_init` (omp)
    SessionInit,
    /// `mode_change` (omp)
    ModeChange,
    /// `service_tier_change` (omp)
    ServiceTierChange,
    /// `title_change` (omp 18)
    TitleChange,
    /// `model_usage` (omp 18)
    ModelUsage,
    /// `credential_pin` (omp 18)
    CredentialPin,
    /// `reset_boundary` (omp 18)
    ResetBoundary,
    /// `context_edit` (pi 1.5): a branch-local replacement (or removal, `null`) of an earlier
    /// entry's model-visible content.
    ContextEdit,
    /// `usage` (pi 1.5): model-attributed token usage outside the context.
    Usage,
    /// Any other type name, kept and written back unchanged.
    Other(Box<str>),
}

impl EntryType {
    /// Maps a `type` string to its variant.
    pub fn from_name(s: &str) -> EntryType {
        match s {
            "session" => EntryType::Session,
            "message" => EntryType::Message,
            "thinking_level_change" => EntryType::ThinkingLevelChange,
            "model_change" => EntryType::ModelChange,
            "compaction" => EntryType::Compaction,
            "branch_summary" => EntryType::BranchSummary,
            "custom" => EntryType::Custom,
            "custom_message" => EntryType::CustomMessage,
            "label" => EntryType::Label,
            "session_info" => EntryType::SessionInfo,
            "ttsr_injection" => EntryType::TtsrInjection,
            "session_init" => EntryType::SessionInit,
            "mode_change" => EntryType::ModeChange,
            "service_tier_change" => EntryType::ServiceTierChange,
            "title_change" => EntryType::TitleChange,
            "model_usage" => EntryType::ModelUsage,
            "credential_pin" => EntryType::CredentialPin,
            "reset_boundary" => EntryType::ResetBoundary,
            "context_edit" => EntryType::ContextEdit,
            "usage" => EntryType::Usage,
            other => EntryType::Other(other.into()),
        }
    }

    /// The `type` string.
    pub fn name(&self) -> &str {
        match self {
            EntryType::Session => "session",
            EntryType::Message => "message",
            EntryType::ThinkingLevelChange => "thinking_level_change",
            EntryType::ModelChange => "model_change",
            EntryType::Compaction => "compaction",
            EntryType::BranchSummary => "branch_summary",
            EntryType::Custom => "custom",
            EntryType::CustomMessage => "custom_message",
            EntryType::Label => "label",
            EntryType::SessionInfo => "session_info",
            EntryType::TtsrInjection => "ttsr_injection",
            EntryType::SessionInit => "session_init",
            EntryType::ModeChange => "mode_change",
            EntryType::ServiceTierChange => "service_tier_change",
            EntryType::TitleChange => "title_change",
            EntryType::ModelUsage => "model_usage",
            EntryType::CredentialPin => "credential_pin",
            EntryType::ResetBoundary => "reset_boundary",
            EntryType::ContextEdit => "context_edit",
            EntryType::Usage => "usage",
            EntryType::Other(s) => s,
        }
    }
}

/// The `role` of a `message` entry's payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
    /// `toolResult`
    ToolResult,
    /// `bashExecution` (pi `!cmd`)
    BashExecution,
    /// `custom` (v3) — extension message stored as a message
    Custom,
    /// `hookMessage` (v2; migrated to `custom`)
    HookMessage,
    /// `system` (pi 1.5): the system prompt and tool set, carried in the transcript.
    System,
    /// Any other role string (`developer`, `pythonExecution`, `fileMention`, ...).
    Other(Box<str>),
}

impl Role {
    /// Maps a role string to its variant.
    pub fn from_name(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "bashExecution" => Role::BashExecution,
            "custom" => Role::Custom,
            "hookMessage" => Role::HookMessage,
            "system" => Role::System,
            other => Role::Other(other.into()),
        }
    }
    /// The role string.
    pub fn name(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
            Role::HookMessage => "hookMessage",
            Role::System => "system",
            Role::Other(s) => s,
        }
    }
}

/// A parsed JSON object line: its members as byte ranges relative to the line.
#[derive(Debug, Clone, Default)]
pub struct Fields {
    /// Top-level members, in source order.
    pub members: Box<[Member]>,
}

impl Fields {
    /// The member named `key` (the last one when the key is duplicated, as `JSON.parse`).
    pub fn get<'l>(&self, line: &'l [u8], key: &str) -> Option<(&'l [u8], ValueKind)> {
        let m = self
            .members
            .iter()
            .rev()
            .find(|m| key_is(line, &m.key, key))?;
        Some((line.get(m.value.clone())?, m.kind))
    }
    /// The byte range of member `key`'s value (last duplicate).
    pub fn range(&self, line: &[u8], key: &str) -> Option<Range<usize>> {
        self.members
            .iter()
            .rev()
            .find(|m| key_is(line, &m.key, key))
            .map(|m| m.value.clone())
    }
    /// Whether the object has member `key` (a member whose value is `null` counts).
    pub fn has(&self, line: &[u8], key: &str) -> bool {
        self.members.iter().any(|m| key_is(line, &m.key, key))
    }
    /// Member `key` when it is a string, decoded.
    pub fn str<'l>(&self, line: &'l [u8], key: &str) -> Option<Cow<'l, str>> {
        let (raw, kind) = self.get(line, key)?;
        raw_str(raw, kind)
    }
    /// Member `key` when it is a number.
    pub fn num(&self, line: &[u8], key: &str) -> Option<f64> {
        let (raw, kind) = self.get(line, key)?;
        if kind != ValueKind::Number {
            return None;
        }
        std::str::from_utf8(raw).ok()?.parse().ok()
    }
    /// Member `key` parsed into a DOM (for small values only).
    pub fn value(&self, line: &[u8], key: &str) -> Option<JsValue> {
        let (raw, _) = self.get(line, key)?;
        JsValue::parse(raw).ok()
    }
}

/// Whether the raw key bytes `line[key]` spell `want` (keys with escapes are decoded first).
pub fn key_is(line: &[u8], key: &Range<usize>, want: &str) -> bool {
    let Some(raw) = line.get(key.clone()) else {
        return false;
    };
    if !raw.contains(&b'\\') {
        return raw == want.as_bytes();
    }
    json::decode_string(raw).is_ok_and(|s| s.0 == want.as_bytes())
}

/// Decodes a raw string value (with quotes) to text; `None` for a non-string value.
/// Lone surrogates become U+FFFD in the returned text.
pub fn raw_str(raw: &[u8], kind: ValueKind) -> Option<Cow<'_, str>> {
    if kind != ValueKind::String || raw.len() < 2 {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains(&b'\\') {
        if let Ok(s) = std::str::from_utf8(inner) {
            return Some(Cow::Borrowed(s));
        }
    }
    let js: JsStr = json::decode_string(inner).ok()?;
    Some(Cow::Owned(js.to_string_lossy().into_owned()))
}

/// A member's value as a key of a JavaScript `Map` and an operand of `===`, the way pi links
/// entries (`byId`, `getTree`'s `nodeMap`, context edits by `targetId`, `firstKeptEntryId`):
/// `5` is not `"5"`, an id with a lone surrogate is not the one with U+FFFD, an absent `id`
/// is `undefined` (every non-object line has it too).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// Absent (`undefined`).
    Undefined,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number (SameValueZero: `-0` is `0`), by its bits.
    Num(u64),
    /// A string, exactly (WTF-8: lone surrogates kept; invalid UTF-8 bytes read as U+FFFD as
    /// node's decoder reads them).
    Str(Box<[u8]>),
    /// An object or array: a key by identity, `===` to nothing another line holds.
    Object,
}

impl IdKey {
    /// The key of a raw member (`None`: absent).
    pub fn from_raw(raw: Option<(&[u8], ValueKind)>) -> IdKey {
        match raw {
            None => IdKey::Undefined,
            Some((_, ValueKind::Null)) => IdKey::Null,
            Some((r, ValueKind::Bool)) => IdKey::Bool(r == b"true"),
            Some((r, ValueKind::Number)) => {
                let n = crate::js::number(r);
                IdKey::Num(if n == 0.0 {
                    0f64.to_bits()
                } else {
                    n.to_bits()
                })
            }
            Some((r, ValueKind::String)) => {
                let inner = &r[1..r.len().saturating_sub(1).max(1)];
                if !inner.contains(&b'\\') {
                    IdKey::Str(
                        String::from_utf8_lossy(inner)
                            .into_owned()
                            .into_bytes()
                            .into(),
                    )
                } else {
                    match json::decode_string(inner) {
                        Ok(js) => IdKey::Str(js.0.into()),
                        Err(_) => IdKey::Str(inner.into()),
                    }
                }
            }
            Some((_, ValueKind::Array | ValueKind::Object)) => IdKey::Object,
        }
    }

    /// The key of a string id (as [`TreeIndex::get`](crate::tree::TreeIndex::get) is asked).
    pub fn str(s: &str) -> IdKey {
        IdKey::Str(s.as_bytes().into())
    }

    /// JS truthiness (`parentId ? ... : ...`).
    pub fn truthy(&self) -> bool {
        match self {
            IdKey::Undefined | IdKey::Null => false,
            IdKey::Bool(b) => *b,
            IdKey::Num(bits) => {
                let n = f64::from_bits(*bits);
                n != 0.0 && !n.is_nan()
            }
            IdKey::Str(s) => !s.is_empty(),
            IdKey::Object => true,
        }
    }

    /// JS `===` between values of two different lines (objects are never the same object).
    pub fn strict_eq(&self, other: &IdKey) -> bool {
        *self != IdKey::Object && self == other
    }
}

/// The envelope of one entry line.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1-based physical line number in the file (0 for entries appended in memory only).
    pub line_no: usize,
    /// Where the line's bytes live.
    pub line: LineRef,
    /// Top-level members of the line.
    pub fields: Fields,
    /// The entry type.
    pub etype: EntryType,
    /// `id`, when it is a string.
    pub id: Option<Box<str>>,
    /// `parentId`, when it is a string (`null`, absent or another type: `None`).
    pub parent_id: Option<Box<str>>,
    /// `id` as pi links it ([`IdKey`]).
    pub key: IdKey,
    /// `parentId` as pi links it ([`IdKey`]).
    pub parent_key: IdKey,
    /// A line that is JSON but not an object (`5`, `"x"`, `[1,2]`, `true`): pi keeps every
    /// truthy value as an entry with no id, type or parent (a tree root; as the last line, the
    /// leaf).
    pub non_object: bool,
    /// `timestamp`, when it is a string.
    pub timestamp: Option<Box<str>>,
    /// For `message` entries: the payload's role, when it is a string.
    pub role: Option<Role>,
    /// For `message` entries: the payload's members, ranges relative to the line.
    pub message: Option<Fields>,
    /// For `message` entries: the JSON kind of the payload's `content` (`None`: absent), so
    /// that pi 1.5's reading of a `null` content is known without another look at the
    /// payload's members when the message is written.
    pub content: Option<ValueKind>,
}

/// Where a line's bytes are kept: a range of the loaded file, or an owned buffer for lines
/// that were appended or rewritten (migrated) in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRef {
    /// `base[start..end]` of the loaded file (without the line end).
    Base {
        /// First byte.
        start: usize,
        /// One past the last byte (before `\r\n` / `\n`).
        end: usize,
    },
    /// The n-th owned line.
    Owned(usize),
}

/// Errors that make a line unusable as an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Not valid JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] json::JsonError),
    /// Valid JSON but not an object.
    #[error("not a JSON object")]
    NotObject,
}

impl Entry {
    /// Parses one line (without its line end) into an envelope. `line_ref` and `line_no`
    /// are recorded as given.
    pub fn parse(line: &[u8], line_ref: LineRef, line_no: usize) -> Result<Entry, LineError> {
        let fields = parse_fields(line)?;
        Ok(Entry::from_fields(line, fields, line_ref, line_no))
    }

    /// Builds the envelope from an already scanned object.
    pub fn from_fields(line: &[u8], fields: Fields, line_ref: LineRef, line_no: usize) -> Entry {
        Entry::from_fields_and_message(line, fields, None, line_ref, line_no)
    }

    /// [`Entry::from_fields`], with the members of the line's `message` object when the caller
    /// found them in the same scan (ranges relative to the line); `None`: they are scanned here.
    pub fn from_fields_and_message(
        line: &[u8],
        fields: Fields,
        message_members: Option<Box<[Member]>>,
        line_ref: LineRef,
        line_no: usize,
    ) -> Entry {
        let etype = fields
            .str(line, "type")
            .map(|t| EntryType::from_name(&t))
            .unwrap_or_else(|| EntryType::Other("".into()));
        let id = fields.str(line, "id").map(|s| s.into());
        let parent_id = fields.str(line, "parentId").map(|s| s.into());
        let timestamp = fields.str(line, "timestamp").map(|s| s.into());
        let (mut role, mut message, mut content) = (None, None, None);
        if let (EntryType::Message, Some(members)) = (&etype, message_members) {
            let f = Fields { members };
            role = f.str(line, "role").map(|s| Role::from_name(&s));
            content = f.get(line, "content").map(|(_, k)| k);
            message = Some(f);
        } else if etype == EntryType::Message {
            if let Some(r) = fields.range(line, "message") {
                if let Ok(scan) = json::scan_object(&line[r.clone()]) {
                    let members: Box<[Member]> = scan
                        .members
                        .into_iter()
                        .map(|m| Member {
                            key: m.key.start + r.start..m.key.end + r.start,
                            value: m.value.start + r.start..m.value.end + r.start,
                            kind: m.kind,
                        })
                        .collect();
                    let f = Fields { members };
                    role = f.str(line, "role").map(|s| Role::from_name(&s));
                    content = f.get(line, "content").map(|(_, k)| k);
                    message = Some(f);
                }
            }
        }
        let key = IdKey::from_raw(fields.get(line, "id"));
        let parent_key = IdKey::from_raw(fields.get(line, "parentId"));
        Entry {
            line_no,
            line: line_ref,
            fields,
            etype,
            id,
            parent_id,
            key,
            parent_key,
            non_object: false,
            timestamp,
            role,
            message,
            content,
        }
    }

    /// A line that is JSON but not an object, kept as an entry without id: pi and omp keep a
    /// truthy one (`42`, `[1]`, `"s"`, `true`), omp 18 a falsy one (`0`, `false`, `""`) too,
    /// which pi 1.5 skips ([`Entry::is_falsy_line`]: the caller drops those from a pi file).
    /// `None` for `null` (pi skips it, omp refuses the file) and for an object.
    pub fn non_object(line: &[u8], line_ref: LineRef, line_no: usize) -> Option<Entry> {
        let v = JsValue::parse(line).ok()?;
        if matches!(v, JsValue::Null | JsValue::Object(_)) {
            return None;
        }
        Some(Entry {
            line_no,
            line: line_ref,
            fields: Fields::default(),
            etype: EntryType::Other("".into()),
            id: None,
            parent_id: None,
            key: IdKey::Undefined,
            parent_key: IdKey::Undefined,
            non_object: true,
            timestamp: None,
            role: None,
            message: None,
            content: None,
        })
    }

    /// Whether `line`, a line [`Entry::non_object`] kept, is falsy in JavaScript (`0`,
    /// `false`, `""`): an entry to omp 18 (its JSONL reader keeps every value but `null`'s
    /// line fails later), skipped by pi 1.5.
    pub fn is_falsy_line(line: &[u8]) -> bool {
        JsValue::parse(line).is_ok_and(|v| !v.is_truthy())
    }

    /// The id as a person reads it: the string, else the `id` member as written (`5`, `null`),
    /// else `(no id)`. `line` is the entry's line.
    pub fn id_text<'a>(&'a self, line: &'a [u8]) -> Cow<'a, str> {
        match (&self.id, self.fields.get(line, "id")) {
            (Some(id), _) => Cow::Borrowed(id),
            (None, Some((raw, _))) => String::from_utf8_lossy(raw),
            (None, None) => Cow::Borrowed("(no id)"),
        }
    }

    /// The type name as written.
    pub fn type_name(&self) -> &str {
        self.etype.name()
    }

    /// `Date.parse(timestamp)` in ms, `None` for NaN.
    pub fn timestamp_ms(&self) -> Option<f64> {
        self.timestamp
            .as_deref()
            .and_then(crate::time::parse_iso_ms)
    }

    /// `new Date(entry.timestamp).getTime()` ([`crate::js::date_ms`]; NaN for an Invalid
    /// Date), the time pi gives the messages it makes from an entry. `line` is the entry's line.
    pub fn date_ms(&self, line: &[u8]) -> f64 {
        crate::js::date_ms_raw(self.fields.get(line, "timestamp"))
    }

    /// A string member of the message payload.
    pub fn message_str<'l>(&self, line: &'l [u8], key: &str) -> Option<Cow<'l, str>> {
        self.message.as_ref()?.str(line, key)
    }
}

/// Reads a message line in one pass when its last member is a `message` object, the way pi
/// and omp write every message entry: the keys before it are scanned one by one, and the
/// message object, from its `{` to the line's last `}`, is scanned once, which validates it
/// and gives its members. Scanning the line and then the message again (what
/// [`parse_fields`] + [`Entry::from_fields`] do) read most of a session's bytes twice.
/// `None` for any other line (not an object, no `message` object last, an escaped key, an
/// error): the caller then uses the general path, which also gives the exact error.
pub fn parse_message_line(line: &[u8], line_ref: LineRef, line_no: usize) -> Option<Entry> {
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut i = json::skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i = json::skip_ws(line, i + 1);
    let mut members: Vec<Member> = Vec::with_capacity(8);
    loop {
        if line.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = json::value_end(line, i).ok()?;
        let key = i + 1..key_end - 1;
        let j = json::skip_ws(line, key_end);
        if line.get(j) != Some(&b':') {
            return None;
        }
        let v = json::skip_ws(line, j + 1);
        let kind = ValueKind::from_first_byte(*line.get(v)?)?;
        if kind == ValueKind::Object && line.get(key.clone()) == Some(b"message".as_slice()) {
            // The message object runs to the line's closing brace.
            let mut e = line.len();
            while e > v && ws(line[e - 1]) {
                e -= 1;
            }
            if e <= v + 1 || line[e - 1] != b'}' {
                return None;
            }
            let scan = json::scan_object(line.get(v..e - 1)?).ok()?;
            let value = v + scan.span.start..v + scan.span.end;
            members.push(Member { key, value, kind });
            // Shifted in place: no second allocation per message.
            let mut msg = scan.members;
            for m in &mut msg {
                m.key = m.key.start + v..m.key.end + v;
                m.value = m.value.start + v..m.value.end + v;
            }
            let msg = msg.into_boxed_slice();
            let fields = Fields {
                members: members.into_boxed_slice(),
            };
            return Some(Entry::from_fields_and_message(
                line,
                fields,
                Some(msg),
                line_ref,
                line_no,
            ));
        }
        let end = json::value_end(line, v).ok()?;
        members.push(Member {
            key,
            value: v..end,
            kind,
        });
        i = json::skip_ws(line, end);
        match line.get(i) {
            Some(b',') => i = json::skip_ws(line, i + 1),
            _ => return None,
        }
    }
}

/// [`parse_message_line`] for a line whose end is not known yet: `src` starts at the line's
/// first byte and may run past its end (into the next lines). The line must be a compact
/// message line (no whitespace between tokens, the `message` object last, as `JSON.stringify`
/// writes them); then its entry (`LineRef::Base` from `base`, the offset of `src` in the
/// file) and the length of its content are returned, and the caller checks that a line end
/// (`\n`, `\r\n` or the end of the input) follows. In compact mode no `\n` can be skipped
/// or sit inside a string, so the object cannot span two lines, and a separate search for
/// the line end (the first pass over every byte of the file, which paid its memory traffic)
/// is not needed. `None`: use the general path.
pub fn parse_message_line_compact(
    src: &[u8],
    base: usize,
    line_no: usize,
) -> Option<(Entry, usize)> {
    parse_message_line_compact_with(
        src,
        base,
        line_no,
        &mut json::PrefixNote::new(b""),
        &mut CompactScratch::default(),
    )
}

/// Buffers that [`parse_message_line_compact_with`] collects members in, reused from line to
/// line: each entry then gets its members in one exact allocation, instead of a vector grown
/// by doubling and shrunk at the end (a load makes one per line and one per message).
#[derive(Debug, Default)]
pub struct CompactScratch {
    line: Vec<Member>,
    message: Vec<Member>,
}

/// [`parse_message_line_compact`] with buffers reused across lines, that also sets
/// `note.seen` when a string value of the line starts with `note.prefix` (see
/// [`json::PrefixNote`]), noted while the line is validated instead of by another search
/// over its bytes.
pub fn parse_message_line_compact_with(
    src: &[u8],
    base: usize,
    line_no: usize,
    note: &mut json::PrefixNote<'_>,
    scratch: &mut CompactScratch,
) -> Option<(Entry, usize)> {
    if src.first() != Some(&b'{') {
        return None;
    }
    let mut i = 1;
    let members = &mut scratch.line;
    members.clear();
    loop {
        if src.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = json::value_end_compact(src, i).ok()?;
        let key = i + 1..key_end - 1;
        if src.get(key_end) != Some(&b':') {
            return None;
        }
        let v = key_end + 1;
        let kind = ValueKind::from_first_byte(*src.get(v)?)?;
        if kind == ValueKind::Object && src.get(key.clone()) == Some(b"message".as_slice()) {
            let span = json::scan_object_compact_into(src, v, note, &mut scratch.message).ok()?;
            let e = span.end;
            // The message object is the last member: the line's closing brace follows.
            if src.get(e) != Some(&b'}') {
                return None;
            }
            let len = e + 1;
            members.push(Member {
                key,
                value: span,
                kind,
            });
            let fields = Fields {
                members: Box::from(members.as_slice()),
            };
            let line_ref = LineRef::Base {
                start: base,
                end: base + len,
            };
            let entry = Entry::from_fields_and_message(
                src.get(..len)?,
                fields,
                Some(Box::from(scratch.message.as_slice())),
                line_ref,
                line_no,
            );
            return Some((entry, len));
        }
        let end = json::value_end_compact_noting(src, v, note).ok()?;
        members.push(Member {
            key,
            value: v..end,
            kind,
        });
        match src.get(end) {
            Some(b',') => i = end + 1,
            _ => return None,
        }
    }
}

/// Scans a line as a JSON object.
pub fn parse_fields(line: &[u8]) -> Result<Fields, LineError> {
    match json::scan_object(line) {
        Ok(scan) => Ok(Fields {
            members: scan.members.into_boxed_slice(),
        }),
        Err(e) => {
            // Distinguish "valid JSON, not an object" from a syntax error.
            let start = json::skip_ws(line, 0);
            if line.get(start) != Some(&b'{') {
                if let Ok(end) = json::value_end(line, start) {
                    if json::skip_ws(line, end) == line.len() {
                        return Err(LineError::NotObject);
                    }
                }
            }
            Err(LineError::Json(e))
        }
    }
}

/// The members of a line that name its place in the tree (and its kind and time): what the
/// database stores keep beside each line and what sync merges by.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// `id`.
    pub id: Option<String>,
    /// `parentId`.
    pub parent_id: Option<String>,
    /// `type`.
    pub etype: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
}

/// The string members `id`, `parentId`, `type`, `timestamp` of a line (none for a line
/// that is not a JSON object).
pub fn extract(line: &[u8]) -> Extracted {
    let Ok(f) = parse_fields(line) else {
        return Extracted::default();
    };
    let s = |k: &str| f.str(line, k).map(|v| v.into_owned());
    Extracted {
        id: s("id"),
        parent_id: s("parentId"),
        etype: s("type"),
        timestamp: s("timestamp"),
    }
}

#[cfg(test)]
mod extract_tests {
    #[test]
    fn extracts_members_and_nothing_from_bad_lines() {
        let x = super::extract(br#"{"type":"message","id":"a1","parentId":"z9","timestamp":"2026-01-01T00:00:00.000Z","message":{"id":"no"}}"#);
        assert_eq!(x.id.as_deref(), Some("a1"));
        assert_eq!(x.parent_id.as_deref(), Some("z9"));
        assert_eq!(x.etype.as_deref(), Some("message"));
        assert!(x.timestamp.is_some());
        assert_eq!(super::extract(b"{not json"), super::Extracted::default());
        assert_eq!(super::extract(br#"{"parentId":null}"#).parent_id, None);
    }
}

#[cfg(test)]
mod one_pass_tests {
    use super::*;

    fn generic(line: &[u8]) -> Option<Entry> {
        let fields = parse_fields(line).ok()?;
        Some(Entry::from_fields(line, fields, LineRef::Owned(0), 1))
    }

    fn same(a: &Entry, b: &Entry) -> bool {
        a.fields.members == b.fields.members
            && a.message.as_ref().map(|m| &m.members) == b.message.as_ref().map(|m| &m.members)
            && a.etype == b.etype
            && a.id == b.id
            && a.parent_id == b.parent_id
            && a.timestamp == b.timestamp
            && a.role == b.role
    }

    #[test]
    fn one_pass_equals_two_passes_or_declines() {
        let lines: &[&str] = &[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"  { "type" : "message" , "id":"a", "message" : { "role" : "assistant" , "content":[] }  }  "#,
            r#"{"type":"message","message":{"role":"user"},"message":{"role":"assistant"}}"#,
            r#"{"type":"message","message":{"role":"user"},"id":"after"}"#,
            r#"{"type":"message","message":"not an object"}"#,
            r#"{"type":"message","messag\u0065":{"role":"user"}}"#,
            r#"{"type":"custom","message":{"role":"user"}}"#,
            r#"{"type":"message","message":{"role":"user"}"#,
            r#"{"type":"message","message":{"role":"user"}}}"#,
            r#"{"type":"message","message":{"role":"user",}}"#,
            r#"{"type":"message","message":{}}"#,
            r#"{"type":"message","message":{"a":"\ud83d","b":[1,{"c":null}]}}"#,
            r#"{"type":"label","targetId":"x","label":"l"}"#,
            r#"[1,2]"#,
            r#"{}"#,
        ];
        for l in lines {
            let line = l.as_bytes();
            let fast = parse_message_line(line, LineRef::Owned(0), 1);
            match (fast, generic(line)) {
                (Some(f), Some(g)) => assert!(same(&f, &g), "{l}"),
                (Some(_), None) => panic!("one pass accepted a line the scanner rejects: {l}"),
                (None, _) => {}
            }
        }
        // The compact reading (line end not known beforehand) agrees with the general path on
        // every line it accepts, finds the line's end, and declines whitespace between tokens.
        for l in lines {
            let line = l.as_bytes();
            let mut src = line.to_vec();
            src.extend_from_slice(b"\n{\"type\":\"message\",\"message\":{}}\n");
            if let Some((e, len)) = parse_message_line_compact(&src, 0, 1) {
                // Anything but a line end after the object: the caller takes the general path.
                if src.get(len) != Some(&b'\n') {
                    continue;
                }
                assert_eq!(len, line.len(), "{l}");
                let g = generic(line).expect("the general path accepts it");
                assert!(same(&e, &g), "{l}");
                assert_eq!(e.line, LineRef::Base { start: 0, end: len });
            }
        }
        assert!(parse_message_line_compact(lines[0].as_bytes(), 0, 1).is_some());
        assert!(parse_message_line_compact(lines[1].as_bytes(), 0, 1).is_none());
        // A line cut by a newline inside its message does not continue on the next line.
        let cut = b"{\"type\":\"message\",\"message\":{\"role\":\n\"user\"}}\n";
        assert!(parse_message_line_compact(cut, 0, 1).is_none());
        let cut = b"{\"type\":\"message\",\"message\":{\"role\":\"us\ner\"}}\n";
        assert!(parse_message_line_compact(cut, 0, 1).is_none());

        // The common shape takes the one-pass path.
        assert!(parse_message_line(lines[0].as_bytes(), LineRef::Owned(0), 1).is_some());
        assert!(parse_message_line(lines[1].as_bytes(), LineRef::Owned(0), 1).is_some());
    }
}
