//! A loaded session: the file's bytes, the header, every entry's envelope and the tree index.
//!
//! [`SessionDoc::parse`] is as lenient as pi's loader (blank and malformed lines are skipped
//! in memory, a BOM, CRLF line ends, a last line without newline and a torn last line all
//! load) but reports every such line, and never changes the bytes it was given. Files in
//! format v1 or v2 are migrated *in memory* (see [`crate::Migration`]); the store decides
//! whether to write the migrated lines back.
use crate::entry::{
    parse_fields, parse_message_line, parse_message_line_compact_with, CompactScratch, Entry,
    EntryType, Fields, LineError, LineRef,
};
use crate::migrate::{self, Migration};

use crate::tree::TreeIndex;
use std::sync::Arc;

/// Bytes a [`SessionDoc`] reads from: a `Vec<u8>`, a memory map, ...
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// omp 18's first physical line: a fixed 256-byte `{"type":"title",...}` slot.
#[derive(Debug, Clone)]
pub struct TitleSlot {
    /// Members of the slot object (ranges relative to the line).
    pub fields: Fields,
    /// Where the line sits.
    pub line: LineRef,
    /// Length of the physical line including its `\n`.
    pub physical_len: usize,
}

/// The session header line (`type: "session"`).
#[derive(Debug, Clone)]
pub struct Header {
    /// 1-based physical line number.
    pub line_no: usize,
    /// Where the (possibly migrated) line's bytes are.
    pub line: LineRef,
    /// Members of the header object.
    pub fields: Fields,
}

/// A line that could not be read as an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based physical line number.
    pub line_no: usize,
    /// Byte offset of the line in the file.
    pub offset: usize,
    /// Length of the line in bytes (without the line end).
    pub len: usize,
    /// What is wrong with it.
    pub error: String,
}

/// What the loader noticed; nothing here is ever removed from disk by reading.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LoadReport {
    /// The file starts with a UTF-8 byte order mark.
    pub bom: bool,
    /// Number of lines ending in `\r\n`.
    pub crlf_lines: usize,
    /// 1-based numbers of blank (whitespace-only) lines.
    pub blank_lines: Vec<usize>,
    /// Lines that are not JSON objects (malformed JSON, or JSON that is not an object).
    pub malformed: Vec<BadLine>,
    /// The last line has no newline and does not parse: bytes of an interrupted write.
    pub torn_tail: Option<BadLine>,
    /// The last line is complete JSON but has no newline after it.
    pub missing_final_newline: bool,
    /// 1-based numbers of further `type: "session"` lines after the header in a pi file (pi's
    /// duplicate-header bug writes them); pi skips them, so they are not entries. (In an omp
    /// file they are entries, as omp 18 reads them, and not listed here.)
    pub extra_headers: Vec<usize>,
    /// The format version the file was written in (1 when the header has none).
    pub version: u32,
}

impl LoadReport {
    /// Whether anything unusual was found.
    pub fn is_clean(&self) -> bool {
        !self.bom
            && self.blank_lines.is_empty()
            && self.malformed.is_empty()
            && self.torn_tail.is_none()
            && !self.missing_final_newline
            && self.extra_headers.is_empty()
    }
}

/// Why bytes are not a session at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotASession {
    /// Zero bytes, or only whitespace.
    #[error("the file is empty")]
    Empty,
    /// No line parses as JSON.
    #[error("no line of the file is a JSON object")]
    NoJson,
    /// The first JSON object is not a `type: "session"` header with a string `id`.
    #[error("line {line_no} should be the session header (type \"session\" with a string id) but is {found}")]
    NoHeader {
        /// Line of the first JSON object.
        line_no: usize,
        /// What was found instead.
        found: String,
    },
}

/// The dialect a file is written in: decides the id scheme and key order of new entries
/// and the small differences in context building.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// pi (`@mariozechner/pi-coding-agent`).
    Pi,
    /// oh-my-pi (`@oh-my-pi/pi-coding-agent`).
    Omp,
}

/// A loaded session.
pub struct SessionDoc {
    base: SharedBytes,
    owned: Vec<Box<[u8]>>,
    /// omp's title slot, when line 1 is one.
    pub(crate) title_slot: Option<TitleSlot>,
    /// The header.
    pub(crate) header: Header,
    /// Entries in file order (header-typed lines excluded).
    pub(crate) entries: Vec<Entry>,
    /// What the loader noticed.
    pub(crate) report: LoadReport,
    /// The in-memory migration, when the file is older than v3.
    pub(crate) migration: Option<Migration>,
    /// Tree index: ids, labels, leaf.
    pub(crate) index: TreeIndex,
    /// Length in bytes of the input up to and including the last complete line.
    pub(crate) complete_len: usize,
    /// Start offsets (in the input) of the non-blank lines that may hold an omp blob reference,
    /// in order: compact message lines with a string value that starts with `blob:sha256:`
    /// (noted by the validation itself), any other line that contains `blob:sha256:` at all.
    /// Found during the load, instead of another pass over the whole file.
    pub(crate) blob_ref_lines: Vec<usize>,
}

impl std::fmt::Debug for SessionDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionDoc")
            .field("entries", &self.entries.len())
            .field("report", &self.report)
            .finish()
    }
}

/// Splits `bytes` into physical lines: (start, end without line end, end with it).
pub(crate) fn physical_lines(
    bytes: &[u8],
    from: usize,
) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut pos = from;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let (content_end, next) = match memchr::memchr(b'\n', &bytes[pos..]) {
            Some(i) => (pos + i, pos + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        pos = next;
        Some((start, content_end, next))
    })
}

fn is_blank(line: &[u8]) -> bool {
    match line
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        None => true,
        // An ASCII byte that is not whitespace (`{` on every entry line) decides at once:
        // validating the whole line as UTF-8 just to trim it cost 13% of a load.
        Some(i) if line[i] < 0x80 && !matches!(line[i], 0x0B | 0x0C) => false,
        Some(_) => std::str::from_utf8(line).is_ok_and(|s| s.trim().is_empty()),
    }
}

/// Inputs at least this large are parsed on two threads (when two cores are available).
pub const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// What scanning a run of lines found; line numbers are relative to the run (first line: 1).
///
/// The entries themselves go to a vector the caller passes (one per thread in the two-thread
/// load, instead of one per chunk grown by doubling: some 7 MB less fresh memory per 100 MB);
/// `entries` counts those of this run.
#[derive(Default)]
struct Lines {
    entries: usize,
    title_slot: Option<TitleSlot>,
    crlf: usize,
    blank: Vec<usize>,
    malformed: Vec<BadLine>,
    torn_tail: Option<BadLine>,
    missing_final_newline: bool,
    complete_len: Option<usize>,
    any_nonblank: bool,
    lines: usize,
    blob_lines: Vec<usize>,
}

impl Lines {
    /// Appends `later`, the lines that follow `self`'s, renumbering them; returns the number
    /// of lines before `later`'s, which its entries' line numbers are to be shifted by.
    fn append(&mut self, later: Lines) -> usize {
        let off = self.lines;
        self.entries += later.entries;
        self.crlf += later.crlf;
        self.blank.extend(later.blank.into_iter().map(|n| n + off));
        self.malformed
            .extend(later.malformed.into_iter().map(|mut b| {
                b.line_no += off;
                b
            }));
        if let Some(mut t) = later.torn_tail {
            t.line_no += off;
            self.torn_tail = Some(t);
        }
        if later.title_slot.is_some() {
            // Only the first run of a file can have one.
            self.title_slot = later.title_slot;
        }
        self.missing_final_newline |= later.missing_final_newline;
        if later.complete_len.is_some() {
            self.complete_len = later.complete_len;
        }
        self.any_nonblank |= later.any_nonblank;
        self.lines += later.lines;
        self.blob_lines.extend(later.blob_lines);
        off
    }
}

/// Maps in the pages of a byte range of the input before they are read (a memory map made
/// without populating it: see [`SessionDoc::parse_prefetched`]).
pub type Prefetch<'a> = &'a (dyn Fn(std::ops::Range<usize>) + Sync);

/// The bytes one parsing thread takes at a time in the two-thread load.
const CHUNK_BYTES: usize = 2 << 20;

/// Scans the lines of `data[from..]`, on two threads for large inputs: envelope parsing is
/// independent per line, and on two cores this halves the dominant cost of a load.
///
/// The input is cut into chunks of about [`CHUNK_BYTES`] at line boundaries, and each thread
/// takes the next chunk not yet taken (a shared counter), so both finish together however
/// their speeds differ (a busy core, pages still to be mapped in). With `prefetch`, a thread
/// maps in the pages of its chunk before reading it (one call per chunk instead of a page
/// fault every 16 pages). The chunks' results are joined in file order.
fn scan_lines_parallel(
    data: &[u8],
    from: usize,
    prefetch: Option<Prefetch<'_>>,
) -> (Lines, Vec<(usize, Entry)>) {
    let len = data.len().saturating_sub(from);
    let two_cores = len >= PARALLEL_MIN_BYTES && crate::two_cores();
    let mut records = Vec::new();
    if !two_cores {
        if let Some(p) = prefetch {
            p(from..data.len());
        }
        let lines = scan_lines(data, from, data.len(), true, &mut records);
        return (lines, records);
    }
    // Chunk k starts at the first line that begins at or after `from + k * CHUNK_BYTES`
    // (chunk 0 at `from`). Each chunk's own bytes are searched for it, once: when they hold
    // no newline the chunk starts where the next one does (searched first). A line longer
    // than a chunk is so read once ahead of its parse, not once per chunk it spans, and
    // what that search read is released (see `json::set_release_hook`).
    let chunks = len.div_ceil(CHUNK_BYTES);
    let mut starts = vec![data.len(); chunks + 1];
    starts[0] = from;
    for k in (1..chunks).rev() {
        let at = from + k * CHUNK_BYTES;
        let own = data
            .get(at - 1..(at - 1 + CHUNK_BYTES).min(data.len()))
            .unwrap_or_default();
        let found = memchr::memchr(b'\n', own);
        // What the search read is parsed later, in order: its pages (and those the kernel
        // mapped around them) go now, or a file of long lines had most of its pages mapped
        // before its parse began.
        crate::json::scan::release(own);
        starts[k] = match found {
            Some(i) => at + i,
            None => starts[k + 1],
        };
    }
    let boundary = |k: usize| starts.get(k).copied().unwrap_or(data.len());
    // A line longer than a chunk leaves the chunks after its start empty: the chunk that
    // holds its start reads it.
    let scan_chunk = |k: usize, records: &mut Vec<(usize, Entry)>| {
        let (a, b) = (boundary(k), boundary(k + 1));
        if a >= b {
            return Lines::default();
        }
        if let Some(p) = prefetch {
            p(a..b);
        }
        scan_lines(data, a, b, k == 0, records)
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Each thread takes chunks in increasing order, its entries in one vector (sized for
    // half the input at a guess of 4 KB per line; grown by doubling past that).
    let work = || {
        let mut done: Vec<(usize, Lines)> = Vec::new();
        let mut records = Vec::with_capacity(len / 2 / 4096);
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if k >= chunks {
                return (done, records);
            }
            done.push((k, scan_chunk(k, &mut records)));
        }
    };
    let (mine, theirs) = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mine = work();
        // A panic in the worker is a bug; its chunks are scanned again below.
        (mine, other.join().unwrap_or_default())
    });
    // Chunk k: which thread read it (0 or 1) and what it found.
    let mut parts: Vec<Option<(usize, Lines)>> = (0..chunks).map(|_| None).collect();
    for (w, done) in [(0, mine.0), (1, theirs.0)] {
        for (k, part) in done {
            parts[k] = Some((w, part));
        }
    }
    let total: usize = parts.iter().flatten().map(|(_, p)| p.entries).sum();
    records.reserve_exact(total);
    let mut from_thread = [mine.1.into_iter(), theirs.1.into_iter()];
    let mut out = Lines::default();
    for (k, part) in parts.into_iter().enumerate() {
        let start = records.len();
        let (n, off) = match part {
            Some((w, part)) => {
                let n = part.entries;
                let off = out.append(part);
                records.extend(from_thread[w].by_ref().take(n));
                (n, off)
            }
            None => {
                let part = scan_chunk(k, &mut records);
                let n = part.entries;
                (n, out.append(part))
            }
        };
        for (line_no, e) in records.iter_mut().skip(start).take(n) {
            *line_no += off;
            e.line_no += off;
        }
    }
    (out, records)
}

/// Scans the lines of `data[from..to]` (`to` is the input's end or just past a newline).
/// `at_start`: the run begins the file, so its first line may be omp's title slot.
/// The first `\n` of `b`. A long line is searched [`crate::json::LONG_STRING`] bytes at a
/// time, and what was searched is released ([`crate::json::find_in_windows`]): its parse
/// reads it next, a part at a time too, and a line of hundreds of megabytes is not resident
/// whole.
fn newline(b: &[u8]) -> Option<usize> {
    crate::json::find_in_windows(b, crate::json::LONG_STRING, 0, |from, part, _| {
        memchr::memchr(b'\n', part).map(|i| from + i)
    })
}

/// Whether `b` holds the needle of `finder`, searched as [`newline`] searches: a long line a
/// part at a time (each part read a needle's length into the next), released behind.
fn holds(finder: &memchr::memmem::Finder<'_>, b: &[u8]) -> bool {
    let over = finder.needle().len();
    crate::json::find_in_windows(b, crate::json::LONG_STRING, over, |_, part, _| {
        finder.find(part)
    })
    .is_some()
}

fn scan_lines(
    data: &[u8],
    from: usize,
    to: usize,
    at_start: bool,
    records: &mut Vec<(usize, Entry)>,
) -> Lines {
    let mut out = Lines::default();
    let first_record = records.len();
    let data_to = data.get(..to).unwrap_or(data);
    let blob = memchr::memmem::Finder::new(crate::blobref::BLOB_PREFIX.as_bytes());
    let mut scratch = CompactScratch::default();
    let mut line_no = 0;
    let mut pos = from;
    while pos < data_to.len() {
        let start = pos;
        line_no += 1;
        // A compact message line (nearly every line pi and omp write): read without searching
        // for its end first; the parse finds it (see `parse_message_line_compact`).
        if !(at_start && line_no == 1) && data_to.get(start) == Some(&b'{') {
            // The lines that may hold an omp blob reference (always a whole string value
            // starting with the prefix) are noted while they are validated.
            let mut note = crate::json::PrefixNote::new(crate::blobref::BLOB_PREFIX.as_bytes());
            if let Some((entry, len)) = parse_message_line_compact_with(
                &data_to[start..],
                start,
                line_no,
                &mut note,
                &mut scratch,
            ) {
                let end = start + len;
                let next = match data_to.get(end..end + 2) {
                    Some([b'\n', _]) => Some(end + 1),
                    Some(b"\r\n") => Some(end + 2),
                    None if data_to.get(end) == Some(&b'\n') => Some(end + 1),
                    None if end == data_to.len() => Some(end),
                    _ => None,
                };
                if let Some(next) = next {
                    if next == end + 2 {
                        out.crlf += 1;
                    }
                    if next == end {
                        out.missing_final_newline = true;
                    }
                    out.any_nonblank = true;
                    if note.seen {
                        out.blob_lines.push(start);
                    }
                    records.push((line_no, entry));
                    pos = next;
                    continue;
                }
            }
        }
        let (end, next) = match newline(&data_to[pos..]) {
            Some(i) => (pos + i, pos + i + 1),
            None => (data_to.len(), data_to.len()),
        };
        pos = next;
        let has_newline = next > end;
        let mut content_end = end;
        if has_newline && content_end > start && data[content_end - 1] == b'\r' {
            content_end -= 1;
            out.crlf += 1;
        }
        let line = &data[start..content_end];
        if is_blank(line) {
            if !line.is_empty() || has_newline {
                out.blank.push(line_no);
            }
            continue;
        }
        out.any_nonblank = true;
        // While the line is in cache: does it hold an omp blob reference (rare)?
        if holds(&blob, line) {
            out.blob_lines.push(start);
        }
        let lref = LineRef::Base {
            start,
            end: content_end,
        };
        // Message lines (nearly all the bytes) in one pass; everything else as before.
        if !(at_start && line_no == 1) {
            if let Some(entry) = parse_message_line(line, lref, line_no) {
                if !has_newline {
                    out.missing_final_newline = true;
                }
                records.push((line_no, entry));
                continue;
            }
        }
        match parse_fields(line) {
            Ok(fields) => {
                if !has_newline {
                    out.missing_final_newline = true;
                }
                if at_start
                    && line_no == 1
                    && out.title_slot.is_none()
                    && fields.str(line, "type").as_deref() == Some("title")
                {
                    out.title_slot = Some(TitleSlot {
                        fields,
                        line: lref,
                        physical_len: next - start,
                    });
                    continue;
                }
                records.push((line_no, Entry::from_fields(line, fields, lref, line_no)));
            }
            Err(e) => {
                let bad = BadLine {
                    line_no,
                    offset: start,
                    len: content_end - start,
                    error: e.to_string(),
                };
                // Torn: the last line, without newline, and not a complete JSON value. A
                // complete value that is no entry (`42`, `"s"`) is only malformed, and the
                // next entry written must start a line of its own.
                if !has_newline && matches!(e, LineError::Json(_)) {
                    out.complete_len = Some(start);
                    out.torn_tail = Some(bad);
                } else {
                    out.missing_final_newline |= !has_newline;
                    // JSON but not an object: still reported (`check` names it), and also
                    // an entry, as pi keeps a truthy one and omp any (a falsy one is
                    // dropped from a pi file by `parse_with`, once the dialect is known).
                    if e == LineError::NotObject {
                        if let Some(entry) = Entry::non_object(line, lref, line_no) {
                            records.push((line_no, entry));
                        }
                    }
                    out.malformed.push(bad);
                }
            }
        }
    }
    out.lines = line_no;
    out.entries = records.len() - first_record;
    out
}

impl SessionDoc {
    /// Entry `i`'s `message` as a typed value (see [`crate::typed`]): `T` is usually
    /// [`crate::typed::Message`], or any type of the caller's that serde can read it as.
    /// The raw bytes stay as they are; this is a view. (Feature `typed`.)
    #[cfg(feature = "typed")]
    pub fn message_as<T: serde::de::DeserializeOwned>(
        &self,
        i: usize,
    ) -> Result<T, crate::typed::TypedError> {
        let e = self
            .entries
            .get(i)
            .ok_or(crate::typed::TypedError::NoMessage)?;
        let line = self.line(&e.line);
        let (raw, _) = e
            .fields
            .get(line, "message")
            .ok_or(crate::typed::TypedError::NoMessage)?;
        Ok(serde_json::from_slice(raw)?)
    }

    /// Reads a session from its bytes. Returns [`NotASession`] when there is no header.
    pub fn parse(bytes: SharedBytes) -> Result<SessionDoc, NotASession> {
        Self::parse_with(bytes, None)
    }

    /// [`SessionDoc::parse`] of bytes whose pages are not all mapped in yet (a memory map made
    /// without `MAP_POPULATE`): `prefetch` maps in a byte range, and is called on the second
    /// parsing thread while the first one already reads (see `scan_lines_parallel`).
    pub fn parse_prefetched(
        bytes: SharedBytes,
        prefetch: Prefetch<'_>,
    ) -> Result<SessionDoc, NotASession> {
        Self::parse_with(bytes, Some(prefetch))
    }

    fn parse_with(
        bytes: SharedBytes,
        prefetch: Option<Prefetch<'_>>,
    ) -> Result<SessionDoc, NotASession> {
        let data: &[u8] = (*bytes).as_ref();
        let mut report = LoadReport::default();
        let mut pos = 0;
        if data.starts_with(b"\xEF\xBB\xBF") {
            report.bom = true;
            pos = 3;
        }
        let (
            Lines {
                title_slot,
                crlf,
                blank,
                malformed,
                torn_tail,
                missing_final_newline,
                complete_len,
                any_nonblank,
                blob_lines,
                ..
            },
            records,
        ) = scan_lines_parallel(data, pos, prefetch);
        report.crlf_lines = crlf;
        report.blank_lines = blank;
        report.malformed = malformed;
        report.torn_tail = torn_tail;
        report.missing_final_newline = missing_final_newline;
        let complete_len = complete_len.unwrap_or(data.len());
        let mut records = records;
        if !any_nonblank {
            return Err(NotASession::Empty);
        }
        let Some(first) = records.first() else {
            return Err(NotASession::NoJson);
        };
        let first_line = slice(data, &first.1.line);
        let is_header =
            first.1.etype == EntryType::Session && first.1.fields.str(first_line, "id").is_some();
        if !is_header {
            let found = match &first.1.etype {
                EntryType::Session => "a session line without a string id".to_string(),
                EntryType::Other(t) if t.is_empty() => {
                    "an object without a string type".to_string()
                }
                t => format!("a \"{}\" entry", t.name()),
            };
            return Err(NotASession::NoHeader {
                line_no: first.0,
                found,
            });
        }
        // Two things omp 18 reads as entries and pi 1.5 skips: the JSON lines `0`, `false`,
        // `""` (entries without id, as truthy ones are to both), and a further `type:
        // "session"` line (omp takes every line after the header; pi skips session lines). Which
        // rule holds is the file's dialect, which needs the header and the entries: known only
        // now, before a v1/v2 migration links the entries.
        let falsy = |e: &Entry| e.non_object && Entry::is_falsy_line(slice(data, &e.line));
        let mut dialect = Dialect::Pi;
        if records
            .iter()
            .skip(1)
            .any(|(_, e)| e.etype == EntryType::Session || falsy(e))
        {
            let session_id = first.1.fields.str(first_line, "id");
            let omp_mark = records
                .iter()
                .any(|(_, e)| is_omp_mark(slice(data, &e.line), e));
            dialect = dialect_of(title_slot.is_some(), session_id.as_deref(), omp_mark);
            if dialect == Dialect::Pi {
                records.retain(|(_, e)| !falsy(e));
            }
        }
        let first_line = slice(data, &records[0].1.line);
        let first = &records[0];
        report.version = migrate::header_version(first_line, &first.1.fields);
        let mut owned: Vec<Box<[u8]>> = Vec::new();
        let migration = if report.version < 3 {
            Some(migrate::migrate_records(
                data,
                &mut owned,
                &mut records,
                report.version,
            ))
        } else {
            None
        };
        let mut records = records.into_iter();
        let Some((header_line_no, header)) = records.next() else {
            return Err(NotASession::NoJson);
        };
        // Collected in place: the entries reuse the records' memory (no second copy of
        // some 2.5 MB per 100 MB of session in fresh pages).
        let entries: Vec<Entry> = records
            .filter_map(|(ln, e)| {
                if e.etype == EntryType::Session && dialect == Dialect::Pi {
                    report.extra_headers.push(ln);
                    None
                } else {
                    Some(e)
                }
            })
            .collect();
        let mut doc = SessionDoc {
            base: bytes.clone(),
            owned,
            title_slot,
            header: Header {
                line_no: header_line_no,
                line: header.line,
                fields: header.fields,
            },
            entries,
            report,
            migration,
            index: TreeIndex::default(),
            complete_len,
            blob_ref_lines: blob_lines,
        };
        doc.rebuild_index();
        Ok(doc)
    }

    /// The bytes of a line.
    pub fn line(&self, r: &LineRef) -> &[u8] {
        match *r {
            LineRef::Base { start, end } => &(*self.base).as_ref()[start..end],
            LineRef::Owned(i) => &self.owned[i],
        }
    }

    /// The bytes of entry `i`'s line.
    pub fn entry_line(&self, i: usize) -> &[u8] {
        self.line(&self.entries[i].line)
    }

    /// The header line's bytes.
    pub fn header_line(&self) -> &[u8] {
        self.line(&self.header.line)
    }

    /// The original input bytes.
    pub fn base_bytes(&self) -> &[u8] {
        (*self.base).as_ref()
    }

    /// The entries in file order (header-typed lines excluded).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// omp's title slot, when line 1 is one.
    pub fn title_slot(&self) -> Option<&TitleSlot> {
        self.title_slot.as_ref()
    }

    /// What the loader noticed (BOM, CRLF, blank, malformed and torn lines, version).
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// The in-memory migration, when the file is older than v3.
    pub fn migration(&self) -> Option<&Migration> {
        self.migration.as_ref()
    }

    /// The tree index: ids, labels, leaf.
    pub fn index(&self) -> &TreeIndex {
        &self.index
    }

    /// Length in bytes of the input up to and including the last complete line.
    pub fn complete_len(&self) -> usize {
        self.complete_len
    }

    /// Start offsets (in the input) of the non-blank lines that may hold an omp blob
    /// reference, in order (found during the load; see the field's description in the source).
    pub fn blob_ref_lines(&self) -> &[usize] {
        &self.blob_ref_lines
    }

    /// Moves the leaf to the entry with `id` (pi's `branch`, in memory); `None` when there is
    /// no such entry (the leaf is left where it was).
    pub fn branch_to(&mut self, id: &str) -> Option<usize> {
        let i = self.index.get(id)?;
        self.index.leaf = Some(i);
        Some(i)
    }

    /// Clears the leaf (pi's `resetLeaf`): the next entry starts a new root.
    pub fn reset_leaf(&mut self) {
        self.index.leaf = None;
    }

    /// Replaces the lines of the given entries (index, new line without its newline), for a
    /// view of the session that differs from the file (omp's blob references resolved), and
    /// rebuilds the tree index once. Nothing changes when any line is not an entry.
    ///
    /// # Errors
    /// The first new line that is not a valid entry (line numbers stay the entries' own).
    pub fn replace_entry_lines(&mut self, lines: Vec<(usize, Vec<u8>)>) -> Result<(), LineError> {
        let mut parsed = Vec::with_capacity(lines.len());
        for (i, bytes) in lines {
            let Some(e) = self.entries.get(i) else {
                continue;
            };
            let line_no = e.line_no;
            let entry = Entry::parse(&bytes, LineRef::Owned(usize::MAX), line_no)?;
            parsed.push((i, bytes, entry));
        }
        if parsed.is_empty() {
            return Ok(());
        }
        for (i, bytes, mut entry) in parsed {
            entry.line = self.store_line(bytes);
            self.entries[i] = entry;
        }
        self.rebuild_index();
        Ok(())
    }

    /// Gives the document omp's title slot from the slot's bytes (with its newline), as a
    /// title write placed it on line 1.
    ///
    /// # Errors
    /// When the slot (without its newline) is not a JSON object.
    pub fn set_title_slot(&mut self, slot: &[u8]) -> Result<(), LineError> {
        let body = slot.strip_suffix(b"\n").unwrap_or(slot);
        let fields = crate::entry::parse_fields(body)?;
        let line = self.store_line(body.to_vec());
        self.title_slot = Some(TitleSlot {
            fields,
            line,
            physical_len: slot.len(),
        });
        Ok(())
    }

    /// Stores an owned line and returns its reference.
    pub(crate) fn store_line(&mut self, bytes: Vec<u8>) -> LineRef {
        self.owned.push(bytes.into_boxed_slice());
        LineRef::Owned(self.owned.len() - 1)
    }

    /// Replaces the header line (a title or version change made in memory).
    pub fn set_header_line(&mut self, bytes: Vec<u8>) -> Result<(), LineError> {
        let fields = parse_fields(&bytes)?;
        let r = self.store_line(bytes);
        self.header.line = r;
        self.header.fields = fields;
        Ok(())
    }

    /// Rebuilds the tree index from the entries.
    pub fn rebuild_index(&mut self) {
        let mut index = TreeIndex::with_capacity(self.entries.len());
        for i in 0..self.entries.len() {
            index.insert(self, i);
        }
        self.index = index;
    }

    /// Parses `bytes` as a new entry line, appends it in memory and indexes it
    /// (the leaf moves to it). The caller has already written it to disk, if at all.
    /// A line that is JSON but not an object is an entry too when it is truthy, as pi keeps it
    /// ([`Entry::non_object`]); a falsy one (`0`, `false`, `""`) is refused, as pi skips it.
    pub fn push_line(&mut self, bytes: Vec<u8>) -> Result<usize, LineError> {
        let entry = match parse_fields(&bytes) {
            Ok(fields) => Entry::from_fields(&bytes, fields, LineRef::Owned(self.owned.len()), 0),
            Err(LineError::NotObject) if !Entry::is_falsy_line(&bytes) => {
                Entry::non_object(&bytes, LineRef::Owned(self.owned.len()), 0)
                    .ok_or(LineError::NotObject)?
            }
            Err(e) => return Err(e),
        };
        self.owned.push(bytes.into_boxed_slice());
        self.entries.push(entry);
        let i = self.entries.len() - 1;
        let mut index = std::mem::take(&mut self.index);
        index.insert(self, i);
        self.index = index;
        Ok(i)
    }

    /// The header's `id`.
    pub fn session_id(&self) -> Option<String> {
        self.header
            .fields
            .str(self.header_line(), "id")
            .map(|s| s.into_owned())
    }

    /// The session this one was forked from, as its header names it: `parentSession` (pi, omp),
    /// else pi_agent_rust's `branchedFrom` ([`crate::header::fork_link_key`]).
    pub fn fork_parent(&self) -> Option<String> {
        let line = self.header_line();
        crate::header::fork_link_key(line, &self.header.fields)
            .and_then(|k| self.header.fields.str(line, k))
            .map(|s| s.into_owned())
    }

    /// A string member of the header.
    pub fn header_str(&self, key: &str) -> Option<String> {
        self.header
            .fields
            .str(self.header_line(), key)
            .map(|s| s.into_owned())
    }

    /// The dialect: omp when the file has omp's title slot (omp 18 writes one into every
    /// file), or an omp 13 Snowflake session id (16 hex) **and** an entry only omp writes
    /// ([`is_omp_mark`]); pi otherwise. The id's shape alone decides nothing: pi 1.5.2 writes
    /// 16-hex ids itself (`pi --session-id`), and both pi 0.73 and omp 18 use UUIDv7 ids.
    pub fn dialect(&self) -> Dialect {
        dialect_of(
            self.title_slot.is_some(),
            self.session_id().as_deref(),
            self.index.omp_mark.is_some(),
        )
    }

    /// The session's name as its own tool reports it. pi (`getSessionName()`): the last
    /// `session_info` entry (any branch) decides, its `name` trimmed as JS `trim()` does, a
    /// blank or missing name clearing it. omp: the header's `title` after the title slot is
    /// folded in (the slot's title wins; an empty slot title removes the header's).
    pub fn session_name(&self) -> Option<String> {
        if self.dialect() == Dialect::Omp {
            if let Some(slot) = &self.title_slot {
                return slot
                    .fields
                    .str(self.line(&slot.line), "title")
                    .filter(|t| !t.is_empty())
                    .map(|t| t.into_owned());
            }
            return self.header_str("title").filter(|t| !t.is_empty());
        }
        let e = self
            .entries
            .iter()
            .rev()
            .find(|e| e.etype == EntryType::SessionInfo)?;
        let name = e.fields.str(self.line(&e.line), "name")?;
        let trimmed =
            name.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}');
        (!trimmed.is_empty()).then(|| trimmed.to_string())
    }
}

/// Whether a session id has omp 13's Snowflake shape (16 hex characters).
pub fn is_omp_session_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|c| c.is_ascii_hexdigit())
}

/// The one rule that tells omp files from pi files ([`SessionDoc::dialect`]; the index's
/// listing uses it too): `title_slot`, or an omp 13 session id with an omp-only entry.
pub fn dialect_of(title_slot: bool, session_id: Option<&str>, omp_mark: bool) -> Dialect {
    if title_slot || (omp_mark && session_id.is_some_and(is_omp_session_id)) {
        Dialect::Omp
    } else {
        Dialect::Pi
    }
}

/// Whether entry `e` (its line `line`) is something only omp writes and pi's API cannot: an
/// omp entry type (`ttsr_injection`, `session_init`, `mode_change`, `service_tier_change`,
/// `title_change`, `model_usage`, `credential_pin`, `reset_boundary`), omp's `model_change`
/// (`model: "provider/id"` instead of pi's `provider`/`modelId`; omp writes one when a session
/// starts), or a `custom_message` with omp's `attribution`. A message role is no mark (a pi
/// extension's `appendMessage` writes any role, `developer` included, which pi drops), nor a
/// `thinkingLevel` of `null` (pi's `appendThinkingLevelChange(null)` writes it too).
pub fn is_omp_mark(line: &[u8], e: &Entry) -> bool {
    match &e.etype {
        EntryType::TtsrInjection
        | EntryType::SessionInit
        | EntryType::ModeChange
        | EntryType::ServiceTierChange
        | EntryType::TitleChange
        | EntryType::ModelUsage
        | EntryType::CredentialPin
        | EntryType::ResetBoundary => true,
        EntryType::ModelChange => {
            e.fields.str(line, "model").is_some() && e.fields.get(line, "provider").is_none()
        }
        EntryType::CustomMessage => e.fields.get(line, "attribution").is_some(),
        _ => false,
    }
}

fn slice<'a>(data: &'a [u8], r: &LineRef) -> &'a [u8] {
    match *r {
        LineRef::Base { start, end } => &data[start..end],
        LineRef::Owned(_) => &[],
    }
}

impl SessionDoc {
    /// The file's bytes with every line a migration changed replaced by its new bytes, and
    /// every other byte (blank and malformed lines, line ends, a BOM) exactly as loaded.
    /// Bytes after the last complete line (a torn tail) are left out; callers save them first.
    pub fn rewritten_bytes(&self) -> Vec<u8> {
        let data = self.base_bytes();
        let mut changed: std::collections::HashMap<usize, &[u8]> = std::collections::HashMap::new();
        if let LineRef::Owned(_) = self.header.line {
            changed.insert(self.header.line_no, self.line(&self.header.line));
        }
        for e in &self.entries {
            if e.line_no > 0 {
                if let LineRef::Owned(_) = e.line {
                    changed.insert(e.line_no, self.line(&e.line));
                }
            }
        }
        let mut out = Vec::with_capacity(data.len() + changed.len() * 32);
        let start = if self.report.bom { 3 } else { 0 };
        out.extend_from_slice(&data[..start]);
        let mut line_no = 0;
        for (s, end, next) in physical_lines(&data[..self.complete_len], start) {
            line_no += 1;
            match changed.get(&line_no) {
                Some(new) => {
                    let mut content_end = end;
                    if next > end && content_end > s && data[content_end - 1] == b'\r' {
                        content_end -= 1;
                    }
                    out.extend_from_slice(new);
                    out.extend_from_slice(&data[content_end..next]);
                }
                None => out.extend_from_slice(&data[s..next]),
            }
        }
        out
    }

    /// Entries appended in memory (not loaded from the input), in order.
    pub fn appended_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.entries
            .iter()
            .filter(|e| e.line_no == 0)
            .map(|e| self.line(&e.line))
    }
}

#[cfg(test)]
mod blob_line_tests {
    use super::*;

    #[test]
    fn line_ends_found_by_the_compact_path_match_the_general_ones() {
        let m = |id: &str, parent: &str| {
            format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"x\"}}}}"
            )
        };
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}";
        let text = [
            format!("{header}\n"),
            format!("{}\r\n", m("a", "null")),    // 2: CRLF
            format!("{} \n", m("b", "\"a\"")),    // 3: trailing space
            "\n".to_string(),                     // 4: blank
            format!("{}\r\r\n", m("c", "\"b\"")), // 5: CR CR LF: the first CR is JSON whitespace
            format!("{}{}\n", m("d", "\"b\""), m("e", "\"d\"")), // 6: two objects: malformed
            format!("{}\n", m("f", "\"b\"")),     // 7
            m("g", "\"f\""),                      // 8: no final newline
        ]
        .concat();
        let doc = SessionDoc::parse(Arc::new(text.clone().into_bytes())).expect("session");
        let ids: Vec<_> = doc.entries.iter().map(|e| e.id.as_deref()).collect();
        assert_eq!(ids, [Some("a"), Some("b"), Some("c"), Some("f"), Some("g")]);
        let nos: Vec<_> = doc.entries.iter().map(|e| e.line_no).collect();
        assert_eq!(nos, [2, 3, 5, 7, 8]);
        assert_eq!(doc.report.crlf_lines, 2);
        assert_eq!(doc.report.blank_lines, [4]);
        let bad: Vec<_> = doc.report.malformed.iter().map(|b| b.line_no).collect();
        assert_eq!(bad, [6]);
        assert!(doc.report.missing_final_newline);
        assert_eq!(doc.entry_line(0), m("a", "null").as_bytes());
        assert_eq!(
            doc.entry_line(1),
            format!("{} ", m("b", "\"a\"")).as_bytes()
        );
        assert_eq!(
            doc.entry_line(2),
            format!("{}\r", m("c", "\"b\"")).as_bytes()
        );
        assert_eq!(doc.entry_line(4), m("g", "\"f\"").as_bytes());
    }

    /// What a scan found, comparable: every record's (line number, line, id), and the rest.
    fn summary((l, records): &(Lines, Vec<(usize, Entry)>)) -> String {
        assert_eq!(l.entries, records.len());
        let recs: Vec<_> = records
            .iter()
            .map(|(n, e)| (*n, e.line_no, e.line, e.id.clone(), e.fields.members.len()))
            .collect();
        format!(
            "{recs:?} slot={:?} crlf={} blank={:?} bad={:?} torn={:?} nofinal={} complete={:?} any={} lines={} blobs={:?}",
            l.title_slot.as_ref().map(|t| (t.line, t.physical_len)),
            l.crlf,
            l.blank,
            l.malformed.iter().map(|b| (b.line_no, b.offset, b.len)).collect::<Vec<_>>(),
            l.torn_tail.as_ref().map(|b| (b.line_no, b.offset, b.len)),
            l.missing_final_newline,
            l.complete_len,
            l.any_nonblank,
            l.lines,
            l.blob_lines,
        )
    }

    #[test]
    fn blob_refs_are_noted_where_a_string_value_starts_with_the_prefix() {
        let h = "0".repeat(64);
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
        let lines = [
            // A top-level value before the message, a nested value, an array item.
            format!("{{\"type\":\"message\",\"id\":\"a\",\"x\":\"blob:sha256:{h}\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}"),
            format!("{{\"type\":\"message\",\"id\":\"b\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"data\":\"blob:sha256:{h}\"}}]}}}}"),
            format!("{{\"type\":\"message\",\"id\":\"c\",\"message\":{{\"role\":\"user\",\"content\":[\"blob:sha256:{h}\"]}}}}"),
            // Not a value that starts with it: a key, the middle of a string, an escape.
            format!("{{\"type\":\"message\",\"id\":\"d\",\"message\":{{\"role\":\"user\",\"blob:sha256:{h}\":1,\"content\":\"see blob:sha256:{h}\",\"e\":\"\\u0062lob:sha256:{h}\"}}}}"),
            // The general path (not compact) searches the whole line.
            format!("{{\"type\": \"custom\", \"id\": \"e\", \"data\": \"blob:sha256:{h}\"}}"),
        ];
        let mut data = header.as_bytes().to_vec();
        let mut want = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            if k != 3 {
                want.push(data.len());
            }
            data.extend_from_slice(l.as_bytes());
            data.push(b'\n');
        }
        let doc = SessionDoc::parse(Arc::new(data)).expect("session");
        assert_eq!(doc.entries.len(), 5);
        assert_eq!(doc.blob_ref_lines, want);
    }

    #[test]
    fn the_chunked_two_thread_scan_equals_one_pass() {
        // Lines longer than a chunk, lines ending exactly on chunk boundaries, blank, CRLF and
        // malformed lines, omp's title slot first and a torn last line: the chunks joined in
        // order give what one pass over the whole input gives.
        let mut data = b"{\"type\":\"title\",\"title\":\"t\"}\n".to_vec();
        data.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n");
        let line = |i: usize, text: &str| {
            format!(
                "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}"
            )
        };
        let mut i = 0;
        while data.len() < 3 * CHUNK_BYTES + (CHUNK_BYTES >> 1) {
            // Bytes left to the next chunk boundary, after this line's JSON without text.
            let to_boundary = (CHUNK_BYTES - data.len() % CHUNK_BYTES)
                .checked_sub(line(i, "").len() + 1)
                .unwrap_or(CHUNK_BYTES);
            let text = match i % 97 {
                0 if i > 0 => "y".repeat(CHUNK_BYTES + 333),
                // The next line starts exactly at a boundary, or its newline sits on one.
                1 => "y".repeat(to_boundary),
                2 => "y".repeat(to_boundary + 1),
                3 => "y".repeat(to_boundary.saturating_sub(1)),
                k if k % 11 == 4 => format!("blob:sha256:{i:064x}"),
                _ => "y".repeat(200 + i * 37 % 50_000),
            };
            data.extend_from_slice(line(i, &text).as_bytes());
            data.extend_from_slice(match i % 13 {
                3 => b"\r\n".as_slice(),
                5 => b"\n\n".as_slice(),
                8 => b"\n{\"type\":\n".as_slice(),
                _ => b"\n".as_slice(),
            });
            i += 1;
        }
        data.extend_from_slice(b"{\"type\":\"message\",\"id\":\"torn");
        let mut records = Vec::new();
        let one = scan_lines(&data, 0, data.len(), true, &mut records);
        assert!(records.len() > 50, "{}", records.len());
        assert!(one.title_slot.is_some() && one.torn_tail.is_some());
        assert!(!one.malformed.is_empty() && !one.blank.is_empty() && one.crlf > 0);
        assert!(!one.blob_lines.is_empty());
        let one = (one, records);
        let want = summary(&one);
        assert_eq!(summary(&scan_lines_parallel(&data, 0, None)), want);
        let asked = std::sync::Mutex::new(Vec::new());
        let prefetch = |r: std::ops::Range<usize>| asked.lock().expect("lock").push(r);
        assert_eq!(
            summary(&scan_lines_parallel(&data, 0, Some(&prefetch))),
            want
        );
    }

    #[test]
    fn lines_holding_blob_refs_are_noted_on_both_halves() {
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
        let mut data = header.as_bytes().to_vec();
        let mut want = Vec::new();
        let mut parent = "null".to_string();
        // Enough lines for the two-thread load, with a reference now and then.
        let filler = "x".repeat(3000);
        for i in 0..2000 {
            let data_field = if i % 397 == 5 {
                format!("blob:sha256:{:064x}", i)
            } else {
                filler.clone()
            };
            if i % 397 == 5 {
                want.push(data.len());
            }
            let line = format!(
                "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"data\":\"{data_field}\",\"mimeType\":\"image/png\"}}]}}}}\n"
            );
            data.extend_from_slice(line.as_bytes());
            parent = format!("\"e{i}\"");
        }
        assert!(data.len() > PARALLEL_MIN_BYTES);
        let doc = SessionDoc::parse(Arc::new(data.clone())).expect("session");
        assert_eq!(doc.blob_ref_lines, want);
        assert_eq!(doc.entries.len(), 2000);

        // The prefetched load (split at two thirds, pages mapped in by the second thread)
        // reads the same entries, and asks for every byte to be mapped in.
        let asked = std::sync::Mutex::new(Vec::new());
        let len = data.len();
        let pre =
            SessionDoc::parse_prefetched(Arc::new(data), &|r| asked.lock().expect("lock").push(r))
                .expect("session");
        assert_eq!(pre.blob_ref_lines, want);
        assert_eq!(pre.entries.len(), doc.entries.len());
        for (a, b) in pre.entries.iter().zip(&doc.entries) {
            assert_eq!((a.line_no, a.line, &a.id), (b.line_no, b.line, &b.id));
        }
        let mut asked = asked.into_inner().expect("lock");
        asked.sort_by_key(|r| r.start);
        assert_eq!(asked.first().map(|r| r.start), Some(0));
        assert_eq!(asked.last().map(|r| r.end), Some(len));
        assert!(asked.windows(2).all(|w| w[0].end == w[1].start));
    }
}

#[cfg(test)]
mod dialect_tests {
    use super::*;

    fn doc(lines: &[&str]) -> SessionDoc {
        let text = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        SessionDoc::parse(Arc::new(text.into_bytes())).expect("session")
    }

    const HEX: &str = r#"{"type":"session","version":3,"id":"0123456789abcdef","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;

    #[test]
    fn a_hex_session_id_alone_is_pi() {
        // pi 1.5.2 writes 16-hex ids itself (`pi --session-id`).
        let user = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"system","content":"s","timestamp":1}}"#;
        assert_eq!(doc(&[HEX]).dialect(), Dialect::Pi);
        assert_eq!(doc(&[HEX, user]).dialect(), Dialect::Pi);
    }

    #[test]
    fn a_hex_session_id_with_what_only_omp_writes_is_omp() {
        for mark in [
            r#"{"type":"model_change","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","model":"anthropic/x"}"#,
            r#"{"type":"ttsr_injection","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","injectedRules":[]}"#,
            r#"{"type":"custom_message","customType":"c","content":"x","display":true,"attribution":"agent","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}"#,
        ] {
            assert_eq!(doc(&[HEX, mark]).dialect(), Dialect::Omp, "{mark}");
            // The same entry in a file with a UUID id is a pi file an extension wrote into.
            let uuid = HEX.replace("0123456789abcdef", "019a0000-0000-7000-8000-000000000000");
            assert_eq!(doc(&[&uuid, mark]).dialect(), Dialect::Pi, "{mark}");
        }
        let pi_model = r#"{"type":"model_change","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","provider":"anthropic","modelId":"x"}"#;
        assert_eq!(doc(&[HEX, pi_model]).dialect(), Dialect::Pi);
        // A role a pi extension can write through appendMessage is no mark (the fuzzer's
        // goldens/fuzz-pi case: pi drops the developer message).
        let developer = r#"{"type":"message","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"developer","content":"d","timestamp":1}}"#;
        assert_eq!(doc(&[HEX, developer]).dialect(), Dialect::Pi);
    }

    /// The JSON lines `0`, `false`, `""` are entries without id to omp 18 (its reader keeps
    /// every value; goldens/fuzz-omp, found by the fuzzer's omp oracle) and skipped by pi 1.5
    /// (goldens/pi15/exact-non-object-falsy); a truthy one is an entry to both, `null` to neither.
    #[test]
    fn falsy_json_lines_are_entries_in_omp_files_only() {
        let slot = crate::title::serialize_title_slot(None, None, "2025-01-01T00:00:00.000Z")
            .expect("slot");
        let slot = String::from_utf8(slot).expect("utf-8");
        let slot = slot.trim_end_matches('\n');
        let mark = r#"{"type":"reset_boundary","id":"b","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}"#;
        let uuid = HEX.replace("0123456789abcdef", "019a0000-0000-7000-8000-000000000000");
        let count = |d: &SessionDoc| d.entries().iter().filter(|e| e.non_object).count();
        for (lines, dialect, kept) in [
            (
                vec![&uuid as &str, "0", "false", "\"\"", "null", "42"],
                Dialect::Pi,
                1,
            ),
            (
                vec![slot, &uuid, "0", "false", "\"\"", "null", "42"],
                Dialect::Omp,
                4,
            ),
            (
                vec![HEX, mark, "0", "false", "\"\"", "null", "42"],
                Dialect::Omp,
                4,
            ),
            (
                vec![HEX, "0", "false", "\"\"", "null", "42"],
                Dialect::Pi,
                1,
            ),
        ] {
            let d = doc(&lines);
            assert_eq!(d.dialect(), dialect, "{lines:?}");
            assert_eq!(count(&d), kept, "{lines:?}");
            // Every one of them is reported, whether an entry or not.
            assert_eq!(d.report().malformed.len(), 5, "{lines:?}");
        }
    }

    /// A further `type: "session"` line is an entry to omp 18 (it takes every line after the
    /// header: goldens/fuzz-omp/fuzz-ec9d9bd54e, found by the fuzzer's omp oracle) and skipped
    /// by pi (`LoadReport::extra_headers`, which `check` notes).
    #[test]
    fn a_second_header_is_an_entry_in_omp_files_only() {
        let slot = crate::title::serialize_title_slot(None, None, "2025-01-01T00:00:00.000Z")
            .expect("slot");
        let slot = String::from_utf8(slot).expect("utf-8");
        let slot = slot.trim_end_matches('\n');
        let uuid = HEX.replace("0123456789abcdef", "019a0000-0000-7000-8000-000000000000");
        let child = r#"{"type":"custom","id":"c","parentId":"019a0000-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","customType":"x"}"#;
        let pi = doc(&[&uuid, child, &uuid]);
        assert_eq!(pi.report().extra_headers, vec![3]);
        assert_eq!(pi.entries().len(), 1);
        let omp = doc(&[slot, &uuid, child, &uuid]);
        assert!(omp.report().extra_headers.is_empty());
        assert_eq!(omp.entries().len(), 2);
        assert_eq!(omp.entries()[1].etype, EntryType::Session);
        // omp's tree: the header line is a root, and the parent of the entry naming its id.
        let leaf = omp.index().leaf.map(|i| omp.entries()[i].line_no);
        assert_eq!(leaf, Some(4));
    }
}
