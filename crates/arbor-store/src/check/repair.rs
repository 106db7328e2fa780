//! `arbor check --repair`: the repairs that lose no byte (see the parent module for what is
//! repaired and what is only reported).
use super::{check_bytes, cycle_cut, find_cycles, CheckOptions, CheckReport};
use crate::backend::files::FileWriter;
use crate::error::{IoContext, StoreError};
use crate::file::Durability;
use arbor_core::doc::SessionDoc;
use arbor_core::json::JsValue;
use arbor_core::title::{parse_title_slot, serialize_title_slot, SESSION_TITLE_SLOT_BYTES};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a repair did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RepairOutcome {
    /// The verdict before.
    pub before: CheckReport,
    /// The verdict after (the same as before when nothing was repairable).
    pub after: CheckReport,
    /// The quarantine sidecar holding every removed byte, when something was removed.
    pub quarantine: Option<PathBuf>,
    /// Whether the session file was rewritten.
    pub rewritten: bool,
}

/// Physical lines of `data` from `from`: (start, end with line end).
fn lines(data: &[u8], from: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = from;
    while pos < data.len() {
        let next = match data[pos..].iter().position(|&b| b == b'\n') {
            Some(i) => pos + i + 1,
            None => data.len(),
        };
        out.push((pos, next));
        pos = next;
    }
    out
}

/// The repaired bytes of `doc` and the bytes removed from it (`None`: nothing to repair).
/// Repeated until nothing is left to repair (a cut cycle link can make two copies of an
/// entry identical, and the second pass removes the copy).
pub fn repaired_bytes(doc: &SessionDoc) -> Option<(Vec<u8>, Vec<u8>)> {
    let (mut kept, mut removed) = repaired_once(doc)?;
    for _ in 0..4 {
        let Ok(next) = SessionDoc::parse(Arc::new(kept.clone())) else {
            break;
        };
        match repaired_once(&next) {
            Some((k, r)) => {
                kept = k;
                removed.extend_from_slice(&r);
            }
            None => break,
        }
    }
    Some((kept, removed))
}

fn repaired_once(doc: &SessionDoc) -> Option<(Vec<u8>, Vec<u8>)> {
    let data = doc.base_bytes();
    let r = &doc.report();
    let mut drop_lines: HashSet<usize> = r.malformed.iter().map(|b| b.line_no).collect();
    // Byte-identical duplicates: keep the last copy, the one pi's `byId` (last wins) reads
    // when no different entry with the id comes later; removing the last copy instead would
    // hand the id to a different entry between the copies and change the session.
    let mut later: HashMap<(&str, &[u8]), usize> = HashMap::new();
    for (i, e) in doc.entries().iter().enumerate().rev() {
        if let Some(id) = e.id.as_deref() {
            match later.get(&(id, doc.entry_line(i))) {
                Some(_) if e.line_no > 0 => {
                    drop_lines.insert(e.line_no);
                }
                Some(_) => {}
                None => {
                    later.insert((id, doc.entry_line(i)), i);
                }
            }
        }
    }
    // The title slot: replace one omp refuses or cannot update in place.
    let mut new_slot: Option<Vec<u8>> = None;
    if let Some(slot) = &doc.title_slot() {
        let line = doc.line(&slot.line);
        let parsed = parse_title_slot(line);
        let bad = match &parsed {
            None => true,
            Some(_) => slot.physical_len != SESSION_TITLE_SLOT_BYTES || r.bom,
        };
        if bad {
            let (title, source, updated) = match parsed {
                Some(p) => (Some(p.title), p.source, p.updated_at),
                None => {
                    let v = JsValue::parse(line).ok();
                    let title = v
                        .as_ref()
                        .and_then(|v| v.get("title"))
                        .and_then(|t| t.as_str_lossy())
                        .map(|t| t.into_owned());
                    let ts = doc
                        .header_str("timestamp")
                        .unwrap_or_else(crate::ids::now_iso);
                    (title, None, ts)
                }
            };
            let updated = if updated.len() > 64 {
                crate::ids::now_iso()
            } else {
                updated
            };
            new_slot = serialize_title_slot(title.as_deref(), source, &updated).ok();
            if new_slot.is_some() {
                drop_lines.insert(1);
            }
        }
    }
    // parentId cycles: the impossible link is cut (the original line goes to quarantine).
    let mut replace: HashMap<usize, Vec<u8>> = HashMap::new();
    for members in find_cycles(doc) {
        let Some(c) = cycle_cut(doc, &members) else {
            continue;
        };
        let e = &doc.entries()[c];
        let line = doc.entry_line(c);
        if let Some(range) = e.fields.range(line, "parentId") {
            let mut new = Vec::with_capacity(line.len());
            new.extend_from_slice(&line[..range.start]);
            new.extend_from_slice(b"null");
            new.extend_from_slice(&line[range.end..]);
            // An identical later copy survives the removal of this one: cut that copy.
            let target = match e.id.as_deref().and_then(|id| later.get(&(id, line))) {
                Some(&k) if drop_lines.contains(&e.line_no) => doc.entries()[k].line_no,
                _ => e.line_no,
            };
            replace.insert(target, new);
        }
    }
    let torn = r.torn_tail.as_ref();
    if drop_lines.is_empty()
        && replace.is_empty()
        && torn.is_none()
        && !r.bom
        && !r.missing_final_newline
        && new_slot.is_none()
    {
        return None;
    }
    let start = if r.bom { 3 } else { 0 };
    let mut kept = Vec::with_capacity(data.len());
    let mut removed = Vec::new();
    if r.bom {
        removed.extend_from_slice(&data[..3]);
    }
    if let Some(s) = &new_slot {
        kept.extend_from_slice(s);
    }
    let end = torn.map_or(data.len(), |t| t.offset);
    for (n, (s, e)) in lines(&data[..end], start).into_iter().enumerate() {
        if drop_lines.contains(&(n + 1)) {
            removed.extend_from_slice(&data[s..e]);
        } else if let Some(new) = replace.get(&(n + 1)) {
            removed.extend_from_slice(&data[s..e]);
            let content_end = if data[..e].ends_with(b"\r\n") {
                e - 2
            } else if data[..e].ends_with(b"\n") {
                e - 1
            } else {
                e
            };
            kept.extend_from_slice(new);
            kept.extend_from_slice(&data[content_end..e]);
        } else {
            kept.extend_from_slice(&data[s..e]);
        }
    }
    if let Some(t) = torn {
        removed.extend_from_slice(&data[t.offset..]);
    }
    if !kept.is_empty() && kept.last() != Some(&b'\n') {
        kept.push(b'\n');
    }
    Some((kept, removed))
}

/// Checks `path` and repairs what can be repaired without losing a byte, through the one
/// writer of a session file ([`FileWriter`]): under its lock (waiting up to `wait`), removed
/// bytes go to a fsynced quarantine sidecar first, then the file is replaced atomically
/// ([`FileWriter::rewrite`]: temporary file, fsync, rename, directory fsync, the file's
/// permissions kept), only if nobody appended since it was read. A file that is not a
/// session is never touched.
pub fn repair(
    path: &Path,
    opts: &CheckOptions,
    wait: Option<Duration>,
) -> Result<RepairOutcome, StoreError> {
    let mut writer = FileWriter::existing(path, wait, Durability::default())?;
    let real = writer.real_path().to_path_buf();
    // An earlier rewrite's old file first: pi's lines in it are appended to the session
    // (they are part of what is checked), and it is removed unless still held open.
    let left_before = super::leftover_finding(&real);
    writer.settle_leftover()?;
    let left_after = super::leftover_finding(&real);
    let with = |mut r: CheckReport, f: &Option<super::Finding>| {
        r.findings.extend(f.clone());
        r
    };
    let bytes = crate::safe_fs::read_regular(&real).at(path)?;
    let base = check_bytes(path, bytes.clone(), opts);
    let before = with(base.clone(), &left_before);
    let unchanged = with(base, &left_after);
    let doc = match SessionDoc::parse(Arc::new(bytes)) {
        Ok(d) => d,
        Err(_) => {
            return Ok(RepairOutcome {
                after: unchanged,
                before,
                quarantine: None,
                rewritten: false,
            })
        }
    };
    let Some((kept, removed)) = repaired_bytes(&doc) else {
        return Ok(RepairOutcome {
            after: unchanged,
            before,
            quarantine: None,
            rewritten: false,
        });
    };
    // The repaired bytes must still be a session (they always are: only non-entry lines,
    // identical copies and line ends are removed, and the header is kept).
    if let Err(reason) = SessionDoc::parse(Arc::new(kept.clone())) {
        return Err(StoreError::NotASession {
            path: path.to_path_buf(),
            reason,
        });
    }
    let quarantine = if removed.is_empty() {
        None
    } else {
        Some(crate::repair::write_sidecar(&real, "quarantine", &removed)?)
    };
    if !writer.rewrite(&[&kept], Some(doc.base_bytes().len() as u64))? {
        return Err(StoreError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("the file changed while it was being repaired (another writer without arbor's lock?); nothing was replaced"),
        });
    }
    drop(writer);
    let after = with(
        check_bytes(path, kept, opts),
        &super::leftover_finding(&real),
    );
    Ok(RepairOutcome {
        before,
        after,
        quarantine,
        rewritten: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::files::REWRITE_HOOK;
    use crate::backend::sync_support::Moment;
    use std::io::Write;

    const HEAD: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"0190a8a0-0000-7000-8000-0000000000aa\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";

    fn entry(id: &str, parent: Option<&str>, text: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n"
        )
    }

    /// `check --repair` racing pi (which takes no lock and appends by path): pi opened the
    /// session before the repair's rename and wrote half a line there, finishing it only after
    /// the repair returned. Before, the repair copied the late bytes raw (half a line at the
    /// end of the new file) and the rest reached the unlinked old file: the next open cut the
    /// half line off as a torn tail and pi's line was lost. Now the old file stays linked as
    /// `<session>.arbor-merge` (pi's descriptor is still open, its last line incomplete) and
    /// the next open of the session settles it: pi's line once, whole, nothing torn.
    #[test]
    fn a_repair_racing_pi_loses_no_line() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        let a = entry("a1", None, "one");
        let b = entry("b1", Some("a1"), "two");
        // A duplicated line: what the repair removes.
        std::fs::write(&path, format!("{HEAD}{a}{a}{b}")).expect("write");
        let pi_line = entry("c1", Some("b1"), "from pi");
        let (half, rest) = pi_line.split_at(40);
        let pi: std::rc::Rc<std::cell::RefCell<Option<std::fs::File>>> = Default::default();
        let (p2, pi2, half2) = (path.clone(), pi.clone(), half.to_string());
        REWRITE_HOOK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |m| {
                if m == Moment::BeforeRename {
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&p2)
                        .expect("pi opens by path");
                    f.write_all(half2.as_bytes()).expect("pi writes half");
                    *pi2.borrow_mut() = Some(f);
                }
            }));
        });
        let out = repair(&path, &CheckOptions::default(), None);
        REWRITE_HOOK.with(|h| *h.borrow_mut() = None);
        let out = out.expect("repair");
        assert!(out.rewritten);
        // pi finishes its line through the descriptor it opened before the rename.
        let mut f = pi.borrow_mut().take().expect("pi wrote");
        f.write_all(rest.as_bytes()).expect("pi writes the rest");
        drop(f);
        // The next open for writing settles what the repair left.
        let opened = crate::backend::files::FileStore::open_file(&path, None, Durability::None)
            .expect("open");
        drop(opened);
        let now = std::fs::read_to_string(&path).expect("read");
        assert_eq!(now, format!("{HEAD}{a}{b}{pi_line}"));
        let side = crate::backend::sync_support::merge_sidecar_path(&path);
        assert!(!side.exists(), "the old file was settled and removed");
    }

    /// A leftover `<session>.arbor-merge` (a rewrite killed between its rename and its copy,
    /// pi's line only in the old file) is reported by `check` (`merge_leftover`, before:
    /// nothing) and settled by `check --repair`: pi's line appended, the sidecar removed.
    #[test]
    fn check_reports_a_leftover_and_repair_settles_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        let a = entry("a1", None, "one");
        let b = entry("b1", Some("a1"), "from pi");
        std::fs::write(&path, format!("{HEAD}{a}")).expect("write");
        let side = crate::backend::sync_support::merge_sidecar_path(&path);
        std::fs::write(&side, format!("{HEAD}{a}{b}")).expect("write");
        let report = super::super::check(&path, &CheckOptions::default()).expect("check");
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.kind == "merge_leftover" && f.repairable),
            "{:?}",
            report.findings
        );
        let out = repair(&path, &CheckOptions::default(), None).expect("repair");
        assert!(out
            .before
            .findings
            .iter()
            .any(|f| f.kind == "merge_leftover"));
        assert!(!out
            .after
            .findings
            .iter()
            .any(|f| f.kind == "merge_leftover"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{HEAD}{a}{b}")
        );
        assert!(!side.exists());
        let report = super::super::check(&path, &CheckOptions::default()).expect("check");
        assert!(!report.findings.iter().any(|f| f.kind == "merge_leftover"));
    }
}
