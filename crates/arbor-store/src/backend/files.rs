//! [`FileStore`]: the JSONL files of an agent directory as a [`SessionStore`], laid out as pi
//! and omp lay them out (`<agent dir>/sessions/<encoded cwd>/<time>_<id>.jsonl`), and
//! [`FileWriter`], the one writer of a session file (a [`crate::SessionManager`] on a file
//! writes through it, and so does the store): the writer lock (`flock` on the session and its
//! `.lock` file, held until the writer is dropped or its process dies; symlinks resolved once,
//! when it is taken, and never followed after), new files created exclusively, appends in one
//! `write` cut back on failure, the durability policy, a last line without its newline
//! completed before the next line, rewrites atomic. [`FileStore::open_file`] opens a session
//! file for writing as pi's `open` does, with arbor's repairs: a torn tail saved to a sidecar
//! and cut, a v1/v2 file migrated by an atomic rewrite.
use super::sync_support::Moment;
use super::{
    check_lines, BackendError, Blobs, OpenNote, SessionMeta, SessionStore, SessionWriter,
    SlotWrite, StoredSession,
};
use crate::error::{IoContext, StoreError};
use crate::file::{create_dir_private, AppendFile, Durability};
use crate::lock::{LockError, WriterLock};
use arbor_core::doc::Dialect;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Sessions as JSONL files under an agent directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    agent_dir: PathBuf,
}

impl FileStore {
    /// The sessions of the agent directory `agent_dir` (e.g. `~/.pi/agent`): files live in
    /// its `sessions/` directory, one directory per project.
    pub fn new(agent_dir: &Path) -> FileStore {
        FileStore {
            agent_dir: agent_dir.to_path_buf(),
        }
    }

    /// The agent directory.
    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    /// Every session file under the sessions directory (one level of project directories).
    pub fn session_files(&self) -> Vec<PathBuf> {
        self.files()
    }

    /// The session id of a session file: its header's `id` (the header is the first line,
    /// or the second after omp's title slot), read from the file's first 1 MB
    /// ([`crate::discover::header_id`]).
    pub fn id_of(path: &Path) -> Option<String> {
        crate::discover::header_id(path)
    }

    fn name(&self) -> String {
        format!(
            "files:{}",
            crate::paths::sessions_root(&self.agent_dir).display()
        )
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> BackendError + '_ {
        let path = path.to_path_buf();
        move |source| BackendError::Io {
            store: self.name(),
            path: path.clone(),
            source,
        }
    }

    /// Every session file.
    fn files(&self) -> Vec<PathBuf> {
        self.scan().0
    }

    /// Every session file (`*.jsonl` in a project directory of the sessions directory,
    /// sorted), and the directories that could not be listed, with why (a project directory
    /// a `sudo pi` left root-owned): a caller that must not pass over sessions silently
    /// (`arbor sync`) names them. A missing sessions directory, and a file where a project
    /// directory would be, are not errors.
    pub fn scan(&self) -> (Vec<PathBuf>, Vec<(PathBuf, std::io::Error)>) {
        let root = crate::paths::sessions_root(&self.agent_dir);
        let (mut out, mut unreadable) = (Vec::new(), Vec::new());
        let skipped = |e: &std::io::Error| {
            matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            )
        };
        let dirs = match std::fs::read_dir(&root) {
            Ok(d) => d,
            Err(e) => {
                if !skipped(&e) {
                    unreadable.push((root, e));
                }
                return (out, unreadable);
            }
        };
        for d in dirs {
            let d = match d {
                Ok(d) => d.path(),
                Err(e) => {
                    unreadable.push((root.clone(), e));
                    continue;
                }
            };
            match std::fs::read_dir(&d) {
                Ok(files) => {
                    for f in files {
                        match f {
                            Ok(f) => {
                                let p = f.path();
                                if p.extension().is_some_and(|x| x == "jsonl") {
                                    out.push(p);
                                }
                            }
                            Err(e) => unreadable.push((d.clone(), e)),
                        }
                    }
                }
                Err(e) if skipped(&e) => {}
                Err(e) => unreadable.push((d, e)),
            }
        }
        out.sort();
        unreadable.sort_by(|a, b| a.0.cmp(&b.0));
        (out, unreadable)
    }

    /// The file of session `id`: the one named `<time>_<id>.jsonl`, else one whose header
    /// has that id.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, BackendError> {
        let suffix = format!("_{id}.jsonl");
        let files = self.files();
        if let Some(p) = files.iter().find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        }) {
            return Ok(p.clone());
        }
        files
            .into_iter()
            .find(|p| Self::id_of(p).as_deref() == Some(id))
            .ok_or_else(|| BackendError::NoSession {
                store: self.name(),
                id: id.to_string(),
            })
    }

    fn busy(&self, id: &str, e: LockError) -> BackendError {
        match e {
            LockError::Busy { holder, .. } => BackendError::Busy {
                store: self.name(),
                id: id.to_string(),
                holder,
            },
            e @ LockError::Io { .. } => BackendError::Lock {
                store: self.name(),
                source: e,
            },
        }
    }
}

fn joined(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

fn split(bytes: &[u8]) -> Vec<Vec<u8>> {
    if bytes.is_empty() {
        return Vec::new();
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect()
}

/// A session file read as a document (`None`: unreadable, or not a session).
fn parse(path: &Path) -> Option<arbor_core::doc::SessionDoc> {
    let bytes = crate::safe_fs::read_regular(path).ok()?;
    arbor_core::doc::SessionDoc::parse(std::sync::Arc::new(bytes)).ok()
}

impl SessionStore for FileStore {
    fn describe(&self) -> String {
        self.name()
    }

    fn leases_expire(&self) -> bool {
        false
    }

    fn create(&self, meta: &SessionMeta, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.name(), lines)?;
        if self.path_of(&meta.id).is_ok() {
            return Err(BackendError::Exists {
                store: self.name(),
                id: meta.id.clone(),
            });
        }
        crate::ids::check_session_id(&meta.id).map_err(|e| BackendError::Store {
            store: self.name(),
            source: Box::new(e),
        })?;
        let dialect = if meta.tool == "omp" {
            Dialect::Omp
        } else {
            Dialect::Pi
        };
        let dir = crate::paths::default_session_dir(dialect, &self.agent_dir, &meta.cwd);
        crate::file::create_dir_private(&dir).map_err(self.io(&dir))?;
        let created = if meta.created.is_empty() {
            crate::ids::now_iso()
        } else {
            meta.created.clone()
        };
        let path = crate::paths::session_file_name(&dir, &created, &meta.id);
        // Through the one writer: locked, created `O_EXCL` with every line in one write and
        // forced to the disk (all or none after a crash), removed again if that write fails.
        let mut w = FileWriter::create(&path, None, Durability::Strict).map_err(|e| match e {
            StoreError::Lock(l) => self.busy(&meta.id, l),
            e => BackendError::Store {
                store: self.name(),
                source: Box::new(e),
            },
        })?;
        if path.exists() {
            return Err(BackendError::Exists {
                store: self.name(),
                id: meta.id.clone(),
            });
        }
        w.store = self.name();
        // The lines in one write (none: an empty file, as asked).
        w.append_bytes(&joined(lines))
    }

    fn read_into(
        &self,
        id: &str,
        from: u64,
        out: &mut dyn std::io::Write,
    ) -> Result<(), BackendError> {
        use std::io::Read;
        let path = self.path_of(id)?;
        let mut f = crate::safe_fs::open_regular(&path).map_err(self.io(&path))?;
        // A block at a time: the first `from` lines skipped, the rest written through; a
        // last line without its newline gets one (as a line of a store does).
        let mut block = vec![0u8; 1 << 16];
        let mut skip = from;
        let mut last = b'\n';
        loop {
            let n = match f.read(&mut block) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(&path)(e)),
            };
            let mut chunk = &block[..n];
            while skip > 0 && !chunk.is_empty() {
                match chunk.iter().position(|b| *b == b'\n') {
                    Some(i) => {
                        chunk = &chunk[i + 1..];
                        skip -= 1;
                    }
                    None => chunk = &[],
                }
            }
            if let Some(&b) = chunk.last() {
                last = b;
                out.write_all(chunk)
                    .map_err(|source| BackendError::Output {
                        store: self.name(),
                        source,
                    })?;
            }
        }
        if last != b'\n' {
            out.write_all(b"\n")
                .map_err(|source| BackendError::Output {
                    store: self.name(),
                    source,
                })?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<StoredSession>, BackendError> {
        let mut out = Vec::new();
        for p in self.files() {
            let Some(doc) = parse(&p) else {
                continue;
            };
            let tool = if doc.dialect() == Dialect::Omp {
                "omp"
            } else {
                "pi"
            };
            let mut meta = super::meta_from_header(doc.header_line(), tool);
            meta.name = doc.session_name();
            meta.source_path = Some(p.display().to_string());
            let modified_ms = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as i64);
            let bytes = doc.base_bytes();
            out.push(StoredSession {
                meta,
                lines: bytes.iter().filter(|b| **b == b'\n').count() as u64
                    + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n")),
                bytes: bytes.len() as u64,
                modified_ms,
            });
        }
        Ok(out)
    }

    fn writer(
        &self,
        id: &str,
        wait: Option<Duration>,
    ) -> Result<Box<dyn SessionWriter>, BackendError> {
        let path = self.path_of(id)?;
        let lock = WriterLock::acquire(&path, wait).map_err(|e| self.busy(id, e))?;
        let real = lock.real_path().to_path_buf();
        let bytes = crate::safe_fs::read_regular(&real).map_err(self.io(&real))?;
        let mut w = FileWriter::locked(&path, lock, true, Durability::default());
        w.store = self.name();
        w.len = Some(split(&bytes).len() as u64);
        w.needs_newline = !bytes.is_empty() && !bytes.ends_with(b"\n");
        Ok(Box::new(w))
    }

    fn set_name(&self, id: &str, _name: &str) -> Result<(), BackendError> {
        // The name is in the session's own lines (its listing reads it from there).
        self.path_of(id).map(|_| ())
    }

    fn delete(&self, id: &str) -> Result<(), BackendError> {
        let path = self.path_of(id)?;
        let lock = WriterLock::acquire(&path, None).map_err(|e| self.busy(id, e))?;
        let real = lock.real_path().to_path_buf();
        std::fs::remove_file(&real).map_err(self.io(&real))?;
        drop(lock);
        let _ = std::fs::remove_file(crate::lock::lock_path(&real));
        Ok(())
    }
}

/// The agent directory's `blobs/` (omp's store, as omp lays it out).
impl Blobs for FileStore {
    fn has_blob(&self, hash: &str) -> Result<bool, BackendError> {
        crate::blobs::BlobStore::for_agent_dir(&self.agent_dir).has_blob(hash)
    }

    fn put_blob(&self, hash: &str, bytes: &[u8]) -> Result<(), BackendError> {
        crate::blobs::BlobStore::for_agent_dir(&self.agent_dir).put_blob(hash, bytes)
    }

    fn get_blob(&self, hash: &str) -> Result<Option<Vec<u8>>, BackendError> {
        crate::blobs::BlobStore::for_agent_dir(&self.agent_dir).get_blob(hash)
    }
}

/// What [`FileStore::open_file`] opened: the writer, the session as it is now (after the
/// repairs), and what was repaired.
#[derive(Debug)]
pub struct OpenedFile {
    /// The writer (it holds the lock).
    pub writer: FileWriter,
    /// The session as read after the repairs; `None` when there is no file yet (the
    /// writer's first append creates it).
    pub doc: Option<arbor_core::doc::SessionDoc>,
    /// The repairs: a torn tail saved, a migration.
    pub notes: Vec<OpenNote>,
}

impl FileStore {
    /// Opens the session file `path` for writing, as pi's `open` (a missing file is a new
    /// session there, created by the writer's first append) with arbor's rules: the writer
    /// lock is taken first (waiting up to `wait`), then a torn last line is saved to a
    /// sidecar and cut (`repair::save_torn_tail`) and a v1/v2 file is migrated by an
    /// atomic rewrite that the lock follows; the document is read again after either.
    ///
    /// # Errors
    /// [`StoreError::Lock`] (another writer, an unusable lock file),
    /// [`StoreError::NotASession`] for a file without a valid header (left as it is),
    /// [`StoreError::Io`] naming the file (not a regular file, no permission, a full disk
    /// while the sidecar or the migration is written).
    pub fn open_file(
        path: &Path,
        wait: Option<Duration>,
        durability: Durability,
    ) -> Result<OpenedFile, StoreError> {
        let lock = WriterLock::acquire(path, wait)?;
        if !path.exists() {
            return Ok(OpenedFile {
                writer: FileWriter::locked(path, lock, false, durability),
                doc: None,
                notes: Vec::new(),
            });
        }
        let mut writer = FileWriter::locked(path, lock, true, durability);
        let mut notes = Vec::new();
        // What an earlier rewrite left beside the session first: pi's lines in it belong to
        // the session before anything is read or appended.
        let left = writer.settle_leftover()?;
        if left.copied > 0 || left.kept.is_some() {
            notes.push(OpenNote::MergeLeftover {
                sidecar: super::sync_support::merge_sidecar_path(writer.real_path()),
                copied: left.copied,
                kept: left.kept,
            });
        }
        let mut doc = crate::load_doc_copy(path)?;
        if let Some(torn) = doc.report().torn_tail.clone() {
            let sidecar = crate::repair::save_torn_tail(&mut writer, &doc, &torn)?;
            notes.push(OpenNote::TornTailSaved {
                sidecar,
                bytes: torn.len,
            });
        }
        if let Some(m) = &doc.migration() {
            let from_version = m.from_version;
            let bytes = doc.rewritten_bytes();
            writer.rewrite(&[&bytes], None)?;
            notes.push(OpenNote::Migrated { from_version });
        }
        if notes
            .iter()
            .any(|n| !matches!(n, OpenNote::MergeLeftover { .. }))
        {
            doc = crate::load_doc_copy(path)?;
        }
        writer.needs_newline = doc.report().missing_final_newline;
        Ok(OpenedFile {
            writer,
            doc: Some(doc),
            notes,
        })
    }
}

/// The one writer of a session file (see the module documentation): the writer lock, the
/// file opened for appending at the first write (created then, exclusively, when it does not
/// exist yet), the durability policy.
#[derive(Debug)]
pub struct FileWriter {
    /// How errors name the store.
    store: String,
    /// The session's path as given (errors name it).
    path: PathBuf,
    lock: WriterLock,
    file: Option<AppendFile>,
    /// The file exists (otherwise the first append creates it).
    exists: bool,
    durability: Durability,
    /// The file's last line has no newline (a torn tail kept by a reader's choice, or a file
    /// written so): the next append starts with one.
    needs_newline: bool,
    /// Lines in the file, when counted.
    len: Option<u64>,
}

/// What a test runs at each [`Moment`] of a rewrite.
#[cfg(test)]
pub(crate) type RewriteHook = Box<dyn FnMut(Moment)>;

#[cfg(test)]
thread_local! {
    /// Called at each [`Moment`] of every [`FileWriter::rewrite`] on this thread: a test
    /// stands in for pi there (a repair or a migration racing an appender).
    pub(crate) static REWRITE_HOOK: std::cell::RefCell<Option<RewriteHook>> =
        const { std::cell::RefCell::new(None) };
}

/// What [`FileWriter::rewrite_checked`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// Nothing: the file was not the length expected (or not the same file).
    Moved {
        /// Its length found.
        found: u64,
    },
    /// Replaced.
    Done {
        /// Bytes of lines another writer appended to the old file during the rewrite,
        /// copied to the end of the new one.
        recovered: u64,
        /// Why the old file is still kept as `<session>.arbor-merge` (held open elsewhere, it
        /// ends in an incomplete line): the next open or sync settles it. `None`: it is gone.
        /// On a file system without hard links (`unlinked`): why lines may have been lost.
        kept: Option<String>,
        /// The file system gave the old file no second name (the `link` error): it was kept
        /// open by descriptor across the rename instead, and the late lines copied through
        /// it (`sync_support::release_unnamed`); a crash between the rename and that copy
        /// loses lines another writer appended in that window (there is no sidecar for a
        /// later sync to settle). `None`: the sidecar protocol ran.
        unlinked: Option<String>,
    },
}

impl FileWriter {
    /// The writer of an existing session file whose lock the caller took.
    pub(crate) fn from_lock(path: &Path, lock: WriterLock, durability: Durability) -> FileWriter {
        FileWriter::locked(path, lock, true, durability)
    }

    fn locked(path: &Path, lock: WriterLock, exists: bool, durability: Durability) -> FileWriter {
        FileWriter {
            store: "files".into(),
            path: path.to_path_buf(),
            lock,
            file: None,
            exists,
            durability,
            needs_newline: false,
            len: if exists { None } else { Some(0) },
        }
    }

    /// The writer of a new session file at `path` (its directory created, 0700, when
    /// missing): the lock is taken now, the file is created by the first append.
    ///
    /// # Errors
    /// [`StoreError::Lock`], [`StoreError::Io`] for the directory.
    pub fn create(
        path: &Path,
        wait: Option<Duration>,
        durability: Durability,
    ) -> Result<FileWriter, StoreError> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() && !dir.exists() {
                create_dir_private(dir).at(dir)?;
            }
        }
        let lock = WriterLock::acquire(path, wait)?;
        // Always a new file: if one appeared at this name, the exclusive creation of the
        // first append refuses it (never appended to).
        Ok(FileWriter::locked(path, lock, false, durability))
    }

    /// The session's real path (where it is written).
    pub fn real_path(&self) -> &Path {
        self.lock.real_path()
    }

    /// The writer of the existing session file `path`, as it is: the lock is taken (waiting
    /// up to `wait`), nothing is read or repaired (`arbor check --repair` reads the file and
    /// decides what to write itself; [`FileStore::open_file`] is the opening with pi's
    /// repairs).
    ///
    /// # Errors
    /// [`StoreError::Lock`] (another writer, an unusable lock file, a planted symlink).
    pub fn existing(
        path: &Path,
        wait: Option<Duration>,
        durability: Durability,
    ) -> Result<FileWriter, StoreError> {
        let lock = WriterLock::acquire(path, wait)?;
        Ok(FileWriter::locked(path, lock, true, durability))
    }

    /// Replaces the whole file by `content` atomically (a temporary file beside it, fsynced,
    /// renamed over it, the directory fsynced; the file's owner and permissions kept; a hard
    /// link refused), and the lock follows the new file. With `expect_len`, only when the
    /// file is still that long: a writer without arbor's lock (pi) may have appended since
    /// the caller read it, and its bytes must not be lost; `Ok(false)` then, nothing
    /// replaced; checked again right before the rename, and complete lines that reach the
    /// old file after that are copied to the end of the new one (the old file kept as
    /// `<session>.arbor-merge` meanwhile: see `FileWriter::rewrite_checked`). Every rewrite
    /// of a session file goes through here.
    ///
    /// # Errors
    /// [`StoreError::Io`] naming the file (the original is then untouched; also when an
    /// earlier rewrite's `<session>.arbor-merge` is still held open, or the old file cannot be
    /// given that second name: a file system without hard links),
    /// [`StoreError::Lock`] when the lock cannot follow the new file.
    pub fn rewrite(
        &mut self,
        content: &[&[u8]],
        expect_len: Option<u64>,
    ) -> Result<bool, StoreError> {
        self.replace(content, expect_len).map_err(StoreError::from)
    }

    fn replace(
        &mut self,
        content: &[&[u8]],
        expect_len: Option<u64>,
    ) -> Result<bool, BackendError> {
        let mut at = |m: Moment| {
            #[cfg(test)]
            REWRITE_HOOK.with(|h| {
                if let Some(h) = h.borrow_mut().as_mut() {
                    h(m);
                }
            });
            let _ = m;
        };
        Ok(matches!(
            self.rewrite_checked(content, expect_len, &mut at)?,
            Rewrite::Done { .. }
        ))
    }

    /// The one atomic rewrite of a session file ([`FileWriter::rewrite`], and sync's merge
    /// through `SyncLock::rewrite_at`), with the sidecar protocol that keeps every line pi
    /// writes (pi takes no lock and appends by path):
    ///
    /// 1. a previous rewrite's old file left as `<session>.arbor-merge` is settled first
    ///    ([`FileWriter::settle_leftover`]); if it is still held open, nothing is rewritten
    ///    (an error saying so);
    /// 2. with `expect`, the file must be that long now and again right before the rename
    ///    (the same inode): [`Rewrite::Moved`] otherwise, nothing replaced. Without it, the
    ///    length now is where late lines start;
    /// 3. right before the rename the old file is linked as the sidecar, so the rename never
    ///    unlinks it and whatever reaches it later is found; on a file system without hard
    ///    links the old file stays open by descriptor instead, and step 5 is
    ///    `sync_support::release_unnamed` (said in [`Rewrite::Done::unlinked`]);
    /// 4. after the rename the complete lines that reached the old file beyond that length
    ///    are appended to the new one (compared by content: never copied twice, never half a
    ///    line);
    /// 5. the sidecar is removed under a write lease (nobody else holds the old file open;
    ///    `/proc` where leases are not available), after a last copy, or kept (and said why,
    ///    [`Rewrite::Done::kept`]) for the next open or sync to settle.
    ///
    /// `at` is called at each [`Moment`] (a test stands in for pi there).
    pub(crate) fn rewrite_checked(
        &mut self,
        content: &[&[u8]],
        expect: Option<u64>,
        at: &mut dyn FnMut(Moment),
    ) -> Result<Rewrite, BackendError> {
        use super::sync_support as side_fs;
        let real = self.lock.real_path().to_path_buf();
        let side = side_fs::merge_sidecar_path(&real);
        let (store, path) = (self.store.clone(), self.path.clone());
        let io = move |source| BackendError::Io {
            store: store.clone(),
            path: path.clone(),
            source,
        };
        if let Some(why) = self.settle_leftover()?.kept {
            return Err(io(std::io::Error::other(format!(
                "{} is still open elsewhere ({why}); nothing rewritten, try again",
                side.display()
            ))));
        }
        let old = match crate::safe_fs::open_regular(&real) {
            Ok(f) => {
                let m = f.metadata().map_err(&io)?;
                if expect.is_some_and(|want| m.len() != want) {
                    return Ok(Rewrite::Moved { found: m.len() });
                }
                let from = m.len();
                Some((f, m, from))
            }
            Err(e) if expect.is_none() && e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let mut moved = None;
        let mut linked = false;
        let mut unlinked = None;
        let result = crate::file::atomic_write_checked(&real, content, &mut || {
            if let Some((f, m0, from)) = &old {
                let now = f.metadata()?;
                let named = std::fs::symlink_metadata(&real)?;
                if expect.is_some() && (now.len() != *from || !side_fs::same_inode(&named, m0)) {
                    moved = Some(named.len());
                    return Err(std::io::Error::other(
                        "the session changed while it was rewritten",
                    ));
                }
                at(Moment::BeforeRename);
                // The old inode keeps a name: whatever pi writes to it from now on is found
                // (or, without hard links, it is kept open by `f`).
                match side_fs::link_sidecar(&real, &side, m0)? {
                    side_fs::Sidecar::Linked => linked = true,
                    side_fs::Sidecar::NoLinks(why) => unlinked = Some(why),
                }
            } else {
                at(Moment::BeforeRename);
            }
            Ok(())
        });
        if let Some(found) = moved {
            return Ok(Rewrite::Moved { found });
        }
        if let Err(e) = result {
            if let (true, Some((_, m0, _))) = (linked, &old) {
                // Not renamed: the sidecar is a second name of the live file.
                let _ = side_fs::remove_if_same(&side, m0);
            }
            return Err(io(e));
        }
        // The identity lock follows the new file, the writer forgets the old one.
        self.lock.follow_file().map_err(|e| self.lock_err(e))?;
        self.file = None;
        self.exists = true;
        self.len = None;
        self.needs_newline = content
            .iter()
            .rev()
            .find(|c| !c.is_empty())
            .is_some_and(|c| !c.ends_with(b"\n"));
        at(Moment::AfterRename);
        let Some((old, _, from)) = old else {
            return Ok(Rewrite::Done {
                recovered: 0,
                kept: None,
                unlinked: None,
            });
        };
        if let Some(why) = unlinked {
            let left = side_fs::release_unnamed(&old, from, &real, at).map_err(&io)?;
            if left.copied > 0 {
                self.needs_newline = false;
            }
            return Ok(Rewrite::Done {
                recovered: left.copied,
                kept: left.kept,
                unlinked: Some(format!(
                    "the old file cannot be kept as {} ({why}): it was held open across the \
                     rename instead, and a crash before its late lines were copied would lose \
                     them",
                    side.display()
                )),
            });
        }
        // pi may have opened the old file by its path before the rename: lines it wrote there
        // are copied to the new file.
        let mut recovered = side_fs::copy_new_lines(&old, from, &real).map_err(&io)?;
        at(Moment::AfterCopy);
        let left = side_fs::release_sidecar(&old, from, &real, &side, at).map_err(&io)?;
        recovered += left.copied;
        if recovered > 0 {
            self.needs_newline = false;
        }
        Ok(Rewrite::Done {
            recovered,
            kept: left.kept,
            unlinked: None,
        })
    }

    /// Settles the old file a rewrite of this session left as `<session>.arbor-merge` (a
    /// rewrite killed before it finished, or one whose old file was still held open when it
    /// ended): its complete lines that the live file lacks are appended to it (in the
    /// sidecar's order), and the sidecar is removed once nobody holds it open. Nothing to do
    /// when there is none. A sidecar that is a symlink or not a regular file is left alone
    /// and reported ([`Leftover::kept`](super::sync_support::Leftover::kept)).
    ///
    /// # Errors
    /// [`BackendError::Io`]: the sidecar or the live file cannot be read, or the live file
    /// cannot be appended to.
    pub fn settle_leftover(&mut self) -> Result<super::sync_support::Leftover, BackendError> {
        let real = self.lock.real_path().to_path_buf();
        let left = super::sync_support::settle_sidecar(&real).map_err(self.io_at(&self.path))?;
        if left.copied > 0 {
            self.file = None;
            self.len = None;
            self.needs_newline = false;
        }
        Ok(left)
    }

    /// Appends `bytes` (complete lines) only if the file is still `expect` bytes long (pi
    /// takes no lock and may have appended since the caller read it): `Ok(Some(found))`, its
    /// length, otherwise, nothing written. The file is opened afresh for this (its length is
    /// the file's now, not what an earlier append left), appended to in one write (cut back on
    /// failure) and flushed by the durability policy. Sync's pull appends through here.
    pub(crate) fn append_if_len(
        &mut self,
        expect: u64,
        bytes: &[u8],
    ) -> Result<Option<u64>, BackendError> {
        let real = self.lock.real_path().to_path_buf();
        self.file = None;
        let mut f =
            AppendFile::open(&real, false, self.durability).map_err(self.io_at(&self.path))?;
        let found = std::fs::symlink_metadata(&real)
            .map_err(self.io_at(&self.path))?
            .len();
        if found != expect || f.len() != expect {
            return Ok(Some(found));
        }
        f.append(bytes).map_err(self.io_at(&self.path))?;
        f.flush().map_err(self.io_at(&self.path))?;
        self.exists = true;
        self.len = None;
        self.needs_newline = !bytes.is_empty() && !bytes.ends_with(b"\n");
        Ok(None)
    }

    /// Appends `bytes`, whole lines already joined (empty, or ending in a newline), as
    /// [`SessionWriter::append`] does but without copying them into one buffer first (a
    /// pulled session of 100 MB is written from the bytes read): one write, creating the file
    /// when this writer is a new session's ([`FileWriter::create`]: exclusively, removed
    /// again when the write fails).
    ///
    /// # Errors
    /// [`BackendError::BadLine`] when `bytes` does not end in a newline; [`BackendError::Io`]
    /// naming the file (`AlreadyExists` when a new session's name is taken).
    pub fn append_joined(&mut self, bytes: &[u8]) -> Result<(), BackendError> {
        if bytes.is_empty() {
            return Ok(());
        }
        if !bytes.ends_with(b"\n") {
            return Err(BackendError::BadLine {
                store: self.store.clone(),
            });
        }
        if self.needs_newline {
            let mut v = Vec::with_capacity(bytes.len() + 1);
            v.push(b'\n');
            v.extend_from_slice(bytes);
            self.append_bytes(&v)?;
        } else {
            self.append_bytes(bytes)?;
        }
        self.needs_newline = false;
        // Counted again when asked (not a pass over the bytes here).
        self.len = None;
        Ok(())
    }

    /// Cuts the file back to `len` bytes (a torn last line, saved first by the caller), if
    /// it is still `expect_len` bytes long (nobody appended since it was read; `Ok(false)`
    /// otherwise, nothing cut), and forces the cut to the disk.
    ///
    /// # Errors
    /// [`StoreError::Io`] naming the file.
    pub fn cut(&mut self, len: u64, expect_len: u64) -> Result<bool, StoreError> {
        let real = self.lock.real_path().to_path_buf();
        let f = crate::safe_fs::open_rw_nofollow(&real).at(&self.path)?;
        if f.metadata().at(&self.path)?.len() != expect_len {
            return Ok(false);
        }
        f.set_len(len).at(&self.path)?;
        f.sync_all().at(&self.path)?;
        self.file = None;
        self.len = None;
        Ok(true)
    }

    fn io_at(&self, path: &Path) -> impl Fn(std::io::Error) -> BackendError + '_ {
        let path = path.to_path_buf();
        move |source| BackendError::Io {
            store: self.store.clone(),
            path: path.clone(),
            source,
        }
    }

    fn lock_err(&self, source: LockError) -> BackendError {
        BackendError::Lock {
            store: self.store.clone(),
            source,
        }
    }

    fn store_err(&self, source: StoreError) -> BackendError {
        BackendError::Store {
            store: self.store.clone(),
            source: Box::new(source),
        }
    }

    /// Appends `bytes` (complete lines), creating the file first when it does not exist: the
    /// lock follows the new file, and its directory entry is made durable (except with
    /// durability `none`). A new file whose first write fails is removed again.
    fn append_bytes(&mut self, bytes: &[u8]) -> Result<(), BackendError> {
        let creating = !self.exists;
        if self.file.is_none() {
            // Write where the lock says the session really is (symlinks resolved once, at
            // locking), never following a link planted since.
            let real = self.lock.real_path().to_path_buf();
            let f = AppendFile::open(&real, creating, self.durability)
                .map_err(self.io_at(&self.path))?;
            if creating {
                if let Err(e) = self.lock.follow_file() {
                    drop(f);
                    let _ = std::fs::remove_file(&real);
                    return Err(self.lock_err(e));
                }
            }
            self.file = Some(f);
        }
        let result = match self.file.as_mut() {
            Some(f) => f.append(bytes),
            None => Ok(()),
        };
        if let Err(e) = result {
            if creating {
                // Nothing left behind: the new file goes with the failure.
                self.file = None;
                let _ = std::fs::remove_file(self.lock.real_path());
            }
            return Err(self.io_at(&self.path)(e));
        }
        self.exists = true;
        if creating && self.durability != Durability::None {
            // A new file: its directory entry must survive a crash too.
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                crate::file::sync_dir(dir).map_err(self.io_at(dir))?;
            }
        }
        Ok(())
    }

    /// Lines in the file now (read and counted once, then kept up to date).
    fn count(&self) -> u64 {
        if let Some(n) = self.len {
            return n;
        }
        crate::safe_fs::read_regular(self.lock.real_path()).map_or(0, |b| split(&b).len() as u64)
    }
}

impl SessionWriter for FileWriter {
    fn len(&self) -> u64 {
        self.count()
    }

    fn fence(&self) -> u64 {
        1
    }

    fn append(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.store, lines)?;
        if lines.is_empty() {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(1 + lines.iter().map(|l| l.len() + 1).sum::<usize>());
        if self.needs_newline {
            bytes.push(b'\n');
        }
        for l in lines {
            bytes.extend_from_slice(l);
            bytes.push(b'\n');
        }
        self.append_bytes(&bytes)?;
        self.needs_newline = false;
        // Counted only when asked (a manager never asks): an append does not read the file.
        self.len = self.len.map(|n| n + lines.len() as u64);
        Ok(())
    }

    fn replace_all(&mut self, lines: &[&[u8]]) -> Result<(), BackendError> {
        check_lines(&self.store, lines)?;
        self.replace(&[&joined(lines)], None)?;
        self.len = Some(lines.len() as u64);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        let path = self.path.clone();
        if let Some(f) = self.file.as_mut() {
            f.flush().map_err(|source| BackendError::Io {
                store: self.store.clone(),
                path,
                source,
            })?;
        }
        Ok(())
    }

    fn file_path(&self) -> Option<&Path> {
        Some(self.lock.real_path())
    }

    fn write_title_slot(&mut self, slot: &[u8]) -> Result<SlotWrite, BackendError> {
        let real = self.lock.real_path().to_path_buf();
        let in_place = crate::title::write_slot_in_place(&real, slot, self.durability)
            .map_err(|e| self.store_err(e))?;
        if in_place {
            return Ok(SlotWrite::InPlace);
        }
        // No fixed slot to overwrite: give the file one (atomic rewrite, every other byte
        // kept), then continue on the new file.
        // Read and rewritten only if nobody appended in between (pi takes no lock): read
        // again when someone did.
        for _ in 0..8 {
            let bytes = crate::safe_fs::read_regular(&real).map_err(self.io_at(&self.path))?;
            let rest = crate::title::after_new_slot(&bytes);
            if self.replace(&[slot, rest], Some(bytes.len() as u64))? {
                return Ok(SlotWrite::Rewritten);
            }
        }
        Err(self.io_at(&self.path)(std::io::Error::other(
            "the file kept growing while its title slot was being written (another writer without arbor's lock?); nothing was replaced",
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read_into` streams what `read` and `read_joined` give: every line from `from` on,
    /// each with its newline (a last line without one gets it), across block boundaries.
    #[test]
    fn read_into_streams_the_lines_from_a_sequence_number() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let id = "0190a8a0-0000-7000-8000-000000000002";
        let dir = tmp.path().join("sessions/--p--");
        std::fs::create_dir_all(&dir).expect("dir");
        let long = "x".repeat(100_000);
        let text = format!("{{\"type\":\"session\",\"id\":\"{id}\"}}\n{long}\n\nthird\nno newline");
        std::fs::write(
            dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
            &text,
        )
        .expect("write");
        let store = FileStore::new(tmp.path());
        let want: Vec<Vec<u8>> = text.split('\n').map(|l| l.as_bytes().to_vec()).collect();
        for from in 0..7u64 {
            let mut out = Vec::new();
            store.read_into(id, from, &mut out).expect("read_into");
            let rest = want.get(from as usize..).unwrap_or_default();
            assert_eq!(
                out,
                joined(&rest.iter().map(Vec::as_slice).collect::<Vec<_>>()),
                "{from}"
            );
            assert_eq!(store.read(id, from).expect("read"), rest, "{from}");
        }
    }

    /// The writer of a new session never appends to a file that is already at its name: the
    /// first append's exclusive creation refuses it, and the file is left as it was.
    #[test]
    fn a_new_session_writer_never_appends_to_an_existing_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        std::fs::write(&path, b"{\"someone\":\"else\"}\n").expect("write");
        let mut w = FileWriter::create(&path, None, Durability::None).expect("lock");
        let e = w.append(&[b"{\"type\":\"session\"}"]).expect_err("exists");
        assert!(
            matches!(&e, BackendError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
            "{e}"
        );
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"{\"someone\":\"else\"}\n"
        );
    }

    /// Every rewrite and cut of a session file is [`FileWriter::rewrite`] /
    /// [`FileWriter::cut`] (`check --repair`, the migration and torn-tail repair at open,
    /// `replace_all`): given the length the caller read, neither replaces nor cuts a file that
    /// grew since (pi appends without arbor's lock), and the appended bytes stay.
    #[test]
    fn a_rewrite_or_a_cut_never_loses_what_another_writer_appended() {
        use std::io::Write;
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        let original = b"{\"type\":\"session\"}\n{\"torn".to_vec();
        std::fs::write(&path, &original).expect("write");
        let mut w = FileWriter::existing(&path, None, Durability::None).expect("lock");
        let read_len = original.len() as u64;
        // pi, which takes no lock, appends after the caller read the file.
        let mut pi = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        pi.write_all(b"\n{\"type\":\"message\"}\n").expect("append");
        // pi closes after its append (as `appendFileSync`): a descriptor still open on a
        // rewritten file keeps its old file as `<session>.arbor-merge`, and the next rewrite
        // waits for it (see `rewrite_checked`).
        drop(pi);
        let grown = std::fs::read(&path).expect("read");
        assert!(!w.rewrite(&[b"{}\n"], Some(read_len)).expect("rewrite"));
        assert!(!w.cut(19, read_len).expect("cut"));
        assert_eq!(std::fs::read(&path).expect("read"), grown);
        // With the length as it is now, both happen; the lock follows the new file.
        assert!(w.cut(19, grown.len() as u64).expect("cut"));
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"{\"type\":\"session\"}\n"
        );
        assert!(w
            .rewrite(&[b"{\"type\":\"session\"}\n", b"{}\n"], Some(19))
            .expect("rewrite"));
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"{\"type\":\"session\"}\n{}\n"
        );
        let other = crate::lock::WriterLock::acquire(&path, None);
        assert!(other.is_err(), "the lock follows the rewritten file");
        // pi appends after the last check, right before the rename: its bytes reached the
        // old file and are copied to the end of the new one.
        let len = std::fs::metadata(&path).expect("stat").len();
        let p2 = path.clone();
        let r = w
            .rewrite_checked(&[b"{\"type\":\"session\"}\n"], Some(len), &mut |m| {
                if m == Moment::BeforeRename {
                    let mut pi = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&p2)
                        .expect("open");
                    pi.write_all(b"{\"pi\":1}\n").expect("append");
                }
            })
            .expect("rewrite");
        assert_eq!(
            r,
            Rewrite::Done {
                recovered: 9,
                kept: None,
                unlinked: None,
            }
        );
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"{\"type\":\"session\"}\n{\"pi\":1}\n"
        );
    }

    /// The migration at open rewrites without a length to check (`rewrite(.., None)`): a line
    /// pi appended to the old file right before the rename is copied to the migrated one.
    /// Before, a rewrite without `expect` copied nothing after the rename, and the line was
    /// lost with the old file.
    #[test]
    fn a_line_pi_appends_during_a_migration_is_kept() {
        use std::io::Write;
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"type":"session","id":"0190a8a0-0000-7000-8000-0000000000bb","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
                "\n",
                r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"old","timestamp":1}}"#,
                "\n"
            ),
        )
        .expect("write");
        let pi_line = r#"{"type":"message","id":"p1","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"from pi","timestamp":2}}"#;
        let p2 = path.clone();
        REWRITE_HOOK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |m| {
                if m == Moment::BeforeRename {
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&p2)
                        .expect("pi opens by path");
                    f.write_all(format!("{pi_line}\n").as_bytes())
                        .expect("pi appends");
                }
            }));
        });
        let opened = FileStore::open_file(&path, None, Durability::None);
        REWRITE_HOOK.with(|h| *h.borrow_mut() = None);
        let opened = opened.expect("open");
        assert!(
            opened
                .notes
                .iter()
                .any(|n| matches!(n, OpenNote::Migrated { .. })),
            "{:?}",
            opened.notes
        );
        drop(opened);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("\"version\":3"), "{text}");
        assert!(text.ends_with(&format!("{pi_line}\n")), "{text}");
        assert!(!super::super::sync_support::merge_sidecar_path(&path).exists());
    }

    /// A file the store cannot read is an error that keeps the I/O error as its cause and
    /// names the file; the manager sees it as the `StoreError::Io` it always was.
    #[test]
    fn an_unreadable_session_keeps_the_io_error_as_its_cause() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let id = "0190a8a0-0000-7000-8000-000000000001";
        let bad = tmp.path().join(format!(
            "sessions/--p--/2026-01-01T00-00-00-000Z_{id}.jsonl"
        ));
        std::fs::create_dir_all(&bad).expect("a directory where the file would be");
        let store = FileStore::new(tmp.path());
        let e = store
            .read(id, 0)
            .expect_err("a directory is not a session file");
        assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
        let cause = std::error::Error::source(&e).expect("a cause");
        assert!(
            cause.downcast_ref::<std::io::Error>().is_some(),
            "{cause:?}"
        );
        assert!(matches!(StoreError::from(e), StoreError::Io { path, .. } if path == bad));
    }
}
