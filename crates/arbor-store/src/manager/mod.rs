//! `SessionManager`: pi's session API in Rust, on top of a crash-safe write path.
//!
//! Differences from pi, all deliberate: a file that is not a session is an error and is
//! never overwritten; a writer holds the session's lock; a torn last line is moved to a
//! sidecar instead of having the next entry glued to it; rewrites are atomic and keep every
//! byte a migration does not change; the tree advances only after the line is on disk;
//! deferred persistence writes the header once (pi can write it twice); `fork_from` migrates.
mod writer;

use crate::backend::files::FileStore;
use crate::backend::SlotWrite;
use crate::build::{Base, NewEntry};
use crate::error::{IoContext, StoreError};
use crate::file::{create_dir_private, Durability};
use crate::ids::{new_entry_id, new_session_id, now_iso};
use crate::map::FileBytes;
use crate::paths;
use arbor_core::context::{build_session_context, LeafSel, SessionContext};
use arbor_core::doc::{Dialect, SessionDoc};
use arbor_core::entry::{Entry, EntryType, Role};
use arbor_core::json::{JsStr, JsValue};
use arbor_core::title::{clean_title, serialize_title_slot, TitleSlotInfo, TitleSource};
use arbor_core::tree::Tree;
use arbor_core::{ContextCache, ContextChange};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use writer::Writer;

/// How a manager opens and writes: `ManagerOptions::default()` and the `with_*` setters
/// (the struct may gain fields, so it is not built with a literal outside this crate).
///
/// ```
/// use arbor_store::{Durability, ManagerOptions};
/// let opts = ManagerOptions::default().with_durability(Durability::Strict).with_read_only(true);
/// assert!(opts.read_only);
/// ```
///
/// A literal does not compile outside arbor-store, so a new field never breaks a caller:
///
/// ```compile_fail
/// let opts = arbor_store::ManagerOptions { read_only: true, ..Default::default() };
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// When appended entries reach stable storage.
    pub durability: Durability,
    /// Wait this long for another writer to finish (default: refuse at once).
    pub wait: Option<Duration>,
    /// pi's deferred persistence: nothing is written before the conversation starts (pi 1.5:
    /// the first user or assistant message; omp: the first assistant message).
    pub deferred: bool,
    /// Dialect of new sessions (default pi; opened files keep their own).
    pub dialect: Option<Dialect>,
    /// Open without the writer lock; every write is refused.
    pub read_only: bool,
    /// Blob directory for omp sessions (default: see [`crate::blobs::blob_dir_for_session`]).
    pub blob_dir: Option<PathBuf>,
    /// The id of a new session (pi 1.5 `NewSessionOptions.id`, checked as its
    /// `assertValidSessionId`); default: a new UUIDv7.
    pub session_id: Option<String>,
}

impl ManagerOptions {
    /// With [`ManagerOptions::durability`].
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// With [`ManagerOptions::wait`].
    pub fn with_wait(mut self, wait: Option<Duration>) -> Self {
        self.wait = wait;
        self
    }

    /// With [`ManagerOptions::deferred`].
    pub fn with_deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }

    /// With [`ManagerOptions::dialect`].
    pub fn with_dialect(mut self, dialect: Option<Dialect>) -> Self {
        self.dialect = dialect;
        self
    }

    /// With [`ManagerOptions::read_only`].
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// With [`ManagerOptions::blob_dir`].
    pub fn with_blob_dir(mut self, blob_dir: Option<PathBuf>) -> Self {
        self.blob_dir = blob_dir;
        self
    }

    /// With [`ManagerOptions::session_id`].
    pub fn with_session_id(mut self, session_id: Option<String>) -> Self {
        self.session_id = session_id;
        self
    }
}

pub use crate::backend::OpenNote;

/// A session being read or written.
#[derive(Debug)]
pub struct SessionManager {
    doc: SessionDoc,
    cwd: String,
    session_dir: Option<PathBuf>,
    path: Option<PathBuf>,
    persist: bool,
    opts: ManagerOptions,
    w: Writer,
    notes: Vec<OpenNote>,
    live: ContextCache,
}

/// The context of the current leaf with the document it refers to (see
/// [`SessionManager::live_context`]).
#[derive(Debug)]
pub struct LiveContext<'a> {
    /// The context (message references into `doc`).
    pub context: &'a SessionContext,
    /// The document, for writing the context (`context.write_json(doc, out)`).
    pub doc: &'a SessionDoc,
    /// What changed since the previous call.
    pub change: ContextChange,
}

impl LiveContext<'_> {
    /// Writes the messages that are new since the previous call (after an extension), or
    /// all of them (after a rebuild), as a JSON array: the messages
    /// [`SessionContext::write_json`] writes, in the session's dialect (an omp context is
    /// rebuilt at every update, so all of its messages are new).
    pub fn write_new_messages(&self, out: &mut Vec<u8>) {
        let from = match self.change {
            ContextChange::Extended { from, .. } => from,
            ContextChange::Unchanged => self.context.message_count(),
            ContextChange::Rebuilt => 0,
        };
        self.context.write_messages_from(self.doc, from, out);
    }
}

/// Whether deferred persistence writes the file now: pi 1.5 (`_hasConversation`) once a
/// user or assistant message is in it (setup entries alone, a system prompt, a model, stay in
/// memory); omp once an assistant message is.
fn has_conversation(doc: &SessionDoc) -> bool {
    let omp = doc.dialect() == Dialect::Omp;
    doc.entries().iter().any(|e| {
        e.etype == EntryType::Message
            && match e.role {
                Some(Role::Assistant) => true,
                Some(Role::User) => !omp,
                _ => false,
            }
    })
}

#[cold]
fn unreachable_live() -> ! {
    panic!("ContextCache::update always leaves a context")
}

/// What [`SessionManager::fork_transformed`] does to the copy before a byte of it is written
/// (arbor-view's `Redactor`: `arbor fork --redact`). The store knows nothing of secrets.
pub trait ForkTransform {
    /// Changes the loaded source in memory (omp's title slot, the header, the entries);
    /// returns how many changes it made (secrets redacted).
    ///
    /// # Errors
    /// The copy cannot be made (a line that cannot be redacted): the fork writes nothing.
    fn doc(&self, doc: &mut SessionDoc) -> Result<usize, Box<dyn std::error::Error + Send + Sync>>;
    /// A text of the source the new session takes as it is (the header's `cwd`).
    fn text(&self, text: &str) -> String;
}

/// Whether `name` is blank as a session's name: nothing but whitespace and byte order marks
/// (pi stores a name trimmed and shows no name for an empty one, so such a name would be an
/// entry that names nothing; `arbor name` and `arbor mcp`'s `name_session` refuse it).
///
/// ```
/// assert!(arbor_store::is_blank_name(" \u{feff}\t"));
/// assert!(!arbor_store::is_blank_name(" x "));
/// ```
pub fn is_blank_name(name: &str) -> bool {
    name.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .is_empty()
}

/// Reads a session file without writing anything (the migrated view is computed in memory).
///
/// Large files are memory-mapped ([`crate::map::FileBytes`]): when another process cuts the
/// file short while it is being read, the load is retried, the last time from a copy.
///
/// # Errors
/// [`StoreError::Io`] naming the file (missing, not a regular file, unreadable) and
/// [`StoreError::NotASession`] for a file without a valid header.
pub fn load_doc(path: &Path) -> Result<SessionDoc, StoreError> {
    for attempt in 0..3 {
        let bytes = if attempt < 2 {
            // Mapped without populating: the second parsing thread maps the pages in while
            // the first one reads (`SessionDoc::parse_prefetched`).
            FileBytes::open_unpopulated(path)
        } else {
            FileBytes::read(path)
        };
        let bytes = Arc::new(bytes.at(path)?);
        let doc = if bytes.is_mapped() {
            let fb = bytes.clone();
            SessionDoc::parse_prefetched(bytes.clone(), &move |r| fb.populate(r))
        } else {
            SessionDoc::parse(bytes.clone())
        }
        .map_err(|reason| StoreError::NotASession {
            path: path.to_path_buf(),
            reason,
        });
        if bytes.is_intact() {
            return doc;
        }
    }
    load_doc_copy(path)
}

/// [`load_doc`] for a reader that goes through a large file once (an export): the pages of
/// the map the parse has passed are released as it goes, so that the resident part of the
/// file stays near [`LEAN_WINDOW`] instead of growing to the file's size. The document is the
/// same; reading its lines again faults their pages back in from the page cache (release them
/// again with [`crate::map::release_pages`]).
///
/// # Errors
/// As [`load_doc`].
pub fn load_doc_lean(path: &Path) -> Result<SessionDoc, StoreError> {
    for _ in 0..2 {
        let bytes = Arc::new(FileBytes::open_unpopulated(path).at(path)?);
        let doc = if bytes.is_mapped() {
            let fb = bytes.clone();
            let released = std::sync::atomic::AtomicUsize::new(0);
            SessionDoc::parse_prefetched(bytes.clone(), &move |r| {
                // At most a window up front: the pages of a line longer than that (one
                // string of hundreds of megabytes) fault in as it is read, and its skip
                // releases them behind (`arbor_core::json::set_release_hook`).
                fb.populate(r.start..r.end.min(r.start.saturating_add(LEAN_WINDOW)));
                let upto = r.start.saturating_sub(LEAN_WINDOW);
                let from = released.fetch_max(upto, std::sync::atomic::Ordering::AcqRel);
                if upto > from {
                    crate::map::release_pages(
                        fb.as_ref().as_ref().get(from..upto).unwrap_or_default(),
                    );
                }
            })
        } else {
            SessionDoc::parse(bytes.clone())
        }
        .map_err(|reason| StoreError::NotASession {
            path: path.to_path_buf(),
            reason,
        });
        if bytes.is_intact() {
            if let Ok(d) = &doc {
                crate::map::release_pages(d.base_bytes());
            }
            return doc;
        }
    }
    load_doc_copy(path)
}

/// How far behind the parse [`load_doc_lean`] keeps a map's pages.
pub const LEAN_WINDOW: usize = 8 << 20;

/// Reads a session file into memory (never mapped), for a [`SessionManager`] that keeps the
/// document for a long time: a map would show zeros if another process truncated the file.
pub fn load_doc_copy(path: &Path) -> Result<SessionDoc, StoreError> {
    let bytes = crate::safe_fs::read_regular(path).at(path)?;
    SessionDoc::parse(Arc::new(bytes)).map_err(|reason| StoreError::NotASession {
        path: path.to_path_buf(),
        reason,
    })
}

/// A new session's header line, in pi's key order.
pub(crate) fn header_line(
    dialect: Dialect,
    id: &str,
    ts: &str,
    cwd: &str,
    parent: Option<&str>,
) -> Vec<u8> {
    let _ = dialect;
    let l = crate::build::LineBuilder::new()
        .str("type", "session")
        .raw("version", b"3")
        .str("id", id)
        .str("timestamp", ts)
        .str("cwd", cwd);
    match parent {
        Some(p) => l.str("parentSession", p),
        None => l,
    }
    .finish()
}

/// The first line(s) of a new session file written whole by someone else than a
/// [`SessionManager`] (an import): omp's title slot with `title` (omp only), then the header
/// (`parent`: pi's `parentSession`), each with its newline. The one header writer:
/// [`SessionManager::create`] writes the same lines.
pub fn new_session_head(
    dialect: Dialect,
    id: &str,
    ts: &str,
    cwd: &str,
    parent: Option<&str>,
    title: Option<&str>,
) -> Vec<u8> {
    let mut v = initial_lines(
        dialect,
        header_line(dialect, id, ts, cwd, parent),
        ts,
        title.map(|t| (t, None)),
    );
    v.push(b'\n');
    v
}

/// The first lines of a new session: omp's title slot (omp files only), then the header.
pub(crate) fn initial_lines(
    dialect: Dialect,
    header: Vec<u8>,
    ts: &str,
    title: Option<(&str, Option<TitleSource>)>,
) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(header.len() + 300);
    if dialect == Dialect::Omp {
        let (t, src) = title.map_or((None, None), |(t, s)| (Some(t), s));
        if let Ok(slot) = serialize_title_slot(t, src, ts) {
            bytes.extend_from_slice(&slot);
        }
    }
    bytes.extend_from_slice(&header);
    bytes
}

fn doc_from_header(line: Vec<u8>) -> SessionDoc {
    let mut bytes = line;
    bytes.push(b'\n');
    // A header we built always parses.
    SessionDoc::parse(Arc::new(bytes)).unwrap_or_else(|_| unreachable_header())
}

#[cold]
fn unreachable_header() -> SessionDoc {
    let fallback = br#"{"type":"session","version":3,"id":"invalid","timestamp":"","cwd":""}
"#
    .to_vec();
    match SessionDoc::parse(Arc::new(fallback)) {
        Ok(d) => d,
        Err(e) => panic!("built-in header does not parse: {e}"),
    }
}

fn process_cwd() -> String {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// pi's `forkFrom` of `src` as a document: a new header (`id`, `parent`, `cwd`, `ts`; omp's
/// title slot made anew with the source's title), then every entry of the migrated view,
/// through the one fork ([`crate::backend::fork::fork_lines`]). `at` names the new session
/// in an error.
fn forked_doc(
    src: &SessionDoc,
    dialect: Dialect,
    id: &str,
    parent: &str,
    cwd: &str,
    ts: &str,
    at: &Path,
) -> Result<SessionDoc, StoreError> {
    let title = src.session_name();
    let src_slot = src
        .title_slot()
        .as_ref()
        .and_then(|s| arbor_core::title::parse_title_slot(src.line(&s.line)));
    let title_arg = title
        .as_deref()
        .map(|t| (t, src_slot.and_then(|s| s.source)));
    let mut lines = Vec::with_capacity(src.entries().len() + 2);
    if let Some(slot) = src.title_slot() {
        lines.push(src.line(&slot.line));
    }
    lines.push(src.header_line());
    lines.extend((0..src.entries().len()).map(|i| src.entry_line(i)));
    let bytes = crate::backend::fork::fork_lines(
        &lines,
        id,
        parent,
        &crate::backend::fork::ForkHeader::New {
            dialect,
            cwd,
            timestamp: ts,
            title: title_arg,
        },
    )
    .bytes();
    SessionDoc::parse(Arc::new(bytes)).map_err(|reason| StoreError::NotASession {
        path: at.to_path_buf(),
        reason,
    })
}

impl SessionManager {
    fn blank(doc: SessionDoc, cwd: String, opts: ManagerOptions) -> SessionManager {
        SessionManager {
            doc,
            cwd,
            session_dir: None,
            path: None,
            persist: false,
            opts,
            w: Writer::default(),
            notes: Vec::new(),
            live: ContextCache::new(),
        }
    }

    /// A session kept in memory only (pi's `inMemory`): nothing is ever written.
    pub fn in_memory(cwd: &str, dialect: Dialect) -> SessionManager {
        let id = new_session_id(dialect);
        let ts = now_iso();
        let doc = doc_from_header(initial_lines(
            dialect,
            header_line(dialect, &id, &ts, cwd, None),
            &ts,
            None,
        ));
        SessionManager::blank(
            doc,
            cwd.to_string(),
            ManagerOptions {
                dialect: Some(dialect),
                ..Default::default()
            },
        )
    }

    /// Creates a new session in `session_dir` (default: the cwd's directory under the agent
    /// dir). Unless `deferred`, the header is written at once; the file is 0600.
    pub fn create(
        cwd: &str,
        session_dir: Option<&Path>,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let dialect = opts.dialect.unwrap_or(Dialect::Pi);
        let dir = match session_dir {
            Some(d) => d.to_path_buf(),
            None => paths::default_session_dir(dialect, &paths::agent_dir(dialect), cwd),
        };
        let id = match &opts.session_id {
            Some(id) => crate::ids::check_session_id(id)?.to_string(),
            None => new_session_id(dialect),
        };
        create_dir_private(&dir).at(&dir)?;
        let ts = now_iso();
        let path = paths::session_file_name(&dir, &ts, &id);
        let doc = doc_from_header(initial_lines(
            dialect,
            header_line(dialect, &id, &ts, cwd, None),
            &ts,
            None,
        ));
        Self::start_new(doc, cwd, dir, path, opts)
    }

    fn start_new(
        doc: SessionDoc,
        cwd: &str,
        dir: PathBuf,
        path: PathBuf,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let mut sm = SessionManager::blank(doc, cwd.to_string(), opts);
        sm.session_dir = Some(dir);
        sm.path = Some(path);
        sm.persist = true;
        if !sm.opts.deferred {
            sm.write_pending(None)?;
        }
        Ok(sm)
    }

    /// Opens an existing session for writing (or reading, with `read_only`). A missing file
    /// becomes a new session at that path (as pi's `open`); a file that is not a session is
    /// an error and stays untouched. Writers lock the session, save a torn tail to a
    /// sidecar, and migrate v1/v2 files with an atomic rewrite.
    ///
    /// # Errors
    /// [`StoreError::Lock`] when another writer holds the session (or the lock file is
    /// unusable), [`StoreError::NotASession`] for a file without a valid header (left as it
    /// is), [`StoreError::Io`] naming the file (not a regular file, no permission, a full
    /// disk while a torn tail is saved or a migration written).
    pub fn open(path: &Path, opts: ManagerOptions) -> Result<SessionManager, StoreError> {
        if opts.read_only {
            if !path.exists() {
                return Err(StoreError::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such session file",
                    ),
                });
            }
            let doc = load_doc_copy(path)?;
            return Ok(SessionManager::opened(doc, path, None, opts, Vec::new()));
        }
        let opened = FileStore::open_file(path, opts.wait, opts.durability)?;
        let writer: Box<dyn crate::backend::SessionWriter> = Box::new(opened.writer);
        let Some(doc) = opened.doc else {
            let dialect = opts.dialect.unwrap_or(Dialect::Pi);
            let cwd = process_cwd();
            let id = new_session_id(dialect);
            let ts = now_iso();
            let doc = doc_from_header(initial_lines(
                dialect,
                header_line(dialect, &id, &ts, &cwd, None),
                &ts,
                None,
            ));
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            let mut sm = SessionManager::blank(doc, cwd, opts);
            sm.w.sink = Some(writer);
            sm.session_dir = Some(dir);
            sm.path = Some(path.to_path_buf());
            sm.persist = true;
            if !sm.opts.deferred {
                sm.write_pending(None)?;
            }
            return Ok(sm);
        };
        Ok(SessionManager::opened(
            doc,
            path,
            Some(writer),
            opts,
            opened.notes,
        ))
    }

    /// A manager on the session file `path` as read (`doc`), everything of it on disk.
    fn opened(
        doc: SessionDoc,
        path: &Path,
        sink: Option<Box<dyn crate::backend::SessionWriter>>,
        opts: ManagerOptions,
        notes: Vec<OpenNote>,
    ) -> SessionManager {
        let cwd = doc.header_str("cwd").unwrap_or_else(process_cwd);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let entries = doc.entries().len();
        let mut sm = SessionManager::blank(doc, cwd, opts);
        sm.w.sink = sink;
        sm.session_dir = Some(dir);
        sm.path = Some(path.to_path_buf());
        sm.persist = !sm.opts.read_only;
        sm.w.header_on_disk = true;
        sm.w.on_disk = entries;
        sm.notes = notes;
        sm
    }

    /// Opens a session for reading only: no lock, no write, the migrated view in memory.
    pub fn open_read_only(path: &Path) -> Result<SessionManager, StoreError> {
        SessionManager::open(
            path,
            ManagerOptions {
                read_only: true,
                ..Default::default()
            },
        )
    }

    /// Creates a new session in `store` (see [`crate::backend`]): as [`SessionManager::create`],
    /// with the store in place of the session directory. Unless `deferred`, the header is
    /// stored at once and the writer lease taken.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when the store refuses (the id exists, the database fails),
    /// [`StoreError::SessionId`] for an id pi 1.5 refuses.
    pub fn create_in(
        store: Arc<dyn crate::backend::SessionStore>,
        cwd: &str,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let dialect = opts.dialect.unwrap_or(Dialect::Pi);
        let id = match &opts.session_id {
            Some(id) => crate::ids::check_session_id(id)?.to_string(),
            None => new_session_id(dialect),
        };
        let ts = now_iso();
        let doc = doc_from_header(initial_lines(
            dialect,
            header_line(dialect, &id, &ts, cwd, None),
            &ts,
            None,
        ));
        let mut sm = SessionManager::blank(doc, cwd.to_string(), opts);
        sm.w.store = Some(store);
        sm.persist = true;
        if !sm.opts.deferred {
            sm.write_pending(None)?;
        }
        Ok(sm)
    }

    /// Opens session `id` of `store` for writing (taking its writer lease) or, with
    /// `read_only`, for reading. The lines are read as a file's are: a v1 or v2 session is
    /// migrated (its lines replaced in one step, as a file is rewritten atomically),
    /// malformed lines are skipped in the view and kept in the store.
    ///
    /// # Errors
    /// [`StoreError::Backend`]: no such session, another writer holds it, the database
    /// failed; [`StoreError::NotASession`] when its first line is not a header.
    pub fn open_in(
        store: Arc<dyn crate::backend::SessionStore>,
        id: &str,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let mut sink = if opts.read_only {
            None
        } else {
            Some(store.writer(id, opts.wait)?)
        };
        let read =
            |store: &Arc<dyn crate::backend::SessionStore>| -> Result<SessionDoc, StoreError> {
                let bytes = store.read_joined(id, 0)?;
                SessionDoc::parse(Arc::new(bytes)).map_err(|reason| StoreError::NotASession {
                    path: PathBuf::from(format!("{}#{id}", store.describe())),
                    reason,
                })
            };
        let mut doc = read(&store)?;
        let mut notes = Vec::new();
        if let (Some(m), Some(w)) = (doc.migration(), sink.as_mut()) {
            let from_version = m.from_version;
            let bytes = doc.rewritten_bytes();
            let lines: Vec<&[u8]> = bytes
                .strip_suffix(b"\n")
                .unwrap_or(&bytes)
                .split(|b| *b == b'\n')
                .collect();
            w.replace_all(&lines)?;
            notes.push(OpenNote::Migrated { from_version });
            doc = read(&store)?;
        }
        let cwd = doc.header_str("cwd").unwrap_or_else(process_cwd);
        let entries = doc.entries().len();
        let mut sm = SessionManager::blank(doc, cwd, opts);
        sm.w.store = Some(store);
        sm.w.sink = sink.take();
        sm.persist = !sm.opts.read_only;
        sm.w.header_on_disk = true;
        sm.w.on_disk = entries;
        sm.notes = notes;
        Ok(sm)
    }

    /// Opens the most recently modified session of `cwd`'s directory (whose first line is a
    /// valid header, however long), or creates a new one. omp sessions first follow this
    /// terminal's breadcrumb (omp's `terminal-sessions` file), and the choice is written back to it.
    pub fn continue_recent(
        cwd: &str,
        session_dir: Option<&Path>,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        use crate::breadcrumb::{self, ContinueTarget};
        let dialect = opts.dialect.unwrap_or(Dialect::Pi);
        let agent_dir = paths::agent_dir(dialect);
        let dir = match session_dir {
            Some(d) => d.to_path_buf(),
            None => paths::default_session_dir(dialect, &agent_dir, cwd),
        };
        let target = match dialect {
            Dialect::Pi => crate::discover::most_recent_session(&dir)
                .map_or(ContinueTarget::New, ContinueTarget::Session),
            Dialect::Omp => {
                breadcrumb::omp_continue_target(&agent_dir, cwd, &dir, session_dir.is_some())
            }
        };
        let sm = match target {
            ContinueTarget::Session(p) => {
                let mut sm = SessionManager::open(&p, opts)?;
                sm.cwd = cwd.to_string();
                sm
            }
            ContinueTarget::New => SessionManager::create(cwd, Some(&dir), opts)?,
        };
        if dialect == Dialect::Omp {
            if let Some(f) = sm.session_file() {
                breadcrumb::write_breadcrumb(&agent_dir, cwd, f, !f.exists());
            }
        }
        Ok(sm)
    }

    /// [`SessionManager::continue_recent`] in a store: opens the most recently appended
    /// session of `store` whose header's `cwd` is `cwd` (the store's listing; ties go to the
    /// later one listed), or creates a new one there.
    ///
    /// # Errors
    /// As [`SessionManager::open_in`] and [`SessionManager::create_in`].
    pub fn continue_recent_in(
        store: Arc<dyn crate::backend::SessionStore>,
        cwd: &str,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let recent = store
            .list()?
            .into_iter()
            .filter(|s| s.meta.cwd == cwd)
            .max_by_key(|s| s.modified_ms);
        match recent {
            Some(s) => {
                let mut sm = SessionManager::open_in(store, &s.meta.id, opts)?;
                sm.cwd = cwd.to_string();
                Ok(sm)
            }
            None => SessionManager::create_in(store, cwd, opts),
        }
    }

    /// pi's `forkFrom`: a new session in `target_cwd`'s directory holding every entry of
    /// `source` (migrated first, unlike pi), with `parentSession` = the source path.
    pub fn fork_from(
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        Self::fork_from_doc(load_doc(source)?, source, target_cwd, session_dir, opts)
    }

    /// [`SessionManager::fork_from`] of a loaded (possibly redacted) `src`.
    fn fork_from_doc(
        src: SessionDoc,
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let dialect = opts.dialect.unwrap_or_else(|| src.dialect());
        let dir = match session_dir {
            Some(d) => d.to_path_buf(),
            None => paths::default_session_dir(dialect, &paths::agent_dir(dialect), target_cwd),
        };
        create_dir_private(&dir).at(&dir)?;
        let id = new_session_id(dialect);
        let ts = now_iso();
        let path = paths::session_file_name(&dir, &ts, &id);
        // pi records the source as `resolvePath` makes it: absolute, `.` and `..` resolved.
        let parent = match dialect {
            Dialect::Pi => paths::resolve_lexical(&source.to_string_lossy())
                .to_string_lossy()
                .into_owned(),
            Dialect::Omp => src.session_id().unwrap_or_default(),
        };
        let doc = forked_doc(&src, dialect, &id, &parent, target_cwd, &ts, &path)?;
        // Written at once, as any new session (one append through a new writer); a fork that
        // fails leaves nothing behind: no copy, no lock.
        let mut sm = SessionManager::blank(doc, target_cwd.to_string(), opts);
        sm.session_dir = Some(dir);
        sm.path = Some(path);
        sm.persist = true;
        sm.write_pending(None)?;
        Ok(sm)
    }

    /// [`SessionManager::fork_from`] in a store: a new session of `store` holding every entry
    /// of its session `source_id` (migrated first), with `parentSession` = `source_id` (a
    /// store-kept session has no path; omp records the id too). Stored at once, its writer
    /// lease taken.
    ///
    /// # Errors
    /// [`StoreError::Backend`] (no such session, the database failing),
    /// [`StoreError::NotASession`] when the source's first line is not a header.
    pub fn fork_from_in(
        store: Arc<dyn crate::backend::SessionStore>,
        source_id: &str,
        target_cwd: &str,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        let at = PathBuf::from(format!("{}#{source_id}", store.describe()));
        let src =
            SessionDoc::parse(Arc::new(store.read_joined(source_id, 0)?)).map_err(|reason| {
                StoreError::NotASession {
                    path: at.clone(),
                    reason,
                }
            })?;
        let dialect = opts.dialect.unwrap_or_else(|| src.dialect());
        let id = new_session_id(dialect);
        let ts = now_iso();
        let doc = forked_doc(&src, dialect, &id, source_id, target_cwd, &ts, &at)?;
        let mut sm = SessionManager::blank(doc, target_cwd.to_string(), opts);
        sm.w.store = Some(store);
        sm.persist = true;
        sm.write_pending(None)?;
        Ok(sm)
    }

    /// `arbor fork`: a new session from `source`. Without `at`, every entry ([`fork_from`]);
    /// with `at`, the path from the root to that entry ([`create_branched_session`]: labels
    /// of its entries re-created, the new session continues from `at`). `target_cwd` (default:
    /// the source's `cwd`) is the new header's `cwd`, and its default session directory holds
    /// the file (the source's own directory when the cwd is the source's). The new file is
    /// written at once, and its `parentSession` names the source.
    ///
    /// [`fork_from`]: SessionManager::fork_from
    /// [`create_branched_session`]: SessionManager::create_branched_session
    pub fn fork(
        source: &Path,
        at: Option<&str>,
        target_cwd: Option<&str>,
        opts: ManagerOptions,
    ) -> Result<SessionManager, StoreError> {
        Self::fork_with(source, at, target_cwd, opts, None).map(|(sm, _)| sm)
    }

    /// [`SessionManager::fork`] with the copy changed by `transform` before a byte of it is
    /// written (`arbor fork --redact`: arbor-view's redaction, so that no unredacted copy ever
    /// exists): the whole loaded source (title slot, header, entries) and the `cwd` the new
    /// header takes from it. Returns the new session and the count `transform` returned.
    ///
    /// # Errors
    /// As [`SessionManager::fork`]; [`StoreError::Transform`] when `transform` refuses (then
    /// nothing is written).
    pub fn fork_transformed(
        source: &Path,
        at: Option<&str>,
        target_cwd: Option<&str>,
        opts: ManagerOptions,
        transform: &dyn ForkTransform,
    ) -> Result<(SessionManager, usize), StoreError> {
        Self::fork_with(source, at, target_cwd, opts, Some(transform))
    }

    fn fork_with(
        source: &Path,
        at: Option<&str>,
        target_cwd: Option<&str>,
        opts: ManagerOptions,
        transform: Option<&dyn ForkTransform>,
    ) -> Result<(SessionManager, usize), StoreError> {
        let mut sm = SessionManager::open_read_only(source)?;
        if let Some(t) = transform {
            sm.cwd = t.text(&sm.cwd);
        }
        let dialect = sm.doc.dialect();
        let cwd = target_cwd.map_or_else(|| sm.cwd.clone(), str::to_string);
        let dir = match (target_cwd, sm.session_dir.clone()) {
            (None, Some(d)) => d,
            _ => paths::default_session_dir(dialect, &paths::agent_dir(dialect), &cwd),
        };
        let Some(at) = at else {
            drop(sm);
            let mut src = load_doc(source)?;
            let n = match transform {
                Some(t) => t.doc(&mut src).map_err(StoreError::Transform)?,
                None => 0,
            };
            return SessionManager::fork_from_doc(src, source, &cwd, Some(&dir), opts)
                .map(|sm| (sm, n));
        };
        if sm.doc.index().get(at).is_none() {
            return Err(StoreError::NotFound(at.to_string()));
        }
        let n = match transform {
            Some(t) => t.doc(&mut sm.doc).map_err(StoreError::Transform)?,
            None => 0,
        };
        create_dir_private(&dir).at(&dir)?;
        sm.cwd = cwd;
        sm.session_dir = Some(dir);
        sm.persist = true;
        sm.opts = ManagerOptions {
            read_only: false,
            deferred: false,
            ..opts
        };
        sm.create_branched_session(at)?;
        Ok((sm, n))
    }

    // ----- accessors -------------------------------------------------------------------

    /// The loaded document.
    pub fn doc(&self) -> &SessionDoc {
        &self.doc
    }
    /// Notes about what opening did (migration, torn-tail repair).
    pub fn open_notes(&self) -> &[OpenNote] {
        &self.notes
    }
    /// The session file, if persisted.
    pub fn session_file(&self) -> Option<&Path> {
        self.path.as_deref()
    }
    /// The session directory.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_dir.as_deref()
    }
    /// The store a session is kept in (`None` for a file or an in-memory session).
    pub fn store(&self) -> Option<Arc<dyn crate::backend::SessionStore>> {
        self.w.store.clone()
    }
    /// The working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }
    /// The session id (header `id`).
    pub fn session_id(&self) -> String {
        self.doc.session_id().unwrap_or_default()
    }
    /// The header line's bytes.
    pub fn header(&self) -> &[u8] {
        self.doc.header_line()
    }
    /// The session name (pi `getSessionName`, or omp's title).
    pub fn session_name(&self) -> Option<String> {
        self.doc.session_name()
    }
    /// The dialect new entries are written in.
    pub fn dialect(&self) -> Dialect {
        self.doc.dialect()
    }
    /// Whether the session is written to disk.
    pub fn is_persisted(&self) -> bool {
        self.persist
    }
    /// The leaf id (`None`: pi's `null` leaf).
    pub fn leaf_id(&self) -> Option<&str> {
        self.doc
            .index()
            .leaf
            .and_then(|i| self.doc.entries()[i].id.as_deref())
    }
    /// The entry with `id`.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.doc.index().get(id).map(|i| &self.doc.entries()[i])
    }
    /// The raw line of the entry with `id`.
    pub fn entry_line(&self, id: &str) -> Option<&[u8]> {
        self.doc.index().get(id).map(|i| self.doc.entry_line(i))
    }
    /// All entries in file order.
    pub fn entries(&self) -> &[Entry] {
        self.doc.entries()
    }
    /// The path root → `from` (default: the leaf), as pi's `getBranch`.
    pub fn branch_path(&self, from: Option<&str>) -> Vec<&Entry> {
        let start = match from {
            Some(id) => self.doc.index().get(id),
            None => self.doc.index().leaf,
        };
        match start {
            Some(i) => self
                .doc
                .index()
                .path(&self.doc, i)
                .entries
                .into_iter()
                .map(|k| &self.doc.entries()[k])
                .collect(),
            None => Vec::new(),
        }
    }
    /// Direct children of `id`, in file order (pi's `getChildren`).
    pub fn children(&self, id: &str) -> Vec<&Entry> {
        self.doc
            .entries()
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }
    /// The label of `id`.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.doc.index().labels.get(id)
    }
    /// pi's `getTree()`.
    pub fn tree(&self) -> Tree {
        self.doc.index().tree(&self.doc)
    }
    /// The context for the current leaf.
    pub fn build_session_context(&self) -> SessionContext {
        build_session_context(&self.doc, LeafSel::Current)
    }
    /// The context for a given leaf.
    pub fn build_context_for(&self, leaf: LeafSel<'_>) -> SessionContext {
        build_session_context(&self.doc, leaf)
    }

    /// The context of the current leaf, kept up to date incrementally for a long-running
    /// manager (an agent asks for it every turn): after appends below the leaf it costs what
    /// was appended, not the whole path; a branch or a compaction rebuilds it. Equal to
    /// [`build_session_context`](Self::build_session_context). The [`ContextChange`] tells
    /// which messages are new, so a caller can serialize only those.
    pub fn live_context(&mut self) -> LiveContext<'_> {
        let change = self.live.update(&self.doc);
        match self.live.context() {
            Some(context) => LiveContext {
                context,
                doc: &self.doc,
                change,
            },
            None => unreachable_live(),
        }
    }

    // ----- writes ----------------------------------------------------------------------

    fn check_writable(&self) -> Result<(), StoreError> {
        if self.opts.read_only {
            return Err(StoreError::ReadOnly);
        }
        self.w.check(self.path.as_deref())
    }

    fn has_conversation(&self) -> bool {
        has_conversation(&self.doc)
    }

    /// Writes everything not yet on disk (header, deferred entries) plus `line`, in one
    /// append. On failure nothing stays on disk and the error is latched.
    fn write_pending(&mut self, line: Option<&[u8]>) -> Result<(), StoreError> {
        self.w
            .write_pending(&self.doc, self.path.as_deref(), &self.opts, line)
    }

    /// Appends `entry` as a child of `parent` (pi: always the leaf); the leaf moves to it.
    pub fn append_with_parent(
        &mut self,
        entry: &NewEntry,
        parent: Option<&str>,
    ) -> Result<String, StoreError> {
        self.check_writable()?;
        if let NewEntry::Label { target_id, .. } = entry {
            if self.doc.index().get(target_id).is_none() {
                return Err(StoreError::NotFound(target_id.clone()));
            }
        }
        // Never a dangling parent: pi's writers only hang entries from entries they have.
        if let Some(p) = parent {
            if self.doc.index().get(p).is_none() {
                return Err(StoreError::NotFound(p.to_string()));
            }
        }
        let ts = now_iso();
        let prepared;
        let entry = match self.prepare_pi15(entry, parent, &ts)? {
            Some(e) => {
                prepared = e;
                &prepared
            }
            None => entry,
        };
        self.append_at(entry, parent, &ts)
    }

    /// pi 1.5's work before writing its new entries: a context edit checked and normalized
    /// as `appendContextEdit` does (same refusals, same messages), a pi compaction given the
    /// system message folded from the current context (`getCurrentSystemMessage`, timestamped
    /// with the compaction's time). `None`: the entry is written as given.
    fn prepare_pi15(
        &self,
        entry: &NewEntry,
        parent: Option<&str>,
        ts: &str,
    ) -> Result<Option<NewEntry>, StoreError> {
        match entry {
            NewEntry::ContextEdit {
                target_id,
                replacement,
            } => {
                let replacement = match replacement {
                    None => None,
                    Some(raw) => {
                        let v = JsValue::parse(raw).unwrap_or(JsValue::Null);
                        let content = v.get("content");
                        if !matches!(v, JsValue::Object(_))
                            || !matches!(content, Some(JsValue::String(_) | JsValue::Array(_)))
                        {
                            return Err(StoreError::ContextEdit(
                                "Context edit replacement must be null or contain string/array content"
                                    .into(),
                            ));
                        }
                        Some(v)
                    }
                };
                let Some(t) = self.doc.index().get(target_id) else {
                    return Err(StoreError::NotFound(target_id.clone()));
                };
                // pi: on `getBranch()`, the path the new entry hangs from.
                let on_branch = parent.is_some_and(|p| {
                    self.branch_path(Some(p))
                        .iter()
                        .any(|e| e.id.as_deref() == Some(target_id.as_str()))
                });
                if !on_branch {
                    return Err(StoreError::ContextEdit(format!(
                        "Entry {target_id} is not on the active branch"
                    )));
                }
                let target = &self.doc.entries()[t];
                let role = match (&target.etype, &target.role) {
                    (EntryType::CustomMessage, _) => Some(Role::Custom),
                    (
                        EntryType::Message,
                        Some(r @ (Role::User | Role::Assistant | Role::ToolResult)),
                    ) => Some(r.clone()),
                    _ => None,
                };
                let Some(role) = role else {
                    return Err(StoreError::ContextEdit(format!(
                        "Entry {target_id} does not contribute editable model content"
                    )));
                };
                // pi stores `{content: [text block]}` for a string on an assistant message
                // or tool result (other members dropped), the replacement as given otherwise.
                let replacement = replacement.map(|v| {
                    let content = v.get("content");
                    match arbor_core::context::edited_content(&role, content) {
                        Some(c) if Some(&c) != content => {
                            JsValue::Object(vec![("content".into(), c)]).to_json()
                        }
                        _ => v.to_json(),
                    }
                });
                Ok(Some(NewEntry::ContextEdit {
                    target_id: target_id.clone(),
                    replacement,
                }))
            }
            NewEntry::Compaction {
                system_message: None,
                ..
            } if self.doc.dialect() == Dialect::Pi => {
                let leaf = match parent {
                    Some(p) => LeafSel::Id(p),
                    None => LeafSel::Null,
                };
                let SessionContext::Pi(ctx) = self.build_context_for(leaf) else {
                    return Ok(None);
                };
                let Some(mut sys) = ctx.current_system_message(&self.doc) else {
                    return Ok(None);
                };
                let ms = arbor_core::time::parse_iso_ms(ts).unwrap_or(0.0);
                sys.set("timestamp", JsValue::Number(ms));
                let mut with_system = entry.clone();
                if let NewEntry::Compaction { system_message, .. } = &mut with_system {
                    *system_message = Some(sys.to_json());
                }
                Ok(Some(with_system))
            }
            _ => Ok(None),
        }
    }

    fn blob_store(&self) -> crate::blobs::BlobStore {
        let dir = match (&self.opts.blob_dir, &self.path) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) => crate::blobs::blob_dir_for_session(p, None),
            (None, None) => paths::agent_dir(Dialect::Omp).join("blobs"),
        };
        crate::blobs::BlobStore::new(dir)
    }

    /// Appends with a given timestamp. Every check that can fail runs before the line is
    /// written; the tree advances only after the write succeeded.
    fn append_at(
        &mut self,
        entry: &NewEntry,
        parent: Option<&str>,
        ts: &str,
    ) -> Result<String, StoreError> {
        let dialect = self.doc.dialect();
        let id = new_entry_id(dialect, &|id| self.doc.index().get(id).is_some());
        let mut line = entry.to_line(
            dialect,
            &Base {
                id: &id,
                parent_id: parent,
                timestamp: ts,
            },
        );
        // A line that does not parse back must never reach the disk.
        arbor_core::entry::parse_fields(&line)?;
        if self.persist && dialect == Dialect::Omp {
            // omp's persistence transforms: cut huge strings, move images to the blob store
            // (each blob fsynced before this line is written).
            // A session kept in a store keeps its blobs there (unless a blob directory was
            // given); a session file, in the blob directory omp uses for it.
            let in_store = self
                .w
                .store
                .clone()
                .filter(|_| self.opts.blob_dir.is_none());
            let store = self.blob_store();
            let prepared = match &in_store {
                Some(s) => crate::blobs::prepare_line_in(&line, s.as_ref()),
                None => crate::blobs::prepare_line(&line, &store),
            };
            match prepared {
                Ok(Some(new)) => {
                    // A session outside the sessions root is registered where gc looks
                    // (omp's custom-session-files) before its first blob reference is
                    // written.
                    if in_store.is_none()
                        && crate::blobs::contains(&new, arbor_core::blobref::BLOB_PREFIX.as_bytes())
                    {
                        if let Some(real) = self.w.sink.as_ref().and_then(|w| w.file_path()) {
                            crate::gc::register_session_file(&store, real)?;
                        } else if let Some(p) = &self.path {
                            crate::gc::register_session_file(&store, p)?;
                        }
                    }
                    line = new
                }
                Ok(None) => {}
                Err(e) => {
                    if matches!(e, StoreError::Blob(_) | StoreError::Backend(_)) {
                        self.w.latched = Some(e.to_string());
                    }
                    return Err(e);
                }
            }
        }
        let write_now = self.persist
            && (!self.opts.deferred
                || self.has_conversation()
                || entry.starts_conversation(self.doc.dialect()));
        if write_now {
            self.write_pending(Some(&line))?;
        }
        self.doc.push_line(line)?;
        if write_now {
            self.w.on_disk = self.doc.entries().len();
        }
        Ok(id)
    }

    /// Appends `entry` as a child of the leaf.
    pub fn append(&mut self, entry: &NewEntry) -> Result<String, StoreError> {
        let parent = self.leaf_id().map(str::to_string);
        self.append_with_parent(entry, parent.as_deref())
    }

    /// `appendMessage(message)`: raw JSON of the message object.
    pub fn append_message(&mut self, message_json: &[u8]) -> Result<String, StoreError> {
        self.append(&NewEntry::Message(message_json.to_vec()))
    }

    /// `appendThinkingLevelChange(level)`.
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, StoreError> {
        self.append(&NewEntry::ThinkingLevelChange(
            Some(level.to_string()),
            None,
        ))
    }

    /// `appendModelChange(provider, modelId)` (omp files get omp's `model: "p/m"` shape).
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, StoreError> {
        let e = match self.dialect() {
            Dialect::Pi => NewEntry::ModelChange {
                provider: provider.into(),
                model_id: model_id.into(),
            },
            Dialect::Omp => NewEntry::OmpModelChange {
                model: format!("{provider}/{model_id}"),
                role: None,
                fallback: None,
            },
        };
        self.append(&e)
    }

    /// `appendCompaction(summary, firstKeptEntryId, tokensBefore, details?, fromHook?)`.
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: f64,
        details: Option<&JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, StoreError> {
        self.append_compaction_with_usage(
            summary,
            Some(first_kept_entry_id),
            tokens_before,
            details,
            from_hook,
            None,
        )
    }

    /// pi 1.5 `appendCompaction(summary, firstKeptEntryId?, tokensBefore, details?, fromHook?,
    /// usage?)`: `firstKeptEntryId` defaults to the compaction's own id; the system message of
    /// the current context is folded into `systemMessage` (see [`NewEntry::Compaction`]).
    pub fn append_compaction_with_usage(
        &mut self,
        summary: &str,
        first_kept_entry_id: Option<&str>,
        tokens_before: f64,
        details: Option<&JsValue>,
        from_hook: Option<bool>,
        usage: Option<&JsValue>,
    ) -> Result<String, StoreError> {
        let s = |v: &str| JsValue::String(v.into()).to_json();
        self.append(&NewEntry::Compaction {
            summary: s(summary),
            short_summary: None,
            first_kept_entry_id: first_kept_entry_id.map(s),
            tokens_before: JsValue::Number(tokens_before).to_json(),
            details: details.map(JsValue::to_json),
            from_hook: from_hook.map(|b| JsValue::Bool(b).to_json()),
            preserve_data: None,
            usage: usage.map(JsValue::to_json),
            system_message: None,
        })
    }

    /// pi 1.5 `appendContextEdit(targetId, replacement)`: `None` removes the target's messages
    /// from the context, `Some({content})` replaces their content (a string becomes one text
    /// block for an assistant message or a tool result). Refused as pi refuses it
    /// ([`StoreError::NotFound`], [`StoreError::ContextEdit`]).
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<&JsValue>,
    ) -> Result<String, StoreError> {
        self.append(&NewEntry::ContextEdit {
            target_id: target_id.to_string(),
            replacement: replacement.map(JsValue::to_json),
        })
    }

    /// pi 1.5 `appendUsage(kind, provider, model, usage, note?)`: usage outside the context
    /// (a title, a summary); `note` written only when non-empty.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: &JsValue,
        note: Option<&str>,
    ) -> Result<String, StoreError> {
        let s = |v: &str| JsValue::String(v.into()).to_json();
        self.append(&NewEntry::Usage {
            kind: s(kind),
            provider: s(provider),
            model: s(model),
            usage: usage.to_json(),
            note: note.filter(|n| !n.is_empty()).map(s),
        })
    }

    /// `appendCustomEntry(customType, data?)`.
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<&JsValue>,
    ) -> Result<String, StoreError> {
        self.append(&NewEntry::Custom {
            custom_type: JsValue::String(custom_type.into()).to_json(),
            data: data.map(JsValue::to_json),
        })
    }

    /// `appendCustomMessageEntry(customType, content, display, details?)`.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: &JsValue,
        display: bool,
        details: Option<&JsValue>,
    ) -> Result<String, StoreError> {
        self.append(&NewEntry::CustomMessage {
            custom_type: JsValue::String(custom_type.into()).to_json(),
            content: content.to_json(),
            display: JsValue::Bool(display).to_json(),
            details: details.map(JsValue::to_json),
            attribution: None,
        })
    }

    /// `appendLabelChange(targetId, label)`: `None` or `""` clears.
    pub fn append_label_change(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, StoreError> {
        self.append(&NewEntry::Label {
            target_id: target_id.into(),
            label: label.map(str::to_string),
        })
    }

    /// `appendSessionInfo(name)`: stores `name.trim()`.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, StoreError> {
        let trimmed = name.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        self.append(&NewEntry::SessionInfo(trimmed.to_string()))
    }

    /// omp's title slot, when the file has a valid one.
    pub fn title_info(&self) -> Option<TitleSlotInfo> {
        let slot = self.doc.title_slot()?;
        arbor_core::title::parse_title_slot(self.doc.line(&slot.line))
    }

    /// Names the session as the file's own tool does, returning the id of the entry written.
    ///
    /// * pi files: `appendSessionInfo(name)` (a `session_info` entry; the name is trimmed).
    /// * omp files: omp's `setSessionName(name, "user")`: the name is cleaned as omp cleans it,
    ///   a `title_change` entry (`title`, `source`, `previousTitle`?) is appended, then the
    ///   256-byte title slot on line 1 is rewritten in place (one positional write). A file
    ///   without a valid fixed-size slot gets one through an atomic rewrite instead.
    pub fn set_session_name(&mut self, name: &str) -> Result<String, StoreError> {
        if self.dialect() == Dialect::Pi {
            let id = self.append_session_info(name)?;
            if let (Some(store), true) = (&self.w.store, self.w.header_on_disk) {
                store.set_name(&self.session_id(), name.trim())?;
            }
            return Ok(id);
        }
        self.check_writable()?;
        let title = clean_title(name);
        if title.is_empty() {
            return Err(StoreError::Body(crate::body::BodyError::Field {
                etype: "title_change".into(),
                field: "title",
                what: "a name that is not empty after cleaning",
            }));
        }
        let previous = self.session_name();
        let ts = now_iso();
        let q = |v: &str| JsValue::String(v.into()).to_json();
        let mut members = vec![
            ("title".to_string(), q(&title)),
            ("source".to_string(), q("user")),
        ];
        if let Some(p) = previous.filter(|p| !p.is_empty()) {
            members.push(("previousTitle".to_string(), q(&p)));
        }
        let entry = NewEntry::Other {
            etype: "title_change".into(),
            members,
        };
        let parent = self.leaf_id().map(str::to_string);
        let id = self.append_at(&entry, parent.as_deref(), &ts)?;
        let slot = serialize_title_slot(Some(&title), Some(TitleSource::User), &ts)?;
        if !(self.persist && self.w.header_on_disk) {
            self.doc.set_title_slot(&slot)?;
            return Ok(id);
        }
        let Some(sink) = self.w.sink.as_mut() else {
            return Err(StoreError::ReadOnly);
        };
        match sink.write_title_slot(&slot)? {
            SlotWrite::InPlace => self.doc.set_title_slot(&slot)?,
            SlotWrite::Rewritten => {
                // The file was rewritten with a slot: read it again, keeping the leaf.
                let real = sink.file_path().map(Path::to_path_buf);
                let leaf = self.leaf_id().map(str::to_string);
                let Some(real) = real.or_else(|| self.path.clone()) else {
                    return Err(StoreError::ReadOnly);
                };
                self.doc = load_doc_copy(&real)?;
                self.w.on_disk = self.doc.entries().len();
                if let Some(l) = leaf {
                    self.doc.branch_to(&l);
                }
            }
            SlotWrite::Lines => {
                self.doc.set_title_slot(&slot)?;
                self.w.replace_all(&self.doc)?;
            }
        }
        if let Some(store) = &self.w.store {
            store.set_name(&self.session_id(), &title)?;
        }
        Ok(id)
    }

    /// `branch(id)`: moves the leaf (in memory only, as pi).
    pub fn branch(&mut self, id: &str) -> Result<(), StoreError> {
        self.doc
            .branch_to(id)
            .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        Ok(())
    }

    /// `resetLeaf()`: the next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.doc.reset_leaf();
    }

    /// `branchWithSummary(fromId | null, summary, details?, fromHook?)`: appends a
    /// `branch_summary` as a child of `from_id` (a root when `None`).
    pub fn branch_with_summary(
        &mut self,
        from_id: Option<&str>,
        summary: &str,
        details: Option<&JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, StoreError> {
        if let Some(id) = from_id {
            if self.doc.index().get(id).is_none() {
                return Err(StoreError::NotFound(id.to_string()));
            }
        }
        let e = NewEntry::BranchSummary {
            from_id: from_id.map(str::to_string),
            summary: JsValue::String(summary.into()).to_json(),
            details: details.map(JsValue::to_json),
            from_hook: from_hook.map(|b| JsValue::Bool(b).to_json()),
        };
        self.append_with_parent(&e, from_id)
    }

    /// `createBranchedSession(leafId)`: a new session holding the path to `leaf_id` (labels
    /// re-created after it). Persisted managers switch to the new file and return its path;
    /// one kept in a store switches to a new session of that store (`None`; its id is
    /// [`SessionManager::session_id`]).
    pub fn create_branched_session(
        &mut self,
        leaf_id: &str,
    ) -> Result<Option<PathBuf>, StoreError> {
        let leaf = self
            .doc
            .index()
            .get(leaf_id)
            .ok_or_else(|| StoreError::NotFound(leaf_id.to_string()))?;
        let path = self.doc.index().path(&self.doc, leaf).entries;
        let dialect = self.doc.dialect();
        let ts = now_iso();
        let id = new_session_id(dialect);
        // pi records the session file as `resolvePath` made it when it was opened: absolute,
        // `.` and `..` resolved.
        let parent = if self.persist {
            self.path.as_ref().map(|p| {
                paths::resolve_lexical(&p.to_string_lossy())
                    .to_string_lossy()
                    .into_owned()
            })
        } else {
            None
        };
        let title = self.doc.session_name();
        let slot_src = self.title_info().and_then(|t| t.source);
        let mut bytes = initial_lines(
            dialect,
            header_line(dialect, &id, &ts, &self.cwd, parent.as_deref()),
            &ts,
            title.as_deref().map(|t| (t, slot_src)),
        );
        bytes.push(b'\n');
        let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut last: Option<String> = None;
        let mut on_path = std::collections::HashSet::new();
        // pi 1.5 re-chains the path around the label entries it leaves out (each kept entry's
        // parentId becomes the previous kept entry, a compaction's firstKeptEntryId naming a
        // left-out label moves to the entry after it) and re-serializes every entry; omp and
        // pi 0.73 copy the entries as they are (an entry whose parent was a label is then an
        // orphan in the new file).
        let rechain = dialect == Dialect::Pi;
        let mut pending_labels: Vec<String> = Vec::new();
        let mut label_moved_to: std::collections::HashMap<String, String> =
            std::collections::HashMap::new();
        for &i in &path {
            let e = &self.doc.entries()[i];
            if let Some(eid) = &e.id {
                taken.insert(eid.to_string());
            }
            if e.etype == EntryType::Label {
                if let Some(eid) = &e.id {
                    pending_labels.push(eid.to_string());
                }
                continue;
            }
            if let Some(eid) = &e.id {
                on_path.insert(eid.to_string());
                for l in pending_labels.drain(..) {
                    label_moved_to.insert(l, eid.to_string());
                }
            }
            // Entry lines parsed when the document was loaded: a failure here cannot happen,
            // and would copy the line unchanged.
            let parsed = if rechain {
                JsValue::parse(self.doc.entry_line(i)).ok()
            } else {
                None
            };
            if let Some(mut v) = parsed {
                v.set(
                    "parentId",
                    last.as_deref()
                        .map_or(JsValue::Null, |p| JsValue::String(p.into())),
                );
                if e.etype == EntryType::Compaction {
                    let fk = v.get("firstKeptEntryId").and_then(|f| f.as_str_lossy());
                    let moved = fk
                        .filter(|f| Some(f.as_ref()) != e.id.as_deref())
                        .and_then(|f| label_moved_to.get(f.as_ref()).cloned());
                    if let Some(m) = moved {
                        v.set("firstKeptEntryId", JsValue::String(m.as_str().into()));
                    }
                }
                bytes.extend_from_slice(&v.to_json());
            } else {
                bytes.extend_from_slice(self.doc.entry_line(i));
            }
            bytes.push(b'\n');
            last = e.id.as_deref().map(str::to_string);
        }
        // pi 1.5 gives a re-created label the time of the label entry it comes from.
        let mut label_times: std::collections::HashMap<String, Option<JsValue>> =
            std::collections::HashMap::new();
        if rechain {
            for e in self.doc.entries() {
                if e.etype != EntryType::Label {
                    continue;
                }
                let line = self.doc.line(&e.line);
                let Some(target) = e.fields.str(line, "targetId") else {
                    continue;
                };
                let set = e.fields.value(line, "label").is_some_and(|l| l.is_truthy());
                if set {
                    let t = e.fields.value(line, "timestamp");
                    label_times.insert(target.into_owned(), t);
                } else {
                    label_times.remove(target.as_ref());
                }
            }
        }
        let labels: Vec<(String, String)> = self
            .doc
            .index()
            .labels
            .iter()
            .filter(|(t, _)| on_path.contains(*t))
            .map(|(t, l)| (t.to_string(), l.to_string()))
            .collect();
        for (target, label) in labels {
            let lid = new_entry_id(dialect, &|x| taken.contains(x));
            taken.insert(lid.clone());
            if let Some(t) = label_times.get(&target) {
                let mut members = vec![
                    (JsStr::from("type"), JsValue::String("label".into())),
                    (JsStr::from("id"), JsValue::String(lid.as_str().into())),
                    (
                        JsStr::from("parentId"),
                        last.as_deref()
                            .map_or(JsValue::Null, |p| JsValue::String(p.into())),
                    ),
                ];
                if let Some(t) = t {
                    members.push((JsStr::from("timestamp"), t.clone()));
                }
                members.push((
                    JsStr::from("targetId"),
                    JsValue::String(target.as_str().into()),
                ));
                members.push((JsStr::from("label"), JsValue::String(label.as_str().into())));
                bytes.extend_from_slice(&JsValue::Object(members).to_json());
                bytes.push(b'\n');
                last = Some(lid);
                continue;
            }
            let line = crate::build::LineBuilder::new()
                .str("type", "label")
                .base(&Base {
                    id: &lid,
                    parent_id: last.as_deref(),
                    timestamp: &ts,
                })
                .str("targetId", &target)
                .str("label", &label)
                .finish();
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
            last = Some(lid);
        }
        let new_doc =
            SessionDoc::parse(Arc::new(bytes)).map_err(|reason| StoreError::NotASession {
                path: PathBuf::from("<branched session>"),
                reason,
            })?;
        if !self.persist {
            self.doc = new_doc;
            return Ok(None);
        }
        // The new session is written as any new session is (one append through a new writer,
        // now or at the first message when deferred): a store-kept session branches into a
        // new session of the same store, a file into a new file of the session directory.
        // The source's writer (its lock or lease) is released.
        self.w.sink = None;
        self.w.header_on_disk = false;
        self.w.on_disk = 0;
        self.doc = new_doc;
        let new_path = if self.w.store.is_some() {
            None
        } else {
            let dir = self.session_dir.clone().unwrap_or_default();
            Some(paths::session_file_name(&dir, &ts, &id))
        };
        self.path = new_path.clone();
        if let Some(p) = &new_path {
            // The lock of the new file is taken now, even when its first write is deferred.
            self.w.sink = Some(Box::new(crate::backend::files::FileWriter::create(
                p,
                self.opts.wait,
                self.opts.durability,
            )?));
        }
        if !self.opts.deferred || has_conversation(&self.doc) {
            self.write_pending(None)?;
        }
        Ok(new_path)
    }

    /// Forces appended entries to stable storage (per the durability policy).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.w.flush()
    }

    /// Flushes and releases the writer lock.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.flush()
    }
}
