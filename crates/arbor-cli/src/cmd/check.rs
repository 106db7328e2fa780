//! `arbor check [--repair]` and `arbor gc --blobs`.
use crate::term::{Out, Paint, Term};
use anyhow::Result;
use arbor_core::json::JsonArray;
use arbor_store::blobs::{self, BlobStore};
use arbor_store::check::{self, CheckOptions, CheckReport};
use arbor_store::locate::Locator;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

fn print_report(r: &CheckReport, out: &mut Out) {
    let problems = r.problems();
    out.put(&format!(
        "{}: ",
        super::index::home_short(&r.path.to_string_lossy())
    ));
    if problems == 0 {
        out.paint(Paint::Leaf, "ok").put(&format!(
            " ({})",
            arbor_view::count(r.entries as u64, "entry", "entries")
        ));
    } else {
        out.paint(
            Paint::Error,
            &arbor_view::count(problems as u64, "problem", "problems"),
        );
    }
    out.nl();
    for f in &r.findings {
        let (tag, paint) = match (f.problem, f.repairable) {
            (false, _) => ("note", Paint::Dim),
            (true, true) => ("repairable", Paint::Warn),
            (true, false) => ("problem", Paint::Error),
        };
        out.put("  ");
        if let Some(l) = f.line {
            out.put(&format!("line {l}: "));
        }
        out.paint(paint, tag).put(&format!(": {}", f.message)).nl();
    }
}

/// What `arbor check` was asked.
pub struct CheckArgs<'a> {
    /// The SESSION arguments.
    pub sessions: &'a [String],
    /// `--dir` / `--all` (with no SESSION and neither: the current project).
    pub scope: &'a crate::cli::ScopeOpts,
    /// `--verbose`: a line for every healthy file too.
    pub verbose: bool,
    /// `--repair`.
    pub repair: bool,
    /// `--json`.
    pub json: bool,
    /// `--no-blobs`.
    pub no_blobs: bool,
    /// `--wait`.
    pub wait: Option<Duration>,
}

/// `arbor check`: the problems of each session (a healthy one only with `--verbose`), then a
/// one-line summary on stderr. Exit status 1 when a problem remains or a file could not be
/// checked.
pub fn check(a: &CheckArgs<'_>, term: &Term, loc: &Locator) -> Result<ExitCode> {
    let (repair, json, wait) = (a.repair, a.json, a.wait);
    let agent = loc.agent_override();
    let opts = CheckOptions::default()
        .with_agent_dir(agent.map(Path::to_path_buf))
        .with_skip_blobs(a.no_blobs);
    let scoped = super::scoped_files(loc, a.sessions, a.scope, "check")?;
    let mut remaining = false;
    let (mut healthy, mut with_problems, mut unchecked) = (0usize, 0usize, 0usize);
    for (dir, e) in &scoped.unreadable {
        say_err!("arbor: {}: not checked: {e}", dir.display());
        remaining = true;
        unchecked += 1;
    }
    // One object per SESSION argument, written into the array at the end.
    let mut reports: Vec<Vec<u8>> = Vec::new();
    let mut out = Out::new(term);
    // Each argument in order (one that names no session is reported and counted, and gets
    // its JSON object), then the scope's files.
    let each = scoped
        .named
        .into_iter()
        .map(|(arg, r)| (PathBuf::from(arg), r.map_err(anyhow::Error::from)))
        .chain(scoped.found.into_iter().map(|f| (f.clone(), Ok(f))));
    for (file, resolved) in each {
        let checked = resolved.and_then(|path| {
            let r = if repair {
                check::repair(&path, &opts, wait).map(|o| (o.after.clone(), Some(o)))
            } else {
                check::check(&path, &opts).map(|r| (r, None))
            };
            r.map(|x| (path, x)).map_err(anyhow::Error::from)
        });
        let (path, (report, outcome)) = match checked {
            Ok(x) => x,
            Err(e) => {
                let message = crate::report::error_text(&e);
                say_err!("arbor: {message}");
                remaining = true;
                unchecked += 1;
                if json {
                    // Every argument gets its object: a path that could not be checked is
                    // not left out of the array.
                    let mut one = Vec::new();
                    CheckReport::unreadable(&file, message).write_json(&mut one);
                    reports.push(one);
                }
                continue;
            }
        };
        remaining |= report.problems() > 0;
        if report.problems() > 0 {
            with_problems += 1;
        } else {
            healthy += 1;
        }
        if json {
            let mut one = Vec::new();
            report.write_json_with(&mut one, |j| {
                if let Some(o) = &outcome {
                    j.bool("repaired", o.rewritten)
                        .uint(
                            "fixed",
                            (o.before.problems() - o.after.problems().min(o.before.problems()))
                                as u64,
                        )
                        .opt_str(
                            "quarantine",
                            o.quarantine
                                .as_ref()
                                .map(|q| q.to_string_lossy())
                                .as_deref(),
                        );
                }
            });
            reports.push(one);
        } else {
            if let Some(o) = &outcome {
                if o.rewritten {
                    out.put(&format!(
                        "{}: repaired {}{}\n",
                        super::index::home_short(&path.to_string_lossy()),
                        arbor_view::count(o.before.repairable() as u64, "problem", "problems"),
                        o.quarantine
                            .as_ref()
                            .map(|q| format!(" (removed bytes kept in {})", q.display()))
                            .unwrap_or_default()
                    ));
                }
            }
            let repaired = outcome.as_ref().is_some_and(|o| o.rewritten);
            if a.verbose || repaired || !report.findings.is_empty() {
                print_report(&report, &mut out);
            }
        }
    }
    if !json {
        out.print(term, false)?;
        let checked = healthy + with_problems;
        let mut summary = format!(
            "checked {}: {healthy} ok, {with_problems} with problems",
            plural(checked, "session")
        );
        if unchecked > 0 {
            summary.push_str(&format!(
                "; {} not checked (see above)",
                plural(unchecked, "file")
            ));
        }
        if checked + unchecked > 0 {
            say_err!("arbor: {summary}");
        }
        // A file named that is another agent's session: said, with `arbor import`.
        if remaining {
            let args: Vec<String> = std::env::args().skip(2).collect();
            if let Some(hint) = super::agents::foreign_hint(&args) {
                say_err!("{hint}");
            }
        }
    }
    if json {
        let mut json_out = Vec::new();
        let mut array = JsonArray::new(&mut json_out);
        for r in &reports {
            array.raw(r);
        }
        array.finish();
        json_out.push(b'\n');
        let mut stdout = crate::report::stdout();
        stdout.write_all(&json_out)?;
        stdout.flush()?;
    }
    Ok(if remaining {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// "1 session", "2 sessions".
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn agent_for_gc(loc: &Locator) -> Vec<PathBuf> {
    let agent = loc.agent_override();
    match agent {
        Some(a) => vec![a.to_path_buf()],
        // Blobs are omp's: its agent directory first (pi keeps images inline).
        None => {
            let mut v = Locator::new(None).agent_dirs();
            v.reverse();
            v
        }
    }
}

pub fn gc(
    yes: bool,
    min_age: Duration,
    extra: &[PathBuf],
    json: bool,
    loc: &Locator,
) -> Result<ExitCode> {
    let mut failed = false;
    let mut out = arbor_view::Human::new(crate::report::stdout());
    let mut json_out = Vec::new();
    let mut reports = JsonArray::new(&mut json_out);
    for a in agent_for_gc(loc).iter() {
        let store = BlobStore::for_agent_dir(a);
        if !store.dir().is_dir() {
            if !json {
                writeln!(out, "{}: no blob store", store.dir().display())?;
            }
            continue;
        }
        let r = match blobs::reference_files(a, extra)
            .and_then(|files| blobs::gc(&store, &files, min_age, !yes))
        {
            Ok(r) => r,
            Err(e) => {
                say_err!(
                    "arbor: gc of {} stopped, nothing removed: {e}",
                    store.dir().display()
                );
                failed = true;
                continue;
            }
        };
        let bytes: u64 = r.unreferenced.iter().map(|b| b.bytes).sum();
        if json {
            reports.object(|o| {
                o.str("blobDir", &store.dir().to_string_lossy())
                    .bool("dryRun", !yes)
                    .uint("filesScanned", r.files_scanned as u64)
                    .uint("referenced", r.referenced as u64)
                    .uint("blobs", r.candidates as u64)
                    .array("unreferenced", |a| {
                        for b in &r.unreferenced {
                            a.object(|j| {
                                j.str("hash", &b.hash)
                                    .uint("bytes", b.bytes)
                                    .uint("files", b.paths.len() as u64);
                            });
                        }
                    })
                    .uint("bytes", bytes)
                    .uint("staleTemps", r.stale_temps.len() as u64)
                    .uint("removed", r.removed as u64)
                    .array("errors", |a| {
                        for e in &r.errors {
                            a.str(e);
                        }
                    });
            });
        } else {
            writeln!(
                out,
                "{}: {}, {} referenced by {}; {} unreferenced ({}){}",
                store.dir().display(),
                arbor_view::count(r.candidates as u64, "blob", "blobs"),
                r.referenced,
                arbor_view::count(r.files_scanned as u64, "file", "files"),
                r.unreferenced.len(),
                arbor_view::count(bytes as u64, "byte", "bytes"),
                if yes {
                    format!(
                        ", {} removed",
                        arbor_view::count(r.removed as u64, "file", "files")
                    )
                } else {
                    " — dry run, rerun with --yes to remove them".into()
                }
            )?;
            for b in &r.unreferenced {
                writeln!(out, "  {} {} bytes", b.hash, b.bytes)?;
            }
        }
        for e in &r.errors {
            say_err!("arbor: {e}");
            failed = true;
        }
    }
    out.flush()?;
    reports.finish();
    if json {
        json_out.push(b'\n');
        let mut stdout = crate::report::stdout();
        stdout.write_all(&json_out)?;
        stdout.flush()?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
