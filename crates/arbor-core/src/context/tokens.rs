//! pi's token estimate of a context message (`estimateTokens` in pi 1.5's
//! `core/compaction/compaction.js`): characters (JS string lengths, UTF-16 code units) over
//! four, rounded up; an image counts as 4,800 characters. The one estimate arbor uses where
//! a number of tokens is guessed from text (a context cut to a token budget).
use crate::json::JsValue;

/// What pi counts an image block as (`ESTIMATED_IMAGE_CHARS`).
pub const ESTIMATED_IMAGE_CHARS: u64 = 4800;

/// The length of a JS string value (`s.length`), 0 for anything else.
fn len(v: Option<&JsValue>) -> u64 {
    match v {
        Some(JsValue::String(s)) => s.utf16_len() as u64,
        _ => 0,
    }
}

/// `JSON.stringify(v).length` (0 when `v` is absent: pi would throw).
fn json_len(v: Option<&JsValue>) -> u64 {
    v.map_or(0, |v| {
        String::from_utf8_lossy(&v.to_json()).encode_utf16().count() as u64
    })
}

/// pi's `estimateTextAndImageContentChars`: a string's length, or the text blocks' lengths
/// and 4,800 per image block.
fn text_and_images(content: Option<&JsValue>) -> u64 {
    match content {
        Some(s @ JsValue::String(_)) => len(Some(s)),
        Some(JsValue::Array(blocks)) => blocks
            .iter()
            .map(
                |b| match b.get("type").and_then(JsValue::as_str_lossy).as_deref() {
                    Some("text") => len(b.get("text")),
                    Some("image") => ESTIMATED_IMAGE_CHARS,
                    _ => 0,
                },
            )
            .sum(),
        _ => 0,
    }
}

/// pi's `estimateTokens(message)` for a context message (as
/// [`super::SessionContext::write_message_at`] writes it): `ceil(chars / 4)`, 0 for a role
/// pi does not count.
///
/// ```
/// use arbor_core::context::estimate_tokens;
/// use arbor_core::json::JsValue;
/// let m = JsValue::parse(br#"{"role":"user","content":"abcdefghi"}"#)?;
/// assert_eq!(estimate_tokens(&m), 3); // 9 characters
/// let m = JsValue::parse(br#"{"role":"assistant","content":[{"type":"toolCall","name":"ls","arguments":{}}]}"#)?;
/// assert_eq!(estimate_tokens(&m), 1); // "ls" and "{}"
/// # Ok::<(), arbor_core::json::JsonError>(())
/// ```
pub fn estimate_tokens(message: &JsValue) -> u64 {
    let chars = match message
        .get("role")
        .and_then(JsValue::as_str_lossy)
        .as_deref()
    {
        Some("system") => {
            let mut chars = text_and_images(message.get("content"));
            if let Some(JsValue::Object(sections)) = message.get("sections") {
                chars += sections.iter().map(|(_, s)| len(Some(s))).sum::<u64>();
            }
            if message.get("toolsAdded").is_some_and(JsValue::is_truthy) {
                chars += json_len(message.get("toolsAdded"));
            }
            chars
        }
        Some("user" | "custom" | "toolResult") => text_and_images(message.get("content")),
        Some("assistant") => match message.get("content") {
            Some(JsValue::Array(blocks)) => blocks
                .iter()
                .map(
                    |b| match b.get("type").and_then(JsValue::as_str_lossy).as_deref() {
                        Some("text") => len(b.get("text")),
                        Some("thinking") => len(b.get("thinking")),
                        Some("toolCall") => len(b.get("name")) + json_len(b.get("arguments")),
                        _ => 0,
                    },
                )
                .sum(),
            _ => 0,
        },
        Some("bashExecution") => len(message.get("command")) + len(message.get("output")),
        Some("branchSummary" | "compactionSummary") => len(message.get("summary")),
        _ => 0,
    };
    chars.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(json: &str) -> u64 {
        estimate_tokens(&JsValue::parse(json.as_bytes()).expect("json"))
    }

    /// Figures from pi 1.5.2's `estimateTokens` (its function, run by node on the same messages).
    #[test]
    fn as_pi_counts() {
        // "日本" is 2 UTF-16 units, "😀" 2: 4 units → 1 token.
        assert_eq!(est(r#"{"role":"user","content":"日本😀"}"#), 1);
        assert_eq!(est(r#"{"role":"user","content":"abcde"}"#), 2);
        assert_eq!(
            est(
                r#"{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image","data":"x","mimeType":"image/png"}]}"#
            ),
            1201
        );
        assert_eq!(
            est(
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"abcd"},{"type":"toolCall","name":"read","arguments":{"path":"a"}}]}"#
            ),
            // 4 + 4 + len('{"path":"a"}') = 12 → 20 / 4
            5
        );
        assert_eq!(
            est(r#"{"role":"bashExecution","command":"ls","output":"a\nb"}"#),
            2
        );
        assert_eq!(
            est(r#"{"role":"compactionSummary","summary":"abcdefgh"}"#),
            2
        );
        assert_eq!(
            est(
                r#"{"role":"system","content":"ab","sections":{"x":"cd","y":null},"toolsAdded":[]}"#
            ),
            // 2 + 2 + len("[]") = 6
            2
        );
        assert_eq!(est(r#"{"role":"other","content":"abcdefgh"}"#), 0);
    }
}
