//! opencode's sessions: since 1.2 rows of `~/.local/share/opencode/opencode.db` (SQLite:
//! `session` with `parent_id`, `directory`, `title`, `version`; `message` and `part` with a
//! JSON `data` column), before that JSON files under `storage/` (`session/<project>/<id>.json`,
//! `message/<session>/<id>.json`, `part/<message>/<id>.json`). Both hold the same shapes.
//!
//! A message is linear in its session (ids sort by time). An assistant message can hold
//! several model calls (`step-start` … `step-finish`, the finish carrying that step's tokens
//! and cost): each step is one pi assistant message, its `tool` parts' results tool results
//! after it. A user message with a `compaction` part followed by an assistant message with
//! `summary: true` is a compaction. Sessions with a `parent_id` are subagents' (child
//! sessions).
//!
//! The database is never opened in place: it is copied (with its `-wal`) into a private
//! temporary directory and the copy is read, so that not even SQLite's reader bookkeeping
//! touches opencode's files.
use crate::jsonl::{self, obj, s, u};
use crate::model::{
    Agent, Assistant, Compaction, Node, NodeKind, Part, Session, ToolResult, Usage,
};
use crate::AgentError;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// opencode's data directory: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
pub fn data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| arbor_store::paths::home_dir().join(".local/share"))
        .join("opencode")
}

/// One session's row.
#[derive(Debug, Clone, Default)]
pub struct SessionRow {
    /// `ses_…`.
    pub id: String,
    /// The parent session (a subagent's), if any.
    pub parent_id: Option<String>,
    /// Its directory (cwd).
    pub directory: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// The opencode version that made it.
    pub version: Option<String>,
    /// Created, ms.
    pub created_ms: Option<i64>,
}

/// A message with its parts (each a JSON object), in order.
type Msg = (String, Map<String, Value>, Vec<Map<String, Value>>);

/// What opencode keeps, loaded: every session and the messages of each.
pub struct Store {
    /// Where it was read from (the database, or the storage directory).
    pub path: PathBuf,
    /// The sessions.
    pub sessions: Vec<SessionRow>,
    messages: std::collections::HashMap<String, Vec<Msg>>,
    bad: Vec<(u64, String)>,
}

impl Store {
    /// Loads opencode's data under `dir`: the database if there is one, else `storage/`.
    ///
    /// # Errors
    /// When neither can be read.
    pub fn load(dir: &Path) -> Result<Store, AgentError> {
        let db = dir.join("opencode.db");
        if db.is_file() {
            return load_db(&db);
        }
        let storage = dir.join("storage");
        if storage.is_dir() {
            return Ok(load_storage(&storage));
        }
        Err(AgentError::NotFound(format!(
            "{}: no opencode.db and no storage/ (is opencode installed here?)",
            dir.display()
        )))
    }

    /// The session `id` (and its subagents', recursively) in the common model.
    ///
    /// # Errors
    /// [`AgentError::NotFound`] when there is no such session.
    pub fn read(&self, id: &str) -> Result<Session, AgentError> {
        self.read_depth(id, 0)
    }

    fn read_depth(&self, id: &str, depth: usize) -> Result<Session, AgentError> {
        let row = self
            .sessions
            .iter()
            .find(|r| r.id == id)
            .ok_or_else(|| AgentError::NotFound(format!("no opencode session {id}")))?;
        let mut s_ = Session::new(Agent::Opencode, id, &self.path);
        s_.cwd = row.directory.clone();
        s_.title = row.title.clone();
        s_.created_ms = row.created_ms;
        if let Some(v) = &row.version {
            s_.saw_version(v);
        }
        if depth == 0 {
            for (l, p) in &self.bad {
                s_.report.bad(*l, p.clone());
            }
        }
        convert(
            &mut s_,
            self.messages.get(id).map_or(&[][..], Vec::as_slice),
        );
        if depth < 8 {
            for c in self
                .sessions
                .iter()
                .filter(|r| r.parent_id.as_deref() == Some(id))
            {
                s_.children.push(self.read_depth(&c.id, depth + 1)?);
            }
        }
        Ok(s_)
    }
}

fn row_from_json(m: &Map<String, Value>) -> Option<SessionRow> {
    Some(SessionRow {
        id: s(m, "id")?.to_string(),
        parent_id: s(m, "parentID").map(str::to_string),
        directory: s(m, "directory").map(str::to_string),
        title: s(m, "title").map(str::to_string),
        version: s(m, "version").map(str::to_string),
        created_ms: obj(m, "time").and_then(|t| jsonl::time_ms(t.get("created"))),
    })
}

fn load_storage(storage: &Path) -> Store {
    let mut st = Store {
        path: jsonl::absolute(storage),
        sessions: Vec::new(),
        messages: Default::default(),
        bad: Vec::new(),
    };
    let read_obj = |p: &Path, bad: &mut Vec<(u64, String)>| -> Option<Map<String, Value>> {
        let bytes = jsonl::read_source(p).ok()?;
        match serde_json::from_slice::<Value>(bytes.as_ref()) {
            Ok(Value::Object(m)) => Some(m),
            _ => {
                bad.push((0, format!("{}: not a JSON object: skipped", p.display())));
                None
            }
        }
    };
    for proj in list(&storage.join("session"), true) {
        for f in list(&proj, false) {
            if let Some(m) = read_obj(&f, &mut st.bad) {
                if let Some(r) = row_from_json(&m) {
                    st.sessions.push(r);
                }
            }
        }
    }
    for sess in &st.sessions {
        let mut msgs = Vec::new();
        for f in list(&storage.join("message").join(&sess.id), false) {
            let Some(m) = read_obj(&f, &mut st.bad) else {
                continue;
            };
            let id = s(&m, "id").map(str::to_string).unwrap_or_default();
            let mut parts: Vec<(String, Map<String, Value>)> = Vec::new();
            for pf in list(&storage.join("part").join(&id), false) {
                if let Some(p) = read_obj(&pf, &mut st.bad) {
                    parts.push((s(&p, "id").unwrap_or("").to_string(), p));
                }
            }
            parts.sort_by(|a, b| a.0.cmp(&b.0));
            msgs.push((id, m, parts.into_iter().map(|p| p.1).collect()));
        }
        msgs.sort_by(|a, b| a.0.cmp(&b.0));
        st.messages.insert(sess.id.clone(), msgs);
    }
    st
}

fn list(dir: &Path, dirs: bool) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| if dirs { t.is_dir() } else { t.is_file() })
        })
        .map(|e| e.path())
        .filter(|p| dirs || p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

fn load_db(db: &Path) -> Result<Store, AgentError> {
    let dberr = |e: rusqlite::Error| AgentError::Database {
        path: db.to_path_buf(),
        message: e.to_string(),
    };
    // A private copy (the database and its write-ahead log): SQLite never touches the original.
    let tmp = tempfile::tempdir().map_err(|e| AgentError::io(db, e))?;
    let copy = tmp.path().join("opencode.db");
    copy_regular(db, &copy)?;
    let wal = arbor_store::paths::with_suffix(db, "-wal");
    if wal.is_file() {
        copy_regular(&wal, &arbor_store::paths::with_suffix(&copy, "-wal"))?;
    }
    let conn = rusqlite::Connection::open(&copy).map_err(dberr)?;
    let mut st = Store {
        path: jsonl::absolute(db),
        sessions: Vec::new(),
        messages: Default::default(),
        bad: Vec::new(),
    };
    {
        let mut q = conn.prepare("SELECT * FROM session").map_err(dberr)?;
        let cols: Vec<String> = q.column_names().iter().map(|c| c.to_string()).collect();
        let col = |n: &str| cols.iter().position(|c| c == n);
        let (ci, cp, cd, ct, cv, cc) = (
            col("id"),
            col("parent_id"),
            col("directory"),
            col("title"),
            col("version"),
            col("time_created"),
        );
        let mut rows = q.query([]).map_err(dberr)?;
        while let Some(r) = rows.next().map_err(dberr)? {
            let get =
                |c: Option<usize>| c.and_then(|i| r.get::<_, Option<String>>(i).ok().flatten());
            let Some(id) = get(ci) else { continue };
            st.sessions.push(SessionRow {
                id,
                parent_id: get(cp).filter(|p| !p.is_empty()),
                directory: get(cd),
                title: get(ct),
                version: get(cv),
                created_ms: cc.and_then(|i| r.get::<_, Option<i64>>(i).ok().flatten()),
            });
        }
    }
    let mut q = conn
        .prepare(
            "SELECT m.session_id, m.id, m.data, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id \
             ORDER BY m.session_id, m.id, p.id",
        )
        .map_err(dberr)?;
    let mut rows = q.query([]).map_err(dberr)?;
    let mut n = 0u64;
    while let Some(r) = rows.next().map_err(dberr)? {
        n += 1;
        let sid: String = r.get(0).map_err(dberr)?;
        let mid: String = r.get(1).map_err(dberr)?;
        let mdata: Option<String> = r.get(2).map_err(dberr)?;
        let pdata: Option<String> = r.get(3).map_err(dberr)?;
        let msgs = st.messages.entry(sid).or_default();
        if msgs.last().is_none_or(|m| m.0 != mid) {
            let m = match mdata.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(Value::Object(m))) => m,
                _ => {
                    st.bad.push((
                        0,
                        format!("row {n}: message {mid}: data is not a JSON object: skipped"),
                    ));
                    Map::new()
                }
            };
            msgs.push((mid.clone(), m, Vec::new()));
        }
        if let Some(pd) = pdata {
            match serde_json::from_str::<Value>(&pd) {
                Ok(Value::Object(p)) => {
                    if let Some(last) = msgs.last_mut() {
                        last.2.push(p)
                    }
                }
                _ => st.bad.push((
                    0,
                    format!("row {n}: a part of message {mid}: not a JSON object: skipped"),
                )),
            }
        }
    }
    Ok(st)
}

fn copy_regular(from: &Path, to: &Path) -> Result<(), AgentError> {
    let mut src = arbor_store::open_regular(from).map_err(|e| AgentError::io(from, e))?;
    let mut dst = std::fs::File::create(to).map_err(|e| AgentError::io(to, e))?;
    std::io::copy(&mut src, &mut dst).map_err(|e| AgentError::io(from, e))?;
    Ok(())
}

/// pi's `api` for an opencode provider id (guessed from the provider: opencode does not record it).
fn api_of(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "anthropic-messages",
        "openai" => "openai-responses",
        "google" => "google-generative-ai",
        _ => "openai-completions",
    }
}

fn step_usage(p: &Map<String, Value>) -> Usage {
    let t = obj(p, "tokens");
    let cache = t.and_then(|t| obj(t, "cache"));
    Usage {
        input: t.map_or(0, |t| u(t, "input")),
        output: t.map_or(0, |t| u(t, "output") + u(t, "reasoning")),
        cache_read: cache.map_or(0, |c| u(c, "read")),
        cache_write: cache.map_or(0, |c| u(c, "write")),
        cost: p.get("cost").and_then(Value::as_f64),
    }
}

fn convert(s_: &mut Session, msgs: &[Msg]) {
    let mut tail: Option<usize> = None;
    let mut pending_compaction = false;
    let push =
        |s_: &mut Session, tail: &mut Option<usize>, key: String, ts: i64, kind: NodeKind| {
            let i = s_.push(Node {
                key,
                parent: *tail,
                timestamp_ms: ts,
                kind,
            });
            *tail = Some(i);
        };
    for (mid, m, parts) in msgs {
        let ts = obj(m, "time")
            .and_then(|t| jsonl::time_ms(t.get("created")))
            .unwrap_or(0);
        if s_.cwd.is_none() {
            s_.cwd = obj(m, "path").and_then(|p| s(p, "cwd")).map(str::to_string);
        }
        match s(m, "role") {
            Some("user") => {
                if parts.iter().any(|p| s(p, "type") == Some("compaction")) {
                    pending_compaction = true;
                    s_.report.skip("user message asking for a compaction");
                    continue;
                }
                let mut content = Vec::new();
                for p in parts {
                    match s(p, "type") {
                        Some("text") => {
                            if let Some(t) = p.get("text").and_then(Value::as_str) {
                                content.push(Part::Text(t.to_string()))
                            }
                        }
                        Some("file") => match s(p, "url").and_then(jsonl::data_url_image) {
                            Some(img @ Part::Image { .. })
                                if s(p, "mime").is_some_and(|m| m.starts_with("image/")) =>
                            {
                                content.push(img)
                            }
                            _ => content.push(Part::Text(format!(
                                "[file: {}]",
                                s(p, "filename").or(s(p, "url")).unwrap_or("?")
                            ))),
                        },
                        Some("agent") | Some("subtask") => content.push(Part::Text(
                            s(p, "prompt").or(s(p, "name")).unwrap_or("").to_string(),
                        )),
                        Some(other) => s_.report.skip(&format!("user part {other}")),
                        None => {}
                    }
                }
                if content.is_empty() {
                    s_.report.skip("user message (empty)");
                    continue;
                }
                push(s_, &mut tail, mid.clone(), ts, NodeKind::User(content));
            }
            Some("assistant") => {
                let model = s(m, "modelID").unwrap_or("unknown").to_string();
                let provider = s(m, "providerID").unwrap_or("opencode").to_string();
                if m.get("summary").and_then(Value::as_bool) == Some(true) || pending_compaction {
                    pending_compaction = false;
                    let text = parts
                        .iter()
                        .filter(|p| s(p, "type") == Some("text"))
                        .filter_map(|p| s(p, "text"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    let tokens = obj(m, "tokens").map_or(0, |t| u(t, "input"));
                    push(
                        s_,
                        &mut tail,
                        mid.clone(),
                        ts,
                        NodeKind::Compaction(Compaction {
                            summary: text,
                            tokens_before: tokens,
                            first_kept: None,
                        }),
                    );
                    continue;
                }
                let error = obj(m, "error").map(|e| {
                    obj(e, "data")
                        .and_then(|d| s(d, "message"))
                        .or(s(e, "name"))
                        .unwrap_or("error")
                        .to_string()
                });
                // One pi message per step.
                let mut steps: Vec<(Vec<Part>, Vec<ToolResult>, Usage, bool)> =
                    vec![Default::default()];
                for p in parts {
                    let cur = steps.len() - 1;
                    match s(p, "type") {
                        Some("step-start")
                            if !steps[cur].0.is_empty() || !steps[cur].1.is_empty() =>
                        {
                            steps.push(Default::default());
                        }
                        Some("step-start") => {}
                        Some("step-finish") => {
                            steps[cur].2 = step_usage(p);
                            steps[cur].3 = true;
                        }
                        Some("text") => {
                            if let Some(t) = p.get("text").and_then(Value::as_str) {
                                steps[cur].0.push(Part::Text(t.to_string()))
                            }
                        }
                        Some("reasoning") => steps[cur].0.push(Part::Thinking {
                            text: p
                                .get("text")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            signature: None,
                            redacted: false,
                        }),
                        Some("tool") => {
                            let id = s(p, "callID").or(s(p, "id")).unwrap_or("").to_string();
                            let name = s(p, "tool").unwrap_or("unknown").to_string();
                            let state = obj(p, "state");
                            steps[cur].0.push(Part::ToolCall {
                                id: id.clone(),
                                name: name.clone(),
                                arguments: jsonl::arguments(state.and_then(|st| st.get("input"))),
                            });
                            let status = state.and_then(|st| s(st, "status")).unwrap_or("");
                            let (text, is_error) = match status {
                                "completed" => (
                                    state
                                        .and_then(|st| st.get("output"))
                                        .map(jsonl::as_text)
                                        .unwrap_or_default(),
                                    false,
                                ),
                                "error" => (
                                    state
                                        .and_then(|st| st.get("error"))
                                        .map(jsonl::as_text)
                                        .unwrap_or_default(),
                                    true,
                                ),
                                other => (format!("[tool {other}: no result recorded]"), true),
                            };
                            steps[cur].1.push(ToolResult {
                                call_id: id,
                                tool_name: name,
                                content: vec![Part::Text(text)],
                                is_error,
                            });
                        }
                        Some("file") => {
                            if let Some(img) = s(p, "url").and_then(jsonl::data_url_image) {
                                steps[cur].0.push(img);
                            }
                        }
                        Some(other) => s_.report.skip(&format!("assistant part {other}")),
                        None => {}
                    }
                }
                let whole = Usage {
                    input: obj(m, "tokens").map_or(0, |t| u(t, "input")),
                    output: obj(m, "tokens").map_or(0, |t| u(t, "output") + u(t, "reasoning")),
                    cache_read: obj(m, "tokens")
                        .and_then(|t| obj(t, "cache"))
                        .map_or(0, |c| u(c, "read")),
                    cache_write: obj(m, "tokens")
                        .and_then(|t| obj(t, "cache"))
                        .map_or(0, |c| u(c, "write")),
                    cost: m.get("cost").and_then(Value::as_f64),
                };
                let any_finish = steps.iter().any(|st| st.3);
                let n_steps = steps.len();
                for (i, (content, results, usage, _)) in steps.into_iter().enumerate() {
                    if content.is_empty()
                        && results.is_empty()
                        && (i + 1 < n_steps || error.is_none())
                    {
                        continue;
                    }
                    let has_calls = content.iter().any(|p| matches!(p, Part::ToolCall { .. }));
                    let usage = if any_finish {
                        usage
                    } else if i == 0 {
                        whole
                    } else {
                        Usage::default()
                    };
                    let last = i + 1 == n_steps;
                    push(
                        s_,
                        &mut tail,
                        if i == 0 {
                            mid.clone()
                        } else {
                            format!("{mid}#{i}")
                        },
                        ts,
                        NodeKind::Assistant(Assistant {
                            content,
                            api: api_of(&provider).into(),
                            provider: provider.clone(),
                            model: model.clone(),
                            usage,
                            stop_reason: if last && error.is_some() {
                                "error".into()
                            } else if has_calls {
                                "toolUse".into()
                            } else {
                                "stop".into()
                            },
                            response_id: None,
                            error: if last { error.clone() } else { None },
                        }),
                    );
                    for (j, r) in results.into_iter().enumerate() {
                        push(
                            s_,
                            &mut tail,
                            format!("{mid}#{i}.{j}"),
                            ts,
                            NodeKind::ToolResult(r),
                        );
                    }
                }
            }
            Some(other) => s_.report.unknown(&format!("message role {other}")),
            None => s_
                .report
                .bad(0, format!("message {mid} without a role: skipped")),
        }
    }
}
