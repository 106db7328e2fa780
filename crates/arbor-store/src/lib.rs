//! arbor-store: sessions on disk.
//!
//! [`SessionManager`] is pi's session API in Rust on a crash-safe write path: one writer per
//! session ([`lock`]), one `write` per line with truncation back on failure and a durability
//! policy ([`file`](mod@file)), atomic rewrites, torn-tail repair into sidecars ([`repair`]), and
//! discovery of sessions as pi and omp lay them out ([`paths`], [`discover`]).
#![deny(missing_docs)]

pub mod blobs;
pub mod body;
pub mod breadcrumb;
pub mod build;
pub mod check;
pub mod discover;
pub mod error;
pub mod file;
pub mod gc;
pub mod ids;
pub mod info;
pub mod lock;
pub mod manager;
pub mod map;
pub mod omp_info;
pub mod paths;
pub mod repair;
pub mod safe_fs;
pub mod stream;
pub mod text;
pub mod title;

pub use build::NewEntry;
pub use error::StoreError;
pub use file::Durability;
pub use manager::{load_doc, load_doc_copy, LiveContext, ManagerOptions, OpenNote, SessionManager};
