//! A session named by its id, found and loaded: the catalog resolves the id to its file (the
//! locator's walk when the catalog does not know it), the file is checked to lie in the
//! directories served ([`arbor_store::locate::served_session_file`], `arbor mcp`'s check),
//! mapped as `arbor export` maps it (lean: [`arbor_store::load_doc_lean`]), omp blob references replaced by their blobs, and redacted
//! as `arbor export` redacts ([`arbor_view::redact`]) unless `--no-redact`. Another agent's
//! session (Claude Code, Codex, opencode) in the served scope
//! ([`arbor_index::Catalog::foreign_in_scope`], as `arbor mcp` finds them) is read in memory
//! as `arbor import` would make it ([`arbor_agents::open_as_doc`], what `arbor show` does),
//! nothing written, and served read-only. A client never names a path: an id is letters,
//! digits, `-` and `_` only.
use crate::{App, ServeError};
use arbor_core::doc::SessionDoc;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A session loaded for the pages: its file, its document (redacted unless `--no-redact`),
/// and the secrets left in its long strings (replaced as the renderer reads them).
pub struct Loaded {
    /// The session's file (its real path).
    pub path: PathBuf,
    /// The document.
    pub doc: SessionDoc,
    /// What [`arbor_view::redact`] deferred to the renderer (empty unredacted).
    pub redactions: arbor_view::Redactions,
    /// The file's length when it was read.
    pub len: u64,
    /// Another agent's session, read in memory (read-only; its row says how to import it).
    pub foreign: Option<arbor_index::ForeignRow>,
    /// The tree's outline, made once (building the tree reads every entry's line).
    pub outline: std::sync::OnceLock<arbor_view::agent::Outline>,
    /// The last branch asked for: its leaf and path (walking a long path reads its lines).
    pub last_path: Mutex<Option<(usize, Arc<Vec<usize>>)>>,
    /// What the redaction found, for reading the session again when it grew
    /// ([`arbor_view::redact_again`]); `None`: `doc` was not redacted (`--no-redact`).
    pub seen: Option<arbor_view::Seen>,
}

impl Loaded {
    fn new(
        path: PathBuf,
        doc: SessionDoc,
        redactions: arbor_view::Redactions,
        seen: Option<arbor_view::Seen>,
        len: u64,
        foreign: Option<arbor_index::ForeignRow>,
    ) -> Loaded {
        Loaded {
            path,
            doc,
            redactions,
            len,
            foreign,
            outline: std::sync::OnceLock::new(),
            last_path: Mutex::new(None),
            seen,
        }
    }

    /// Whether `doc` was redacted.
    pub fn redacted(&self) -> bool {
        self.seen.is_some()
    }

    /// A document loaded from memory, unredacted (the unit tests').
    #[cfg(test)]
    pub fn for_test(doc: SessionDoc) -> Loaded {
        Loaded::new(
            PathBuf::from("s.jsonl"),
            doc,
            arbor_view::Redactions::default(),
            None,
            0,
            None,
        )
    }

    /// The path from the root to `leaf` (kept for the last leaf asked).
    pub fn path_to(&self, leaf: usize) -> Arc<Vec<usize>> {
        if let Ok(last) = self.last_path.lock() {
            if let Some((l, p)) = last.as_ref() {
                if *l == leaf {
                    return p.clone();
                }
            }
        }
        let p = Arc::new(self.doc.index().path(&self.doc, leaf).entries);
        if let Ok(mut last) = self.last_path.lock() {
            *last = Some((leaf, p.clone()));
        }
        p
    }

    /// The outline of the tree ([`arbor_view::agent::outline`], its first `limit` lines),
    /// made once.
    pub fn outline(&self, limit: usize) -> &arbor_view::agent::Outline {
        self.outline.get_or_init(|| {
            arbor_view::agent::outline(
                &self.doc,
                &arbor_view::agent::OutlineOpts {
                    full: false,
                    start: 0,
                    limit,
                },
            )
        })
    }
}

/// While it lives, the pages of a large document's map go back to the page cache a few
/// times a second ([`arbor_store::release_pages`], on a thread of its own): a request that
/// reads every entry (the tree, a long path) keeps only what it read in the last moment
/// resident, so that opening a 1 GB session does not make the file resident whole. Pages
/// read again fault back in from the page cache.
pub struct Releaser {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Documents at least this large are released while a request reads them.
const RELEASE_FROM: usize = 64 << 20;

impl Releaser {
    /// Starts releasing `l`'s pages (nothing for a small document).
    pub fn new(l: &Arc<Loaded>) -> Releaser {
        if l.doc.base_bytes().len() < RELEASE_FROM {
            return Releaser {
                stop: None,
                thread: None,
            };
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let doc = l.clone();
        let thread = std::thread::Builder::new()
            .name("arbor-serve-release".into())
            .spawn(move || loop {
                arbor_store::release_pages(doc.doc.base_bytes());
                match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            })
            .ok();
        Releaser {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Releaser {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Loaded {
    /// The export's options for this document (redacted as it was).
    pub fn export_opts(&self) -> arbor_view::Options<'_> {
        let o = arbor_view::Options::default();
        if self.redacted() {
            o.redacted(&self.redactions)
        } else {
            o
        }
    }
}

/// Whether `id` may name a session: 1 to 200 letters, digits, `-`, `_` (never a path).
pub fn plain_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The session file of id `id` among those served.
pub fn resolve(app: &App, id: &str) -> Result<PathBuf, ServeError> {
    if !plain_id(id) {
        return Err(ServeError::BadRequest(format!(
            "not a session id: {id:?} (a session is named by its id)"
        )));
    }
    let roots = app.loc.served_roots(app.opts.dir.as_deref());
    // The catalog first: one query, not a walk of every directory.
    let known = app.catalog()?.files_with_id_prefix(id)?;
    let exact: Vec<PathBuf> = known
        .into_iter()
        .filter(|p| arbor_store::discover::header_id(p).is_some_and(|h| h.eq_ignore_ascii_case(id)))
        .filter_map(|p| arbor_store::locate::served_session_file(&roots, &p).ok())
        .collect();
    if let [one] = exact.as_slice() {
        return Ok(one.clone());
    }
    let p = app
        .loc
        .resolve_session(id)
        .map_err(|e| ServeError::NotFound(format!("{id}: {e}")))?;
    arbor_store::locate::served_session_file(&roots, &p)
        .map_err(|why| ServeError::NotFound(format!("{id}: {why}")))
}

// What says a file is the one read before.
use arbor_store::FileStamp as Stamp;

/// Where a served session is read from: a pi or omp session file, or another agent's source.
#[derive(Debug, Clone)]
pub enum Source {
    /// A pi or omp session file (resolved and checked).
    File(PathBuf),
    /// Another agent's session, named by its catalog row.
    Foreign(Box<arbor_index::ForeignRow>),
}

/// What says a source is the one read before: a file's [`Stamp`], another agent's source's
/// fingerprint ([`arbor_index::foreign_fingerprint`]: every file it is read from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceStamp {
    /// A session file's stamp.
    File(Stamp),
    /// Another agent's source's fingerprint.
    Foreign(String),
}

impl Source {
    /// The source's stamp now; `None` when it cannot be read.
    pub fn stamp(&self) -> Option<SourceStamp> {
        match self {
            Source::File(p) => Stamp::of(p).map(SourceStamp::File),
            Source::Foreign(r) => {
                arbor_index::foreign_fingerprint(r.agent, &r.source).map(SourceStamp::Foreign)
            }
        }
    }
}

/// What the kept document was read from.
#[derive(Debug, PartialEq, Eq)]
enum Kept {
    File(Stamp, PathBuf),
    Foreign(String, String),
}

/// The last session loaded (one: a person reads one session page after page; a 1 GB
/// session is parsed and redacted once, not once per part; another agent's session is read
/// and converted once, not once per part and per live look).
static LAST: Mutex<Option<(Kept, Arc<Loaded>)>> = Mutex::new(None);

/// The document kept, redacted as asked, if `read_from` says what it was read from fits: the
/// very source read now (the kept document is the answer), or the same source in any version
/// (what its redaction found spares the next one the lines it cleared).
fn kept(read_from: impl Fn(&Kept) -> bool, redacted: bool) -> Option<Arc<Loaded>> {
    let last = LAST.lock().ok()?;
    let (k, l) = last.as_ref()?;
    (read_from(k) && l.redacted() == redacted).then(|| l.clone())
}

/// Keeps `l`, read from `key`.
fn keep(key: Kept, l: &Arc<Loaded>) {
    if let Ok(mut last) = LAST.lock() {
        *last = Some((key, l.clone()));
    }
}

/// Where the session of id `id` is read from: its pi or omp file, else another agent's
/// session of that id in the served scope.
pub fn find(app: &App, id: &str) -> Result<Source, ServeError> {
    match resolve(app, id) {
        Ok(path) => Ok(Source::File(path)),
        Err(e @ ServeError::NotFound(_)) => match foreign_row(app, id)? {
            Some(r) => Ok(Source::Foreign(Box::new(r))),
            None => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// The session of id `id`, loaded (the one kept when its file has not changed); another
/// agent's session of that id when no pi or omp session has it.
pub fn load(app: &App, id: &str) -> Result<Arc<Loaded>, ServeError> {
    load_source(app, &find(app, id)?)
}

/// The session read from `source` (the one kept when it has not changed).
pub fn load_source(app: &App, source: &Source) -> Result<Arc<Loaded>, ServeError> {
    match source {
        Source::File(p) => load_path(app, p),
        Source::Foreign(r) => load_foreign(app, r),
    }
}

/// Another agent's session of id `id` among those served (its exact id).
pub fn foreign_row(app: &App, id: &str) -> Result<Option<arbor_index::ForeignRow>, ServeError> {
    if !plain_id(id) {
        return Ok(None);
    }
    let rows = app
        .catalog()?
        .foreign_in_scope(app.opts.scope(), None, None)?;
    Ok(rows
        .into_iter()
        .find(|r| r.summary.id.eq_ignore_ascii_case(id)))
}

/// Another agent's session read in memory as `arbor import` would make it, redacted. Its
/// entries' ids are the import's (a hash of each source record's key, stable as the source
/// grows: [`arbor_agents::pi`]), so a grown source read again gives the entries already
/// shown the same ids.
fn load_foreign(app: &App, r: &arbor_index::ForeignRow) -> Result<Arc<Loaded>, ServeError> {
    let fp = arbor_index::foreign_fingerprint(r.agent, &r.source);
    let key = fp.clone().map(|fp| Kept::Foreign(fp, r.summary.id.clone()));
    if let Some(l) = key
        .as_ref()
        .and_then(|key| kept(|k| k == key, app.opts.redact))
    {
        return Ok(l);
    }
    let source = arbor_agents::open::source_of(r.agent, &r.source, &r.summary.id);
    let o = arbor_agents::open_as_doc(&source, Some(&r.summary.id))
        .map_err(|e| ServeError::Other(format!("session {}: {e}", r.summary.id)))?;
    let before = kept(
        |k| matches!(k, Kept::Foreign(_, id) if *id == r.summary.id),
        app.opts.redact,
    );
    let (doc, redactions, seen) = as_served(app, o.doc, before.as_deref())
        .map_err(|e| ServeError::Other(format!("session {}: {e}", r.summary.id)))?;
    drop(before);
    let loaded = Arc::new(Loaded::new(
        o.session.path,
        doc,
        redactions,
        seen,
        0,
        Some(r.clone()),
    ));
    // Kept only when the source did not change while it was read.
    if let Some(k) = key {
        if arbor_index::foreign_fingerprint(r.agent, &r.source) == fp {
            keep(k, &loaded);
        }
    }
    Ok(loaded)
}

/// `doc` as the pages get it: redacted as `arbor export` redacts ([`arbor_view::redact`])
/// unless `--no-redact`, sparing the lines that the redaction of `before` (the same source,
/// read before it grew) cleared when `doc` still begins with those bytes
/// ([`arbor_view::redact_again`]); with what the renderer still replaces, and what the
/// redaction found (`None`: not redacted).
fn as_served(
    app: &App,
    mut doc: SessionDoc,
    before: Option<&Loaded>,
) -> Result<
    (SessionDoc, arbor_view::Redactions, Option<arbor_view::Seen>),
    arbor_view::secrets::RedactError,
> {
    if !app.opts.redact {
        return Ok((doc, arbor_view::Redactions::default(), None));
    }
    let (_, r, seen) = arbor_view::redact_again(&mut doc, before.and_then(|l| l.seen.as_ref()))?;
    Ok((doc, r, Some(seen)))
}

/// The session file `path` (already resolved and checked), loaded.
pub fn load_path(app: &App, path: &Path) -> Result<Arc<Loaded>, ServeError> {
    let stamp = Stamp::of(path);
    if let Some(l) = stamp.and_then(|s| {
        let key = Kept::File(s, path.to_path_buf());
        kept(|k| *k == key, app.opts.redact)
    }) {
        return Ok(l);
    }
    let what = |e: &dyn std::fmt::Display| ServeError::Other(format!("{}: {e}", path.display()));
    // Lean: the pages the parse has passed go back to the page cache as it goes, so that a
    // 1 GB session does not become resident whole (the redaction releases behind itself too,
    // and each answer releases what it read: [`done`]).
    let mut doc = arbor_store::load_doc_lean(path).map_err(|e| what(&e))?;
    if !doc.blob_ref_lines().is_empty() {
        let store = arbor_store::blobs::BlobStore::new(arbor_store::blobs::blob_dir_for_session(
            path,
            app.loc.agent_override(),
        ));
        arbor_store::blobs::resolve_doc_blobs(&mut doc, &store, true).map_err(|e| what(&e))?;
    }
    let before = kept(
        |k| matches!(k, Kept::File(_, p) if p == path),
        app.opts.redact,
    );
    let (doc, redactions, seen) = as_served(app, doc, before.as_deref()).map_err(|e| what(&e))?;
    drop(before);
    let loaded = Arc::new(Loaded::new(
        path.to_path_buf(),
        doc,
        redactions,
        seen,
        stamp.map_or(0, |s| s.len),
        None,
    ));
    // Kept only when the file did not change while it was read (and no map was cut short
    // meanwhile: as `arbor mcp` keeps its last session).
    if let Some(s) = stamp {
        if Stamp::of(path) == stamp && !arbor_store::FileBytes::any_open_map_cut() {
            keep(Kept::File(s, path.to_path_buf()), &loaded);
        }
    }
    Ok(loaded)
}

/// A reader is done with `l` for this request: the pages of its map go back to the page
/// cache (as `arbor mcp` does after each call), so that a server that showed a 1 GB session
/// does not hold it resident.
pub fn done(l: &Loaded) {
    arbor_store::release_pages(l.doc.base_bytes());
}

/// The entry of `doc` with id `entry`, else a 404 naming it.
pub fn entry(doc: &SessionDoc, entry: &str) -> Result<usize, ServeError> {
    arbor_view::agent::entry_index(doc, entry).map_err(|e| ServeError::NotFound(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::plain_id;

    #[test]
    fn a_session_is_named_by_a_plain_id_never_a_path() {
        for ok in ["01a2031c-a4c8-72e3-9ce7-b742438e02ad", "abc_DEF-1", "x"] {
            assert!(plain_id(ok), "{ok}");
        }
        for bad in [
            "",
            "../etc/passwd",
            "/etc/passwd",
            "a/b",
            "s.jsonl",
            "..",
            "a b",
            "a\0b",
            "ü",
            &"a".repeat(201),
        ] {
            assert!(!plain_id(bad), "{bad:?}");
        }
    }
}
