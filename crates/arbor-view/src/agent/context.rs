//! The context the model saw at an entry, cut to a token budget ([`context_page`]), and the
//! one way to build a session's context with its blob store ([`session_context`]).
use super::id_of;
use arbor_core::context::{
    build_session_context_with, estimate_tokens, FrameBlobs, LeafSel, OmpContext, OmpVersion,
    SessionContext,
};
use arbor_core::doc::{Dialect, SessionDoc};
use arbor_core::json::JsValue;
use std::path::Path;

/// The context of a leaf by the rules of the session's tool (what `arbor context` prints):
/// omp files get their blob store (`arbor_store::blobs::blob_dir_for_session` of `path`,
/// `agent` the agent directory given instead of the default one) for snapcompact frames
/// kept as blob references, and omp's rules of version `omp`.
pub fn session_context(
    doc: &SessionDoc,
    leaf: LeafSel<'_>,
    path: &Path,
    agent: Option<&Path>,
    omp: OmpVersion,
) -> SessionContext {
    let store = (doc.dialect() == Dialect::Omp).then(|| {
        let dir = arbor_store::blobs::blob_dir_for_session(path, agent);
        arbor_store::blobs::BlobStore::new(dir)
    });
    let blobs = store.as_ref().map(|s| s as &dyn FrameBlobs);
    match doc.dialect() {
        Dialect::Omp => SessionContext::Omp(OmpContext::build_for(doc, leaf, blobs, omp)),
        Dialect::Pi => build_session_context_with(doc, leaf, blobs),
    }
}

/// What [`context_page`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOpts {
    /// Keep the newest messages whose estimated tokens (pi's `estimateTokens`,
    /// [`estimate_tokens`]) fit in this many; the older ones are left out.
    pub budget_tokens: u64,
    /// Images' `data` as it is (base64); otherwise replaced by `[image: MIME, N bytes]`.
    pub images: bool,
    /// Only the messages before this index (the `omitted_messages` of a page: the page
    /// before it); `None`: up to the newest.
    pub before: Option<usize>,
}

impl Default for ContextOpts {
    /// 10,000 tokens, images as placeholders.
    fn default() -> Self {
        ContextOpts {
            budget_tokens: 10_000,
            images: false,
            before: None,
        }
    }
}

/// The newest part of a context.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextPage {
    /// The id of the leaf (the entry the context is at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    /// Whose rules built it: `pi` or `omp`.
    pub rules: String,
    /// How many messages the whole context has.
    pub total_messages: usize,
    /// The oldest messages left out by the budget (the context's first `omitted_messages`;
    /// pass it as `before` for the page before).
    pub omitted_messages: usize,
    /// The newest messages left out because `before` asked for an older page.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub newer_messages: usize,
    /// About how many tokens those hold (their JSON's bytes over four: not read to count).
    pub omitted_tokens_about: u64,
    /// The estimated tokens of the messages kept (pi's `estimateTokens`, chars / 4).
    pub kept_tokens: u64,
    /// `arbor context --json`'s object (`messages`, `thinkingLevel`, `model`, ...) with only
    /// the kept messages in `messages`.
    pub context: serde_json::Value,
}

/// The newest messages of `ctx` (built for `doc`) within `opts.budget_tokens`, in
/// `arbor context`'s JSON. The newest message alone over the budget leaves `messages`
/// empty (and says it was left out).
///
/// ```
/// use arbor_core::context::{build_session_context, LeafSel};
/// let jsonl = concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a long question, forty characters or so","timestamp":1}}"#, "\n",
///     r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"short","timestamp":2}}"#, "\n",
/// );
/// let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec())).unwrap();
/// let ctx = build_session_context(&doc, LeafSel::Current);
/// let opts = arbor_view::agent::ContextOpts { budget_tokens: 5, ..Default::default() };
/// let page = arbor_view::agent::context_page(&doc, &ctx, &opts);
/// assert_eq!((page.total_messages, page.omitted_messages, page.kept_tokens), (2, 1, 2));
/// assert_eq!(page.context["messages"][0]["content"], "short");
/// ```
pub fn context_page(doc: &SessionDoc, ctx: &SessionContext, opts: &ContextOpts) -> ContextPage {
    let n = ctx.message_count();
    let end = opts.before.map_or(n, |b| b.min(n));
    let mut from = end;
    let mut kept = 0u64;
    let mut buf = Vec::new();
    while from > 0 {
        buf.clear();
        ctx.write_message_at(doc, from - 1, &mut buf);
        let t = match JsValue::parse(&buf) {
            Ok(v) => estimate_tokens(&v),
            Err(_) => (buf.len() as u64).div_ceil(4),
        };
        if kept + t > opts.budget_tokens {
            break;
        }
        kept += t;
        from -= 1;
    }
    let omitted: u64 = (0..from)
        .map(|k| match ctx.message_entry(k) {
            Some(i) => doc.entry_line(i).len() as u64,
            None => {
                buf.clear();
                ctx.write_message_at(doc, k, &mut buf);
                buf.len() as u64
            }
        })
        .sum::<u64>()
        .div_ceil(4);
    let mut json = Vec::new();
    ctx.write_json_range(doc, from, end, &mut json);
    let context = JsValue::parse(&json)
        .map(|v| to_serde(&v, opts.images))
        .unwrap_or(serde_json::Value::Null);
    let leaf = ctx.path().last().map(|&l| id_of(doc, l));
    ContextPage {
        leaf,
        rules: match ctx.dialect() {
            Dialect::Pi => "pi",
            Dialect::Omp => "omp",
        }
        .to_string(),
        total_messages: n,
        omitted_messages: from,
        newer_messages: n - end,
        omitted_tokens_about: omitted,
        kept_tokens: kept,
        context,
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How deep [`to_serde`] follows arrays and objects: a value nested deeper (pi and arbor
/// read a line nested a million levels deep) is replaced by a string saying so, since
/// serde_json's values, and whoever reads them, recurse, and such a value would overflow a
/// thread's stack (it crashed the server). Far deeper than what the tools write: the deepest
/// line of the goldens and the demo sessions is 6 levels.
pub const MAX_DEPTH: usize = 100;

/// A JS value as serde_json's (strings lossy: a lone surrogate, which serde_json cannot
/// hold, becomes U+FFFD), numbers as serde_json reads JS's printing of them; with `images`
/// false, an image block's `data` replaced by `[image: MIME, N bytes]`; arrays and objects
/// below [`MAX_DEPTH`] levels replaced by `"[nested deeper than 100 levels: left out]"`.
pub fn to_serde(v: &JsValue, images: bool) -> serde_json::Value {
    to_serde_at(v, images, 0)
}

fn to_serde_at(v: &JsValue, images: bool, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match v {
        JsValue::Array(_) | JsValue::Object(_) if depth >= MAX_DEPTH => {
            Value::String(format!("[nested deeper than {MAX_DEPTH} levels: left out]"))
        }
        JsValue::Null => Value::Null,
        JsValue::Bool(b) => Value::Bool(*b),
        // The number as JS prints it, read as serde_json reads that text (an integer
        // printed without exponent within u64's range is an integer).
        JsValue::Number(n) => {
            let mut text = Vec::new();
            arbor_core::json::write_js_number(*n, &mut text);
            serde_json::from_slice::<serde_json::Number>(&text).map_or(Value::Null, Value::Number)
        }
        JsValue::String(s) => Value::String(s.to_string_lossy().into_owned()),
        JsValue::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| to_serde_at(x, images, depth + 1))
                .collect(),
        ),
        JsValue::Object(members) => {
            let is_image = !images
                && matches!(
                    v.get("type").and_then(JsValue::as_str_lossy).as_deref(),
                    Some("image")
                );
            let mut map = serde_json::Map::with_capacity(members.len());
            for (k, x) in members {
                let key = k.to_string_lossy().into_owned();
                let value = match (is_image, key.as_str(), x) {
                    (true, "data", JsValue::String(_)) => {
                        Value::String(crate::render::image_placeholder(v))
                    }
                    _ => to_serde_at(x, images, depth + 1),
                };
                map.insert(key, value);
            }
            Value::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_core::context::build_session_context;

    fn doc(lines: &[&str]) -> SessionDoc {
        let mut s = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        for l in lines {
            s.push('\n');
            s.push_str(l);
        }
        SessionDoc::parse(std::sync::Arc::new(s.into_bytes())).expect("session")
    }

    /// Without a budget in the way, the page's context is `arbor context`'s JSON exactly
    /// (the same bytes, read back).
    #[test]
    fn a_whole_context_is_write_json() {
        let d = doc(&[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"model_change","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","provider":"p","modelId":"m"}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"p","model":"m","usage":{"input":1.5},"timestamp":3}}"#,
        ]);
        let ctx = build_session_context(&d, LeafSel::Current);
        let page = context_page(
            &d,
            &ctx,
            &ContextOpts {
                budget_tokens: u64::MAX,
                images: true,
                before: None,
            },
        );
        let mut want = Vec::new();
        ctx.write_json(&d, &mut want);
        let want: serde_json::Value = serde_json::from_slice(&want).expect("json");
        assert_eq!(page.context, want);
        assert_eq!(page.omitted_messages, 0);
        assert_eq!(page.kept_tokens, 2);
        assert_eq!(page.leaf.as_deref(), Some("c"));
    }

    #[test]
    fn images_are_placeholders_and_a_budget_of_nothing_keeps_nothing() {
        let d = doc(&[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"image","data":"AAAAAAAA","mimeType":"image/png"}],"timestamp":1}}"#,
        ]);
        let ctx = build_session_context(&d, LeafSel::Current);
        let page = context_page(&d, &ctx, &ContextOpts::default());
        assert_eq!(
            page.context["messages"][0]["content"][0]["data"],
            "[image: image/png, 6 bytes]"
        );
        assert_eq!(page.kept_tokens, 1200);
        let page = context_page(
            &d,
            &ctx,
            &ContextOpts {
                budget_tokens: 0,
                ..Default::default()
            },
        );
        assert_eq!(page.omitted_messages, 1);
        assert_eq!(page.context["messages"], serde_json::json!([]));
        assert!(page.omitted_tokens_about > 0);
    }

    /// Pages walked with `before` (each page's `omitted_messages`) give every message of the
    /// context once, newest page first.
    #[test]
    fn pages_before_pages_cover_the_context() {
        let mut lines = Vec::new();
        let mut parent = "null".to_string();
        for k in 0..30 {
            lines.push(format!(
                r#"{{"type":"message","id":"m{k}","parentId":{parent},"timestamp":"2026-01-01T00:00:{k:02}.000Z","message":{{"role":"user","content":"{}","timestamp":{k}}}}}"#,
                "x".repeat(4 * (k % 7 + 1))
            ));
            parent = format!("\"m{k}\"");
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let d = doc(&refs);
        let ctx = build_session_context(&d, LeafSel::Current);
        let mut before = None;
        let mut seen: Vec<String> = Vec::new();
        loop {
            let page = context_page(
                &d,
                &ctx,
                &ContextOpts {
                    budget_tokens: 10,
                    images: false,
                    before,
                },
            );
            assert!(page.kept_tokens <= 10);
            let mut texts: Vec<String> = page.context["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| m["timestamp"].to_string())
                .collect();
            assert!(!texts.is_empty());
            texts.extend(seen);
            seen = texts;
            if page.omitted_messages == 0 {
                break;
            }
            before = Some(page.omitted_messages);
        }
        let want: Vec<String> = (0..30).map(|k| k.to_string()).collect();
        assert_eq!(seen, want);
    }
}
