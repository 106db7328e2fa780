//! Command implementations.
mod check;
mod fork;
pub mod index;
mod ls;
mod read;
mod secrets;
pub mod stats;
pub mod sync;
pub(crate) mod trash;
mod write;

use crate::cli::{Cli, Command};
use anyhow::Result;
use arbor_core::Dialect;
use std::process::ExitCode;

/// Runs one command.
pub fn run(cli: Cli) -> Result<ExitCode> {
    // Where sessions are looked for, built once for the whole command.
    let loc = arbor_store::locate::Locator::new(cli.agent_dir.clone());
    let term = crate::term::Term::detect(cli.color);
    let Some(command) = cli.command else {
        // `arbor` alone: the browser on a terminal, the help otherwise.
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
            return crate::browse::browse(false, None, &term, loc, None);
        }
        let mut cmd = <Cli as clap::CommandFactory>::command();
        cmd.print_help()?;
        return Ok(ExitCode::SUCCESS);
    };
    match command {
        Command::Browse {
            all,
            query,
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
                &term,
                loc,
                catalog.catalog.as_deref(),
            ),
        },
        Command::Context {
            session,
            leaf,
            llm,
            lenient,
            omp_version,
        } => read::context(&session, leaf.as_deref(), llm, lenient, omp_version, &loc),
        Command::Tree {
            session,
            full,
            json,
            no_pager,
        } => read::tree(&session, full, json, !no_pager, &term, &loc),
        Command::Show {
            session,
            leaf,
            opts,
            lenient,
            omp_version,
        } => read::show(
            &session,
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
                    filter: ls::Filter {
                        since_ms: since.map(|s| s.at(arbor_store::ids::now_ms() as f64)),
                        tool: tool.map(|t| match t {
                            crate::cli::Tool::Pi => Dialect::Pi,
                            crate::cli::Tool::Omp => Dialect::Omp,
                        }),
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
            json,
            catalog,
        } => index::search(
            &index::SearchOpts {
                query: &query,
                scope: &scope,
                roles: &role,
                since,
                json,
                limit,
                kinds: arbor_index::IndexKinds { thinking, tools },
                rank_all,
                count_all,
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
            parent,
            root,
            body,
            raw,
            write,
        } => write::append(&session, parent.as_deref(), root, &body, raw, &write, &loc),
        Command::Migrate {
            sessions,
            dry_run,
            write,
        } => write::migrate(&sessions, dry_run, &write, &loc),
        Command::Name {
            session,
            name,
            write,
        } => write::name(&session, &name, &write, &loc),
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
            at,
            cwd,
            json,
            resume,
            redact,
            wait,
        } => fork::fork(
            &session,
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
            force,
            wait,
        } => trash::rm(&sessions, force, wait.wait, &loc),
        Command::Trash(t) => trash::trash(t, &term, &loc),
        Command::Export {
            session,
            leaf,
            tree,
            format,
            output,
            no_redact,
            lenient,
            force,
        } => read::export(
            &session,
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
            catalog,
        } => stats::stats(
            &stats::StatsOpts {
                sessions: &sessions,
                scope: &scope,
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
        Command::Completions { shell } => {
            let out = crate::complete::script(shell);
            std::io::Write::write_all(&mut crate::report::stdout(), &out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => man(dir.as_deref()),
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
        match scope.scope() {
            Scope::Dir(d) => say_err!("arbor: no sessions in {}", d.display()),
            Scope::All => say_err!("arbor: no sessions under the agent directories"),
            Scope::Current => ls::no_sessions_here(loc, command),
        }
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
