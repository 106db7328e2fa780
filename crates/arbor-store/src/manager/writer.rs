//! The write side of a [`super::SessionManager`]: the one [`SessionWriter`] the session is
//! written through (a [`FileWriter`] for a session file, a store's lease otherwise), how much
//! of the document is already stored, and the error that latched the session read-only after
//! a failed write. The read view (the document, the context) lives in the manager; this part
//! only turns "what is not yet stored" into one append.
use super::ManagerOptions;
use crate::backend::files::FileWriter;
use crate::backend::{meta_from_header, BackendError, SessionStore, SessionWriter};
use crate::error::StoreError;
use arbor_core::doc::SessionDoc;
use std::path::Path;
use std::sync::Arc;

/// See the module documentation.
#[derive(Debug, Default)]
pub(super) struct Writer {
    /// The header (and omp's title slot) are stored.
    pub(super) header_on_disk: bool,
    /// How many of the document's entries are stored.
    pub(super) on_disk: usize,
    /// Why writing stopped: a failed append leaves the session read-only.
    pub(super) latched: Option<String>,
    /// For a session in a [`SessionStore`]: the store (a new session is created there).
    pub(super) store: Option<Arc<dyn SessionStore>>,
    /// The writer: a session file's (its lock held from open, or from the first write of a
    /// new file), or a store's lease (taken at open, or when the session is first stored).
    pub(super) sink: Option<Box<dyn SessionWriter>>,
}

/// What a failed write latches: the cause itself (a file's I/O error without the path the
/// latched error names again).
fn latch_reason(e: &BackendError) -> String {
    match e {
        BackendError::Io { source, .. } => source.to_string(),
        BackendError::Store { source, .. } => match source.as_ref() {
            StoreError::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
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

    /// Latches `e` (the session is read-only until reopened) and returns it.
    pub(super) fn latch(&mut self, e: BackendError) -> StoreError {
        self.latched = Some(latch_reason(&e));
        e.into()
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

    /// Writes everything of `doc` not yet stored (omp's title slot and the header, deferred
    /// entries) plus `line`, in one append through the session's writer. The writer is made
    /// first when there is none: a store-kept session is created with all these lines in one
    /// step and its lease taken; a new session file at `path` is locked and created by the
    /// append. On failure nothing is stored and the error is latched.
    pub(super) fn write_pending(
        &mut self,
        doc: &SessionDoc,
        path: Option<&Path>,
        opts: &ManagerOptions,
        line: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let lines = self.pending(doc, line);
        if lines.is_empty() {
            return Ok(());
        }
        if self.sink.is_none() {
            match (&self.store, path) {
                (Some(store), _) if !self.header_on_disk => {
                    let store = store.clone();
                    let id = doc.session_id().unwrap_or_default();
                    let tool = if doc.dialect() == arbor_core::Dialect::Omp {
                        "omp"
                    } else {
                        "pi"
                    };
                    let meta = meta_from_header(doc.header_line(), tool);
                    let made = store
                        .create(&meta, &lines)
                        .and_then(|()| store.writer(&id, opts.wait));
                    match made {
                        Ok(w) => self.sink = Some(w),
                        Err(e) => return Err(self.latch(e)),
                    }
                    self.stored(doc);
                    return Ok(());
                }
                (None, Some(path)) => {
                    self.sink = Some(Box::new(FileWriter::create(
                        path,
                        opts.wait,
                        opts.durability,
                    )?));
                }
                (None, None) => return Ok(()),
                (Some(_), _) => return Err(StoreError::ReadOnly),
            }
        }
        let result = match self.sink.as_mut() {
            Some(sink) => sink.append(&lines),
            None => return Err(StoreError::ReadOnly),
        };
        if let Err(e) = result {
            return Err(self.latch(e));
        }
        self.stored(doc);
        Ok(())
    }

    /// Everything of `doc` is stored.
    fn stored(&mut self, doc: &SessionDoc) {
        self.header_on_disk = true;
        self.on_disk = doc.entries().len();
    }

    /// Replaces the session's lines with `doc`'s (omp's rewritten title slot in a store that
    /// keeps it as a line).
    pub(super) fn replace_all(&mut self, doc: &SessionDoc) -> Result<(), StoreError> {
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
            return Err(self.latch(e));
        }
        self.on_disk = doc.entries().len();
        Ok(())
    }

    /// Forces appended entries to stable storage (per the durability policy).
    pub(super) fn flush(&mut self) -> Result<(), StoreError> {
        if let Some(sink) = self.sink.as_mut() {
            sink.flush()?;
        }
        Ok(())
    }
}
