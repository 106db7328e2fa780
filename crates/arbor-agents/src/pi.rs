//! The common model as pi v3 entries: pi's message shapes (`user`, `assistant` with
//! `thinking`/`text`/`toolCall` parts and `usage`, `toolResult`), `compaction` entries,
//! `model_change`, the title as `session_info` (omp: the title slot), and a `custom` entry
//! `arbor-import` first, naming the source, so that a second import finds it.
//!
//! Entry ids are derived from the source (a hash of the agent, the session id and each
//! node's key), so that importing a grown source again gives the entries already imported
//! the same ids: what is new is what has an id the file lacks.
use crate::model::{Agent, Assistant, NodeKind, Part, Session, ToolResult, Usage};
use arbor_core::Dialect;
use arbor_store::{Base, NewEntry};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashSet;

/// The `customType` of the entry that names an imported session's source.
pub const MARKER: &str = "arbor-import";

/// One entry line of the import.
#[derive(Debug, Clone)]
pub struct Line {
    /// Its id.
    pub id: String,
    /// The line, without its newline.
    pub bytes: Vec<u8>,
}

/// A session as pi entries (the header is written by the store, see [`crate::import`]).
#[derive(Debug, Clone)]
pub struct PiSession {
    /// The entries in order: the marker, the nodes, the title.
    pub lines: Vec<Line>,
    /// The title, if any.
    pub title: Option<String>,
    /// The source's start time (ISO), for the header.
    pub created: Option<String>,
}

/// The source as the marker names it (`data` of the `arbor-import` entry).
pub fn marker_data(s: &Session, parent_source: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("agent".into(), json!(s.agent.name()));
    m.insert("sourceId".into(), json!(s.id));
    m.insert("sourcePath".into(), json!(s.path.to_string_lossy()));
    if let Some(c) = &s.cwd {
        m.insert("sourceCwd".into(), json!(c));
    }
    if let Some(p) = parent_source {
        m.insert("sourceParentId".into(), json!(p));
    }
    if let Some(f) = &s.forked_from {
        m.insert("sourceForkedFrom".into(), json!(f));
    }
    if !s.versions.is_empty() {
        m.insert("agentVersions".into(), json!(s.versions));
    }
    m.insert(
        "importedBy".into(),
        json!(concat!("arbor ", env!("CARGO_PKG_VERSION"))),
    );
    Value::Object(m)
}

/// The entry ids of a session's nodes: 12 hex digits of a hash of the agent, the session and
/// the node's key, made unique in order (a clash takes the next hash).
fn ids(s: &Session) -> (String, Vec<String>) {
    let mut taken: HashSet<String> = HashSet::new();
    let mut make = |key: &str| {
        let mut n = 0u32;
        loop {
            let mut h = Sha256::new();
            h.update(s.agent.name().as_bytes());
            h.update([0]);
            h.update(s.id.as_bytes());
            h.update([0]);
            h.update(key.as_bytes());
            if n > 0 {
                h.update(n.to_le_bytes());
            }
            let d = h.finalize();
            let id: String = d[..6].iter().map(|b| format!("{b:02x}")).collect();
            if taken.insert(id.clone()) {
                return id;
            }
            n += 1;
        }
    };
    let marker = make("\u{0}marker");
    let node_ids = s.nodes.iter().map(|n| make(&n.key)).collect();
    (marker, node_ids)
}

/// The id of the `session_info` entry for `title` (the same title, the same id).
fn title_id(s: &Session, title: &str) -> String {
    let mut h = Sha256::new();
    h.update(s.agent.name().as_bytes());
    h.update([0]);
    h.update(s.id.as_bytes());
    h.update(b"\0title\0");
    h.update(title.as_bytes());
    h.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn iso(ms: i64) -> String {
    arbor_core::time::format_iso_ms(ms)
}

/// `s` as pi (or omp) entries. `parent_source`: the source id of the session this one is a
/// subagent of.
pub fn to_pi(s: &Session, dialect: Dialect) -> PiSession {
    to_pi_child(s, dialect, None)
}

/// [`to_pi`] of a subagent's session, naming its parent's source id in the marker.
pub fn to_pi_child(s: &Session, dialect: Dialect, parent_source: Option<&str>) -> PiSession {
    let (marker_id, node_ids) = ids(s);
    let mut lines = Vec::with_capacity(s.nodes.len() + 2);
    let first_ts = s
        .created_ms
        .or_else(|| s.nodes.first().map(|n| n.timestamp_ms))
        .unwrap_or(0);
    let entry = |e: &NewEntry, id: &str, parent: Option<&str>, ts: i64| Line {
        id: id.to_string(),
        bytes: e.to_line(
            dialect,
            &Base {
                id,
                parent_id: parent,
                timestamp: &iso(ts),
            },
        ),
    };
    lines.push(entry(
        &NewEntry::Custom {
            custom_type: json!(MARKER).to_string().into_bytes(),
            data: Some(marker_data(s, parent_source).to_string().into_bytes()),
        },
        &marker_id,
        None,
        first_ts,
    ));
    for (i, n) in s.nodes.iter().enumerate() {
        let parent = Some(match n.parent {
            Some(p) => node_ids[p].as_str(),
            None => marker_id.as_str(),
        });
        let e = match &n.kind {
            NodeKind::User(parts) => NewEntry::Message(user_json(parts, n.timestamp_ms)),
            NodeKind::Assistant(a) => NewEntry::Message(assistant_json(a, n.timestamp_ms)),
            NodeKind::ToolResult(t) => NewEntry::Message(tool_result_json(t, n.timestamp_ms)),
            NodeKind::Compaction(c) => NewEntry::Compaction {
                summary: json!(c.summary).to_string().into_bytes(),
                short_summary: None,
                first_kept_entry_id: c
                    .first_kept
                    .map(|k| json!(node_ids[k]).to_string().into_bytes()),
                tokens_before: c.tokens_before.to_string().into_bytes(),
                details: None,
                from_hook: None,
                preserve_data: None,
                usage: None,
                system_message: None,
            },
            NodeKind::ModelChange { provider, model } => match dialect {
                Dialect::Pi => NewEntry::ModelChange {
                    provider: provider.clone(),
                    model_id: model.clone(),
                },
                Dialect::Omp => NewEntry::OmpModelChange {
                    model: format!("{provider}/{model}"),
                    role: None,
                    fallback: None,
                },
            },
        };
        lines.push(entry(&e, &node_ids[i], parent, n.timestamp_ms));
    }
    if let (Some(t), Dialect::Pi) = (&s.title, dialect) {
        let last = lines.last().map(|l| l.id.clone());
        let ts = s.nodes.last().map_or(first_ts, |n| n.timestamp_ms);
        lines.push(entry(
            &NewEntry::SessionInfo(t.trim().to_string()),
            &title_id(s, t.trim()),
            last.as_deref(),
            ts,
        ));
    }
    PiSession {
        lines,
        title: s.title.clone(),
        created: (first_ts > 0).then(|| iso(first_ts)),
    }
}

/// The `session_info` line for `title` after `parent` (a re-import whose title changed).
pub fn title_line(s: &Session, title: &str, parent: Option<&str>, ts_ms: i64) -> Line {
    let id = title_id(s, title.trim());
    Line {
        bytes: NewEntry::SessionInfo(title.trim().to_string()).to_line(
            Dialect::Pi,
            &Base {
                id: &id,
                parent_id: parent,
                timestamp: &iso(ts_ms),
            },
        ),
        id,
    }
}

fn part_json(p: &Part) -> Value {
    match p {
        Part::Text(t) => json!({"type": "text", "text": t}),
        Part::Image { data, mime } => json!({"type": "image", "data": data, "mimeType": mime}),
        Part::Thinking {
            text,
            signature,
            redacted,
        } => {
            let mut m = Map::new();
            m.insert("type".into(), json!("thinking"));
            m.insert("thinking".into(), json!(text));
            if let Some(sig) = signature {
                m.insert("thinkingSignature".into(), json!(sig));
            }
            if *redacted {
                m.insert("redacted".into(), json!(true));
            }
            Value::Object(m)
        }
        Part::ToolCall {
            id,
            name,
            arguments,
        } => json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments}),
    }
}

fn user_json(parts: &[Part], ts: i64) -> Vec<u8> {
    // A single text is pi's plain string content (what pi writes for a typed prompt).
    let content = match parts {
        [Part::Text(t)] => json!(t),
        _ => Value::Array(parts.iter().map(part_json).collect()),
    };
    json!({"role": "user", "content": content, "timestamp": ts})
        .to_string()
        .into_bytes()
}

/// pi's usage object (costs 0 unless the agent recorded dollars: then `total`).
pub fn usage_json(u: &Usage) -> Value {
    let total = u.cost.unwrap_or(0.0);
    json!({
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": total},
    })
}

fn assistant_json(a: &Assistant, ts: i64) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        Value::Array(a.content.iter().map(part_json).collect()),
    );
    m.insert("api".into(), json!(a.api));
    m.insert("provider".into(), json!(a.provider));
    m.insert("model".into(), json!(a.model));
    if let Some(r) = &a.response_id {
        m.insert("responseId".into(), json!(r));
    }
    m.insert("usage".into(), usage_json(&a.usage));
    m.insert("stopReason".into(), json!(a.stop_reason));
    if let Some(e) = &a.error {
        m.insert("errorMessage".into(), json!(e));
    }
    m.insert("timestamp".into(), json!(ts));
    Value::Object(m).to_string().into_bytes()
}

fn tool_result_json(t: &ToolResult, ts: i64) -> Vec<u8> {
    json!({
        "role": "toolResult",
        "toolCallId": t.call_id,
        "toolName": t.tool_name,
        "content": Value::Array(t.content.iter().map(part_json).collect()),
        "isError": t.is_error,
        "timestamp": ts,
    })
    .to_string()
    .into_bytes()
}

/// The provider and api pi names for an agent's models when the agent does not say.
pub fn default_provider(agent: Agent) -> (&'static str, &'static str) {
    match agent {
        Agent::Claude => ("anthropic", "anthropic-messages"),
        Agent::Codex => ("openai-codex", "openai-codex-responses"),
        Agent::Opencode => ("opencode", "openai-completions"),
    }
}
