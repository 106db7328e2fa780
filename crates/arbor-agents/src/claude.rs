//! Claude Code's sessions: `~/.claude/projects/<cwd with / as ->/<session id>.jsonl`, one
//! record per line, a tree through `uuid`/`parentUuid`; subagents in
//! `<session id>/subagents/agent-*.jsonl` (and, in older versions, as `isSidechain` records
//! of the session file itself). `docs/agents.md` has the format as it is today.
//!
//! The rules (issue 26): one assistant reply written over several lines sharing `message.id`
//! is one message; tool results arriving as `user` lines are tool results; progress, meta and
//! other lines in the chain are skipped with their children re-parented to the nearest kept
//! ancestor; `compact_boundary` + `isCompactSummary` is a compaction; `custom-title`,
//! `ai-title` and `summary` give the title; usage is counted once per `message.id`.
use crate::jsonl::{self, flag, obj, s, u};
use crate::model::{
    Agent, Assistant, Compaction, Node, NodeKind, Part, Report, Session, ToolResult, Usage,
};
use crate::AgentError;
use serde_json::{Map, Value};
use std::borrow::Cow;
// The reader's maps (ids, uuids, message ids): std's maps with foldhash's hasher, seeded per
// process (SipHash and its rehashing were some 4-5% of a cold listing's CPU time).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::path::{Path, PathBuf};

/// What the first pass keeps of a line: where it is, its members (byte ranges) and its place
/// in the tree. The records themselves are parsed, one at a time, while they are converted: a
/// large file is never held in memory as parsed JSON.
struct Info {
    /// Its line number (1-based).
    n: u64,
    /// Its bytes in the file.
    range: std::ops::Range<usize>,
    /// Its members, as the field scanner found them (ranges in the line).
    fields: arbor_core::entry::Fields,
    uuid: Option<String>,
    /// `parentUuid` (a compaction boundary's `logicalParentUuid`).
    parent: Option<String>,
    sidechain: bool,
    /// A sidechain record's `agentId`.
    agent: Option<String>,
}

/// The first pass: every line's [`Info`] (bad lines reported), the session ids seen first
/// (`sessionId` of the main chain, `agentId` of a sidechain), and the title records.
fn scan(bytes: &[u8], report: &mut Report) -> (Vec<Info>, Option<String>, Titles) {
    let mut infos = Vec::new();
    let mut session_id = None;
    let mut titles = Titles::default();
    let mut start = 0usize;
    let mut n = 0u64;
    while start < bytes.len() {
        n += 1;
        let (end, next, complete) = match jsonl::memchr(bytes, start) {
            Some(i) => (i, i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        let range = start..end;
        start = next;
        let mut line = &bytes[range.clone()];
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !complete {
            report.bad(
                n,
                "last line has no newline (still being written?): skipped",
            );
            continue;
        }
        let f = match arbor_core::entry::parse_fields(line) {
            Ok(f) => f,
            Err(arbor_core::entry::LineError::NotObject) => {
                report.bad(n, "not a JSON object");
                continue;
            }
            Err(e) => {
                report.bad(n, format!("not JSON: {e}"));
                continue;
            }
        };
        const KEYS: [&str; 11] = [
            "type",
            "subtype",
            "logicalParentUuid",
            "parentUuid",
            "sessionId",
            "customTitle",
            "aiTitle",
            "summary",
            "leafUuid",
            "uuid",
            "agentId",
        ];
        let picked = pick(line, &f, KEYS);
        let st = |k: &str| {
            let i = KEYS.iter().position(|x| *x == k)?;
            let m = picked[i]?;
            arbor_core::entry::raw_str(&line[m.value.clone()], m.kind).filter(|v| !v.is_empty())
        };
        // Owned only what is kept (the type and subtype of every line are only looked at).
        let own = |k: &str| st(k).map(std::borrow::Cow::into_owned);
        let kind = st("type");
        let boundary = kind.as_deref() == Some("system")
            && st("subtype").as_deref() == Some("compact_boundary");
        let parent = if boundary {
            own("logicalParentUuid").or_else(|| own("parentUuid"))
        } else {
            own("parentUuid")
        };
        let sidechain = f
            .get(line, "isSidechain")
            .is_some_and(|(raw, _)| raw == b"true");
        if session_id.is_none() && !sidechain {
            session_id = own("sessionId");
        }
        match kind.as_deref() {
            Some("custom-title") => titles.custom = own("customTitle").or(titles.custom.take()),
            Some("ai-title") => titles.ai = own("aiTitle").or(titles.ai.take()),
            Some("summary") => {
                if let Some(t) = own("summary") {
                    titles.summaries.push((t, own("leafUuid")));
                }
            }
            _ => {}
        }
        let uuid = own("uuid");
        let agent = if sidechain { own("agentId") } else { None };
        infos.push(Info {
            n,
            range: range.start..range.start + line.len(),
            fields: f,
            uuid,
            parent,
            sidechain,
            agent,
        });
    }
    (infos, session_id, titles)
}

/// The members of `f` named `keys`, in one pass over the members (the last of duplicates, as
/// a parser keeps; a key written with escapes is decoded).
fn pick<'f, const N: usize>(
    line: &[u8],
    f: &'f arbor_core::entry::Fields,
    keys: [&str; N],
) -> [Option<&'f arbor_core::json::Member>; N] {
    let mut out = [None; N];
    for m in f.members.iter() {
        let raw = &line[m.key.clone()];
        let escaped = raw.contains(&b'\\');
        for (i, k) in keys.iter().enumerate() {
            let k_ = k.as_bytes();
            // The length and the first byte first: most keys differ there (a call of memcmp
            // per key compared was some 5% of a cold listing's CPU time).
            let plain = raw.len() == k_.len() && raw.first() == k_.first() && raw == k_;
            if plain || (escaped && arbor_core::entry::key_is(line, &m.key, k)) {
                out[i] = Some(m);
                break;
            }
        }
    }
    out
}

/// The title records of a file.
#[derive(Default)]
struct Titles {
    /// The last `custom-title`.
    custom: Option<String>,
    /// The last `ai-title`.
    ai: Option<String>,
    /// Every `summary` with its `leafUuid`.
    summaries: Vec<(String, Option<String>)>,
}

/// Reads the Claude Code session file `path` (and its subagents' files beside it).
///
/// # Errors
/// Only when the file cannot be read at all; every bad line is in the session's report.
pub fn read(path: &Path) -> Result<Session, AgentError> {
    read_with(path, Detail::Full)
}

pub use crate::model::Detail;

/// [`read`] with the `detail` wanted: the one reader, its rules the same at every detail.
///
/// # Errors
/// As [`read`].
pub fn read_with(path: &Path, detail: Detail) -> Result<Session, AgentError> {
    let file = jsonl::read_source(path)?;
    let bytes: &[u8] = file.as_ref();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut report = Report::default();
    let (infos, session_id, titles) = scan(bytes, &mut report);
    let (mut main, mut side): (Vec<&Info>, Vec<&Info>) = (Vec::new(), Vec::new());
    for i in &infos {
        if i.sidechain {
            side.push(i);
        } else {
            main.push(i);
        }
    }
    // A subagent's own file holds nothing but its sidechain.
    let is_subagent_file = main.iter().all(|i| i.uuid.is_none()) && !side.is_empty();
    let (main, side) = if is_subagent_file {
        (side, Vec::new())
    } else {
        (main, side)
    };
    let id = if is_subagent_file {
        main.iter().find_map(|i| i.agent.clone())
    } else {
        session_id
    }
    .unwrap_or_else(|| stem.clone());
    let mut session = Session::new(Agent::Claude, id, jsonl::absolute(path));
    session.report = report;
    convert(bytes, &main, &mut session, detail);
    session.title = title(&titles, &infos);

    // Inline sidechains (before subagent files): one child per root.
    for group in sidechain_groups(&side) {
        let cid = group
            .iter()
            .find_map(|i| i.agent.clone())
            .or_else(|| group.first().and_then(|i| i.uuid.clone()))
            .unwrap_or_default();
        let mut child = Session::new(Agent::Claude, cid, jsonl::absolute(path));
        convert(bytes, &group, &mut child, detail);
        child.title = first_user_text(&child);
        if !child.nodes.is_empty() {
            session.children.push(child);
        }
    }
    // Subagents' files: `<session>/subagents/agent-*.jsonl` (2.1), or beside the session
    // (`agent-*.jsonl` whose records name this session: 1.0 and 2.0).
    if let Some(dir) = path.parent() {
        let mut files = subagent_files(&dir.join(&stem));
        if !is_subagent_file {
            files.extend(sibling_agent_files(dir, &session.id));
        }
        for f in files {
            match read_with(&f, detail) {
                Ok(mut child) => {
                    if child.title.is_none() {
                        child.title = first_user_text(&child);
                    }
                    session.children.push(child)
                }
                Err(e) => session.report.bad(0, e.to_string()),
            }
        }
    }
    Ok(session)
}

/// The `agent-*.jsonl` files under `<dir>/subagents/`, sorted (none when it is missing; a
/// symlink there is passed over: it is not the agent's own file).
pub fn subagent_files(dir: &Path) -> Vec<PathBuf> {
    let sub = dir.join("subagents");
    let Ok(rd) = std::fs::read_dir(&sub) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| is_agent_file(p))
        .collect();
    out.sort();
    out
}

/// The top-level members of a record the conversion reads. The others (a tool's structured
/// output beside its result, `toolUseResult`, often the result's text again; file-history
/// snapshots; progress payloads; bookkeeping) are never parsed: [`slim_record`] leaves them
/// out before the record is parsed.
const READ_MEMBERS: [&str; 14] = [
    "type",
    "uuid",
    "parentUuid",
    "logicalParentUuid",
    "subtype",
    "version",
    "cwd",
    "timestamp",
    "isMeta",
    "isCompactSummary",
    "isApiErrorMessage",
    "error",
    "compactMetadata",
    "message",
];

/// The record `line` (a JSON object, scanned as `f`) as the JSON the conversion parses, into
/// `out`: only the members it reads ([`READ_MEMBERS`]; `toolUseResult` only when it is a
/// string, an error text that marks the result as failed), each as its bytes in the line (the
/// last of duplicates, as a parser keeps). At [`Detail::Listing`] the message's content blocks
/// are slimmed too ([`slim_block`]).
fn slim_record(line: &[u8], f: &arbor_core::entry::Fields, detail: Detail, out: &mut Vec<u8>) {
    use arbor_core::json::ValueKind;
    out.clear();
    out.push(b'{');
    let picked = pick(line, f, READ_MEMBERS);
    let tool_result = pick(line, f, ["toolUseResult"])[0].filter(|m| m.kind == ValueKind::String);
    let members = READ_MEMBERS
        .iter()
        .zip(picked)
        .chain(std::iter::once((&"toolUseResult", tool_result)));
    for (key, m) in members {
        let Some(m) = m else { continue };
        if out.len() > 1 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        let raw = &line[m.value.clone()];
        if *key == "message" && detail == Detail::Listing && m.kind == ValueKind::Object {
            slim_message(raw, out);
        } else {
            out.extend_from_slice(raw);
        }
    }
    out.push(b'}');
}

/// A record's members the conversion reads ([`READ_MEMBERS`], and `toolUseResult` when it is
/// a string), the same whether they were taken from the first pass's scan
/// ([`Record::scanned`]) or from the record as serde_json parses it ([`Record::parsed`]): the
/// one conversion reads either.
#[derive(Debug, Default, PartialEq)]
struct Record<'r> {
    /// `type`, `uuid`, ... as non-empty strings ([`s`]).
    kind: Option<&'r str>,
    uuid: Option<&'r str>,
    parent_uuid: Option<&'r str>,
    logical_parent_uuid: Option<&'r str>,
    subtype: Option<&'r str>,
    version: Option<&'r str>,
    cwd: Option<&'r str>,
    error: Option<&'r str>,
    /// `toolUseResult` as a string (empty kept).
    tool_use_result: Option<&'r str>,
    /// Whether the record has a `timestamp` member, and its time ([`jsonl::time_ms`]).
    has_timestamp: bool,
    timestamp_ms: Option<i64>,
    /// `isMeta`, `isCompactSummary`, `isApiErrorMessage` are `true` ([`flag`]).
    is_meta: bool,
    is_compact_summary: bool,
    is_api_error: bool,
    /// `compactMetadata.preTokens` ([`u`]; 0 when absent).
    pre_tokens: u64,
    /// `message`, when it is an object (at [`Detail::Listing`] slimmed by [`slim_message`]).
    message: Option<Cow<'r, Map<String, Value>>>,
}

impl<'r> Record<'r> {
    /// The members read from the record serde_json parsed (the slimmed record,
    /// [`slim_record`]).
    fn parsed(m: &'r Map<String, Value>) -> Record<'r> {
        Record {
            kind: s(m, "type"),
            uuid: s(m, "uuid"),
            parent_uuid: s(m, "parentUuid"),
            logical_parent_uuid: s(m, "logicalParentUuid"),
            subtype: s(m, "subtype"),
            version: s(m, "version"),
            cwd: s(m, "cwd"),
            error: s(m, "error"),
            tool_use_result: m.get("toolUseResult").and_then(Value::as_str),
            has_timestamp: m.contains_key("timestamp"),
            timestamp_ms: jsonl::time_ms(m.get("timestamp")),
            is_meta: flag(m, "isMeta"),
            is_compact_summary: flag(m, "isCompactSummary"),
            is_api_error: flag(m, "isApiErrorMessage"),
            pre_tokens: obj(m, "compactMetadata").map_or(0, |c| u(c, "preTokens")),
            message: obj(m, "message").map(Cow::Borrowed),
        }
    }

    /// The members read from the first pass's scan of `line` (`f`, the same members
    /// [`slim_record`] picks: the last of duplicates, escaped keys decoded), without a parse
    /// of the record: only `message` and `compactMetadata` objects are parsed (`scratch` holds
    /// the slimmed message). `None` when a member read is not plain (a string with an escape,
    /// a control character or bytes that are not UTF-8, a number, an array or an object
    /// elsewhere) or an object does not parse: then the record is read as serde_json parses
    /// it ([`Record::parsed`]), with its rules and its errors (lone surrogates, a number out
    /// of range, the depth limit), so both give the same (the unit tests below).
    fn scanned(
        line: &'r [u8],
        f: &arbor_core::entry::Fields,
        detail: Detail,
        scratch: &mut Vec<u8>,
    ) -> Option<Record<'r>> {
        use arbor_core::json::ValueKind;
        let picked = pick(line, f, READ_MEMBERS);
        let mut r = Record::default();
        for (key, m) in READ_MEMBERS.iter().zip(picked) {
            let Some(m) = m else { continue };
            let raw = &line[m.value.clone()];
            let object = |raw: &[u8]| match serde_json::from_slice::<Value>(raw) {
                Ok(Value::Object(o)) => Some(o),
                _ => None,
            };
            let text = match m.kind {
                ValueKind::String => Some(plain_str(raw)?),
                ValueKind::Null | ValueKind::Bool => None,
                ValueKind::Object if *key == "message" => {
                    let o = if detail == Detail::Listing {
                        scratch.clear();
                        slim_message(raw, scratch);
                        object(scratch)?
                    } else {
                        object(raw)?
                    };
                    r.message = Some(Cow::Owned(o));
                    continue;
                }
                ValueKind::Object if *key == "compactMetadata" => {
                    r.pre_tokens = u(&object(raw)?, "preTokens");
                    continue;
                }
                _ => return None,
            };
            let non_empty = text.filter(|t| !t.is_empty());
            let is_true = raw == b"true";
            match *key {
                "type" => r.kind = non_empty,
                "uuid" => r.uuid = non_empty,
                "parentUuid" => r.parent_uuid = non_empty,
                "logicalParentUuid" => r.logical_parent_uuid = non_empty,
                "subtype" => r.subtype = non_empty,
                "version" => r.version = non_empty,
                "cwd" => r.cwd = non_empty,
                "error" => r.error = non_empty,
                "timestamp" => {
                    r.has_timestamp = true;
                    r.timestamp_ms =
                        text.and_then(|t| arbor_core::time::parse_iso_ms(t).map(|f| f as i64));
                }
                "isMeta" => r.is_meta = is_true,
                "isCompactSummary" => r.is_compact_summary = is_true,
                "isApiErrorMessage" => r.is_api_error = is_true,
                _ => {}
            }
        }
        if let Some(m) = pick(line, f, ["toolUseResult"])[0] {
            if m.kind == ValueKind::String {
                r.tool_use_result = Some(plain_str(&line[m.value.clone()])?);
            }
        }
        Some(r)
    }
}

/// A raw JSON string (with its quotes) as its text when it is plain: no escape, no control
/// character, valid UTF-8 (what serde_json reads as these very bytes); `None` otherwise.
fn plain_str(raw: &[u8]) -> Option<&str> {
    let inner = raw.get(1..raw.len().checked_sub(1)?)?;
    if inner.iter().any(|b| *b == b'\\' || *b < 0x20) {
        return None;
    }
    std::str::from_utf8(inner).ok()
}

/// The members of a message the conversion reads (`content`, `id`, `model`, `usage`,
/// `stop_reason`), and of its usage (the four token counts): at the listing's detail the others
/// (`type`, `role`, `stop_sequence`, `container`, usage's `service_tier`, `cache_creation`,
/// `server_tool_use`, ...) are left out before the message is parsed. A key written with
/// escapes is kept (the parser decodes it: it may be one of these).
const MESSAGE_MEMBERS: [&[u8]; 5] = [b"content", b"id", b"model", b"usage", b"stop_reason"];
const USAGE_MEMBERS: [&[u8]; 4] = [
    b"input_tokens",
    b"output_tokens",
    b"cache_read_input_tokens",
    b"cache_creation_input_tokens",
];

/// A message object as the listing reads it, into `out`: only [`MESSAGE_MEMBERS`] (its usage
/// only [`USAGE_MEMBERS`]), its `content` blocks slimmed ([`slim_block`]).
fn slim_message(raw: &[u8], out: &mut Vec<u8>) {
    use arbor_core::json::ValueKind;
    let Ok(scan) = arbor_core::json::scan_object(raw) else {
        out.extend_from_slice(raw);
        return;
    };
    let read = |names: &[&[u8]], key: &[u8]| names.contains(&key) || key.contains(&b'\\');
    jsonl::rebuild_some(
        raw,
        &scan,
        out,
        |key| read(&MESSAGE_MEMBERS, key),
        |key, value, kind, out| {
            if key == b"usage" && kind == ValueKind::Object {
                let Ok(usage) = arbor_core::json::scan_object(value) else {
                    return false;
                };
                jsonl::rebuild_some(
                    value,
                    &usage,
                    out,
                    |k| read(&USAGE_MEMBERS, k),
                    |_, _, _, _| false,
                );
                return true;
            }
            if key != b"content" || kind != ValueKind::Array {
                return false;
            }
            out.push(b'[');
            for (i, item) in arbor_core::json::array_items(value).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                slim_block(&value[item], out);
            }
            out.push(b']');
            true
        },
    );
}

/// A content block as the listing reads it, into `out`: a tool result's `content` as `""`, a
/// tool call's `input` as `{}`, a thinking block's `signature` as `""`, a base64 image's
/// `data` as `"-"`; any other block (text, and blocks arbor does not know, kept whole as their
/// JSON) as it is.
fn slim_block(raw: &[u8], out: &mut Vec<u8>) {
    use arbor_core::entry::raw_str;
    use arbor_core::json::ValueKind;
    let Ok(scan) = arbor_core::json::scan_object(raw) else {
        out.extend_from_slice(raw);
        return;
    };
    let ty = scan
        .get(raw, "type")
        .and_then(|m| raw_str(&raw[m.value.clone()], m.kind));
    let (cut, with): (&[u8], &[u8]) = match ty.as_deref() {
        Some("tool_result") => (b"content", b"\"\""),
        Some("tool_use") | Some("server_tool_use") => (b"input", b"{}"),
        Some("thinking") => (b"signature", b"\"\""),
        Some("image") => {
            jsonl::rebuild(raw, &scan, out, |key, value, kind, out| {
                if key != b"source" || kind != ValueKind::Object {
                    return false;
                }
                let Ok(src) = arbor_core::json::scan_object(value) else {
                    return false;
                };
                let st = src
                    .get(value, "type")
                    .and_then(|m| raw_str(&value[m.value.clone()], m.kind));
                if !matches!(st.as_deref(), None | Some("base64")) {
                    return false;
                }
                jsonl::rebuild(value, &src, out, |k, v, _, out| {
                    if k != b"data" || v == b"\"\"" {
                        return false;
                    }
                    out.extend_from_slice(b"\"-\"");
                    true
                });
                true
            });
            return;
        }
        _ => {
            out.extend_from_slice(raw);
            return;
        }
    };
    jsonl::rebuild(raw, &scan, out, |key, value, _, out| {
        if key != cut || value.first() == Some(&b'n') {
            return false;
        }
        out.extend_from_slice(with);
        true
    });
}

/// The `agent-*.jsonl` files in `dir` (Claude Code 1.0 and 2.0 kept subagents' transcripts
/// beside the sessions) whose first record with a `sessionId` names `session` (their first
/// 64 KB read; regular files only).
fn sibling_agent_files(dir: &Path, session: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = agent_files_in(dir)
        .into_iter()
        .filter(|p| {
            let head = arbor_store::read_regular_at_most(p, 64 << 10).unwrap_or_default();
            head.split(|b| *b == b'\n').find_map(|l| {
                serde_json::from_slice::<Value>(l)
                    .ok()?
                    .get("sessionId")?
                    .as_str()
                    .map(|id| id == session)
            }) == Some(true)
        })
        .collect();
    out.sort();
    out
}

/// The `agent-*.jsonl` regular files of `dir`. A listing reads every session of a project
/// directory and each looks for its subagents there: the directory is listed once per state
/// (its device, inode and mtime, which a file created or removed in it changes) in a
/// process, not once per session (1,000 sessions in one directory: a million entries read).
/// A directory changed in the last 2 seconds is listed every time.
fn agent_files_in(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    type Listed = HashMap<PathBuf, ((u64, u64, i64, i64), Vec<PathBuf>)>;
    static LISTED: std::sync::Mutex<Option<Listed>> = std::sync::Mutex::new(None);
    let Ok(meta) = std::fs::metadata(dir) else {
        return Vec::new();
    };
    let state = (meta.dev(), meta.ino(), meta.mtime(), meta.mtime_nsec());
    if let Ok(memo) = LISTED.lock() {
        if let Some((st, files)) = memo.as_ref().and_then(|m| m.get(dir)) {
            if *st == state {
                return files.clone();
            }
        }
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| is_agent_file(&e.path()))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    // Kept only when the directory was last changed seconds ago: a change within the same
    // timestamp tick would leave its mtime as it was (git's "racily clean" rule).
    let settled = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age.as_secs() >= 2);
    if settled {
        if let Ok(mut memo) = LISTED.lock() {
            memo.get_or_insert_with(HashMap::new)
                .insert(dir.to_path_buf(), (state, files.clone()));
        }
    }
    files
}

/// Whether `p` is named as a subagent's transcript (`agent-*.jsonl`).
fn is_agent_file(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "jsonl")
        && p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
}

fn sidechain_groups<'a>(side: &[&'a Info]) -> Vec<Vec<&'a Info>> {
    let parent: HashMap<&str, Option<&str>> = side
        .iter()
        .filter_map(|i| i.uuid.as_deref().map(|u| (u, i.parent.as_deref())))
        .collect();
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Vec<&'a Info>> = HashMap::new();
    for i in side {
        let mut root = i.uuid.clone().unwrap_or_default();
        let mut at = i.parent.as_deref();
        let mut steps = 0;
        while let Some(p) = at {
            match parent.get(p) {
                Some(pp) => {
                    root = p.to_string();
                    at = *pp;
                }
                None => break,
            }
            steps += 1;
            if steps > side.len() {
                break;
            }
        }
        if !groups.contains_key(&root) {
            order.push(root.clone());
        }
        groups.entry(root).or_default().push(i);
    }
    order
        .into_iter()
        .filter_map(|k| groups.remove(&k))
        .collect()
}

/// The conversion of one chain of records (a session or one sidechain) into nodes.
fn convert<'a>(bytes: &[u8], chain: &[&'a Info], out: &mut Session, detail: Detail) {
    let mut slim = Vec::new();
    // Every record's parent, so that a line skipped (or not yet seen) passes its children on.
    let parents: HashMap<&str, Option<&str>> = chain
        .iter()
        .filter_map(|i| i.uuid.as_deref().map(|u| (u, i.parent.as_deref())))
        .collect();
    // Sized once: every record with a uuid is mapped, most replies are one or a few lines.
    // Keyed by the uuid the first pass kept (borrowed, not copied again per record).
    let mut mapped: HashMap<Cow<'a, str>, Option<usize>> = HashMap::with_capacity(parents.len());
    // Each reply's node by its `message.id`; a reply whose id is here already has had its
    // usage counted (usage once per reply).
    let mut by_msg: HashMap<String, usize> = HashMap::with_capacity(chain.len() / 2);
    let mut tool_names: HashMap<String, String> = HashMap::new();
    let mut last_model: Option<String> = None;
    let mut fallback_ts = 0i64;
    // Replies whose lines named a stop reason (most lines are written before the reply ends:
    // `stop_reason: null`).
    let mut stopped: HashSet<usize> = HashSet::new();

    let resolve = |mapped: &HashMap<Cow<'a, str>, Option<usize>>, start: Option<&str>| {
        let mut at = start;
        let mut steps = 0usize;
        while let Some(u) = at {
            if let Some(n) = mapped.get(u) {
                return *n;
            }
            at = parents.get(u).copied().flatten();
            steps += 1;
            if steps > parents.len() {
                break;
            }
        }
        None
    };

    for info in chain {
        let line = info.n;
        // The first pass scanned it; only the members read are parsed: from the scan itself
        // when they are plain ([`Record::scanned`]), else as serde_json reads the record.
        let line_bytes = &bytes[info.range.clone()];
        let parsed;
        let mut rec = match Record::scanned(line_bytes, &info.fields, detail, &mut slim) {
            Some(r) => r,
            None => {
                slim_record(line_bytes, &info.fields, detail, &mut slim);
                parsed = match serde_json::from_slice::<Value>(&slim) {
                    Ok(Value::Object(m)) => m,
                    Ok(_) => continue,
                    Err(e) => {
                        // The first pass read it; serde_json's depth limit did not.
                        out.report.bad(line, format!("not JSON: {e}"));
                        continue;
                    }
                };
                Record::parsed(&parsed)
            }
        };
        let t = rec.kind.unwrap_or("");
        let uuid = rec.uuid;
        let key = uuid.map_or_else(|| format!("line-{line}"), str::to_string);
        if let Some(v) = rec.version {
            out.saw_version(v);
        }
        if out.cwd.is_none() {
            out.cwd = rec.cwd.map(str::to_string);
        }
        let ts = rec.timestamp_ms.unwrap_or(fallback_ts);
        fallback_ts = ts;
        if out.created_ms.is_none() && rec.has_timestamp {
            out.created_ms = Some(ts);
        }
        let parent_uuid = if t == "system" && rec.subtype == Some("compact_boundary") {
            rec.logical_parent_uuid.or(rec.parent_uuid)
        } else {
            rec.parent_uuid
        };
        let parent = resolve(&mapped, parent_uuid);
        // The uuid as `mapped`'s key: the first pass's copy when it is the same string.
        let map_key = |u: &str| -> Cow<'a, str> {
            match info.uuid.as_deref() {
                Some(kept) if kept == u => Cow::Borrowed(kept),
                _ => Cow::Owned(u.to_string()),
            }
        };
        let pass = |mapped: &mut HashMap<Cow<'a, str>, Option<usize>>| {
            if let Some(u) = uuid {
                mapped.insert(map_key(u), parent);
            }
        };
        match t {
            "user" => {
                if rec.is_meta {
                    out.report.skip("user (isMeta)");
                    pass(&mut mapped);
                    continue;
                }
                // Owned: its texts are moved into the nodes, not copied.
                let Some(mut msg) = rec.message.take().map(Cow::into_owned) else {
                    out.report
                        .bad(line, "user record without a message: skipped");
                    pass(&mut mapped);
                    continue;
                };
                if rec.is_compact_summary {
                    let text = user_text(msg.get("content"));
                    let target = parent.filter(|p| {
                        matches!(&out.nodes[*p].kind, NodeKind::Compaction(c) if !c.summary_set())
                    });
                    let idx = match target {
                        Some(p) => {
                            if let NodeKind::Compaction(c) = &mut out.nodes[p].kind {
                                c.summary = text;
                            }
                            p
                        }
                        None => out.push(Node {
                            key: key.clone(),
                            parent,
                            timestamp_ms: ts,
                            kind: NodeKind::Compaction(Compaction {
                                summary: text,
                                tokens_before: 0,
                                first_kept: None,
                            }),
                        }),
                    };
                    if let Some(u) = uuid {
                        mapped.insert(map_key(u), Some(idx));
                    }
                    continue;
                }
                let nodes = user_nodes(msg.remove("content"), &tool_names, rec.tool_use_result);
                if nodes.is_empty() {
                    out.report.skip("user (empty)");
                    pass(&mut mapped);
                    continue;
                }
                let mut at = parent;
                for (i, kind) in nodes.into_iter().enumerate() {
                    let k = if i == 0 {
                        key.clone()
                    } else {
                        format!("{key}#{i}")
                    };
                    at = Some(out.push(Node {
                        key: k,
                        parent: at,
                        timestamp_ms: ts,
                        kind,
                    }));
                }
                if let Some(u) = uuid {
                    mapped.insert(map_key(u), at);
                }
            }
            "assistant" => {
                let Some(mut msg) = rec.message.take().map(Cow::into_owned) else {
                    out.report
                        .bad(line, "assistant record without a message: skipped");
                    pass(&mut mapped);
                    continue;
                };
                let mid = s(&msg, "id").map(str::to_string);
                let parts =
                    assistant_parts(msg.remove("content"), &mut tool_names, &mut out.report);
                let usage = claude_usage(obj(&msg, "usage"));
                let stop = stop_reason(msg.get("stop_reason"), rec.is_api_error);
                // A later line of a reply already begun: merged into it when that reply is
                // on this line's path.
                if let Some(target) = mid.as_ref().and_then(|id| by_msg.get(id)).copied() {
                    if on_path(out, parent, target) {
                        if let NodeKind::Assistant(a) = &mut out.nodes[target].kind {
                            a.content.extend(parts);
                            a.usage = max_usage(a.usage, usage);
                            if msg.get("stop_reason").is_some_and(|v| !v.is_null())
                                || stop == "error"
                            {
                                a.stop_reason = stop;
                                stopped.insert(target);
                            }
                            if a.error.is_none() {
                                a.error = rec.error.map(str::to_string);
                            }
                        }
                        out.report.skip("assistant (continuation of a reply)");
                        pass(&mut mapped);
                        continue;
                    }
                }
                let model = s(&msg, "model").unwrap_or("unknown").to_string();
                let mut at = parent;
                if model != "<synthetic>" && last_model.as_deref() != Some(model.as_str()) {
                    at = Some(out.push(Node {
                        key: format!("{key}#model"),
                        parent: at,
                        timestamp_ms: ts,
                        kind: NodeKind::ModelChange {
                            provider: "anthropic".into(),
                            model: model.clone(),
                        },
                    }));
                    last_model = Some(model.clone());
                }
                // Usage once per reply: a copy of a reply elsewhere in the tree counts none.
                let usage = match &mid {
                    Some(id) if by_msg.contains_key(id) => Usage::default(),
                    _ => usage,
                };
                let idx = out.push(Node {
                    key: key.clone(),
                    parent: at,
                    timestamp_ms: ts,
                    kind: NodeKind::Assistant(Assistant {
                        content: parts,
                        api: "anthropic-messages".into(),
                        provider: "anthropic".into(),
                        model,
                        usage,
                        stop_reason: stop,
                        response_id: mid.clone(),
                        error: rec.error.map(str::to_string),
                    }),
                });
                if msg.get("stop_reason").is_some_and(|v| !v.is_null()) {
                    stopped.insert(idx);
                }
                if let Some(id) = mid {
                    by_msg.insert(id, idx);
                }
                if let Some(u) = uuid {
                    mapped.insert(map_key(u), Some(idx));
                }
            }
            "system" if rec.subtype == Some("compact_boundary") => {
                let tokens = rec.pre_tokens;
                let idx = out.push(Node {
                    key: key.clone(),
                    parent,
                    timestamp_ms: ts,
                    kind: NodeKind::Compaction(Compaction {
                        summary: String::new(),
                        tokens_before: tokens,
                        first_kept: None,
                    }),
                });
                if let Some(u) = uuid {
                    mapped.insert(map_key(u), Some(idx));
                }
            }
            "system" => {
                out.report
                    .skip(&format!("system ({})", rec.subtype.unwrap_or("-")));
                pass(&mut mapped);
            }
            "summary" | "custom-title" | "ai-title" => {
                out.report.skip(t);
                pass(&mut mapped);
            }
            "progress"
            | "file-history-snapshot"
            | "queue-operation"
            | "attachment"
            | "last-prompt"
            | "tag"
            | "agent-name"
            | "pr-link"
            | "turn_end" => {
                out.report.skip(t);
                pass(&mut mapped);
            }
            "" => {
                out.report.bad(line, "record without a type: skipped");
                pass(&mut mapped);
            }
            other => {
                out.report.unknown(other);
                pass(&mut mapped);
            }
        }
    }
    // A reply no line of which named its stop reason stopped for its tool calls, if it made any.
    for (i, n) in out.nodes.iter_mut().enumerate() {
        if let NodeKind::Assistant(a) = &mut n.kind {
            if !stopped.contains(&i)
                && a.stop_reason == "stop"
                && a.content.iter().any(|p| matches!(p, Part::ToolCall { .. }))
            {
                a.stop_reason = "toolUse".into();
            }
        }
    }
    // A boundary whose summary line never came keeps the boundary's own words.
    for n in &mut out.nodes {
        if let NodeKind::Compaction(c) = &mut n.kind {
            if c.summary.is_empty() {
                c.summary = "Conversation compacted".into();
            }
        }
    }
}

impl Compaction {
    fn summary_set(&self) -> bool {
        !self.summary.is_empty()
    }
}

/// Whether `target` is `from` or one of its ancestors (a few steps up: a reply's lines are
/// close together).
fn on_path(s: &Session, from: Option<usize>, target: usize) -> bool {
    let mut at = from;
    for _ in 0..256 {
        match at {
            Some(i) if i == target => return true,
            Some(i) => at = s.nodes[i].parent,
            None => return false,
        }
    }
    false
}

fn max_usage(a: Usage, b: Usage) -> Usage {
    Usage {
        input: a.input.max(b.input),
        output: a.output.max(b.output),
        cache_read: a.cache_read.max(b.cache_read),
        cache_write: a.cache_write.max(b.cache_write),
        cost: None,
    }
}

fn claude_usage(u_: Option<&Map<String, Value>>) -> Usage {
    let Some(m) = u_ else {
        return Usage::default();
    };
    Usage {
        input: u(m, "input_tokens"),
        output: u(m, "output_tokens"),
        cache_read: u(m, "cache_read_input_tokens"),
        cache_write: u(m, "cache_creation_input_tokens"),
        cost: None,
    }
}

fn stop_reason(v: Option<&Value>, api_error: bool) -> String {
    if api_error {
        return "error".into();
    }
    match v.and_then(Value::as_str) {
        Some("tool_use") => "toolUse",
        Some("max_tokens") | Some("model_context_window_exceeded") => "length",
        Some("end_turn") | Some("stop_sequence") | Some("pause_turn") | None => "stop",
        Some("refusal") => "error",
        Some(_) => "stop",
    }
    .into()
}

fn image(b: &Map<String, Value>) -> Option<Part> {
    let src = obj(b, "source")?;
    match s(src, "type") {
        Some("base64") | None => Some(Part::Image {
            data: s(src, "data")?.to_string(),
            mime: s(src, "media_type").unwrap_or("image/png").to_string(),
        }),
        Some("url") => Some(Part::Text(format!("[image: {}]", s(src, "url")?))),
        _ => None,
    }
}

/// A user block pi has no shape for, as a short text (its bytes are not carried over: a
/// document's base64 would fill the context).
fn other_block(b: &Map<String, Value>) -> Part {
    let t = s(b, "type").unwrap_or("?");
    match t {
        "document" => Part::Text(format!(
            "[document: {}]",
            obj(b, "source")
                .and_then(|s_| s(s_, "media_type"))
                .unwrap_or("?")
        )),
        _ => Part::Text(Value::Object(b.clone()).to_string()),
    }
}

fn user_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|b| b.as_object())
            .filter_map(|b| s(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A user line's nodes in order: its text and images as user messages, each `tool_result`
/// block as a tool result. `content` is owned: its texts are moved into the parts.
fn user_nodes(
    content: Option<Value>,
    tools: &HashMap<String, String>,
    tool_use_result: Option<&str>,
) -> Vec<NodeKind> {
    let mut out = Vec::new();
    match content {
        Some(Value::String(t)) if !t.is_empty() => out.push(NodeKind::User(vec![Part::Text(t)])),
        Some(Value::Array(blocks)) => {
            let mut pending: Vec<Part> = Vec::new();
            for mut b in blocks.into_iter().filter_map(into_object) {
                match s(&b, "type") {
                    Some("text") => {
                        if let Some(Value::String(t)) = b.remove("text") {
                            pending.push(Part::Text(t))
                        }
                    }
                    Some("image") => pending.extend(image(&b)),
                    Some("tool_result") => {
                        if !pending.is_empty() {
                            out.push(NodeKind::User(std::mem::take(&mut pending)));
                        }
                        let call = s(&b, "tool_use_id").unwrap_or("").to_string();
                        let is_error = flag(&b, "is_error")
                            || tool_use_result.is_some_and(|t| t.starts_with("Error"));
                        let content = match b.remove("content") {
                            Some(Value::String(t)) => vec![Part::Text(t)],
                            Some(Value::Array(a)) => a
                                .into_iter()
                                .filter_map(into_object)
                                .filter_map(|mut c| match s(&c, "type") {
                                    Some("text") => match c.remove("text") {
                                        Some(Value::String(t)) => Some(Part::Text(t)),
                                        _ => None,
                                    },
                                    Some("image") => image(&c),
                                    _ => Some(other_block(&c)),
                                })
                                .collect(),
                            _ => Vec::new(),
                        };
                        out.push(NodeKind::ToolResult(ToolResult {
                            tool_name: tools
                                .get(&call)
                                .cloned()
                                .unwrap_or_else(|| "unknown".into()),
                            call_id: call,
                            content,
                            is_error,
                        }));
                    }
                    _ => pending.push(other_block(&b)),
                }
            }
            if !pending.is_empty() {
                out.push(NodeKind::User(pending));
            }
        }
        _ => {}
    }
    out
}

/// A JSON value as its object, owned (`None` for any other value).
fn into_object(v: Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

/// A reply line's parts. `content` is owned: its texts are moved into the parts.
fn assistant_parts(
    content: Option<Value>,
    tools: &mut HashMap<String, String>,
    report: &mut Report,
) -> Vec<Part> {
    let mut out = Vec::new();
    let blocks = match content {
        Some(Value::Array(a)) => a,
        Some(Value::String(t)) => {
            out.push(Part::Text(t));
            return out;
        }
        _ => return out,
    };
    /// A block's kind, read before its members are moved out.
    enum Kind {
        Text,
        Thinking,
        Redacted,
        Tool,
        Other,
    }
    for mut b in blocks.into_iter().filter_map(into_object) {
        let kind = match s(&b, "type") {
            Some("text") => Kind::Text,
            Some("thinking") => Kind::Thinking,
            Some("redacted_thinking") => Kind::Redacted,
            Some("tool_use") | Some("server_tool_use") => Kind::Tool,
            Some(other) => {
                report.skip(&format!("assistant block {other} (kept as text)"));
                Kind::Other
            }
            None => continue,
        };
        let mut take = |k: &str| match b.remove(k) {
            Some(Value::String(t)) => Some(t),
            _ => None,
        };
        match kind {
            Kind::Text => {
                if let Some(t) = take("text") {
                    out.push(Part::Text(t))
                }
            }
            Kind::Thinking => {
                let text = take("thinking").unwrap_or_default();
                let signature = take("signature").filter(|t| !t.is_empty());
                out.push(Part::Thinking {
                    text,
                    signature,
                    redacted: false,
                })
            }
            Kind::Redacted => out.push(Part::Thinking {
                text: String::new(),
                signature: take("data").filter(|t| !t.is_empty()),
                redacted: true,
            }),
            Kind::Tool => {
                let id = s(&b, "id").unwrap_or("").to_string();
                let name = s(&b, "name").unwrap_or("unknown").to_string();
                tools.insert(id.clone(), name.clone());
                out.push(Part::ToolCall {
                    id,
                    name,
                    arguments: jsonl::arguments(b.get("input")),
                });
            }
            Kind::Other => out.push(Part::Text(Value::Object(b).to_string())),
        }
    }
    out
}

/// The title: the last `custom-title`, else the last `ai-title`, else the last `summary`
/// whose `leafUuid` is in this file (a summary of a leaf elsewhere is another session's: older
/// versions wrote those at the top of a resumed session).
fn title(t: &Titles, infos: &[Info]) -> Option<String> {
    if let Some(c) = t.custom.clone().or_else(|| t.ai.clone()) {
        return Some(c);
    }
    let uuids: HashSet<&str> = infos.iter().filter_map(|i| i.uuid.as_deref()).collect();
    t.summaries
        .iter()
        .rev()
        .find(|(_, leaf)| leaf.as_deref().is_some_and(|l| uuids.contains(l)))
        .map(|(s, _)| s.clone())
}

/// The first user text of a session, cut to 80 characters (a subagent's title).
pub(crate) fn first_user_text(s_: &Session) -> Option<String> {
    s_.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::User(parts) => parts.iter().find_map(|p| match p {
            Part::Text(t) if !t.trim().is_empty() => {
                Some(t.trim().chars().take(80).collect::<String>())
            }
            _ => None,
        }),
        _ => None,
    })
}

/// Claude's directory of projects: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
pub fn projects_dir() -> PathBuf {
    let base = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| arbor_store::paths::home_dir().join(".claude"));
    base.join("projects")
}

/// Every session file under `projects` (`<project>/<id>.jsonl`, one level; subagents'
/// files, `agent-*.jsonl`, are read with their session), sorted.
pub fn session_files(projects: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(projects) else {
        return out;
    };
    for d in rd.filter_map(Result::ok) {
        if !d.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(d.path()) else {
            continue;
        };
        for f in files.filter_map(Result::ok) {
            let p = f.path();
            if f.file_type().is_ok_and(|t| t.is_file())
                && p.extension().is_some_and(|x| x == "jsonl")
                && !is_agent_file(&p)
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    //! [`Record::scanned`] against [`Record::parsed`] (the record as serde_json parses it):
    //! whenever the scan takes a record's members itself, they are the parse's, on records
    //! with duplicate and escaped keys, escapes, lone surrogates, control characters, bytes
    //! that are not UTF-8, numbers of every form and nesting past serde_json's depth limit.
    use super::*;
    use proptest::prelude::*;

    /// A member's key: one of those read, written plainly or with an escape, or another.
    fn key() -> impl Strategy<Value = String> {
        let read: Vec<&'static str> = READ_MEMBERS
            .iter()
            .copied()
            .chain(["toolUseResult", "isSidechain", "requestId", "data"])
            .collect();
        (proptest::sample::select(read), 0u8..4).prop_map(|(k, how)| match how {
            // `\u0061`-style escape of its first letter.
            0 => format!("\\u{:04x}{}", k.as_bytes()[0], &k[1..]),
            _ => k.to_string(),
        })
    }

    /// A JSON value's bytes, some of them not what serde_json accepts.
    fn value() -> impl Strategy<Value = Vec<u8>> {
        let leaf = prop_oneof![
            Just(b"\"\"".to_vec()),
            Just(b"\"user\"".to_vec()),
            Just(b"\"assistant\"".to_vec()),
            Just(b"\"system\"".to_vec()),
            Just(b"\"compact_boundary\"".to_vec()),
            Just(b"\"2026-09-01T10:00:00.000Z\"".to_vec()),
            Just(b"\"Error: no\"".to_vec()),
            Just(b"\"a\\nb\"".to_vec()),
            Just(b"\"\\u0075ser\"".to_vec()),
            Just(b"\"\\ud800\"".to_vec()),
            Just(b"\"\\ud83d\\ude00\"".to_vec()),
            Just(b"\"tab\there\"".to_vec()),
            Just(b"\"caf\xc3\xa9\"".to_vec()),
            Just(b"\"bad \xff byte\"".to_vec()),
            Just(b"true".to_vec()),
            Just(b"false".to_vec()),
            Just(b"null".to_vec()),
            Just(b"0".to_vec()),
            Just(b"-0".to_vec()),
            Just(b"12".to_vec()),
            Just(b"1.5e3".to_vec()),
            Just(b"1e400".to_vec()),
            Just(b"123456789012345678901234567890".to_vec()),
            Just(b"{\"preTokens\":1234}".to_vec()),
            Just(b"{\"preTokens\":1.9e3,\"preTokens\":7}".to_vec()),
            Just(b"[1,\"x\"]".to_vec()),
            Just(
                b"{\"id\":\"m1\",\"model\":\"claude\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{\"c\":1}}],\"usage\":{\"input_tokens\":3,\"output_tokens\":1e2,\"input_tokens\":4},\"stop_reason\":null}".to_vec()
            ),
            Just(b"{\"content\":\"a \\ud800 b\"}".to_vec()),
            Just(b"{\"content\":[{\"type\":\"tool_result\",\"content\":\"x\"}],\"us\\u0061ge\":{\"output_tokens\":5}}".to_vec()),
            Just(format!("{{\"content\":{}1{}}}", "[".repeat(130), "]".repeat(130)).into_bytes()),
        ];
        leaf
    }

    fn record() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec((key(), value()), 0..12).prop_map(|members| {
            let mut line = b"{".to_vec();
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.push(b'"');
                line.extend_from_slice(k.as_bytes());
                line.extend_from_slice(b"\":");
                line.extend_from_slice(v);
            }
            line.push(b'}');
            line
        })
    }

    /// `Some(true)` when the scan took the record, `Some(false)` when it left it to the
    /// parse, `None` when the first pass rejects the line.
    fn check(line: &[u8], detail: Detail) -> Option<bool> {
        let f = arbor_core::entry::parse_fields(line).ok()?;
        let mut scratch = Vec::new();
        let scanned = Record::scanned(line, &f, detail, &mut scratch);
        let mut slim = Vec::new();
        slim_record(line, &f, detail, &mut slim);
        let parsed = serde_json::from_slice::<Value>(&slim);
        match (&scanned, &parsed) {
            (None, _) => Some(false),
            (Some(r), Ok(Value::Object(m))) => {
                assert_eq!(*r, Record::parsed(m), "{}", String::from_utf8_lossy(line));
                Some(true)
            }
            (Some(r), other) => panic!(
                "scanned {r:?} but serde_json: {other:?}: {}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn scanned_members_are_the_parsed_ones(line in record()) {
            check(&line, Detail::Listing);
            check(&line, Detail::Full);
        }
    }

    #[test]
    fn records_as_claude_code_writes_them_are_scanned() {
        let lines = [
            r#"{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s","version":"2.1.72","type":"user","message":{"role":"user","content":"fix the tree"},"uuid":"u1","timestamp":"2026-09-01T10:00:00.000Z"}"#,
            r#"{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok \"quoted\""}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":20,"service_tier":"standard"}},"requestId":"r","uuid":"u2","timestamp":"2026-09-01T10:00:01.000Z"}"#,
            r#"{"parentUuid":"u2","type":"progress","data":{"type":"bash_progress"},"uuid":"u3","timestamp":"2026-09-01T10:00:02.000Z"}"#,
            r#"{"parentUuid":null,"logicalParentUuid":"u3","type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":150000},"uuid":"u4","timestamp":"2026-09-01T10:00:03.000Z"}"#,
        ];
        for l in lines {
            for d in [Detail::Listing, Detail::Full] {
                assert_eq!(check(l.as_bytes(), d), Some(true), "{l}");
            }
        }
        // An escape in a member read leaves the record to serde_json.
        let l = r#"{"type":"user","cwd":"C:\\w","message":{"content":"x"},"uuid":"u1"}"#;
        assert_eq!(check(l.as_bytes(), Detail::Listing), Some(false));
    }
}
