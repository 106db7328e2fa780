//! Session discovery: listing a directory as pi's `SessionManager.list`, the most recent
//! session, and pi's `SessionInfo`.
use arbor_core::doc::{Dialect, SessionDoc};
use arbor_core::entry::Fields;
use arbor_core::json::{
    scan_object, skip_ws, value_end, write_js_str, write_str_escaped, JsStr, JsValue, ValueKind,
};
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
    /// First user text, or `(no messages)`. A JS string: WTF-8, so that a lone UTF-16
    /// surrogate is kept and written back as pi writes it (`\ud83d`).
    pub first_message: JsStr,
    /// All user/assistant texts joined with spaces (WTF-8, like `first_message`).
    pub all_messages_text: JsStr,
}

/// The text of a message's content as pi's `extractTextContent`: the string itself, or the
/// `text` of the `type: "text"` blocks joined with spaces. `None` when pi would throw.
pub fn extract_text(content: &JsValue) -> Option<JsStr> {
    match content {
        JsValue::String(s) => Some(s.clone()),
        JsValue::Array(blocks) => {
            let mut parts: Vec<Vec<u8>> = Vec::new();
            for b in blocks {
                match b {
                    JsValue::Null => return None,
                    JsValue::Object(_)
                        if b.get("type").and_then(|t| t.as_str_lossy()).as_deref()
                            == Some("text") =>
                    {
                        let mut t = Vec::new();
                        match b.get("text") {
                            None | Some(JsValue::Null) => {}
                            v => arbor_core::js::to_string(v, &mut t),
                        }
                        parts.push(t);
                    }
                    _ => {}
                }
            }
            Some(JsStr(parts.join(&b' ')))
        }
        _ => None,
    }
}

/// [`extract_text`] on the raw JSON of `content`, without building a DOM of it: only the
/// `text` of `type: "text"` blocks is decoded (a listing reads every user and assistant
/// message of every session; thinking blocks, tool arguments and images are skipped).
/// `Ok(None)` where pi would throw; `Err(())` when the bytes are not valid JSON.
fn extract_text_raw(raw: &[u8], kind: ValueKind) -> Result<Option<JsStr>, ()> {
    match kind {
        ValueKind::String => {
            let inner = raw.get(1..raw.len().saturating_sub(1)).ok_or(())?;
            let s = arbor_core::json::decode_string(inner).map_err(|_| ())?;
            Ok(Some(s))
        }
        ValueKind::Array => {
            let mut parts: Vec<Vec<u8>> = Vec::new();
            let mut i = skip_ws(raw, 1);
            if raw.get(i) == Some(&b']') {
                return Ok(Some(JsStr(Vec::new())));
            }
            loop {
                let end = value_end(raw, i).map_err(|_| ())?;
                let elem = raw.get(i..end).ok_or(())?;
                match elem.first() {
                    Some(b'n') => return Ok(None),
                    Some(b'{') => {
                        let scan = scan_object(elem).map_err(|_| ())?;
                        let f = Fields {
                            members: scan.members.into_boxed_slice(),
                        };
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
                                    arbor_core::js::to_string(Some(&dom), &mut t);
                                }
                            }
                            parts.push(t);
                        }
                    }
                    _ => {}
                }
                i = skip_ws(raw, end);
                match raw.get(i) {
                    Some(b',') => i = skip_ws(raw, i + 1),
                    Some(b']') => return Ok(Some(JsStr(parts.join(&b' ')))),
                    _ => return Err(()),
                }
            }
        }
        _ => Ok(None),
    }
}

/// Computes pi's `SessionInfo` from a loaded file. `None` where pi hides the file. The rules
/// are [`crate::info::InfoState`]'s, fed the loaded header and entries (lines the loader
/// skipped, such as a `null` line pi would choke on, are not seen here; see
/// [`crate::info::session_info_streaming`] for the exact, streaming version).
pub fn session_info(path: &Path, doc: &SessionDoc, mtime_ms: f64) -> Option<SessionInfo> {
    let mut st = crate::info::InfoState::default();
    st.feed_header(doc.header_line(), &doc.header().fields);
    let mut all: Vec<Vec<u8>> = Vec::new();
    for e in doc.entries() {
        if let Some(p) = st.feed_entry(doc.line(&e.line), e) {
            all.push(p.text.0);
        }
        if st.phase == crate::info::Phase::Hidden {
            return None;
        }
    }
    st.finish(path, mtime_ms, JsStr(all.join(&b' ')))
}

/// The text of a message's raw `content` value as pi's `extractTextContent` (see
/// [`extract_text`]), without a DOM when the bytes are valid JSON. `None` where pi throws.
pub fn extract_text_of_raw(raw: &[u8], kind: ValueKind) -> Option<JsStr> {
    match extract_text_raw(raw, kind) {
        Ok(t) => t,
        Err(()) => extract_text(&JsValue::parse(raw).unwrap_or(JsValue::Null)),
    }
}

fn mtime_ms(path: &Path) -> f64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0)
}

/// The `*.jsonl` files of `dir` in the order pi 1.5's `list` reads them: names sorted by
/// `localeCompare`, descending ([`arbor_core::js::locale_compare`]), so that sessions with the
/// same `modified` come out as in pi.
pub fn session_files(dir: &Path) -> Vec<PathBuf> {
    session_files_typed(dir)
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// [`session_files`], each with its type as the directory's listing gives it (`d_type`: no
/// `stat` on the file systems that fill it; `None` when it cannot be read), so that a caller
/// that trusts a catalog's stat of a regular file need not `stat` it again.
pub fn session_files_typed(dir: &Path) -> Vec<(PathBuf, Option<std::fs::FileType>)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf, Option<std::fs::FileType>)> = rd
        .filter_map(|e| e.ok())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path(),
                e.file_type().ok(),
            )
        })
        .filter(|(n, _, _)| n.ends_with(".jsonl"))
        .collect();
    files.sort_by_cached_key(|f| std::cmp::Reverse(arbor_core::js::locale_key(&f.0)));
    files.into_iter().map(|(_, p, t)| (p, t)).collect()
}

/// Whether `e`, the error of reading a listed `*.jsonl`, says the file is one pi and omp
/// themselves leave in a session directory and do not take for a session: an empty file
/// (created before its first line was written; pi and omp list nothing for it, and `arbor ls`
/// neither). Such a file has nothing to count or show, so it is skipped without a warning;
/// any other file that is not a session is named (it may be a session that got damaged).
pub fn known_not_session(e: &crate::StoreError) -> bool {
    matches!(
        e,
        crate::StoreError::NotASession {
            reason: arbor_core::NotASession::Empty,
            ..
        }
    )
}

/// Why `f` was not read as a session, without its path (the caller names the file once):
/// empty for a file known not to be a session ([`known_not_session`]), which is passed over
/// without a word.
pub fn why_not(f: &Path, e: &crate::StoreError) -> String {
    if known_not_session(e) {
        return String::new();
    }
    let text = e.to_string();
    let path = format!("{}: ", f.display());
    text.strip_prefix(&path)
        .unwrap_or(&text)
        .trim_end_matches(" (the file was not modified)")
        .to_string()
}

/// pi 1.5's `SessionManager.list(cwd, sessionDir)`: the sessions of `session_dir` (default:
/// `cwd`'s directory under `agent_dir`), newest `modified` first. A directory that is not
/// `cwd`'s default keeps only the sessions whose header `cwd` is `cwd` (both resolved as
/// `path.resolve` does after `~` is expanded; an empty or missing `cwd` never matches).
///
/// ```
/// let agent = tempfile::tempdir()?;
/// let shared = agent.path().join("shared");
/// std::fs::create_dir(&shared)?;
/// for (name, cwd) in [("a.jsonl", "/work/a"), ("b.jsonl", "/work/b")] {
///     std::fs::write(shared.join(name), format!(
///         "{{\"type\":\"session\",\"version\":3,\"id\":\"{name}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"{cwd}\"}}\n"))?;
/// }
/// let mine = arbor_store::discover::list("/work/a", Some(&shared), agent.path());
/// assert_eq!(mine.len(), 1);
/// assert_eq!(mine[0].cwd, "/work/a");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn list(cwd: &str, session_dir: Option<&Path>, agent_dir: &Path) -> Vec<SessionInfo> {
    let default = crate::paths::default_session_dir(Dialect::Pi, agent_dir, cwd);
    let dir = match session_dir {
        Some(d) => crate::paths::expand_tilde(&d.to_string_lossy()),
        None => default.clone(),
    };
    let resolve = |p: &Path| crate::paths::resolve_lexical(&p.to_string_lossy());
    let filter = session_dir.is_some() && resolve(&dir) != resolve(&default);
    let want = resolve(&crate::paths::expand_tilde(cwd));
    let mut out = list_dir(&dir);
    if filter {
        out.retain(|s| !s.cwd.is_empty() && resolve(&crate::paths::expand_tilde(&s.cwd)) == want);
    }
    out
}

/// pi's `SessionManager.list(cwd, dir)`: every session of `dir`, newest `modified` first.
/// Each file is streamed line by line ([`crate::info::session_info_streaming`]).
pub fn list_dir(dir: &Path) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = session_files(dir)
        .into_iter()
        .filter_map(|p| {
            crate::info::session_info_streaming(&p, mtime_ms(&p))
                .ok()
                .flatten()
        })
        .collect();
    // pi: `sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime())`. An Invalid
    // Date gives NaN, "equal" to V8: not a total order, so V8's own algorithm (Rust's sort may
    // panic on it and would give another order).
    arbor_core::js::v8_sort_slice_by_number(&mut out, |a, b| b.modified_ms - a.modified_ms);
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

/// The session header of the file at `path` ([`arbor_core::header::locate`] over its first two
/// lines, read from its first 1 MB a block at a time: a listing of a thousand sessions must not
/// read each one whole): the header's line index (0, or 1 after omp's title slot), the line
/// and its fields. `None` when the file cannot be opened as a regular file or has no header.
pub fn header_of(path: &Path) -> Option<(usize, Vec<u8>, arbor_core::entry::Fields)> {
    use std::io::Read;
    let mut f = crate::safe_fs::open_regular(path).ok()?.take(1 << 20);
    let mut head = Vec::new();
    let mut block = [0u8; 8192];
    let mut newlines = 0;
    while newlines < 2 {
        let n = f.read(&mut block).ok()?;
        if n == 0 {
            break;
        }
        newlines += block[..n].iter().filter(|b| **b == b'\n').count();
        head.extend_from_slice(&block[..n]);
    }
    let (i, line, fields) = arbor_core::header::locate(arbor_core::header::first_lines(&head))?;
    Some((i, line.to_vec(), fields))
}

/// The header `id` of the file at `path`, when it is a string (see [`header_of`]).
pub fn header_id(path: &Path) -> Option<String> {
    let (_, line, fields) = header_of(path)?;
    fields.str(&line, "id").map(|s| s.into_owned())
}

/// Whether the file's first line (or the line after omp's title slot) is a session header
/// with a string id.
pub fn has_valid_header(path: &Path) -> bool {
    header_id(path).is_some()
}

impl SessionInfo {
    /// Writes the JSON object of `arbor ls --json` (README) (pi's fields; dates as ISO-8601
    /// UTC with milliseconds, `null` for an invalid date; absent `id`, `name` and
    /// `parentSessionPath` omitted as pi's `JSON.stringify` omits `undefined`).
    /// `all_text` adds pi's `allMessagesText`.
    pub fn write_json(&self, out: &mut Vec<u8>, all_text: bool) {
        let iso = |ms: f64| arbor_core::time::format_iso_ms(ms as i64);
        out.extend_from_slice(b"{\"path\":");
        write_str_escaped(&self.path.to_string_lossy(), out);
        if let Some(raw) = &self.id {
            out.extend_from_slice(b",\"id\":");
            out.extend_from_slice(raw.as_bytes());
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
        match arbor_core::js::valid_time(self.modified_ms) {
            Some(ms) => write_str_escaped(&iso(ms), out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(format!(",\"messageCount\":{}", self.message_count).as_bytes());
        out.extend_from_slice(b",\"firstMessage\":");
        write_js_str(&self.first_message, out);
        if all_text {
            out.extend_from_slice(b",\"allMessagesText\":");
            write_js_str(&self.all_messages_text, out);
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

#[cfg(test)]
mod header_tests {
    use super::*;
    use crate::backend::files::FileStore;

    /// Every reader of a file's header (`FileStore::id_of` for the stores and sync,
    /// [`header_id`] for `locate`, [`has_valid_header`] for pi's listing) reads it the one
    /// way: line 1, or line 2 after omp's title slot; a session line after anything else is
    /// an entry. (`FileStore::id_of` took any `session` line among the first two before.)
    #[test]
    fn every_file_header_reader_agrees() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = format!(
            "{{\"type\":\"session\",\"id\":\"big\",\"cwd\":\"{}\"}}\n",
            "x".repeat(20_000)
        );
        let cases: [(&[u8], Option<&str>); 8] = [
            (b"{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\"}\n", Some("p")),
            (
                b"{\"type\":\"title\",\"v\":1,\"title\":\"t\"}\n{\"type\":\"session\",\"id\":\"o\"}\n",
                Some("o"),
            ),
            (b"\xEF\xBB\xBF{\"type\":\"session\",\"id\":\"b\"}\n", Some("b")),
            (b"{\"type\":\"session\",\"id\":\"n\"}", Some("n")),
            (big.as_bytes(), Some("big")),
            (b"{\"type\":\"message\"}\n{\"type\":\"session\",\"id\":\"x\"}\n", None),
            (b"not json\n{\"type\":\"session\",\"id\":\"x\"}\n", None),
            (b"{\"type\":\"session\",\"id\":1}\n", None),
        ];
        for (n, (bytes, want)) in cases.into_iter().enumerate() {
            let p = dir.path().join(format!("{n}.jsonl"));
            std::fs::write(&p, bytes).expect("write");
            let want = want.map(str::to_string);
            assert_eq!(header_id(&p), want, "header_id, case {n}");
            assert_eq!(FileStore::id_of(&p), want, "FileStore::id_of, case {n}");
            assert_eq!(
                has_valid_header(&p),
                want.is_some(),
                "has_valid_header, case {n}"
            );
        }
    }
}
