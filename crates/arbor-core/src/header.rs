//! Where a session file's header is: the one header reader of arbor.
//!
//! pi writes the header (`{"type":"session",...}`) as the file's first line. omp may write
//! its 256-byte title slot (`{"type":"title",...}`) first, and the header as the second line.
//! A later `type: "session"` line is not the header (pi skips it, omp 18 reads it as an
//! entry). A UTF-8 byte order mark before the first line is skipped.

use crate::entry::{parse_fields, Fields};

/// The UTF-8 byte order mark, skipped before the first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The session header among a file's first lines (each with or without its `\n`): the first
/// line, or the second when the first is omp's title slot (`type: "title"`). Returns the
/// header's line index (0 or 1), the line (without a byte order mark) and its fields, or
/// `None` when neither place holds a JSON object with `type: "session"`.
///
/// Whether the header has a string `id` is the caller's question
/// (`fields.str(line, "id")`).
pub fn locate<'l>(
    first_lines: impl IntoIterator<Item = &'l [u8]>,
) -> Option<(usize, &'l [u8], Fields)> {
    for (i, line) in first_lines.into_iter().take(2).enumerate() {
        let line = if i == 0 {
            line.strip_prefix(BOM).unwrap_or(line)
        } else {
            line
        };
        let fields = parse_fields(line).ok()?;
        match fields.str(line, "type").as_deref() {
            Some("title") if i == 0 => continue,
            Some("session") => return Some((i, line, fields)),
            _ => return None,
        }
    }
    None
}

/// The header key that links a fork to the session it was made from: pi's and omp's
/// `parentSession`; else, in a version 3 header, pi_agent_rust's `branchedFrom` (its name for the
/// same link, the path of the parent file; pi_agent_rust reads `parentSession` as an alias, so
/// `parentSession` wins when both are there). pi's own v1 headers carried a `branchedFrom` too,
/// which pi 1.5.2 keeps through its migration and never reads: a header without `"version":3`
/// keeps it unread here as well (`goldens/pi/list/g-junk-then-header-v1`). `None` when the header
/// has no link. Every reader of the fork link asks here.
pub fn fork_link_key(line: &[u8], fields: &Fields) -> Option<&'static str> {
    if fields.get(line, "parentSession").is_some() {
        return Some("parentSession");
    }
    let v3 = fields
        .get(line, "version")
        .is_some_and(|(raw, _)| raw == b"3");
    (v3 && fields.get(line, "branchedFrom").is_some()).then_some("branchedFrom")
}

/// The first two lines of `head` (the start of a file), for [`locate`].
pub fn first_lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|b| *b == b'\n').take(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(head: &[u8]) -> Option<(usize, String)> {
        let (i, line, f) = locate(first_lines(head))?;
        Some((i, f.str(line, "id")?.into_owned()))
    }

    #[test]
    fn the_header_is_line_one_or_line_two_after_the_title_slot() {
        let pi = b"{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\"}\n";
        assert_eq!(id(pi), Some((0, "p".into())));
        let omp =
            b"{\"type\":\"title\",\"v\":1,\"title\":\"t\"}\n{\"type\":\"session\",\"id\":\"o\"}\n";
        assert_eq!(id(omp), Some((1, "o".into())));
        let bom = b"\xEF\xBB\xBF{\"type\":\"session\",\"id\":\"b\"}\n";
        assert_eq!(id(bom), Some((0, "b".into())));
        // A later session line is an entry, not the header.
        assert_eq!(
            id(b"{\"type\":\"message\"}\n{\"type\":\"session\",\"id\":\"x\"}\n"),
            None
        );
        assert_eq!(id(b"garbage\n{\"type\":\"session\",\"id\":\"x\"}\n"), None);
        // Two title lines: the second is not a slot.
        assert_eq!(
            id(b"{\"type\":\"title\"}\n{\"type\":\"title\"}\n{\"type\":\"session\",\"id\":\"x\"}\n"),
            None
        );
        // Only a title slot, an empty file, a header without a string id, not JSON.
        assert_eq!(id(b"{\"type\":\"title\"}\n"), None);
        assert_eq!(id(b""), None);
        assert_eq!(id(b"{\"type\":\"session\",\"id\":7}\n"), None);
        assert!(locate(first_lines(b"{\"type\":\"session\",\"id\":7}\n")).is_some());
        assert_eq!(id(b"{\"type\":\"session\",\"id\":\"x\"} trailing\n"), None);
        // The fork link: pi's key, else pi_agent_rust's.
        let key = |h: &[u8]| {
            let (_, line, f) = locate(first_lines(h)).unwrap();
            fork_link_key(line, &f)
        };
        assert_eq!(
            key(b"{\"type\":\"session\",\"version\":3,\"branchedFrom\":\"/p.jsonl\"}"),
            Some("branchedFrom")
        );
        // pi's own v1 header: pi never reads it.
        assert_eq!(
            key(b"{\"type\":\"session\",\"branchedFrom\":\"/p.jsonl\"}"),
            None
        );
        assert_eq!(
            key(b"{\"type\":\"session\",\"branchedFrom\":\"/b\",\"parentSession\":\"/p\"}"),
            Some("parentSession")
        );
        assert_eq!(key(b"{\"type\":\"session\",\"id\":\"x\"}"), None);
        // A carriage return before the newline is JSON whitespace.
        assert_eq!(
            id(b"{\"type\":\"session\",\"id\":\"c\"}\r\n"),
            Some((0, "c".into()))
        );
    }
}
