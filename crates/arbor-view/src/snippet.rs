//! Short texts of entries for one-line views (`tree`, `show` headings), read from the raw
//! JSON without building a DOM of the content: a 200 KB tool output costs a scan, not a parse
//! and a copy. Only the first `max` characters of a string are decoded.
use arbor_core::entry::Fields;
use arbor_core::json::{decode_string, scan_object, skip_ws, value_end, ValueKind};

/// The first `max` characters of a raw JSON string (quotes included), decoded.
pub fn str_prefix(raw: &[u8], max: usize) -> String {
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
    // Bytes enough for `max` characters (4 per character, escapes up to 6 per unit), cut
    // where no escape is split.
    let cap = max.saturating_mul(6).saturating_add(8);
    let mut i = 0;
    while i < inner.len() && i < cap {
        i += match inner[i] {
            b'\\' if inner.get(i + 1) == Some(&b'u') => 6,
            b'\\' => 2,
            _ => 1,
        };
    }
    let part = &inner[..i.min(inner.len())];
    let text = match decode_string(part) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(part).into_owned(),
    };
    text.chars().take(max).collect()
}

/// The objects of a raw JSON array (message content's blocks), each with its members, read
/// without a DOM: a block's value is only looked at when asked for. Stops at the first
/// element that is not valid JSON; elements that are not objects are passed over.
pub(crate) struct Blocks<'a> {
    raw: &'a [u8],
    i: usize,
}

/// The blocks of `raw`, a JSON array.
pub(crate) fn blocks(raw: &[u8]) -> Blocks<'_> {
    Blocks {
        raw,
        i: skip_ws(raw, 1),
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = (&'a [u8], Fields);

    fn next(&mut self) -> Option<Self::Item> {
        while self.raw.get(self.i).is_some_and(|&b| b != b']') {
            let Ok(end) = value_end(self.raw, self.i) else {
                self.i = self.raw.len();
                return None;
            };
            let elem = &self.raw[self.i..end];
            self.i = skip_ws(self.raw, end);
            if self.raw.get(self.i) == Some(&b',') {
                self.i = skip_ws(self.raw, self.i + 1);
            }
            if let Ok(scan) = scan_object(elem) {
                let f = Fields {
                    members: scan.members.into_boxed_slice(),
                };
                return Some((elem, f));
            }
        }
        None
    }
}

/// A one-line view of message content (a string, or blocks): text first, then what else the
/// blocks hold (`[thinking]`, `[tool call NAME]`, `[image]`), at most about `max` characters.
pub fn content(raw: &[u8], kind: ValueKind, max: usize) -> String {
    match kind {
        ValueKind::String => str_prefix(raw, max),
        ValueKind::Array => {
            let mut parts: Vec<String> = Vec::new();
            let mut len = 0;
            let mut all = blocks(raw);
            // The next block is not even scanned once the line is full.
            while len < max {
                let Some((elem, f)) = all.next() else { break };
                let part = match f.str(elem, "type").as_deref() {
                    Some("text") => f
                        .get(elem, "text")
                        .filter(|(_, k)| *k == ValueKind::String)
                        .map(|(t, _)| str_prefix(t, max - len)),
                    Some("thinking") => Some("[thinking]".to_string()),
                    Some("toolCall") => Some(format!(
                        "[tool call {}]",
                        f.str(elem, "name").unwrap_or_default()
                    )),
                    Some("image") => Some("[image]".to_string()),
                    _ => None,
                };
                if let Some(p) = part.filter(|p| !p.trim().is_empty()) {
                    len += p.chars().count() + 1;
                    parts.push(p);
                }
            }
            parts.join(" ")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_decode_without_splitting_escapes() {
        assert_eq!(str_prefix(br#""abc""#, 2), "ab");
        assert_eq!(str_prefix(br#""a\nb\u00e9c""#, 10), "a\nbéc");
        let long = format!("\"{}\"", "\\u00e9".repeat(1000));
        assert_eq!(str_prefix(long.as_bytes(), 3), "ééé");
        assert_eq!(
            content(
                br#"[{"type":"thinking","thinking":"t"},{"type":"text","text":"hi"},{"type":"toolCall","name":"bash","arguments":{}}]"#,
                ValueKind::Array,
                50
            ),
            "[thinking] hi [tool call bash]"
        );
    }
}
