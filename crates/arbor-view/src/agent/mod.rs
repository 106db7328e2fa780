//! What an agent reads of a session: the data `arbor mcp`'s reading tools serve, as
//! serde-serializable structs (with the `schema` feature, their JSON Schemas too).
//!
//! - [`messages_window`]: a window of the messages on the path from the root to a leaf, from
//!   an entry or an offset, older or newer, tool output and thinking folded unless asked,
//!   images as placeholders, bounded by a count and a character budget, with the offsets to
//!   continue.
//! - [`context_page`]: the context the model saw at an entry (exactly `arbor context`'s JSON),
//!   its oldest messages left out to fit a token budget (pi's estimate).
//! - [`outline`]: the tree as a compact outline (branch points, labels, leaves, summaries and
//!   compactions; runs of single-child entries folded), the one `arbor tree` draws.
//! - [`tool_calls`] and [`file_edits`]: the tool calls of a session, and the files its tools
//!   wrote or edited.
//!
//! Each reads a loaded [`SessionDoc`]; the text it returns is the session's, not redacted
//! (the caller redacts what it serves) and not sanitized for a terminal.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let jsonl = concat!(
//!     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//!     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
//!     r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}"#, "\n",
//! );
//! let doc = arbor_core::SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec()))?;
//! let w = arbor_view::agent::messages_window(&doc, &arbor_view::agent::WindowOpts::default())?;
//! assert_eq!(w.total, 2);
//! assert_eq!(w.messages[1].text, "hello");
//! # Ok(())
//! # }
//! ```
mod calls;
mod context;
mod messages;
mod outline;

pub use calls::{
    edit_path, file_edits, may_name, tool_calls, CallsOpts, FileEdit, ToolCall, ToolCalls,
    EDIT_TOOLS,
};
pub use context::{context_page, session_context, to_serde, ContextOpts, ContextPage, MAX_DEPTH};
pub use messages::{messages_window, Direction, MessageWindow, WindowMessage, WindowOpts};
pub use outline::{
    chain_lines, chains, fold_text, outline, Chain, ChainLine, Outline, OutlineNode, OutlineOpts,
};

use arbor_core::doc::SessionDoc;

/// A question about a session that has no answer: the message names what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// No entry has this id.
    #[error("no entry with id {0:?} in this session")]
    NoEntry(String),
    /// The offset is past the end of the path's messages.
    #[error("offset {offset} is past the end: the path has {total} messages (offsets 0 to {last})", last = total.saturating_sub(1))]
    Offset {
        /// The offset asked.
        offset: usize,
        /// How many messages the path has.
        total: usize,
    },
}

/// The index of the entry with id `id`.
///
/// # Errors
/// [`AgentError::NoEntry`].
pub fn entry_index(doc: &SessionDoc, id: &str) -> Result<usize, AgentError> {
    doc.index()
        .get(id)
        .ok_or_else(|| AgentError::NoEntry(id.to_string()))
}

/// The leaf of the path through entry `i`: the session's current leaf when `i` is on its
/// path, otherwise the newest leaf below `i` (at each branch point the last child, pi's
/// newest).
pub fn leaf_through(doc: &SessionDoc, i: usize) -> usize {
    if let Some(l) = doc.index().leaf {
        if doc.index().path(doc, l).entries.contains(&i) {
            return l;
        }
    }
    let tree = doc.index().tree(doc);
    let mut at = i;
    let mut seen = vec![false; doc.entries().len()];
    while let Some(&last) = tree.children.get(at).and_then(|c| c.last()) {
        if std::mem::replace(&mut seen[last], true) {
            break;
        }
        at = last;
    }
    at
}

/// The id of entry `i` as text (pi's id of a non-string id, `""` for none).
pub(crate) fn id_of(doc: &SessionDoc, i: usize) -> String {
    let e = &doc.entries()[i];
    e.id_text(doc.line(&e.line)).into_owned()
}
