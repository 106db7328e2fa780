//! `arbor show` for a person: the entries on the path from the root to the leaf (or, with
//! `--context`, the messages the model sees), each under a heading that says who speaks,
//! with errors shown as errors and long tool output and thinking folded.
use crate::cli::ShowOpts;
use crate::term::{Out, Paint, Term};
use arbor_core::context::{CtxMessage, SessionContext};
use arbor_core::doc::SessionDoc;
use arbor_core::entry::EntryType;
use arbor_core::json::JsValue;
use arbor_view::one_line;
use std::collections::{HashMap, HashSet};

/// Lines of a tool result or bash output shown before the rest is folded.
const TOOL_LINES: usize = 8;
/// Lines of thinking shown before the rest is folded.
const THINKING_LINES: usize = 3;

/// Where the pieces of one message go.
struct Printer<'a> {
    opts: &'a ShowOpts,
    term: &'a Term,
}

fn str_of(v: Option<&JsValue>) -> String {
    v.and_then(|v| v.as_str_lossy())
        .map(|s| s.into_owned())
        .unwrap_or_default()
}

/// `2026-01-01T10:00:05.123Z` as `2026-01-01 10:00:05`.
fn when(ts: Option<&str>) -> String {
    ts.map(|t| t.get(..19).unwrap_or(t).replace('T', " "))
        .unwrap_or_default()
}

impl Printer<'_> {
    fn heading(&self, out: &mut Out, p: Paint, what: &str, id: &str, ts: &str) {
        out.paint(Paint::Dim, "── ").paint(p, what);
        if !id.is_empty() {
            out.paint(Paint::Dim, " · ").paint(Paint::Id, id);
        }
        if !ts.is_empty() {
            out.paint(Paint::Dim, &format!(" · {ts}"));
        }
        out.nl();
    }

    /// `text` with at most `keep` lines unless `--full`, the rest counted.
    fn folded(&self, out: &mut Out, text: &str, keep: usize, p: Option<Paint>, indent: &str) {
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        let lines: Vec<&str> = text.lines().collect();
        let n = if self.opts.full {
            lines.len()
        } else {
            keep.min(lines.len())
        };
        // On a screen, long lines are broken at spaces (the terminal would break words).
        let room = self
            .term
            .sized
            .then(|| self.term.width.saturating_sub(crate::term::width(indent)));
        for l in &lines[..n] {
            let pieces = match room {
                Some(room) => crate::term::wrap(&arbor_view::sanitize_text(l), room),
                None => vec![l.to_string()],
            };
            for piece in &pieces {
                out.put(indent);
                match p {
                    Some(p) => out.paint(p, piece),
                    None => out.put(piece),
                };
                out.nl();
            }
        }
        if n < lines.len() {
            out.put(indent)
                .paint(
                    Paint::Dim,
                    &format!("… {} more lines (--full)", lines.len() - n),
                )
                .nl();
        }
    }

    /// The body of a message's `content`: text, folded thinking, tool calls, images.
    fn content(&self, out: &mut Out, content: Option<&JsValue>) {
        match content {
            Some(JsValue::String(s)) => {
                self.folded(out, &s.to_string_lossy(), usize::MAX, None, "");
            }
            Some(JsValue::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
                        Some("text") => {
                            self.folded(out, &str_of(b.get("text")), usize::MAX, None, "")
                        }
                        Some("thinking") if !self.opts.no_thinking => {
                            let t = str_of(b.get("thinking"));
                            if !t.trim().is_empty() {
                                out.paint(Paint::Tool, "▸ thinking").nl();
                                self.folded(out, &t, THINKING_LINES, Some(Paint::Dim), "  ");
                            }
                        }
                        Some("toolCall") if !self.opts.no_tools => {
                            let args = b
                                .get("arguments")
                                .map(|a| String::from_utf8_lossy(&a.to_json()).into_owned())
                                .unwrap_or_default();
                            let args = if self.opts.full {
                                args
                            } else {
                                crate::term::fit(
                                    &one_line(&args, 2000),
                                    self.term.width.saturating_sub(20).max(30),
                                )
                            };
                            out.paint(
                                Paint::Tool,
                                &format!("▸ tool call {}", str_of(b.get("name"))),
                            )
                            .put(" ")
                            .paint(Paint::Dim, &args)
                            .nl();
                        }
                        Some("image") => {
                            // A blob reference still in place: its blob is not here (a
                            // session pulled before its blob arrived).
                            let data = str_of(b.get("data"));
                            match arbor_view::unresolved_image(&data) {
                                Some(note) => out.paint(Paint::Warn, &format!("[{note}]")).nl(),
                                None => out.paint(Paint::Dim, "[image]").nl(),
                            };
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A message (as stored, or as the context holds it). `false`: left out (`--no-tools`).
    fn message(
        &self,
        out: &mut Out,
        msg: &JsValue,
        id: &str,
        ts: &str,
        note: Option<String>,
    ) -> bool {
        let role = str_of(msg.get("role"));
        let is_tool = matches!(role.as_str(), "toolResult" | "bashExecution");
        if is_tool && self.opts.no_tools {
            return false;
        }
        let mut what = match role.as_str() {
            "assistant" => {
                let model = str_of(msg.get("model"));
                if model.is_empty() {
                    "assistant".to_string()
                } else {
                    format!("assistant {model}")
                }
            }
            "toolResult" => format!("tool result {}", str_of(msg.get("toolName"))),
            "bashExecution" => "bash".to_string(),
            "" => "message".to_string(),
            r => r.to_string(),
        };
        let stop = str_of(msg.get("stopReason"));
        let error = match role.as_str() {
            "assistant" if matches!(stop.as_str(), "error" | "aborted") => {
                let m = str_of(msg.get("errorMessage"));
                Some(if m.is_empty() {
                    stop.clone()
                } else {
                    format!("{stop}: {m}")
                })
            }
            "toolResult" if matches!(msg.get("isError"), Some(JsValue::Bool(true))) => {
                Some("error".to_string())
            }
            "bashExecution" if matches!(msg.get("exitCode"), Some(JsValue::Number(n)) if *n != 0.0) => {
                Some(format!("exit code {}", str_of(msg.get("exitCode")).trim()))
            }
            _ => None,
        };
        if let Some(n) = note {
            what.push_str(&format!(" · {n}"));
        }
        let paint = match (role.as_str(), &error) {
            (_, Some(_)) => Paint::Error,
            ("user", _) => Paint::User,
            ("assistant", _) => Paint::Assistant,
            ("system", _) => Paint::Summary,
            _ => Paint::Tool,
        };
        self.heading(out, paint, &what, id, ts);
        if let Some(e) = &error {
            out.paint(Paint::Error, &format!("✗ {e}")).nl();
        }
        match role.as_str() {
            "toolResult" => {
                let text = arbor_view::content_text(msg.get("content"));
                self.folded(out, &text, TOOL_LINES, None, "");
            }
            "bashExecution" => {
                out.paint(Paint::Tool, &format!("$ {}", str_of(msg.get("command"))))
                    .nl();
                self.folded(out, &str_of(msg.get("output")), TOOL_LINES, None, "");
            }
            "system" => {
                self.content(out, msg.get("content"));
                if let Some(JsValue::Object(sections)) = msg.get("sections") {
                    for (name, v) in sections {
                        out.paint(Paint::Dim, &format!("[section {}]", name.to_string_lossy()))
                            .nl();
                        self.folded(
                            out,
                            &arbor_view::content_text(Some(v)),
                            usize::MAX,
                            None,
                            "",
                        );
                    }
                }
                for (key, word) in [
                    ("toolsAdded", "tools added"),
                    ("toolsRemoved", "tools removed"),
                ] {
                    if let Some(JsValue::Array(tools)) = msg.get(key) {
                        let names: Vec<String> =
                            tools.iter().map(|t| str_of(t.get("name"))).collect();
                        out.paint(Paint::Dim, &format!("[{word}: {}]", names.join(", ")))
                            .nl();
                    }
                }
            }
            _ => self.content(out, msg.get("content")),
        }
        out.nl();
        true
    }
}

/// Prints the whole path to the leaf: every entry in order, the messages in full (folded),
/// the other entries one line each; the context's boundaries (what a compaction replaced, what
/// a context edit changed) said where they stand.
pub fn render_path(
    doc: &SessionDoc,
    path: &[usize],
    ctx: &SessionContext,
    opts: &ShowOpts,
    term: &Term,
    out: &mut Out,
) {
    let p = Printer { opts, term };
    let in_ctx: HashSet<usize> = ctx.outline().iter().map(CtxMessage::entry).collect();
    let edits: HashMap<usize, usize> = ctx
        .outline()
        .iter()
        .filter_map(|&m| ctx.edited_by(m).map(|e| (m.entry(), e)))
        .collect();
    let latest_compaction = ctx.outline().iter().find_map(|m| match m {
        CtxMessage::CompactionSummary(i) => Some(*i),
        _ => None,
    });
    // What the model sees of an edited message (pi 1.5's context edits).
    let edited_json: HashMap<usize, JsValue> = if edits.is_empty() {
        HashMap::new()
    } else {
        ctx.outline_json(doc)
            .into_iter()
            .filter(|(m, _)| edits.contains_key(&m.entry()))
            .filter_map(|(m, j)| JsValue::parse(&j).ok().map(|v| (m.entry(), v)))
            .collect()
    };
    // Removals: the last context edit on the path with a `null` replacement, by target.
    let mut removed_by: HashMap<String, usize> = HashMap::new();
    for &k in path {
        let e = &doc.entries()[k];
        if e.etype != EntryType::ContextEdit {
            continue;
        }
        let line = doc.line(&e.line);
        if let Some(t) = e.fields.str(line, "targetId") {
            let null = matches!(
                e.fields.get(line, "replacement"),
                Some((_, arbor_core::json::ValueKind::Null))
            );
            if null {
                removed_by.insert(t.into_owned(), k);
            } else {
                removed_by.remove(t.as_ref());
            }
        }
    }
    for &i in path {
        let e = &doc.entries()[i];
        let line = doc.line(&e.line);
        let id = e.id.as_deref().unwrap_or("");
        let ts = when(e.timestamp.as_deref());
        let id_of = |k: usize| doc.entries()[k].id.as_deref().unwrap_or("").to_string();
        match &e.etype {
            EntryType::Message => {
                if let Some(&by) = removed_by.get(id).filter(|_| !in_ctx.contains(&i)) {
                    let msg = e.fields.value(line, "message").unwrap_or(JsValue::Null);
                    let what = format!(
                        "{} · removed from the context by {}",
                        str_of(msg.get("role")),
                        id_of(by)
                    );
                    p.heading(out, Paint::Dim, &what, id, &ts);
                    out.nl();
                    continue;
                }
                let stored = || e.fields.value(line, "message").unwrap_or(JsValue::Null);
                let (msg, note) = match (edits.get(&i), in_ctx.contains(&i)) {
                    (Some(&by), _) => (
                        edited_json.get(&i).cloned().unwrap_or_else(stored),
                        Some(format!("edited by {}", id_of(by))),
                    ),
                    (None, false) => (stored(), Some("not in the context".to_string())),
                    (None, true) => (stored(), None),
                };
                p.message(out, &msg, id, &ts, note);
            }
            EntryType::Compaction => {
                let summary = e.fields.str(line, "summary").unwrap_or_default();
                let kept = e.fields.str(line, "firstKeptEntryId").unwrap_or_default();
                let current = Some(i) == latest_compaction;
                let what = if current {
                    format!(
                        "compaction · the model sees this summary instead of the entries above{}",
                        if kept.is_empty() {
                            String::new()
                        } else {
                            format!(" (from {kept} on kept)")
                        }
                    )
                } else {
                    "compaction (an earlier one; a later compaction replaced it)".to_string()
                };
                p.heading(out, Paint::Summary, &what, id, &ts);
                p.folded(out, &summary, usize::MAX, None, "");
                out.nl();
            }
            EntryType::BranchSummary => {
                let summary = e.fields.str(line, "summary").unwrap_or_default();
                p.heading(out, Paint::Summary, "branch summary", id, &ts);
                p.folded(out, &summary, usize::MAX, None, "");
                out.nl();
            }
            EntryType::CustomMessage => {
                let ct = e.fields.str(line, "customType").unwrap_or_default();
                if let Some(&by) = removed_by.get(id).filter(|_| !in_ctx.contains(&i)) {
                    let what = format!(
                        "custom message {ct} · removed from the context by {}",
                        id_of(by)
                    );
                    p.heading(out, Paint::Dim, &what, id, &ts);
                    out.nl();
                    continue;
                }
                let (content, what) = match edits.get(&i) {
                    Some(&by) => (
                        edited_json.get(&i).and_then(|m| m.get("content").cloned()),
                        format!("custom message {ct} · edited by {}", id_of(by)),
                    ),
                    None => (
                        e.fields.value(line, "content"),
                        format!("custom message {ct}"),
                    ),
                };
                p.heading(out, Paint::Tool, &what, id, &ts);
                p.content(out, content.as_ref());
                out.nl();
            }
            _ => {
                out.paint(
                    Paint::Dim,
                    &format!("·· {} · {id}", arbor_view::describe(doc, i)),
                )
                .nl();
            }
        }
    }
}

/// Prints what the model sees: the context's messages (after compactions and context edits).
pub fn render_context(
    doc: &SessionDoc,
    ctx: &SessionContext,
    opts: &ShowOpts,
    term: &Term,
    out: &mut Out,
) {
    let p = Printer { opts, term };
    for (m, json) in ctx.outline_json(doc) {
        let e = &doc.entries()[m.entry()];
        let id = e.id.as_deref().unwrap_or("");
        let ts = when(e.timestamp.as_deref());
        let msg = JsValue::parse(&json).unwrap_or(JsValue::Null);
        match m {
            CtxMessage::CompactionSummary(_) => {
                p.heading(out, Paint::Summary, "compaction summary", id, &ts);
                p.folded(out, &str_of(msg.get("summary")), usize::MAX, None, "");
                out.nl();
            }
            CtxMessage::BranchSummary(_) => {
                p.heading(out, Paint::Summary, "branch summary", id, &ts);
                p.folded(out, &str_of(msg.get("summary")), usize::MAX, None, "");
                out.nl();
            }
            CtxMessage::Custom(_) => {
                let ct = str_of(msg.get("customType"));
                p.heading(out, Paint::Tool, &format!("custom {ct}"), id, &ts);
                p.content(out, msg.get("content"));
                out.nl();
            }
            CtxMessage::CompactionSystem(_) => {
                p.message(out, &msg, id, &ts, Some("as of the compaction".into()));
            }
            CtxMessage::Message(_) => {
                let note = ctx.edited_by(m).map(|by| {
                    format!(
                        "edited by {}",
                        doc.entries()[by].id.as_deref().unwrap_or("")
                    )
                });
                p.message(out, &msg, id, &ts, note);
            }
        }
    }
}
