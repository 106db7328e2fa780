//! omp 18's title slot: the physical first line of an omp session, a fixed
//! [`SESSION_TITLE_SLOT_BYTES`]-byte `{"type":"title","v":1,"title":...,"source"?,"updatedAt":...,"pad":"  ..."}\n`
//! that omp rewrites in place (one `pwrite` at offset 0) when the session is renamed.
//!
//! Reading follows omp's `parseTitleSlotLine` (a slot that does not validate is not a slot:
//! omp then sees a first entry that is not the header and refuses the file); writing follows
//! `serializeTitleSlot` byte for byte, including how a long title is shortened.
use crate::json::{write_str_escaped, JsValue};

/// Size of the slot line, newline included.
pub const SESSION_TITLE_SLOT_BYTES: usize = 256;

/// Who set a title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TitleSource {
    /// Generated (omp's automatic titles).
    Auto,
    /// Set by the user (a rename).
    User,
}

impl TitleSource {
    /// `"auto"` / `"user"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TitleSource::Auto => "auto",
            TitleSource::User => "user",
        }
    }
}

/// A parsed title slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleSlotInfo {
    /// The title (empty: none).
    pub title: String,
    /// Who set it.
    pub source: Option<TitleSource>,
    /// When it was set (ISO string).
    pub updated_at: String,
}

/// omp's `parseTitleSlotLine`: `Some` only for a JSON object with `type: "title"`, `v: 1`,
/// string `title`, `updatedAt` and `pad`, and `source` absent or `"auto"`/`"user"`.
pub fn parse_title_slot(line: &[u8]) -> Option<TitleSlotInfo> {
    let v = JsValue::parse(line).ok()?;
    if !matches!(v, JsValue::Object(_)) {
        return None;
    }
    let string = |k: &str| match v.get(k) {
        Some(JsValue::String(s)) => Some(s.to_string_lossy().into_owned()),
        _ => None,
    };
    if string("type").as_deref() != Some("title") || v.get("v") != Some(&JsValue::Number(1.0)) {
        return None;
    }
    let title = string("title")?;
    let updated_at = string("updatedAt")?;
    string("pad")?;
    let source = match v.get("source") {
        None => None,
        Some(JsValue::String(s)) if s.0 == b"auto" => Some(TitleSource::Auto),
        Some(JsValue::String(s)) if s.0 == b"user" => Some(TitleSource::User),
        Some(_) => return None,
    };
    Some(TitleSlotInfo {
        title,
        source,
        updated_at,
    })
}

/// The header as pi's and omp's `getHeader()` return it, as JSON: the header line's object
/// (migrated, for a v1/v2 file); in an omp file, the title slot folded in as omp folds it on
/// load (`applyTitleSlot`: `title` set to the slot's title, or removed when that is empty;
/// `titleSource` set to the slot's source, or removed when it has none).
pub fn header_view(doc: &crate::SessionDoc) -> Vec<u8> {
    let line = doc.header_line();
    let slot = doc
        .title_slot
        .as_ref()
        .and_then(|s| parse_title_slot(doc.line(&s.line)));
    let (Some(slot), Ok(mut header)) = (slot, JsValue::parse(line)) else {
        let mut out = Vec::with_capacity(line.len());
        if crate::json::canonicalize(line, &mut out).is_err() {
            return line.to_vec();
        }
        return out;
    };
    if slot.title.is_empty() {
        header.remove("title");
    } else {
        header.set("title", JsValue::String(slot.title.as_str().into()));
    }
    match slot.source {
        Some(s) => header.set("titleSource", JsValue::String(s.as_str().into())),
        None => {
            header.remove("titleSource");
        }
    }
    header.to_json()
}

/// Why a slot cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TitleSlotError {
    /// `updatedAt` alone does not fit in the slot.
    #[error("session title slot metadata exceeds the fixed slot size")]
    TooLarge,
}

fn slot_line(title: &str, source: Option<TitleSource>, updated_at: &str, pad: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(SESSION_TITLE_SLOT_BYTES);
    out.extend_from_slice(br#"{"type":"title","v":1,"title":"#);
    write_str_escaped(title, &mut out);
    if let Some(s) = source {
        out.extend_from_slice(br#","source":"#);
        write_str_escaped(s.as_str(), &mut out);
    }
    out.extend_from_slice(br#","updatedAt":"#);
    write_str_escaped(updated_at, &mut out);
    out.extend_from_slice(br#","pad":""#);
    out.resize(out.len() + pad, b' ');
    out.extend_from_slice(b"\"}\n");
    out
}

/// omp's `serializeTitleSlot`: exactly 256 bytes including the newline. A title too long for
/// the slot keeps its longest prefix (in code points) that fits.
pub fn serialize_title_slot(
    title: Option<&str>,
    source: Option<TitleSource>,
    updated_at: &str,
) -> Result<Vec<u8>, TitleSlotError> {
    let title = title.unwrap_or("");
    let base = slot_line("", source, updated_at, 0).len();
    if base > SESSION_TITLE_SLOT_BYTES {
        return Err(TitleSlotError::TooLarge);
    }
    // The escaped length grows with every code point, so the longest fitting prefix is found
    // by adding code points while the line fits (what omp's binary search finds).
    let mut used = base;
    let mut end = 0;
    let mut esc = Vec::with_capacity(8);
    for (i, c) in title.char_indices() {
        esc.clear();
        let mut buf = [0u8; 4];
        write_str_escaped(c.encode_utf8(&mut buf), &mut esc);
        let add = esc.len() - 2;
        if used + add > SESSION_TITLE_SLOT_BYTES {
            break;
        }
        used += add;
        end = i + c.len_utf8();
    }
    let kept = &title[..end];
    let line = slot_line(kept, source, updated_at, SESSION_TITLE_SLOT_BYTES - used);
    debug_assert_eq!(line.len(), SESSION_TITLE_SLOT_BYTES);
    if line.len() != SESSION_TITLE_SLOT_BYTES {
        return Err(TitleSlotError::TooLarge);
    }
    Ok(line)
}

/// omp's `#cleanTitle`: control characters (U+0000–U+001F, U+007F–U+009F) become spaces,
/// runs of spaces collapse to one, and the result is trimmed as JS `trim()` does.
pub fn clean_title(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut prev_space = false;
    for c in raw.chars() {
        let c = if matches!(c as u32, 0..=0x1F | 0x7F..=0x9F) {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if prev_space {
                continue;
            }
            prev_space = true;
        } else {
            prev_space = false;
        }
        out.push(c);
    }
    out.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_is_always_256_bytes_and_parses_back() {
        let ts = "2026-01-02T03:04:05.678Z";
        for title in [
            "",
            "Fix flaky test",
            &"é".repeat(300),
            &"x".repeat(1000),
            "quote \" and \\ and \u{1}",
        ] {
            for src in [None, Some(TitleSource::User), Some(TitleSource::Auto)] {
                let line = serialize_title_slot(Some(title), src, ts).expect("fits");
                assert_eq!(line.len(), SESSION_TITLE_SLOT_BYTES);
                assert_eq!(line.last(), Some(&b'\n'));
                let info = parse_title_slot(&line[..line.len() - 1]).expect("parses");
                assert!(title.starts_with(&info.title));
                assert_eq!(info.source, src);
                assert_eq!(info.updated_at, ts);
            }
        }
        // omp keeps 79 of 300 "é" with source "user" ([probe] in the research notes).
        let line = serialize_title_slot(Some(&"é".repeat(300)), Some(TitleSource::User), ts)
            .expect("fits");
        let info = parse_title_slot(&line[..255]).expect("parses");
        assert_eq!(info.title.chars().count(), 79);
    }

    #[test]
    fn exact_bytes_as_omp() {
        let line = serialize_title_slot(
            Some("Fix flaky test"),
            Some(TitleSource::User),
            "2026-01-02T03:04:05.678Z",
        )
        .expect("fits");
        let text = String::from_utf8(line).expect("utf8");
        assert!(text.starts_with(r#"{"type":"title","v":1,"title":"Fix flaky test","source":"user","updatedAt":"2026-01-02T03:04:05.678Z","pad":"   "#));
        assert!(text.ends_with("   \"}\n"));
    }

    #[test]
    fn invalid_slots_are_not_slots() {
        assert!(
            parse_title_slot(br#"{"type":"title","v":2,"title":"","updatedAt":"","pad":""}"#)
                .is_none()
        );
        assert!(parse_title_slot(
            br#"{"type":"title","v":1,"title":"","updatedAt":"","pad":"","source":"x"}"#
        )
        .is_none());
        assert!(
            parse_title_slot(br#"{"type":"title","v":1,"title":1,"updatedAt":"","pad":""}"#)
                .is_none()
        );
        assert!(
            parse_title_slot(br#"{"type":"title","v":1,"title":"t","updatedAt":""}"#).is_none()
        );
    }

    #[test]
    fn titles_are_cleaned_as_omp() {
        assert_eq!(clean_title("  a\tb\n\nc   d \u{feff}"), "a b c d");
        assert_eq!(clean_title("\u{85}x\u{7f}"), "x");
        assert_eq!(clean_title("   "), "");
    }
}
