//! `arbor check`: what is wrong with a session file, and the repairs that lose no byte.
//!
//! Problems found: a file that is not a session (no header), a title slot omp would refuse or
//! could not update in place, a byte order mark, malformed lines (with line numbers), a torn
//! last line, a last line without newline (the next append of pi or omp would be glued to it),
//! duplicate ids, parents that do not exist, `parentId` cycles, compactions whose kept entry is
//! missing or off the compaction's path, and blob references that are malformed, missing or
//! corrupt. Notes (not problems): CRLF line ends, blank lines, stray header lines (pi and omp
//! skip them), an old format version (`arbor migrate` upgrades it).
//!
//! [`repair`] fixes what can be fixed without losing a byte, under the writer lock: every
//! removed byte goes first to a quarantine sidecar `<session>.quarantine-<time>` (fsynced), then
//! the session is replaced atomically. Repaired: the BOM, malformed lines, the torn tail,
//! byte-identical duplicate entries, the missing final newline, an invalid or wrongly sized
//! title slot (replaced by a valid 256-byte slot carrying the same title), and `parentId`
//! cycles (pi hangs on them): the one link of a cycle that points forward in the file, which
//! no append can have written, is cut (`parentId: null`; the original line is quarantined).
//! Other tree damage (missing parents, conflicting duplicates, compactions off path) and
//! blob damage are reported and left as they are: fixing them needs a decision only a person
//! can make.
mod repair;
pub use repair::{repair, repaired_bytes, RepairOutcome};

use crate::blobs::{blob_dir_for_session, BlobError, BlobStore};
use crate::error::{IoContext, StoreError};
use arbor_core::blobref::parse_blob_ref;
use arbor_core::doc::{Dialect, SessionDoc};
use arbor_core::entry::EntryType;
use arbor_core::json::{JsValue, JsonObject};
use arbor_core::title::{parse_title_slot, SESSION_TITLE_SLOT_BYTES};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One thing `check` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable machine name: `not_a_session`, `title_slot_invalid`, `title_slot_size`, `bom`,
    /// `malformed_line`, `torn_tail`, `missing_final_newline`, `duplicate_id`,
    /// `missing_parent`, `cycle`, `compaction_kept_missing`, `compaction_kept_off_path`,
    /// `blob_ref_malformed`, `blob_missing`, `blob_corrupt`, `message_null`, `message_not_object`,
    /// `leaf_id_null`, `id_not_string`, `parent_id_falsy` (ids pi reads unexpectedly),
    /// `merge_leftover` (an earlier rewrite's old file `<session>.arbor-merge` is still beside
    /// the session: lines pi wrote there may be missing from it), `unreadable` (the path could not
    /// be checked at all: missing, not a regular file, no permission); notes: `crlf`, `blank_lines`,
    /// `extra_header`, `old_version`, `not_read_back` (an entry pi or omp keeps but does not
    /// read as meant: an unknown type or role, no timestamp, content of the wrong kind).
    pub kind: &'static str,
    /// 1-based physical line number, when the finding is about one line.
    pub line: Option<usize>,
    /// The entry id concerned.
    pub entry_id: Option<String>,
    /// Human-readable description.
    pub message: String,
    /// A problem (`false`: a note that needs no action).
    pub problem: bool,
    /// `check --repair` fixes it.
    pub repairable: bool,
}

impl Finding {
    fn problem(
        kind: &'static str,
        line: Option<usize>,
        entry_id: Option<&str>,
        message: String,
        repairable: bool,
    ) -> Finding {
        Finding {
            kind,
            line,
            entry_id: entry_id.map(str::to_string),
            message,
            problem: true,
            repairable,
        }
    }
    fn note(kind: &'static str, line: Option<usize>, message: String) -> Finding {
        Finding {
            kind,
            line,
            entry_id: None,
            message,
            problem: false,
            repairable: false,
        }
    }
}

/// The verdict on one file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckReport {
    /// The file.
    pub path: PathBuf,
    /// Number of entries (header excluded; `0` for a file that is not a session).
    pub entries: usize,
    /// The format version (`None` for a file that is not a session).
    pub version: Option<u32>,
    /// The dialect (`None` for a file that is not a session).
    pub dialect: Option<Dialect>,
    /// What was found, problems first in file order.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// The report for a path that could not be checked at all (missing, a directory, a
    /// device, unreadable): one problem of kind `unreadable` with `message`.
    pub fn unreadable(path: &Path, message: String) -> CheckReport {
        CheckReport {
            path: path.to_path_buf(),
            entries: 0,
            version: None,
            dialect: None,
            findings: vec![Finding::problem("unreadable", None, None, message, false)],
        }
    }

    /// Number of problems.
    pub fn problems(&self) -> usize {
        self.findings.iter().filter(|f| f.problem).count()
    }
    /// Number of problems `--repair` would fix.
    pub fn repairable(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.problem && f.repairable)
            .count()
    }

    /// The report as one JSON object: `{"path","ok","entries","version","dialect","problems",
    /// "findings":[{"kind","problem","repairable","line"?,"entryId"?,"message"}]}`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_json_with(out, |_| {});
    }

    /// [`CheckReport::write_json`] with more members written by `extra` at the end (a
    /// repair's outcome).
    pub fn write_json_with(&self, out: &mut Vec<u8>, extra: impl FnOnce(&mut JsonObject<'_>)) {
        let mut o = JsonObject::new(out);
        o.str("path", &self.path.to_string_lossy())
            .bool("ok", self.problems() == 0)
            .uint("entries", self.entries as u64);
        match self.version {
            Some(v) => o.uint("version", u64::from(v)),
            None => o.raw("version", b"null"),
        };
        o.opt_str(
            "dialect",
            self.dialect.map(|d| match d {
                Dialect::Pi => "pi",
                Dialect::Omp => "omp",
            }),
        )
        .uint("problems", self.problems() as u64)
        .array("findings", |a| {
            for f in &self.findings {
                a.object(|j| {
                    j.str("kind", f.kind)
                        .bool("problem", f.problem)
                        .bool("repairable", f.repairable);
                    if let Some(l) = f.line {
                        j.uint("line", l as u64);
                    }
                    if let Some(id) = &f.entry_id {
                        j.str("entryId", id);
                    }
                    j.str("message", &f.message);
                });
            }
        });
        extra(&mut o);
        o.finish();
    }
}

/// How to check: `CheckOptions::default()` and the `with_*` setters (the struct may gain
/// fields, so it is not built with a literal outside this crate).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CheckOptions {
    /// Blob directory (default: [`blob_dir_for_session`] with `agent_dir`).
    pub blob_dir: Option<PathBuf>,
    /// Agent directory override (used to find the blob directory).
    pub agent_dir: Option<PathBuf>,
    /// Skip reading blobs.
    pub skip_blobs: bool,
}

impl CheckOptions {
    /// With [`CheckOptions::blob_dir`].
    pub fn with_blob_dir(mut self, blob_dir: Option<PathBuf>) -> Self {
        self.blob_dir = blob_dir;
        self
    }

    /// With [`CheckOptions::agent_dir`].
    pub fn with_agent_dir(mut self, agent_dir: Option<PathBuf>) -> Self {
        self.agent_dir = agent_dir;
        self
    }

    /// With [`CheckOptions::skip_blobs`].
    pub fn with_skip_blobs(mut self, skip_blobs: bool) -> Self {
        self.skip_blobs = skip_blobs;
        self
    }

    fn store_for(&self, path: &Path) -> BlobStore {
        BlobStore::new(match &self.blob_dir {
            Some(d) => d.clone(),
            None => blob_dir_for_session(path, self.agent_dir.as_deref()),
        })
    }
}

/// Checks one file.
pub fn check(path: &Path, opts: &CheckOptions) -> Result<CheckReport, StoreError> {
    let bytes = crate::safe_fs::read_regular(path).at(path)?;
    let mut report = check_bytes(path, bytes, opts);
    report.findings.extend(leftover_finding(path));
    Ok(report)
}

/// The `merge_leftover` finding when an earlier rewrite of session `path` left its old file
/// as `<session>.arbor-merge` (see `FileWriter::rewrite_checked`): a rewrite killed before it
/// finished, or one whose old file pi still held open. `--repair` (and the next open for
/// writing, or sync) settles it.
fn leftover_finding(path: &Path) -> Option<Finding> {
    let side = crate::backend::sync_support::merge_sidecar_path(path);
    std::fs::symlink_metadata(&side).ok().map(|m| {
        Finding::problem(
            "merge_leftover",
            None,
            None,
            format!(
                "{} ({} bytes) is the old file of an earlier rewrite of this session; lines \
                 pi wrote there after the rewrite may be missing from the session until it is \
                 settled (check --repair, the next open for writing, or arbor sync)",
                side.display(),
                m.len()
            ),
            true,
        )
    })
}

fn check_bytes(path: &Path, bytes: Vec<u8>, opts: &CheckOptions) -> CheckReport {
    let doc = match SessionDoc::parse(Arc::new(bytes)) {
        Ok(d) => d,
        Err(reason) => {
            return CheckReport {
                path: path.to_path_buf(),
                entries: 0,
                version: None,
                dialect: None,
                findings: vec![Finding::problem(
                    "not_a_session",
                    None,
                    None,
                    format!("not a session file: {reason}; arbor leaves such a file as it is"),
                    false,
                )],
            };
        }
    };
    let store = (!opts.skip_blobs).then(|| opts.store_for(path));
    CheckReport {
        path: path.to_path_buf(),
        entries: doc.entries().len(),
        version: Some(doc.report().version),
        dialect: Some(doc.dialect()),
        findings: check_doc(&doc, store.as_ref()),
    }
}

/// The findings for a loaded document (blobs are checked when a store is given).
pub fn check_doc(doc: &SessionDoc, blobs: Option<&BlobStore>) -> Vec<Finding> {
    let mut f = Vec::new();
    let r = &doc.report();
    if let Some(slot) = &doc.title_slot() {
        let line = doc.line(&slot.line);
        match parse_title_slot(line) {
            None => f.push(Finding::problem(
                "title_slot_invalid",
                Some(1),
                None,
                "line 1 is a title slot omp does not accept (it would refuse to open the file)".into(),
                true,
            )),
            Some(_) if slot.physical_len != SESSION_TITLE_SLOT_BYTES || r.bom => f.push(Finding::problem(
                "title_slot_size",
                Some(1),
                None,
                format!(
                    "the title slot is {} bytes, not {SESSION_TITLE_SLOT_BYTES}{}: omp cannot rename the session in place",
                    slot.physical_len,
                    if r.bom { " at offset 0 (a BOM precedes it)" } else { "" }
                ),
                true,
            )),
            Some(_) => {}
        }
    }
    if r.bom {
        f.push(Finding::problem(
            "bom",
            Some(1),
            None,
            "the file starts with a UTF-8 byte order mark (pi 1.5 refuses to open it: \"not a valid pi session\"; 0.73 read it)".into(),
            true,
        ));
    }
    for b in &r.malformed {
        f.push(Finding::problem(
            "malformed_line",
            Some(b.line_no),
            None,
            format!(
                "line {} ({} bytes) is not a JSON object: {}",
                b.line_no, b.len, b.error
            ),
            true,
        ));
    }
    if let Some(t) = &r.torn_tail {
        f.push(Finding::problem(
            "torn_tail",
            Some(t.line_no),
            None,
            format!(
                "the last line ({} bytes) is incomplete, the remains of an interrupted write",
                t.len
            ),
            true,
        ));
    }
    if r.missing_final_newline {
        f.push(Finding::problem(
            "missing_final_newline",
            None,
            None,
            "the last line has no newline: pi and omp would glue their next entry onto it".into(),
            true,
        ));
    }
    // Duplicate ids.
    // (Keyed as pi keys them: ids that differ only in a lone surrogate are different ids.)
    let mut first_by_id: HashMap<&arbor_core::entry::IdKey, usize> = HashMap::new();
    for (i, e) in doc.entries().iter().enumerate() {
        let Some(id) = e.id.as_deref() else { continue };
        match first_by_id.get(&e.key) {
            None => {
                first_by_id.insert(&e.key, i);
            }
            Some(&k) => {
                let same = doc.entry_line(k) == doc.entry_line(i);
                f.push(Finding::problem(
                    "duplicate_id",
                    Some(e.line_no),
                    Some(id),
                    format!(
                        "id {id} on line {} was already used on line {}{}",
                        e.line_no,
                        doc.entries()[k].line_no,
                        if same {
                            " (an identical copy)"
                        } else {
                            " by a different entry"
                        }
                    ),
                    same,
                ));
            }
        }
    }
    // Message entries pi or omp cannot read (`"message": null`: pi's buildSessionContext and
    // omp's open throw; a string or number: omp's convertToLlm throws). Only a person can say
    // what the message should have been, so it is reported, not repaired.
    for (i, e) in doc.entries().iter().enumerate() {
        if let Some(u) = arbor_core::context::unreadable_message(doc, i) {
            let code = if u.kind == arbor_core::json::ValueKind::Null {
                "message_null"
            } else {
                "message_not_object"
            };
            f.push(Finding::problem(
                code,
                Some(e.line_no),
                e.id.as_deref(),
                format!(
                    "entry {} has \"message\": {}; {}",
                    e.id.as_deref().unwrap_or("(no id)"),
                    u.what(),
                    u.peer
                ),
                false,
            ));
        }
    }
    f.extend(odd_ids(doc));
    // Parents that do not exist; cycles.
    for e in doc.entries() {
        if let Some(p) = e.parent_id.as_deref() {
            if e.parent_key.truthy() && doc.index().get_key(&e.parent_key).is_none() {
                f.push(Finding::problem(
                    "missing_parent",
                    Some(e.line_no),
                    e.id.as_deref(),
                    format!(
                        "parent {p} of entry {} does not exist",
                        e.id.as_deref().unwrap_or("(no id)")
                    ),
                    false,
                ));
            }
        }
    }
    f.extend(cycles(doc));
    // Compactions whose kept entry is not on their path.
    for (i, e) in doc.entries().iter().enumerate() {
        if e.etype != EntryType::Compaction {
            continue;
        }
        let line = doc.entry_line(i);
        let Some(kept) = e.fields.str(line, "firstKeptEntryId") else {
            continue;
        };
        let kept_key = arbor_core::entry::IdKey::from_raw(e.fields.get(line, "firstKeptEntryId"));
        match doc.index().get_key(&kept_key) {
            None => f.push(Finding::problem(
                "compaction_kept_missing",
                Some(e.line_no),
                e.id.as_deref(),
                format!(
                    "compaction {} keeps entry {kept}, which does not exist",
                    e.id.as_deref().unwrap_or("?")
                ),
                false,
            )),
            Some(k) => {
                if !doc.index().path(doc, i).entries.contains(&k) {
                    f.push(Finding::problem(
                        "compaction_kept_off_path",
                        Some(e.line_no),
                        e.id.as_deref(),
                        format!(
                            "compaction {} keeps entry {kept}, which is not on its path: the kept messages are lost from the context",
                            e.id.as_deref().unwrap_or("?")
                        ),
                        false,
                    ));
                }
            }
        }
    }
    if let Some(store) = blobs {
        f.extend(check_blobs(doc, store));
    }
    // Notes.
    if r.crlf_lines > 0 {
        f.push(Finding::note(
            "crlf",
            None,
            format!("{} lines end in CRLF (readers accept them)", r.crlf_lines),
        ));
    }
    if !r.blank_lines.is_empty() {
        f.push(Finding::note(
            "blank_lines",
            r.blank_lines.first().copied(),
            format!("{} blank lines (skipped by readers)", r.blank_lines.len()),
        ));
    }
    for &l in &r.extra_headers {
        f.push(Finding::note(
            "extra_header",
            Some(l),
            format!("line {l} is a second session header (pi skips it)"),
        ));
    }
    for i in 0..doc.entries().len() {
        if let Some(why) = crate::readable::unreadable_entry(doc, i) {
            let e = &doc.entries()[i];
            let mut n = Finding::note("not_read_back", Some(e.line_no), why);
            n.entry_id = e.id.as_deref().map(str::to_string);
            f.push(n);
        }
    }
    if r.version < 3 {
        f.push(Finding::note(
            "old_version",
            None,
            format!("format v{} (`arbor migrate` upgrades it to v3)", r.version),
        ));
    }
    f
}

/// The `parentId` cycles of `doc`, each as its member entry indices in walk order.
pub fn find_cycles(doc: &SessionDoc) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut done: HashSet<usize> = HashSet::new();
    for start in 0..doc.entries().len() {
        if done.contains(&start) {
            continue;
        }
        let mut order: Vec<usize> = Vec::new();
        let mut pos: HashMap<usize, usize> = HashMap::new();
        let mut cur = Some(start);
        while let Some(i) = cur {
            if done.contains(&i) {
                break;
            }
            if let Some(&p) = pos.get(&i) {
                out.push(order[p..].to_vec());
                break;
            }
            pos.insert(i, order.len());
            order.push(i);
            let e = &doc.entries()[i];
            cur = match e.parent_id.as_deref() {
                // The entry pi's index holds for this id (the last one with it).
                Some(p) => doc.index().get(p),
                None => None,
            };
        }
        done.extend(order);
    }
    out
}

/// The cycle member whose `parentId` is cut by a repair: the first (in file order) whose parent
/// does not come before it in the file. Appends only ever name earlier entries as parents, so
/// that is the link that cannot be genuine.
fn cycle_cut(doc: &SessionDoc, members: &[usize]) -> Option<usize> {
    let mut sorted = members.to_vec();
    sorted.sort_unstable();
    sorted.into_iter().find(|&m| {
        let p = doc.entries()[m]
            .parent_id
            .as_deref()
            .and_then(|p| doc.index().get(p));
        p.is_some_and(|p| p >= m)
            && matches!(
                doc.entries()[m].line,
                arbor_core::entry::LineRef::Base { .. }
            )
            && doc.entries()[m].line_no > 0
    })
}

/// Ids pi reads in a way a user would not expect (issue 22): arbor answers as pi does, and
/// says why here. The last entry's `"id": null` makes pi's leaf `null` (the context at open is
/// empty); a `parentId` of `""` is no parent in pi's context walk; an id that is not a string
/// links only to a `parentId` of the same JSON value (`5` is not `"5"`).
fn odd_ids(doc: &SessionDoc) -> Vec<Finding> {
    use arbor_core::entry::IdKey;
    let mut f = Vec::new();
    let entries = doc.entries();
    for (i, e) in entries.iter().enumerate() {
        if e.non_object {
            continue; // reported as a line that is not a JSON object
        }
        let line = doc.entry_line(i);
        let raw = |k: &str| {
            e.fields
                .get(line, k)
                .map(|(r, _)| String::from_utf8_lossy(r).into_owned())
        };
        match &e.key {
            IdKey::Str(_) => {}
            IdKey::Null if i + 1 == entries.len() => f.push(Finding::problem(
                "leaf_id_null",
                Some(e.line_no),
                None,
                format!(
                    "the last entry (line {}) has \"id\": null: pi's leaf is null and the context it builds on open is empty",
                    e.line_no
                ),
                false,
            )),
            _ => f.push(Finding::problem(
                "id_not_string",
                Some(e.line_no),
                None,
                format!(
                    "entry on line {} has id {}: pi links it only to a parentId of that same value",
                    e.line_no,
                    raw("id").unwrap_or_else(|| "(missing)".into())
                ),
                false,
            )),
        }
        if e.parent_key != IdKey::Null
            && !e.parent_key.truthy()
            && e.fields.get(line, "parentId").is_some()
        {
            f.push(Finding::problem(
                "parent_id_falsy",
                Some(e.line_no),
                e.id.as_deref(),
                format!(
                    "entry on line {} has parentId {}: pi's context walk stops there (no parent)",
                    e.line_no,
                    raw("parentId").unwrap_or_default()
                ),
                false,
            ));
        }
    }
    f
}

fn cycles(doc: &SessionDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for members in find_cycles(doc) {
        let ids: Vec<&str> = members
            .iter()
            .map(|&m| doc.entries()[m].id.as_deref().unwrap_or("?"))
            .collect();
        let first = members.iter().copied().min().unwrap_or(0);
        let cut = cycle_cut(doc, &members);
        let at = cut.unwrap_or(first);
        out.push(Finding::problem(
            "cycle",
            Some(doc.entries()[at].line_no),
            doc.entries()[at].id.as_deref(),
            format!(
                "parentId cycle through {} (pi hangs building the context of these entries){}",
                ids.join(" → "),
                match cut {
                    Some(c) => format!(
                        "; a repair makes {} a root (parentId null)",
                        doc.entries()[c].id.as_deref().unwrap_or("?")
                    ),
                    None => String::new(),
                }
            ),
            cut.is_some(),
        ));
    }
    out
}

fn collect_refs(v: &JsValue, out: &mut Vec<Vec<u8>>) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            JsValue::String(s) if s.0.starts_with(arbor_core::blobref::BLOB_PREFIX.as_bytes()) => {
                out.push(s.0.clone())
            }
            JsValue::Array(a) => stack.extend(a.iter()),
            JsValue::Object(m) => stack.extend(m.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn check_blobs(doc: &SessionDoc, store: &BlobStore) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut verified: HashMap<String, Result<(), BlobError>> = HashMap::new();
    for (i, e) in doc.entries().iter().enumerate() {
        let line = doc.entry_line(i);
        if !crate::blobs::contains(line, arbor_core::blobref::BLOB_PREFIX.as_bytes()) {
            continue;
        }
        let Ok(v) = JsValue::parse(line) else {
            continue;
        };
        let mut refs = Vec::new();
        collect_refs(&v, &mut refs);
        for r in refs {
            match parse_blob_ref(&r) {
                Ok(None) => {}
                Err(err) => out.push(Finding::problem(
                    "blob_ref_malformed",
                    Some(e.line_no),
                    e.id.as_deref(),
                    err.to_string(),
                    false,
                )),
                Ok(Some(hash)) => {
                    let res = verified
                        .entry(hash.to_string())
                        .or_insert_with(|| store.verify(hash))
                        .clone();
                    if let Err(err) = res {
                        let kind = match err {
                            BlobError::Missing { .. } => "blob_missing",
                            BlobError::Corrupt { .. } => "blob_corrupt",
                            _ => "blob_unreadable",
                        };
                        out.push(Finding::problem(
                            kind,
                            Some(e.line_no),
                            e.id.as_deref(),
                            err.to_string(),
                            false,
                        ));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> SessionDoc {
        SessionDoc::parse(Arc::new(s.as_bytes().to_vec())).expect("session")
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    #[test]
    fn finds_tree_damage() {
        let text = format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"b","parentId":"zz","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"c","parentId":"d","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"compaction","id":"e","parentId":"a","timestamp":"2025-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"b","tokensBefore":1}"#,
        );
        let kinds: Vec<&str> = check_doc(&doc(&text), None)
            .iter()
            .map(|f| f.kind)
            .collect();
        assert!(kinds.contains(&"missing_parent"), "{kinds:?}");
        assert!(kinds.contains(&"cycle"), "{kinds:?}");
        assert!(kinds.contains(&"compaction_kept_off_path"), "{kinds:?}");
        assert_eq!(kinds.iter().filter(|k| **k == "cycle").count(), 1);
    }

    /// Issue 22: what pi reads unexpectedly is answered as pi does (an empty context at open,
    /// no parent) and reported here so a user learns why; ids that differ only in a lone
    /// surrogate are not duplicates.
    #[test]
    fn reports_ids_pi_reads_unexpectedly() {
        let m = |id: &str, parent: &str| {
            format!(
                r#"{{"type":"message","id":{id},"parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"x"}}}}"#
            )
        };
        let text = format!(
            "{H}\n{}\n{}\n{}\n{}\n{}\n",
            m(r#""s\ud800""#, "null"),
            m(r#""s\udc00""#, "null"),
            m("5", r#""""#),
            m(r#""k""#, "5"),
            m("null", r#""k""#),
        );
        let found = check_doc(&doc(&text), None);
        let kinds: Vec<&str> = found.iter().map(|f| f.kind).collect();
        assert!(!kinds.contains(&"duplicate_id"), "{kinds:?}");
        assert!(!kinds.contains(&"missing_parent"), "{kinds:?}");
        assert!(kinds.contains(&"leaf_id_null"), "{kinds:?}");
        assert!(kinds.contains(&"id_not_string"), "{kinds:?}");
        assert!(kinds.contains(&"parent_id_falsy"), "{kinds:?}");
    }

    #[test]
    fn repair_keeps_every_byte() {
        let m = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}"#;
        let text = format!("\u{feff}{H}\nnot json\n{m}\n{m}\n{{\"type\":\"mess");
        let d = doc(&text);
        let (kept, removed) = repaired_bytes(&d).expect("something to repair");
        assert_eq!(
            String::from_utf8(kept.clone()).expect("utf8"),
            format!("{H}\n{m}\n")
        );
        assert_eq!(kept.len() + removed.len(), text.len());
        let again = doc(std::str::from_utf8(&kept).expect("utf8"));
        assert!(repaired_bytes(&again).is_none());
        assert_eq!(
            check_doc(&again, None).iter().filter(|f| f.problem).count(),
            0
        );
    }

    #[test]
    fn bad_title_slot_is_replaced() {
        let text = format!("{{\"type\":\"title\",\"v\":1,\"title\":\"T\",\"updatedAt\":\"2025-01-01T00:00:00.000Z\",\"pad\":\"\"}}\n{H}\n");
        let d = doc(&text);
        assert!(check_doc(&d, None)
            .iter()
            .any(|f| f.kind == "title_slot_size"));
        let (kept, removed) = repaired_bytes(&d).expect("repair");
        assert_eq!(
            &kept[SESSION_TITLE_SLOT_BYTES..],
            format!("{H}\n").as_bytes()
        );
        assert!(removed.starts_with(b"{\"type\":\"title\""));
        let fixed = doc(std::str::from_utf8(&kept).expect("utf8"));
        assert_eq!(fixed.session_name().as_deref(), Some("T"));
        assert!(check_doc(&fixed, None).iter().all(|f| !f.problem));
    }
}
