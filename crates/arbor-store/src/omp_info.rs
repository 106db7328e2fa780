//! omp 18's session listing (`SessionManager.list` of `@oh-my-pi/pi-coding-agent` 18.3.4): each
//! file is judged from two bounded windows, its first 4 KB (title slot, header, first
//! messages) and its last 32 KB (the lifecycle status, assistant turns); the whole file is
//! read only when neither window shows an assistant turn (omp 18.3's `hasAssistantTurn`).
//!
//! Reimplemented from omp's behaviour: the header is taken from the parsed lines of the
//! prefix, else by scanning the first line's text for string properties; `messageCount` is
//! the larger of the parsed `message` entries and the `"type":"message"` markers found in the
//! prefix text; `title` is the header's (or the title slot's) title, else the last compaction
//! `shortSummary` of the prefix; `modified` is the file's mtime. The listing never writes
//! (omp's orphaned-backup recovery is left out) and keeps no cache.
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use arbor_core::json::{write_str_escaped, JsValue};

use arbor_core::js;

/// Bytes of the head window omp reads.
pub const PREFIX_BYTES: u64 = 4096;
/// Bytes of the tail window omp reads for the status.
pub const SUFFIX_BYTES: u64 = 32_768;

/// omp's `SessionInfo` of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct OmpSessionInfo {
    /// The file.
    pub path: PathBuf,
    /// The header's `id`.
    pub id: String,
    /// The header's `cwd` (empty when absent).
    pub cwd: String,
    /// Header / title slot title, else the prefix's last compaction `shortSummary`.
    pub title: Option<String>,
    /// The header's `parentSession`.
    pub parent_session_path: Option<String>,
    /// `new Date(header.timestamp)` in ms (`None`: Invalid Date, written as `null`).
    pub created_ms: Option<f64>,
    /// The file's mtime in ms.
    pub modified_ms: f64,
    /// Messages (parsed or counted by marker in the prefix).
    pub message_count: u64,
    /// Assistant turns (omp 18.3): the larger of the assistant messages parsed in the prefix
    /// and the `"role":"assistant"` markers of either window; when all are 0, 1 if any line
    /// of the file is an assistant message, else 0.
    pub assistant_turns: u64,
    /// File size in bytes.
    pub size: u64,
    /// First user text (or omp's fallback), `"(no messages)"` when none.
    pub first_message: String,
    /// The prefix's user/assistant texts joined with spaces.
    pub all_messages_text: String,
    /// `complete`, `interrupted`, `aborted`, `error`, `pending` or `unknown`.
    pub status: &'static str,
}

fn decode_fragment(v: &str) -> String {
    let safe = v.strip_suffix('\\').unwrap_or(v);
    let quoted = format!("\"{safe}\"");
    if let Ok(JsValue::String(s)) = JsValue::parse(quoted.as_bytes()).as_ref() {
        return s.to_string_lossy().into_owned();
    }
    safe.replace("\\n", "\n")
        .replace("\\r", "\r")
        .replace("\\t", "\t")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

/// omp's textual property lookup: the first `"name"` at or after `start`, then a `:`, blanks,
/// and a string value (read up to its closing quote or the end of the text).
fn string_prop(src: &str, name: &str, start: usize) -> Option<String> {
    let b = src.as_bytes();
    let pat = format!("\"{name}\"");
    let at = start + src.get(start..)?.find(&pat)?;
    let colon = at + name.len() + 2;
    let colon = colon + src.get(colon..)?.find(':')?;
    let mut i = colon + 1;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let vs = i + 1;
    let mut esc = false;
    for (j, &c) in b.iter().enumerate().skip(vs) {
        if esc {
            esc = false;
        } else if c == b'\\' {
            esc = true;
        } else if c == b'"' {
            return Some(decode_fragment(&src[vs..j]));
        }
    }
    Some(decode_fragment(&src[vs..]))
}

/// How many times `"<key>": "<want>"` occurs in `content`, counted as omp counts its markers
/// (each `"<key>"` followed by a colon, its string value decoded, even inside other strings).
fn count_markers(content: &str, key: &str, want: &str) -> u64 {
    let quoted = format!("\"{key}\"");
    let mut n = 0;
    let mut idx = 0;
    while idx < content.len() {
        let Some(t) = content[idx..].find(&quoted).map(|p| p + idx) else {
            break;
        };
        let after = t + quoted.len();
        let Some(colon) = content[after..].find(':').map(|p| p + after) else {
            break;
        };
        if string_prop(content, key, t).as_deref() == Some(want) {
            n += 1;
        }
        idx = colon + 1;
    }
    n
}

/// omp 18.3's `FileSessionStorage.hasAssistantTurn`: whether any line of the file (split as
/// Node's `readLines` splits: `\n`, `\r\n`, `\r`) starts with `{` and parses as a `message`
/// entry whose message has the role `assistant`. Read as a stream; only lines that could
/// name the role are parsed.
fn has_assistant_turn(path: &Path) -> std::io::Result<bool> {
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(crate::safe_fs::open_regular(path)?);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            return Ok(false);
        }
        let chunk = buf.strip_suffix(b"\n").unwrap_or(&buf);
        for line in chunk.split(|&b| b == b'\r') {
            if line.first() != Some(&b'{')
                || !(memchr::memmem::find(line, b"assistant").is_some()
                    || memchr::memmem::find(line, b"\\u").is_some())
            {
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let Ok(e) = JsValue::parse(text.as_bytes()) else {
                continue;
            };
            if str_of(e.get("type")).as_deref() == Some("message")
                && e.get("message")
                    .and_then(|m| str_of(m.get("role")))
                    .as_deref()
                    == Some("assistant")
            {
                return Ok(true);
            }
        }
    }
}

/// omp's `sanitizeSessionName`: the first line, control characters removed, trimmed; `None`
/// when nothing is left.
fn sanitize_name(v: Option<&str>) -> Option<String> {
    let v = v.filter(|v| !v.is_empty())?;
    let first = v.split('\n').next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first);
    let kept: String = first
        .chars()
        .filter(|&c| !(c <= '\u{1f}' || c == '\u{7f}'))
        .collect();
    let t = js::trim(&kept);
    (!t.is_empty()).then(|| t.to_string())
}

fn first_display_message(content: &str) -> Option<String> {
    let mut fallback = None;
    let mut idx = content.find("\"role\"");
    while let Some(i) = idx {
        let role = string_prop(content, "role", i);
        let text = string_prop(content, "content", i).or_else(|| string_prop(content, "text", i));
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            match role.as_deref() {
                Some("user") => return Some(t),
                Some("developer" | "assistant") if fallback.is_none() => fallback = Some(t),
                _ => {}
            }
        }
        idx = content[i + 6..].find("\"role\"").map(|p| p + i + 6);
    }
    fallback
}

struct Header {
    id: String,
    cwd: Option<String>,
    title: Option<String>,
    parent: Option<String>,
    timestamp: Option<String>,
}

/// `undefined` → None, blank → Some(None) (no title), else Some(Some(title)).
fn normalize_title(t: Option<String>) -> Option<Option<String>> {
    t.map(|t| {
        if js::trim(&t).is_empty() {
            None
        } else {
            Some(t)
        }
    })
}

fn str_of(v: Option<&JsValue>) -> Option<String> {
    match v {
        Some(JsValue::String(s)) => Some(s.to_string_lossy().into_owned()),
        _ => None,
    }
}

fn header_from_record(r: Option<&JsValue>, slot: Option<Option<String>>) -> Option<Header> {
    let r = r?;
    if str_of(r.get("type")).as_deref() != Some("session") {
        return None;
    }
    let id = str_of(r.get("id"))?;
    Some(Header {
        id,
        cwd: str_of(r.get("cwd")),
        title: match slot {
            Some(None) => None,
            Some(Some(t)) => Some(t),
            None => str_of(r.get("title")),
        },
        parent: str_of(r.get("parentSession")),
        timestamp: str_of(r.get("timestamp")),
    })
}

fn header_from_line(line: &str, slot: Option<Option<String>>) -> Option<Header> {
    if string_prop(line, "type", 0).as_deref() != Some("session") {
        return None;
    }
    let id = string_prop(line, "id", 0).filter(|s| !s.is_empty())?;
    Some(Header {
        id,
        cwd: string_prop(line, "cwd", 0),
        title: match slot {
            Some(None) => None,
            Some(Some(t)) => Some(t),
            None => string_prop(line, "title", 0),
        },
        parent: string_prop(line, "parentSession", 0),
        timestamp: string_prop(line, "timestamp", 0),
    })
}

fn parse_header(content: &str, entries: &[JsValue]) -> Option<Header> {
    let first = entries.first();
    let first_is_title = first.and_then(|f| str_of(f.get("type"))).as_deref() == Some("title");
    let slot = if first_is_title {
        normalize_title(str_of(first.and_then(|f| f.get("title"))))
    } else {
        None
    };
    if let Some(h) = header_from_record(entries.get(usize::from(first_is_title)), slot) {
        return Some(h);
    }
    let mut slot = None;
    let mut first_non_empty = true;
    for raw in content.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let line = js::trim(raw);
        if line.is_empty() {
            continue;
        }
        if first_non_empty && string_prop(line, "type", 0).as_deref() == Some("title") {
            slot = normalize_title(string_prop(line, "title", 0));
            first_non_empty = false;
            continue;
        }
        return header_from_line(line, slot);
    }
    None
}

/// The JSON values of the lines of `content` (omp's lenient JSONL: a line that does not parse,
/// such as the cut last line of the window, is skipped).
fn parse_lines(content: &str) -> Vec<JsValue> {
    content
        .split('\n')
        .filter(|l| !js::trim(l).is_empty())
        .filter_map(|l| JsValue::parse(l.as_bytes()).ok())
        .collect()
}

fn status_of(suffix: &str) -> &'static str {
    if suffix.is_empty() {
        return "unknown";
    }
    for line in suffix.split('\n').rev() {
        if !line.starts_with('{') {
            continue;
        }
        let Ok(e) = JsValue::parse(line.as_bytes()) else {
            continue;
        };
        if str_of(e.get("type")).as_deref() != Some("message") {
            continue;
        }
        let Some(m) = e.get("message").filter(|m| m.is_truthy()) else {
            continue;
        };
        return match str_of(m.get("role")).as_deref() {
            Some("assistant") => match str_of(m.get("stopReason")).as_deref() {
                Some("error") => "error",
                Some("aborted") => "aborted",
                Some("length") => "interrupted",
                _ => match m.get("content") {
                    Some(JsValue::Array(blocks))
                        if blocks
                            .iter()
                            .any(|b| str_of(b.get("type")).as_deref() == Some("toolCall")) =>
                    {
                        "interrupted"
                    }
                    _ => "complete",
                },
            },
            Some("toolResult") => "interrupted",
            Some("user") => "pending",
            _ => "unknown",
        };
    }
    "unknown"
}

fn decode(bytes: &[u8]) -> String {
    let b = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    String::from_utf8_lossy(b).into_owned()
}

/// Reads omp's two windows of a file: the first [`PREFIX_BYTES`] and the last
/// [`SUFFIX_BYTES`] (taken from the head when the file is no longer than the head window).
fn read_windows(path: &Path) -> std::io::Result<(String, String, std::fs::Metadata)> {
    let mut f = crate::safe_fs::open_regular(path)?;
    let meta = f.metadata()?;
    let size = meta.len();
    let head_len = PREFIX_BYTES.min(size);
    let mut head = Vec::with_capacity(head_len as usize);
    (&mut f).take(head_len).read_to_end(&mut head)?;
    let tail_len = SUFFIX_BYTES.min(size);
    let tail = if size <= head_len {
        head[head.len().saturating_sub(tail_len as usize)..].to_vec()
    } else {
        f.seek(SeekFrom::Start(size - tail_len))?;
        let mut t = Vec::with_capacity(tail_len as usize);
        f.take(tail_len).read_to_end(&mut t)?;
        t
    };
    Ok((decode(&head), decode(&tail), meta))
}

/// omp's `SessionInfo` for one file, `None` where omp skips the file (no header in the head
/// window, unreadable, or a message whose content omp's text extraction throws on).
pub fn omp_session_info(path: &Path) -> Option<OmpSessionInfo> {
    let (content, suffix, meta) = read_windows(path).ok()?;
    let entries = parse_lines(&content);
    let header = parse_header(&content, &entries)?;
    let mut parsed = 0u64;
    let mut assistant_turns = 0u64;
    let mut first_message = String::new();
    let mut all: Vec<String> = Vec::new();
    let mut short_summary = None;
    for e in entries.iter().skip(1) {
        let ty = str_of(e.get("type"));
        if ty.as_deref() == Some("compaction") {
            if let Some(s) = str_of(e.get("shortSummary")) {
                short_summary = Some(s);
            }
        }
        if ty.as_deref() != Some("message") {
            continue;
        }
        let Some(m) = e.get("message").filter(|m| m.is_truthy()) else {
            continue;
        };
        parsed += 1;
        let role = str_of(m.get("role"));
        if role.as_deref() == Some("assistant") {
            assistant_turns += 1;
        }
        if matches!(role.as_deref(), Some("user" | "assistant")) {
            // omp's extraction throws on content that is neither a string nor an array (or
            // on a null block), and the whole file is then left out of the list.
            // A lone surrogate becomes U+FFFD here (omp keeps it; see docs/pi-versions.md).
            let text = crate::discover::extract_text(m.get("content").unwrap_or(&JsValue::Null))?
                .to_string_lossy()
                .into_owned();
            if !text.is_empty() {
                if first_message.is_empty() && role.as_deref() == Some("user") {
                    first_message = text.clone();
                }
                all.push(text);
            }
        }
    }
    if first_message.is_empty() {
        first_message = first_display_message(&content).unwrap_or_default();
    }
    let message_count = parsed.max(count_markers(&content, "type", "message"));
    // Either window may hold the only assistant record, or neither (a long middle): with no
    // evidence in both, the whole file is scanned (an unreadable file keeps the windows' 0).
    let assistant_turns = assistant_turns
        .max(count_markers(&content, "role", "assistant"))
        .max(count_markers(&suffix, "role", "assistant"));
    let assistant_turns = if assistant_turns == 0 && has_assistant_turn(path).unwrap_or(false) {
        1
    } else {
        assistant_turns
    };
    let all_messages_text = if all.is_empty() {
        first_message.clone()
    } else {
        all.join(" ")
    };
    let modified_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0);
    Some(OmpSessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd.unwrap_or_default(),
        title: header.title.or(short_summary),
        parent_session_path: header.parent,
        created_ms: arbor_core::time::parse_iso_ms(header.timestamp.as_deref().unwrap_or(""))
            .and_then(js::valid_time),
        modified_ms,
        message_count,
        assistant_turns,
        size: meta.len(),
        first_message: if first_message.is_empty() {
            "(no messages)".to_string()
        } else {
            first_message
        },
        all_messages_text,
        status: status_of(&suffix),
    })
}

/// The session ids pinned in omp's `<agent dir>/session-pins.json` (empty when absent or not
/// an array).
pub fn pinned_ids(agent_dir: &Path) -> Vec<String> {
    let Ok(raw) = std::fs::read(agent_dir.join("session-pins.json")) else {
        return Vec::new();
    };
    match JsValue::parse(&raw).as_ref() {
        Ok(JsValue::Array(items)) => items.iter().filter_map(|v| str_of(Some(v))).collect(),
        _ => Vec::new(),
    }
}

/// omp's `SessionManager.list(cwd, dir)`: every `*.jsonl` of `dir` that has a header, newest
/// mtime first (ties: newer `created`, then path descending), the sessions whose id is in
/// `pinned` moved to the front (stable).
pub fn list_dir_omp(dir: &Path, pinned: &[String]) -> Vec<OmpSessionInfo> {
    let mut out: Vec<OmpSessionInfo> = crate::discover::session_files(dir)
        .into_iter()
        .filter_map(|p| omp_session_info(&p))
        .collect();
    sort_omp(&mut out);
    if !pinned.is_empty() {
        let (top, rest): (Vec<_>, Vec<_>) = out.into_iter().partition(|s| pinned.contains(&s.id));
        out = top.into_iter().chain(rest).collect();
    }
    out
}

/// omp's order: `modified` descending, then `created` descending (an invalid date compares as
/// a tie), then path descending.
pub fn sort_omp(v: &mut [OmpSessionInfo]) {
    v.sort_by(|a, b| {
        use std::cmp::Ordering::Equal;
        // `modified` is the file's mtime and `created` a valid date: never NaN; `total_cmp`
        // keeps the comparator a total order whatever comes in.
        let m = b.modified_ms.total_cmp(&a.modified_ms);
        if m != Equal {
            return m;
        }
        if let (Some(x), Some(y)) = (a.created_ms, b.created_ms) {
            let c = y.total_cmp(&x);
            if c != Equal {
                return c;
            }
        }
        b.path.cmp(&a.path)
    });
}

impl OmpSessionInfo {
    /// omp 18.3's `isEmptySession`: a session with no assistant turn (status `pending` or
    /// `unknown`), no title and no first prompt worth showing (after `sanitizeSessionName`).
    /// omp's session picker and `--continue` skip these (pinned sessions stay in the picker);
    /// its `SessionManager.list` and everything else keep them.
    pub fn is_empty_session(&self) -> bool {
        if !matches!(self.status, "pending" | "unknown") || self.assistant_turns > 0 {
            return false;
        }
        let first = (self.first_message != "(no messages)").then_some(self.first_message.as_str());
        sanitize_name(self.title.as_deref()).is_none() && sanitize_name(first).is_none()
    }

    /// Writes omp's object as `JSON.stringify` writes it: `path, id, cwd, title?,
    /// parentSessionPath?, created, modified, messageCount, assistantTurns, size, firstMessage,
    /// allMessagesText, status`; dates as ISO strings (`null` for an Invalid Date).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let iso = |ms: f64| arbor_core::time::format_iso_ms(ms as i64);
        out.extend_from_slice(b"{\"path\":");
        write_str_escaped(&self.path.to_string_lossy(), out);
        out.extend_from_slice(b",\"id\":");
        write_str_escaped(&self.id, out);
        out.extend_from_slice(b",\"cwd\":");
        write_str_escaped(&self.cwd, out);
        if let Some(t) = &self.title {
            out.extend_from_slice(b",\"title\":");
            write_str_escaped(t, out);
        }
        if let Some(p) = &self.parent_session_path {
            out.extend_from_slice(b",\"parentSessionPath\":");
            write_str_escaped(p, out);
        }
        out.extend_from_slice(b",\"created\":");
        match self.created_ms {
            Some(ms) => write_str_escaped(&iso(ms), out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"modified\":");
        match js::valid_time(self.modified_ms) {
            Some(ms) => write_str_escaped(&iso(ms), out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(
            format!(
                ",\"messageCount\":{},\"assistantTurns\":{},\"size\":{}",
                self.message_count, self.assistant_turns, self.size
            )
            .as_bytes(),
        );
        out.extend_from_slice(b",\"firstMessage\":");
        write_str_escaped(&self.first_message, out);
        out.extend_from_slice(b",\"allMessagesText\":");
        write_str_escaped(&self.all_messages_text, out);
        out.extend_from_slice(b",\"status\":");
        write_str_escaped(self.status, out);
        out.push(b'}');
    }
}
