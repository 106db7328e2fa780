//! omp's `buildSessionContext` (oh-my-pi 18.3.4, LLM-context mode; 18.2.3's on request, see
//! [`OmpVersion`]): the context an omp agent sends to the model for a leaf of an omp session.
//!
//! It differs from pi's in many small ways, all reproduced here:
//!
//! * settings: `thinkingLevel` (`?? "off"`) and `configuredThinkingLevel`, `serviceTier`
//!   coerced to a per-family map, `models` by role where an explicit default `model_change`
//!   stops assistant messages from overriding the default, TTSR rules de-duplicated, `mode`
//!   and `modeData` from the last `mode_change`;
//! * emission: the latest `reset_boundary` after the latest compaction starts the context
//!   afresh; a compaction's summary message carries `shortSummary`, `tokensAfter`, `method`,
//!   `warning`, a provider replay payload (OpenAI remote compaction replaces the kept entries;
//!   Anthropic's marks the history rewrite just before the first retained entry) and the
//!   snapcompact archive as `blocks`/`images`; a context-rollover compaction re-adds the last
//!   user request it dropped; custom messages are normalized (type, display, attribution) and
//!   two transient types are left out; failed assistant turns (empty errors, retry recoveries)
//!   are skipped;
//! * post-processing: the context notebook is put first; tool calls without a result on the
//!   path are stripped (with the turn's redacted thinking and thinking signatures, the turn
//!   dropped when nothing is left); aborted and errored assistant turns are dropped with their
//!   tool results unless an interrupted-thinking note follows;
//! * load-time normalization omp applies before any of this: GitHub Copilot assistant replay
//!   metadata is stripped and cut snapcompact frames are repaired.
//!
//! The build runs in three passes, one module each: `settings`, `emit`, `post`.
//!
//! Message payloads are spliced into the output as raw bytes (canonicalized); only a turn
//! that omp rewrites is parsed into a DOM.
mod emit;
mod jsv;
mod llm;
mod notes;
mod post;
mod settings;
mod snapcompact;

pub(crate) use llm::write_llm_messages;

use super::{leaf_index, write_model, CtxMessage, LeafSel, ModelSource};
use crate::doc::SessionDoc;
use crate::json::{
    write_canonical, write_js_number, write_js_str, write_str_escaped, JsStr, ValueKind,
};
use emit::custom_type;
use jsv::raw_is_str;

/// Read access to omp's blob store for snapcompact frames kept as `blob:sha256:` references.
///
/// omp's `SessionManager.buildSessionContext()` prices and reads such frames from the store;
/// the bare `buildSessionContext(entries, leafId)` function has no store and reports them as
/// unavailable. Pass `None` to [`OmpContext::build`] for the latter.
pub trait FrameBlobs {
    /// The size in bytes of blob `hash` (64 lowercase hex), `None` when it does not exist.
    fn size(&self, hash: &str) -> Option<u64>;
    /// The blob's bytes in base64 (Node's encoding), `None` when it cannot be read.
    fn base64(&self, hash: &str) -> Option<String>;
}

/// Which omp's rules [`OmpContext::build_for`] follows. They differ only for compactions with an
/// Anthropic replay payload (`preserveData.anthropicCompaction`):
///
/// * 18.2 (omp 18.2.3) dates the summary message 1 ms before the first retained entry;
/// * 18.3 (omp 18.3.4, the default) keeps the compaction's own time on the summary and passes
///   the earlier time as `historyRewriteAt` (written just before `timestamp`; convertToLlm
///   uses it for the user message's `historyRewriteAt`), and a `firstKeptEntryId` of `""`
///   retains the entries after `providerReplayThroughEntryId`.
///
/// ```
/// use arbor_core::context::OmpVersion;
/// assert_eq!(OmpVersion::default(), OmpVersion::V18_3);
/// assert_eq!("18.2".parse::<OmpVersion>(), Ok(OmpVersion::V18_2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum OmpVersion {
    /// omp 18.2.x (checked against the running 18.2.3).
    V18_2,
    /// omp 18.3.x (checked against 18.3.4's source; see `docs/pi-versions.md`).
    #[default]
    V18_3,
}

impl std::str::FromStr for OmpVersion {
    type Err = String;
    /// `18.2`, `18.3`, or a full version of either (`18.2.3`, `18.3.4`).
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.trim().trim_start_matches('v').split('.');
        match (parts.next(), parts.next()) {
            (Some("18"), Some("2")) => Ok(OmpVersion::V18_2),
            (Some("18"), Some("3")) => Ok(OmpVersion::V18_3),
            _ => Err(format!(
                "unknown omp version {s:?} (arbor follows 18.3 and, on request, 18.2)"
            )),
        }
    }
}

/// One message of an omp context, by the entry it comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum OmpMessage {
    /// A `message` entry's payload, as stored.
    Stored(usize),
    /// A `message` entry's payload as omp rewrote it (stripped tool calls or replay
    /// metadata): the canonical JSON of the new object.
    Rewritten(usize, Vec<u8>),
    /// A `custom_message` entry as a normalized `custom` message.
    Custom(usize),
    /// A `branch_summary` entry as a `branchSummary` message.
    BranchSummary(usize),
    /// The latest compaction on the path as a `compactionSummary` message.
    CompactionSummary(Box<CompactionSummary>),
    /// The context notebook (a `custom` entry) as a hidden `custom` message.
    ContextNotes {
        /// The first path entry with the notebook entry's id (its timestamp is used).
        entry: usize,
        /// The rendered notebook text.
        text: JsStr,
    },
}

impl OmpMessage {
    /// The entry the message comes from.
    pub fn entry(&self) -> usize {
        match self {
            OmpMessage::Stored(i)
            | OmpMessage::Rewritten(i, _)
            | OmpMessage::Custom(i)
            | OmpMessage::BranchSummary(i)
            | OmpMessage::ContextNotes { entry: i, .. } => *i,
            OmpMessage::CompactionSummary(c) => c.entry,
        }
    }
}

/// What a compaction summary message holds beyond the compaction entry's own members.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionSummary {
    /// The compaction entry.
    pub entry: usize,
    /// `timestamp` in ms (NaN prints `null`).
    pub timestamp: f64,
    /// `historyRewriteAt` in ms (omp 18.3, Anthropic replay only).
    pub history_rewrite_at: Option<f64>,
    /// `providerPayload` as JSON.
    pub provider_payload: Option<Vec<u8>>,
    /// `blocks` (snapcompact archive) as JSON.
    pub blocks: Option<Vec<u8>>,
    /// `images` (the image blocks) as JSON.
    pub images: Option<Vec<u8>>,
}

/// omp's context for a leaf ([`super::SessionContext::Omp`]). Settings are held as the JSON
/// of their values; messages refer to entries of the document it was built from.
#[derive(Debug, Clone, PartialEq)]
pub struct OmpContext {
    pub(crate) messages: Vec<OmpMessage>,
    thinking_level: Vec<u8>,
    configured_thinking_level: Option<Vec<u8>>,
    service_tier: Option<Vec<u8>>,
    models: Vec<(JsStr, Vec<u8>)>,
    injected_ttsr_rules: Vec<Vec<u8>>,
    mode: Option<Vec<u8>>,
    mode_data: Option<Vec<u8>>,
    model: ModelSource,
    pub(crate) path: Vec<usize>,
    pub(crate) cycle: bool,
    pub(crate) empty: bool,
}

impl OmpContext {
    fn empty() -> OmpContext {
        OmpContext {
            messages: Vec::new(),
            thinking_level: br#""off""#.to_vec(),
            configured_thinking_level: None,
            service_tier: None,
            models: Vec::new(),
            injected_ttsr_rules: Vec::new(),
            mode: Some(br#""none""#.to_vec()),
            mode_data: None,
            model: ModelSource::None,
            path: Vec::new(),
            cycle: false,
            empty: true,
        }
    }

    /// The messages in order.
    pub fn messages(&self) -> &[OmpMessage] {
        &self.messages
    }

    /// The messages by the entries they come from (the context notebook, which comes from no
    /// message-like entry, left out).
    pub(crate) fn outline(&self) -> impl Iterator<Item = CtxMessage> + '_ {
        self.messages.iter().filter_map(outline_of)
    }

    /// [`OmpContext::outline`] with each message's JSON.
    pub(crate) fn outline_json(&self, doc: &SessionDoc) -> Vec<(CtxMessage, Vec<u8>)> {
        self.messages
            .iter()
            .filter_map(|m| {
                let o = outline_of(m)?;
                let mut json = Vec::new();
                self.write_message(doc, m, &mut json);
                Some((o, json))
            })
            .collect()
    }
}

/// The outline entry of an omp message (`None` for the context notebook).
pub(crate) fn outline_of(m: &OmpMessage) -> Option<CtxMessage> {
    {
        match m {
            OmpMessage::Stored(i) | OmpMessage::Rewritten(i, _) => Some(CtxMessage::Message(*i)),
            OmpMessage::Custom(i) => Some(CtxMessage::Custom(*i)),
            OmpMessage::BranchSummary(i) => Some(CtxMessage::BranchSummary(*i)),
            OmpMessage::CompactionSummary(c) => Some(CtxMessage::CompactionSummary(c.entry)),
            OmpMessage::ContextNotes { .. } => None,
        }
    }
}

/// A value's canonical JSON (see [`crate::json::write_canonical`]).
fn canon_bytes(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    write_canonical(raw, &mut out);
    out
}

/// The writer of a context's `messages` array, for substituting a conversion of them.
pub(crate) type MessagesWriter<'a> = &'a dyn Fn(&OmpContext, &SessionDoc, &mut Vec<u8>);

impl OmpContext {
    /// Builds the context of `leaf` as omp's `buildSessionContext(entries, leafId, byId, options)`
    /// does without `transcript`, after omp's load-time normalization. `blobs` resolves
    /// snapcompact frames kept in the blob store (omp's `SessionManager.buildSessionContext()`);
    /// `None` reports them as unavailable (the bare function).
    /// Used on any document whatever its dialect ([`super::build_session_context_with`] picks
    /// the rules by the dialect).
    pub fn build(
        doc: &SessionDoc,
        leaf: LeafSel<'_>,
        blobs: Option<&dyn FrameBlobs>,
    ) -> OmpContext {
        OmpContext::build_for(doc, leaf, blobs, OmpVersion::default())
    }

    /// [`build`](Self::build) with the rules of an older omp.
    pub fn build_for(
        doc: &SessionDoc,
        leaf: LeafSel<'_>,
        blobs: Option<&dyn FrameBlobs>,
        version: OmpVersion,
    ) -> OmpContext {
        let mut o = OmpContext::empty();
        let Some(leaf_idx) = leaf_index(doc, leaf) else {
            return o;
        };
        o.empty = false;
        let walked = doc.index.path(doc, leaf_idx);
        o.cycle = walked.cycle;
        let path = walked.entries;
        let compaction = settings::fold(doc, &path, &mut o);
        let mut items = emit::emit(doc, &path, compaction, blobs, version);
        post::finish(doc, &path, &mut items);
        o.messages = items.into_iter().map(|it| it.msg).collect();
        o.path = path;
        o
    }
}

impl OmpContext {
    /// Writes one message as omp's object would be stringified.
    pub fn write_message(&self, doc: &SessionDoc, m: &OmpMessage, out: &mut Vec<u8>) {
        let e = &doc.entries[m.entry()];
        let line = doc.line(&e.line);
        let member = |key: &str, out: &mut Vec<u8>| {
            if let Some((raw, _)) = e.fields.get(line, key) {
                out.push(b',');
                write_str_escaped(key, out);
                out.push(b':');
                write_canonical(raw, out);
            }
        };
        let time = |out: &mut Vec<u8>| {
            out.extend_from_slice(br#","timestamp":"#);
            write_js_number(e.date_ms(line), out);
            out.push(b'}');
        };
        match m {
            OmpMessage::Stored(_) => match e.fields.get(line, "message") {
                Some((raw, _)) => write_canonical(raw, out),
                None => out.extend_from_slice(b"null"),
            },
            OmpMessage::Rewritten(_, bytes) => out.extend_from_slice(bytes),
            OmpMessage::Custom(_) => {
                out.extend_from_slice(br#"{"role":"custom","customType":"#);
                write_js_str(&custom_type(&e.fields, line), out);
                member("content", out);
                out.extend_from_slice(br#","display":"#);
                match e.fields.get(line, "display") {
                    Some((raw, ValueKind::Bool)) => out.extend_from_slice(raw),
                    _ => out.extend_from_slice(b"false"),
                }
                member("details", out);
                if e.fields.has(line, "attribution") {
                    let user = raw_is_str(e.fields.get(line, "attribution"), "user");
                    out.extend_from_slice(if user {
                        br#","attribution":"user""#
                    } else {
                        br#","attribution":"agent""#
                    });
                }
                time(out);
            }
            OmpMessage::BranchSummary(_) => {
                out.extend_from_slice(br#"{"role":"branchSummary""#);
                member("summary", out);
                member("fromId", out);
                time(out);
            }
            OmpMessage::ContextNotes { text, .. } => {
                out.extend_from_slice(
                    br#"{"role":"custom","customType":"experimental_context_notes","content":"#,
                );
                write_js_str(text, out);
                out.extend_from_slice(br#","display":false"#);
                time(out);
            }
            OmpMessage::CompactionSummary(c) => {
                out.extend_from_slice(br#"{"role":"compactionSummary""#);
                member("summary", out);
                member("shortSummary", out);
                member("tokensBefore", out);
                member("tokensAfter", out);
                member("method", out);
                for (key, v) in [
                    ("providerPayload", &c.provider_payload),
                    ("blocks", &c.blocks),
                    ("images", &c.images),
                ] {
                    if let Some(v) = v {
                        out.push(b',');
                        write_str_escaped(key, out);
                        out.push(b':');
                        out.extend_from_slice(v);
                    }
                }
                member("warning", out);
                if let Some(t) = c.history_rewrite_at {
                    out.extend_from_slice(br#","historyRewriteAt":"#);
                    write_js_number(t, out);
                }
                out.extend_from_slice(br#","timestamp":"#);
                write_js_number(c.timestamp, out);
                out.push(b'}');
            }
        }
    }

    /// Writes the messages from the `from`-th on as a JSON array.
    pub fn write_messages_from(&self, doc: &SessionDoc, from: usize, out: &mut Vec<u8>) {
        out.push(b'[');
        for (k, m) in self.messages.iter().skip(from).enumerate() {
            if k > 0 {
                out.push(b',');
            }
            self.write_message(doc, m, out);
        }
        out.push(b']');
    }

    /// Writes the whole context in omp's key order (`messages, thinkingLevel,
    /// configuredThinkingLevel, serviceTier, models, injectedTtsrRules, mode, modeData`, the
    /// optional ones when set), with pi's `model` after `thinkingLevel`.
    pub fn write_json(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        self.write_json_with(doc, out, &|o, doc, out| o.write_messages_from(doc, 0, out));
    }

    /// [`OmpContext::write_json`] with `messages` written by `write_messages`.
    pub(crate) fn write_json_with(
        &self,
        doc: &SessionDoc,
        out: &mut Vec<u8>,
        write_messages: MessagesWriter<'_>,
    ) {
        out.extend_from_slice(br#"{"messages":"#);
        write_messages(self, doc, out);
        out.extend_from_slice(br#","thinkingLevel":"#);
        out.extend_from_slice(&self.thinking_level);
        out.extend_from_slice(br#","model":"#);
        write_model(doc, self.model, true, out);
        for (key, v) in [
            ("configuredThinkingLevel", &self.configured_thinking_level),
            ("serviceTier", &self.service_tier),
        ] {
            if let Some(v) = v {
                out.push(b',');
                write_str_escaped(key, out);
                out.push(b':');
                out.extend_from_slice(v);
            }
        }
        out.extend_from_slice(br#","models":{"#);
        // Array-index keys first, ascending; then the others in insertion order.
        let mut order: Vec<(u64, usize)> = self
            .models
            .iter()
            .enumerate()
            .map(|(p, (k, _))| (jsv::array_index(&k.0).map_or(u64::MAX, u64::from), p))
            .collect();
        order.sort_by_key(|&(ix, _)| ix);
        for (n, &(_, p)) in order.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let (k, v) = &self.models[p];
            write_js_str(k, out);
            out.push(b':');
            out.extend_from_slice(v);
        }
        out.extend_from_slice(br#"},"injectedTtsrRules":["#);
        for (n, r) in self.injected_ttsr_rules.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(r);
        }
        out.push(b']');
        for (key, v) in [("mode", &self.mode), ("modeData", &self.mode_data)] {
            if let Some(v) = v {
                out.push(b',');
                write_str_escaped(key, out);
                out.push(b':');
                out.extend_from_slice(v);
            }
        }
        out.push(b'}');
    }
}
