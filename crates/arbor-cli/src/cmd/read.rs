//! Commands that only read: context, tree, show.
use crate::pieces::Pieces;
use crate::render;
use anyhow::{Context as _, Result};
use arbor_core::context::{build_session_context, LeafSel, SessionContext};
use arbor_core::doc::SessionDoc;
use arbor_store::locate::Locator;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitCode;

fn load(session: &str, loc: &Locator) -> Result<(std::path::PathBuf, SessionDoc)> {
    let path = loc.resolve_session(session)?;
    let doc = arbor_store::load_doc(&path)?;
    warn_report(&path, &doc);
    Ok((path, doc))
}

/// Tells stderr what the loader skipped, so nothing is dropped silently.
fn warn_report(path: &Path, doc: &SessionDoc) {
    let r = &doc.report;
    for bad in r.malformed.iter().take(5) {
        say_err!(
            "arbor: warning: {}:{}: skipped: {}",
            path.display(),
            bad.line_no,
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
/// contents as omp does on load (missing or corrupt blobs are an error unless `lenient`).
fn load_resolved(
    session: &str,
    lenient: bool,
    loc: &Locator,
) -> Result<(std::path::PathBuf, SessionDoc)> {
    let agent = loc.agent_override();
    let (path, mut doc) = load(session, loc)?;
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

/// The context of a leaf; omp files get omp's rules with the session's blob store attached.
fn context_of(doc: &SessionDoc, leaf: LeafSel<'_>, path: &Path, loc: &Locator) -> SessionContext {
    let agent = loc.agent_override();
    if doc.dialect() != arbor_core::Dialect::Omp {
        return build_session_context(doc, leaf);
    }
    let store =
        arbor_store::blobs::BlobStore::new(arbor_store::blobs::blob_dir_for_session(path, agent));
    arbor_core::context_omp::build_omp_context(doc, leaf, Some(&store))
}

fn leaf_sel(leaf: Option<&str>) -> LeafSel<'_> {
    match leaf {
        Some(id) => LeafSel::Id(id),
        None => LeafSel::Current,
    }
}

fn stdout_all(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

pub fn context(
    session: &str,
    leaf: Option<&str>,
    llm: bool,
    lenient: bool,
    loc: &Locator,
) -> Result<ExitCode> {
    let (path, doc) = load_resolved(session, lenient, loc)?;
    if let Some(id) = leaf {
        if doc.index.get(id).is_none() {
            anyhow::bail!("{}: no entry with id {id}", path.display());
        }
    }
    let ctx = context_of(&doc, leaf_sel(leaf), &path, loc);
    if ctx.cycle {
        say_err!("arbor: warning: {}: the parentId chain of the leaf has a cycle; the path was cut where it repeats", path.display());
    }
    for i in ctx.null_messages(&doc) {
        let e = &doc.entries[i];
        say_err!(
            "arbor: warning: {}:{}: entry {} has \"message\": null; pi cannot build this context (it throws), arbor keeps the null in its place",
            path.display(),
            e.line_no,
            e.id.as_deref().unwrap_or("(no id)")
        );
    }
    if !llm && ctx.omp.is_none() {
        // The lines before the first one the context reads are done with: their pages are
        // released on a third thread while the context is written, instead of by the exit.
        let first = context_lines(&ctx)
            .filter_map(|i| match doc.entries[i].line {
                arbor_core::entry::LineRef::Base { start, .. } => Some(start),
                arbor_core::entry::LineRef::Owned(_) => None,
            })
            .min()
            .unwrap_or(0);
        let done = doc.base_bytes().get(..first).unwrap_or_default();
        std::thread::scope(|s| {
            if done.len() >= RELEASE_MIN_BYTES {
                s.spawn(|| arbor_store::map::release_pages(done));
            }
            write_context_streaming(&ctx, &doc)
        })?;
        return exit_soon(&path, doc);
    }
    let mut out = Vec::with_capacity(doc.base_bytes().len() / 2 + 64);
    if llm {
        ctx.write_json_with(&doc, &mut out, &|c, d, o| {
            arbor_core::llm::write_llm_messages(c, d, o)
        });
    } else {
        ctx.write_json(&doc, &mut out);
    }
    out.push(b'\n');
    stdout_all(&out)?;
    exit_soon(&path, doc)
}

/// Mapped bytes worth releasing on another thread before the exit (see [`context`]).
const RELEASE_MIN_BYTES: usize = 16 << 20;

/// The entries whose lines writing a (pi) context reads.
fn context_lines(ctx: &SessionContext) -> impl Iterator<Item = usize> + '_ {
    let model = match ctx.model {
        arbor_core::context::ModelSource::Change(i)
        | arbor_core::context::ModelSource::Assistant(i) => Some(i),
        arbor_core::context::ModelSource::None => None,
    };
    ctx.messages
        .iter()
        .map(|m| m.entry())
        .chain(ctx.thinking_level)
        .chain(model)
        .chain(ctx.mode)
        .chain(ctx.service_tier)
}

/// Writes a context to stdout in chunks of about 1 MB, so the JSON of a large context is never
/// held whole in memory (a session that was never compacted has a context as large as the
/// file) and no large fresh buffer has to be faulted in.
fn write_context_streaming(ctx: &SessionContext, doc: &SessionDoc) -> Result<()> {
    const CHUNK: usize = 1 << 20;
    // Straight to the file descriptor: `Stdout` is line-buffered, and searched every chunk
    // for its last newline (`memrchr` over all 19.5 MB of a 100 MB session's context: the
    // JSON has its only newline at the end).
    let stdout = std::io::stdout().lock();
    let fd: Box<dyn Write> = match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout().lock()),
    };
    let sink = std::cell::RefCell::new((fd, None::<std::io::Error>));
    let flush_pieces = |p: &mut Pieces<'_>| {
        let mut s = sink.borrow_mut();
        if s.1.is_none() {
            if let Err(e) = p.write_to(&mut *s.0) {
                s.1 = Some(e);
            }
        }
        p.clear();
    };
    // Messages are transcoded independently: on two cores, windows of about 2 MB are split in
    // two halves written side by side, then output in order (memory stays bounded). A message
    // stored exactly as it is to be printed is not copied: it is written from the map.
    const WINDOW: usize = 2 << 20;
    let two_cores = arbor_core::two_cores();
    let size = |m: &arbor_core::context::CtxMessage| doc.line(&doc.entries[m.entry()].line).len();
    fn write_run<'d>(
        c: &SessionContext,
        d: &'d SessionDoc,
        run: &[arbor_core::context::CtxMessage],
        first: bool,
        p: &mut Pieces<'d>,
    ) {
        for (k, m) in run.iter().enumerate() {
            if k > 0 || !first {
                p.buf().push(b',');
            }
            if let Some(kept) = c.write_message_or_keep(d, *m, p.buf()) {
                p.keep(kept);
            }
        }
    }
    // Two sets of pieces, each filled again for every window: fresh buffers of a few MB per
    // window cost more in page faults than writing the JSON into them.
    let mine = std::cell::RefCell::new(Pieces::default());
    let side = std::cell::RefCell::new(Pieces::default());
    let mut out = Vec::new();
    // The closure is handed `ctx` and `doc` again, for a lifetime local to the call; the
    // kept slices need `doc`'s own.
    let (c, d) = (ctx, doc);
    ctx.write_json_with(doc, &mut out, &|_, _, o| {
        // What the context's JSON starts with goes out first, with the first messages.
        let mut mine = mine.borrow_mut();
        mine.buf().append(o);
        mine.buf().push(b'[');
        let msgs = &c.messages[..];
        let mut start = 0;
        while start < msgs.len() {
            // The next window: messages up to WINDOW bytes of lines (at least one).
            let (mut end, mut bytes) = (start, 0);
            while end < msgs.len() && (end == start || bytes < WINDOW) {
                bytes += size(&msgs[end]);
                end += 1;
            }
            let window = &msgs[start..end];
            if two_cores && bytes >= WINDOW / 2 && window.len() > 1 {
                // Split at half the bytes.
                let (mut mid, mut acc) = (0, 0);
                while mid < window.len() - 1 && acc < bytes / 2 {
                    acc += size(&window[mid]);
                    mid += 1;
                }
                let mid = mid.max(1);
                let mut v = std::mem::take(&mut *side.borrow_mut());
                let second = std::thread::scope(|sc| {
                    let later = sc.spawn(move || {
                        write_run(c, d, &window[mid..], false, &mut v);
                        v
                    });
                    write_run(c, d, &window[..mid], start == 0, &mut mine);
                    later.join().unwrap_or_else(|_| {
                        let mut v = Pieces::default();
                        write_run(c, d, &window[mid..], false, &mut v);
                        v
                    })
                });
                // The first half, then the second.
                flush_pieces(&mut mine);
                let mut s = second;
                flush_pieces(&mut s);
                *side.borrow_mut() = s;
            } else {
                write_run(c, d, window, start == 0, &mut mine);
            }
            if mine.len() >= CHUNK {
                flush_pieces(&mut mine);
            }
            start = end;
        }
        o.push(b']');
    });
    // The last messages, then the rest of the JSON (written after them into `out`).
    let mut last = mine.into_inner();
    last.buf().append(&mut out);
    last.buf().push(b'\n');
    flush_pieces(&mut last);
    let (mut w, err) = sink.into_inner();
    if let Some(e) = err {
        return Err(e.into());
    }
    w.flush()?;
    drop(stdout);
    Ok(())
}

pub fn tree(session: &str, json: bool, loc: &Locator) -> Result<ExitCode> {
    let (path, doc) = load(session, loc)?;
    let tree = doc.index.tree(&doc);
    if !tree.unreachable.is_empty() {
        say_err!(
            "arbor: warning: {}: {} entries are not reachable from a root (parentId cycles or reused ids)",
            path.display(),
            tree.unreachable.len()
        );
    }
    if !json {
        let mut out = render::Human::new(std::io::BufWriter::new(std::io::stdout().lock()));
        render::print_tree(&doc, &tree, &mut out)?;
        out.flush()?;
        drop(out);
        return exit_soon(&path, doc);
    }
    let mut out = Vec::with_capacity(doc.entries.len() * 96);
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
    let cut = arbor_store::map::FileBytes::any_open_map_cut();
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

pub fn show(session: &str, leaf: Option<&str>, lenient: bool, loc: &Locator) -> Result<ExitCode> {
    let (path, doc) = load_resolved(session, lenient, loc)?;
    if let Some(id) = leaf {
        if doc.index.get(id).is_none() {
            anyhow::bail!("{}: no entry with id {id}", path.display());
        }
    }
    let ctx = context_of(&doc, leaf_sel(leaf), &path, loc);
    let mut out = render::Human::new(std::io::BufWriter::new(std::io::stdout().lock()));
    if let Some(name) = doc.session_name() {
        writeln!(out, "# {name}\n")?;
    }
    render::print_conversation(&doc, &ctx, &mut out)?;
    out.flush()?;
    drop(out);
    exit_soon(&path, doc)
}
