//! What a sync says of each session: its [`State`], the [`Row`] of the report, and
//! [`SyncError`] for a sync that fails as a whole.
use arbor_store::backend::BackendError;
use std::path::PathBuf;

/// What a session is, between here and the shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// The same lines on both sides.
    InSync,
    /// Only here (push creates it there).
    LocalOnly,
    /// Only there (pull writes it here).
    RemoteOnly,
    /// Here has `n` lines the shared copy lacks.
    LocalAhead(u64),
    /// There are `n` lines this copy lacks.
    RemoteAhead(u64),
    /// Both sides added entries since they agreed (the session branched): push sends
    /// `here`, pull merges `shared` in.
    Diverged {
        /// Lines only here.
        here: u64,
        /// Lines only there.
        shared: u64,
    },
    /// A conflict resolved earlier by a fork (`pull --fork-on-conflict`): the shared copy is
    /// kept here as another session, this one stays here only. Reported again when the
    /// shared copy changes.
    Resolved,
    /// A local session file or directory that could not be read (the row's `path`, its
    /// `note` why): not synced, and `arbor sync` exits with status 1.
    Unreadable,
    /// Both changed in a way that cannot be merged (`local` and `remote` lines, `common`
    /// agreed): the row's note says which line and why.
    Conflict {
        /// Lines here.
        local: u64,
        /// Lines there.
        remote: u64,
        /// Lines both start with (agreed).
        common: u64,
    },
}

/// How far a push or pull has come, told after each session: the bytes are the sizes of
/// the sessions gone through (the local files for push, the shared copies for pull), what a
/// progress bar measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncProgress {
    /// Sessions gone through.
    pub sessions_done: u64,
    /// Sessions to go through.
    pub sessions_total: u64,
    /// Bytes of the sessions gone through.
    pub bytes_done: u64,
    /// Bytes of all of them.
    pub bytes_total: u64,
}

/// One session's line in a report.
#[derive(Debug, Clone)]
pub struct Row {
    /// The session id.
    pub id: String,
    /// The local file, if any.
    pub path: Option<PathBuf>,
    /// The state before the operation.
    pub state: State,
    /// Lines sent (push) or written (pull).
    pub moved: u64,
    /// Bytes of those lines.
    pub bytes: u64,
    /// What was done about it, when not just `moved` lines (a fork written, a refusal, a
    /// conflict's first difference).
    pub note: Option<String>,
    /// Left undone: a conflict (without a fork kept), a writer in the way, a copy that moved
    /// while syncing, a session that failed. `arbor sync` exits with status 1 then.
    pub unresolved: bool,
    /// omp blobs the moved lines name that were sent (push) or written here (pull).
    pub blobs: u64,
    /// Blobs the session names that the giving side does not hold (the lines moved without
    /// them; tried again on the next sync).
    pub missing_blobs: Vec<String>,
}

impl Row {
    pub(crate) fn new(id: String, path: Option<PathBuf>, state: State) -> Row {
        Row {
            id,
            path,
            state,
            moved: 0,
            bytes: 0,
            note: None,
            unresolved: false,
            blobs: 0,
            missing_blobs: Vec::new(),
        }
    }
}

/// Why a sync failed as a whole (a session's own trouble is a row's note instead).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The shared or the local store failed.
    #[error(transparent)]
    Store(#[from] BackendError),
    /// The cursor file could not be written.
    #[error("{path}: {source}")]
    Cursor {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The row of a local file or directory that could not be read (`id` empty when unknown).
pub(crate) fn unreadable(id: String, path: PathBuf, why: &dyn std::fmt::Display) -> Row {
    let mut row = Row::new(id, Some(path), State::Unreadable);
    row.note = Some(format!("cannot be read, not synced: {why}"));
    row.unresolved = true;
    row
}

/// The row of a session whose sync failed (the others go on).
pub(crate) fn failed(mut row: Row, why: &dyn std::fmt::Display) -> Row {
    row.note = Some(format!("not synced: {why}"));
    row.unresolved = true;
    row
}
