//! Command implementations.
pub(crate) mod agents;
mod check;
mod fork;
pub(crate) mod import;
pub mod index;
pub(crate) mod ls;
mod mcp;
mod read;
mod secrets;
mod serve;
pub mod stats;
pub mod sync;
pub(crate) mod trash;
mod write;

use crate::cli::{Cli, Command};
use anyhow::Result;
use arbor_core::Dialect;
use std::process::ExitCode;

/// Runs one command. A `SESSION` argument that matches several sessions is answered with
/// the candidates, one per line as `ls` shows them ([`ambiguous`]).
pub fn run(cli: Cli) -> Result<ExitCode> {
    // Where sessions are looked for, built once for the whole command.
    let loc = arbor_store::locate::Locator::new(cli.agent_dir.clone());
    let term = crate::term::Term::detect(cli.color);
    match run_command(cli, loc.clone(), &term) {
        Err(e) => match e.downcast_ref::<arbor_store::locate::LocateError>() {
            Some(arbor_store::locate::LocateError::Ambiguous {
                arg,
                count,
                matches,
            }) => {
                for line in ambiguous(
                    arg,
                    *count,
                    matches,
                    &loc,
                    term.width,
                    arbor_store::ids::now_ms() as f64,
                ) {
                    say_err!("{line}");
                }
                Ok(ExitCode::FAILURE)
            }
            _ => {
                // A SESSION that is another agent's: said, with the way to work on it in pi.
                let args: Vec<String> = std::env::args().skip(2).collect();
                let hint = agents::may_name_foreign(&e, &args)
                    .then(|| agents::foreign_hint(&args))
                    .flatten();
                if let Some(hint) = hint {
                    say_err!("arbor: {e:#}");
                    say_err!("{hint}");
                    return Ok(ExitCode::FAILURE);
                }
                Err(e)
            }
        },
        ok => ok,
    }
}

/// What arbor says of an id prefix that matches several sessions: a line saying so and how
/// to pick one, then each candidate on its own line as `ls` shows it (short id, age, title),
/// then how many more there are, each fitted to `width` columns. `now` is the time the ages are of (ms since the epoch).
fn ambiguous(
    arg: &str,
    count: usize,
    matches: &[std::path::PathBuf],
    loc: &arbor_store::locate::Locator,
    width: usize,
    now: f64,
) -> Vec<String> {
    let ids = ls::ShortIds::new(loc, matches.iter().map(|p| p.as_path()));
    let mut rows: Vec<(Option<f64>, String, String)> = matches
        .iter()
        .map(|p| {
            let (modified, title) = age_and_title(p);
            (modified, ids.of(p), title)
        })
        .collect();
    // Newest first, as `ls` lists them (a file that is not a session last).
    rows.sort_by(|a, b| b.0.unwrap_or(f64::MIN).total_cmp(&a.0.unwrap_or(f64::MIN)));
    let idw = rows
        .iter()
        .map(|r| crate::term::width(&r.1))
        .max()
        .unwrap_or(2);
    let mut out = vec![format!(
        "arbor: '{arg}' matches {count} sessions; give more of the id (one of these), or a path:"
    )];
    for (modified, id, title) in &rows {
        let age = modified.map_or_else(|| "-".to_string(), |m| index::age(now - m));
        let line = format!(
            "  {}  {}  {title}",
            crate::term::pad(id, idw),
            crate::term::pad(&age, 4)
        );
        out.push(crate::term::fit(&line, width.max(40)));
    }
    if count > rows.len() {
        out.push(format!("  and {} more", count - rows.len()));
    }
    out
}

/// A session's `modified` (ms since the epoch; `None` when it is not a session file) and title,
/// on one line, by the rules of its directory as `ls` has them: omp's (bounded reads, the
/// file's mtime; the title, else the first message), else pi's (the last activity; the
/// session's name, else its first message).
fn age_and_title(p: &std::path::Path) -> (Option<f64>, String) {
    let omp = p.parent().is_some_and(arbor_store::locate::is_omp_dir);
    let (modified, title) = if omp {
        let info = arbor_store::omp_info::omp_session_info(p);
        (
            info.as_ref().map(|i| i.modified_ms),
            info.map(|i| i.title.filter(|t| !t.is_empty()).unwrap_or(i.first_message)),
        )
    } else {
        let mtime = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as f64)
            .unwrap_or(0.0);
        let info = arbor_store::info::session_info_streaming(p, mtime)
            .ok()
            .flatten();
        (
            info.as_ref().map(|i| i.modified_ms),
            info.map(|i| {
                i.name
                    .unwrap_or_else(|| i.first_message.to_string_lossy().into_owned())
            }),
        )
    };
    let title = title.unwrap_or_else(|| "(not a session file)".to_string());
    (modified, arbor_view::one_line(&title, 200))
}

/// The session a reading command takes: `session` resolved with the command's `--dir` /
/// `--all` (the same scope `ls` lists), else the most recent session of that scope (the
/// current project by default, as pi's `-c`), named on stderr when it is a terminal (short
/// id, age and title, fitted to `width` columns).
/// The path comes back as the argument the command resolves (a path resolves to itself).
fn pick(
    session: Option<String>,
    scope: &crate::cli::ScopeOpts,
    loc: &arbor_store::locate::Locator,
    width: usize,
) -> Result<String> {
    let loc = scope.apply(loc);
    let path = match &session {
        Some(arg) => loc.resolve_session(arg)?,
        None => {
            let p = loc.most_recent()?;
            use std::io::IsTerminal;
            if std::io::stderr().is_terminal() {
                let ids = ls::ShortIds::new(&loc, std::iter::once(p.as_path()));
                let (modified, title) = age_and_title(&p);
                let now = arbor_store::ids::now_ms() as f64;
                let age = modified.map_or_else(|| "-".to_string(), |m| index::age(now - m));
                let line = format!(
                    "arbor: the most recent session: {}  {age}  {title}",
                    ids.of(&p)
                );
                say_err!("{}", crate::term::fit(&line, width.max(40)));
            }
            p
        }
    };
    Ok(match (path.to_str(), session) {
        (Some(p), _) => p.to_string(),
        // A path that is not UTF-8 cannot be handed on as a `String`: the argument is, and
        // it resolves the same way again.
        (None, Some(arg)) => arg,
        (None, None) => anyhow::bail!("{}: a session path that is not UTF-8", path.display()),
    })
}

/// [`pick`] for a command that only reads (`show`, `context`, `tree`, `export`): a `session`
/// that is no pi or omp session but another agent's (`agents::open_foreign`) is handed on as
/// given, for the command to read in memory.
fn pick_read(
    session: Option<String>,
    scope: &crate::cli::ScopeOpts,
    loc: &arbor_store::locate::Locator,
    width: usize,
) -> Result<String> {
    match pick(session.clone(), scope, loc, width) {
        Ok(p) => Ok(p),
        // An id prefix of several pi sessions stays ambiguous, whatever else it names.
        Err(e) if ambiguous_error(&e) => Err(e),
        Err(e) => match session {
            Some(arg) if agents::names_foreign(&arg) => Ok(arg),
            _ => Err(e),
        },
    }
}

/// Whether `e` is the resolver's "several sessions match".
pub(crate) fn ambiguous_error(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<arbor_store::locate::LocateError>(),
        Some(arbor_store::locate::LocateError::Ambiguous { .. })
    )
}

/// Runs one command with its locator.
fn run_command(
    cli: Cli,
    loc: arbor_store::locate::Locator,
    term: &crate::term::Term,
) -> Result<ExitCode> {
    let term = *term;
    let Some(command) = cli.command else {
        // `arbor` alone: the browser on a terminal, the help otherwise.
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
            return crate::browse::browse(false, None, None, &term, loc, None);
        }
        let mut cmd = <Cli as clap::CommandFactory>::command();
        cmd.print_help()?;
        return Ok(ExitCode::SUCCESS);
    };
    // JSON is for programs: no progress bar, even on a terminal's stderr.
    if let Command::Ls { json: true, .. }
    | Command::Index { json: true, .. }
    | Command::Search { json: true, .. }
    | Command::Stats { json: true, .. }
    | Command::Sync { json: true, .. } = &command
    {
        crate::progress::turn_off();
    }
    match command {
        Command::Browse {
            all,
            query,
            agent,
            catalog,
            measure,
            measure_tree,
        } => match measure {
            Some(q) => crate::browse::measure(
                &q,
                measure_tree.as_deref(),
                loc,
                catalog.catalog.as_deref(),
                crate::STARTED
                    .get()
                    .copied()
                    .unwrap_or_else(std::time::Instant::now),
            ),
            None => crate::browse::browse(
                all,
                query.as_deref(),
                agent,
                &term,
                loc,
                catalog.catalog.as_deref(),
            ),
        },
        Command::Context {
            session,
            scope,
            leaf,
            llm,
            lenient,
            omp_version,
        } => read::context(
            &pick_read(session, &scope, &loc, term.width)?,
            leaf.as_deref(),
            llm,
            lenient,
            omp_version,
            &loc,
        ),
        Command::Tree {
            session,
            scope,
            full,
            json,
            no_pager,
        } => read::tree(
            &pick_read(session, &scope, &loc, term.width)?,
            full,
            json,
            !no_pager,
            &term,
            &loc,
        ),
        Command::Show {
            session,
            scope,
            leaf,
            opts,
            lenient,
            omp_version,
        } => read::show(
            &pick_read(session, &scope, &loc, term.width)?,
            leaf.as_deref(),
            &opts,
            lenient,
            omp_version,
            &term,
            &loc,
        ),
        Command::Ls {
            scope,
            long,
            limit,
            since,
            tool,
            grep,
            sort,
            reverse,
            json,
            all_text,
            omp,
            pi,
            catalog,
        } => {
            let rules = match (omp, pi) {
                (true, _) => Some(Dialect::Omp),
                (_, true) => Some(Dialect::Pi),
                _ => None,
            };
            ls::ls(
                &ls::LsOpts {
                    scope: &scope,
                    long,
                    limit,
                    filter: ls::Filter {
                        since_ms: since.map(|s| s.at(arbor_store::ids::now_ms() as f64)),
                        tool,
                        grep: grep.as_deref(),
                        sort,
                        reverse,
                    },
                    json,
                    all_text,
                    rules,
                },
                &term,
                &loc,
                catalog.catalog.as_deref(),
            )
        }
        Command::Index {
            rebuild,
            thinking,
            tools,
            json,
            watch,
            catalog,
        } => index::index(
            rebuild,
            arbor_index::IndexKinds { thinking, tools },
            json,
            watch,
            &loc,
            catalog.catalog.as_deref(),
        ),
        Command::Search {
            query,
            scope,
            role,
            since,
            thinking,
            tools,
            limit,
            rank_all,
            count_all,
            long,
            json,
            agent,
            catalog,
        } => index::search(
            &index::SearchOpts {
                agent,
                query: &query,
                scope: &scope,
                roles: &role,
                since,
                json,
                limit,
                kinds: arbor_index::IndexKinds { thinking, tools },
                rank_all,
                count_all,
                long,
            },
            &term,
            &loc,
            catalog.catalog.as_deref(),
        ),
        Command::History {
            query,
            limit,
            add,
            cwd,
            session,
            json,
        } => index::history(
            query.as_deref(),
            json,
            limit,
            add.as_deref(),
            cwd.as_deref(),
            session.as_deref(),
            &loc,
        ),
        Command::New { dir, cwd, omp, id } => write::new(dir.as_deref(), cwd, omp, id, &loc),
        Command::Append {
            session,
            scope,
            parent,
            root,
            body,
            raw,
            write,
        } => write::append(
            &session,
            parent.as_deref(),
            root,
            &body,
            raw,
            &write,
            &scope.apply(&loc),
        ),
        Command::Migrate {
            sessions,
            scope,
            dry_run,
            write,
        } => write::migrate(&sessions, dry_run, &write, &scope.apply(&loc)),
        Command::Name {
            session,
            scope,
            name,
            write,
        } => write::name(&session, &name, &write, &scope.apply(&loc)),
        Command::Check {
            sessions,
            scope,
            verbose,
            repair,
            json,
            no_blobs,
            wait,
        } => check::check(
            &check::CheckArgs {
                sessions: &sessions,
                scope: &scope,
                verbose,
                repair,
                json,
                no_blobs,
                wait: wait.wait,
            },
            &term,
            &loc,
        ),
        Command::Gc {
            blobs: _,
            yes,
            min_age,
            sessions_dir,
            json,
        } => check::gc(yes, min_age, &sessions_dir, json, &loc),
        Command::Fork {
            session,
            scope,
            at,
            cwd,
            json,
            resume,
            redact,
            wait,
        } => fork::fork(
            &pick(session, &scope, &loc, term.width)?,
            &fork::ForkOpts {
                at: at.as_deref(),
                cwd: cwd.as_deref(),
                json,
                resume,
                redact,
                wait: wait.wait,
            },
            &loc,
        ),
        Command::Rm {
            sessions,
            scope,
            force,
            wait,
        } => trash::rm(&sessions, force, wait.wait, &scope.apply(&loc)),
        Command::Trash(t) => trash::trash(t, &term, &loc),
        Command::Export {
            session,
            scope,
            leaf,
            tree,
            format,
            output,
            no_redact,
            lenient,
            force,
        } => read::export(
            &pick_read(session, &scope, &loc, term.width)?,
            &read::ExportArgs {
                leaf: leaf.as_deref(),
                tree,
                format,
                output: output
                    .as_deref()
                    .map(|path| arbor_view::Target { path, force }),
                redact: !no_redact,
                lenient,
            },
            &loc,
        ),
        Command::Stats {
            sessions,
            scope,
            by,
            since,
            json,
            no_catalog,
            agent,
            catalog,
        } => stats::stats(
            &stats::StatsOpts {
                sessions: &sessions,
                scope: &scope,
                agent,
                by,
                since_ms: since.map(|s| s.at(arbor_store::ids::now_ms() as f64)),
                json,
                no_catalog,
            },
            &term,
            &loc,
            catalog.catalog.as_deref(),
        ),
        Command::Sync {
            action,
            sessions,
            all: _,
            to,
            from,
            map_cwd,
            fork_on_conflict,
            watch,
            json,
        } => {
            if watch && action != sync::Action::Push {
                return Err(crate::report::Usage("--watch goes with push".into()).into());
            }
            sync::sync(
                &sync::SyncOpts {
                    action,
                    url: to.as_deref().or(from.as_deref()),
                    sessions: &sessions,
                    map_cwd: &map_cwd,
                    fork_on_conflict,
                    watch,
                    json,
                    agent_dir: loc.agent_override(),
                },
                &term,
            )
        }
        Command::Secrets {
            sessions,
            scope,
            json,
        } => secrets::secrets(&sessions, &scope, json, &term, &loc),
        Command::Import {
            agent,
            sessions,
            all,
            project,
            omp,
            from,
            json,
        } => import::import(
            agent,
            &sessions,
            all,
            project.as_deref(),
            omp,
            from.as_deref(),
            json,
            &loc,
        ),
        Command::Completions { shell } => {
            let out = crate::complete::script(shell);
            std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => man(dir.as_deref()),
        Command::Serve {
            scope,
            addr,
            open,
            allow_remote,
            token_file,
            from,
            allow_writes,
            no_redact,
            no_watch,
            catalog,
        } => serve::serve(
            &serve::ServeOpts {
                scope,
                addr,
                open,
                allow_remote,
                token_file,
                from,
                allow_writes,
                no_redact,
                no_watch,
                catalog: catalog.catalog,
            },
            &loc,
        ),
        Command::Mcp {
            scope,
            http,
            allow_remote,
            token_file,
            allow_writes,
            no_redact,
            no_watch,
            catalog,
        } => mcp::mcp(
            &mcp::McpOpts {
                scope,
                http,
                allow_remote,
                token_file,
                allow_writes,
                no_redact,
                no_watch,
                catalog: catalog.catalog,
            },
            &loc,
        ),
    }
}

/// The session files a command taking `SESSION...` and the scope flags looks at: the named
/// sessions, and the sessions of `--dir` / `--all`; with neither, the current project's.
/// `--all` walks every sessions root (omp's nested sub-agent sessions too) and names the
/// directories it could not read in `unreadable`: a command that promises to have looked at
/// every session reports them. An empty current project gets `ls`'s hint on stderr.
pub(crate) fn scoped_files(
    loc: &arbor_store::locate::Locator,
    sessions: &[String],
    scope: &crate::cli::ScopeOpts,
    command: &str,
) -> Result<Scoped> {
    use arbor_store::locate::Scope;
    let mut out = Scoped {
        named: sessions
            .iter()
            .map(|s| (s.clone(), loc.resolve_session(s)))
            .collect(),
        ..Scoped::default()
    };
    if !sessions.is_empty() && !scope.named() {
        return Ok(out);
    }
    let mut found = match scope.scope() {
        Scope::All => {
            let (files, unreadable) = loc.all_session_files_reporting();
            out.unreadable = unreadable;
            files
        }
        s => {
            let mut files = Vec::new();
            for d in loc.project_dirs(s)? {
                files.extend(arbor_store::discover::session_files(&d));
            }
            files
        }
    };
    found.sort();
    found.retain(|f| {
        !out.named
            .iter()
            .any(|(_, n)| n.as_ref().is_ok_and(|n| n == f))
    });
    if found.is_empty() && sessions.is_empty() && out.unreadable.is_empty() {
        ls::no_sessions(scope.scope(), loc, command);
    }
    out.found = found;
    Ok(out)
}

/// What [`scoped_files`] found.
#[derive(Default)]
pub(crate) struct Scoped {
    /// Each SESSION argument, in order, with its file or why it names none.
    pub named: Vec<(
        String,
        Result<std::path::PathBuf, arbor_store::locate::LocateError>,
    )>,
    /// The scope's session files that no argument named, in path order.
    pub found: Vec<std::path::PathBuf>,
    /// Directories below the sessions roots that could not be read (with `--all`).
    pub unreadable: Vec<(std::path::PathBuf, std::io::Error)>,
}

impl Scoped {
    /// Every file, named ones first; the first argument that names no session is the error.
    pub fn files(self) -> Result<Vec<std::path::PathBuf>> {
        let mut out = Vec::with_capacity(self.named.len() + self.found.len());
        for (_, f) in self.named {
            out.push(f?);
        }
        out.extend(self.found);
        Ok(out)
    }
}

/// Fails with the one wording arbor uses for an id that is not in a session.
pub fn require_entry(doc: &arbor_core::SessionDoc, path: &std::path::Path, id: &str) -> Result<()> {
    if doc.index().get(id).is_none() {
        anyhow::bail!("{}: no entry with id {id}", path.display());
    }
    Ok(())
}

/// `arbor man`: the roff page of arbor (stdout), or one page per command written to `dir`.
fn man(dir: Option<&std::path::Path>) -> Result<ExitCode> {
    let cmd = <Cli as clap::CommandFactory>::command();
    match dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
        }
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
            let mut pages = vec![("arbor".to_string(), cmd.clone())];
            for sub in cmd.get_subcommands() {
                let name = format!("arbor-{}", sub.get_name());
                pages.push((name.clone(), sub.clone().name(name)));
            }
            for (name, page) in pages {
                let path = d.join(format!("{name}.1"));
                let mut out = Vec::new();
                clap_mangen::Man::new(page).render(&mut out)?;
                // Man pages are public (mode 0644), but like every file arbor creates they are
                // written beside and renamed over the name: a symlink planted at `arbor.1` is
                // replaced, never written through.
                let write = || -> std::io::Result<()> {
                    let mut f = arbor_store::NewFile::create_with_mode(&path, 0o644)?;
                    std::io::Write::write_all(&mut f, &out)?;
                    f.commit()
                };
                write().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                say!("{}", path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Why the session file `f` could not be read, without its path (a warning says the path
/// once: `arbor: PATH: not counted: WHY`); empty for a file pi and omp leave that is known not
/// to be a session ([`arbor_store::discover::known_not_session`]: an empty file), which
/// `stats` and `secrets` pass over without a word.
pub(crate) fn why_not(f: &std::path::Path, e: &arbor_store::StoreError) -> String {
    arbor_store::discover::why_not(f, e)
}
