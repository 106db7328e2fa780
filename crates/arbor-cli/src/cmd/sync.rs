//! `arbor sync push|pull|status`: sessions between this machine's agent directories and a
//! shared store (see `arbor_sync`).
use crate::term::{Out, Paint, Term};
use anyhow::{Context, Result};
use arbor_store::backend::files::FileStore;
use arbor_store::backend::SessionStore;
use arbor_sync::{Local, Row, State};
use std::process::ExitCode;
use std::sync::Arc;

/// What `arbor sync` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    /// Send what the shared store lacks.
    Push,
    /// Write here what only the shared store has.
    Pull,
    /// Compare, change nothing.
    Status,
}

/// What `arbor sync` was asked for.
pub struct SyncOpts<'a> {
    /// push, pull or status.
    pub action: Action,
    /// `--to` / `--from` / `$ARBOR_SYNC_URL`.
    pub url: Option<&'a str>,
    /// Sessions named (ids, id prefixes, paths); empty: all.
    pub sessions: &'a [String],
    /// `--map-cwd FROM=TO`.
    pub map_cwd: &'a [String],
    /// `--fork-on-conflict`.
    pub fork_on_conflict: bool,
    /// `--watch`.
    pub watch: bool,
    /// `--json`.
    pub json: bool,
    /// `--agent-dir` (`None`: `$PI_CODING_AGENT_DIR` / the defaults for pi and omp).
    pub agent_dir: Option<&'a std::path::Path>,
}

/// The shared store a URL names: `sqlite:PATH` (created by `push` when missing; `pull` and
/// `status` need it to exist) or `postgres://…`.
fn open_store(url: &str, action: Action) -> Result<Arc<dyn SessionStore>> {
    let access = match action {
        Action::Push => arbor_db::Access::Create,
        Action::Pull | Action::Status => arbor_db::Access::Existing,
    };
    match arbor_db::open_url(url, access)? {
        Some(store) => Ok(store),
        None => Err(crate::report::Usage(format!(
            "{}: a shared store is sqlite:PATH or postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE",
            redact_url(url)
        ))
        .into()),
    }
}

use arbor_db::redact_url;

/// This machine's name as `arbor sync push` records it: `$ARBOR_MACHINE` when set (a
/// container's host name is often random), else `/etc/hostname`, else `localhost`.
fn hostname() -> String {
    if let Some(m) = std::env::var("ARBOR_MACHINE")
        .ok()
        .filter(|m| !m.trim().is_empty())
    {
        return m.trim().to_string();
    }
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// This machine's side: `agent_dir` (`--agent-dir`) is the one directory for pi and omp
/// sessions alike, as for every other command (see `Locator`); without it, pi's and omp's
/// directories from the environment and the defaults.
fn local_for(url: &str, map_cwd: &[String], agent_dir: Option<&std::path::Path>) -> Result<Local> {
    let mut map = Vec::new();
    for m in map_cwd {
        let Some((from, to)) = m.split_once('=') else {
            return Err(crate::report::Usage(format!("--map-cwd {m}: FROM=TO")).into());
        };
        map.push((
            from.trim_end_matches('/').to_string(),
            to.trim_end_matches('/').to_string(),
        ));
    }
    let dir = |d| agent_dir.map_or_else(|| arbor_store::paths::agent_dir(d), |a| a.to_path_buf());
    let pi_dir = dir(arbor_core::doc::Dialect::Pi);
    let key = arbor_store::blobs::sha256_hex(redact_url(url).as_bytes());
    Ok(Local {
        pi: FileStore::new(&pi_dir),
        omp: FileStore::new(&dir(arbor_core::doc::Dialect::Omp)),
        map_cwd: map,
        cursor_file: pi_dir
            .join("arbor")
            .join(format!("sync-{}.tsv", &key[..16])),
        machine: hostname(),
        user: arbor_store::paths::user_name(),
    })
}

fn lines_n(n: u64) -> String {
    arbor_view::count(n, "line", "lines")
}

fn state_text(s: &State) -> String {
    match s {
        State::InSync => "in sync".into(),
        State::LocalOnly => "here only".into(),
        State::RemoteOnly => "shared only".into(),
        State::LocalAhead(n) => format!("here +{}", lines_n(*n)),
        State::RemoteAhead(n) => format!("shared +{}", lines_n(*n)),
        State::Diverged { here, shared } => {
            format!(
                "branched: here +{}, shared +{}",
                lines_n(*here),
                lines_n(*shared)
            )
        }
        State::Resolved => "resolved by a fork".into(),
        State::Unreadable => "NOT READ".into(),
        State::Conflict {
            local,
            remote,
            common,
        } => {
            format!(
                "CONFLICT: {} in common, then {} here and {} shared",
                lines_n(*common),
                local - common,
                remote - common
            )
        }
    }
}

fn print(rows: &[Row], action: Action, json: bool, term: &Term) -> Result<bool> {
    let conflicts = rows.iter().any(|r| r.unresolved);
    if json {
        let mut buf = Vec::new();
        let mut arr = arbor_core::json::JsonArray::new(&mut buf);
        for r in rows {
            let state = match &r.state {
                State::InSync => "inSync",
                State::LocalOnly => "localOnly",
                State::RemoteOnly => "remoteOnly",
                State::LocalAhead(_) => "localAhead",
                State::RemoteAhead(_) => "remoteAhead",
                State::Diverged { .. } => "diverged",
                State::Resolved => "resolved",
                State::Unreadable => "unreadable",
                State::Conflict { .. } => "conflict",
            };
            arr.object(|o| {
                o.opt_str("id", Some(r.id.as_str()).filter(|i| !i.is_empty()))
                    .opt_str(
                        "path",
                        r.path.as_ref().map(|p| p.to_string_lossy()).as_deref(),
                    )
                    .str("state", state)
                    .uint("lines", r.moved)
                    .uint("bytes", r.bytes)
                    .uint("blobs", r.blobs)
                    .opt_str("note", r.note.as_deref());
                if !r.missing_blobs.is_empty() {
                    o.array("missingBlobs", |a| {
                        for h in &r.missing_blobs {
                            a.str(h);
                        }
                    });
                }
            });
        }
        arr.finish();
        buf.push(b'\n');
        std::io::Write::write_all(&mut crate::report::stdout(), &buf)?;
        return Ok(conflicts);
    }
    let mut out = Out::new(term);
    let (mut lines, mut bytes) = (0u64, 0u64);
    for r in rows {
        if action != Action::Status && r.state == State::InSync && r.note.is_none() {
            continue;
        }
        let verb = match (action, &r.state) {
            (Action::Push, State::LocalOnly | State::LocalAhead(_) | State::Diverged { .. })
                if r.moved > 0 =>
            {
                format!("sent {}", lines_n(r.moved))
            }
            (Action::Pull, State::RemoteOnly | State::RemoteAhead(_)) if r.moved > 0 => {
                format!("wrote {}", lines_n(r.moved))
            }
            (Action::Pull, State::Diverged { .. }) if r.moved > 0 => {
                format!("merged {}", lines_n(r.moved))
            }
            _ => state_text(&r.state),
        };
        lines += r.moved;
        bytes += r.bytes;
        let paint = if matches!(r.state, State::Conflict { .. } | State::Unreadable) {
            Paint::Error
        } else {
            Paint::Id
        };
        let id = if r.id.is_empty() { "?" } else { r.id.as_str() };
        out.paint(paint, &format!("{id:<38}"))
            .put(&format!(" {verb}"));
        if r.blobs > 0 {
            out.put(&format!(
                " and {}",
                arbor_view::count(r.blobs, "blob", "blobs")
            ));
        }
        if let Some(p) = &r.path {
            out.put("  ").paint(Paint::Dim, &p.display().to_string());
        }
        if let Some(n) = &r.note {
            out.put("  ").paint(Paint::Warn, &format!("({n})"));
        }
        for h in &r.missing_blobs {
            out.put("  ").paint(
                Paint::Warn,
                &format!(
                    "(blob {h} is named but not held by the {} side: moved without it)",
                    if action == Action::Push {
                        "sending"
                    } else {
                        "shared"
                    }
                ),
            );
        }
        out.nl();
    }
    let in_sync = rows.iter().filter(|r| r.state == State::InSync).count();
    out.paint(
        Paint::Dim,
        &format!(
            "{}, {in_sync} in sync; {} ({}) {}",
            arbor_view::count(rows.len() as u64, "session", "sessions"),
            lines_n(lines),
            crate::cmd::index::human_size(bytes),
            match action {
                Action::Push => "sent",
                Action::Pull => "written",
                Action::Status => "moved",
            }
        ),
    )
    .nl();
    out.print(term, false)?;
    Ok(conflicts)
}

/// `arbor sync ACTION`. Exit status 1 when a conflict is left, a row was refused, or a local
/// session file or directory could not be read (each named).
pub fn sync(o: &SyncOpts<'_>, term: &Term) -> Result<ExitCode> {
    let env = std::env::var("ARBOR_SYNC_URL").ok();
    let Some(url) = o.url.or(env.as_deref()) else {
        return Err(crate::report::Usage(
            "name the shared store: --to/--from URL or $ARBOR_SYNC_URL (sqlite:PATH)".into(),
        )
        .into());
    };
    let store = open_store(url, o.action)?;
    let local = local_for(url, o.map_cwd, o.agent_dir)?;
    let what = redact_url(url);
    // What was last reported: --watch prints again only when a sync moved something or its
    // sessions with a note or left undone differ from the last report.
    let mut last: Option<Vec<String>> = None;
    let mut run = || -> Result<bool> {
        // A bar on a terminal's stderr when many bytes go through (made at the first
        // report, which knows the total; cleared before the report is printed).
        let mut bar: Option<crate::progress::Bar> = None;
        let mut tell = |verb: &str, p: arbor_sync::SyncProgress| {
            let b = bar.get_or_insert_with(|| {
                crate::progress::Bar::bytes(verb, p.bytes_total, 0, u64::MAX)
            });
            b.set(p.bytes_done);
            b.message(format!("{}/{} sessions", p.sessions_done, p.sessions_total));
        };
        let rows = match o.action {
            Action::Push => arbor_sync::push_with(store.as_ref(), &local, o.sessions, &mut |p| {
                tell("pushing", p)
            }),
            Action::Pull => arbor_sync::pull_with(
                store.as_ref(),
                &local,
                o.sessions,
                o.fork_on_conflict,
                &mut |p| tell("pulling", p),
            ),
            Action::Status => arbor_sync::status(store.as_ref(), &local, o.sessions),
        };
        if let Some(mut b) = bar {
            b.finish();
        }
        let rows = rows.with_context(|| what.clone())?;
        let report: Vec<String> = rows
            .iter()
            .filter(|r| r.unresolved || r.note.is_some())
            .map(|r| format!("{}\t{:?}\t{:?}\t{}", r.id, r.state, r.note, r.unresolved))
            .collect();
        let moved = rows.iter().any(|r| r.moved > 0 || r.blobs > 0);
        if !moved && last.as_ref() == Some(&report) {
            return Ok(rows.iter().any(|r| r.unresolved));
        }
        last = Some(report);
        print(&rows, o.action, o.json, term)
    };
    let conflicts = run()?;
    if !o.watch {
        return Ok(if conflicts {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    // --watch: every change under the sessions directories (inotify, through `notify`) runs
    // the push again, at most a tenth of a second after it.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        if e.is_ok() {
            let _ = tx.send(());
        }
    })?;
    for store in [&local.pi, &local.omp] {
        let root = arbor_store::paths::sessions_root(store.agent_dir());
        if root.is_dir() {
            notify::Watcher::watch(&mut watcher, &root, notify::RecursiveMode::Recursive)
                .with_context(|| root.display().to_string())?;
        }
    }
    say_err!("arbor: watching for appends; Ctrl-C stops");
    while rx.recv().is_ok() {
        std::thread::sleep(std::time::Duration::from_millis(100));
        while rx.try_recv().is_ok() {}
        run()?;
    }
    Ok(ExitCode::SUCCESS)
}
