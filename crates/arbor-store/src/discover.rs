//! Session discovery: listing a directory as pi's `SessionManager.list`, the most recent
//! session, and pi's `SessionInfo`.
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Role};
use arbor_core::entry::Fields;
use arbor_core::json::{scan_object, skip_ws, value_end, write_str_escaped, JsValue, ValueKind};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// pi's `SessionInfo` for one file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// Header `id` (raw JSON; usually a string).
    pub id: Option<String>,
    /// Header `cwd` when a string, else `""`.
    pub cwd: String,
    /// Name from the last `session_info` (trimmed; `None` when absent or cleared).
    pub name: Option<String>,
    /// Header `parentSession` (raw JSON value, canonical), when present.
    pub parent_session_path: Option<String>,
    /// `new Date(header.timestamp)` in ms (`None`: Invalid Date).
    pub created_ms: Option<f64>,
    /// Last user/assistant activity, else header time, else file mtime (ms).
    pub modified_ms: f64,
    /// Number of `message` entries (all roles, all branches).
    pub message_count: usize,
    /// First user text, or `(no messages)`.
    pub first_message: String,
    /// All user/assistant texts joined with spaces.
    pub all_messages_text: String,
}

fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The text of a message's content as pi's `extractTextContent`: the string itself, or the
/// `text` of the `type: "text"` blocks joined with spaces. `None` when pi would throw.
pub fn extract_text(content: &JsValue) -> Option<String> {
    match content {
        JsValue::String(s) => Some(s.to_string_lossy().into_owned()),
        JsValue::Array(blocks) => {
            let mut parts = Vec::new();
            for b in blocks {
                match b {
                    JsValue::Null => return None,
                    JsValue::Object(_) if b.get("type").and_then(|t| t.as_str_lossy()).as_deref() == Some("text") => {
                        let mut t = Vec::new();
                        match b.get("text") {
                            None | Some(JsValue::Null) => {}
                            v => crate::text::to_js_string(v, &mut t),
                        }
                        parts.push(String::from_utf8_lossy(&t).into_owned());
                    }
                    _ => {}
                }
            }
            Some(parts.join(" "))
        }
        _ => None,
    }
}

/// [`extract_text`] on the raw JSON of `content`, without building a DOM of it: only the
/// `text` of `type: "text"` blocks is decoded (a listing reads every user and assistant
/// message of every session; thinking blocks, tool arguments and images are skipped).
/// `Ok(None)` where pi would throw; `Err(())` when the bytes are not valid JSON.
fn extract_text_raw(raw: &[u8], kind: ValueKind) -> Result<Option<String>, ()> {
    match kind {
        ValueKind::String => {
            let inner = raw.get(1..raw.len().saturating_sub(1)).ok_or(())?;
            let s = arbor_core::json::decode_string(inner).map_err(|_| ())?;
            Ok(Some(s.to_string_lossy().into_owned()))
        }
        ValueKind::Array => {
            let mut parts: Vec<String> = Vec::new();
            let mut i = skip_ws(raw, 1);
            if raw.get(i) == Some(&b']') {
                return Ok(Some(String::new()));
            }
            loop {
                let end = value_end(raw, i).map_err(|_| ())?;
                let elem = raw.get(i..end).ok_or(())?;
                match elem.first() {
                    Some(b'n') => return Ok(None),
                    Some(b'{') => {
                        let scan = scan_object(elem).map_err(|_| ())?;
                        let f = Fields { members: scan.members.into_boxed_slice() };
                        if f.str(elem, "type").as_deref() == Some("text") {
                            let mut t = Vec::new();
                            match f.get(elem, "text") {
                                None | Some((_, ValueKind::Null)) => {}
                                Some((v, ValueKind::String)) => {
                                    let inner = v.get(1..v.len().saturating_sub(1)).ok_or(())?;
                                    t = arbor_core::json::decode_string(inner).map_err(|_| ())?.0;
                                }
                                Some((v, _)) => {
                                    let dom = JsValue::parse(v).map_err(|_| ())?;
                                    crate::text::to_js_string(Some(&dom), &mut t);
                                }
                            }
                            parts.push(String::from_utf8_lossy(&t).into_owned());
                        }
                    }
                    _ => {}
                }
                i = skip_ws(raw, end);
                match raw.get(i) {
                    Some(b',') => i = skip_ws(raw, i + 1),
                    Some(b']') => return Ok(Some(parts.join(" "))),
                    _ => return Err(()),
                }
            }
        }
        _ => Ok(None),
    }
}

/// Computes pi's `SessionInfo` from a loaded file. `None` where pi hides the file.
pub fn session_info(path: &Path, doc: &SessionDoc, mtime_ms: f64) -> Option<SessionInfo> {
    let header = doc.header_line();
    let hf = &doc.header.fields;
    let mut name: Option<String> = None;
    let mut count = 0;
    let mut first = String::new();
    let mut all: Vec<String> = Vec::new();
    let mut last_activity: Option<f64> = None;
    for e in &doc.entries {
        let line = doc.line(&e.line);
        if e.etype == EntryType::SessionInfo {
            name = match e.fields.value(line, "name") {
                None | Some(JsValue::Null) => None,
                Some(JsValue::String(s)) => Some(js_trim(&s.to_string_lossy()).to_string()).filter(|n| !n.is_empty()),
                Some(_) => return None,
            };
        }
        if e.etype != EntryType::Message {
            continue;
        }
        count += 1;
        let Some(msg) = &e.message else {
            if e.fields.has(line, "message") {
                continue; // a non-object payload: pi skips it (no role)
            }
            return None; // `entry.message.role` of undefined throws in pi
        };
        if !matches!(e.role, Some(Role::User | Role::Assistant)) || !msg.has(line, "content") {
            continue;
        }
        let text = match msg.get(line, "content") {
            Some((raw, kind)) => match extract_text_raw(raw, kind) {
                Ok(t) => t?,
                // Not expected (the line was validated on load): the DOM path decides.
                Err(()) => extract_text(&JsValue::parse(raw).unwrap_or(JsValue::Null))?,
            },
            None => extract_text(&JsValue::Null)?,
        };
        // Activity: message.timestamp when a number, else the entry's ISO time.
        let t = msg.num(line, "timestamp").or_else(|| e.timestamp_ms());
        if let Some(t) = t {
            last_activity = Some(last_activity.unwrap_or(0.0).max(t));
        }
        if text.is_empty() {
            continue;
        }
        if first.is_empty() && e.role == Some(Role::User) {
            first = text.clone();
        }
        all.push(text);
    }
    let header_ms = hf.str(header, "timestamp").and_then(|t| arbor_core::time::parse_iso_ms(&t));
    let modified_ms = match last_activity {
        Some(t) if t > 0.0 => t,
        _ => header_ms.unwrap_or(mtime_ms),
    };
    let raw_json = |key: &str| {
        hf.get(header, key).map(|(raw, _)| {
            let mut out = Vec::new();
            if arbor_core::json::canonicalize(raw, &mut out).is_err() {
                out = raw.to_vec();
            }
            String::from_utf8_lossy(&out).into_owned()
        })
    };
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: raw_json("id"),
        cwd: hf.str(header, "cwd").map(|s| s.into_owned()).unwrap_or_default(),
        name,
        parent_session_path: raw_json("parentSession"),
        created_ms: header_ms,
        modified_ms,
        message_count: count,
        first_message: if first.is_empty() { "(no messages)".into() } else { first },
        all_messages_text: all.join(" "),
    })
}

fn mtime_ms(path: &Path) -> f64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

/// The `*.jsonl` files of `dir` in directory order (as `readdir` gives them).
pub fn session_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".jsonl")))
        .collect()
}

/// pi's `SessionManager.list(cwd, dir)`: every session of `dir`, newest `modified` first.
pub fn list_dir(dir: &Path) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = session_files(dir)
        .into_iter()
        .filter_map(|p| {
            let doc = crate::manager::load_doc(&p).ok()?;
            session_info(&p, &doc, mtime_ms(&p))
        })
        .collect();
    out.sort_by(|a, b| b.modified_ms.partial_cmp(&a.modified_ms).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// The most recently modified (file mtime) session of `dir` whose first line is a valid
/// header (pi reads only 512 bytes and misses long headers; the whole first line is read).
pub fn most_recent_session(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(f64, PathBuf)> = None;
    for p in session_files(dir) {
        if !has_valid_header(&p) {
            continue;
        }
        let m = mtime_ms(&p);
        if best.as_ref().is_none_or(|(bm, _)| m > *bm) {
            best = Some((m, p));
        }
    }
    best.map(|(_, p)| p)
}

/// Whether the file's first line (or the line after omp's title slot) is a session header
/// with a string id.
pub fn has_valid_header(path: &Path) -> bool {
    use std::io::{BufRead, BufReader};
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut r = BufReader::new(f);
    for _ in 0..2 {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).is_err() || line.is_empty() {
            return false;
        }
        let l = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(&line);
        let Ok(v) = JsValue::parse(l) else {
            return false;
        };
        match v.get("type").and_then(|t| t.as_str_lossy()).as_deref() {
            Some("title") => continue,
            Some("session") => return matches!(v.get("id"), Some(JsValue::String(_))),
            _ => return false,
        }
    }
    false
}

impl SessionInfo {
    /// Writes the JSON object of DESIGN's `arbor ls --json` (pi's fields; dates as ISO-8601
    /// UTC with milliseconds, `null` for an invalid date; absent `name` and
    /// `parentSessionPath` omitted as pi's `JSON.stringify` omits `undefined`).
    /// `all_text` adds pi's `allMessagesText`.
    pub fn write_json(&self, out: &mut Vec<u8>, all_text: bool) {
        let iso = |ms: f64| arbor_core::time::format_iso_ms(ms as i64);
        out.extend_from_slice(b"{\"path\":");
        write_str_escaped(&self.path.to_string_lossy(), out);
        out.extend_from_slice(b",\"id\":");
        match &self.id {
            Some(raw) => out.extend_from_slice(raw.as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"cwd\":");
        write_str_escaped(&self.cwd, out);
        if let Some(n) = &self.name {
            out.extend_from_slice(b",\"name\":");
            write_str_escaped(n, out);
        }
        if let Some(p) = &self.parent_session_path {
            out.extend_from_slice(b",\"parentSessionPath\":");
            out.extend_from_slice(p.as_bytes());
        }
        out.extend_from_slice(b",\"created\":");
        match self.created_ms {
            Some(ms) => write_str_escaped(&iso(ms), out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"modified\":");
        write_str_escaped(&iso(self.modified_ms), out);
        out.extend_from_slice(format!(",\"messageCount\":{}", self.message_count).as_bytes());
        out.extend_from_slice(b",\"firstMessage\":");
        write_str_escaped(&self.first_message, out);
        if all_text {
            out.extend_from_slice(b",\"allMessagesText\":");
            write_str_escaped(&self.all_messages_text, out);
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod extract_text_tests {
    use super::*;

    #[test]
    fn raw_extraction_matches_the_dom() {
        let cases: &[&str] = &[
            r#""plain text""#,
            r#""esc\n\"aped\" \ud83d lone""#,
            r#"[]"#,
            r#"[{"type":"text","text":"a"},{"type":"image","data":"xx"},{"type":"text","text":"b"}]"#,
            r#"[{"type":"thinking","thinking":"t"},{"type":"text","text":"x\ud83dy"}]"#,
            r#"[{"type":"text"},{"type":"text","text":null},{"type":"text","text":42},{"type":"text","text":{"a":1}}]"#,
            r#"[{"type":"text","text":"a"},null]"#,
            r#"[1, "s", true, [1], {"type":"text","text":"ok"}]"#,
            r#"[ {"type" : "text" , "text" : "spaced"} , {"type":"te\u0078t","text":"escaped type"} ]"#,
            r#"[{"type":"text","text":"first","text":"dup wins"}]"#,
            r#"42"#,
            r#"null"#,
            r#"{"type":"text","text":"an object"}"#,
        ];
        for c in cases {
            let raw = c.as_bytes();
            let kind = arbor_core::json::ValueKind::from_first_byte(raw[0]).expect("kind");
            let dom = extract_text(&JsValue::parse(raw).expect("valid"));
            assert_eq!(extract_text_raw(raw, kind), Ok(dom), "{c}");
        }
    }
}
