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
//!     RefreshOptions::default().with_texts(true),
//!     &mut |_progress| {},
//! )?;
//! assert_eq!(listed[0].info.first_message.as_str(), Some("where is the walrus"));
//!
//! let hits = catalog.search(&SearchQuery::new("walrus"))?;
//! assert_eq!(hits[0].entry_id.as_deref(), Some("a1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The public API
//!
//! - The catalog: [`Catalog`] ([`Catalog::open`], refresh, listing, [`Catalog::search`]),
//!   where it lives ([`default_catalog_path`], [`cache_catalog_path`]), what opening it found
//!   ([`OpenReport`], [`Recovery`]), its rows ([`Listed`], [`IndexedText`], [`SpendRow`]) and
//!   pi's order of them ([`sort_like_pi`]).
//! - Refreshing: [`RefreshOptions`], [`RefreshStats`], [`Progress`], what is indexed
//!   ([`IndexKinds`], [`Kind`], [`Usage`]), a directory's listing ([`read_dir_listing`],
//!   [`DirListing`], [`dir_key`], [`node_join`]) and a file's fingerprint ([`Stat`]).
//! - Other agents' sessions: [`Catalog::refresh_foreign`], [`ForeignRoots`], [`ForeignRow`],
//!   [`ForeignListing`], [`ForeignProblem`].
//! - Search: [`SearchQuery`], [`Hit`].
//! - [`history`]: omp's prompt history (`history.db`).
//! - [`watch`]: the live watcher (`arbor index --watch`) and what commands ask of it;
//!   [`prepared`]: the listings it prepares for them.
//! - Errors: [`IndexError`].
#![deny(missing_docs)]

mod catalog;
mod db_file;
mod error;
mod foreign;
pub mod fresh;
pub mod history;
pub mod prepared;
mod rank;
mod refresh;
mod scan;
mod search;
mod spends;
mod stamp;
mod text;
mod tree;
pub mod watch;

/// The catalog, its rows and pi's order of them.
pub use catalog::{
    cache_catalog_path, default_catalog_path, sort_like_pi, Catalog, IndexedText, Listed,
    OpenReport, Recovery,
};
/// What can go wrong in the catalog.
pub use error::IndexError;
/// Other agents' sessions (Claude Code, Codex, opencode) in the catalog.
pub use foreign::{
    by_rank, current_dir_spellings, foreign_fingerprint, keep_foreign_in_scope, ForeignHit,
    ForeignListing, ForeignProblem, ForeignRoots, ForeignRow,
};
/// Refreshing the catalog from the session directories.
pub use refresh::{
    dir_key, node_join, read_dir_listing, DirListing, Progress, RefreshOptions, RefreshStats,
};
/// A file's fingerprint as the catalog keeps it.
pub use scan::Stat;
/// Full-text search.
pub use search::{regex_of, regex_snippet, Hit, SearchQuery};
/// What `arbor stats` keeps of each session.
pub use spends::SpendRow;
/// What is indexed of a session.
pub use text::{IndexKinds, Kind, Usage};

/// Not API: the reading half of indexing and the stored tree, for arbor's own benchmarks
/// (`examples/scanspeed.rs`) and tests; they change without notice.
#[doc(hidden)]
pub use scan::{scan_job, Job};
#[doc(hidden)]
pub use tree::TreeCache;
