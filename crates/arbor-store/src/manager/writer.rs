//! The write side of a [`super::SessionManager`]: the writer lock, the open append-only file,
//! how much of the document is already on disk, and the error that latched the session
//! read-only after a failed write. The read view (the document, the context) lives in the
//! manager; this part only turns "what is not yet on disk" into one append.
use super::ManagerOptions;
use crate::backend::{meta_from_header, SessionStore, SessionWriter};
use crate::error::{IoContext, StoreError};
use crate::file::{create_dir_private, AppendFile, Durability};
use crate::lock::WriterLock;
use arbor_core::doc::SessionDoc;
use std::path::Path;
use std::sync::Arc;

/// See the module documentation.
#[derive(Debug, Default)]
pub(super) struct Writer {
    /// The writer lock, taken at the first write.
    pub(super) lock: Option<WriterLock>,
    /// The session file, opened for appending at the first write.
    pub(super) file: Option<AppendFile>,
    /// The header (and omp's title slot) are in the file.
    pub(super) header_on_disk: bool,
    /// How many of the document's entries are in the file.
    pub(super) on_disk: usize,
    /// The file's last line has no newline yet (a torn tail was kept): the next append
    /// starts with one.
    pub(super) needs_newline: bool,
    /// Why writing stopped: a failed append leaves the session read-only.
    pub(super) latched: Option<String>,
    /// For a session in a [`SessionStore`]: the store, and the writer lease once taken.
    pub(super) store: Option<Arc<dyn SessionStore>>,
    /// The lease of a store-kept session (taken at open, or when it is first written).
    pub(super) sink: Option<Box<dyn SessionWriter>>,
}

impl Writer {
    /// Whether a write may start: `Latched` after a failed one.
    pub(super) fn check(&self, path: Option<&Path>) -> Result<(), StoreError> {
        match &self.latched {
            Some(reason) => Err(StoreError::Latched {
                path: path.map(Path::to_path_buf).unwrap_or_default(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The lines of `doc` not yet stored (omp's title slot and the header when nothing is,
    /// deferred entries), then `line`.
    fn pending<'d>(&self, doc: &'d SessionDoc, line: Option<&'d [u8]>) -> Vec<&'d [u8]> {
        let mut lines = Vec::new();
        if !self.header_on_disk {
            if let Some(slot) = doc.title_slot() {
                lines.push(doc.line(&slot.line));
            }
            lines.push(doc.header_line());
        }
        for i in self.on_disk..doc.entries().len() {
            lines.push(doc.entry_line(i));
        }
        lines.extend(line);
        lines
    }

    /// [`Writer::write_pending`] for a session kept in a store: a new session is created
    /// with all its lines in one step, then its lease taken; later lines are one append.
    /// On failure nothing is stored and the error is latched.
    pub(super) fn write_pending_store(
        &mut self,
        doc: &SessionDoc,
        opts: &ManagerOptions,
        line: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let Some(store) = self.store.clone() else {
            return Ok(());
        };
        let lines = self.pending(doc, line);
        if lines.is_empty() {
            return Ok(());
        }
        let id = doc.session_id().unwrap_or_default();
        let result = if !self.header_on_disk {
            let tool = if doc.dialect() == arbor_core::Dialect::Omp {
                "omp"
            } else {
                "pi"
            };
            let meta = meta_from_header(doc.header_line(), tool);
            store.create(&meta, &lines).and_then(|()| {
                self.sink = Some(store.writer(&id, opts.wait)?);
                Ok(())
            })
        } else {
            match self.sink.as_mut() {
                Some(sink) => sink.append(&lines),
                None => return Err(StoreError::ReadOnly),
            }
        };
        if let Err(e) = result {
            self.latched = Some(e.to_string());
            return Err(e.into());
        }
        self.header_on_disk = true;
        self.on_disk = doc.entries().len();
        Ok(())
    }

    /// Replaces a store-kept session's lines with `doc`'s (omp's rewritten title slot).
    pub(super) fn replace_in_store(&mut self, doc: &SessionDoc) -> Result<(), StoreError> {
        let Some(sink) = self.sink.as_mut() else {
            return Err(StoreError::ReadOnly);
        };
        let mut lines = Vec::new();
        if let Some(slot) = doc.title_slot() {
            lines.push(doc.line(&slot.line));
        }
        lines.push(doc.header_line());
        for i in 0..doc.entries().len() {
            lines.push(doc.entry_line(i));
        }
        if let Err(e) = sink.replace_all(&lines) {
            self.latched = Some(e.to_string());
            return Err(e.into());
        }
        self.on_disk = doc.entries().len();
        Ok(())
    }

    /// Writes everything of `doc` not yet on disk (header, deferred entries) plus `line`, in
    /// one append to `path`, taking the lock and opening the file first when needed. On
    /// failure nothing stays on disk and the error is latched.
    pub(super) fn write_pending(
        &mut self,
        doc: &SessionDoc,
        path: &Path,
        opts: &ManagerOptions,
        line: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let mut bytes = Vec::new();
        if self.needs_newline {
            bytes.push(b'\n');
        }
        if !self.header_on_disk {
            if let Some(slot) = doc.title_slot() {
                bytes.extend_from_slice(doc.line(&slot.line));
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(doc.header_line());
            bytes.push(b'\n');
        }
        for i in self.on_disk..doc.entries().len() {
            bytes.extend_from_slice(doc.entry_line(i));
            bytes.push(b'\n');
        }
        if let Some(l) = line {
            bytes.extend_from_slice(l);
            bytes.push(b'\n');
        }
        if bytes.is_empty() {
            return Ok(());
        }
        if self.lock.is_none() {
            if let Some(dir) = path.parent() {
                if !dir.as_os_str().is_empty() && !dir.exists() {
                    create_dir_private(dir).at(dir)?;
                }
            }
            self.lock = Some(WriterLock::acquire(path, opts.wait)?);
        }
        if self.file.is_none() {
            let lock = match self.lock.as_mut() {
                Some(l) => l,
                None => return Err(StoreError::ReadOnly),
            };
            // Write where the lock says the session really is (symlinks resolved once, at
            // locking), never following a link planted since.
            let real = lock.real_path().to_path_buf();
            let f = AppendFile::open(&real, !self.header_on_disk, opts.durability).at(path)?;
            if !self.header_on_disk {
                lock.follow_file()?;
            }
            self.file = Some(f);
        }
        let result = match self.file.as_mut() {
            Some(f) => f.append(&bytes),
            None => Ok(()),
        };
        if let Err(e) = result {
            self.latched = Some(e.to_string());
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source: e,
            });
        }
        if !self.header_on_disk && opts.durability != Durability::None {
            // A new file: its directory entry must survive a crash too.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                if let Err(e) = crate::file::sync_dir(dir) {
                    self.latched = Some(e.to_string());
                    return Err(StoreError::Io {
                        path: dir.to_path_buf(),
                        source: e,
                    });
                }
            }
        }
        self.needs_newline = false;
        self.header_on_disk = true;
        self.on_disk = doc.entries().len();
        Ok(())
    }

    /// Forces appended entries to stable storage (per the durability policy).
    pub(super) fn flush(&mut self, path: &Path) -> Result<(), StoreError> {
        if let Some(f) = self.file.as_mut() {
            f.flush().at(path)?;
        }
        Ok(())
    }
}
