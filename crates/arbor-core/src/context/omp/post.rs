//! The post-processing half of omp's `buildSessionContext`: the context notebook put first,
//! tool calls without a result stripped, failed turns dropped, and Copilot replay metadata
//! removed from the turns left as they were stored.
use super::emit::{context_notes, id_key, Block, BlockType, Item, Kind, Stop};
use super::jsv::{from_units, strict_eq, Prim};
use super::{notes, OmpMessage};
use crate::doc::SessionDoc;
use crate::json::JsValue;
use std::collections::HashSet;

/// Runs the passes over the emitted messages of `path`, in omp's order.
pub(super) fn finish(doc: &SessionDoc, path: &[usize], items: &mut Vec<Item>) {
    // The notebook goes first.
    if let Some((notes_entry, text)) = context_notes(doc, path) {
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

    strip_dangling_tool_calls(doc, items);
    drop_failed_turns(items);

    // Copilot replay metadata on turns that were not rewritten otherwise.
    for item in items {
        if let (OmpMessage::Stored(i), Kind::Assistant { sanitize: true, .. }) =
            (&item.msg, &item.kind)
        {
            let i = *i;
            if let Some(v) = payload_dom(doc, i, true) {
                item.msg = OmpMessage::Rewritten(i, v.to_json());
            }
        }
    }
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
