//! arbor-core: the pi / omp session format in Rust.
//!
//! Pure logic, no filesystem: the entry model, the lossless JSONL codec, migrations v1→v3,
//! the tree index, context building as pi's `buildSessionContext`, and LLM conversion.
//! (`arbor-store` reads and writes the files; `docs/architecture.md` maps every module.)
//!
//! A session from its bytes: the document keeps every byte, the tree indexes the entries, and
//! the context is what pi would send to the model for the leaf.
//!
//! ```
//! use arbor_core::{build_session_context, LeafSel, SessionDoc};
//! use std::sync::Arc;
//!
//! let jsonl = concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//!     r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
//!     r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}"#, "\n",
//! );
//! let doc = SessionDoc::parse(Arc::new(jsonl.as_bytes().to_vec()))?;
//! assert_eq!(doc.entries().len(), 2);
//!
//! // The tree: roots and children in pi's getTree() order.
//! let tree = doc.index().tree(&doc);
//! assert_eq!(tree.roots.len(), 1);
//!
//! // The context for the leaf, written exactly as pi's JSON.stringify would write it.
//! let ctx = build_session_context(&doc, LeafSel::Current);
//! let mut json = Vec::new();
//! ctx.write_json(&doc, &mut json);
//! assert!(String::from_utf8_lossy(&json).starts_with(r#"{"messages":[{"role":"user","content":"hi","timestamp":1},"#));
//! # Ok::<(), arbor_core::NotASession>(())
//! ```
//!
//! # The public API
//!
//! - A session: [`SessionDoc`] ([`doc`]: its bytes, header, entries and [`Dialect`]), each
//!   line's envelope ([`entry`]: [`Entry`], [`EntryType`], [`Role`], [`LineRef`]), the header
//!   line ([`header`]), the tree ([`tree`]).
//! - What pi sends to the model: [`build_session_context`] ([`context`]: [`LeafSel`],
//!   [`SessionContext`]), kept current while a session grows ([`ContextCache`]).
//! - The format's rules: migrations v1→v3 ([`migrate`], [`Migration`]), omp's write-side
//!   transforms ([`persist`]), its blob references ([`blobref`]) and title slot ([`title`]).
//! - JavaScript as pi computes it: JSON with `JSON.parse` / `JSON.stringify` semantics
//!   ([`json`]), `Date` ([`time`]), `ToString`, `trim`, locale order and V8's sort ([`js`]).
//! - With the `typed` feature: serde views of messages (`typed`, `SessionDoc::message_as`).
//!
//! # Cargo features
//!
//! - `typed` (default): the `typed` module and `SessionDoc::message_as` (the `serde` and
//!   `serde_json` dependencies). Everything else reads and writes JSON with arbor's own
//!   codec ([`json`]) and needs neither.
#![deny(missing_docs)]

pub mod blobref;
pub mod context;
pub mod doc;
pub mod entry;
pub mod header;
pub mod js;
mod js_sort;
pub mod json;
mod live;
pub mod migrate;
pub mod persist;
pub mod time;
pub mod title;
pub mod tree;
#[cfg(feature = "typed")]
pub mod typed;
mod v8date;

/// Whether more than one core is available to this process, asked once: the standard
/// library's answer reads the cgroup's CPU quota files on every call, and a load asks for
/// every file and every output.
pub fn two_cores() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

pub use context::{build_session_context, LeafSel, SessionContext};
pub use doc::{Dialect, NotASession, SessionDoc, SharedBytes};
pub use entry::{Entry, EntryType, LineRef, Role};
pub use live::{ContextCache, ContextChange};
pub use migrate::Migration;
