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

/// The session and what belongs to it ([`arbor_store::trash::with_belongings`]).
pub(crate) use arbor_store::trash::with_belongings;

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
        // A volume trash that must not be used refuses before anything moves.
        if !force {
            volume::check_before_trashing(&p)
                .map_err(|e| anyhow::anyhow!("{}: cannot move to the trash: {e}", p.display()))?;
        }
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    for p in &paths {
        // No arbor writer may be appending while the file goes (pi itself takes no lock).
        let lock = arbor_store::lock::WriterLock::acquire(p, wait)?;
        drop(lock);
        let (items, note) = with_belongings(p);
        if let Some(note) = note {
            say_err!("arbor: {note}");
        }
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
            to_trash(&items)
                .map_err(|e| anyhow::anyhow!("{}: cannot move to the trash: {e}", p.display()))?;
            say!("moved to the trash: {}{}", p.display(), extra(items.len()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Moves `items` (a session and its belongings) to the freedesktop trash
/// ([`arbor_store::trash::to_trash`]).
pub(crate) fn to_trash(items: &[PathBuf]) -> Result<()> {
    arbor_store::trash::to_trash(items).map_err(anyhow::Error::msg)
}

use arbor_store::trash as volume;

fn extra(items: usize) -> String {
    match items {
        1 => String::new(),
        n => format!(
            " (and {} beside it)",
            arbor_view::count(n as u64 - 1, "file", "files")
        ),
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
    /// The session's id as `ls` showed it: the id its name carries, else (a file renamed by
    /// hand) its header's, read from the trashed file.
    fn id(&self) -> String {
        let path = self.path();
        if !arbor_store::locate::name_carries_id(&path) {
            if let Some(id) =
                trashed_file(&self.session).and_then(|f| arbor_store::discover::header_id(&f))
            {
                return id;
            }
        }
        arbor_store::locate::id_of_file_name(&path).unwrap_or_default()
    }
    fn all(&self) -> impl Iterator<Item = &trash::TrashItem> {
        std::iter::once(&self.session).chain(&self.others)
    }
    fn items(self) -> Vec<trash::TrashItem> {
        let mut v = vec![self.session];
        v.extend(self.others);
        v
    }
}

/// Where a trashed item's file is: `<trash>/files/<name>` beside its `<trash>/info/` entry.
fn trashed_file(item: &trash::TrashItem) -> Option<PathBuf> {
    let folder = Path::new(&item.id).parent()?.parent()?;
    Some(folder.join("files").join(&item.name))
}

/// Whether a trashed file is a session: a `.jsonl` from a sessions directory of the agent
/// directories, named as pi and omp name sessions (`<time>_<id>.jsonl`), or one whose first
/// line is a session header (`arbor rm --dir DIR` takes sessions outside the agent
/// directories, renamed ones too).
fn is_session(item: &trash::TrashItem, roots: &[PathBuf]) -> bool {
    let name = item.name.to_string_lossy();
    if !name.ends_with(".jsonl") {
        return false;
    }
    roots.iter().any(|r| item.original_parent.starts_with(r))
        || name
            .split_once('_')
            .is_some_and(|(t, _)| t.len() >= 10 && t.as_bytes()[..4].iter().all(u8::is_ascii_digit))
        || trashed_file(item).is_some_and(|f| arbor_store::discover::has_valid_header(&f))
}

/// The sessions in the trash, newest first, each with the files trashed with it (its
/// belongings, trashed within a minute of it). With `any_jsonl`, every trashed `.jsonl` counts
/// as a session (a restore by path: `arbor rm` takes a session file anywhere).
fn trashed(loc: &Locator, any_jsonl: bool) -> Result<Vec<Trashed>> {
    let mut all =
        trash::os_limited::list().map_err(|e| anyhow::anyhow!("reading the trash: {e}"))?;
    // A volume trash that another user could have made or can write is not read: what it
    // holds would be "restored" wherever its .trashinfo says.
    let mut refused: Vec<PathBuf> = Vec::new();
    all.retain(|i| {
        let Some(folder) = Path::new(&i.id).parent().and_then(Path::parent) else {
            return false;
        };
        match volume::check_trash_folder(folder) {
            Ok(()) => true,
            Err(why) => {
                if !refused.iter().any(|r| r == folder) {
                    say_err!("arbor: warning: not reading {}: {why}", folder.display());
                    refused.push(folder.to_path_buf());
                }
                false
            }
        }
    });
    let roots: Vec<PathBuf> = loc
        .agent_dirs()
        .iter()
        .map(|a| arbor_store::paths::sessions_root(a))
        .collect();
    let (sessions, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|i| {
        is_session(i, &roots) || (any_jsonl && i.name.to_string_lossy().ends_with(".jsonl"))
    });
    let mut out: Vec<Trashed> = sessions
        .into_iter()
        .map(|s| Trashed {
            session: s,
            others: Vec::new(),
        })
        .collect();
    // Each belonging goes with the copy of its session trashed closest in time to it (within
    // a minute), and never two items of one name with one session: a session trashed twice
    // is two groups, each restorable.
    for item in rest {
        let p = item.original_path();
        let owner = out
            .iter_mut()
            .filter(|t| {
                let sp = t.path();
                p.parent() == sp.parent()
                    && arbor_store::belongings::is_belonging_name(
                        &t.session.name.to_string_lossy(),
                        &item.name.to_string_lossy(),
                    )
                    && (item.time_deleted - t.session.time_deleted).abs() <= 60
                    && !t.others.iter().any(|o| o.original_path() == p)
            })
            .min_by_key(|t| (item.time_deleted - t.session.time_deleted).abs());
        if let Some(t) = owner {
            t.others.push(item);
        }
    }
    out.sort_by_key(|t| std::cmp::Reverse(t.session.time_deleted));
    Ok(out)
}

/// Where the trash keeps the file of `item` (the freedesktop layout: `info/NAME.trashinfo`
/// describes `files/NAME`).
fn file_in_trash(item: &trash::TrashItem) -> Option<PathBuf> {
    let info = Path::new(&item.id);
    let name = info.file_name()?.to_str()?.strip_suffix(".trashinfo")?;
    Some(info.parent()?.parent()?.join("files").join(name))
}

/// Puts a session and everything trashed with it back, all or nothing.
///
/// The `trash` crate's `restore_all` moves item after item and stops at the first name that
/// is taken, leaving a session back without its sidecars (or the reverse) and the command
/// failed; so arbor restores itself: first a placeholder is created at every original name
/// (`O_EXCL`, a directory for a directory: a name taken since is found before anything
/// moves), then each item is renamed over its placeholder, and only when all are back are the
/// `.trashinfo` files removed. Any failure removes the placeholders and moves back what was
/// moved: the trash is as it was.
fn restore_whole(t: &Trashed) -> std::io::Result<()> {
    let items: Vec<&trash::TrashItem> = t.all().collect();
    let mut plan = Vec::new();
    for item in &items {
        let from = file_in_trash(item).ok_or_else(|| {
            std::io::Error::other(format!(
                "{}: not a trash info file",
                item.id.to_string_lossy()
            ))
        })?;
        let meta = std::fs::symlink_metadata(&from)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", from.display())))?;
        plan.push((from, item.original_path(), meta.is_dir()));
    }
    let mut placed: Vec<&Path> = Vec::new();
    let undo_placeholders = |placed: &[&Path]| {
        for p in placed {
            let _ = std::fs::remove_dir(p).or_else(|_| std::fs::remove_file(p));
        }
    };
    for (_, to, dir) in &plan {
        if let Some(parent) = to.parent() {
            if !parent.exists() {
                arbor_store::create_dir_private(parent).map_err(|e| {
                    std::io::Error::new(e.kind(), format!("{}: {e}", parent.display()))
                })?;
            }
        }
        let made = if *dir {
            std::fs::create_dir(to).map(|_| ())
        } else {
            arbor_store::create_new_private(to).map(|_| ())
        };
        if let Err(e) = made {
            undo_placeholders(&placed);
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                "exists; move it away first".to_string()
            } else {
                e.to_string()
            };
            return Err(std::io::Error::new(
                e.kind(),
                format!("{}: {why}", to.display()),
            ));
        }
        placed.push(to);
    }
    let mut moved: Vec<(&Path, &Path)> = Vec::new();
    for (from, to, _) in &plan {
        if let Err(e) = std::fs::rename(from, to) {
            // What cannot be moved back stays where it is (never removed as a placeholder).
            let stuck: Vec<&Path> = moved
                .iter()
                .rev()
                .filter(|(f, t)| std::fs::rename(t, f).is_err())
                .map(|(_, t)| *t)
                .collect();
            let placeholders: Vec<&Path> = placed
                .iter()
                .copied()
                .filter(|p| !stuck.contains(p))
                .collect();
            undo_placeholders(&placeholders);
            return Err(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", from.display()),
            ));
        }
        moved.push((from, to));
    }
    for item in &items {
        let _ = std::fs::remove_file(&item.id);
    }
    Ok(())
}

/// `arbor trash list|restore|empty`.
pub fn trash(cmd: TrashCommand, term: &Term, loc: &Locator) -> Result<ExitCode> {
    match cmd {
        TrashCommand::List { json } => {
            let list = trashed(loc, false)?;
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
            let by_path = sessions
                .iter()
                .any(|a| a.contains('/') || a.ends_with(".jsonl"));
            let mut list = trashed(loc, by_path)?;
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
                // Copies of one session trashed more than once (rm, the file came back, rm
                // again) share their path: the newest is restored, the older stay in the
                // trash, restorable once it is out of the way.
                let same_path = hits.iter().all(|&i| list[i].path() == list[hits[0]].path());
                match hits.len() {
                    0 => bail!("no session {arg} in the trash (arbor trash list)"),
                    1 => chosen.push(hits[0]),
                    n if same_path => {
                        say_err!(
                            "arbor: {} is in the trash {n} times; restoring the one deleted last \
                             (the others stay in the trash)",
                            list[hits[0]].path().display()
                        );
                        chosen.push(hits[0]);
                    }
                    n => bail!(
                        "{arg} matches {n} sessions in the trash; give more of the id or the path"
                    ),
                }
            }
            chosen.sort_unstable();
            chosen.dedup();
            let picked: Vec<Trashed> = chosen.into_iter().rev().map(|i| list.remove(i)).collect();
            // All or nothing: every name any of them goes back to must be free.
            let mut taken = Vec::new();
            for t in &picked {
                for item in t.all() {
                    let p = item.original_path();
                    if std::fs::symlink_metadata(&p).is_ok() {
                        taken.push(p.display().to_string());
                    }
                }
            }
            if !taken.is_empty() {
                bail!(
                    "nothing restored: {} exist{}; move {} away first",
                    taken.join(", "),
                    if taken.len() == 1 { "s" } else { "" },
                    if taken.len() == 1 { "it" } else { "them" }
                );
            }
            for t in picked {
                let path = t.path();
                restore_whole(&t)
                    .map_err(|e| anyhow::anyhow!("{}: nothing restored: {e}", path.display()))?;
                say!("restored {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        TrashCommand::Empty { force } => {
            let list = trashed(loc, false)?;
            if list.is_empty() {
                say_err!("arbor: no sessions in the trash");
                return Ok(ExitCode::SUCCESS);
            }
            if !force {
                for t in &list {
                    say!("would delete {}", t.path().display());
                }
                say_err!(
                    "arbor: {}; run `arbor trash empty --force` to delete {} for good",
                    arbor_view::count(list.len() as u64, "session", "sessions"),
                    if list.len() == 1 { "it" } else { "them" }
                );
                return Ok(ExitCode::SUCCESS);
            }
            let n = list.len();
            let items: Vec<trash::TrashItem> = list.into_iter().flat_map(Trashed::items).collect();
            trash::os_limited::purge_all(items)
                .map_err(|e| anyhow::anyhow!("emptying the trash: {e}"))?;
            say!(
                "deleted {} for good",
                arbor_view::count(n as u64, "session", "sessions")
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
