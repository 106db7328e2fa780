//! `arbor rm` and `arbor trash`: sessions go to the freedesktop trash (the `trash` crate, the
//! same trash file managers use), with what belongs to them; nothing is unlinked without
//! `--force`.
use crate::cli::TrashCommand;
use crate::term::{Out, Paint, Term};
use anyhow::{bail, Context as _, Result};
use arbor_store::locate::Locator;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// What belongs to a session file: its writer lock file, the sidecars arbor's repairs wrote
/// beside it (`<file>.<what>-<time>`), and omp's artifact directory (the path without
/// `.jsonl`). Only names that exist; symlinks are taken as links (never followed).
pub(crate) fn belongings(session: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(dir) = session.parent() else {
        return out;
    };
    let Some(name) = session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return out;
    };
    let prefix = format!("{name}.");
    if let Ok(rd) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) {
        let mut side: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| dir.join(e.file_name()))
            .collect();
        side.sort();
        out.extend(side);
    }
    if let Some(stem) = name.strip_suffix(".jsonl") {
        let artifacts = dir.join(stem);
        if std::fs::symlink_metadata(&artifacts).is_ok_and(|m| m.is_dir()) {
            out.push(artifacts);
        }
    }
    out
}

/// `arbor rm SESSION...`.
pub fn rm(
    sessions: &[String],
    force: bool,
    wait: Option<Duration>,
    loc: &Locator,
) -> Result<ExitCode> {
    // Resolve everything first: one bad argument removes nothing.
    let mut paths = Vec::new();
    for s in sessions {
        let p = loc.resolve_session(s)?;
        let meta = std::fs::symlink_metadata(&p).with_context(|| p.display().to_string())?;
        if !meta.is_file() && !meta.file_type().is_symlink() {
            bail!("{}: not a session file", p.display());
        }
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    for p in &paths {
        // No arbor writer may be appending while the file goes (pi itself takes no lock).
        let lock = arbor_store::lock::WriterLock::acquire(p, wait)?;
        drop(lock);
        let mut items = vec![p.clone()];
        items.extend(belongings(p));
        if force {
            for i in &items {
                let m = std::fs::symlink_metadata(i).with_context(|| i.display().to_string())?;
                if m.is_dir() {
                    std::fs::remove_dir_all(i)
                } else {
                    std::fs::remove_file(i)
                }
                .with_context(|| i.display().to_string())?;
            }
            say!("deleted {}{}", p.display(), extra(items.len()));
        } else {
            trash::delete_all(&items)
                .map_err(|e| anyhow::anyhow!("{}: cannot move to the trash: {e}", p.display()))?;
            say!("moved to the trash: {}{}", p.display(), extra(items.len()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn extra(items: usize) -> String {
    match items {
        1 => String::new(),
        2 => " (and 1 file beside it)".into(),
        n => format!(" (and {} files beside it)", n - 1),
    }
}

/// A session in the trash, with what was trashed with it.
struct Trashed {
    session: trash::TrashItem,
    others: Vec<trash::TrashItem>,
}

impl Trashed {
    fn path(&self) -> PathBuf {
        self.session.original_path()
    }
    fn id(&self) -> String {
        arbor_store::locate::id_of_file_name(&self.path()).unwrap_or_default()
    }
    fn items(self) -> Vec<trash::TrashItem> {
        let mut v = vec![self.session];
        v.extend(self.others);
        v
    }
}

/// Whether a trashed file is a session: a `.jsonl` from a sessions directory of the agent
/// directories, or named as pi and omp name sessions (`<time>_<id>.jsonl`).
fn is_session(item: &trash::TrashItem, roots: &[PathBuf]) -> bool {
    let name = item.name.to_string_lossy();
    if !name.ends_with(".jsonl") {
        return false;
    }
    roots.iter().any(|r| item.original_parent.starts_with(r))
        || name
            .split_once('_')
            .is_some_and(|(t, _)| t.len() >= 10 && t.as_bytes()[..4].iter().all(u8::is_ascii_digit))
}

/// The sessions in the trash, newest first, each with the files trashed with it (its
/// belongings, trashed within a minute of it).
fn trashed(loc: &Locator) -> Result<Vec<Trashed>> {
    let all = trash::os_limited::list().map_err(|e| anyhow::anyhow!("reading the trash: {e}"))?;
    let roots: Vec<PathBuf> = loc
        .agent_dirs()
        .iter()
        .map(|a| arbor_store::paths::sessions_root(a))
        .collect();
    let (sessions, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|i| is_session(i, &roots));
    let mut out: Vec<Trashed> = sessions
        .into_iter()
        .map(|s| Trashed {
            session: s,
            others: Vec::new(),
        })
        .collect();
    for item in rest {
        let p = item.original_path();
        let owner = out.iter_mut().find(|t| {
            let sp = t.path();
            let s = sp.to_string_lossy();
            let belongs = p.to_string_lossy().starts_with(&format!("{s}."))
                || s.strip_suffix(".jsonl")
                    .is_some_and(|stem| p == Path::new(stem));
            belongs && (item.time_deleted - t.session.time_deleted).abs() <= 60
        });
        if let Some(t) = owner {
            t.others.push(item);
        }
    }
    out.sort_by_key(|t| std::cmp::Reverse(t.session.time_deleted));
    Ok(out)
}

/// `arbor trash list|restore|empty`.
pub fn trash(cmd: TrashCommand, term: &Term, loc: &Locator) -> Result<ExitCode> {
    match cmd {
        TrashCommand::List { json } => {
            let list = trashed(loc)?;
            if json {
                let mut out = Vec::new();
                let mut arr = arbor_core::json::JsonArray::new(&mut out);
                for t in &list {
                    arr.object(|o| {
                        o.str("id", &t.id())
                            .str("path", &t.path().to_string_lossy())
                            .str(
                                "deletedAt",
                                &arbor_core::time::format_iso_ms(t.session.time_deleted * 1000),
                            )
                            .uint("items", 1 + t.others.len() as u64);
                    });
                }
                arr.finish();
                out.push(b'\n');
                std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
                return Ok(ExitCode::SUCCESS);
            }
            if list.is_empty() {
                say_err!("arbor: no sessions in the trash");
                return Ok(ExitCode::SUCCESS);
            }
            let mut out = Out::new(term);
            out.paint(
                Paint::Header,
                "DELETED           ID                                     PATH",
            )
            .nl();
            for t in &list {
                let when = arbor_core::time::format_iso_ms(t.session.time_deleted * 1000);
                out.paint(
                    Paint::Dim,
                    &format!("{:<17} ", when.get(..16).unwrap_or(&when).replace('T', " ")),
                )
                .paint(Paint::Id, &crate::term::pad(&t.id(), 38))
                .put(" ")
                .put(&super::index::home_short(&t.path().to_string_lossy()));
                if !t.others.is_empty() {
                    out.paint(Paint::Dim, &format!(" (+{})", t.others.len()));
                }
                out.nl();
            }
            out.print(term, false)?;
            Ok(ExitCode::SUCCESS)
        }
        TrashCommand::Restore { sessions } => {
            let mut list = trashed(loc)?;
            let mut chosen = Vec::new();
            for arg in &sessions {
                let lower = arg.to_lowercase();
                let hits: Vec<usize> = list
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| {
                        t.id().to_lowercase().starts_with(&lower)
                            || t.path() == Path::new(arg)
                            || std::path::absolute(arg).is_ok_and(|a| a == t.path())
                    })
                    .map(|(i, _)| i)
                    .collect();
                match hits.len() {
                    0 => bail!("no session {arg} in the trash (arbor trash list)"),
                    1 => chosen.push(hits[0]),
                    n => bail!(
                        "{arg} matches {n} sessions in the trash; give more of the id or the path"
                    ),
                }
            }
            chosen.sort_unstable();
            chosen.dedup();
            for i in chosen.into_iter().rev() {
                let t = list.remove(i);
                let path = t.path();
                if std::fs::symlink_metadata(&path).is_ok() {
                    bail!(
                        "{}: a file of that name exists; move it away first",
                        path.display()
                    );
                }
                trash::os_limited::restore_all(t.items())
                    .map_err(|e| anyhow::anyhow!("{}: cannot restore: {e}", path.display()))?;
                say!("restored {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        TrashCommand::Empty { force } => {
            let list = trashed(loc)?;
            if list.is_empty() {
                say_err!("arbor: no sessions in the trash");
                return Ok(ExitCode::SUCCESS);
            }
            if !force {
                for t in &list {
                    say!("would delete {}", t.path().display());
                }
                say_err!(
                    "arbor: {} sessions; run `arbor trash empty --force` to delete them for good",
                    list.len()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let n = list.len();
            let items: Vec<trash::TrashItem> = list.into_iter().flat_map(Trashed::items).collect();
            trash::os_limited::purge_all(items)
                .map_err(|e| anyhow::anyhow!("emptying the trash: {e}"))?;
            say!("deleted {n} sessions for good");
            Ok(ExitCode::SUCCESS)
        }
    }
}
