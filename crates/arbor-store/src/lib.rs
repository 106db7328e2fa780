//! arbor-store: sessions on disk.
//!
//! [`SessionManager`] is pi's session API in Rust on a crash-safe write path: one writer per
//! session ([`lock`]), one `write` per line with truncation back on failure and a durability
//! policy ([`file`](mod@file)), atomic rewrites, torn-tail repair into sidecars ([`check`]), and
//! discovery of sessions as pi and omp lay them out ([`paths`], [`discover`]).
//!
//! Create a session where pi would, append to it, read it back, fork it:
//!
//! ```
//! use arbor_store::{ManagerOptions, NewEntry, SessionManager};
//! # let dir = tempfile::tempdir()?;
//!
//! let mut sm = SessionManager::create("/work/project", Some(dir.path()), ManagerOptions::default())?;
//! let first = sm.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#)?;
//! sm.append(&NewEntry::Message(
//!     br#"{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}"#.to_vec(),
//! ))?;
//! let path = sm.session_file().expect("a file").to_path_buf();
//! sm.close()?; // releases the writer lock; the entries are on disk (fdatasync)
//!
//! // Reading takes no lock and never writes.
//! let reader = SessionManager::open_read_only(&path)?;
//! assert_eq!(reader.entries().len(), 2);
//! let mut json = Vec::new();
//! reader.build_session_context().write_json(reader.doc(), &mut json);
//! assert!(String::from_utf8_lossy(&json).contains("hello"));
//!
//! // A branch from the first message, then a fork of the whole session into a new file.
//! let mut writer = SessionManager::open(&path, ManagerOptions::default())?;
//! writer.branch(&first)?;
//! writer.append_message(br#"{"role":"user","content":"another way","timestamp":3}"#)?;
//! writer.close()?;
//! let fork = SessionManager::fork_from(&path, "/work/project", Some(dir.path()), ManagerOptions::default())?;
//! assert_eq!(fork.entries().len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Errors are [`StoreError`]: I/O naming the file, a file that is not a session (left
//! untouched), another writer holding the lock, a latched write failure.
#![deny(missing_docs)]

pub mod backend;
pub mod belongings;
pub mod blobs;
mod body;
pub mod breadcrumb;
mod build;
pub mod check;
pub mod discover;
mod error;
pub mod file;
pub mod gc;
pub mod ids;
pub mod info;
pub mod locate;
pub mod lock;
mod manager;
pub mod map;
pub mod omp_info;
pub mod paths;
pub mod readable;
mod repair;
pub mod safe_fs;
pub mod sqlite_file;
pub mod stream;
mod title;
pub mod usage;

pub use body::BodyError;
pub use build::NewEntry;
pub use error::StoreError;
pub use file::Durability;
pub use manager::{
    load_doc, load_doc_copy, load_doc_lean, ForkTransform, LiveContext, ManagerOptions, OpenNote,
    SessionManager, LEAN_WINDOW,
};
