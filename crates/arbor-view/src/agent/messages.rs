//! A window of the messages on the path from the root to a leaf ([`messages_window`]).
use super::{entry_index, id_of, leaf_through, AgentError};
use crate::render::{content_text_with, one_line, TextOpts};
use arbor_core::doc::SessionDoc;
use arbor_core::entry::EntryType;
use arbor_core::json::JsValue;

/// Which way a window goes from where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Toward the root: the start and the messages before it.
    #[default]
    Older,
    /// Toward the leaf: the start and the messages after it.
    Newer,
}

/// What [`messages_window`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowOpts<'a> {
    /// The path through this entry (the current path when the entry is on it, otherwise the
    /// path to the newest leaf below it), and without `offset` the start: an entry that is
    /// no message (a label, a model change) starts at the nearest message in `direction`.
    pub entry: Option<&'a str>,
    /// Start at this offset on the path (0 is the oldest message; it wins over `entry`'s
    /// start). Without `entry` nor `offset`: the newest message (`Older`) or the oldest
    /// (`Newer`).
    pub offset: Option<usize>,
    /// Which way from the start.
    pub direction: Direction,
    /// At most this many messages.
    pub limit: usize,
    /// At most about this many characters of text in all (the first message is always
    /// given, its text cut to the budget when longer).
    pub budget: usize,
    /// Tool results' and bash output in full; otherwise folded to their size and first
    /// line, and tool calls' arguments to one line of 500 characters.
    pub tool_output: bool,
    /// Thinking in full; otherwise folded to its size.
    pub thinking: bool,
}

impl Default for WindowOpts<'_> {
    /// The newest 20 messages of the current path, 40,000 characters at most, folded.
    fn default() -> Self {
        WindowOpts {
            entry: None,
            offset: None,
            direction: Direction::Older,
            limit: 20,
            budget: 40_000,
            tool_output: false,
            thinking: false,
        }
    }
}

/// One message of a window.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowMessage {
    /// Its position among the path's messages (0 is the oldest).
    pub offset: usize,
    /// The entry's id.
    pub entry_id: String,
    /// Who speaks: `user`, `assistant`, `toolResult`, `bashExecution`, `system`, `custom`
    /// (a custom message), `branchSummary` or `compactionSummary`.
    pub role: String,
    /// The entry's timestamp (ISO 8601), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// An assistant's model, a tool result's tool, a custom message's type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An assistant turn that ended in an error or was aborted, a tool result marked as an
    /// error, a command that exited with a non-zero code: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The text, with what was folded or left out said in brackets (`[thinking: 1200
    /// chars]`, `[tool call NAME] ARGS`, `[image: image/png, 5120 bytes]`).
    pub text: String,
    /// The text's length in characters before the budget cut it (only when it did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_from: Option<usize>,
}

/// A window of the messages of one path.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageWindow {
    /// The id of the leaf the path goes to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    /// Whether that leaf is the session's current one.
    pub current: bool,
    /// How many messages the path has.
    pub total: usize,
    /// The messages, oldest first.
    pub messages: Vec<WindowMessage>,
    /// Continue toward the root from this offset (direction `older`): none at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub older: Option<usize>,
    /// Continue toward the leaf from this offset (direction `newer`): none at the leaf.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<usize>,
}

/// Whether entry `i` is a message of the conversation (what a window lists).
fn is_message(doc: &SessionDoc, i: usize) -> bool {
    matches!(
        doc.entries()[i].etype,
        EntryType::Message
            | EntryType::CustomMessage
            | EntryType::BranchSummary
            | EntryType::Compaction
    )
}

/// A window of the messages on a path (see [`WindowOpts`]), oldest first, with the offsets
/// to continue either way: walking a path with `older` (or `newer`) until it is `None`
/// gives every message exactly once.
///
/// # Errors
/// [`AgentError::NoEntry`] for an unknown `entry`, [`AgentError::Offset`] for an offset
/// past the end.
pub fn messages_window(
    doc: &SessionDoc,
    opts: &WindowOpts<'_>,
) -> Result<MessageWindow, AgentError> {
    let at = opts.entry.map(|id| entry_index(doc, id)).transpose()?;
    let leaf = match at {
        Some(i) => Some(leaf_through(doc, i)),
        None => doc.index().leaf,
    };
    let path = leaf
        .map(|l| doc.index().path(doc, l).entries)
        .unwrap_or_default();
    let msgs: Vec<usize> = path
        .iter()
        .copied()
        .filter(|&i| is_message(doc, i))
        .collect();
    let total = msgs.len();
    let older = opts.direction == Direction::Older;
    let start: Option<usize> = match (at, opts.offset) {
        (_, Some(o)) if o >= total && !(o == 0 && total == 0) => {
            return Err(AgentError::Offset { offset: o, total });
        }
        (_, Some(o)) => Some(o).filter(|&o| o < total),
        (Some(i), None) => {
            // The entry's place on the path, then the nearest message that way.
            let pos = path.iter().position(|&p| p == i).unwrap_or(0);
            let before = path[..pos].iter().filter(|&&p| is_message(doc, p)).count();
            if is_message(doc, i) {
                Some(before)
            } else if older {
                before.checked_sub(1)
            } else {
                Some(before).filter(|&b| b < total)
            }
        }
        (None, None) if older => total.checked_sub(1),
        (None, None) => Some(0).filter(|_| total > 0),
    };
    let text_opts = TextOpts {
        thinking: opts.thinking,
        tool_args: (!opts.tool_output).then_some(500),
        image_sizes: true,
    };
    let mut out: Vec<WindowMessage> = Vec::new();
    let mut used = 0usize;
    if let Some(s) = start {
        let order: Box<dyn Iterator<Item = usize>> = if older {
            Box::new((0..=s).rev())
        } else {
            Box::new(s..total)
        };
        for k in order {
            if out.len() >= opts.limit.max(1) {
                break;
            }
            let mut m = message(doc, msgs[k], k, &text_opts, opts.tool_output);
            let chars = m.text.chars().count();
            if !out.is_empty() && used + chars > opts.budget {
                break;
            }
            if chars > opts.budget {
                m.text = m.text.chars().take(opts.budget).collect();
                m.text.push_str(&format!(
                    "\n[… {} more characters left out by the budget]",
                    chars - opts.budget
                ));
                m.cut_from = Some(chars);
            }
            used += chars.min(opts.budget);
            out.push(m);
        }
    }
    if older {
        out.reverse();
    }
    let first = out.first().map(|m| m.offset);
    let last = out.last().map(|m| m.offset);
    Ok(MessageWindow {
        leaf: leaf.map(|l| id_of(doc, l)),
        current: leaf.is_some() && leaf == doc.index().leaf,
        total,
        older: first.and_then(|f| f.checked_sub(1)),
        newer: last.map(|l| l + 1).filter(|&n| n < total),
        messages: out,
    })
}

/// Folds a tool's output unless `full`: its size and first line.
fn fold_output(text: String, full: bool) -> String {
    if full || text.chars().count() <= 200 {
        return text;
    }
    format!(
        "[output: {} chars, {} lines] {}",
        text.chars().count(),
        text.lines().count(),
        one_line(&text, 200)
    )
}

/// Entry `i`, the `k`-th message of its path, as a window shows it.
fn message(doc: &SessionDoc, i: usize, k: usize, opts: &TextOpts, full: bool) -> WindowMessage {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let s = |v: Option<&JsValue>| {
        v.and_then(JsValue::as_str_lossy)
            .map(|s| s.into_owned())
            .filter(|s| !s.is_empty())
    };
    let mut m = WindowMessage {
        offset: k,
        entry_id: id_of(doc, i),
        role: String::new(),
        timestamp: e.timestamp.as_deref().map(str::to_string),
        name: None,
        error: None,
        text: String::new(),
        cut_from: None,
    };
    match e.etype {
        EntryType::Compaction | EntryType::BranchSummary => {
            m.role = if e.etype == EntryType::Compaction {
                "compactionSummary"
            } else {
                "branchSummary"
            }
            .to_string();
            m.text = e
                .fields
                .str(line, "summary")
                .unwrap_or_default()
                .into_owned();
        }
        EntryType::CustomMessage => {
            m.role = "custom".to_string();
            m.name = e.fields.str(line, "customType").map(|c| c.into_owned());
            m.text = content_text_with(e.fields.value(line, "content").as_ref(), opts);
        }
        _ => {
            let msg = e.fields.value(line, "message").unwrap_or(JsValue::Null);
            let role = s(msg.get("role")).unwrap_or_else(|| "message".to_string());
            match role.as_str() {
                "assistant" => {
                    m.name = s(msg.get("model"));
                    let stop = s(msg.get("stopReason")).unwrap_or_default();
                    if matches!(stop.as_str(), "error" | "aborted") {
                        m.error = Some(match s(msg.get("errorMessage")) {
                            Some(err) => format!("{stop}: {err}"),
                            None => stop,
                        });
                    }
                    m.text = content_text_with(msg.get("content"), opts);
                }
                "toolResult" => {
                    m.name = s(msg.get("toolName"));
                    if matches!(msg.get("isError"), Some(JsValue::Bool(true))) {
                        m.error = Some("error".to_string());
                    }
                    m.text = fold_output(content_text_with(msg.get("content"), opts), full);
                }
                "bashExecution" => {
                    if let Some(JsValue::Number(n)) = msg.get("exitCode") {
                        if *n != 0.0 {
                            m.error = Some(format!("exit code {n}"));
                        }
                    }
                    let out = fold_output(s(msg.get("output")).unwrap_or_default(), full);
                    m.text = format!("$ {}\n{out}", s(msg.get("command")).unwrap_or_default());
                }
                "system" => {
                    m.text = content_text_with(msg.get("content"), opts);
                    if let Some(JsValue::Object(sections)) = msg.get("sections") {
                        for (name, v) in sections {
                            m.text.push_str(&format!(
                                "\n[section {}]\n{}",
                                name.to_string_lossy(),
                                crate::render::content_text(Some(v))
                            ));
                        }
                    }
                }
                _ => m.text = content_text_with(msg.get("content"), opts),
            }
            m.role = role;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session: `n` user/assistant pairs on the current path, a second branch from the
    /// first user message, a label and a model change between.
    fn doc(n: usize) -> SessionDoc {
        let mut s = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        s.push('\n');
        let mut parent = "null".to_string();
        for k in 0..n {
            let (role, content) = if k % 2 == 0 {
                ("user", format!("\"question {k}\""))
            } else {
                (
                    "assistant",
                    format!(
                        r#"[{{"type":"thinking","thinking":"hmm {k}"}},{{"type":"text","text":"answer {k}"}}]"#
                    ),
                )
            };
            s.push_str(&format!(
                r#"{{"type":"message","id":"m{k}","parentId":{parent},"timestamp":"2026-01-01T00:00:{:02}.000Z","message":{{"role":"{role}","content":{content},"timestamp":{k}}}}}"#,
                k % 60
            ));
            s.push('\n');
            parent = format!("\"m{k}\"");
            if k == 2 {
                s.push_str(&format!(
                    r#"{{"type":"model_change","id":"mc","parentId":{parent},"timestamp":"2026-01-01T00:00:02.500Z","provider":"p","modelId":"x"}}"#
                ));
                s.push('\n');
                parent = "\"mc\"".to_string();
            }
        }
        s.push_str(r#"{"type":"message","id":"side","parentId":"m0","timestamp":"2026-01-01T00:01:00.000Z","message":{"role":"user","content":"other way","timestamp":99}}"#);
        s.push('\n');
        s.push_str(&format!(
            r#"{{"type":"label","id":"lb","parentId":{parent},"timestamp":"2026-01-01T00:02:00.000Z","targetId":"m1","label":"here"}}"#
        ));
        s.push('\n');
        SessionDoc::parse(std::sync::Arc::new(s.into_bytes())).expect("session")
    }

    fn ids(w: &MessageWindow) -> Vec<&str> {
        w.messages.iter().map(|m| m.entry_id.as_str()).collect()
    }

    #[test]
    fn the_newest_page_then_older_pages_give_every_message_once() {
        let d = doc(23);
        let mut opts = WindowOpts {
            limit: 5,
            ..Default::default()
        };
        let mut seen = Vec::new();
        let mut pages = 0;
        loop {
            let w = messages_window(&d, &opts).expect("window");
            assert_eq!(w.total, 23);
            assert!(w.current);
            pages += 1;
            let mut page: Vec<String> = w.messages.iter().map(|m| m.entry_id.clone()).collect();
            page.extend(seen);
            seen = page;
            match w.older {
                Some(o) => opts.offset = Some(o),
                None => break,
            }
        }
        assert_eq!(pages, 5);
        let want: Vec<String> = (0..23).map(|k| format!("m{k}")).collect();
        assert_eq!(seen, want);
        // And forward from the root.
        let mut opts = WindowOpts {
            limit: 7,
            direction: Direction::Newer,
            offset: Some(0),
            ..Default::default()
        };
        let mut fwd = Vec::new();
        loop {
            let w = messages_window(&d, &opts).expect("window");
            fwd.extend(w.messages.iter().map(|m| m.entry_id.clone()));
            match w.newer {
                Some(n) => opts.offset = Some(n),
                None => break,
            }
        }
        assert_eq!(fwd, want);
    }

    #[test]
    fn an_entry_off_the_path_reads_its_own_branch() {
        let d = doc(6);
        let w = messages_window(
            &d,
            &WindowOpts {
                entry: Some("side"),
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m0", "side"]);
        assert_eq!(w.leaf.as_deref(), Some("side"));
        assert!(!w.current);
        // An offset with the entry stays on the entry's branch.
        let w = messages_window(
            &d,
            &WindowOpts {
                entry: Some("side"),
                offset: Some(1),
                limit: 1,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!((ids(&w), w.older, w.newer), (vec!["side"], Some(0), None));
        // The model change is no message: older from it starts at m2.
        let w = messages_window(
            &d,
            &WindowOpts {
                entry: Some("mc"),
                limit: 2,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m1", "m2"]);
        let w = messages_window(
            &d,
            &WindowOpts {
                entry: Some("mc"),
                limit: 1,
                direction: Direction::Newer,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m3"]);
    }

    #[test]
    fn folded_unless_asked_and_bad_questions_are_errors() {
        let d = doc(2);
        let w = messages_window(&d, &WindowOpts::default()).expect("window");
        assert_eq!(w.messages[1].text, "[thinking: 5 chars]\nanswer 1");
        let w = messages_window(
            &d,
            &WindowOpts {
                thinking: true,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(w.messages[1].text, "[thinking] hmm 1\nanswer 1");
        assert_eq!(
            messages_window(
                &d,
                &WindowOpts {
                    entry: Some("nope"),
                    ..Default::default()
                }
            ),
            Err(AgentError::NoEntry("nope".into()))
        );
        assert_eq!(
            messages_window(
                &d,
                &WindowOpts {
                    offset: Some(2),
                    ..Default::default()
                }
            ),
            Err(AgentError::Offset {
                offset: 2,
                total: 2
            })
        );
    }

    #[test]
    fn the_budget_cuts_the_window_and_a_long_first_message() {
        let d = doc(10);
        // "question 8" is 10 characters, "[thinking: 5 chars]\nanswer 9" 28.
        let w = messages_window(
            &d,
            &WindowOpts {
                budget: 40,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m8", "m9"]);
        assert_eq!(w.older, Some(7));
        let w = messages_window(
            &d,
            &WindowOpts {
                budget: 5,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m9"]);
        assert_eq!(w.messages[0].cut_from, Some(28));
        assert!(w.messages[0]
            .text
            .starts_with("[thin\n[… 23 more characters"));
        // A budget of 0 still gives one message, its text all left out.
        let w = messages_window(
            &d,
            &WindowOpts {
                budget: 0,
                limit: 0,
                ..Default::default()
            },
        )
        .expect("window");
        assert_eq!(ids(&w), ["m9"]);
    }
}
