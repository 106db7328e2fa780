//! The emission half of omp's `buildSessionContext`: which path entries become messages, after
//! the latest reset boundary or compaction (with its summary message, provider replay payload
//! and snapcompact archive), and what each message entry tells the post-processing passes.
use super::jsv::{raw_is_str, raw_js_str, strict_eq, Prim};
use super::{notes, snapcompact, CompactionSummary, FrameBlobs, OmpMessage, OmpVersion};
use crate::doc::SessionDoc;
use crate::entry::{EntryType, Fields};
use crate::js;
use crate::json::{self, JsStr, JsValue, ValueKind};

/// What the post-processing passes need to know about a message.
#[derive(Debug)]
pub(super) enum Kind {
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
pub(super) enum Stop {
    Error,
    Aborted,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockType {
    ToolCall,
    RedactedThinking,
    Thinking,
    Other,
}

#[derive(Debug, Clone)]
pub(super) struct Block {
    pub(super) ty: BlockType,
    pub(super) id: Option<Prim>,
}

pub(super) struct Item {
    pub(super) msg: OmpMessage,
    pub(super) kind: Kind,
}

pub(super) const INTERRUPTED_THINKING: &str = "interrupted-thinking";
pub(super) const DEFAULT_CUSTOM_TYPE: &str = "custom-message";

/// The messages of `path` from the latest reset boundary or compaction on, before
/// post-processing. `compaction` is the latest compaction on the path.
pub(super) fn emit(
    doc: &SessionDoc,
    path: &[usize],
    compaction: Option<usize>,
    blobs: Option<&dyn FrameBlobs>,
    version: OmpVersion,
) -> Vec<Item> {
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
            e.date_ms(doc.line(&e.line))
        };
        // 18.3: an Anthropic replay compaction whose `firstKeptEntryId` is "" retains what
        // follows its `providerReplayThroughEntryId` (the position of that entry, -1 if none).
        let snapshot = if version >= OmpVersion::V18_3
            && raw_js_str(ce.fields.get(cline, "firstKeptEntryId")).is_some_and(|s| s.0.is_empty())
        {
            let through = ce.fields.get(cline, "providerReplayThroughEntryId");
            if js::truthy_raw(through) {
                let key = Prim::of_raw(through);
                pos_of(&|_, i| strict_eq(&id_key(doc, i), &key))
            } else {
                -1
            }
        } else {
            -1
        };
        let mut timestamp = entry_ms(c);
        let mut history_rewrite_at = None;
        if anthropic.is_some() {
            // The first retained entry's time less 1 ms: 18.2 dates the summary with it, 18.3
            // keeps the compaction's time and passes it as `historyRewriteAt`.
            let first_retained = if fk_any >= 0 && fk_any < cpos {
                Some(path[fk_any as usize])
            } else if snapshot >= 0 && snapshot < cpos - 1 {
                Some(path[(snapshot + 1) as usize])
            } else {
                path.get((cpos + 1) as usize).copied()
            };
            if let Some(t) = first_retained.map(entry_ms).filter(|t| t.is_finite()) {
                match version {
                    OmpVersion::V18_2 => timestamp = t - 1.0,
                    OmpVersion::V18_3 => history_rewrite_at = Some(t - 1.0),
                }
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
            history_rewrite_at,
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
            let start = match () {
                _ if fk >= 0 => fk,
                _ if anthropic.is_some() && snapshot >= 0 => snapshot + 1,
                _ => -1,
            };
            if start >= 0 && start < cpos {
                for &i in &path[start as usize..cpos as usize] {
                    append(doc, i, &mut items);
                }
            }
        } else {
            let through = ce.fields.get(cline, "providerReplayThroughEntryId");
            if js::truthy_raw(through) {
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
        for &i in path {
            append(doc, i, &mut items);
        }
    }
    items
}

/// Reads the blocks of an assistant's `content` array: their types and ids, and whether any
/// has content (omp's `isEmptyErrorTurn` test; `sanitize`: the thinking signatures are gone).
fn scan_blocks(content: &[u8], sanitize: bool) -> (Vec<Block>, bool) {
    let mut blocks = Vec::new();
    let mut any_content = false;
    for r in crate::json::array_items(content) {
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
        let str_has_text = |k: &str| raw_js_str(get(k)).is_some_and(|s| js::has_non_whitespace(&s));
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
        if js::truthy_raw(f.get(line, "retryRecovery"))
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
pub(super) fn custom_type(f: &Fields, line: &[u8]) -> JsStr {
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
pub(super) fn id_key(doc: &SessionDoc, i: usize) -> Option<Prim> {
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
        EntryType::BranchSummary if js::truthy_raw(e.fields.get(line, "summary")) => {
            items.push(Item {
                msg: OmpMessage::BranchSummary(i),
                kind: Kind::Other,
            });
        }
        _ => {}
    }
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
pub(super) fn context_notes(doc: &SessionDoc, path: &[usize]) -> Option<(usize, JsStr)> {
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
