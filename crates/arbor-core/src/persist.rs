//! omp's write-side transforms (`prepareEntryForPersistence`, omp 18.2.3
//! `session-persistence.ts`) and their read-side inverse (`resolvePersistedBlobRefs`,
//! `session-loader.ts`), on a [`JsValue`].
//!
//! Writing an entry into an omp session:
//! * strings longer than [`MAX_PERSIST_CHARS`] UTF-16 code units are cut to exactly that length,
//!   ending in [`TRUNCATION_NOTICE`] (a cut never leaves half a surrogate pair behind); signed
//!   blocks (`thinking` + `thinkingSignature`, `text` + `textSignature`, `toolCall` +
//!   `thoughtSignature`), `redactedThinking.data`, `reasoning.encrypted_content`, Anthropic
//!   server-tool history blocks and `anthropicCompaction` payloads are kept verbatim, and so are
//!   over-long signature keys;
//! * `jsonlEvents` members are removed at any depth (omp 13 also removed `partialJson`; omp 18
//!   keeps it, and so does arbor);
//! * an object that changed and has a string `content` and a number `lineCount` gets
//!   `lineCount = content.split("\n").length`;
//! * image payloads go to the blob store when their base64 `data` has at least
//!   [`BLOB_EXTERNALIZE_THRESHOLD`] characters and they sit in a `content` image block, an
//!   `images[]` item or a snapcompact `frames[]` item; so do `image_generation_call.result`
//!   (base64) and `image_url` data URLs (their UTF-8 bytes, any length);
//! * assistant `thinkingSignature`s already carried by an OpenAI Responses `providerPayload`
//!   reasoning item are dropped.
//!
//! The blob store itself is a callback (this crate never touches the filesystem): it receives the
//! decoded bytes and an optional file extension and returns the SHA-256 hex name it stored them
//! under. An entry nothing applies to is left alone (the caller keeps its bytes).
use crate::blobref::{self, decode_base64_js, is_blob_ref};
use crate::json::{JsStr, JsValue};

/// Longest string persisted unchanged, in UTF-16 code units.
pub const MAX_PERSIST_CHARS: usize = 500_000;
/// What a cut string ends with.
pub const TRUNCATION_NOTICE: &str = "\n\n[Session persistence truncated large content]";
/// Base64 images shorter than this stay inline.
pub const BLOB_EXTERNALIZE_THRESHOLD: usize = 1024;
/// Nesting beyond this depth is left as it is (omp would recurse; real entries are shallow).
pub const MAX_WALK_DEPTH: usize = 512;

/// A blob to store: the decoded bytes and the display extension omp gives its sidecar link.
#[derive(Debug)]
pub struct BlobPut<'a> {
    /// The bytes (decoded base64, or the UTF-8 of a data URL).
    pub bytes: &'a [u8],
    /// `png`, `jpg`, ... from the image's `mimeType`, when omp would make a typed sidecar.
    pub extension: Option<String>,
}

/// Whether a line (canonical `JSON.stringify` output, as arbor writes new entries) may need
/// [`prepare_for_persistence`] at all; `false` means the transform certainly changes nothing,
/// so the caller can skip parsing it.
pub fn may_need_persistence_transform(line: &[u8]) -> bool {
    let has = |pat: &[u8]| memchr::memmem::find(line, pat).is_some();
    line.len() > MAX_PERSIST_CHARS
        || has(b"jsonlEvents")
        || has(b"image")
        || has(b"frames")
        || has(b"openaiResponsesHistory")
        // A key written with escapes could spell any of the above.
        || has(b"\\u")
}

fn s(v: &JsValue) -> Option<&JsStr> {
    v.as_js_str()
}

fn get<'a>(v: &'a JsValue, key: &str) -> Option<&'a JsValue> {
    v.get(key)
}

fn has(v: &JsValue, key: &str) -> bool {
    v.get(key).is_some()
}

fn type_is(v: &JsValue, t: &str) -> bool {
    matches!(get(v, "type"), Some(JsValue::String(x)) if x.0 == t.as_bytes())
}

fn nonempty_str(v: Option<&JsValue>) -> bool {
    matches!(v, Some(JsValue::String(x)) if !x.0.is_empty())
}

fn is_image_block(v: &JsValue) -> bool {
    matches!(v, JsValue::Object(_))
        && type_is(v, "image")
        && matches!(get(v, "data"), Some(JsValue::String(_)))
}

fn is_image_mime(v: Option<&JsValue>) -> bool {
    match v {
        Some(JsValue::String(m)) => m.to_string_lossy().to_lowercase().starts_with("image/"),
        _ => false,
    }
}

fn is_image_data_payload(v: &JsValue) -> bool {
    matches!(v, JsValue::Object(_))
        && matches!(get(v, "data"), Some(JsValue::String(_)))
        && (is_image_block(v) || is_image_mime(get(v, "mimeType")))
}

/// omp's `isExternalizableImagePosition`: an image payload in a `content` image block, an
/// `images[]` entry or a snapcompact `frames[]` entry.
pub fn is_externalizable_image_position(v: &JsValue, key: Option<&[u8]>) -> bool {
    if !is_image_data_payload(v) {
        return false;
    }
    match key {
        Some(b"content") => is_image_block(v),
        Some(b"images") | Some(b"frames") => true,
        _ => false,
    }
}

/// omp's `blobExtensionForImageMimeType`.
pub fn blob_extension_for_mime(mime: Option<&JsValue>) -> Option<String> {
    let m = match mime {
        Some(JsValue::String(m)) if !m.0.is_empty() => m.to_string_lossy().to_lowercase(),
        _ => return None,
    };
    let known = match m.as_str() {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        "image/svg+xml" => Some("svg"),
        _ => None,
    };
    if let Some(k) = known {
        return Some(k.to_string());
    }
    let sub = m.strip_prefix("image/")?;
    let sub = sub
        .split(';')
        .next()
        .unwrap_or("")
        .split('+')
        .next()
        .unwrap_or("");
    let ok = !sub.is_empty()
        && sub.len() <= 32
        && sub.as_bytes()[0].is_ascii_alphanumeric()
        && sub
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    ok.then(|| sub.to_ascii_lowercase())
}

fn is_image_data_url(s: &JsStr) -> bool {
    s.0.starts_with(b"data:image/") && memchr::memmem::find(&s.0, b";base64,").is_some()
}

/// JS `truncateString(value, limit)`: the first `limit` UTF-16 units, minus a trailing high
/// surrogate.
fn truncate_units(s: &JsStr, limit: usize) -> JsStr {
    let b = &s.0;
    let (mut i, mut units) = (0, 0);
    let mut last_start = None;
    while i < b.len() && units < limit {
        let c = b[i];
        let len = match c {
            0..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        let u = if len == 4 { 2 } else { 1 };
        if units + u > limit {
            // The cut falls inside a surrogate pair: JS keeps the high half, then drops it.
            break;
        }
        last_start = Some(i);
        units += u;
        i += len;
    }
    let mut end = i.min(b.len());
    // A lone high surrogate (WTF-8 ED A0..AF xx) at the end is dropped.
    if let Some(st) = last_start {
        if end - st == 3 && b[st] == 0xED && (0xA0..=0xAF).contains(&b[st + 1]) {
            end = st;
        }
    }
    JsStr(b[..end].to_vec())
}

/// The persisted form of a string over the limit.
pub fn truncate_for_persistence(s: &JsStr) -> JsStr {
    let limit = MAX_PERSIST_CHARS.saturating_sub(TRUNCATION_NOTICE.len());
    let mut out = truncate_units(s, limit);
    out.0.extend_from_slice(TRUNCATION_NOTICE.as_bytes());
    out
}

/// JS `content.split("\n").length`.
fn split_count(s: &JsStr) -> f64 {
    (memchr::memchr_iter(b'\n', &s.0).count() + 1) as f64
}

fn is_anthropic_server_tool_history(block: &JsValue) -> bool {
    let Some(JsValue::String(t)) = get(block, "type") else {
        return false;
    };
    match t.0.as_slice() {
        b"server_tool_use" => {
            let name_ok = matches!(get(block, "name"), Some(JsValue::String(n))
                if matches!(n.0.as_slice(), b"web_search" | b"tool_search_tool_regex" | b"tool_search_tool_bm25"));
            name_ok && nonempty_str(get(block, "id"))
        }
        b"web_search_tool_result" | b"tool_search_tool_result" => {
            nonempty_str(get(block, "tool_use_id")) && has(block, "content")
        }
        _ => false,
    }
}

/// Objects omp persists verbatim (never cut, never externalized, never descended into).
fn is_verbatim(obj: &JsValue, key: Option<&[u8]>) -> bool {
    if type_is(obj, "anthropicServerTool") {
        if let Some(block @ JsValue::Object(_)) = get(obj, "block") {
            if matches!(get(block, "type"), Some(JsValue::String(_)))
                && is_anthropic_server_tool_history(block)
            {
                return true;
            }
        }
    }
    if type_is(obj, "anthropicCompaction")
        || (key == Some(b"anthropicCompaction")
            && matches!(get(obj, "content"), Some(JsValue::String(_))))
    {
        return true;
    }
    if has(obj, "type") {
        let signed = (type_is(obj, "thinking") && nonempty_str(get(obj, "thinkingSignature")))
            || (type_is(obj, "text") && nonempty_str(get(obj, "textSignature")))
            || (type_is(obj, "toolCall") && nonempty_str(get(obj, "thoughtSignature")));
        let redacted = type_is(obj, "redactedThinking") && nonempty_str(get(obj, "data"));
        let encrypted = type_is(obj, "reasoning") && nonempty_str(get(obj, "encrypted_content"));
        if signed || redacted || encrypted {
            return true;
        }
    }
    false
}

struct Walker<'f, E> {
    put: &'f mut dyn FnMut(BlobPut<'_>) -> Result<String, E>,
}

impl<E> Walker<'_, E> {
    fn externalize_b64(&mut self, data: &JsStr, ext: Option<String>) -> Result<JsStr, E> {
        let bytes = decode_base64_js(data);
        let hex = (self.put)(BlobPut {
            bytes: &bytes,
            extension: ext,
        })?;
        Ok(JsStr::from(blobref::blob_ref(&hex)))
    }

    fn walk(&mut self, v: &mut JsValue, key: Option<&[u8]>, depth: usize) -> Result<bool, E> {
        if depth > MAX_WALK_DEPTH {
            return Ok(false);
        }
        if let JsValue::Object(_) = v {
            // image_generation_call: its base64 `result`.
            if type_is(v, "image_generation_call") {
                if let Some(JsValue::String(r)) = get(v, "result") {
                    if !is_blob_ref(&r.0) && r.utf16_len() >= BLOB_EXTERNALIZE_THRESHOLD {
                        let r = r.clone();
                        let new = self.externalize_b64(&r, None)?;
                        v.set("result", JsValue::String(new));
                        return Ok(true);
                    }
                }
            }
            if is_externalizable_image_position(v, key) {
                if let Some(JsValue::String(d)) = get(v, "data") {
                    if !is_blob_ref(&d.0) && d.utf16_len() >= BLOB_EXTERNALIZE_THRESHOLD {
                        let d = d.clone();
                        let ext = blob_extension_for_mime(get(v, "mimeType"));
                        let new = self.externalize_b64(&d, ext)?;
                        v.set("data", JsValue::String(new));
                        return Ok(true);
                    }
                }
            }
            if is_verbatim(v, key) {
                return Ok(false);
            }
        }
        match v {
            JsValue::String(st) => {
                if key == Some(b"image_url") && is_image_data_url(st) {
                    let bytes = st.to_string_lossy().into_owned().into_bytes();
                    let hex = (self.put)(BlobPut {
                        bytes: &bytes,
                        extension: None,
                    })?;
                    *st = JsStr::from(blobref::blob_ref(&hex));
                    return Ok(true);
                }
                if st.0.len() > MAX_PERSIST_CHARS && st.utf16_len() > MAX_PERSIST_CHARS {
                    if matches!(
                        key,
                        Some(b"thinkingSignature" | b"thoughtSignature" | b"textSignature")
                    ) {
                        return Ok(false);
                    }
                    *st = truncate_for_persistence(st);
                    return Ok(true);
                }
                Ok(false)
            }
            JsValue::Array(items) => {
                let mut changed = false;
                for item in items.iter_mut() {
                    changed |= self.walk(item, key, depth + 1)?;
                }
                Ok(changed)
            }
            JsValue::Object(members) => {
                let mut changed = false;
                let before = members.len();
                members.retain(|(k, _)| k.0 != b"jsonlEvents");
                if members.len() != before {
                    changed = true;
                }
                // JS walks `Object.entries` order (array-index keys first); only the order of
                // blob writes depends on it, and every write is idempotent.
                for (k, val) in members.iter_mut() {
                    let kb = k.0.clone();
                    changed |= self.walk(val, Some(&kb), depth + 1)?;
                }
                if changed {
                    let content = members
                        .iter()
                        .find(|(k, _)| k.0 == b"content")
                        .map(|(_, v)| v);
                    let count = match content {
                        Some(JsValue::String(c)) => Some(split_count(c)),
                        _ => None,
                    };
                    if let Some(n) = count {
                        if let Some((_, lc @ JsValue::Number(_))) =
                            members.iter_mut().find(|(k, _)| k.0 == b"lineCount")
                        {
                            *lc = JsValue::Number(n);
                        }
                    }
                }
                Ok(changed)
            }
            _ => Ok(false),
        }
    }
}

fn reasoning_item(v: &JsValue) -> Option<(Option<&JsStr>, Option<&JsStr>)> {
    if !matches!(v, JsValue::Object(_)) || !type_is(v, "reasoning") {
        return None;
    }
    let enc = get(v, "encrypted_content")
        .and_then(s)
        .filter(|x| !x.0.is_empty());
    let id = get(v, "id").and_then(s).filter(|x| !x.0.is_empty());
    Some((enc, id))
}

/// omp's `stripReplayedReasoningSignatures`: drops assistant `thinkingSignature`s whose
/// reasoning item the message's `openaiResponsesHistory` payload already carries.
fn strip_replayed_reasoning_signatures(entry: &mut JsValue) -> bool {
    if !type_is(entry, "message") {
        return false;
    }
    let Some(message) = entry.get_mut("message") else {
        return false;
    };
    if !matches!(get(message, "role"), Some(JsValue::String(r)) if r.0 == b"assistant") {
        return false;
    }
    let (mut encrypted, mut ids) = (Vec::new(), Vec::new());
    match get(message, "providerPayload") {
        Some(p) if type_is(p, "openaiResponsesHistory") => match get(p, "items") {
            Some(JsValue::Array(items)) => {
                for it in items {
                    if let Some((e, i)) = reasoning_item(it) {
                        if let Some(e) = e {
                            encrypted.push(e.clone());
                        }
                        if let Some(i) = i {
                            ids.push(i.clone());
                        }
                    }
                }
            }
            _ => return false,
        },
        _ => return false,
    }
    if encrypted.is_empty() && ids.is_empty() {
        return false;
    }
    let Some(JsValue::Array(content)) = message.get_mut("content") else {
        return false;
    };
    let mut changed = false;
    for block in content.iter_mut() {
        if !type_is(block, "thinking") {
            continue;
        }
        let Some(JsValue::String(sig)) = get(block, "thinkingSignature") else {
            continue;
        };
        if sig.0.is_empty() {
            continue;
        }
        let covered = match JsValue::parse(&sig.0) {
            Ok(parsed) => match reasoning_item(&parsed) {
                Some((Some(e), _)) => encrypted.contains(e),
                Some((None, Some(i))) => ids.contains(i),
                _ => false,
            },
            Err(_) => false,
        };
        if covered {
            block.remove("thinkingSignature");
            changed = true;
        }
    }
    changed
}

/// Applies omp's `prepareEntryForPersistence` to `entry` in place; returns whether anything
/// changed (then the caller serializes it with [`JsValue::to_json`], as omp's
/// `JSON.stringify`). Blobs are handed to `put` before this returns, so a caller that
/// writes the line afterwards writes it after its blobs.
pub fn prepare_for_persistence<E>(
    entry: &mut JsValue,
    put: &mut dyn FnMut(BlobPut<'_>) -> Result<String, E>,
) -> Result<bool, E> {
    let stripped = strip_replayed_reasoning_signatures(entry);
    let mut w = Walker { put };
    Ok(w.walk(entry, None, 0)? | stripped)
}

/// What the read side should do with one blob reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolveAs {
    /// Image data: replace the ref with the blob's bytes as standard base64.
    Base64,
    /// An `image_url`: replace the ref with the blob's bytes read as UTF-8 (a data URL).
    DataUrl,
}

/// A read-side callback: the replacement for one blob reference (`None`: keep the ref).
pub type Resolver<'a, E> = dyn FnMut(&JsStr, ResolveAs) -> Result<Option<JsStr>, E> + 'a;

/// omp's `resolvePersistedBlobRefs`: calls `resolve(ref, as)` for every blob reference in a
/// position omp restores on load (image `data` in `content`/`images`, never snapcompact
/// `frames`, which stay refs; `image_generation_call.result`; `image_url`) and stores what it
/// returns (`None`: leave the ref). Returns whether anything was replaced.
pub fn resolve_blob_refs<E>(v: &mut JsValue, resolve: &mut Resolver<'_, E>) -> Result<bool, E> {
    resolve_walk(v, None, resolve, 0)
}

fn resolve_walk<E>(
    v: &mut JsValue,
    key: Option<&[u8]>,
    resolve: &mut Resolver<'_, E>,
    depth: usize,
) -> Result<bool, E> {
    if depth > MAX_WALK_DEPTH {
        return Ok(false);
    }
    if key != Some(b"frames") && is_externalizable_image_position(v, key) {
        if let Some(JsValue::String(d)) = get(v, "data") {
            if is_blob_ref(&d.0) {
                let d = d.clone();
                return Ok(match resolve(&d, ResolveAs::Base64)? {
                    Some(new) => {
                        v.set("data", JsValue::String(new));
                        true
                    }
                    None => false,
                });
            }
        }
    }
    let mut changed = false;
    match v {
        JsValue::Array(items) => {
            for it in items.iter_mut() {
                changed |= resolve_walk(it, key, resolve, depth + 1)?;
            }
            return Ok(changed);
        }
        JsValue::Object(_) => {}
        _ => return Ok(false),
    }
    if type_is(v, "image_generation_call") {
        if let Some(JsValue::String(r)) = get(v, "result") {
            if is_blob_ref(&r.0) {
                let r = r.clone();
                if let Some(new) = resolve(&r, ResolveAs::Base64)? {
                    v.set("result", JsValue::String(new));
                    changed = true;
                }
            }
        }
    }
    if let Some(JsValue::String(u)) = get(v, "image_url") {
        if is_blob_ref(&u.0) {
            let u = u.clone();
            if let Some(new) = resolve(&u, ResolveAs::DataUrl)? {
                v.set("image_url", JsValue::String(new));
                changed = true;
            }
        }
    }
    if let JsValue::Object(members) = v {
        for (k, val) in members.iter_mut() {
            let kb = k.0.clone();
            changed |= resolve_walk(val, Some(&kb), resolve, depth + 1)?;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Blobs = Vec<(Vec<u8>, Option<String>)>;

    fn prep(json: &str) -> (String, Blobs) {
        let mut v = JsValue::parse(json.as_bytes()).expect("json");
        let mut blobs = Vec::new();
        let mut put = |b: BlobPut<'_>| -> Result<String, ()> {
            blobs.push((b.bytes.to_vec(), b.extension.clone()));
            Ok(format!("{:064x}", blobs.len()))
        };
        let changed = prepare_for_persistence(&mut v, &mut put).expect("no error");
        let out = if changed {
            String::from_utf8(v.to_json()).expect("utf8")
        } else {
            json.to_string()
        };
        (out, blobs)
    }

    #[test]
    fn deep_entries_on_a_small_stack() {
        // The walks stop at MAX_WALK_DEPTH levels, within a test thread's 2 MB stack
        // (unoptimized build); deeper levels are left as they are.
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let n = 100_000;
                let img = format!(
                    r#"{{"type":"image","data":"{}","mimeType":"image/png"}}"#,
                    "A".repeat(2048)
                );
                let src = format!(
                    r#"{{"content":{}{}{}}}"#,
                    r#"[{"content":"#.repeat(n),
                    img,
                    "}]".repeat(n)
                );
                let (out, blobs) = prep(&src);
                assert_eq!(out, src);
                assert!(blobs.is_empty());
                let mut v = JsValue::parse(src.as_bytes()).expect("json");
                let mut resolve =
                    |_: &JsStr, _: ResolveAs| -> Result<Option<JsStr>, ()> { Ok(None) };
                assert_eq!(resolve_blob_refs(&mut v, &mut resolve), Ok(false));
            })
            .expect("spawn")
            .join()
            .expect("no overflow");
    }

    #[test]
    fn long_strings_are_cut_to_exactly_the_limit() {
        let long = "a".repeat(MAX_PERSIST_CHARS + 1);
        let (out, _) = prep(&format!(
            r#"{{"type":"message","message":{{"role":"toolResult","content":"{long}","lineCount":1}}}}"#
        ));
        let v = JsValue::parse(out.as_bytes()).expect("json");
        let m = v.get("message").expect("message");
        let c = m
            .get("content")
            .and_then(JsValue::as_js_str)
            .expect("content");
        assert_eq!(c.utf16_len(), MAX_PERSIST_CHARS);
        assert!(c.0.ends_with(TRUNCATION_NOTICE.as_bytes()));
        assert_eq!(m.get("lineCount"), Some(&JsValue::Number(3.0)));
        // Exactly the limit: unchanged.
        let exact = "b".repeat(MAX_PERSIST_CHARS);
        let line = format!(r#"{{"t":"{exact}"}}"#);
        assert_eq!(prep(&line).0, line);
    }

    #[test]
    fn a_cut_never_splits_a_surrogate_pair() {
        let limit = MAX_PERSIST_CHARS - TRUNCATION_NOTICE.len();
        // limit-1 ASCII, then an emoji (2 units) straddling the cut.
        let text = format!("{}😀{}", "x".repeat(limit - 1), "y".repeat(100));
        let cut = truncate_for_persistence(&JsStr::from(text.as_str()));
        assert_eq!(cut.utf16_len(), MAX_PERSIST_CHARS - 1);
        assert!(cut.0.starts_with(&"x".repeat(limit - 1).into_bytes()));
        assert!(!String::from_utf8_lossy(&cut.0).contains('😀'));
    }

    #[test]
    fn signed_blocks_and_signature_keys_are_kept() {
        let long = "s".repeat(MAX_PERSIST_CHARS + 10);
        let line = format!(
            r#"{{"content":[{{"type":"thinking","thinking":"{long}","thinkingSignature":"sig"}}]}}"#
        );
        assert_eq!(prep(&line).0, line);
        let line = format!(r#"{{"x":{{"thoughtSignature":"{long}"}}}}"#);
        assert_eq!(prep(&line).0, line);
        let line = format!(
            r#"{{"type":"anthropicServerTool","block":{{"type":"server_tool_use","name":"web_search","id":"i","input":"{long}"}}}}"#
        );
        assert_eq!(prep(&line).0, line);
        // An unsigned thinking block is cut.
        let line = format!(r#"{{"content":[{{"type":"thinking","thinking":"{long}"}}]}}"#);
        assert_ne!(prep(&line).0, line);
    }

    #[test]
    fn jsonl_events_go_partial_json_stays() {
        let (out, _) =
            prep(r#"{"a":{"jsonlEvents":[1],"partialJson":"{","content":"x\ny","lineCount":9}}"#);
        assert_eq!(
            out,
            r#"{"a":{"partialJson":"{","content":"x\ny","lineCount":2}}"#
        );
    }

    #[test]
    fn images_go_to_blobs_in_omp_positions_only() {
        let data = "QUJD".repeat(256); // 1024 characters
        let small = "QUJD".repeat(255);
        let (out, blobs) = prep(&format!(
            r#"{{"message":{{"content":[{{"type":"image","data":"{data}","mimeType":"image/png"}},{{"type":"image","data":"{small}","mimeType":"image/png"}}],"details":{{"img":{{"type":"image","data":"{data}"}}}}}}}}"#
        ));
        assert_eq!(blobs.len(), 1);
        assert_eq!(blobs[0].0, b"ABC".repeat(256));
        assert_eq!(blobs[0].1.as_deref(), Some("png"));
        assert!(out.contains(&format!(
            r#"{{"type":"image","data":"blob:sha256:{:064x}","mimeType":"image/png"}}"#,
            1
        )));
        assert!(out.contains(&small));
        assert!(out.contains(&format!(r#""img":{{"type":"image","data":"{data}"}}"#)));
        // images[] and image_url data URLs.
        let (out, blobs) = prep(&format!(
            r#"{{"images":[{{"data":"{data}","mimeType":"image/webp"}}],"x":{{"image_url":"data:image/png;base64,AA"}}}}"#
        ));
        assert_eq!(blobs.len(), 2);
        assert_eq!(blobs[1].0, b"data:image/png;base64,AA");
        assert!(out.contains(r#""image_url":"blob:sha256:"#));
    }

    #[test]
    fn replayed_reasoning_signatures_are_dropped() {
        let sig = r#"{\"type\":\"reasoning\",\"id\":\"rs_1\",\"encrypted_content\":\"ENC\"}"#;
        let line = format!(
            r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","thinkingSignature":"{sig}"}}],"providerPayload":{{"type":"openaiResponsesHistory","items":[{{"type":"reasoning","id":"rs_1","encrypted_content":"ENC"}}]}}}}}}"#
        );
        let (out, _) = prep(&line);
        assert!(!out.contains("thinkingSignature"), "{out}");
    }

    #[test]
    fn resolution_restores_refs_except_frames() {
        let r = format!("blob:sha256:{}", "a".repeat(64));
        let mut v = JsValue::parse(
            format!(r#"{{"content":[{{"type":"image","data":"{r}"}}],"frames":[{{"data":"{r}","mimeType":"image/png"}}],"u":{{"image_url":"{r}"}}}}"#).as_bytes(),
        )
        .expect("json");
        let mut seen = Vec::new();
        let mut res = |s: &JsStr, how: ResolveAs| -> Result<Option<JsStr>, ()> {
            seen.push((s.clone(), how));
            Ok(Some(JsStr::from(match how {
                ResolveAs::Base64 => "QUJD",
                ResolveAs::DataUrl => "data:image/png;base64,QUJD",
            })))
        };
        assert!(resolve_blob_refs(&mut v, &mut res).expect("ok"));
        assert_eq!(seen.len(), 2);
        let out = String::from_utf8(v.to_json()).expect("utf8");
        assert!(out.contains(r#"{"type":"image","data":"QUJD"}"#));
        assert!(out.contains(&format!(r#""frames":[{{"data":"{r}""#)));
        assert!(out.contains(r#""image_url":"data:image/png;base64,QUJD""#));
    }
}
