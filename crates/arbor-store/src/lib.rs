//! arbor-store: sessions on disk.
//!
//! [`SessionManager`] is pi's session API in Rust on a crash-safe write path: one writer per
//! session ([`lock`]), one `write` per line with truncation back on failure and a durability
//! policy ([`Durability`]), atomic rewrites, torn-tail repair into sidecars ([`check`]), and
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
//!
//! # The public API
//!
//! - Sessions: [`SessionManager`] ([`ManagerOptions`], [`NewEntry`], [`Durability`],
//!   [`LiveContext`]) and loading one ([`load_doc`], [`load_doc_lean`], [`load_doc_copy`]).
//! - Where sessions are kept: the store trait and its file and memory stores ([`backend`]),
//!   omp's blobs ([`blobs`]), the writer lock ([`lock`]).
//! - Finding sessions: pi's and omp's directories ([`paths`]), listing them ([`discover`],
//!   [`info`], [`omp_info`]), a session named on a command line ([`locate`]), ids and
//!   timestamps ([`ids`]), what else belongs to a session file ([`belongings`]).
//! - Checking and repairing: [`check`]; why a file cannot be read ([`readable`]).
//! - Token usage ([`usage`]); the secret rules live in `arbor-view`.
//! - Files: a session's bytes ([`FileBytes`], [`LineStream`]), the safe file primitives
//!   ([`open_regular`], [`create_new_private`], [`NewFile`], [`replace_file`], ...), SQLite
//!   files arbor owns ([`sqlite_file`]).
//! - Errors: [`StoreError`], [`BodyError`].
#![deny(missing_docs)]

pub mod backend;
pub mod belongings;
pub mod blobs;
mod body;
mod breadcrumb;
mod build;
pub mod check;
pub mod discover;
mod error;
mod file;
mod gc;
pub mod ids;
pub mod info;
pub mod listen;
pub mod locate;
pub mod lock;
mod manager;
mod map;
pub mod omp_info;
pub mod paths;
pub mod readable;
mod repair;
mod safe_fs;
pub mod sqlite_file;
pub mod stamp;
mod stream;
mod title;
pub mod trash;
pub mod usage;

pub use body::BodyError;
pub use build::{Base, NewEntry};
pub use error::StoreError;
/// How hard an append presses its bytes to the disk, and the file helpers arbor writes with
/// elsewhere (a directory created 0700, a file replaced atomically).
pub use file::{atomic_write, create_dir_private, Durability};
pub use manager::{
    is_blank_name, load_doc, load_doc_copy, load_doc_lean, new_session_head, ForkTransform,
    LiveContext, ManagerOptions, OpenNote, SessionManager, LEAN_WINDOW,
};
/// A session file's bytes (mapped for large files, guarded against the file being cut
/// short) and pages handed back to the kernel once read.
pub use map::{release_pages, FileBytes, Resident};
/// The safe file primitives: opening only regular files, creating private files without
/// following a planted symlink, replacing a file atomically, the effective user.
pub use safe_fs::{
    check_write_dir, create_new_private, euid, kind_of, open_checked, open_regular,
    read_regular_at_most, replace_file, symlink_refused, NewFile,
};
pub use stamp::FileStamp;
/// A session file read line by line from any byte offset, in bounded memory.
pub use stream::{LineAt, LineStream};
