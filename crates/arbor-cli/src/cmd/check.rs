//! `arbor check [--repair]` and `arbor gc --blobs`.
use crate::render::Human;
use anyhow::Result;
use arbor_core::json::write_str_escaped;
use arbor_store::blobs::{self, BlobStore};
use arbor_store::check::{self, CheckOptions, CheckReport};
use arbor_store::locate::Locator;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

fn print_report(r: &CheckReport, out: &mut impl Write) -> std::io::Result<()> {
    let problems = r.problems();
    if problems == 0 {
        writeln!(out, "{}: ok ({} entries)", r.path.display(), r.entries)?;
    } else {
        writeln!(
            out,
            "{}: {} problem{}",
            r.path.display(),
            problems,
            if problems == 1 { "" } else { "s" }
        )?;
    }
    for f in &r.findings {
        let tag = match (f.problem, f.repairable) {
            (false, _) => "note",
            (true, true) => "repairable",
            (true, false) => "problem",
        };
        match f.line {
            Some(l) => writeln!(out, "  line {l}: {tag}: {}", f.message)?,
            None => writeln!(out, "  {tag}: {}", f.message)?,
        }
    }
    Ok(())
}

pub fn check(
    sessions: &[String],
    repair: bool,
    json: bool,
    no_blobs: bool,
    wait: Option<Duration>,
    loc: &Locator,
) -> Result<ExitCode> {
    let agent = loc.agent_override();
    let opts = CheckOptions {
        agent_dir: agent.map(Path::to_path_buf),
        skip_blobs: no_blobs,
        ..Default::default()
    };
    let mut remaining = false;
    let mut json_out = b"[".to_vec();
    let mut out = Human::new(std::io::stdout().lock());
    for s in sessions {
        let checked = loc
            .resolve_session(s)
            .map_err(anyhow::Error::from)
            .and_then(|path| {
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
                if json {
                    // Every argument gets its object: a path that could not be checked is
                    // not left out of the array.
                    if json_out.len() > 1 {
                        json_out.push(b',');
                    }
                    CheckReport::unreadable(Path::new(s), message).write_json(&mut json_out);
                }
                continue;
            }
        };
        remaining |= report.problems() > 0;
        if json {
            if json_out.len() > 1 {
                json_out.push(b',');
            }
            report.write_json(&mut json_out);
            if let Some(o) = &outcome {
                // Splice the repair details into the object.
                json_out.pop();
                json_out.extend_from_slice(
                    format!(
                        ",\"repaired\":{},\"fixed\":{}",
                        o.rewritten,
                        o.before.problems() - o.after.problems().min(o.before.problems())
                    )
                    .as_bytes(),
                );
                json_out.extend_from_slice(b",\"quarantine\":");
                match &o.quarantine {
                    Some(q) => write_str_escaped(&q.to_string_lossy(), &mut json_out),
                    None => json_out.extend_from_slice(b"null"),
                }
                json_out.push(b'}');
            }
        } else {
            if let Some(o) = &outcome {
                if o.rewritten {
                    writeln!(
                        out,
                        "{}: repaired {} problem{}{}",
                        path.display(),
                        o.before.repairable(),
                        if o.before.repairable() == 1 { "" } else { "s" },
                        o.quarantine
                            .as_ref()
                            .map(|q| format!(" (removed bytes kept in {})", q.display()))
                            .unwrap_or_default()
                    )?;
                }
            }
            print_report(&report, &mut out)?;
        }
    }
    out.flush()?;
    if json {
        json_out.extend_from_slice(b"]\n");
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&json_out)?;
        stdout.flush()?;
    }
    Ok(if remaining {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
    let mut out = Human::new(std::io::stdout().lock());
    let mut json_out = b"[".to_vec();
    for (k, a) in agent_for_gc(loc).iter().enumerate() {
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
            if k > 0 && json_out.len() > 1 {
                json_out.push(b',');
            }
            json_out.extend_from_slice(b"{\"blobDir\":");
            write_str_escaped(&store.dir().to_string_lossy(), &mut json_out);
            json_out.extend_from_slice(
                format!(
                    ",\"dryRun\":{},\"filesScanned\":{},\"referenced\":{},\"blobs\":{},\"unreferenced\":[",
                    !yes, r.files_scanned, r.referenced, r.candidates
                )
                .as_bytes(),
            );
            for (i, b) in r.unreferenced.iter().enumerate() {
                if i > 0 {
                    json_out.push(b',');
                }
                json_out.extend_from_slice(
                    format!(
                        "{{\"hash\":\"{}\",\"bytes\":{},\"files\":{}}}",
                        b.hash,
                        b.bytes,
                        b.paths.len()
                    )
                    .as_bytes(),
                );
            }
            json_out.extend_from_slice(
                format!(
                    "],\"bytes\":{bytes},\"staleTemps\":{},\"removed\":{},\"errors\":[",
                    r.stale_temps.len(),
                    r.removed
                )
                .as_bytes(),
            );
            for (i, e) in r.errors.iter().enumerate() {
                if i > 0 {
                    json_out.push(b',');
                }
                write_str_escaped(e, &mut json_out);
            }
            json_out.extend_from_slice(b"]}");
        } else {
            writeln!(
                out,
                "{}: {} blobs, {} referenced by {} files; {} unreferenced ({} bytes){}",
                store.dir().display(),
                r.candidates,
                r.referenced,
                r.files_scanned,
                r.unreferenced.len(),
                bytes,
                if yes {
                    format!(", {} files removed", r.removed)
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
    if json {
        json_out.extend_from_slice(b"]\n");
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&json_out)?;
        stdout.flush()?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
