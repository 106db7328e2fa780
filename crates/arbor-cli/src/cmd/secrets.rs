//! `arbor secrets`: where sessions hold API keys, tokens, private keys and passwords (never
//! the secrets themselves).
use crate::term::{Out, Paint, Term};
use anyhow::Result;
use arbor_store::locate::Locator;
use arbor_view::secrets::Place;
use std::path::PathBuf;
use std::process::ExitCode;

/// `arbor secrets [SESSION...] [--dir DIR | --all]` (neither: the current project). Exit status 1 when something was found (as a linter),
/// and when anything could not be scanned (a file that does not open or load, a line that is
/// not JSON, a directory that cannot be read), each named on stderr: a gate never passes on
/// what it did not read.
pub fn secrets(
    sessions: &[String],
    scope: &crate::cli::ScopeOpts,
    json: bool,
    term: &Term,
    loc: &Locator,
) -> Result<ExitCode> {
    // Another agent's sessions named (a source file, an id, a prefix): read in memory as
    // `arbor import` would make them, and scanned as that pi session.
    let mut pi_args = Vec::new();
    let mut foreign = Vec::new();
    for s in sessions {
        let named = match loc.resolve_session(s) {
            Ok(p) => super::agents::foreign_row(&p.to_string_lossy()).is_some(),
            Err(_) => super::agents::names_foreign(s),
        };
        match named.then(|| super::agents::open_foreign(s)).transpose()? {
            Some(Some(f)) => foreign.push(f),
            _ => pi_args.push(s.clone()),
        }
    }
    let scoped = if pi_args.is_empty() && !sessions.is_empty() && !scope.named() {
        super::Scoped::default()
    } else {
        super::scoped_files(loc, &pi_args, scope, "secrets")?
    };
    let mut unscanned = 0usize;
    for (dir, e) in &scoped.unreadable {
        say_err!("arbor: {}: not scanned: {e}", dir.display());
        unscanned += 1;
    }
    let files: Vec<PathBuf> = scoped.files()?;
    if files.is_empty() && foreign.is_empty() && unscanned == 0 {
        // The scope's hint is said; no session holds a secret.
        if json {
            std::io::Write::write_all(&mut crate::report::stdout(), b"[]\n")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut total = 0usize;
    let mut out = Out::new(term);
    let mut list = Vec::new();
    let mut arr = arbor_core::json::JsonArray::new(&mut list);
    let mut read = 0usize;
    // Each session: its file, its document (another agent's: read before, in memory).
    let mut foreign = foreign.into_iter();
    let mut pi_files = files.iter();
    loop {
        let (f, doc, in_memory) = match foreign.next() {
            Some(fd) => {
                read += 1;
                (fd.source, fd.doc, true)
            }
            None => {
                let Some(f) = pi_files.next() else { break };
                match arbor_store::load_doc(f) {
                    Ok(d) => {
                        read += 1;
                        (f.clone(), d, false)
                    }
                    Err(e) => {
                        // The path once; an empty file (no session) passes without a word, as
                        // in `stats`. The reason may quote the file (the first line's type):
                        // never a secret.
                        let why = super::why_not(f, &e);
                        if !why.is_empty() {
                            say_err!(
                                "arbor: {}: not scanned: {}",
                                f.display(),
                                arbor_view::secrets::redact(&why)
                            );
                            unscanned += 1;
                        }
                        continue;
                    }
                }
            }
        };
        // Another agent's session: the line is that of the pi session its import would be,
        // not of the source, and is said so.
        let at = |line: usize| {
            if in_memory {
                format!(
                    "{} (read in memory: line {line} of its import)",
                    f.display()
                )
            } else {
                format!("{}:{line}", f.display())
            }
        };
        let scan = arbor_view::secrets::scan_doc(&doc);
        for u in &scan.unscanned {
            say_err!(
                "arbor: {}: not scanned: {}",
                at(u.line),
                arbor_view::secrets::redact(&u.problem)
            );
            unscanned += 1;
        }
        for s in scan.found {
            total += 1;
            let entry = match &s.place {
                Place::Entry(id) => id.as_deref(),
                _ => None,
            };
            let place = match &s.place {
                Place::TitleSlot => "(title slot)",
                Place::Header => "(header)",
                Place::Entry(id) => id.as_deref().unwrap_or("(no id)"),
            };
            if json {
                arr.object(|o| {
                    o.str("path", &f.to_string_lossy())
                        .uint("line", s.line as u64)
                        .opt_str("entryId", entry)
                        .str("field", &s.path)
                        .str("kind", s.kind)
                        .uint("chars", s.chars as u64);
                    if in_memory {
                        o.bool("readInMemory", true);
                    }
                });
            } else {
                out.paint(Paint::Dim, &at(s.line))
                    .put("  ")
                    .paint(Paint::Warn, s.kind)
                    .put(&format!(
                        "  entry {place} · {} · {} characters",
                        s.path, s.chars
                    ))
                    .nl();
            }
        }
    }
    arr.finish();
    if json {
        list.push(b'\n');
        std::io::Write::write_all(&mut crate::report::stdout(), &list)?;
    } else {
        out.print(term, false)?;
        say_err!(
            "arbor: {} in {}{}",
            arbor_view::count(total as u64, "secret", "secrets"),
            arbor_view::count(read as u64, "session", "sessions"),
            if unscanned > 0 {
                format!("; {unscanned} not scanned (see above)")
            } else {
                String::new()
            }
        );
    }
    Ok(if total > 0 || unscanned > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
