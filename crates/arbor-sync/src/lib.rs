//! `arbor sync`: sessions between this machine's agent directories (a
//! [`FileStore`] each) and a shared store (SQLite, PostgreSQL).
//!
//! **Reading and writing.** A local file is read up to its last complete line (a line pi is
//! still writing is not sent: [`sync_support::read_snapshot`]). A pull writes under the
//! session's writer lock, and only when the file is still exactly as long as what it read
//! (pi takes no lock: a line it appended meanwhile makes the pull read again); a merge that
//! inserts lines rewrites the file atomically and keeps what pi appended to the old file
//! during the rewrite ([`sync_support::SyncLock::rewrite_at`]; the old file stays as
//! `<session>.arbor-merge` while someone may still write to it, and the next pull or push of
//! the session settles it first).
//!
//! **The cursor is the agreed state.** Per session the cursor file records how many lines
//! of the local file and of the shared copy the two sides agree on (a prefix of each) and
//! an order-independent digest of those lines (the wrapping sum of each line's SHA-256), taken
//! from the bytes read or written, never from a `stat()`. A later sync checks the local
//! prefix against the digest and the shared prefix by its size, then compares only what
//! follows. When the check fails (a file rewritten, no cursor yet) the two copies are
//! compared whole: their common prefix, then the rest by content.
//!
//! **Merge.** Sessions are trees (each entry names its `parentId`). When both sides added
//! entries since they agreed, each side's new entries go to the other: the shared store
//! receives this machine's entries appended in file order; a pull inserts the shared entries
//! right before the file's last line, so that the last line, where pi resumes, stays this
//! machine's own leaf (when the shared entries continue from that last line, they are
//! appended instead: the conversation went on elsewhere). Lines already on both sides (in
//! another order) are agreed. The same id with other bytes, a line without an id among the
//! new lines of both sides (the header, v1 entries, omp's lines without id), or an entry
//! whose parent is on neither side is a **conflict** (a child before its parent in a file is
//! not: what a sync adds is written parents-first): reported with the line and id, never
//! merged. omp's title slot (the first line, rewritten in place by a rename) compares as one
//! line whatever it holds; the slot set last wins on both sides.
//! `pull --fork-on-conflict` keeps the shared copy as a fork (a new id, `parentSession`
//! naming the local file) and the cursor remembers the conflict as resolved for that shared
//! copy: it is not reported again until the shared copy changes.
//!
//! The shared store is any [`SessionStore`](arbor_store::backend::SessionStore) with its
//! [`Blobs`](arbor_store::backend::Blobs) (arbor-db's SQLite and PostgreSQL stores in `arbor
//! sync`); this crate needs no concrete store. [`push`], [`pull`] and [`status`] each return
//! one [`Row`] per session.
//!
//! [`FileStore`]: arbor_store::backend::files::FileStore
//! [`sync_support::read_snapshot`]: arbor_store::backend::sync_support::read_snapshot
//! [`sync_support::SyncLock::rewrite_at`]: arbor_store::backend::sync_support::SyncLock::rewrite_at
mod blobs;
mod compare;
mod conflict;
mod cursor;
mod local;
mod merge;
mod place;
mod pull;
mod push;
mod report;
mod status;

pub use local::Local;
pub use pull::{pull, pull_with, pull_with_options, PullOptions};
pub use push::{push, push_with};
pub use report::{Row, State, SyncError, SyncProgress};
pub use status::status;
