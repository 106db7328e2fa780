//! The context: the messages an agent sends to the model for a leaf, exactly as the tool that
//! owns the session computes them. A pi session gets pi's `buildSessionContext`
//! ([`PiContext`]), an omp session omp's ([`OmpContext`]); [`SessionContext`] is one or the
//! other, and every way of writing a context (the whole JSON, the messages alone, `--llm`'s
//! `convertToLlm`, streaming to any `io::Write`) goes through it.
//!
//! A context refers to entries by index; its writers splice the raw message payloads into the
//! output through [`crate::json::write_canonical`], so the bytes are what `JSON.stringify`
//! prints for the tool's object, without a DOM of the messages.
//!
//! ```
//! use arbor_core::context::{build_session_context, LeafSel};
//! use arbor_core::SessionDoc;
//! let jsonl = concat!(
//!     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//!     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
//!     r#"{"type":"custom_message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","customType":"note","content":"c","display":true}"#, "\n",
//! );
//! let doc = SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec()))?;
//! let ctx = build_session_context(&doc, LeafSel::Current);
//! assert_eq!(ctx.message_count(), 2);
//! let mut llm = Vec::new();
//! ctx.write_llm_messages(&doc, &mut llm);
//! assert!(String::from_utf8_lossy(&llm).contains(r#"{"role":"user","content":[{"type":"text","text":"c"}]"#));
//! # Ok::<(), arbor_core::NotASession>(())
//! ```
pub(crate) mod omp;
pub(crate) mod pi;
mod pi_llm;
mod pieces;
mod stream;
mod tokens;

pub use omp::{CompactionSummary, FrameBlobs, OmpContext, OmpMessage, OmpVersion};
pub use pi::{edited_content, PiContext};
pub use pi_llm::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
};
pub use tokens::{estimate_tokens, ESTIMATED_IMAGE_CHARS};

use crate::doc::{Dialect, SessionDoc};
use crate::entry::{Entry, EntryType};
use crate::json::{write_str_escaped, ValueKind};
use std::borrow::Cow;
use std::io;

/// Which leaf to build the context for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafSel<'a> {
    /// The session's current leaf (after load: the last entry, as pi picks on open).
    Current,
    /// pi's explicit `null` leaf (before the first entry): an empty context.
    Null,
    /// The entry with this id; an unknown id falls back to the last entry, as pi does, and so
    /// does `""` (pi: `if (leafId)` — a falsy id selects the last entry).
    Id(&'a str),
    /// The entry with this `id` as pi keys it ([`crate::entry::IdKey`]: a number, a string
    /// with a lone surrogate); unknown or falsy keys fall back to the last entry.
    Key(&'a crate::entry::IdKey),
}

/// One message of a context, by the entry it comes from (the outline both dialects share).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtxMessage {
    /// A `message` entry's payload, as stored (for omp: or as omp rewrote it).
    Message(usize),
    /// A `custom_message` entry turned into a `custom` role message.
    Custom(usize),
    /// A `branch_summary` entry turned into a `branchSummary` message.
    BranchSummary(usize),
    /// The latest compaction on the path, as a `compactionSummary` message.
    CompactionSummary(usize),
    /// The latest compaction's `systemMessage` (pi 1.5: the system message folded when it was
    /// made), before its summary.
    CompactionSystem(usize),
}

impl CtxMessage {
    /// The entry the message comes from.
    pub fn entry(&self) -> usize {
        match *self {
            CtxMessage::Message(i)
            | CtxMessage::Custom(i)
            | CtxMessage::BranchSummary(i)
            | CtxMessage::CompactionSummary(i)
            | CtxMessage::CompactionSystem(i) => i,
        }
    }
}

/// Where the context's `model` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModelSource {
    /// No model on the path: `null`.
    #[default]
    None,
    /// A `model_change` entry.
    Change(usize),
    /// An assistant message's `provider` / `model`.
    Assistant(usize),
}

/// The context of one leaf, built by the rules of the tool that owns the session.
#[derive(Debug, Clone)]
pub enum SessionContext {
    /// pi's `buildSessionContext` (pi sessions).
    Pi(PiContext),
    /// omp's `buildSessionContext` (omp sessions).
    Omp(OmpContext),
}

/// Builds the context for `leaf` by the rules of `doc`'s dialect: pi's
/// `buildSessionContext(entries, leafId, byId)`, or omp's without a blob store (snapcompact
/// frames kept as blob references are reported as unavailable, as omp's bare function does;
/// see [`build_session_context_with`]).
///
/// ```
/// use arbor_core::context::{build_session_context, LeafSel};
/// use arbor_core::SessionDoc;
/// let doc = SessionDoc::parse(std::sync::Arc::new(
///     br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec(),
/// ))?;
/// let mut json = Vec::new();
/// build_session_context(&doc, LeafSel::Current).write_json(&doc, &mut json);
/// assert_eq!(json, br#"{"messages":[],"thinkingLevel":"off","model":null,"models":{},"injectedTtsrRules":[],"mode":"none"}"#);
/// # Ok::<(), arbor_core::NotASession>(())
/// ```
pub fn build_session_context(doc: &SessionDoc, leaf: LeafSel<'_>) -> SessionContext {
    build_session_context_with(doc, leaf, None)
}

/// [`build_session_context`], with omp's blob store for snapcompact frames kept as
/// `blob:sha256:` references (what omp's `SessionManager.buildSessionContext()` reads; pi
/// sessions ignore it).
pub fn build_session_context_with(
    doc: &SessionDoc,
    leaf: LeafSel<'_>,
    blobs: Option<&dyn FrameBlobs>,
) -> SessionContext {
    match doc.dialect() {
        Dialect::Pi => SessionContext::Pi(PiContext::build(doc, leaf)),
        Dialect::Omp => SessionContext::Omp(OmpContext::build(doc, leaf, blobs)),
    }
}

/// The leaf entry a selection names: `None` for the empty context (pi's `null` leaf, no
/// entries, or a current leaf the document has explicitly cleared).
pub(crate) fn leaf_index(doc: &SessionDoc, leaf: LeafSel<'_>) -> Option<usize> {
    match leaf {
        LeafSel::Null => None,
        LeafSel::Current => doc.index.leaf,
        LeafSel::Id(id) => (!id.is_empty())
            .then(|| doc.index.get(id))
            .flatten()
            .or_else(|| doc.entries.len().checked_sub(1)),
        LeafSel::Key(key) if *key == crate::entry::IdKey::Null => None,
        LeafSel::Key(key) => key
            .truthy()
            .then(|| doc.index.get_key(key))
            .flatten()
            .or_else(|| doc.entries.len().checked_sub(1)),
    }
}

impl SessionContext {
    /// The dialect whose rules built it.
    pub fn dialect(&self) -> Dialect {
        match self {
            SessionContext::Pi(_) => Dialect::Pi,
            SessionContext::Omp(_) => Dialect::Omp,
        }
    }

    /// The path from the root to the leaf (entry indices).
    pub fn path(&self) -> &[usize] {
        match self {
            SessionContext::Pi(c) => &c.path,
            SessionContext::Omp(c) => &c.path,
        }
    }

    /// Whether the path walk met a `parentId` cycle and was cut (pi would hang).
    pub fn cycle(&self) -> bool {
        match self {
            SessionContext::Pi(c) => c.cycle,
            SessionContext::Omp(c) => c.cycle,
        }
    }

    /// Whether this is the explicit empty context (`null` leaf, or no entries).
    pub fn is_empty(&self) -> bool {
        match self {
            SessionContext::Pi(c) => c.empty,
            SessionContext::Omp(c) => c.empty,
        }
    }

    /// How many messages the context has (the length of the `messages` array
    /// [`write_json`](Self::write_json) writes).
    pub fn message_count(&self) -> usize {
        match self {
            SessionContext::Pi(c) => c.messages.len(),
            SessionContext::Omp(c) => c.messages.len(),
        }
    }

    /// The messages by the entries they come from, in order: pi's messages; omp's, without
    /// the context notebook (which comes from no message-like entry).
    pub fn outline(&self) -> Cow<'_, [CtxMessage]> {
        match self {
            SessionContext::Pi(c) => Cow::Borrowed(&c.messages),
            SessionContext::Omp(c) => Cow::Owned(c.outline().collect()),
        }
    }

    /// [`outline`](Self::outline) with each message's JSON as the context holds it (after
    /// pi 1.5's context edits and `null` contents, omp's rewrites).
    pub fn outline_json(&self, doc: &SessionDoc) -> Vec<(CtxMessage, Vec<u8>)> {
        match self {
            SessionContext::Pi(c) => c
                .messages
                .iter()
                .map(|&m| {
                    let mut json = Vec::new();
                    c.write_message(doc, m, &mut json);
                    (m, json)
                })
                .collect(),
            SessionContext::Omp(c) => c.outline_json(doc),
        }
    }

    /// The `context_edit` entry whose replacement message `m` shows (pi 1.5), if any.
    pub fn edited_by(&self, m: CtxMessage) -> Option<usize> {
        match (self, m) {
            (SessionContext::Pi(c), CtxMessage::Message(i) | CtxMessage::Custom(i)) => {
                c.edited.get(&i).copied()
            }
            _ => None,
        }
    }

    /// The entries whose lines writing this context reads (message payloads, settings).
    pub fn entries_read(&self) -> Vec<usize> {
        match self {
            SessionContext::Pi(c) => c.entries_read().collect(),
            SessionContext::Omp(c) => c.path.clone(),
        }
    }

    /// The message entries of this context that pi or omp cannot read
    /// ([`unreadable_message`]): arbor keeps them in their place (`--llm` leaves them out)
    /// and callers should say so (`arbor context` warns on stderr).
    pub fn unreadable_messages(&self, doc: &SessionDoc) -> Vec<UnreadableMessage> {
        self.outline()
            .iter()
            .filter_map(|m| match m {
                CtxMessage::Message(i) => unreadable_message(doc, *i),
                _ => None,
            })
            .collect()
    }

    /// Writes the context as one JSON object, exactly as the tool's `JSON.stringify` of it.
    pub fn write_json(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        match self {
            SessionContext::Pi(c) => c.write_json(doc, out),
            SessionContext::Omp(c) => c.write_json(doc, out),
        }
    }

    /// Writes the `messages` array alone (the one [`write_json`](Self::write_json) writes).
    pub fn write_messages(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        self.write_messages_from(doc, 0, out);
    }

    /// Writes the messages from the `from`-th on as a JSON array (the new messages of a
    /// context that was extended, see [`crate::ContextChange`]).
    pub fn write_messages_from(&self, doc: &SessionDoc, from: usize, out: &mut Vec<u8>) {
        match self {
            SessionContext::Pi(c) => c.write_messages_from(doc, from, out),
            SessionContext::Omp(c) => c.write_messages_from(doc, from, out),
        }
    }

    /// Writes the `k`-th message of the `messages` array [`write_json`](Self::write_json)
    /// writes (nothing when there is no such message).
    pub fn write_message_at(&self, doc: &SessionDoc, k: usize, out: &mut Vec<u8>) {
        match self {
            SessionContext::Pi(c) => {
                if let Some(&m) = c.messages.get(k) {
                    c.write_message(doc, m, out);
                }
            }
            SessionContext::Omp(c) => {
                if let Some(m) = c.messages.get(k) {
                    c.write_message(doc, m, out);
                }
            }
        }
    }

    /// The entry the `k`-th message comes from (`None` for omp's context notebook, which
    /// comes from no entry, or past the end).
    pub fn message_entry(&self, k: usize) -> Option<usize> {
        match self {
            SessionContext::Pi(c) => c.messages.get(k).map(CtxMessage::entry),
            SessionContext::Omp(c) => c
                .messages
                .get(k)
                .and_then(omp::outline_of)
                .map(|m| m.entry()),
        }
    }

    /// [`write_json`](Self::write_json) with only the messages `from..end` in its `messages`
    /// array (a part of a context cut to a budget); the other members are the whole
    /// context's.
    ///
    /// ```
    /// use arbor_core::context::{build_session_context, LeafSel};
    /// use arbor_core::SessionDoc;
    /// let jsonl = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}"#, "\n",
    ///     r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"two","timestamp":2}}"#, "\n",
    /// );
    /// let doc = SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec()))?;
    /// let ctx = build_session_context(&doc, LeafSel::Current);
    /// let mut json = Vec::new();
    /// ctx.write_json_range(&doc, 1, 2, &mut json);
    /// assert!(json.starts_with(br#"{"messages":[{"role":"user","content":"two","timestamp":2}],"#));
    /// # Ok::<(), arbor_core::NotASession>(())
    /// ```
    pub fn write_json_range(&self, doc: &SessionDoc, from: usize, end: usize, out: &mut Vec<u8>) {
        let messages = |out: &mut Vec<u8>| {
            out.push(b'[');
            for k in from..end.min(self.message_count()) {
                if k > from {
                    out.push(b',');
                }
                self.write_message_at(doc, k, out);
            }
            out.push(b']');
        };
        match self {
            SessionContext::Pi(c) => c.write_json_with(doc, out, &|_, _, o| messages(o)),
            SessionContext::Omp(c) => c.write_json_with(doc, out, &|_, _, o| messages(o)),
        }
    }

    /// Writes the context as JSON with its messages converted by the tool's `convertToLlm`
    /// (what `arbor context --llm` prints).
    pub fn write_llm_json(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        match self {
            SessionContext::Pi(c) => {
                c.write_json_with(doc, out, &|c, d, o| pi_llm::write_llm_messages(c, d, o))
            }
            SessionContext::Omp(c) => c.write_json_with(doc, out, &omp::write_llm_messages),
        }
    }

    /// Writes `convertToLlm(messages)` alone.
    pub fn write_llm_messages(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        match self {
            SessionContext::Pi(c) => pi_llm::write_llm_messages(c, doc, out),
            SessionContext::Omp(c) => omp::write_llm_messages(c, doc, out),
        }
    }

    /// Writes [`write_json`](Self::write_json)'s bytes and a newline to `w`. A pi context goes
    /// out in chunks of about 1 MB, so the JSON of a large context is never held whole in
    /// memory, and a message stored exactly as it is to be printed is written from the
    /// session's bytes without a copy; an omp context (rewritten message by message) is
    /// written whole. `w` is not flushed.
    ///
    /// ```
    /// use arbor_core::context::{build_session_context, LeafSel};
    /// use arbor_core::SessionDoc;
    /// let jsonl = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
    /// );
    /// let doc = SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec()))?;
    /// let ctx = build_session_context(&doc, LeafSel::Current);
    /// let mut streamed = Vec::new();
    /// ctx.write_streaming(&doc, &mut streamed)?;
    /// let mut whole = Vec::new();
    /// ctx.write_json(&doc, &mut whole);
    /// whole.push(b'\n');
    /// assert_eq!(streamed, whole);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// The first error `w` returns.
    pub fn write_streaming(&self, doc: &SessionDoc, w: &mut dyn io::Write) -> io::Result<()> {
        match self {
            SessionContext::Pi(c) => c.write_streaming(doc, w),
            SessionContext::Omp(c) => {
                let mut out = Vec::new();
                c.write_json(doc, &mut out);
                out.push(b'\n');
                w.write_all(&out)
            }
        }
    }
}

/// Writes `"as_key":<canonical value>` for member `key` of `e`, preceded by a comma; nothing
/// when the member is absent (JS `undefined` is omitted).
pub(crate) fn write_member(
    doc: &SessionDoc,
    e: &Entry,
    key: &str,
    as_key: &str,
    out: &mut Vec<u8>,
) {
    let line = doc.line(&e.line);
    if let Some((raw, _)) = e.fields.get(line, key) {
        out.push(b',');
        write_str_escaped(as_key, out);
        out.push(b':');
        crate::json::write_canonical(raw, out);
    }
}

/// Writes the context's `model`: `null`, or `{provider, modelId}` from a `model_change` or an
/// assistant message. With `split_omp_shape`, an omp-shaped `model_change` (`model:
/// "provider/id"`, no `provider`/`modelId`) is split into the two (omp files); pi copies the
/// two absent fields, so a pi file gets `{}` (goldens/pi/edge-omp-model-change).
pub(crate) fn write_model(
    doc: &SessionDoc,
    source: ModelSource,
    split_omp_shape: bool,
    out: &mut Vec<u8>,
) {
    let (i, mkey, from_message) = match source {
        ModelSource::None => {
            out.extend_from_slice(b"null");
            return;
        }
        ModelSource::Change(i) => (i, "modelId", false),
        ModelSource::Assistant(i) => (i, "model", true),
    };
    let e = &doc.entries[i];
    let line = doc.line(&e.line);
    let fields = if from_message {
        e.message.as_ref()
    } else {
        Some(&e.fields)
    };
    out.push(b'{');
    if let Some(f) = fields {
        let omp_shape =
            split_omp_shape && !from_message && !f.has(line, "provider") && !f.has(line, "modelId");
        if omp_shape {
            if let Some(m) = f.str(line, "model") {
                let (p, id) = m.split_once('/').unwrap_or(("", &m));
                out.extend_from_slice(br#""provider":"#);
                write_str_escaped(p, out);
                out.extend_from_slice(br#","modelId":"#);
                write_str_escaped(id, out);
            }
        } else {
            let mut first = true;
            for (key, as_key) in [("provider", "provider"), (mkey, "modelId")] {
                if let Some((raw, _)) = f.get(line, key) {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    write_str_escaped(as_key, out);
                    out.push(b':');
                    crate::json::write_canonical(raw, out);
                }
            }
        }
    }
    out.push(b'}');
}

/// The JSON kind of entry `i`'s `message` when it is a message entry whose `message` is not
/// an object (`None` for an object, or when the entry is no message entry).
fn message_kind(doc: &SessionDoc, i: usize) -> Option<ValueKind> {
    let e = &doc.entries[i];
    if e.etype != EntryType::Message || e.message.is_some() {
        return None;
    }
    match e.fields.get(doc.line(&e.line), "message") {
        Some((_, ValueKind::Object)) | None => None,
        Some((_, kind)) => Some(kind),
    }
}

/// A message entry the tool that owns the session cannot read, though arbor reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnreadableMessage {
    /// Index of the entry in [`SessionDoc::entries`].
    pub entry: usize,
    /// The JSON kind of its `message` (`null`, a string, a number, `true`/`false`).
    pub kind: ValueKind,
    /// What the peer does with it, in a few words (pi 0.73.1 and omp 18.2.3, goldens
    /// `edge-message-not-object*`).
    pub peer: &'static str,
}

impl UnreadableMessage {
    /// How the `message` is spelled in a warning: `null`, `a string`, `a number`, `a boolean`.
    pub fn what(&self) -> &'static str {
        match self.kind {
            ValueKind::Null => "null",
            ValueKind::String => "a string",
            ValueKind::Number => "a number",
            ValueKind::Bool => "a boolean",
            ValueKind::Array => "an array",
            ValueKind::Object => "an object",
        }
    }
}

/// Whether the real pi or omp (by `doc`'s dialect) throws on entry `i`'s `message`:
/// `null` makes pi's `buildSessionContext` throw on every leaf below the entry and omp's
/// `SessionManager.open` throw; a string, number or boolean makes omp's `convertToLlm` throw
/// (pi passes them through and leaves them out of `convertToLlm`, as arbor does). `[]` and
/// objects are read by both.
pub fn unreadable_message(doc: &SessionDoc, i: usize) -> Option<UnreadableMessage> {
    let kind = message_kind(doc, i)?;
    let peer = match (doc.dialect(), kind) {
        (Dialect::Pi, ValueKind::Null) => "pi cannot build a context through it (it throws)",
        (Dialect::Omp, ValueKind::Null) => "omp cannot open the session (it throws)",
        (Dialect::Omp, ValueKind::String | ValueKind::Number | ValueKind::Bool) => {
            "omp cannot convert a context through it for the model (convertToLlm throws)"
        }
        _ => return None,
    };
    Some(UnreadableMessage {
        entry: i,
        kind,
        peer,
    })
}
