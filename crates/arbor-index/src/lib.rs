//! arbor-index: a rebuildable SQLite catalog of pi / omp session files, full-text search
//! across sessions, and omp's prompt history.
//!
//! The JSONL files stay the only truth (DESIGN decision 6): [`Catalog`] keeps one row per
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
#![deny(missing_docs)]

pub mod catalog;
pub mod db_file;
mod error;
pub mod history;
pub mod refresh;
pub mod scan;
pub mod search;
pub mod text;
pub mod tree;

pub use catalog::{cache_catalog_path, default_catalog_path, Catalog, Listed, OpenReport};
pub use error::IndexError;
pub use refresh::{
    dir_key, node_join, read_dir_listing, DirListing, Progress, RefreshOptions, RefreshStats,
};
pub use search::{Hit, SearchQuery};
pub use text::{IndexKinds, Kind, Usage};
