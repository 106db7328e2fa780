//! `convertToLlm`: turns context messages into the messages a model API receives, as pi's
//! `convertToLlm` does (summaries wrapped in their prefix and suffix, `bashExecution` as a user
//! message, custom messages as user messages, unknown roles dropped). omp's own is in
//! `context::omp::llm`.
use super::{CtxMessage, PiContext};
use crate::doc::SessionDoc;
use crate::entry::Role;
use crate::json::{write_js_str, JsStr, JsValue};

/// pi's `COMPACTION_SUMMARY_PREFIX`.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's `COMPACTION_SUMMARY_SUFFIX`.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's `BRANCH_SUMMARY_PREFIX`.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's `BRANCH_SUMMARY_SUFFIX` (no newline before the tag, as in pi).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

use crate::js::to_string as js_to_string;

/// pi's `bashExecutionToText`.
pub(crate) fn bash_execution_text(m: &JsValue) -> JsStr {
    let mut t = b"Ran `".to_vec();
    js_to_string(m.get("command"), &mut t);
    t.extend_from_slice(b"`\n");
    match m.get("output") {
        Some(o) if o.is_truthy() => {
            t.extend_from_slice(b"```\n");
            js_to_string(Some(o), &mut t);
            t.extend_from_slice(b"\n```");
        }
        _ => t.extend_from_slice(b"(no output)"),
    }
    let truthy = |k: &str| m.get(k).is_some_and(JsValue::is_truthy);
    if truthy("cancelled") {
        t.extend_from_slice(b"\n\n(command cancelled)");
    } else {
        match m.get("exitCode") {
            None | Some(JsValue::Null) => {}
            Some(JsValue::Number(n)) if *n == 0.0 => {}
            Some(code) => {
                t.extend_from_slice(b"\n\nCommand exited with code ");
                js_to_string(Some(code), &mut t);
            }
        }
    }
    if truthy("truncated") && truthy("fullOutputPath") {
        t.extend_from_slice(b"\n\n[Output truncated. Full output: ");
        js_to_string(m.get("fullOutputPath"), &mut t);
        t.push(b']');
    }
    JsStr(t)
}

fn write_text_user(text: &JsStr, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"role":"user","content":[{"type":"text","text":"#);
    write_js_str(text, out);
    out.extend_from_slice(b"}]");
}

fn write_content(content: Option<&JsValue>, out: &mut Vec<u8>) {
    match content {
        None => {}
        Some(JsValue::String(s)) => {
            out.extend_from_slice(br#","content":[{"type":"text","text":"#);
            write_js_str(s, out);
            out.extend_from_slice(b"}]");
        }
        Some(v) => {
            out.extend_from_slice(br#","content":"#);
            out.extend_from_slice(&v.to_json());
        }
    }
}

fn summary_text(prefix: &str, summary: Option<&JsValue>, suffix: &str) -> JsStr {
    let mut t = prefix.as_bytes().to_vec();
    js_to_string(summary, &mut t);
    t.extend_from_slice(suffix.as_bytes());
    JsStr(t)
}

/// Writes pi's `convertToLlm(messages)` array for a context.
pub(crate) fn write_llm_messages(ctx: &PiContext, doc: &SessionDoc, out: &mut Vec<u8>) {
    out.push(b'[');
    let mut first = true;
    for &m in &ctx.messages {
        let mark = out.len();
        if !first {
            out.push(b',');
        }
        if write_llm_message(ctx, doc, m, out) {
            first = false;
        } else {
            out.truncate(mark);
        }
    }
    out.push(b']');
}

/// Writes one converted message; returns false (writing nothing useful) when pi drops it.
fn write_llm_message(ctx: &PiContext, doc: &SessionDoc, m: CtxMessage, out: &mut Vec<u8>) -> bool {
    let e = &doc.entries[m.entry()];
    let line = doc.line(&e.line);
    if let Some(rewritten) = ctx.rewritten(m) {
        // A message pi 1.5 changed on the way (null content, a context edit): converted from
        // what the context holds.
        return write_llm_value(rewritten, out);
    }
    match m {
        CtxMessage::CompactionSystem(_) => match e.fields.get(line, "systemMessage") {
            Some((raw, _)) => write_llm_value(raw, out),
            None => false,
        },
        CtxMessage::Message(_) => {
            let Some((raw, _)) = e.fields.get(line, "message") else {
                return false;
            };
            match &e.role {
                Some(Role::User | Role::Assistant | Role::ToolResult | Role::System) => {
                    match super::pi::null_content_read(doc, m.entry()) {
                        Some(v) => out.extend_from_slice(&v.to_json()),
                        None => crate::json::write_canonical(raw, out),
                    }
                    true
                }
                // bashExecution and custom messages are converted; other roles dropped.
                _ => write_llm_value(raw, out),
            }
        }
        CtxMessage::Custom(_) => {
            out.extend_from_slice(br#"{"role":"user""#);
            // pi 1.5 builds the custom message with `entry.content ?? []`.
            let content = match e.fields.value(line, "content") {
                None | Some(JsValue::Null) => JsValue::Array(Vec::new()),
                Some(v) => v,
            };
            write_content(Some(&content), out);
            out.extend_from_slice(br#","timestamp":"#);
            crate::json::write_js_number(e.date_ms(line), out);
            out.push(b'}');
            true
        }
        CtxMessage::BranchSummary(_) | CtxMessage::CompactionSummary(_) => {
            let (p, s) = if matches!(m, CtxMessage::BranchSummary(_)) {
                (BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX)
            } else {
                (COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX)
            };
            let summary = e.fields.value(line, "summary");
            write_text_user(&summary_text(p, summary.as_ref(), s), out);
            out.extend_from_slice(br#","timestamp":"#);
            crate::json::write_js_number(e.date_ms(line), out);
            out.push(b'}');
            true
        }
    }
}

/// `convertToLlm` of one message given as JSON (a rewritten message, or a compaction's
/// `systemMessage`): `system`, `user`, `assistant` and `toolResult` pass as they are; a
/// `custom` message becomes a user message; `branchSummary` / `compactionSummary` a user
/// message with the summary's prefix and suffix; `bashExecution` its text; other roles are
/// dropped.
fn write_llm_value(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(v) = JsValue::parse(raw) else {
        return false;
    };
    let role = v
        .get("role")
        .and_then(JsValue::as_js_str)
        .map(|r| r.0.clone());
    match role.as_deref() {
        Some(b"system" | b"user" | b"assistant" | b"toolResult") => {
            crate::json::write_canonical(raw, out);
            true
        }
        Some(b"custom") => {
            out.extend_from_slice(br#"{"role":"user""#);
            write_content(v.get("content"), out);
            write_message_timestamp(&v, out);
            out.push(b'}');
            true
        }
        // Whatever entry they came from (an extension's `appendMessage`, a compaction's
        // `systemMessage`): pi wraps `m.summary` with `+` (String() of any value).
        Some(b"branchSummary") | Some(b"compactionSummary") => {
            let (p, s) = if role.as_deref() == Some(b"branchSummary") {
                (BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX)
            } else {
                (COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX)
            };
            write_text_user(&summary_text(p, v.get("summary"), s), out);
            write_message_timestamp(&v, out);
            out.push(b'}');
            true
        }
        Some(b"bashExecution") => {
            if v.get("excludeFromContext").is_some_and(JsValue::is_truthy) {
                return false;
            }
            write_text_user(&bash_execution_text(&v), out);
            write_message_timestamp(&v, out);
            out.push(b'}');
            true
        }
        _ => false,
    }
}

fn write_message_timestamp(v: &JsValue, out: &mut Vec<u8>) {
    if let Some(ts) = v.get("timestamp") {
        out.extend_from_slice(br#","timestamp":"#);
        let mut tmp = Vec::new();
        crate::json::write_canonical(&ts.to_json(), &mut tmp);
        out.extend_from_slice(&tmp);
    }
}
