//! Human-readable output: the tree and the conversation.
use arbor_core::context::{CtxMessage, SessionContext};
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::json::JsValue;
use arbor_core::tree::Tree;
use std::io::Write;

/// One line of text, control characters folded to spaces, cut to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let folded: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let t = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > max {
        let cut: String = t.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        t
    }
}

/// The text of message content: a string, or the text blocks joined.
pub fn content_text(v: Option<&JsValue>) -> String {
    match v {
        Some(JsValue::String(s)) => s.to_string_lossy().into_owned(),
        Some(JsValue::Array(blocks)) => {
            let mut parts = Vec::new();
            for b in blocks {
                match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                    Some("text") => parts.push(
                        b.get("text")
                            .and_then(|t| t.as_str_lossy())
                            .unwrap_or_default()
                            .into_owned(),
                    ),
                    Some("thinking") => parts.push(format!(
                        "[thinking] {}",
                        b.get("thinking")
                            .and_then(|t| t.as_str_lossy())
                            .unwrap_or_default()
                    )),
                    Some("toolCall") => parts.push(format!(
                        "[tool call {}] {}",
                        b.get("name")
                            .and_then(|t| t.as_str_lossy())
                            .unwrap_or_default(),
                        b.get("arguments")
                            .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                            .unwrap_or_default()
                    )),
                    Some("image") => parts.push("[image]".into()),
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
    let e = &doc.entries[i];
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
            let text = e
                .message
                .as_ref()
                .map(|m| content_text(m.value(line, "content").as_ref()))
                .unwrap_or_default();
            let text = if text.is_empty() {
                e.message_str(line, "command")
                    .map(|c| format!("$ {c}"))
                    .unwrap_or_default()
            } else {
                text
            };
            format!("{role}: {}", one_line(&text, 70))
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
        EntryType::Label => format!("label {} → {}", s("targetId"), s("label")),
        EntryType::SessionInfo => format!("name: {}", s("name")),
        other => other.name().to_string(),
    }
}

/// Prints the tree: one entry per line, indented only where the tree branches.
pub fn print_tree(doc: &SessionDoc, tree: &Tree, out: &mut impl Write) -> std::io::Result<()> {
    let leaf = doc.index.leaf;
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let e = &doc.entries[i];
        let mark = if Some(i) == leaf { "*" } else { " " };
        let label =
            e.id.as_deref()
                .and_then(|id| doc.index.labels.get(id))
                .map(|l| format!("  [{l}]"))
                .unwrap_or_default();
        writeln!(
            out,
            "{}{mark} {} {}{label}",
            "  ".repeat(depth),
            e.id.as_deref().unwrap_or("(no id)"),
            describe(doc, i)
        )?;
        let kids = &tree.children[i];
        let child_depth = if kids.len() > 1 { depth + 1 } else { depth };
        for &k in kids.iter().rev() {
            stack.push((k, child_depth));
        }
    }
    Ok(())
}

/// Prints the conversation of a context.
pub fn print_conversation(
    doc: &SessionDoc,
    ctx: &SessionContext,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for &m in &ctx.messages {
        let e = &doc.entries[m.entry()];
        let line = doc.line(&e.line);
        let (head, body) = match m {
            CtxMessage::Message(_) => {
                let msg = e.fields.value(line, "message").unwrap_or(JsValue::Null);
                let role = msg
                    .get("role")
                    .and_then(|r| r.as_str_lossy())
                    .unwrap_or_default()
                    .into_owned();
                let mut body = content_text(msg.get("content"));
                if role == "bashExecution" {
                    let g = |k: &str| {
                        msg.get(k)
                            .and_then(|v| v.as_str_lossy())
                            .unwrap_or_default()
                            .into_owned()
                    };
                    body = format!("$ {}\n{}", g("command"), g("output"));
                }
                let extra = match role.as_str() {
                    "assistant" => format!(
                        " ({})",
                        msg.get("model")
                            .and_then(|v| v.as_str_lossy())
                            .unwrap_or_default()
                    ),
                    "toolResult" => format!(
                        " ({})",
                        msg.get("toolName")
                            .and_then(|v| v.as_str_lossy())
                            .unwrap_or_default()
                    ),
                    _ => String::new(),
                };
                (format!("{role}{extra}"), body)
            }
            CtxMessage::Custom(_) => (
                format!(
                    "custom {}",
                    e.fields.str(line, "customType").unwrap_or_default()
                ),
                content_text(e.fields.value(line, "content").as_ref()),
            ),
            CtxMessage::BranchSummary(_) => (
                "branch summary".into(),
                e.fields
                    .str(line, "summary")
                    .unwrap_or_default()
                    .into_owned(),
            ),
            CtxMessage::CompactionSummary(_) => (
                "compaction summary".into(),
                e.fields
                    .str(line, "summary")
                    .unwrap_or_default()
                    .into_owned(),
            ),
        };
        writeln!(
            out,
            "── {head} · {} · {}",
            e.id.as_deref().unwrap_or(""),
            e.timestamp.as_deref().unwrap_or("")
        )?;
        writeln!(out, "{}\n", body.trim_end())?;
    }
    Ok(())
}
