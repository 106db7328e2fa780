//! arbor-index: a rebuildable SQLite catalog of pi / omp session files, full-text search
//! across sessions, and omp's prompt history.
//!
//! The JSONL files stay the only truth (docs/design-notes.md, decision 6): [`Catalog`] keeps one row per
//! session file with a fingerprint of the indexed prefix (size, mtime, inode, a hash of the
//! first 4 KB, the byte offset reached and a hash of the last indexed line), pi's
//! `SessionInfo` fields, and what listing and resuming need (name or title, parent session,
//! branch count, labels, models, token and cost totals). A refresh `stat`s every file; an
//! appended file is read from its last indexed byte only, a file whose indexed prefix changed
//! is indexed again, a deleted file is dropped. Files are read in bounded memory on worker
//! threads; rows are written on the calling thread, in WAL mode.
//!
//! Texts (user and assistant text, session names, labels, compaction and branch summaries;
//! thinking and tool output on request) go to an FTS5 index: [`Catalog::search`].
//!
//! [`history::History`] reads and writes omp's `history.db`.
//!
//! List a directory of sessions and search them:
//!
//! ```
//! use arbor_index::{Catalog, RefreshOptions, SearchQuery};
//! # let tmp = tempfile::tempdir()?;
//! # let dir = tmp.path().join("sessions");
//! # std::fs::create_dir(&dir)?;
//! # std::fs::write(dir.join("s.jsonl"), concat!(
//! #     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//! #     r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"where is the walrus","timestamp":1}}"#, "\n",
//! # ))?;
//! let mut catalog = Catalog::open(&tmp.path().join("catalog.db"))?;
//! let (listed, _stats) = catalog.refresh_dirs(
//!     std::slice::from_ref(&dir),
//!     RefreshOptions::with_texts(),
//!     &mut |_progress| {},
//! )?;
//! assert_eq!(listed[0].info.first_message.as_str(), Some("where is the walrus"));
//!
//! let hits = catalog.search(&SearchQuery::new("walrus"))?;
//! assert_eq!(hits[0].entry_id.as_deref(), Some("a1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod catalog;
pub mod db_file;
mod error;
pub mod history;
pub mod prepared;
mod rank;
pub mod refresh;
pub mod scan;
pub mod search;
pub mod spends;
mod stamp;
pub mod text;
pub mod tree;
pub mod watch;

pub use catalog::{
    cache_catalog_path, default_catalog_path, Catalog, IndexedText, Listed, OpenReport, Recovery,
};
pub use error::IndexError;
pub use refresh::{
    dir_key, node_join, read_dir_listing, DirListing, Progress, RefreshOptions, RefreshStats,
};
pub use search::{Hit, SearchQuery};
pub use text::{IndexKinds, Kind, Usage};
