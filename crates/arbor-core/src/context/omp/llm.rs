//! omp 18.2.3's `convertToLlm` (`src/session/messages.ts`, with agent-core's
//! `convertMessageToLlm`): the messages of an omp context as the provider request receives
//! them. Each context message is taken as the object omp holds (the JSON arbor writes for it,
//! read back), converted with JS object semantics (spread keeps member order, a replaced
//! member keeps its place, `undefined` members vanish), and written with `JSON.stringify`'s
//! rules.
//!
//! * `bashExecution` / `pythonExecution` become user text (`excludeFromContext` drops them),
//!   `fileMention` a developer message for text files and a user message for images;
//! * `custom` / `hookMessage` become `developer` messages (content that is neither a string nor
//!   an array drops them); a user-attributed `collab-prompt` is a steering interjection
//!   (wrapped in omp's `user-interjection` notice), a user-attributed `skill-prompt` a user
//!   message, and image-bearing ones split into a developer text part and a user image part;
//! * branch and compaction summaries become user messages through omp's prompt templates
//!   (`attribution: "agent"`, `historyRewriteAt`), snapcompact blocks appended;
//! * assistant turns followed by an `interrupted-thinking` note, or aborted by the user, lose
//!   their trailing run of unsigned thinking;
//! * user / developer / toolResult messages get their default `attribution`, a pruned tool
//!   result its text joined (`prunedAt`); unknown roles are dropped.
//!
//! Not replicated: the output notices omp renders from a bash/python message's `meta`
//! (truncation, limits, LSP diagnostics); a message with a `meta` gets its text without them.
use super::jsv::{lit, units};
use super::notes::format_post_render;
use super::OmpContext;
use crate::doc::SessionDoc;
use crate::js;
use crate::json::{JsStr, JsValue};

/// agent-core's `branch-summary-context.md`, split at its `{{summary}}`.
const BRANCH_SUMMARY: (&str, &str) = ("Branch-return summary:\n\n<summary>\n", "\n</summary>\n");
/// agent-core's `compaction-summary-context.md`.
const COMPACTION_SUMMARY: (&str, &str) = (
    "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n",
    "\n</summary>\n",
);
/// agent-core's `handoff-summary-context.md` (compactions whose `method` is `"handoff"`).
const HANDOFF_SUMMARY: (&str, &str) = (
    "Context replaced. The <handoff> below is a handoff document a prior instance of you wrote from the full conversation. It is your own working memory, not user input.\n\
- First person inside it refers to you (the prior instance).\n\
- \"Next Steps\" is your own resumed plan; re-check it against the latest user message before acting.\n\
- The handoff already exists and is complete: NEVER write another handoff document unless the user explicitly asks.\n\
MUST build on prior work; NEVER duplicate prior work.\n\
\n\
<handoff>\n",
    "\n</handoff>\n",
);
/// coding-agent's `prompts/steering/user-interjection.md` (it has no final newline).
const USER_INTERJECTION: (&str, &str) = (
    "<system-notice>\nUser interjection during work: priority; supersedes conflicting prior instructions. Re-read; ensure current work reflects user intent.\n</system-notice>\n",
    "",
);

const INTERRUPTED_THINKING: &str = "interrupted-thinking";
const SKILL_PROMPT: &str = "skill-prompt";
const COLLAB_PROMPT: &str = "collab-prompt";
/// pi-ai's `AIError.Flag.UserInterrupt`.
const USER_INTERRUPT_FLAG: i32 = 0x0400_0000;
const USER_INTERRUPT_LABEL: &str = "Interrupted by user";

/// omp's `prompt.render(template, {key: value})`: Handlebars (no escaping; `null` and
/// `undefined` print nothing, anything else its `ToString`), then the post-render formatter.
fn render(template: (&str, &str), value: Option<&JsValue>) -> JsStr {
    let mut text = lit(template.0);
    match value {
        None | Some(JsValue::Null) => {}
        Some(v) => text.extend(units(&js::to_js_str(Some(v)))),
    }
    text.extend(lit(template.1));
    super::jsv::from_units(&format_post_render(&text))
}

fn s(v: &str) -> JsValue {
    JsValue::String(JsStr::from(v))
}

fn text_block(text: JsStr) -> JsValue {
    JsValue::Object(vec![
        (JsStr::from("type"), s("text")),
        (JsStr::from("text"), JsValue::String(text)),
    ])
}

/// An object literal; `None` values are `undefined` (left out).
fn object(members: Vec<(&str, Option<JsValue>)>) -> JsValue {
    JsValue::Object(
        members
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (JsStr::from(k), v)))
            .collect(),
    )
}

fn is_str(v: Option<&JsValue>, want: &str) -> bool {
    matches!(v, Some(JsValue::String(x)) if x.0 == want.as_bytes())
}

fn truthy(v: Option<&JsValue>) -> bool {
    v.is_some_and(JsValue::is_truthy)
}

/// `a ?? b`.
fn or_default(v: Option<&JsValue>, default: &str) -> JsValue {
    match v {
        None | Some(JsValue::Null) => s(default),
        Some(v) => v.clone(),
    }
}

/// `{...m, key: value}`: replaced in place when present, else appended.
fn with(m: &JsValue, key: &str, value: JsValue) -> JsValue {
    let mut out = m.clone();
    out.set(key, value);
    out
}

/// `typeof content === "string" || Array.isArray(content)`.
fn is_custom_content(v: Option<&JsValue>) -> bool {
    matches!(v, Some(JsValue::String(_) | JsValue::Array(_)))
}

fn content_as_blocks(content: Option<&JsValue>) -> Option<JsValue> {
    match content {
        Some(JsValue::String(t)) => Some(JsValue::Array(vec![text_block(t.clone())])),
        other => other.cloned(),
    }
}

fn array(v: Option<&JsValue>) -> &[JsValue] {
    match v {
        Some(JsValue::Array(a)) => a,
        _ => &[],
    }
}

fn block_type(b: &JsValue) -> Option<&[u8]> {
    b.get("type").and_then(JsValue::as_js_str).map(|t| &t.0[..])
}

/// JS `ToNumber` then `ToInt32`, for the bitwise test of `AIError.is`.
fn to_int32(v: Option<&JsValue>) -> i32 {
    let n = match v {
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::String(t)) => {
            let t = t.to_string_lossy();
            let t = t.trim();
            if t.is_empty() {
                0.0
            } else if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).map_or(f64::NAN, |x| x as f64)
            } else {
                t.parse::<f64>().unwrap_or(f64::NAN)
            }
        }
        _ => 0.0,
    };
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

/// `isUserInterruptAbort`.
fn is_user_interrupt(m: &JsValue) -> bool {
    to_int32(m.get("errorId")) & USER_INTERRUPT_FLAG != 0
        || is_str(m.get("errorMessage"), USER_INTERRUPT_LABEL)
}

/// `stripDemotedThinkingForLlm`: the assistant turn without its trailing run of non-empty,
/// unsigned thinking blocks (trailing blank text placeholders go with it).
fn strip_demoted_thinking(m: &JsValue) -> JsValue {
    let Some(JsValue::Array(content)) = m.get("content") else {
        return m.clone();
    };
    let blank_text = |b: &JsValue| {
        block_type(b) == Some(b"text")
            && matches!(b.get("text"), Some(JsValue::String(t)) if !js::has_non_whitespace(t))
    };
    let mut scan_end = content.len();
    while scan_end > 0 && blank_text(&content[scan_end - 1]) {
        scan_end -= 1;
    }
    let mut run_start = scan_end;
    while run_start > 0 {
        let b = &content[run_start - 1];
        let open_thinking = block_type(b) == Some(b"thinking")
            && matches!(b.get("thinking"), Some(JsValue::String(t)) if js::has_non_whitespace(t))
            && !truthy(b.get("thinkingSignature"));
        if !open_thinking {
            break;
        }
        run_start -= 1;
    }
    if run_start == scan_end {
        return m.clone();
    }
    with(m, "content", JsValue::Array(content[..run_start].to_vec()))
}

/// agent-core's `getPrunedToolResultContent`. `None` is `undefined`: a message without
/// `content` that was not pruned keeps having none (`{...message, content: undefined}` writes no
/// key; goldens/fuzz-omp/fuzz-072703a5bd).
fn pruned_tool_content(m: &JsValue) -> Option<JsValue> {
    let content = m.get("content").cloned();
    if m.get("prunedAt").is_none() {
        return content;
    }
    let content = content.unwrap_or(JsValue::Null);
    let blocks = array(Some(&content));
    let mut text = Vec::new();
    for b in blocks.iter().filter(|b| block_type(b) == Some(b"text")) {
        if let Some(t) = b.get("text") {
            text.extend_from_slice(&js::to_js_str(Some(t)).0);
        }
    }
    if text.is_empty() {
        text = b"[Output truncated]".to_vec();
    }
    let text = text_block(JsStr(text));
    let first = blocks.iter().position(|b| block_type(b) == Some(b"text"));
    let Some(first) = first else {
        let mut out = vec![text];
        out.extend(blocks.iter().cloned());
        return Some(JsValue::Array(out));
    };
    let mut out = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        if block_type(b) != Some(b"text") {
            out.push(b.clone());
        } else if k == first {
            out.push(text.clone());
        }
    }
    Some(JsValue::Array(out))
}

/// agent-core's `convertMessageToLlm` (`None`: dropped).
fn convert_core(m: &JsValue) -> Option<JsValue> {
    let role = m.get("role").and_then(JsValue::as_js_str)?;
    let ts = || m.get("timestamp").cloned();
    match &role.0[..] {
        b"custom" | b"hookMessage" => Some(object(vec![
            ("role", Some(s("developer"))),
            ("content", content_as_blocks(m.get("content"))),
            ("attribution", m.get("attribution").cloned()),
            ("timestamp", ts()),
        ])),
        b"branchSummary" => Some(object(vec![
            ("role", Some(s("user"))),
            (
                "content",
                Some(JsValue::Array(vec![text_block(render(
                    BRANCH_SUMMARY,
                    m.get("summary"),
                ))])),
            ),
            ("attribution", Some(s("agent"))),
            ("historyRewriteAt", ts()),
            ("timestamp", ts()),
        ])),
        b"compactionSummary" => {
            let content = match m.get("blocks") {
                Some(blocks) => {
                    let mut c = vec![text_block(js::to_js_str(Some(
                        m.get("summary").unwrap_or(&JsValue::Null),
                    )))];
                    if m.get("summary").is_none() {
                        c[0] = object(vec![("type", Some(s("text")))]);
                    }
                    c.extend(array(Some(blocks)).iter().cloned());
                    c
                }
                None => {
                    let template = if is_str(m.get("method"), "handoff") {
                        HANDOFF_SUMMARY
                    } else {
                        COMPACTION_SUMMARY
                    };
                    let mut c = vec![text_block(render(template, m.get("summary")))];
                    c.extend(array(m.get("images")).iter().cloned());
                    c
                }
            };
            Some(object(vec![
                ("role", Some(s("user"))),
                ("content", Some(JsValue::Array(content))),
                ("attribution", Some(s("agent"))),
                // `message.historyRewriteAt ?? message.timestamp` (18.3; 18.2 never sets it).
                (
                    "historyRewriteAt",
                    m.get("historyRewriteAt")
                        .filter(|v| !matches!(v, JsValue::Null))
                        .cloned()
                        .or_else(ts),
                ),
                ("providerPayload", m.get("providerPayload").cloned()),
                ("timestamp", ts()),
            ]))
        }
        b"user" => Some(with(
            m,
            "attribution",
            or_default(m.get("attribution"), "user"),
        )),
        b"developer" => Some(with(
            m,
            "attribution",
            or_default(m.get("attribution"), "agent"),
        )),
        b"assistant" => Some(m.clone()),
        b"toolResult" => {
            let out = match pruned_tool_content(m) {
                Some(content) => with(m, "content", content),
                None => m.clone(),
            };
            Some(with(
                &out,
                "attribution",
                or_default(m.get("attribution"), "agent"),
            ))
        }
        _ => None,
    }
}

/// `bashExecutionToText` / `pythonExecutionToText` (without `meta` notices).
fn execution_text(m: &JsValue, python: bool) -> JsStr {
    let tpl = |v: Option<&JsValue>| match v {
        Some(v) => js::to_js_str(Some(v)).0,
        None => b"undefined".to_vec(),
    };
    let mut t = Vec::new();
    if python {
        t.extend_from_slice(b"Ran Python:\n```python\n");
        t.extend(tpl(m.get("code")));
        t.extend_from_slice(b"\n```\n");
    } else {
        t.extend_from_slice(b"Ran `");
        t.extend(tpl(m.get("command")));
        t.extend_from_slice(b"`\n");
    }
    if truthy(m.get("output")) {
        t.extend_from_slice(if python {
            b"Output:\n```\n".as_slice()
        } else {
            b"```\n".as_slice()
        });
        t.extend(tpl(m.get("output")));
        t.extend_from_slice(b"\n```");
    } else {
        t.extend_from_slice(b"(no output)");
    }
    if truthy(m.get("cancelled")) {
        t.extend_from_slice(if python {
            b"\n\n(execution cancelled)".as_slice()
        } else {
            b"\n\n(command cancelled)".as_slice()
        });
    } else {
        match m.get("exitCode") {
            None | Some(JsValue::Null) => {}
            Some(JsValue::Number(n)) if *n == 0.0 => {}
            Some(code) => {
                t.extend_from_slice(if python {
                    b"\n\nExecution failed with code ".as_slice()
                } else {
                    b"\n\nCommand exited with code ".as_slice()
                });
                t.extend(js::to_js_str(Some(code)).0);
            }
        }
    }
    JsStr(t)
}

/// `convertImageBearingCustomMessage`.
fn split_image_custom(m: &JsValue) -> Option<Vec<JsValue>> {
    let JsValue::Array(content) = m.get("content")? else {
        return None;
    };
    let texts: Vec<JsValue> = content
        .iter()
        .filter(|b| block_type(b) == Some(b"text"))
        .cloned()
        .collect();
    let images: Vec<JsValue> = content
        .iter()
        .filter(|b| block_type(b) == Some(b"image"))
        .cloned()
        .collect();
    if images.is_empty() {
        return None;
    }
    let attribution = m.get("attribution").cloned();
    let ts = m.get("timestamp").cloned();
    let mut out = Vec::new();
    if !texts.is_empty() {
        out.push(object(vec![
            ("role", Some(s("developer"))),
            ("content", Some(JsValue::Array(texts))),
            ("attribution", attribution.clone()),
            ("timestamp", ts.clone()),
        ]));
    }
    let mut label = b"Images attached to ".to_vec();
    label.extend(match m.get("customType") {
        Some(v) => js::to_js_str(Some(v)).0,
        None => b"undefined".to_vec(),
    });
    label.push(b'.');
    let mut blocks = vec![text_block(JsStr(label))];
    blocks.extend(images);
    out.push(object(vec![
        ("role", Some(s("user"))),
        ("content", Some(JsValue::Array(blocks))),
        ("attribution", attribution),
        ("timestamp", ts),
    ]));
    Some(out)
}

/// `wrapSteeringUserMessage` of a user-attributed `collab-prompt` custom message.
fn wrap_steering(m: &JsValue) -> JsValue {
    let user = |content: JsValue| {
        object(vec![
            ("role", Some(s("user"))),
            ("content", Some(content)),
            ("attribution", Some(s("user"))),
            ("timestamp", m.get("timestamp").cloned()),
        ])
    };
    let content = m.get("content").cloned().unwrap_or(JsValue::Null);
    match &content {
        JsValue::String(t) if t.0.is_empty() => user(content),
        JsValue::String(_) => user(JsValue::String(render(USER_INTERJECTION, Some(&content)))),
        JsValue::Array(blocks) => {
            // getArrayContentText: the text blocks joined with newlines.
            let texts: Vec<JsStr> = blocks
                .iter()
                .filter(|b| block_type(b) == Some(b"text"))
                .map(|b| match b.get("text") {
                    Some(t) => js::to_js_str(Some(t)),
                    None => JsStr::from("undefined"),
                })
                .collect();
            let text = JsStr(
                texts
                    .iter()
                    .map(|t| &t.0[..])
                    .collect::<Vec<_>>()
                    .join(&b'\n'),
            );
            if text.0.is_empty() {
                return user(content);
            }
            let mut c = vec![text_block(render(
                USER_INTERJECTION,
                Some(&JsValue::String(text)),
            ))];
            c.extend(
                blocks
                    .iter()
                    .filter(|b| block_type(b) == Some(b"image"))
                    .cloned(),
            );
            user(JsValue::Array(c))
        }
        _ => user(content),
    }
}

/// `<file path="…">` wrapping of one mentioned file.
fn wrap_file(f: &JsValue) -> Vec<u8> {
    let mut t = b"<file path=\"".to_vec();
    t.extend(match f.get("path") {
        Some(p) => js::to_js_str(Some(p)).0,
        None => b"undefined".to_vec(),
    });
    t.extend_from_slice(b"\">");
    match f.get("content") {
        Some(c) if c.is_truthy() => {
            t.push(b'\n');
            t.extend(js::to_js_str(Some(c)).0);
            t.push(b'\n');
        }
        _ => t.push(b'\n'),
    }
    t.extend_from_slice(b"</file>");
    t
}

/// omp's `convertOne`: the LLM messages for context message `i`.
fn convert_one(messages: &[JsValue], i: usize) -> Vec<JsValue> {
    let m = &messages[i];
    let Some(role) = m.get("role").and_then(JsValue::as_js_str) else {
        return Vec::new();
    };
    let ts = || m.get("timestamp").cloned();
    match &role.0[..] {
        b"bashExecution" | b"pythonExecution" => {
            if truthy(m.get("excludeFromContext")) {
                return Vec::new();
            }
            let python = role.0 == b"pythonExecution";
            let mut content = vec![text_block(execution_text(m, python))];
            if !python {
                content.extend(array(m.get("images")).iter().cloned());
            }
            vec![object(vec![
                ("role", Some(s("user"))),
                ("content", Some(JsValue::Array(content))),
                ("attribution", Some(s("user"))),
                ("timestamp", ts()),
            ])]
        }
        b"fileMention" => {
            let files = array(m.get("files"));
            let (images, texts): (Vec<&JsValue>, Vec<&JsValue>) =
                files.iter().partition(|f| truthy(f.get("image")));
            let join = |fs: &[&JsValue]| {
                JsStr(
                    fs.iter()
                        .map(|f| wrap_file(f))
                        .collect::<Vec<_>>()
                        .join(&b'\n'),
                )
            };
            let mut out = Vec::new();
            if !texts.is_empty() {
                out.push(object(vec![
                    ("role", Some(s("developer"))),
                    (
                        "content",
                        Some(JsValue::Array(vec![text_block(join(&texts))])),
                    ),
                    ("attribution", Some(s("user"))),
                    ("timestamp", ts()),
                ]));
            }
            if !images.is_empty() {
                let mut content = vec![text_block(join(&images))];
                content.extend(images.iter().filter_map(|f| f.get("image").cloned()));
                out.push(object(vec![
                    ("role", Some(s("user"))),
                    ("content", Some(JsValue::Array(content))),
                    ("attribution", Some(s("user"))),
                    ("timestamp", ts()),
                ]));
            }
            out
        }
        b"custom" | b"hookMessage" => {
            if !is_custom_content(m.get("content")) {
                return Vec::new();
            }
            let user_attributed = is_str(m.get("attribution"), "user");
            if role.0 == b"custom" && user_attributed {
                if is_str(m.get("customType"), COLLAB_PROMPT) {
                    return convert_core(&wrap_steering(m)).into_iter().collect();
                }
                if is_str(m.get("customType"), SKILL_PROMPT) {
                    return vec![object(vec![
                        ("role", Some(s("user"))),
                        ("content", content_as_blocks(m.get("content"))),
                        ("attribution", Some(s("user"))),
                        ("timestamp", ts()),
                    ])];
                }
            }
            if let Some(split) = split_image_custom(m) {
                return split;
            }
            convert_core(m).into_iter().collect()
        }
        b"assistant" => {
            let next_is_note = messages.get(i + 1).is_some_and(|n| {
                is_str(n.get("role"), "custom") && is_str(n.get("customType"), INTERRUPTED_THINKING)
            });
            let user_interrupted = is_str(m.get("stopReason"), "aborted") && is_user_interrupt(m);
            let source = if next_is_note || user_interrupted {
                strip_demoted_thinking(m)
            } else {
                m.clone()
            };
            let empty = match source.get("content") {
                Some(JsValue::Array(c)) => c.is_empty(),
                Some(JsValue::String(t)) => t.0.is_empty(),
                _ => false,
            };
            if user_interrupted && !next_is_note && empty {
                return Vec::new();
            }
            convert_core(&source).into_iter().collect()
        }
        b"branchSummary" | b"compactionSummary" | b"user" | b"developer" | b"toolResult" => {
            convert_core(m).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Writes omp's `convertToLlm(messages)` array for an omp context.
pub(crate) fn write_llm_messages(o: &OmpContext, doc: &SessionDoc, out: &mut Vec<u8>) {
    let mut buf = Vec::new();
    let messages: Vec<JsValue> = o
        .messages
        .iter()
        .map(|m| {
            buf.clear();
            o.write_message(doc, m, &mut buf);
            JsValue::parse(&buf).unwrap_or(JsValue::Null)
        })
        .collect();
    out.push(b'[');
    let mut first = true;
    for i in 0..messages.len() {
        for converted in convert_one(&messages, i) {
            if !first {
                out.push(b',');
            }
            first = false;
            crate::json::write_js_value(&converted, out);
        }
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conversions of one message (alone in its context), as JSON.
    fn conv(message: &str) -> String {
        let m = JsValue::parse(message.as_bytes()).expect("message JSON");
        let out: Vec<String> = convert_one(&[m], 0)
            .iter()
            .map(|v| String::from_utf8(v.to_json()).expect("utf-8"))
            .collect();
        format!("[{}]", out.join(","))
    }

    // Paths of omp's convertToLlm that goldens/omp-context (recorded with the real omp)
    // does not reach; expectations read from omp 18.2.3's messages.ts.

    #[test]
    fn handoff_compaction_uses_the_handoff_template() {
        let got = conv(
            r#"{"role":"compactionSummary","summary":"S","tokensBefore":1,"method":"handoff","timestamp":5}"#,
        );
        assert!(got.starts_with(r#"[{"role":"user","content":[{"type":"text","text":"Context replaced. The <handoff> below"#));
        assert!(got.ends_with(
            r#"<handoff>\nS\n</handoff>"}],"attribution":"agent","historyRewriteAt":5,"timestamp":5}]"#
        ));
    }

    #[test]
    fn image_bearing_custom_message_splits_into_developer_text_and_user_images() {
        let got = conv(
            r#"{"role":"custom","customType":"shot","content":[{"type":"text","text":"t"},{"type":"image","data":"AA","mimeType":"image/png"}],"display":true,"attribution":"agent","timestamp":1}"#,
        );
        assert_eq!(
            got,
            concat!(
                r#"[{"role":"developer","content":[{"type":"text","text":"t"}],"attribution":"agent","timestamp":1},"#,
                r#"{"role":"user","content":[{"type":"text","text":"Images attached to shot."},{"type":"image","data":"AA","mimeType":"image/png"}],"attribution":"agent","timestamp":1}]"#
            )
        );
    }

    #[test]
    fn pruned_tool_result_joins_its_text() {
        let got = conv(
            r#"{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"image","data":"AA","mimeType":"image/png"},{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":false,"prunedAt":3,"timestamp":2}"#,
        );
        assert_eq!(
            got,
            r#"[{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"image","data":"AA","mimeType":"image/png"},{"type":"text","text":"ab"}],"isError":false,"prunedAt":3,"timestamp":2,"attribution":"agent"}]"#
        );
        let got = conv(
            r#"{"role":"toolResult","toolCallId":"c","content":[{"type":"image","data":"AA","mimeType":"image/png"}],"prunedAt":3}"#,
        );
        assert_eq!(
            got,
            r#"[{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"[Output truncated]"},{"type":"image","data":"AA","mimeType":"image/png"}],"prunedAt":3,"attribution":"agent"}]"#
        );
    }

    /// `{...message, content: getPrunedToolResultContent(message)}` of a tool result without
    /// `content` writes `content: undefined`, which JSON leaves out (omp 18.2.3:
    /// goldens/fuzz-omp/fuzz-072703a5bd); arbor wrote `"content":null`.
    #[test]
    fn tool_result_without_content_stays_without() {
        let got = conv(r#"{"role":"toolResult","code":"print(1)","output":"null","timestamp":1}"#);
        assert_eq!(
            got,
            r#"[{"role":"toolResult","code":"print(1)","output":"null","timestamp":1,"attribution":"agent"}]"#
        );
    }

    #[test]
    fn user_interrupted_turn_loses_its_open_thinking() {
        let got = conv(
            r#"{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"thinking","thinking":"half"},{"type":"text","text":" "}],"stopReason":"aborted","errorMessage":"Interrupted by user","timestamp":1}"#,
        );
        assert_eq!(
            got,
            r#"[{"role":"assistant","content":[{"type":"text","text":"x"}],"stopReason":"aborted","errorMessage":"Interrupted by user","timestamp":1}]"#
        );
        // Nothing left: the turn is dropped.
        let got = conv(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"half"}],"stopReason":"aborted","errorId":67108864}"#,
        );
        assert_eq!(got, "[]");
    }
}
