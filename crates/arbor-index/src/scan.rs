//! The reading half of indexing: one session file, from its last indexed byte (or from the
//! start), into [`Chunk`]s of rows for the catalog. Runs on worker threads; never touches the
//! database.
use crate::text::{self, IndexKinds, Kind, Usage};
use arbor_core::entry::{Entry, EntryType, LineError, Role};
use arbor_core::json::{JsStr, ValueKind};
use arbor_core::LineRef;
use arbor_store::info::{InfoState, Phase};
use arbor_store::LineStream;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes of input after which a chunk is handed to the writer (bounds memory on huge files).
pub const CHUNK_BYTES: u64 = 16 << 20;
/// Length of the file head whose hash is part of the fingerprint.
pub const HEAD_BYTES: u64 = 4096;
/// At most this many bytes of the last indexed line are hashed.
pub const LAST_LINE_BYTES: u64 = 4096;

/// What `stat` says about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Inode number.
    pub ino: u64,
    /// Device number.
    pub dev: u64,
}

impl Stat {
    /// Reads the metadata of `path` (following symlinks).
    pub fn of(path: &Path) -> std::io::Result<Stat> {
        Ok(Stat::from_meta(&std::fs::metadata(path)?))
    }
    /// From metadata already read.
    pub fn from_meta(m: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: m.len(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ino: m.ino(),
            dev: m.dev(),
        }
    }
    /// The mtime as a JS `Date` would hold it (ms, truncated).
    pub fn mtime_ms(&self) -> f64 {
        self.mtime_ns.div_euclid(1_000_000) as f64
    }
}

/// The fingerprint of the indexed prefix of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint {
    /// `stat` when it was indexed.
    pub stat: Stat,
    /// Bytes of the head that were hashed (`min(4096, indexed_to)`).
    pub head_len: u64,
    /// Hash of the head, omp's title slot line excluded (it is rewritten in place).
    pub head_hash: i64,
    /// Length of omp's title slot line, with its `\n` (0: none).
    pub slot_len: u64,
    /// Bytes indexed: the file is read from here next time.
    pub indexed_to: u64,
    /// Physical lines up to `indexed_to`.
    pub lines: u64,
    /// Offset of the last indexed line.
    pub last_line_at: u64,
    /// Hash of the last indexed line (its last 4 KB at most).
    pub last_line_hash: i64,
    /// The last indexed line has no `\n`: any change to the file re-indexes it whole (a writer
    /// appending to it would glue its line to this one).
    pub tail_open: bool,
}

/// Session-level facts that are not pi's `SessionInfo`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// Format version from the header (1 when absent).
    pub version: i64,
    /// Written by omp (title slot, or a 16-hex session id).
    pub omp: bool,
    /// The header id when it is a string.
    pub session_id: Option<String>,
    /// omp's title slot text.
    pub slot_title: Option<String>,
    /// omp 13's header `title`.
    pub header_title: Option<String>,
    /// A header was found (the file is a session).
    pub is_session: bool,
}

/// One entry, as a tree node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIn {
    /// Physical line number (1-based).
    pub seq: i64,
    /// `id`, when a string.
    pub eid: Option<Box<str>>,
    /// `parentId`, when a string.
    pub parent: Option<Box<str>>,
}

/// One indexed text.
#[derive(Debug, Clone, PartialEq)]
pub struct DocIn {
    /// Line of the entry it comes from.
    pub seq: i64,
    /// The entry it points at (a label's target).
    pub eid: Option<String>,
    /// Its kind.
    pub kind: Kind,
    /// The entry's ISO timestamp.
    pub ts: Option<String>,
    /// The same in ms.
    pub ts_ms: Option<f64>,
    /// The text (WTF-8: a user or assistant text keeps its lone surrogates for
    /// `allMessagesText`).
    pub text: JsStr,
}

/// A batch of rows for one file, in file order.
#[derive(Debug, Clone, Default)]
pub struct Chunk {
    /// Index of the job.
    pub job: usize,
    /// The file is indexed from the start: drop its old rows first.
    pub reset: bool,
    /// The last chunk of the job.
    pub done: bool,
    /// Fingerprint after this chunk.
    pub fp: Fingerprint,
    /// pi's listing state after this chunk.
    pub info: InfoState,
    /// Other facts.
    pub meta: Meta,
    /// Tree nodes.
    pub nodes: Vec<NodeIn>,
    /// Texts.
    pub docs: Vec<DocIn>,
    /// Label changes: (target, label or `None` for a clear).
    pub labels: Vec<(String, Option<String>)>,
    /// Models seen (`provider/model`), first-seen order, may repeat earlier ones.
    pub models: Vec<String>,
    /// Token and cost totals of this chunk.
    pub usage: Usage,
    /// Bytes read for this chunk (progress).
    pub bytes: u64,
    /// Texts are indexed up to this offset after this chunk (they are current when it equals
    /// `fp.indexed_to`).
    pub docs_to: u64,
    /// Physical lines up to `docs_to`.
    pub docs_lines: u64,
}

/// What the catalog knows about a file (the state to continue from).
#[derive(Debug, Clone, Default)]
pub struct Stored {
    /// Row id.
    pub fid: i64,
    /// Generation: bumped by every write of the row (detects a concurrent indexer).
    pub gen: i64,
    /// The fingerprint.
    pub fp: Fingerprint,
    /// pi's listing state.
    pub info: InfoState,
    /// Other facts.
    pub meta: Meta,
    /// Texts indexed up to this offset.
    pub docs_to: u64,
    /// Physical lines up to `docs_to`.
    pub docs_lines: u64,
}

/// A file to (re)index.
#[derive(Debug, Clone)]
pub struct Job {
    /// Position in the job list.
    pub idx: usize,
    /// Absolute path.
    pub path: PathBuf,
    /// `stat` just taken.
    pub stat: Stat,
    /// The catalog's row, if any.
    pub stored: Option<Stored>,
    /// Opt-in kinds.
    pub kinds: IndexKinds,
    /// Bring the texts (full-text index) up to date too. Texts that are current are kept
    /// current either way.
    pub want_docs: bool,
}

/// FNV-1a, 64 bits, as a signed integer for SQLite.
pub fn hash64(bytes: &[u8]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

fn read_range(f: &mut std::fs::File, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; to.saturating_sub(from) as usize];
    f.seek(SeekFrom::Start(from))?;
    f.read_exact(&mut buf)?;
    Ok(buf)
}

fn head_hash(f: &mut std::fs::File, slot_len: u64, head_len: u64) -> std::io::Result<i64> {
    Ok(hash64(&read_range(f, slot_len.min(head_len), head_len)?))
}

fn last_line_hash(f: &mut std::fs::File, at: u64, to: u64) -> std::io::Result<i64> {
    Ok(hash64(&read_range(
        f,
        at.max(to.saturating_sub(LAST_LINE_BYTES)),
        to,
    )?))
}

/// Whether the stored prefix is still the file's prefix (so indexing can continue at its end).
fn can_continue(path: &Path, st: &Stat, s: &Stored) -> std::io::Result<bool> {
    let fp = &s.fp;
    if fp.stat.ino != st.ino || fp.stat.dev != st.dev || st.size < fp.indexed_to || fp.tail_open {
        return Ok(false);
    }
    let mut f = std::fs::File::open(path)?;
    if head_hash(&mut f, fp.slot_len, fp.head_len)? != fp.head_hash {
        return Ok(false);
    }
    if fp.indexed_to > 0
        && last_line_hash(&mut f, fp.last_line_at, fp.indexed_to)? != fp.last_line_hash
    {
        return Ok(false);
    }
    if fp.slot_len > 0 {
        // The slot must still be a slot of the same length (omp rewrites it in place).
        let slot = read_range(&mut f, 0, fp.slot_len)?;
        if slot.last() != Some(&b'\n') || slot_title(&slot[..slot.len() - 1]).is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The title of an omp title slot line (`Some("")` for an empty title); `None` when the line
/// is not a slot.
fn slot_title(line: &[u8]) -> Option<String> {
    let f = arbor_core::entry::parse_fields(line).ok()?;
    if f.str(line, "type").as_deref() != Some("title") {
        return None;
    }
    Some(
        f.str(line, "title")
            .map(|s| s.into_owned())
            .unwrap_or_default(),
    )
}

fn model_name(provider: Option<&str>, model: Option<&str>) -> Option<String> {
    match (provider, model) {
        (Some(p), Some(m)) if !p.is_empty() && !m.is_empty() => Some(format!("{p}/{m}")),
        (None | Some(""), Some(m)) if !m.is_empty() => Some(m.to_string()),
        _ => None,
    }
}

/// Parses one line: message lines as pi and omp write them (`type` first, `message` last) in
/// one pass over their bytes, anything else the general way.
fn parse_line(bytes: &[u8], line_no: usize) -> Result<Entry, LineError> {
    if bytes.starts_with(b"{\"type\":\"message\"") {
        if let Some(e) = arbor_core::entry::parse_message_line(bytes, LineRef::Owned(0), line_no) {
            return Ok(e);
        }
    }
    Entry::parse(bytes, LineRef::Owned(0), line_no)
}

/// The ids the lines of the v1 file `path` already carry: the v1 migration gives none of them
/// again (`arbor_core::migrate::V1Ids`).
fn existing_ids(path: &Path) -> std::io::Result<std::collections::HashSet<String>> {
    let mut ids = std::collections::HashSet::new();
    let mut stream = LineStream::open(path, 0, None)?;
    let mut n = 0usize;
    while let Some(l) = stream.next_line()? {
        n += 1;
        if let Ok(e) = parse_line(l.bytes, n) {
            if let Some(id) = e.id {
                ids.insert(id.into());
            }
        }
    }
    Ok(ids)
}

/// Reads the file of `job` and hands its chunks to `emit`. Errors are I/O errors of the file.
///
/// The listing state continues from `indexed_to` when the stored prefix is intact, else the
/// file is read from the start. Texts are produced when they are current (kept so), or asked
/// for: then reading starts at `docs_to` (lines before `indexed_to` give texts only).
pub fn scan_job(job: &Job, emit: &mut dyn FnMut(Chunk)) -> std::io::Result<()> {
    let path = &job.path;
    // A v1 file is read from its start: its entries' ids are the ones its migration gives
    // them, in order (`V1Ids`), which a read from the middle cannot know. pi rewrites a v1
    // file as v3 when it opens one, so such a file rarely changes.
    let cont = match &job.stored {
        Some(s) if s.meta.version >= 2 => can_continue(path, &job.stat, s)?,
        _ => false,
    };
    let (mut fp, mut info, mut meta, docs_start) = match (&job.stored, cont) {
        (Some(s), true) => {
            let current = s.docs_to == s.fp.indexed_to;
            let docs = if current || (job.want_docs && s.meta.is_session) {
                Some((s.docs_to, s.docs_lines))
            } else {
                None
            };
            (s.fp, s.info.clone(), s.meta.clone(), docs)
        }
        _ => (
            Fingerprint::default(),
            InfoState::default(),
            Meta {
                version: 1,
                ..Meta::default()
            },
            job.want_docs.then_some((0, 0)),
        ),
    };
    let (mut docs_to, mut docs_lines) = match (&job.stored, cont, docs_start) {
        (_, _, Some(d)) => d,
        (Some(s), true, None) => (s.docs_to, s.docs_lines),
        _ => (0, 0),
    };
    let with_docs = docs_start.is_some();
    fp.stat = job.stat;
    let mut f = std::fs::File::open(path)?;
    if cont && fp.slot_len > 0 {
        let slot = read_range(&mut f, 0, fp.slot_len)?;
        meta.slot_title = slot_title(&slot[..slot.len().saturating_sub(1)]);
    }
    let listing_from = fp.indexed_to;
    let from = if with_docs {
        docs_to.min(listing_from)
    } else {
        listing_from
    };
    let mut lines = if with_docs && docs_to < listing_from {
        docs_lines
    } else {
        fp.lines
    };
    let mut chunk = Chunk {
        job: job.idx,
        reset: !cont,
        ..Chunk::default()
    };
    let mut stream =
        LineStream::open_with_buffer(path, from, Some(job.stat.size), BUFFER.with(|b| b.take()))?;
    let mut chunk_start = from;
    let mut last_line_at = fp.last_line_at;
    let mut pos = from;
    // Texts-only lines before the listing's offset: the header is behind us unless they start
    // the file.
    let mut docs_header_seen = from > 0;
    let mut models_seen: Vec<String> = Vec::new();
    // A v1 file's ids (from its header on) and the last one given (the next entry's parent).
    let mut v1: Option<(arbor_core::migrate::V1Ids, Option<Box<str>>)> = None;
    while let Some(l) = stream.next_line()? {
        let seq = lines as i64 + 1;
        let listing = l.offset >= listing_from;
        let mut bytes = l.bytes;
        if l.offset == 0 {
            bytes = bytes
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(bytes);
        }
        if let Some(b) = bytes.strip_suffix(b"\r") {
            bytes = b;
        }
        let parsed = if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            None
        } else {
            Some(parse_line(bytes, seq as usize))
        };
        if !l.terminated && listing {
            // A last line without `\n`: pi reads it when it parses; a torn write does not.
            match &parsed {
                Some(Ok(_)) | Some(Err(LineError::NotObject)) => fp.tail_open = true,
                _ => break,
            }
        }
        lines += 1;
        pos = l.end();
        if listing {
            fp.lines = lines;
            fp.indexed_to = pos;
            last_line_at = l.offset;
        }
        if with_docs {
            docs_to = pos;
            docs_lines = lines;
        }
        match parsed {
            None | Some(Err(LineError::Json(_))) => {}
            Some(Err(LineError::NotObject)) => {
                if listing {
                    info.feed_non_object(bytes.trim_ascii() == b"null");
                }
            }
            // A kind of bad line arbor-core may add later: skipped as a malformed one.
            Some(Err(_)) => {}
            Some(Ok(e)) if !listing => {
                if e.etype == EntryType::Session {
                    if !docs_header_seen {
                        docs_header_seen = true;
                        let mut m = Meta::default();
                        header(bytes, &e, seq, true, &mut m, &mut chunk);
                    }
                } else if !(seq == 1 && matches!(&e.etype, EntryType::Other(t) if &**t == "title"))
                    && docs_header_seen
                {
                    texts(bytes, &e, seq, None, Phase::Hidden, job.kinds, &mut chunk);
                }
            }
            Some(Ok(mut e)) => {
                if seq == 1 && matches!(&e.etype, EntryType::Other(t) if &**t == "title") {
                    if l.terminated {
                        fp.slot_len = l.end();
                    }
                    meta.slot_title = slot_title(bytes);
                    meta.omp = true;
                    continue;
                }
                let before = info.phase;
                let pushed = info.feed_entry_with(bytes, &e, with_docs);
                if before == Phase::AwaitHeader {
                    if info.phase == Phase::Listed {
                        header(bytes, &e, seq, with_docs, &mut meta, &mut chunk);
                        if meta.version < 2 {
                            let ids = existing_ids(path)?;
                            v1 = Some((arbor_core::migrate::V1Ids::new(bytes, ids), None));
                        }
                    } else if info.phase == Phase::Hidden {
                        // Not a session: nothing more to read. Any change re-reads it.
                        fp.indexed_to = job.stat.size;
                        fp.tail_open = true;
                        docs_to = fp.indexed_to;
                        break;
                    }
                    continue;
                }
                if e.etype == EntryType::Session {
                    continue; // a stray header line: not an entry
                }
                if let Some((ids, prev)) = &mut v1 {
                    let id: Box<str> = ids.next().into();
                    e.id = Some(id.clone());
                    e.parent_id = prev.replace(id);
                }
                if with_docs {
                    texts(bytes, &e, seq, pushed, info.phase, job.kinds, &mut chunk);
                }
                // omp 13 (no title slot): its session id and an entry only omp writes
                // (arbor_core::doc::dialect_of, the rule `SessionDoc::dialect` follows).
                if !meta.omp
                    && arbor_core::doc::dialect_of(
                        false,
                        meta.session_id.as_deref(),
                        arbor_core::doc::is_omp_mark(bytes, &e),
                    ) == arbor_core::Dialect::Omp
                {
                    meta.omp = true;
                }
                entry(bytes, e, seq, &mut models_seen, &mut chunk);
            }
        }
        if pos - chunk_start >= CHUNK_BYTES {
            chunk.bytes = pos - chunk_start;
            chunk_start = pos;
            finish_fp(&mut f, &mut fp, last_line_at)?;
            chunk.fp = fp;
            chunk.info = info.clone();
            chunk.meta = meta.clone();
            chunk.docs_to = docs_to;
            chunk.docs_lines = docs_lines;
            let next = Chunk {
                job: job.idx,
                ..Chunk::default()
            };
            emit(std::mem::replace(&mut chunk, next));
        }
    }
    chunk.bytes = pos.max(fp.indexed_to).saturating_sub(chunk_start);
    finish_fp(&mut f, &mut fp, last_line_at)?;
    chunk.fp = fp;
    chunk.info = info;
    chunk.meta = meta;
    chunk.docs_to = docs_to;
    chunk.docs_lines = docs_lines;
    chunk.done = true;
    BUFFER.with(|b| b.replace(stream.into_buffer()));
    emit(chunk);
    Ok(())
}

thread_local! {
    /// Each reader thread's line buffer, kept from one file to the next.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn finish_fp(
    f: &mut std::fs::File,
    fp: &mut Fingerprint,
    last_line_at: u64,
) -> std::io::Result<()> {
    fp.last_line_at = last_line_at;
    fp.last_line_hash = if fp.indexed_to > 0 {
        last_line_hash(f, last_line_at, fp.indexed_to.min(fp.stat.size))?
    } else {
        0
    };
    if fp.head_len < HEAD_BYTES {
        fp.head_len = fp.indexed_to.min(HEAD_BYTES).min(fp.stat.size);
        fp.head_hash = head_hash(f, fp.slot_len, fp.head_len)?;
    }
    Ok(())
}

fn header(line: &[u8], e: &Entry, seq: i64, with_docs: bool, meta: &mut Meta, chunk: &mut Chunk) {
    let f = &e.fields;
    meta.is_session = true;
    meta.version = i64::from(arbor_core::migrate::header_version(line, f));
    meta.session_id = f.str(line, "id").map(|s| s.into_owned());
    meta.header_title = text::entry_str(line, e, "title");
    if let Some(t) = meta.header_title.as_ref().filter(|_| with_docs) {
        chunk.docs.push(DocIn {
            seq,
            eid: None,
            kind: Kind::Name,
            ts: e.timestamp.as_deref().map(str::to_string),
            ts_ms: e.timestamp_ms(),
            text: t.clone().into(),
        });
    }
}

/// The listing facts of an entry: its tree node, labels, models, usage. `seen`: the models
/// already reported for this file.
fn entry(line: &[u8], mut e: Entry, seq: i64, seen: &mut Vec<String>, chunk: &mut Chunk) {
    let mut model = |p: Option<&str>, m: Option<&str>, chunk: &mut Chunk| {
        if let Some(n) = model_name(p, m) {
            if !seen.contains(&n) {
                seen.push(n.clone());
                chunk.models.push(n);
            }
        }
    };
    match &e.etype {
        EntryType::Message => {
            if let Some(msg) = &e.message {
                match e.role {
                    Some(Role::Assistant) => {
                        model(
                            msg.str(line, "provider").as_deref(),
                            msg.str(line, "model").as_deref(),
                            chunk,
                        );
                        if let Some((raw, ValueKind::Object)) = msg.get(line, "usage") {
                            chunk.usage.add(&Usage::of_raw(raw));
                        }
                    }
                    // omp: a task tool's sub-agent usage counts toward the session.
                    Some(Role::ToolResult)
                        if msg.str(line, "toolName").as_deref() == Some("task") =>
                    {
                        if let Some((raw, ValueKind::Object)) = msg.get(line, "details") {
                            if let Ok(d) = arbor_core::entry::parse_fields(raw) {
                                if let Some((u, ValueKind::Object)) = d.get(raw, "usage") {
                                    chunk.usage.add(&Usage::of_raw(u));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        EntryType::Label => {
            if let Some(target) = e.fields.str(line, "targetId") {
                chunk
                    .labels
                    .push((target.into_owned(), text::entry_str(line, &e, "label")));
            }
        }
        EntryType::ModelChange => {
            let p = e.fields.str(line, "provider");
            let m = e
                .fields
                .str(line, "modelId")
                .or_else(|| e.fields.str(line, "model"));
            model(p.as_deref(), m.as_deref(), chunk);
        }
        _ => {}
    }
    chunk.nodes.push(NodeIn {
        seq,
        eid: e.id.take(),
        parent: e.parent_id.take(),
    });
}

/// The searchable texts of an entry. `pushed`: the text pi's listing took from it (user and
/// assistant messages), when known.
fn texts(
    line: &[u8],
    e: &Entry,
    seq: i64,
    pushed: Option<arbor_store::info::PushedText>,
    phase: Phase,
    kinds: IndexKinds,
    chunk: &mut Chunk,
) {
    let mut doc = |kind: Kind, eid: Option<&str>, text: JsStr| {
        if !text.is_empty() && kinds.includes(kind) {
            chunk.docs.push(DocIn {
                seq,
                eid: eid.map(str::to_string),
                kind,
                ts: e.timestamp.as_deref().map(str::to_string),
                ts_ms: e.timestamp_ms(),
                text,
            });
        }
    };
    let id = e.id.as_deref();
    match &e.etype {
        EntryType::Message => {
            let Some(msg) = &e.message else { return };
            match e.role {
                Some(Role::User) | Some(Role::Assistant) => {
                    let kind = if e.role == Some(Role::User) {
                        Kind::User
                    } else {
                        Kind::Assistant
                    };
                    let text = match pushed {
                        Some(p) => Some(p.text),
                        // pi hides this session (or the listing saw this line before): its
                        // texts are still searchable.
                        None if phase == Phase::Hidden => {
                            text::message_text(line, msg).map(JsStr::from)
                        }
                        None => None,
                    };
                    if let Some(t) = text {
                        doc(kind, id, t);
                    }
                    if e.role == Some(Role::Assistant) && kinds.thinking {
                        doc(Kind::Thinking, id, text::thinking_text(line, msg).into());
                    }
                }
                Some(Role::ToolResult) if kinds.tools => doc(
                    Kind::ToolResult,
                    id,
                    text::tool_result_text(line, msg).into(),
                ),
                Some(Role::BashExecution) if kinds.tools => {
                    doc(Kind::BashExecution, id, text::bash_text(line, msg).into())
                }
                Some(Role::System) => {
                    if let Some(t) = text::system_text(line, msg) {
                        doc(Kind::System, id, t.into());
                    }
                }
                _ => {}
            }
        }
        EntryType::ContextEdit => {
            if let Some(t) = text::context_edit_text(line, e) {
                doc(Kind::ContextEdit, id, t.into());
            }
        }
        EntryType::Compaction => {
            if let Some(s) = text::entry_str(line, e, "summary") {
                doc(Kind::Compaction, id, s.into());
            }
        }
        EntryType::BranchSummary => {
            if let Some(s) = text::entry_str(line, e, "summary") {
                doc(Kind::BranchSummary, id, s.into());
            }
        }
        EntryType::SessionInfo => {
            if let Some(n) = text::entry_str(line, e, "name") {
                doc(Kind::Name, id, arbor_core::js::trim(&n).into());
            }
        }
        EntryType::TitleChange => {
            if let Some(n) = text::entry_str(line, e, "title") {
                doc(Kind::Name, id, n.into());
            }
        }
        EntryType::Label => {
            if let (Some(target), Some(l)) = (
                e.fields.str(line, "targetId"),
                text::entry_str(line, e, "label"),
            ) {
                doc(Kind::Label, Some(&target), l.into());
            }
        }
        _ => {}
    }
}
