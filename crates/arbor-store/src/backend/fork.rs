//! The one fork: a session's lines copied as a new session (another id, `parentSession`
//! naming the source), whatever keeps them. [`crate::SessionManager::fork_from`] (pi's
//! `forkFrom`, and `arbor fork`), [`super::SessionStore::fork`] and `arbor sync
//! --fork-on-conflict` all make their copy here; they differ only in the header
//! ([`ForkHeader`]) and in which lines they give.
use super::{meta_from_header, rewrite_header, SessionMeta};
use arbor_core::doc::Dialect;
use arbor_core::title::TitleSource;

/// How the fork's header (and omp's title slot) is made.
#[derive(Debug, Clone, Copy)]
pub enum ForkHeader<'a> {
    /// The source's header with the new `id` and `parentSession`, every other member kept
    /// in its order; omp's title slot and every other line copied byte for byte (a copy of a
    /// session: [`super::SessionStore::fork`], `arbor sync --fork-on-conflict`).
    Kept,
    /// A new header as pi's `forkFrom` writes it (`type`, `version` 3, `id`, `timestamp`,
    /// `cwd`, `parentSession`) and, for omp, a new title slot holding `title`; the source's
    /// header and title slot are left out.
    New {
        /// The dialect of the new session (an omp session gets a title slot).
        dialect: Dialect,
        /// The new header's `cwd`.
        cwd: &'a str,
        /// The new header's (and title slot's) time.
        timestamp: &'a str,
        /// The title and who set it, for omp's title slot.
        title: Option<(&'a str, Option<TitleSource>)>,
    },
}

/// A fork's lines: the new first lines (title slot, header), then the source's lines after
/// its header, borrowed.
#[derive(Debug)]
pub struct Forked<'l> {
    head: Vec<Vec<u8>>,
    rest: &'l [&'l [u8]],
    /// The new session's metadata (from its header; `name` is left to the caller).
    pub meta: SessionMeta,
}

impl<'l> Forked<'l> {
    /// Every line of the fork, each without its newline.
    pub fn lines(&self) -> Vec<&[u8]> {
        self.head
            .iter()
            .map(Vec::as_slice)
            .chain(self.rest.iter().copied())
            .collect()
    }

    /// The fork as a JSONL file holds it: every line followed by `\n`.
    pub fn bytes(&self) -> Vec<u8> {
        let lines = self.lines();
        let mut out = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for l in lines {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        out
    }
}

/// Forks the session whose lines are `lines` (each without its newline; the header is the
/// first line, or the second after omp's title slot) as session `new_id` with
/// `parentSession` = `parent_ref`, its header made as `header` says. Every line after the
/// source's header is kept byte for byte, malformed ones included.
pub fn fork_lines<'l>(
    lines: &'l [&'l [u8]],
    new_id: &str,
    parent_ref: &str,
    header: &ForkHeader<'_>,
) -> Forked<'l> {
    let found = arbor_core::header::locate(lines.iter().copied()).map(|(i, _, _)| i);
    let at = found.unwrap_or(0);
    let (head, tool) = match *header {
        ForkHeader::Kept => {
            let mut head: Vec<Vec<u8>> = lines.iter().take(at).map(|l| l.to_vec()).collect();
            if let Some(h) = lines.get(at) {
                head.push(rewrite_header(h, new_id, parent_ref));
            }
            (head, if found == Some(1) { "omp" } else { "pi" })
        }
        ForkHeader::New {
            dialect,
            cwd,
            timestamp,
            title,
        } => {
            let h = crate::manager::header_line(dialect, new_id, timestamp, cwd, Some(parent_ref));
            let mut first = crate::manager::initial_lines(dialect, h, timestamp, title);
            // `initial_lines` gives the slot (ending in its newline) and the header as one
            // buffer: one line each here.
            let head = match first.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    let header = first.split_off(i + 1);
                    first.pop();
                    vec![first, header]
                }
                None => vec![first],
            };
            let tool = if dialect == Dialect::Omp { "omp" } else { "pi" };
            (head, tool)
        }
    };
    // The source's header (and the title slot before it) are replaced; a source without a
    // header under `New` keeps every line after the new header.
    let rest = match (header, found) {
        (ForkHeader::New { .. }, None) => lines,
        _ => lines.get(at + 1..).unwrap_or_default(),
    };
    let header_line = head.last().map(Vec::as_slice).unwrap_or_default();
    let mut meta = meta_from_header(header_line, tool);
    meta.id = new_id.to_string();
    Forked { head, rest, meta }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rewrites_the_header_only_and_new_replaces_slot_and_header() {
        let slot = br#"{"type":"title","title":"t"}"#.as_slice();
        let header = br#"{"type":"session","version":3,"id":"a","timestamp":"T","cwd":"/p","x":1}"#
            .as_slice();
        let bad = b"{not json".as_slice();
        let entry = br#"{"type":"message","id":"e1","parentId":null}"#.as_slice();
        let lines = [slot, header, bad, entry];
        let f = fork_lines(&lines, "b", "/src.jsonl", &ForkHeader::Kept);
        let got = f.lines();
        assert_eq!(got[0], slot);
        assert_eq!(
            got[1],
            br#"{"type":"session","version":3,"id":"b","timestamp":"T","cwd":"/p","x":1,"parentSession":"/src.jsonl"}"#
        );
        assert_eq!(&got[2..], &[bad, entry]);
        assert_eq!((f.meta.id.as_str(), f.meta.tool.as_str()), ("b", "omp"));
        let f = fork_lines(
            &lines[1..],
            "c",
            "/src.jsonl",
            &ForkHeader::New {
                dialect: Dialect::Pi,
                cwd: "/q",
                timestamp: "2026-01-01T00:00:00.000Z",
                title: None,
            },
        );
        let got = f.lines();
        assert_eq!(
            got[0],
            br#"{"type":"session","version":3,"id":"c","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/q","parentSession":"/src.jsonl"}"#
        );
        assert_eq!(&got[1..], &[bad, entry]);
        assert_eq!(f.bytes().iter().filter(|b| **b == b'\n').count(), 3);
    }
}
