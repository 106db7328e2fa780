//! omp's `buildSessionContext` (oh-my-pi 18.2.3, LLM-context mode): the context an omp agent
//! sends to the model for a leaf of an omp session.
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
//!   Anthropic's predates the summary to just before the first retained entry) and the
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
//! Message payloads are spliced into the output as raw bytes (canonicalized); only a turn
//! that omp rewrites is parsed into a DOM.
mod jsv;
pub(crate) mod llm;
mod notes;
mod snapcompact;

use crate::context::{canon, CtxMessage, LeafSel, ModelSource, SessionContext};
use crate::doc::{Dialect, SessionDoc};
use crate::entry::{EntryType, Fields};
use crate::json::{
    self, write_js_number, write_js_str, write_str_escaped, JsStr, JsValue, ValueKind,
};
use jsv::{
    date_ms, from_units, has_non_ws, raw_is_str, raw_js_str, raw_truthy, strict_eq, to_js_string,
    Prim,
};
use std::collections::HashSet;

/// Read access to omp's blob store for snapcompact frames kept as `blob:sha256:` references.
///
/// omp's `SessionManager.buildSessionContext()` prices and reads such frames from the store;
/// the bare `buildSessionContext(entries, leafId)` function has no store and reports them as
/// unavailable. Pass `None` to [`build_omp_context`] for the latter.
pub trait FrameBlobs {
    /// The size in bytes of blob `hash` (64 lowercase hex), `None` when it does not exist.
    fn size(&self, hash: &str) -> Option<u64>;
    /// The blob's bytes in base64 (Node's encoding), `None` when it cannot be read.
    fn base64(&self, hash: &str) -> Option<String>;
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

/// A writer of a context's `messages` array (for substituting a conversion of them).
pub type MessagesWriter<'a> = &'a dyn Fn(&SessionContext, &SessionDoc, &mut Vec<u8>);

/// What a compaction summary message holds beyond the compaction entry's own members.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionSummary {
    /// The compaction entry.
    pub entry: usize,
    /// `timestamp` in ms (NaN prints `null`).
    pub timestamp: f64,
    /// `providerPayload` as JSON.
    pub provider_payload: Option<Vec<u8>>,
    /// `blocks` (snapcompact archive) as JSON.
    pub blocks: Option<Vec<u8>>,
    /// `images` (the image blocks) as JSON.
    pub images: Option<Vec<u8>>,
}

/// The omp-specific result of [`build_omp_context`], kept in [`SessionContext::omp`]. Settings
/// are held as the JSON of their values.
#[derive(Debug, Clone, PartialEq)]
pub struct OmpContext {
    /// The messages, in order.
    pub messages: Vec<OmpMessage>,
    thinking_level: Vec<u8>,
    configured_thinking_level: Option<Vec<u8>>,
    service_tier: Option<Vec<u8>>,
    models: Vec<(JsStr, Vec<u8>)>,
    injected_ttsr_rules: Vec<Vec<u8>>,
    mode: Option<Vec<u8>>,
    mode_data: Option<Vec<u8>>,
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
        }
    }
}

fn canon_bytes(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    canon(raw, &mut out);
    out
}

/// What the post-processing passes need to know about a message.
#[derive(Debug)]
enum Kind {
    Assistant {
        stop: Stop,
        blocks: Vec<Block>,
        sanitize: bool,
    },
    ToolResult(Option<Prim>),
    Custom {
        interrupted: bool,
    },
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Error,
    Aborted,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockType {
    ToolCall,
    RedactedThinking,
    Thinking,
    Other,
}

#[derive(Debug, Clone)]
struct Block {
    ty: BlockType,
    id: Option<Prim>,
}

struct Item {
    msg: OmpMessage,
    kind: Kind,
}

const INTERRUPTED_THINKING: &str = "interrupted-thinking";
const DEFAULT_CUSTOM_TYPE: &str = "custom-message";

/// Reads the blocks of an assistant's `content` array: their types and ids, and whether any
/// has content (omp's `isEmptyErrorTurn` test; `sanitize`: the thinking signatures are gone).
fn scan_blocks(content: &[u8], sanitize: bool) -> (Vec<Block>, bool) {
    let mut blocks = Vec::new();
    let mut any_content = false;
    for r in jsv::array_items(content) {
        let raw = &content[r];
        let Ok(scan) = json::scan_object(raw) else {
            // Not an object: no `type`, which counts as content.
            blocks.push(Block {
                ty: BlockType::Other,
                id: Some(Prim::Undefined),
            });
            any_content = true;
            continue;
        };
        let f = Fields {
            members: scan.members.into_boxed_slice(),
        };
        let get = |k: &str| f.get(raw, k);
        let str_has_text = |k: &str| raw_js_str(get(k)).is_some_and(|s| has_non_ws(&s));
        let ty = raw_js_str(get("type"));
        let ty_str = ty.as_ref().map(|t| t.0.as_slice());
        let (bt, has) = match ty_str {
            Some(b"text") => (BlockType::Other, str_has_text("text")),
            Some(b"thinking") => (
                BlockType::Thinking,
                str_has_text("thinking") || (!sanitize && str_has_text("thinkingSignature")),
            ),
            Some(b"redactedThinking") => (BlockType::RedactedThinking, str_has_text("data")),
            Some(b"toolCall") => (BlockType::ToolCall, true),
            Some(b"fallback") => (BlockType::Other, false),
            _ => (BlockType::Other, true),
        };
        any_content |= has;
        blocks.push(Block {
            ty: bt,
            id: Prim::of_raw(get("id")),
        });
    }
    (blocks, any_content)
}

/// The context item of a `message` entry, `None` when omp leaves it out (a retry-recovery or
/// empty error turn, or no payload at all, where omp would throw).
fn message_item(doc: &SessionDoc, i: usize) -> Option<Item> {
    let e = &doc.entries[i];
    let line = doc.line(&e.line);
    e.fields.get(line, "message")?;
    let Some(f) = &e.message else {
        return Some(Item {
            msg: OmpMessage::Stored(i),
            kind: Kind::Other,
        });
    };
    let role = f.get(line, "role");
    let kind = if raw_is_str(role, "assistant") {
        let sanitize = raw_is_str(f.get(line, "provider"), "github-copilot")
            && match f.get(line, "providerPayload") {
                Some((pp, ValueKind::Object)) => json::scan_object(pp)
                    .ok()
                    .and_then(|s| {
                        s.get(pp, "type")
                            .map(|m| (pp[m.value.clone()].to_vec(), m.kind))
                    })
                    .is_some_and(|(v, k)| raw_is_str(Some((&v, k)), "openaiResponsesHistory")),
                _ => false,
            };
        let stop_raw = f.get(line, "stopReason");
        let stop = if raw_is_str(stop_raw, "error") {
            Stop::Error
        } else if raw_is_str(stop_raw, "aborted") {
            Stop::Aborted
        } else {
            Stop::Other
        };
        let (blocks, any_content, is_array) = match f.get(line, "content") {
            Some((c, ValueKind::Array)) => {
                let (b, a) = scan_blocks(c, sanitize);
                (b, a, true)
            }
            _ => (Vec::new(), true, false),
        };
        if raw_truthy(f.get(line, "retryRecovery"))
            || (stop == Stop::Error && is_array && !any_content)
        {
            return None;
        }
        Kind::Assistant {
            stop,
            blocks,
            sanitize,
        }
    } else if raw_is_str(role, "toolResult") {
        Kind::ToolResult(Prim::of_raw(f.get(line, "toolCallId")))
    } else if raw_is_str(role, "custom") {
        Kind::Custom {
            interrupted: raw_is_str(f.get(line, "customType"), INTERRUPTED_THINKING),
        }
    } else {
        Kind::Other
    };
    Some(Item {
        msg: OmpMessage::Stored(i),
        kind,
    })
}

/// omp's normalized `customType` of a custom message entry.
fn custom_type(f: &Fields, line: &[u8]) -> JsStr {
    raw_js_str(f.get(line, "customType"))
        .filter(|t| !t.0.is_empty())
        .unwrap_or_else(|| JsStr::from(DEFAULT_CUSTOM_TYPE))
}

/// Whether a `custom_message` entry's content can be sent (a string or an array).
fn custom_sendable(f: &Fields, line: &[u8]) -> bool {
    matches!(
        f.get(line, "content"),
        Some((_, ValueKind::String | ValueKind::Array))
    )
}

/// omp's `isUserRequestEntry`: a user message, or a custom message that starts a user turn
/// (a `/skill:` prompt or a collab prompt attributed to the user).
fn is_user_request(doc: &SessionDoc, i: usize) -> bool {
    let e = &doc.entries[i];
    let line = doc.line(&e.line);
    let initiator = |ty: &JsStr, attribution: Option<(&[u8], ValueKind)>| {
        (ty.0 == b"skill-prompt" || ty.0 == b"collab-prompt") && raw_is_str(attribution, "user")
    };
    match e.etype {
        EntryType::Message => {
            let Some(f) = &e.message else { return false };
            let role = f.get(line, "role");
            if raw_is_str(role, "user") {
                return true;
            }
            raw_is_str(role, "custom")
                && raw_js_str(f.get(line, "customType"))
                    .is_some_and(|t| initiator(&t, f.get(line, "attribution")))
        }
        EntryType::CustomMessage => {
            custom_sendable(&e.fields, line)
                && initiator(
                    &custom_type(&e.fields, line),
                    e.fields.get(line, "attribution"),
                )
        }
        _ => false,
    }
}

/// The `id` of entry `i` as a JS value key.
fn id_key(doc: &SessionDoc, i: usize) -> Option<Prim> {
    let e = &doc.entries[i];
    Prim::of_raw(e.fields.get(doc.line(&e.line), "id"))
}

/// omp's `appendMessage`: the message an entry adds to the context, if any.
fn append(doc: &SessionDoc, i: usize, items: &mut Vec<Item>) {
    let e = &doc.entries[i];
    let line = doc.line(&e.line);
    match e.etype {
        EntryType::Message => items.extend(message_item(doc, i)),
        EntryType::CustomMessage => {
            let raw_type = e.fields.get(line, "customType");
            if raw_is_str(raw_type, "prewalk-plan") || raw_is_str(raw_type, "vibe-mode-context") {
                return;
            }
            if custom_sendable(&e.fields, line) {
                let interrupted = custom_type(&e.fields, line).0 == INTERRUPTED_THINKING.as_bytes();
                items.push(Item {
                    msg: OmpMessage::Custom(i),
                    kind: Kind::Custom { interrupted },
                });
            }
        }
        EntryType::BranchSummary if raw_truthy(e.fields.get(line, "summary")) => {
            items.push(Item {
                msg: OmpMessage::BranchSummary(i),
                kind: Kind::Other,
            });
        }
        _ => {}
    }
}

/// `coerceServiceTierByFamily`: a persisted service tier as a per-family map, as JSON.
fn coerce_service_tier(v: Option<&JsValue>) -> Option<Vec<u8>> {
    let tier = |t: &str| JsValue::String(JsStr::from(t));
    let families = ["openai", "anthropic", "google"];
    let out: Vec<(JsStr, JsValue)> = match v? {
        JsValue::Null => return None,
        obj @ (JsValue::Object(_) | JsValue::Array(_)) => families
            .iter()
            .filter_map(|fam| {
                let t = obj.get(fam)?.as_js_str()?.as_str()?;
                matches!(t, "auto" | "default" | "flex" | "scale" | "priority")
                    .then(|| (JsStr::from(*fam), tier(t)))
            })
            .collect(),
        JsValue::String(s) => match s.as_str()? {
            "priority" => families
                .iter()
                .map(|f| (JsStr::from(*f), tier("priority")))
                .collect(),
            "openai-only" => vec![(JsStr::from("openai"), tier("priority"))],
            "claude-only" => vec![(JsStr::from("anthropic"), tier("priority"))],
            t @ ("auto" | "default" | "flex" | "scale") => vec![(JsStr::from("openai"), tier(t))],
            _ => return None,
        },
        _ => return None,
    };
    (!out.is_empty()).then(|| JsValue::Object(out).to_json())
}

/// `getOpenAiRemoteCompactionPayload` as a `providerPayload` value.
fn remote_payload(pd: &JsValue) -> Option<JsValue> {
    let JsValue::Object(_) = pd else { return None };
    let c = pd.get("openaiRemoteCompaction")?;
    let JsValue::Object(_) = c else { return None };
    let provider = c.get("provider")?.as_js_str().filter(|p| !p.0.is_empty())?;
    let JsValue::Array(items) = c.get("replacementHistory")? else {
        return None;
    };
    if !items.iter().all(|x| matches!(x, JsValue::Object(_))) {
        return None;
    }
    Some(JsValue::Object(vec![
        (
            JsStr::from("type"),
            JsValue::String(JsStr::from("openaiResponsesHistory")),
        ),
        (JsStr::from("provider"), JsValue::String(provider.clone())),
        (JsStr::from("items"), JsValue::Array(items.clone())),
    ]))
}

/// `getAnthropicCompactionPayload` as a `providerPayload` value.
fn anthropic_payload(pd: &JsValue) -> Option<JsValue> {
    let JsValue::Object(_) = pd else { return None };
    let c = pd.get("anthropicCompaction")?;
    let JsValue::Object(_) = c else { return None };
    let nonempty = |k: &str| {
        c.get(k)
            .and_then(JsValue::as_js_str)
            .filter(|s| !s.0.is_empty())
            .cloned()
    };
    let provider = nonempty("provider")?;
    let content = nonempty("content")?;
    let mut m = vec![
        (
            JsStr::from("type"),
            JsValue::String(JsStr::from("anthropicCompaction")),
        ),
        (JsStr::from("provider"), JsValue::String(provider)),
        (JsStr::from("content"), JsValue::String(content)),
    ];
    for k in ["encryptedContent", "filesText"] {
        if let Some(v) = nonempty(k) {
            m.push((JsStr::from(k), JsValue::String(v)));
        }
    }
    Some(JsValue::Object(m))
}

/// The latest valid notebook revision after the last reset boundary: (notebook entry, text).
fn context_notes(doc: &SessionDoc, path: &[usize]) -> Option<(usize, JsStr)> {
    for &i in path.iter().rev() {
        let e = &doc.entries[i];
        match e.etype {
            EntryType::ResetBoundary => return None,
            EntryType::Custom => {
                let line = doc.line(&e.line);
                if !raw_is_str(e.fields.get(line, "customType"), notes::CONTEXT_NOTES_TYPE) {
                    continue;
                }
                if let Some(data) = e.fields.value(line, "data") {
                    if let Some(text) = notes::valid_notes_text(&data) {
                        return Some((i, text.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Builds the context of `leaf` as omp's `buildSessionContext(entries, leafId, byId, options)`
/// does without `transcript`, after omp's load-time normalization. `blobs` resolves
/// snapcompact frames kept in the blob store (omp's `SessionManager.buildSessionContext()`);
/// `None` reports them as unavailable (the bare function).
pub fn build_omp_context(
    doc: &SessionDoc,
    leaf: LeafSel<'_>,
    blobs: Option<&dyn FrameBlobs>,
) -> SessionContext {
    let mut ctx = SessionContext {
        dialect: Dialect::Omp,
        messages: Vec::new(),
        thinking_level: None,
        model: ModelSource::None,
        models: Vec::new(),
        injected_ttsr_rules: Vec::new(),
        mode: None,
        service_tier: None,
        path: Vec::new(),
        cycle: false,
        empty: true,
        omp: Some(Box::new(OmpContext::empty())),
    };
    let leaf_idx = match leaf {
        LeafSel::Null => return ctx,
        LeafSel::Current => match doc.index.leaf {
            Some(i) => Some(i),
            None if doc.entries.is_empty() => None,
            None => return ctx,
        },
        LeafSel::Id(id) => doc
            .index
            .get(id)
            .or_else(|| doc.entries.len().checked_sub(1)),
    };
    let Some(leaf_idx) = leaf_idx else {
        return ctx;
    };
    ctx.empty = false;
    let walked = doc.index.path(doc, leaf_idx);
    ctx.cycle = walked.cycle;
    let path = walked.entries;
    let mut o = OmpContext::empty();

    // Settings, and the latest compaction.
    let mut explicit_default = false;
    let mut compaction: Option<usize> = None;
    let mut rules_seen: HashSet<Prim> = HashSet::new();
    for &i in &path {
        let e = &doc.entries[i];
        let line = doc.line(&e.line);
        let non_null = |k: &str| {
            e.fields
                .get(line, k)
                .filter(|(_, kind)| *kind != ValueKind::Null)
        };
        match e.etype {
            EntryType::ThinkingLevelChange => {
                ctx.thinking_level = Some(i);
                let level = non_null("thinkingLevel");
                o.thinking_level =
                    level.map_or_else(|| br#""off""#.to_vec(), |(r, _)| canon_bytes(r));
                o.configured_thinking_level = non_null("configured")
                    .or(level)
                    .map(|(r, _)| canon_bytes(r));
            }
            EntryType::ModelChange => {
                ctx.model = ModelSource::Change(i);
                let model = e.fields.get(line, "model");
                if raw_truthy(model) {
                    let role = non_null("role").and_then(|(r, _)| JsValue::parse(r).ok());
                    let key = role
                        .as_ref()
                        .map_or_else(|| JsStr::from("default"), to_js_string);
                    if role.as_ref().is_none_or_str("default") {
                        explicit_default = true;
                    }
                    let value = model.map(|(r, _)| canon_bytes(r)).unwrap_or_default();
                    set_model(&mut ctx, &mut o, key, value);
                }
            }
            EntryType::ServiceTierChange => {
                ctx.service_tier = Some(i);
                o.service_tier = coerce_service_tier(e.fields.value(line, "serviceTier").as_ref());
            }
            EntryType::Message => {
                let Some(f) = &e.message else { continue };
                if !raw_is_str(f.get(line, "role"), "assistant") {
                    continue;
                }
                ctx.model = ModelSource::Assistant(i);
                if !explicit_default {
                    let part = |k: &str| {
                        jsv::to_js_string_opt(
                            f.get(line, k)
                                .and_then(|(r, _)| JsValue::parse(r).ok())
                                .as_ref(),
                        )
                    };
                    let mut s = part("provider").0;
                    s.push(b'/');
                    s.extend_from_slice(&part("model").0);
                    let mut value = Vec::new();
                    write_js_str(&JsStr(s), &mut value);
                    set_model(&mut ctx, &mut o, JsStr::from("default"), value);
                }
            }
            EntryType::Compaction => compaction = Some(i),
            EntryType::TtsrInjection => match e.fields.value(line, "injectedRules").as_ref() {
                Some(JsValue::Array(rules)) => {
                    for r in rules {
                        push_rule(&mut ctx, &mut o, &mut rules_seen, r);
                    }
                }
                Some(JsValue::String(s)) => {
                    // A string iterates by code point.
                    let u = jsv::units(s);
                    let mut k = 0;
                    while k < u.len() {
                        let pair = (0xD800..0xDC00).contains(&u[k])
                            && u.get(k + 1).is_some_and(|l| (0xDC00..0xE000).contains(l));
                        let n = if pair { 2 } else { 1 };
                        push_rule(
                            &mut ctx,
                            &mut o,
                            &mut rules_seen,
                            &JsValue::String(from_units(&u[k..k + n])),
                        );
                        k += n;
                    }
                }
                _ => {}
            },
            EntryType::ModeChange => {
                ctx.mode = Some(i);
                o.mode = e.fields.get(line, "mode").map(|(r, _)| canon_bytes(r));
                o.mode_data = e.fields.get(line, "data").map(|(r, _)| canon_bytes(r));
            }
            _ => {}
        }
    }

    // Emission.
    let pos_of = |pred: &dyn Fn(usize, usize) -> bool| -> isize {
        path.iter()
            .enumerate()
            .position(|(p, &i)| pred(p, i))
            .map_or(-1, |p| p as isize)
    };
    let reset = path
        .iter()
        .rposition(|&i| doc.entries[i].etype == EntryType::ResetBoundary)
        .map_or(-1, |p| p as isize);
    let mut items: Vec<Item> = Vec::new();
    let cpos = compaction.map_or(-1, |c| {
        let cid = id_key(doc, c);
        pos_of(&|_, i| {
            doc.entries[i].etype == EntryType::Compaction && strict_eq(&id_key(doc, i), &cid)
        })
    });
    if reset >= 0 && reset > cpos {
        for &i in &path[(reset + 1) as usize..] {
            append(doc, i, &mut items);
        }
    } else if let Some(c) = compaction {
        let ce = &doc.entries[c];
        let cline = doc.line(&ce.line);
        let pd = ce.fields.value(cline, "preserveData");
        let remote = pd.as_ref().and_then(remote_payload);
        let anthropic = pd.as_ref().and_then(anthropic_payload);
        let fk_key = Prim::of_raw(ce.fields.get(cline, "firstKeptEntryId"));
        let fk_any = pos_of(&|_, i| strict_eq(&id_key(doc, i), &fk_key));
        let entry_ms = |i: usize| {
            let e = &doc.entries[i];
            date_ms(e.fields.value(doc.line(&e.line), "timestamp").as_ref())
        };
        let mut timestamp = entry_ms(c);
        if anthropic.is_some() {
            let first_retained = if fk_any >= 0 && fk_any < cpos {
                Some(path[fk_any as usize])
            } else {
                path.get((cpos + 1) as usize).copied()
            };
            if let Some(t) = first_retained.map(entry_ms).filter(|t| t.is_finite()) {
                timestamp = t - 1.0;
            }
        }
        let blocks = pd
            .as_ref()
            .and_then(|pd| snapcompact::history_blocks(pd, blobs))
            .filter(|b| !b.is_empty());
        let images: Option<Vec<JsValue>> = blocks
            .as_ref()
            .map(|b| {
                b.iter()
                    .filter(
                        |x| matches!(x.get("type"), Some(JsValue::String(s)) if s.0 == b"image"),
                    )
                    .cloned()
                    .collect()
            })
            .filter(|v: &Vec<JsValue>| !v.is_empty());
        let summary = CompactionSummary {
            entry: c,
            timestamp,
            provider_payload: remote.as_ref().or(anthropic.as_ref()).map(JsValue::to_json),
            blocks: blocks.map(|b| JsValue::Array(b).to_json()),
            images: images.map(|b| JsValue::Array(b).to_json()),
        };
        items.push(Item {
            msg: OmpMessage::CompactionSummary(Box::new(summary)),
            kind: Kind::Other,
        });

        let rollover = matches!(ce.fields.value(cline, "details"), Some(d @ JsValue::Object(_))
            if matches!(d.get("kind"), Some(JsValue::String(k)) if k.0 == b"experimental-context-rollover"));
        if rollover {
            let mut p = cpos - 1;
            while p > reset {
                let i = path[p as usize];
                if is_user_request(doc, i) {
                    if p < fk_any {
                        append(doc, i, &mut items);
                    }
                    break;
                }
                p -= 1;
            }
        }
        if remote.is_none() {
            let fk = pos_of(&|p, i| (p as isize) < cpos && strict_eq(&id_key(doc, i), &fk_key));
            if fk >= 0 {
                for &i in &path[fk as usize..cpos as usize] {
                    append(doc, i, &mut items);
                }
            }
        } else {
            let through = ce.fields.get(cline, "providerReplayThroughEntryId");
            if raw_truthy(through) {
                let key = Prim::of_raw(through);
                let rt = pos_of(&|_, i| strict_eq(&id_key(doc, i), &key));
                if rt >= 0 && rt < cpos {
                    for &i in &path[(rt + 1) as usize..cpos as usize] {
                        append(doc, i, &mut items);
                    }
                }
            }
        }
        for &i in &path[(cpos + 1) as usize..] {
            append(doc, i, &mut items);
        }
    } else {
        for &i in &path {
            append(doc, i, &mut items);
        }
    }

    // The notebook goes first.
    if let Some((notes_entry, text)) = context_notes(doc, &path) {
        if !text.0.is_empty() {
            let key = id_key(doc, notes_entry);
            if let Some(&src) = path.iter().find(|&&i| strict_eq(&id_key(doc, i), &key)) {
                let rendered = from_units(&notes::render_notes(&text));
                items.insert(
                    0,
                    Item {
                        msg: OmpMessage::ContextNotes {
                            entry: src,
                            text: rendered,
                        },
                        kind: Kind::Custom { interrupted: false },
                    },
                );
            }
        }
    }

    strip_dangling_tool_calls(doc, &mut items);
    drop_failed_turns(&mut items);

    // Copilot replay metadata on turns that were not rewritten otherwise.
    for item in &mut items {
        if let (OmpMessage::Stored(i), Kind::Assistant { sanitize: true, .. }) =
            (&item.msg, &item.kind)
        {
            let i = *i;
            if let Some(v) = payload_dom(doc, i, true) {
                item.msg = OmpMessage::Rewritten(i, v.to_json());
            }
        }
    }

    ctx.messages = items
        .iter()
        .filter_map(|it| match &it.msg {
            OmpMessage::Stored(i) | OmpMessage::Rewritten(i, _) => Some(CtxMessage::Message(*i)),
            OmpMessage::Custom(i) => Some(CtxMessage::Custom(*i)),
            OmpMessage::BranchSummary(i) => Some(CtxMessage::BranchSummary(*i)),
            OmpMessage::CompactionSummary(c) => Some(CtxMessage::CompactionSummary(c.entry)),
            OmpMessage::ContextNotes { .. } => None,
        })
        .collect();
    o.messages = items.into_iter().map(|it| it.msg).collect();
    ctx.path = path;
    ctx.omp = Some(Box::new(o));
    ctx
}

trait RoleExt {
    fn is_none_or_str(&self, s: &str) -> bool;
}
impl RoleExt for Option<&JsValue> {
    /// `(role ?? "default") === s` for `s == "default"`: a missing role, or exactly `s`.
    fn is_none_or_str(&self, s: &str) -> bool {
        match self {
            None => true,
            Some(JsValue::String(v)) => v.0 == s.as_bytes(),
            Some(_) => false,
        }
    }
}

/// `models[key] = value` (a `__proto__` key creates no own property).
fn set_model(ctx: &mut SessionContext, o: &mut OmpContext, key: JsStr, value: Vec<u8>) {
    if key.0 == b"__proto__" {
        return;
    }
    let lossy_key = key.to_string_lossy().into_owned();
    let lossy_value = match JsValue::parse(&value).as_ref() {
        Ok(JsValue::String(s)) => s.to_string_lossy().into_owned(),
        _ => String::from_utf8_lossy(&value).into_owned(),
    };
    match ctx.models.iter_mut().find(|(r, _)| *r == lossy_key) {
        Some(slot) => slot.1 = lossy_value,
        None => ctx.models.push((lossy_key, lossy_value)),
    }
    match o.models.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => o.models.push((key, value)),
    }
}

fn push_rule(ctx: &mut SessionContext, o: &mut OmpContext, seen: &mut HashSet<Prim>, r: &JsValue) {
    if let Some(p) = Prim::of_value(r) {
        if !seen.insert(p) {
            return;
        }
    }
    if let Some(s) = r.as_str_lossy() {
        ctx.injected_ttsr_rules.push(s.into_owned());
    }
    o.injected_ttsr_rules.push(r.to_json());
}

/// A message payload as a DOM, with omp's load-time Copilot sanitization applied when asked:
/// thinking signatures and the assistant-side `providerPayload` removed.
fn payload_dom(doc: &SessionDoc, i: usize, sanitize: bool) -> Option<JsValue> {
    let e = &doc.entries[i];
    let mut v = e.fields.value(doc.line(&e.line), "message")?;
    if sanitize {
        if let Some(JsValue::Array(blocks)) = v.get_mut("content") {
            for b in blocks.iter_mut() {
                if matches!(b.get("type"), Some(JsValue::String(t)) if t.0 == b"thinking") {
                    b.remove("thinkingSignature");
                }
            }
        }
        v.remove("providerPayload");
    }
    Some(v)
}

/// Strips tool calls whose result is not in the context from every assistant turn, with the
/// turn's redacted thinking and thinking signatures; a turn left empty is dropped.
fn strip_dangling_tool_calls(doc: &SessionDoc, items: &mut Vec<Item>) {
    let paired: HashSet<Prim> = items
        .iter()
        .filter_map(|it| match &it.kind {
            Kind::ToolResult(id) => id.clone(),
            _ => None,
        })
        .collect();
    let dangling = |b: &Block| {
        b.ty == BlockType::ToolCall && !b.id.as_ref().is_some_and(|id| paired.contains(id))
    };
    let mut k = items.len();
    while k > 0 {
        k -= 1;
        let (i, sanitize) = match (&items[k].msg, &items[k].kind) {
            (
                OmpMessage::Stored(i),
                Kind::Assistant {
                    blocks, sanitize, ..
                },
            ) if blocks.iter().any(dangling) => (*i, *sanitize),
            _ => continue,
        };
        let Some(mut v) = payload_dom(doc, i, sanitize) else {
            continue;
        };
        let mut empty = false;
        if let Some(JsValue::Array(content)) = v.get_mut("content") {
            content.retain(|b| {
                let ty = b
                    .get("type")
                    .and_then(JsValue::as_js_str)
                    .map(|t| t.0.as_slice());
                let id = b.get("id").map_or(Some(Prim::Undefined), Prim::of_value);
                let dangling_call =
                    ty == Some(b"toolCall") && !id.as_ref().is_some_and(|id| paired.contains(id));
                !dangling_call && ty != Some(b"redactedThinking")
            });
            for b in content.iter_mut() {
                let thinking =
                    matches!(b.get("type"), Some(JsValue::String(t)) if t.0 == b"thinking");
                if thinking && b.get("thinkingSignature").is_some_and(JsValue::is_truthy) {
                    b.remove("thinkingSignature");
                }
            }
            empty = content.is_empty();
        }
        if empty {
            items.remove(k);
            continue;
        }
        if let Kind::Assistant { blocks, .. } = &mut items[k].kind {
            blocks.retain(|b| !dangling(b) && b.ty != BlockType::RedactedThinking);
        }
        items[k].msg = OmpMessage::Rewritten(i, v.to_json());
    }
}

/// Drops aborted and errored assistant turns (with the tool results of their calls), unless an
/// interrupted-thinking note follows the turn.
fn drop_failed_turns(items: &mut Vec<Item>) {
    let mut k = items.len();
    while k > 0 {
        k -= 1;
        let Kind::Assistant { stop, blocks, .. } = &items[k].kind else {
            continue;
        };
        if *stop == Stop::Other {
            continue;
        }
        if matches!(
            items.get(k + 1),
            Some(Item {
                kind: Kind::Custom { interrupted: true },
                ..
            })
        ) {
            continue;
        }
        let calls: HashSet<Prim> = blocks
            .iter()
            .filter(|b| b.ty == BlockType::ToolCall)
            .filter_map(|b| b.id.clone())
            .collect();
        items.remove(k);
        if !calls.is_empty() {
            let mut j = items.len();
            while j > k {
                j -= 1;
                if matches!(&items[j].kind, Kind::ToolResult(Some(id)) if calls.contains(id)) {
                    items.remove(j);
                }
            }
        }
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
                canon(raw, out);
            }
        };
        let time = |out: &mut Vec<u8>| {
            out.extend_from_slice(br#","timestamp":"#);
            write_js_number(date_ms(e.fields.value(line, "timestamp").as_ref()), out);
            out.push(b'}');
        };
        match m {
            OmpMessage::Stored(_) => match e.fields.get(line, "message") {
                Some((raw, _)) => canon(raw, out),
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
                out.extend_from_slice(br#","timestamp":"#);
                write_js_number(c.timestamp, out);
                out.push(b'}');
            }
        }
    }

    /// Writes the `messages` array.
    pub fn write_messages(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        out.push(b'[');
        for (k, m) in self.messages.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            self.write_message(doc, m, out);
        }
        out.push(b']');
    }

    /// Writes the whole context in omp's key order (`messages, thinkingLevel,
    /// configuredThinkingLevel, serviceTier, models, injectedTtsrRules, mode, modeData`, the
    /// optional ones when set), with pi's `model` after `thinkingLevel`. `messages` is written
    /// by `write_messages` when given, else as omp has them.
    pub fn write_json(
        &self,
        ctx: &SessionContext,
        doc: &SessionDoc,
        out: &mut Vec<u8>,
        write_messages: Option<MessagesWriter<'_>>,
    ) {
        out.extend_from_slice(br#"{"messages":"#);
        match write_messages {
            Some(w) => w(ctx, doc, out),
            None => self.write_messages(doc, out),
        }
        out.extend_from_slice(br#","thinkingLevel":"#);
        out.extend_from_slice(&self.thinking_level);
        out.extend_from_slice(br#","model":"#);
        ctx.write_model(doc, out);
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
