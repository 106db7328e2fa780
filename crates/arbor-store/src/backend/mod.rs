//! Where sessions are kept: the [`SessionStore`] abstraction under [`crate::SessionManager`].
//!
//! A store keeps each session as the exact bytes of its lines, in order (sequence number 0 is
//! the file's first line: the header, or omp's title slot before it), so that a session read
//! back is byte-identical to the JSONL file it came from: malformed and unknown lines
//! included. One writer per session is enforced by the store itself through a lease with a
//! fence token: a writer that lost its lease (it expired and another writer took it, or the
//! session was deleted) cannot append any more.
//!
//! Implementations: [`files::FileStore`] (the JSONL files of an agent directory) and
//! [`memory::MemoryStore`] here; SQLite and PostgreSQL in the `arbor-db` crate. A
//! [`crate::SessionManager`] writes through one [`SessionWriter`] whatever keeps the session:
//! [`files::FileWriter`] for a session file ([`crate::SessionManager::open`],
//! [`crate::SessionManager::create`]), a store's lease otherwise. Every fork is
//! [`fork::fork_lines`].
//!
//! ```
//! use arbor_store::backend::{memory::MemoryStore, SessionStore};
//! use arbor_store::{ManagerOptions, SessionManager};
//! use std::sync::Arc;
//!
//! let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
//! let mut sm = SessionManager::create_in(store.clone(), "/work/p", ManagerOptions::default()).unwrap();
//! sm.append_message(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
//! let id = sm.session_id();
//! drop(sm);
//! let again = SessionManager::open_in(store.clone(), &id, ManagerOptions::default()).unwrap();
//! assert_eq!(again.entries().len(), 1);
//! assert_eq!(store.read(&id, 0).unwrap().len(), 2); // the header and the message
//! ```
pub mod conformance;
pub mod files;
pub mod fork;
pub mod memory;
pub mod sync_support;

use std::time::Duration;

/// What a store knows of a session without reading its lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionMeta {
    /// The header's `id`.
    pub id: String,
    /// The header's `cwd`.
    pub cwd: String,
    /// The header's `timestamp`.
    pub created: String,
    /// The header's `parentSession` (a path, or omp's id).
    pub parent_session: Option<String>,
    /// The latest name (pi's `session_info`, omp's title), when the store was told.
    pub name: Option<String>,
    /// `pi` or `omp`.
    pub tool: String,
    /// The machine the session was pushed from (`arbor sync`), if any.
    pub machine: Option<String>,
    /// The OS user who pushed it (`arbor sync push`), if known (a store of schema version 3
    /// on; older rows have none).
    pub user: Option<String>,
    /// The file it was pushed from, on that machine, if any.
    pub source_path: Option<String>,
}

/// A session in a store's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// Its metadata.
    pub meta: SessionMeta,
    /// How many lines it has.
    pub lines: u64,
    /// Their bytes, newlines included.
    pub bytes: u64,
    /// When a line was last appended (ms since the epoch).
    pub modified_ms: i64,
}

/// Why a store refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// No session with this id.
    #[error("{store}: no session {id}")]
    NoSession {
        /// The store.
        store: String,
        /// The id.
        id: String,
    },
    /// A session with this id exists already.
    #[error("{store}: session {id} exists already")]
    Exists {
        /// The store.
        store: String,
        /// The id.
        id: String,
    },
    /// Another writer holds the session.
    #[error("{store}: session {id} is being written by another writer ({holder}); try again when it is done")]
    Busy {
        /// The store.
        store: String,
        /// The id.
        id: String,
        /// Who holds it, as the store knows it.
        holder: String,
    },
    /// This writer's lease is gone (expired and taken, or the session deleted): nothing was
    /// written; reopen the session.
    #[error(
        "{store}: the writer of session {id} lost its lease (fence {fence}); nothing was written"
    )]
    Fenced {
        /// The store.
        store: String,
        /// The id.
        id: String,
        /// The writer's fence token.
        fence: u64,
    },
    /// The store's lines are not where this writer left them (someone else appended).
    #[error("{store}: session {id} has {found} lines, this writer expected {expected}: another writer appended; nothing was written")]
    Moved {
        /// The store.
        store: String,
        /// The id.
        id: String,
        /// Lines the writer expected.
        expected: u64,
        /// Lines found.
        found: u64,
    },
    /// Blob bytes that do not hash to the name they were given.
    #[error("{store}: the bytes given for blob {hash} hash to {actual}")]
    BadBlob {
        /// The store.
        store: String,
        /// The name given.
        hash: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// A line that a store cannot hold (a newline inside it).
    #[error("{store}: a line with a newline inside cannot be stored")]
    BadLine {
        /// The store.
        store: String,
    },
    /// A file of the store could not be read or written.
    #[error("{store}: {}: {source}", path.display())]
    Io {
        /// The store.
        store: String,
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A session file's writer lock could not be taken or kept (see [`crate::lock`]).
    #[error("{store}: {source}")]
    Lock {
        /// The store.
        store: String,
        /// The cause.
        source: crate::lock::LockError,
    },
    /// A step of the store's write path failed (a sidecar, a migration, omp's title slot):
    /// the error of that step.
    #[error("{store}: {source}")]
    Store {
        /// The store.
        store: String,
        /// The cause.
        source: Box<crate::StoreError>,
    },
    /// Writing the lines read to the caller's output failed ([`SessionStore::read_into`]).
    #[error("{store}: writing the lines read: {source}")]
    Output {
        /// The store.
        store: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The database or its connection failed, with the database client's error as the cause
    /// (`message` says it for people: the server's message, or the client's error and its
    /// causes).
    #[error("{store}: {message}")]
    Database {
        /// The store.
        store: String,
        /// What the database said.
        message: String,
        /// The client's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The database or its connection failed (a refusal of arbor's own, or a message that
    /// must not keep its cause: a connection error scrubbed of its password).
    #[error("{store}: {message}")]
    Db {
        /// The store.
        store: String,
        /// What the database said.
        message: String,
    },
}

/// omp's content-addressed blobs as a store keeps them: images and large outputs that
/// sessions name as `blob:sha256:<hash>`. Every [`SessionStore`] keeps its sessions' blobs
/// (an omp session kept in a database has its blobs there); the blob directory of an agent
/// ([`crate::blobs::BlobStore`]) is one too.
pub trait Blobs: Send + Sync + std::fmt::Debug {
    /// Whether the store holds blob `hash` (omp's content-addressed store: images and large
    /// outputs that sessions name as `blob:sha256:<hash>`).
    ///
    /// # Errors
    /// A database failure.
    fn has_blob(&self, hash: &str) -> Result<bool, BackendError>;

    /// Stores a blob under its hash (kept once; storing it again changes nothing). The bytes
    /// must hash to `hash`.
    ///
    /// # Errors
    /// [`BackendError::BadBlob`] when they do not; a database failure.
    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), BackendError>;

    /// A blob's bytes (`None` when the store does not hold it).
    ///
    /// # Errors
    /// A database failure.
    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, BackendError>;
}

/// Sessions kept somewhere: the operations a [`crate::SessionManager`] needs (and the
/// sessions' blobs, [`Blobs`]).
pub trait SessionStore: Blobs {
    /// How the store names itself in messages (`memory`, `sqlite:PATH`, `postgres://host/db`;
    /// never a password).
    fn describe(&self) -> String;

    /// Whether a writer's lease ends by itself when it stops appending (a lease row: another
    /// writer may take the session after its time, and the first is fenced), rather than
    /// only when the writer is gone (the files' `flock`, released when its process dies).
    fn leases_expire(&self) -> bool {
        true
    }

    /// Creates a session from its first lines (the header, omp's title slot, any entries),
    /// each without its newline, in one step: after a crash either all are there or none.
    ///
    /// # Errors
    /// [`BackendError::Exists`] when the id is taken.
    fn create(&self, meta: &SessionMeta, lines: &[&[u8]]) -> Result<(), BackendError>;

    /// Streams the lines from sequence number `from` on into `out`, in order, each followed
    /// by `\n` (what a JSONL file of the session holds from that line on; a last line stored
    /// without its newline gets one), in bounded memory: a 1 GB session is never held whole.
    ///
    /// # Errors
    /// [`BackendError::NoSession`]; [`BackendError::Output`] when `out` fails; a storage
    /// failure. What reached `out` before an error is a prefix of whole lines or less.
    fn read_into(
        &self,
        id: &str,
        from: u64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), BackendError>;

    /// The lines from sequence number `from` on, in order, each without its newline (built
    /// on [`SessionStore::read_into`]; for small reads: it holds every line).
    ///
    /// # Errors
    /// [`BackendError::NoSession`].
    fn read(&self, id: &str, from: u64) -> Result<Vec<Vec<u8>>, BackendError> {
        let bytes = self.read_joined(id, from)?;
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        Ok(body.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect())
    }

    /// The lines `from..to` (fewer at the end of the session).
    ///
    /// # Errors
    /// [`BackendError::NoSession`].
    fn read_range(&self, id: &str, from: u64, to: u64) -> Result<Vec<Vec<u8>>, BackendError> {
        let mut lines = self.read(id, from)?;
        lines.truncate(usize::try_from(to.saturating_sub(from)).unwrap_or(usize::MAX));
        Ok(lines)
    }

    /// The lines from sequence number `from` on as one buffer, each line followed by `\n`
    /// (what a JSONL file of the session holds from that line on): [`SessionStore::read_into`]
    /// a vector (opening a session into a manager reads it this way).
    ///
    /// # Errors
    /// [`BackendError::NoSession`].
    fn read_joined(&self, id: &str, from: u64) -> Result<Vec<u8>, BackendError> {
        let mut bytes = Vec::new();
        self.read_into(id, from, &mut bytes)?;
        Ok(bytes)
    }

    /// Every session, with its metadata.
    ///
    /// # Errors
    /// A database failure.
    fn list(&self) -> Result<Vec<StoredSession>, BackendError>;

    /// Copies session `id` as a new session `new_id`, as pi forks a file: the header gets
    /// the new id and `parentSession` = `parent_ref` (other members unchanged, in their
    /// order), every other line (omp's title slot, entries, malformed lines) is copied byte
    /// for byte; the copy is created in one step. Returns the new session's metadata (its
    /// name is the source's, from its lines).
    ///
    /// # Errors
    /// [`BackendError::NoSession`] for `id`, [`BackendError::Exists`] for `new_id`.
    fn fork(&self, id: &str, new_id: &str, parent_ref: &str) -> Result<SessionMeta, BackendError> {
        let bytes = std::sync::Arc::new(self.read_joined(id, 0)?);
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
        let forked = fork::fork_lines(&lines, new_id, parent_ref, &fork::ForkHeader::Kept);
        let mut meta = forked.meta.clone();
        // The name from the lines (the copy's are the source's); the bytes are shared, not
        // copied.
        meta.name = arbor_core::doc::SessionDoc::parse(bytes.clone())
            .ok()
            .and_then(|d| d.session_name());
        self.create(&meta, &forked.lines())?;
        Ok(meta)
    }

    /// Takes the writer lease of a session (waiting up to `wait` for the present writer).
    ///
    /// # Errors
    /// [`BackendError::Busy`] when another writer holds it, [`BackendError::NoSession`].
    fn writer(
        &self,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Box<dyn SessionWriter>, BackendError>;

    /// Records a new name for the session (its line is appended by the writer as usual).
    ///
    /// # Errors
    /// [`BackendError::NoSession`].
    fn set_name(&self, id: &str, name: &str) -> Result<(), BackendError>;

    /// Deletes a session and its lines; a writer holding it is fenced.
    ///
    /// # Errors
    /// [`BackendError::NoSession`], [`BackendError::Busy`] when a writer holds it.
    fn delete(&self, id: &str) -> Result<(), BackendError>;
}

/// The one writer of a session (see [`SessionStore::writer`]); dropping it releases the lease.
pub trait SessionWriter: Send + std::fmt::Debug {
    /// How many lines the session has (what the next append follows).
    fn len(&self) -> u64;

    /// Whether the session has no line (never: a session has at least its header).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The writer's fence token.
    fn fence(&self) -> u64;

    /// Appends lines (each without its newline) after the [`SessionWriter::len`] lines the
    /// writer knows of, in one step: all of them or none.
    ///
    /// # Errors
    /// [`BackendError::Fenced`] when the lease is lost, [`BackendError::Moved`] when the
    /// session is not as long as expected; nothing is written then.
    fn append(&mut self, lines: &[&[u8]]) -> Result<(), BackendError>;

    /// Replaces all lines (a migration to the current format, omp's rewritten title slot), in
    /// one step.
    ///
    /// # Errors
    /// As [`SessionWriter::append`].
    fn replace_all(&mut self, lines: &[&[u8]]) -> Result<(), BackendError>;

    /// Forces what was appended to stable storage, as the writer's durability policy says
    /// (a store that commits every append has nothing left to do).
    ///
    /// # Errors
    /// The storage failing.
    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    /// The file this writer writes, for a session kept as a file (its real path, symlinks
    /// resolved when the writer was made): omp's blob store registers it for `gc`.
    fn file_path(&self) -> Option<&std::path::Path> {
        None
    }

    /// Writes omp's 256-byte title slot `slot` (line 1) the store's own way, if it has one:
    /// a file overwrites it in place (one positional write) or rewrites the file atomically
    /// with it. The default, [`SlotWrite::Lines`], leaves it to the caller to
    /// [`SessionWriter::replace_all`] the lines with the new slot.
    ///
    /// # Errors
    /// The storage failing; nothing was changed then.
    fn write_title_slot(&mut self, slot: &[u8]) -> Result<SlotWrite, BackendError> {
        let _ = slot;
        Ok(SlotWrite::Lines)
    }
}

/// How [`SessionWriter::write_title_slot`] kept a new title slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotWrite {
    /// Line 1 was overwritten in place: every other byte is as it was.
    InPlace,
    /// The session was rewritten with the slot as its first line (a file without a valid
    /// fixed-size slot): read it again.
    Rewritten,
    /// Nothing was written: the caller replaces the lines ([`SessionWriter::replace_all`]).
    Lines,
}

/// What opening a session for writing did to it, for the caller to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenNote {
    /// The session was migrated from this version (a file rewritten atomically, a store's
    /// lines replaced in one step).
    Migrated {
        /// The version it had.
        from_version: u32,
    },
    /// A torn last line was moved to a sidecar file and cut from the session.
    TornTailSaved {
        /// The sidecar.
        sidecar: std::path::PathBuf,
        /// Bytes moved.
        bytes: usize,
    },
    /// The old file an earlier rewrite of the session left as `<session>.arbor-merge` (a
    /// rewrite killed before it finished, or one whose old file pi still held open) was
    /// settled: its lines the session lacked were appended, and it was removed unless `kept`.
    MergeLeftover {
        /// The sidecar.
        sidecar: std::path::PathBuf,
        /// Bytes of lines appended to the session from it.
        copied: u64,
        /// Why it is still there (held open elsewhere, an incomplete last line); the next
        /// open or sync looks again. `None`: removed.
        kept: Option<String>,
    },
}

/// The metadata of a session from its header line (and the tool it was written by).
pub fn meta_from_header(header: &[u8], tool: &str) -> SessionMeta {
    let fields = arbor_core::entry::parse_fields(header).ok();
    let s = |k: &str| {
        fields
            .as_ref()
            .and_then(|f| f.str(header, k))
            .map(|v| v.into_owned())
    };
    SessionMeta {
        id: s("id").unwrap_or_default(),
        cwd: s("cwd").unwrap_or_default(),
        created: s("timestamp").unwrap_or_default(),
        parent_session: fields
            .as_ref()
            .and_then(|f| arbor_core::header::fork_link_key(header, f))
            .and_then(s),
        name: None,
        tool: tool.to_string(),
        machine: None,
        user: None,
        source_path: None,
    }
}

/// Checks that `bytes` hash to `hash` (a blob about to be stored).
pub fn check_blob(store: &str, hash: &str, bytes: &[u8]) -> Result<(), BackendError> {
    let actual = crate::blobs::sha256_hex(bytes);
    if actual != hash {
        return Err(BackendError::BadBlob {
            store: store.to_string(),
            hash: hash.to_string(),
            actual,
        });
    }
    Ok(())
}

/// Writes `line` and its newline to `out` ([`SessionStore::read_into`] of a store that keeps
/// lines one by one).
///
/// # Errors
/// [`BackendError::Output`] naming `store`.
pub fn write_line(
    store: &str,
    out: &mut dyn std::io::Write,
    line: &[u8],
) -> Result<(), BackendError> {
    out.write_all(line)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|source| BackendError::Output {
            store: store.to_string(),
            source,
        })
}

/// Checks that no line holds a newline (a store keeps one line per row).
pub fn check_lines(store: &str, lines: &[&[u8]]) -> Result<(), BackendError> {
    if lines.iter().any(|l| l.contains(&b'\n')) {
        return Err(BackendError::BadLine {
            store: store.to_string(),
        });
    }
    Ok(())
}

/// A header line with another session `id` and `parentSession` (a fork's header); the other
/// members stay as they were, in their order. A line that is not a JSON object is returned
/// unchanged.
pub fn rewrite_header(header: &[u8], id: &str, parent_session: &str) -> Vec<u8> {
    use arbor_core::json::{JsStr, JsValue};
    let Ok(mut value) = JsValue::parse(header) else {
        return header.to_vec();
    };
    let JsValue::Object(members) = &mut value else {
        return header.to_vec();
    };
    let mut set = |k: &str, v: &str| {
        let v = JsValue::String(JsStr::from(v));
        match members
            .iter_mut()
            .find(|(key, _)| key.to_string_lossy() == k)
        {
            Some(m) => m.1 = v,
            None => members.push((JsStr::from(k), v)),
        }
    };
    set("id", id);
    set("parentSession", parent_session);
    value.to_json()
}
