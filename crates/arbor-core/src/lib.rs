//! arbor-core: the pi / omp session format in Rust.
//!
//! Pure logic, no filesystem: the entry model, the lossless JSONL codec, migrations v1→v3,
//! the tree index, context building as pi's `buildSessionContext`, and LLM conversion.
#![deny(missing_docs)]

pub mod blobref;
pub mod context;
pub mod context_omp;
pub mod doc;
pub mod entry;
pub mod json;
pub mod live;
pub mod llm;
pub mod migrate;
pub mod persist;
pub mod time;
pub mod title;
pub mod tree;

/// Whether more than one core is available to this process, asked once: the standard
/// library's answer reads the cgroup's CPU quota files on every call (some 0.1 ms each), and a
/// load asks for every file and every output.
pub fn two_cores() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

pub use context::{build_session_context, LeafSel, SessionContext};
pub use doc::{Dialect, NotASession, SessionDoc, SharedBytes};
pub use entry::{Entry, EntryType, LineRef, Role};
pub use live::{ContextCache, ContextChange};
