//! Codex CLI's sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (also
//! `archived_sessions/`), lines `{timestamp, type, payload}` of types `session_meta`,
//! `turn_context`, `response_item`, `event_msg` and `compacted`. A rollout is linear;
//! `event_msg` `thread_rolled_back {num_turns}` drops the last turns from the thread: here they
//! stay, as an abandoned branch, and what follows continues from before them.
//!
//! One model response (reasoning, text, tool calls: separate `response_item`s until the
//! `token_count` event that ends it) is one assistant message with that event's usage.
//! `event_msg` `user_message`/`agent_message`/`agent_reasoning` repeat the response items and
//! are used only when no response item carries the same text (older rollouts).
use crate::jsonl::{self, obj, s, u};
use crate::model::{
    Agent, Assistant, Compaction, Detail, Node, NodeKind, Part, Session, ToolResult, Usage,
};
use crate::AgentError;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const PROVIDER: &str = "openai-codex";
const API: &str = "openai-codex-responses";

struct State {
    tail: Option<usize>,
    open: Option<usize>,
    model: String,
    tools: HashMap<String, String>,
    last_total: Option<u64>,
}

/// Reads the Codex rollout at `path`.
///
/// # Errors
/// Only when the file cannot be read at all; every bad line is in the session's report.
pub fn read(path: &Path) -> Result<Session, AgentError> {
    read_with(path, Detail::Full)
}

/// [`read`] with the `detail` wanted (the catalog reads at [`Detail::Listing`]): the one
/// reader, its rules the same at every detail.
///
/// # Errors
/// As [`read`].
pub fn read_with(path: &Path, detail: Detail) -> Result<Session, AgentError> {
    let file = jsonl::read_source(path)?;
    let bytes: &[u8] = file.as_ref();
    let mut session = Session::new(Agent::Codex, rollout_id(path), jsonl::absolute(path));
    let records = jsonl::objects(bytes, &mut session.report, &mut |line, f, out| {
        slim_record(line, f, detail, out)
    });
    // The texts the response items carry (event messages repeating them are not used).
    let mut canon: HashSet<String> = HashSet::new();
    let mut canon_calls: HashSet<String> = HashSet::new();
    for (_, m) in &records {
        if s(m, "type") != Some("response_item") {
            continue;
        }
        let Some(p) = obj(m, "payload") else { continue };
        match s(p, "type") {
            Some("message") => {
                canon.insert(content_text(p.get("content")));
            }
            Some("reasoning") => {
                for t in reasoning_texts(p) {
                    canon.insert(t);
                }
            }
            _ => {
                if let Some(c) = s(p, "call_id") {
                    canon_calls.insert(c.to_string());
                }
            }
        }
    }
    let mut st = State {
        tail: None,
        open: None,
        model: "codex".into(),
        tools: HashMap::new(),
        last_total: None,
    };
    let mut seen_meta = false;
    let mut fallback = 0i64;
    for (line, m) in &records {
        let line = *line;
        let ts = jsonl::time_ms(m.get("timestamp")).unwrap_or(fallback);
        fallback = ts;
        let key = format!("line-{line}");
        let t = s(m, "type").unwrap_or("");
        // Rollouts of 2025 before the envelope: the item itself on the line.
        let payload = obj(m, "payload");
        match (t, payload) {
            ("session_meta", Some(p)) => {
                if !seen_meta {
                    seen_meta = true;
                    if let Some(id) = s(p, "id") {
                        session.id = id.to_string();
                    }
                    session.cwd = s(p, "cwd").map(str::to_string);
                    session.created_ms = jsonl::time_ms(p.get("timestamp")).or(Some(ts));
                }
                if let Some(f) = s(p, "forked_from_id") {
                    session.forked_from.get_or_insert_with(|| f.to_string());
                }
                if let Some(v) = s(p, "cli_version") {
                    session.saw_version(v);
                }
                session.report.skip("session_meta");
            }
            ("turn_context", Some(p)) => {
                st.open = None;
                if let Some(model) = s(p, "model") {
                    if model != st.model {
                        st.model = model.to_string();
                        push(
                            &mut session,
                            &mut st,
                            format!("{key}#model"),
                            ts,
                            NodeKind::ModelChange {
                                provider: PROVIDER.into(),
                                model: model.to_string(),
                            },
                        );
                    }
                }
            }
            ("response_item", Some(p)) => response_item(&mut session, &mut st, &key, line, ts, p),
            ("event_msg", Some(p)) => {
                event(&mut session, &mut st, &key, ts, p, &canon, &canon_calls)
            }
            ("compacted", Some(p)) => {
                st.open = None;
                let summary = compaction_summary(p);
                push(
                    &mut session,
                    &mut st,
                    key,
                    ts,
                    NodeKind::Compaction(Compaction {
                        summary,
                        tokens_before: 0,
                        first_kept: None,
                    }),
                );
            }
            (
                "session_meta" | "turn_context" | "response_item" | "event_msg" | "compacted",
                None,
            ) => session
                .report
                .bad(line, format!("{t} without a payload object: skipped")),
            ("", _) if s(m, "role").is_some() || s(m, "record_type").is_some() => {
                session.report.skip("pre-envelope record (2025 rollouts)")
            }
            ("", _) => session.report.bad(line, "record without a type: skipped"),
            (other, _) => session.report.unknown(other),
        }
    }
    Ok(session)
}

fn push(s_: &mut Session, st: &mut State, key: String, ts: i64, kind: NodeKind) -> usize {
    let i = s_.push(Node {
        key,
        parent: st.tail,
        timestamp_ms: ts,
        kind,
    });
    st.tail = Some(i);
    i
}

/// The assistant message being built, or a new one.
fn assistant<'a>(s_: &'a mut Session, st: &mut State, key: &str, ts: i64) -> &'a mut Assistant {
    let i = match st.open {
        Some(i) => i,
        None => {
            let i = push(
                s_,
                st,
                key.to_string(),
                ts,
                NodeKind::Assistant(Assistant {
                    api: API.into(),
                    provider: PROVIDER.into(),
                    model: st.model.clone(),
                    stop_reason: "stop".into(),
                    ..Default::default()
                }),
            );
            st.open = Some(i);
            i
        }
    };
    match &mut s_.nodes[i].kind {
        NodeKind::Assistant(a) => a,
        // `open` only ever names an assistant node.
        _ => unreachable!("open node is an assistant"),
    }
}

fn response_item(
    s_: &mut Session,
    st: &mut State,
    key: &str,
    line: u64,
    ts: i64,
    p: &Map<String, Value>,
) {
    let ty = s(p, "type").unwrap_or("");
    match ty {
        "message" => {
            let parts = content_parts(p.get("content"));
            match s(p, "role") {
                Some("user") => {
                    st.open = None;
                    if parts.is_empty() {
                        s_.report.skip("response_item message (empty)");
                        return;
                    }
                    push(s_, st, key.to_string(), ts, NodeKind::User(parts));
                }
                Some("assistant") => {
                    if !parts.is_empty() {
                        assistant(s_, st, key, ts).content.extend(parts);
                    }
                }
                Some(r) => s_.report.skip(&format!("response_item message ({r})")),
                None => s_.report.bad(line, "message without a role: skipped"),
            }
        }
        "reasoning" => {
            let texts = reasoning_texts(p);
            if texts.is_empty() {
                s_.report.skip("reasoning (encrypted only)");
                return;
            }
            let a = assistant(s_, st, key, ts);
            for t in texts {
                a.content.push(Part::Thinking {
                    text: t,
                    signature: None,
                    redacted: false,
                });
            }
        }
        "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call"
        | "tool_search_call" => {
            let id = s(p, "call_id")
                .or(s(p, "id"))
                .map_or_else(|| key.to_string(), str::to_string);
            let (name, args) = match ty {
                "function_call" => (s(p, "name").unwrap_or("unknown"), p.get("arguments")),
                "custom_tool_call" => (s(p, "name").unwrap_or("unknown"), p.get("input")),
                "local_shell_call" => ("local_shell", p.get("action")),
                "web_search_call" => ("web_search", p.get("action")),
                _ => ("tool_search", p.get("arguments")),
            };
            st.tools.insert(id.clone(), name.to_string());
            let a = assistant(s_, st, key, ts);
            a.content.push(Part::ToolCall {
                id,
                name: name.to_string(),
                arguments: jsonl::arguments(args),
            });
            // A hosted tool (web search) runs at the provider: no result comes back as a line.
            if !matches!(ty, "web_search_call" | "tool_search_call") {
                a.stop_reason = "toolUse".into();
            }
        }
        "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
            st.open = None;
            let call = s(p, "call_id").unwrap_or("").to_string();
            let (content, is_error) = tool_output(p.get("output").or(p.get("tools")));
            push(
                s_,
                st,
                key.to_string(),
                ts,
                NodeKind::ToolResult(ToolResult {
                    tool_name: st
                        .tools
                        .get(&call)
                        .cloned()
                        .unwrap_or_else(|| "unknown".into()),
                    call_id: call,
                    content,
                    is_error,
                }),
            );
        }
        "" => s_.report.bad(line, "response_item without a type: skipped"),
        other => s_.report.unknown(&format!("response_item/{other}")),
    }
}

fn event(
    s_: &mut Session,
    st: &mut State,
    key: &str,
    ts: i64,
    p: &Map<String, Value>,
    canon: &HashSet<String>,
    canon_calls: &HashSet<String>,
) {
    let ty = s(p, "type").unwrap_or("");
    match ty {
        "token_count" => {
            let Some(info) = obj(p, "info") else {
                s_.report.skip("event_msg/token_count (no info)");
                return;
            };
            let total = obj(info, "total_token_usage").map(|t| u(t, "total_tokens"));
            if total.is_some() && total == st.last_total {
                s_.report.skip("event_msg/token_count (repeated)");
                return;
            }
            let usage = match obj(info, "last_token_usage") {
                Some(l) => codex_usage(l),
                None => Usage::default(),
            };
            st.last_total = total;
            // The response it ends: the one being built, else the last assistant on the path.
            let target = st.open.or_else(|| {
                let mut at = st.tail;
                while let Some(i) = at {
                    if matches!(s_.nodes[i].kind, NodeKind::Assistant(_)) {
                        return Some(i);
                    }
                    at = s_.nodes[i].parent;
                }
                None
            });
            if let Some(i) = target {
                if let NodeKind::Assistant(a) = &mut s_.nodes[i].kind {
                    if a.usage == Usage::default() {
                        a.usage = usage;
                    }
                }
            }
            st.open = None;
        }
        "user_message" => {
            let text = s(p, "message").unwrap_or("");
            if text.is_empty() || canon.contains(text) {
                s_.report
                    .skip("event_msg/user_message (repeats a response item)");
                return;
            }
            st.open = None;
            let mut parts = vec![Part::Text(text.to_string())];
            if let Some(Value::Array(imgs)) = p.get("images") {
                parts.extend(
                    imgs.iter()
                        .filter_map(Value::as_str)
                        .filter_map(jsonl::data_url_image),
                );
            }
            push(s_, st, key.to_string(), ts, NodeKind::User(parts));
        }
        "agent_message" | "agent_reasoning" => {
            let text = s(
                p,
                if ty == "agent_message" {
                    "message"
                } else {
                    "text"
                },
            )
            .unwrap_or("");
            if text.is_empty() || canon.contains(text) {
                s_.report
                    .skip(&format!("event_msg/{ty} (repeats a response item)"));
                return;
            }
            let part = if ty == "agent_message" {
                Part::Text(text.to_string())
            } else {
                Part::Thinking {
                    text: text.to_string(),
                    signature: None,
                    redacted: false,
                }
            };
            assistant(s_, st, key, ts).content.push(part);
        }
        // 0.149 and later: items as `item_completed` events (the user's prompt among them).
        "item_completed" => {
            let item = obj(p, "item");
            let kind = item.and_then(|i| s(i, "type")).unwrap_or("");
            let text = item
                .map(|i| content_text(i.get("content")))
                .unwrap_or_default();
            match kind {
                "UserMessage" if !text.is_empty() && !canon.contains(&text) => {
                    st.open = None;
                    push(
                        s_,
                        st,
                        key.to_string(),
                        ts,
                        NodeKind::User(vec![Part::Text(text)]),
                    );
                }
                "AgentMessage" if !text.is_empty() && !canon.contains(&text) => {
                    assistant(s_, st, key, ts).content.push(Part::Text(text));
                }
                _ => s_
                    .report
                    .skip(&format!("event_msg/item_completed ({kind})")),
            }
        }
        "thread_rolled_back" => {
            st.open = None;
            let n = u(p, "num_turns");
            // Back to before the n-th last user message on the path: what was there stays as
            // an abandoned branch.
            let mut left = n;
            let mut at = st.tail;
            while let Some(i) = at {
                if matches!(s_.nodes[i].kind, NodeKind::User(_)) {
                    left = left.saturating_sub(1);
                    if left == 0 {
                        at = s_.nodes[i].parent;
                        break;
                    }
                }
                at = s_.nodes[i].parent;
            }
            st.tail = if n == 0 { st.tail } else { at };
            s_.report
                .skip("event_msg/thread_rolled_back (abandoned branch)");
        }
        "thread_name_updated" => {
            if let Some(t) = s(p, "thread_name") {
                s_.title = Some(t.to_string());
            }
        }
        "mcp_tool_call_end"
        | "dynamic_tool_call_request"
        | "dynamic_tool_call_response"
        | "web_search_end" => {
            let call = s(p, "call_id").or(s(p, "callId")).unwrap_or("");
            if !canon_calls.contains(call) {
                s_.report.skip(&format!(
                    "event_msg/{ty} (not a response item: not imported)"
                ));
            } else {
                s_.report.skip(&format!("event_msg/{ty}"));
            }
        }
        "" => s_.report.skip("event_msg without a type"),
        other => s_.report.skip(&format!("event_msg/{other}")),
    }
}

fn codex_usage(l: &Map<String, Value>) -> Usage {
    let input = u(l, "input_tokens");
    let cached = u(l, "cached_input_tokens");
    Usage {
        input: input.saturating_sub(cached),
        output: u(l, "output_tokens"),
        cache_read: cached,
        cache_write: 0,
        cost: None,
    }
}

fn content_parts(v: Option<&Value>) -> Vec<Part> {
    let mut out = Vec::new();
    match v {
        Some(Value::String(t)) => out.push(Part::Text(t.clone())),
        Some(Value::Array(items)) => {
            for it in items.iter().filter_map(Value::as_object) {
                match s(it, "type") {
                    Some("input_text" | "output_text" | "text") => {
                        if let Some(t) = it.get("text").and_then(Value::as_str) {
                            out.push(Part::Text(t.to_string()));
                        }
                    }
                    Some("input_image") => {
                        if let Some(img) = s(it, "image_url").and_then(jsonl::data_url_image) {
                            out.push(img);
                        } else if let Some(url) = s(it, "image_url") {
                            out.push(Part::Text(format!("[image: {url}]")));
                        }
                    }
                    _ => out.push(Part::Text(Value::Object(it.clone()).to_string())),
                }
            }
        }
        _ => {}
    }
    out
}

fn content_text(v: Option<&Value>) -> String {
    content_parts(v)
        .into_iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

fn reasoning_texts(p: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for k in ["summary", "content"] {
        if let Some(Value::Array(items)) = p.get(k) {
            out.extend(
                items
                    .iter()
                    .filter_map(Value::as_object)
                    .filter_map(|i| s(i, "text"))
                    .map(str::to_string),
            );
        }
    }
    out
}

/// A tool's output: a string; `{content, success}`; or content items.
fn tool_output(v: Option<&Value>) -> (Vec<Part>, bool) {
    match v {
        Some(Value::String(t)) => (vec![Part::Text(t.clone())], false),
        Some(Value::Object(o)) if o.contains_key("content") => {
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let (c, _) = tool_output(o.get("content"));
            (c, failed)
        }
        Some(Value::Array(_)) => {
            let parts = content_parts(v);
            (parts, false)
        }
        None | Some(Value::Null) => (Vec::new(), false),
        Some(other) => (vec![Part::Text(other.to_string())], false),
    }
}

fn compaction_summary(p: &Map<String, Value>) -> String {
    if let Some(Value::Array(h)) = p.get("replacement_history") {
        let texts: Vec<String> = h
            .iter()
            .filter_map(Value::as_object)
            .filter(|i| s(i, "type") == Some("message"))
            .map(|i| content_text(i.get("content")))
            .filter(|t| !t.trim().is_empty())
            .collect();
        if !texts.is_empty() {
            return texts.join("\n\n");
        }
    }
    match s(p, "message") {
        Some(m) if !m.trim().is_empty() => m.to_string(),
        _ => "Context compacted by Codex.".into(),
    }
}

/// The events whose payload the reader reads (of every other event only its `type` and call
/// id are: they are counted in the report).
const READ_EVENTS: &[&str] = &[
    "token_count",
    "user_message",
    "agent_message",
    "agent_reasoning",
    "item_completed",
    "thread_rolled_back",
    "thread_name_updated",
];

/// A record as the reader parses it, into `out`: the envelope as it is, its payload without
/// what the reader never reads (an event's payload the reader does not read, such as
/// `exec_command_end` with the command's output three times, but its `type` and call id; a
/// reasoning item's `encrypted_content`). At [`Detail::Listing`] also a tool output's
/// `output` (as `""`), a call's `arguments` (`{}`), `input` (`""`) and `action` (`{}`).
fn slim_record(line: &[u8], f: &arbor_core::entry::Fields, detail: Detail, out: &mut Vec<u8>) {
    use arbor_core::entry::raw_str;
    use arbor_core::json::ValueKind;
    out.clear();
    let kind = f.str(line, "type");
    let payload = f.range(line, "payload").filter(|r| line[r.start] == b'{');
    let (Some(kind), Some(range)) = (kind, payload) else {
        out.extend_from_slice(line);
        return;
    };
    let raw = &line[range.clone()];
    let Ok(scan) = arbor_core::json::scan_object(raw) else {
        out.extend_from_slice(line);
        return;
    };
    let ty = scan
        .get(raw, "type")
        .and_then(|m| raw_str(&raw[m.value.clone()], m.kind));
    let ty = ty.as_deref().unwrap_or("");
    let listing = detail == Detail::Listing;
    // (member, written as); `None`: the member is left out.
    let cut = |key: &[u8]| -> Option<Option<&'static [u8]>> {
        match (kind.as_ref(), ty) {
            ("event_msg", t) if !READ_EVENTS.contains(&t) => {
                (!matches!(key, b"type" | b"call_id" | b"callId")).then_some(None)
            }
            ("response_item", "reasoning") => (key == b"encrypted_content").then_some(None),
            (
                "response_item",
                "function_call_output" | "custom_tool_call_output" | "tool_search_output",
            ) if listing => matches!(key, b"output" | b"tools").then_some(Some(b"\"\"")),
            ("response_item", "function_call" | "tool_search_call") if listing => {
                (key == b"arguments").then_some(Some(b"{}"))
            }
            ("response_item", "custom_tool_call") if listing => {
                (key == b"input").then_some(Some(b"\"\""))
            }
            ("response_item", "local_shell_call" | "web_search_call") if listing => {
                (key == b"action").then_some(Some(b"{}"))
            }
            _ => None,
        }
    };
    out.extend_from_slice(&line[..range.start]);
    out.push(b'{');
    let mut first = true;
    for m in &scan.members {
        let key = &raw[m.key.clone()];
        let value = &raw[m.value.clone()];
        let cut = cut(key);
        if cut == Some(None) {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        match cut {
            // A tool output `{content, success}`: its content cut, whether it failed kept.
            Some(Some(_)) if m.kind == ValueKind::Object => {
                match arbor_core::json::scan_object(value) {
                    Ok(o) => jsonl::rebuild(value, &o, out, |k, _, _, out| {
                        if k != b"content" {
                            return false;
                        }
                        out.extend_from_slice(b"\"\"");
                        true
                    }),
                    Err(_) => out.extend_from_slice(value),
                }
            }
            Some(Some(with)) if m.kind != ValueKind::Null => out.extend_from_slice(with),
            _ => out.extend_from_slice(value),
        }
    }
    out.push(b'}');
    out.extend_from_slice(&line[range.end..]);
}

/// The id in a rollout's file name (`rollout-<time>-<uuid>.jsonl`), else the file's stem.
pub fn rollout_id(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.len() >= 36 {
        let tail = &stem[stem.len() - 36..];
        if tail.chars().filter(|c| *c == '-').count() == 4 {
            return tail.to_string();
        }
    }
    stem
}

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub fn home() -> PathBuf {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| arbor_store::paths::home_dir().join(".codex"))
}

/// Every rollout under `home`'s `sessions/` and `archived_sessions/` (any depth), sorted.
pub fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ["sessions", "archived_sessions"] {
        walk(&home.join(d), 0, &mut out);
    }
    out.sort();
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 5 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() {
            walk(&p, depth + 1, out);
        } else if t.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}
