//! The tool calls of a session ([`tool_calls`]) and the files its tools wrote or edited
//! ([`file_edits`]).
//!
//! A call is a `toolCall` block of an assistant message (pi's and omp's shape: `{type:
//! "toolCall", id, name, arguments}`); its result is the `toolResult` message whose
//! `toolCallId` is the call's `id` (`isError` says whether it failed).
use super::id_of;
use arbor_core::doc::SessionDoc;
use arbor_core::entry::{EntryType, Fields, Role};
use arbor_core::json::JsValue;
use arbor_core::json::ValueKind;
use std::collections::HashMap;

/// The tools that write files, by name: pi's `edit` (`{path, oldText, newText}` or `{path,
/// edits}`) and `write` (`{path, content}`); omp's `edit` (`{path, old_string,
/// new_string}`, `{path, edits: [{op, rename, diff}]}`, or a patch as `{input}`), `write`
/// and `ast_edit` (`{ops, paths: [...]}`).
pub const EDIT_TOOLS: &[&str] = &["edit", "write", "ast_edit"];

/// What [`tool_calls`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallsOpts<'a> {
    /// Only calls of this tool.
    pub name: Option<&'a str>,
    /// Only calls on the path from the root to the current leaf.
    pub current_only: bool,
    /// Skip this many (of those that match), oldest first.
    pub offset: usize,
    /// At most this many.
    pub limit: usize,
    /// Each call's arguments cut to one line of this many characters.
    pub args_max: usize,
}

impl Default for CallsOpts<'_> {
    /// Every call, the first 100, arguments cut to 500 characters.
    fn default() -> Self {
        CallsOpts {
            name: None,
            current_only: false,
            offset: 0,
            limit: 100,
            args_max: 500,
        }
    }
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCall {
    /// The assistant message's entry id.
    pub entry_id: String,
    /// Its timestamp (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The call's id (what its result names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool.
    pub name: String,
    /// The arguments as JSON on one line, cut to the asked length (`…` at the cut).
    pub arguments: String,
    /// Whether its result was an error (none: no result found, as for a call cut short).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<bool>,
    /// The entry id of its result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_entry_id: Option<String>,
    /// On the path from the root to the current leaf.
    pub on_current_path: bool,
}

/// A page of a session's tool calls.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCalls {
    /// How many calls match (all pages).
    pub total: usize,
    /// This page, oldest first (file order).
    pub calls: Vec<ToolCall>,
    /// The offset of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// One file a tool wrote or edited.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileEdit {
    /// The file, as the call named it (relative paths are relative to the session's cwd).
    pub path: String,
    /// The tool (`edit`, `write`, `ast_edit`).
    pub tool: String,
    /// The assistant message's entry id.
    pub entry_id: String,
    /// Its timestamp (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Whether the call failed (none: no result found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<bool>,
    /// On the path from the root to the current leaf.
    pub on_current_path: bool,
}

/// Tool results by the call id they answer: (is an error, result entry).
fn results(doc: &SessionDoc) -> HashMap<String, (bool, usize)> {
    let mut out = HashMap::new();
    for (i, e) in doc.entries().iter().enumerate() {
        if e.etype != EntryType::Message || e.role != Some(Role::ToolResult) {
            continue;
        }
        let line = doc.line(&e.line);
        if let Some(id) = e.message_str(line, "toolCallId") {
            let error = e
                .message
                .as_ref()
                .and_then(|m| m.get(line, "isError"))
                .is_some_and(|(raw, _)| raw == b"true");
            out.insert(id.into_owned(), (error, i));
        }
    }
    out
}

/// Every `toolCall` block of the session's assistant messages, in file order: (entry, the
/// block's bytes, its members). Read without a DOM ([`crate::snippet::blocks`]): a block's
/// arguments are parsed only by who needs them.
fn each_call(doc: &SessionDoc, mut f: impl FnMut(usize, &[u8], &Fields)) {
    for (i, e) in doc.entries().iter().enumerate() {
        if e.etype != EntryType::Message || e.role != Some(Role::Assistant) {
            continue;
        }
        let line = doc.line(&e.line);
        let Some((raw, ValueKind::Array)) = e.message.as_ref().and_then(|m| m.get(line, "content"))
        else {
            continue;
        };
        // Most assistant messages call no tool: a scan, not a parse.
        if memchr::memmem::find(raw, b"toolCall").is_none() {
            continue;
        }
        for (elem, fields) in crate::snippet::blocks(raw) {
            if fields.str(elem, "type").as_deref() == Some("toolCall") {
                f(i, elem, &fields);
            }
        }
    }
}

fn on_path(doc: &SessionDoc) -> Vec<bool> {
    let mut on = vec![false; doc.entries().len()];
    if let Some(l) = doc.index().leaf {
        for i in doc.index().path(doc, l).entries {
            on[i] = true;
        }
    }
    on
}

fn str_of(v: Option<&JsValue>) -> Option<String> {
    v.and_then(JsValue::as_str_lossy).map(|s| s.into_owned())
}

/// The tool calls of a session, oldest first (file order, every branch), as `opts` asks.
///
/// ```
/// let jsonl = concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"timestamp":1}}"#, "\n",
///     r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"no"}],"isError":true,"timestamp":2}}"#, "\n",
/// );
/// let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec())).unwrap();
/// let calls = arbor_view::agent::tool_calls(&doc, &Default::default());
/// assert_eq!(calls.calls[0].name, "bash");
/// assert_eq!(calls.calls[0].arguments, r#"{"command":"ls"}"#);
/// assert_eq!(calls.calls[0].error, Some(true));
/// ```
pub fn tool_calls(doc: &SessionDoc, opts: &CallsOpts<'_>) -> ToolCalls {
    let results = results(doc);
    let on = on_path(doc);
    let mut total = 0;
    let mut calls = Vec::new();
    each_call(doc, |i, elem, b| {
        let name = b.str(elem, "name").unwrap_or_default().into_owned();
        if opts.name.is_some_and(|n| n != name) || (opts.current_only && !on[i]) {
            return;
        }
        total += 1;
        if total <= opts.offset || calls.len() >= opts.limit {
            return;
        }
        let call_id = b.str(elem, "id").map(|c| c.into_owned());
        let result = call_id.as_deref().and_then(|c| results.get(c));
        // The arguments as `JSON.stringify` spells them, from their bytes.
        let args = b
            .get(elem, "arguments")
            .map(|(raw, _)| {
                let mut out = Vec::new();
                arbor_core::json::write_canonical(raw, &mut out);
                String::from_utf8_lossy(&out).into_owned()
            })
            .unwrap_or_default();
        calls.push(ToolCall {
            entry_id: id_of(doc, i),
            timestamp: doc.entries()[i].timestamp.as_deref().map(str::to_string),
            call_id,
            name,
            arguments: crate::render::one_line(&args, opts.args_max),
            error: result.map(|r| r.0),
            result_entry_id: result.map(|r| id_of(doc, r.1)),
            on_current_path: on[i],
        });
    });
    let shown = opts.offset + calls.len();
    ToolCalls {
        total,
        calls,
        next_offset: (shown < total).then_some(shown),
    }
}

/// The files a call of a tool in [`EDIT_TOOLS`] with these arguments writes: `path`,
/// `file_path`, `paths`, the renames of omp's patch edits, the files a patch `input` names
/// (`*** Add File: P`, `*** Update File: P`, `*** Delete File: P`, `*** Move to: P`).
///
/// ```
/// use arbor_core::json::JsValue;
/// let args = JsValue::parse(br#"{"path":"a.rs","edits":[{"op":"update","rename":"b.rs"}]}"#).unwrap();
/// assert_eq!(arbor_view::agent::edit_path(&args), ["a.rs", "b.rs"]);
/// let args = JsValue::parse(br#"{"input":"*** Begin Patch\n*** Update File: src/x.rs\n@@\n*** End Patch"}"#).unwrap();
/// assert_eq!(arbor_view::agent::edit_path(&args), ["src/x.rs"]);
/// ```
pub fn edit_path(args: &JsValue) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in ["path", "file_path"] {
        out.extend(str_of(args.get(k)));
    }
    if let Some(JsValue::Array(paths)) = args.get("paths") {
        out.extend(paths.iter().filter_map(|p| str_of(Some(p))));
    }
    if let Some(JsValue::Array(edits)) = args.get("edits") {
        out.extend(edits.iter().filter_map(|e| str_of(e.get("rename"))));
    }
    if let Some(input) = str_of(args.get("input")) {
        for l in input.lines() {
            for mark in [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ] {
                if let Some(p) = l.strip_prefix(mark) {
                    out.push(p.trim().to_string());
                }
            }
        }
    }
    out.retain(|p| !p.is_empty());
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The files the session's tools wrote or edited (calls of [`EDIT_TOOLS`]), oldest first,
/// every branch; with `path`, only those whose path contains it.
///
/// ```
/// let jsonl = concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"src/lib.rs","oldText":"a","newText":"b"}}],"timestamp":1}}"#, "\n",
/// );
/// let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec())).unwrap();
/// let edits = arbor_view::agent::file_edits(&doc, Some("lib.rs"));
/// assert_eq!(edits[0].path, "src/lib.rs");
/// assert!(arbor_view::agent::file_edits(&doc, Some("main.rs")).is_empty());
/// ```
pub fn file_edits(doc: &SessionDoc, path: Option<&str>) -> Vec<FileEdit> {
    let results = results(doc);
    let on = on_path(doc);
    let mut out = Vec::new();
    each_call(doc, |i, elem, b| {
        let name = b.str(elem, "name").unwrap_or_default().into_owned();
        if !EDIT_TOOLS.contains(&name.as_str()) {
            return;
        }
        let Some(Ok(args)) = b.get(elem, "arguments").map(|(raw, _)| JsValue::parse(raw)) else {
            return;
        };
        let result = b
            .str(elem, "id")
            .and_then(|c| results.get(c.as_ref()).copied());
        for p in edit_path(&args) {
            if path.is_some_and(|want| !p.contains(want)) {
                continue;
            }
            out.push(FileEdit {
                path: p,
                tool: name.clone(),
                entry_id: id_of(doc, i),
                timestamp: doc.entries()[i].timestamp.as_deref().map(str::to_string),
                error: result.map(|r| r.0),
                on_current_path: on[i],
            });
        }
    });
    out
}

/// Whether a session file's bytes may hold a call naming `path` (a quick test before a file
/// is parsed): the text as it is, or with `/` written `\/`. Always true for a text that JSON
/// might spell otherwise (`"`, `\`, control or non-ASCII characters).
pub fn may_name(bytes: &[u8], path: &str) -> bool {
    if path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control() || !c.is_ascii())
    {
        return true;
    }
    memchr::memmem::find(bytes, path.as_bytes()).is_some()
        || (path.contains('/')
            && memchr::memmem::find(bytes, path.replace('/', "\\/").as_bytes()).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> SessionDoc {
        let s = concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","message":{"role":"user","content":"go","timestamp":0}}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"write","arguments":{"path":"src/a.rs","content":"fn a() {}"}},{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"cargo build"}}],"timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":"r1","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"write","content":[],"isError":false,"timestamp":2}}"#,
            "\n",
            r#"{"type":"message","id":"r2","parentId":"r1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[],"isError":true,"timestamp":3}}"#,
            "\n",
            r#"{"type":"message","id":"b","parentId":"u","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c3","name":"edit","arguments":{"path":"src\/b.rs","edits":[{"op":"update","rename":"src/c.rs"}]}}],"timestamp":4}}"#,
            "\n",
            r#"{"type":"message","id":"u2","parentId":"r2","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"thanks","timestamp":5}}"#,
            "\n",
        );
        SessionDoc::parse(std::sync::Arc::new(s.as_bytes().to_vec())).expect("session")
    }

    #[test]
    fn calls_with_their_results_and_branches() {
        let d = doc();
        let all = tool_calls(&d, &CallsOpts::default());
        assert_eq!(all.total, 3);
        let got: Vec<(&str, &str, Option<bool>, bool)> = all
            .calls
            .iter()
            .map(|c| {
                (
                    c.entry_id.as_str(),
                    c.name.as_str(),
                    c.error,
                    c.on_current_path,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", "write", Some(false), true),
                ("a", "bash", Some(true), true),
                ("b", "edit", None, false)
            ]
        );
        let current = tool_calls(
            &d,
            &CallsOpts {
                current_only: true,
                offset: 1,
                limit: 1,
                ..Default::default()
            },
        );
        assert_eq!((current.total, current.calls.len()), (2, 1));
        assert_eq!(current.calls[0].name, "bash");
        assert_eq!(current.next_offset, None);
        let first = tool_calls(
            &d,
            &CallsOpts {
                limit: 1,
                args_max: 10,
                ..Default::default()
            },
        );
        assert_eq!(first.next_offset, Some(1));
        assert_eq!(first.calls[0].arguments, "{\"path\":\"…");
    }

    #[test]
    fn edits_every_branch_and_the_path_filter() {
        let d = doc();
        let e = file_edits(&d, None);
        let got: Vec<(&str, &str, bool)> = e
            .iter()
            .map(|f| (f.path.as_str(), f.tool.as_str(), f.on_current_path))
            .collect();
        assert_eq!(
            got,
            [
                ("src/a.rs", "write", true),
                ("src/b.rs", "edit", false),
                ("src/c.rs", "edit", false)
            ]
        );
        assert_eq!(file_edits(&d, Some("b.rs")).len(), 1);
        // The quick test finds a path written with `\/`, and never rules out what it cannot
        // read.
        assert!(may_name(d.base_bytes(), "src/b.rs"));
        assert!(!may_name(d.base_bytes(), "src/z.rs"));
        assert!(may_name(b"", "caf\u{e9}"));
    }
}
