//! Commands that only read: context, tree, show.
use crate::cli::ShowOpts;
use crate::term::{Out, Term};
use anyhow::{Context as _, Result};
use arbor_core::context::{LeafSel, OmpVersion, SessionContext};
use arbor_core::doc::SessionDoc;
use arbor_store::locate::Locator;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitCode;

fn load(session: &str, loc: &Locator) -> Result<(std::path::PathBuf, SessionDoc)> {
    load_as(session, loc, false)
}

/// [`load`]; `lean`: the map's pages are released behind the parse (an export reads the file
/// once, and keeps its memory bounded: `arbor_store::load_doc_lean`).
fn load_as(session: &str, loc: &Locator, lean: bool) -> Result<(std::path::PathBuf, SessionDoc)> {
    load_any(session, loc, lean).map(|(p, d, _)| (p, d))
}

/// [`load_as`], and whether the session is another agent's (Claude Code, Codex, opencode),
/// read in memory as `arbor import` would make it (`agents::open_foreign`): tried when
/// `session` is not a pi or omp session arbor can load. The path is then the source's.
fn load_any(
    session: &str,
    loc: &Locator,
    lean: bool,
) -> Result<(std::path::PathBuf, SessionDoc, bool)> {
    let pi = loc
        .resolve_session(session)
        .map_err(anyhow::Error::from)
        .and_then(|path| {
            let doc = if lean {
                arbor_store::load_doc_lean(&path)?
            } else {
                arbor_store::load_doc(&path)?
            };
            Ok((path, doc))
        });
    match pi {
        Ok((path, doc)) => {
            warn_report(&path, &doc);
            Ok((path, doc, false))
        }
        Err(e) if super::ambiguous_error(&e) => Err(e),
        Err(e) => match super::agents::open_foreign(session)? {
            Some(f) => Ok((f.source, f.doc, true)),
            None => Err(e),
        },
    }
}

/// Tells stderr what the loader skipped, so nothing is dropped silently.
fn warn_report(path: &Path, doc: &SessionDoc) {
    let r = &doc.report();
    if r.bom && doc.dialect() == arbor_core::Dialect::Pi {
        say_err!(
            "arbor: warning: {}:1: the file starts with a byte order mark; pi 1.5 refuses to open it (\"not a valid pi session\"), arbor reads it as pi 0.73 did (`arbor check --repair` removes the mark)",
            path.display()
        );
    }
    for bad in r.malformed.iter().take(5) {
        // A line that is JSON but not an object is an entry without id to pi and omp, and to
        // arbor (a truthy one: `5`, `"x"`; in an omp file a falsy one too: `0`, `""`); other
        // malformed lines are skipped by all.
        let kept = doc
            .entries()
            .iter()
            .any(|e| e.non_object && e.line_no == bad.line_no);
        say_err!(
            "arbor: warning: {}:{}: {}: {}",
            path.display(),
            bad.line_no,
            match (kept, doc.dialect()) {
                (true, arbor_core::Dialect::Pi) => "kept as an entry without id, as pi keeps it",
                (true, arbor_core::Dialect::Omp) => "kept as an entry without id, as omp keeps it",
                (false, _) => "skipped",
            },
            bad.error
        );
    }
    if r.malformed.len() > 5 {
        say_err!(
            "arbor: warning: {}: {} more malformed lines skipped",
            path.display(),
            r.malformed.len() - 5
        );
    }
    if let Some(t) = &r.torn_tail {
        say_err!(
            "arbor: warning: {}:{}: torn last line ({} bytes) skipped: {}",
            path.display(),
            t.line_no,
            t.len,
            t.error
        );
    }
}

/// Loads a session for reading its conversation: blob references are replaced by the blobs'
/// contents as omp does on load (a missing blob stays a reference, with a warning; a corrupt
/// one is an error unless `lenient`).
fn load_resolved(
    session: &str,
    lenient: bool,
    loc: &Locator,
) -> Result<(std::path::PathBuf, SessionDoc)> {
    load_resolved_as(session, lenient, loc, false)
}

/// [`load_resolved`], lean or not (see [`load_as`]).
fn load_resolved_as(
    session: &str,
    lenient: bool,
    loc: &Locator,
    lean: bool,
) -> Result<(std::path::PathBuf, SessionDoc)> {
    let agent = loc.agent_override();
    let (path, mut doc, foreign) = load_any(session, loc, lean)?;
    if foreign {
        // Another agent's session has no blob store: its images are inline.
        return Ok((path, doc));
    }
    let store =
        arbor_store::blobs::BlobStore::new(arbor_store::blobs::blob_dir_for_session(&path, agent));
    let issues =
        arbor_store::blobs::resolve_doc_blobs(&mut doc, &store, lenient).with_context(|| {
            format!(
                "{} (--lenient reads the session with the reference left in place)",
                path.display()
            )
        })?;
    for i in issues.iter().take(10) {
        say_err!(
            "arbor: warning: {}:{}: blob reference left in place: {}",
            path.display(),
            i.line_no,
            i.error
        );
    }
    if issues.len() > 10 {
        say_err!(
            "arbor: warning: {}: {} more blob references left in place",
            path.display(),
            issues.len() - 10
        );
    }
    Ok((path, doc))
}

/// The context of a leaf, by the rules of the session's tool
/// ([`arbor_view::agent::session_context`], the one `arbor mcp` serves).
fn context_of(
    doc: &SessionDoc,
    leaf: LeafSel<'_>,
    path: &Path,
    omp: OmpVersion,
    loc: &Locator,
) -> SessionContext {
    arbor_view::agent::session_context(doc, leaf, path, loc.agent_override(), omp)
}

fn leaf_sel(leaf: Option<&str>) -> LeafSel<'_> {
    match leaf {
        Some(id) => LeafSel::Id(id),
        None => LeafSel::Current,
    }
}

fn stdout_all(bytes: &[u8]) -> Result<()> {
    let mut out = crate::report::stdout();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

pub fn context(
    session: &str,
    leaf: Option<&str>,
    llm: bool,
    lenient: bool,
    omp: OmpVersion,
    loc: &Locator,
) -> Result<ExitCode> {
    let (path, doc) = load_resolved(session, lenient, loc)?;
    if let Some(id) = leaf {
        if doc.index().get(id).is_none() {
            anyhow::bail!("{}: no entry with id {id}", path.display());
        }
    }
    let ctx = context_of(&doc, leaf_sel(leaf), &path, omp, loc);
    if ctx.cycle() {
        say_err!("arbor: warning: {}: the parentId chain of the leaf has a cycle; the path was cut where it repeats", path.display());
    }
    for u in ctx.unreadable_messages(&doc) {
        let e = &doc.entries()[u.entry];
        say_err!(
            "arbor: warning: {}:{}: entry {} has \"message\": {}; {}; arbor keeps it in its place{}",
            path.display(),
            e.line_no,
            e.id.as_deref().unwrap_or("(no id)"),
            u.what(),
            u.peer,
            if llm { " (--llm leaves it out)" } else { "" }
        );
    }
    if llm {
        let mut out = Vec::with_capacity(doc.base_bytes().len() / 2 + 64);
        ctx.write_llm_json(&doc, &mut out);
        out.push(b'\n');
        stdout_all(&out)?;
        return exit_soon(&path, doc);
    }
    // The lines before the first one the context reads are done with: their pages are
    // released on a third thread while the context is written, instead of by the exit.
    let first = ctx
        .entries_read()
        .into_iter()
        .filter_map(|i| match doc.entries()[i].line {
            arbor_core::entry::LineRef::Base { start, .. } => Some(start),
            arbor_core::entry::LineRef::Owned(_) => None,
        })
        .min()
        .unwrap_or(0);
    let done = doc.base_bytes().get(..first).unwrap_or_default();
    std::thread::scope(|s| {
        if done.len() >= RELEASE_MIN_BYTES {
            s.spawn(|| arbor_store::release_pages(done));
        }
        write_context_streaming(&ctx, &doc)
    })?;
    exit_soon(&path, doc)
}

/// Mapped bytes worth releasing on another thread before the exit (see [`context`]).
const RELEASE_MIN_BYTES: usize = 16 << 20;

/// Writes a context to stdout ([`SessionContext::write_streaming`]),
/// straight to the file descriptor: `Stdout` is line-buffered, and searched every chunk for
/// its last newline (the JSON has its only newline at the end).
fn write_context_streaming(ctx: &SessionContext, doc: &SessionDoc) -> Result<()> {
    let stdout = std::io::stdout().lock(); // its fd goes into an Out
    let mut fd: Box<dyn Write> = match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(crate::report::Out::new(std::fs::File::from(fd))),
        Err(_) => Box::new(crate::report::stdout()),
    };
    ctx.write_streaming(doc, &mut *fd)?;
    fd.flush()?;
    drop(stdout);
    Ok(())
}

pub fn tree(
    session: &str,
    full: bool,
    json: bool,
    pager: bool,
    term: &Term,
    loc: &Locator,
) -> Result<ExitCode> {
    let (path, doc) = load(session, loc)?;
    let tree = doc.index().tree(&doc);
    if !tree.unreachable.is_empty() {
        say_err!(
            "arbor: warning: {}: {} not reachable from a root (parentId cycles or reused ids)",
            path.display(),
            match tree.unreachable.len() {
                1 => "1 entry is".to_string(),
                n => format!("{n} entries are"),
            }
        );
    }
    if !json {
        let mut out = Out::new(term);
        crate::tree_view::render_tree(&doc, &tree, full, term, &mut out);
        out.print(term, pager)?;
        return exit_soon(&path, doc);
    }
    let mut out = Vec::with_capacity(doc.entries().len() * 96);
    tree.write_json(&doc, &mut out);
    out.push(b'\n');
    stdout_all(&out)?;
    exit_soon(&path, doc)
}

/// The command is done with `doc` and the process is about to exit: leave its memory to the
/// kernel instead of freeing every entry one by one (docs/performance.md, "Figures behind code
/// decisions"; the map is unmapped at exit either way). Fails when another process cut the file short while
/// it was mapped: the part past the cut read as zeros, so what was printed is not the session.
fn exit_soon(path: &Path, doc: SessionDoc) -> Result<ExitCode> {
    let cut = arbor_store::FileBytes::any_open_map_cut();
    std::mem::forget(doc);
    if cut {
        anyhow::bail!(
            "{}: the file was cut short by another process while it was being read; the output is not valid, run the command again",
            path.display()
        );
    }
    if std::io::stdout().flush().is_ok() && std::io::stderr().flush().is_ok() {
        // Everything is written and nothing is left to clean up that the kernel does not
        // take back at exit: leave without the allocator's exit-time work (it hands its
        // free pages back one by one, some 140 `madvise` calls after a 100 MB session).
        // SAFETY: `_exit` ends the process at once; stdout and stderr were flushed above,
        // and no file this command wrote needs anything else (it only read).
        unsafe { libc::_exit(0) }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn show(
    session: &str,
    leaf: Option<&str>,
    opts: &ShowOpts,
    lenient: bool,
    omp: OmpVersion,
    term: &Term,
    loc: &Locator,
) -> Result<ExitCode> {
    let (path, doc) = load_resolved(session, lenient, loc)?;
    if let Some(id) = leaf {
        super::require_entry(&doc, &path, id)?;
    }
    let ctx = context_of(&doc, leaf_sel(leaf), &path, omp, loc);
    let leaf_idx = match leaf {
        Some(id) => doc.index().get(id),
        None => doc.index().leaf,
    };
    let entries = leaf_idx
        .map(|l| doc.index().path(&doc, l).entries)
        .unwrap_or_default();
    if opts.json {
        let mut out = Vec::new();
        if opts.context {
            ctx.write_json(&doc, &mut out);
        } else {
            let in_ctx: std::collections::HashSet<usize> =
                ctx.outline().iter().map(|m| m.entry()).collect();
            let edits: std::collections::HashMap<usize, usize> = ctx
                .outline()
                .iter()
                .filter_map(|&m| ctx.edited_by(m).map(|e| (m.entry(), e)))
                .collect();
            let mut o = arbor_core::json::JsonObject::new(&mut out);
            o.str("path", &path.to_string_lossy()).opt_str(
                "leaf",
                leaf_idx.and_then(|l| doc.entries()[l].id.as_deref()),
            );
            let mut list = Vec::new();
            list.push(b'[');
            for (k, &i) in entries.iter().enumerate() {
                if k > 0 {
                    list.push(b',');
                }
                let mut raw_entry = Vec::new();
                arbor_core::json::write_canonical(doc.entry_line(i), &mut raw_entry);
                let mut item = arbor_core::json::JsonObject::new(&mut list);
                item.raw("entry", &raw_entry)
                    .bool("inContext", in_ctx.contains(&i))
                    .opt_str(
                        "editedBy",
                        edits.get(&i).and_then(|&e| doc.entries()[e].id.as_deref()),
                    );
                item.finish();
            }
            list.push(b']');
            o.raw("entries", &list);
            o.finish();
        }
        out.push(b'\n');
        stdout_all(&out)?;
        return exit_soon(&path, doc);
    }
    let mut out = Out::new(term);
    if let Some(name) = doc.session_name() {
        out.paint(crate::term::Paint::Header, &format!("# {name}"))
            .nl();
    }
    let what = if opts.context {
        "what the model sees".to_string()
    } else {
        format!(
            "{} from the root to the leaf",
            arbor_view::count(entries.len() as u64, "entry", "entries")
        )
    };
    let about = format!(
        "{} · {} · {} · {what}",
        doc.session_id().unwrap_or_default(),
        if doc.dialect() == arbor_core::Dialect::Omp {
            "omp"
        } else {
            "pi"
        },
        doc.header_str("cwd").unwrap_or_default(),
    );
    // On a screen, broken at spaces as the entries below are.
    let about = if term.sized {
        crate::term::wrap(&arbor_view::sanitize_text(&about), term.width)
    } else {
        vec![about]
    };
    for line in &about {
        out.paint(crate::term::Paint::Dim, line).nl();
    }
    out.nl();
    if opts.context {
        crate::show_view::render_context(&doc, &ctx, opts, term, &mut out);
    } else {
        crate::show_view::render_path(&doc, &entries, &ctx, opts, term, &mut out);
    }
    out.print(term, !opts.no_pager)?;
    exit_soon(&path, doc)
}

/// What `arbor export` was asked, but for the session.
pub struct ExportArgs<'a> {
    /// `--leaf`.
    pub leaf: Option<&'a str>,
    /// `--tree`.
    pub tree: bool,
    /// `--format`.
    pub format: crate::cli::ExportFormat,
    /// `-o FILE` (with `--force`).
    pub output: Option<arbor_view::Target<'a>>,
    /// Not `--no-redact`.
    pub redact: bool,
    /// `--lenient`: a corrupt blob reference stays in place, as `show` and `context` leave it.
    pub lenient: bool,
}

/// `arbor export`.
pub fn export(session: &str, a: &ExportArgs<'_>, loc: &Locator) -> Result<ExitCode> {
    let (leaf, tree, redact) = (a.leaf, a.tree, a.redact);
    let format = arbor_view::Format::from(a.format);
    let force = a.output.is_some_and(|t| t.force);
    let output = a.output.map(|t| t.path);
    // A big session takes a while to read and write: a spinner on a terminal's stderr,
    // counting what is written (resolved once: the path, when it is one, is what is loaded).
    let resolved = loc.resolve_session(session).ok();
    let size = resolved
        .as_deref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map_or(0, |m| m.len());
    let mut bar = crate::progress::Bar::counter("exporting", size);
    bar.message(format!("reading {}", crate::cmd::index::human_size(size)));
    let session = resolved
        .as_deref()
        .and_then(Path::to_str)
        .unwrap_or(session);
    let (path, mut doc) = load_resolved_as(session, a.lenient, loc, true)?;
    bar.message(if redact {
        "looking for secrets"
    } else {
        "writing"
    });
    if let Some(id) = leaf {
        super::require_entry(&doc, &path, id)?;
    }
    let paths = arbor_view::paths_of(&doc, leaf.and_then(|id| doc.index().get(id)), tree);
    // Redacted before anything is rendered: every format writes only what the one scanner
    // (`arbor secrets`) left.
    let (redacted, redactions) = if redact {
        arbor_view::redact(&mut doc).with_context(|| path.display().to_string())?
    } else {
        (0, arbor_view::Redactions::default())
    };
    bar.message("writing");
    // HTML holds its images itself; Markdown links them from FILE.assets/.
    let assets = output
        .filter(|_| format == arbor_view::Format::Md)
        .map(arbor_view::Assets::for_file);
    let mut opts = arbor_view::Options::default();
    if redact {
        opts = opts.redacted(&redactions);
    }
    if let Some(a) = &assets {
        opts = opts.with_assets(a);
    }
    let report = match output {
        Some(o) => {
            // Never over the session, a file an export did not make (unless --force) or a
            // directory; written private beside, then renamed: a failed export leaves nothing.
            arbor_view::check_target(o, &path, force)?;
            arbor_view::write_export(
                o,
                format == arbor_view::Format::Json,
                assets.as_ref(),
                |w| {
                    let w = crate::progress::Counting::new(w, &bar);
                    arbor_view::export(&doc, &path, format, &paths, &opts, w)
                },
            )
            .with_context(|| o.display().to_string())?
        }
        None => {
            let w = std::io::BufWriter::new(crate::report::stdout());
            let w = crate::progress::Counting::new(w, &bar);
            arbor_view::export(&doc, &path, format, &paths, &opts, w)?
        }
    };
    bar.finish();
    if redacted > 0 {
        say_err!(
            "arbor: {} redacted (--no-redact keeps {})",
            arbor_view::count(redacted as u64, "secret", "secrets"),
            if redacted == 1 { "it" } else { "them" }
        );
    }
    if let (Some(o), true, arbor_view::Format::Md) = (output, report.images > 0, format) {
        say_err!(
            "arbor: {} in {}",
            arbor_view::count(report.images as u64, "image", "images"),
            arbor_view::assets_of(o).0.display()
        );
    }
    exit_soon(&path, doc)
}
