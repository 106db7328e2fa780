//! Command implementations.
mod check;
pub mod index;
mod read;
mod write;

use crate::cli::{Cli, Command};
use anyhow::Result;
use arbor_core::Dialect;
use std::process::ExitCode;

/// Runs one command.
pub fn run(cli: Cli) -> Result<ExitCode> {
    // Where sessions are looked for, built once for the whole command.
    let loc = arbor_store::locate::Locator::new(cli.agent_dir.clone());
    let catalog = cli.catalog.as_deref();
    match cli.command {
        Command::Context {
            session,
            leaf,
            llm,
            lenient,
            omp_version,
        } => read::context(&session, leaf.as_deref(), llm, lenient, omp_version, &loc),
        Command::Tree { session, json } => read::tree(&session, json, &loc),
        Command::Show {
            session,
            leaf,
            lenient,
            omp_version,
        } => read::show(&session, leaf.as_deref(), lenient, omp_version, &loc),
        Command::Ls {
            dir,
            all,
            json,
            all_text,
            omp,
            pi,
        } => {
            let rules = match (omp, pi) {
                (true, _) => Some(Dialect::Omp),
                (_, true) => Some(Dialect::Pi),
                _ => None,
            };
            index::ls(dir.as_deref(), all, json, all_text, rules, &loc, catalog)
        }
        Command::Index {
            rebuild,
            thinking,
            tools,
            json,
        } => index::index(
            rebuild,
            arbor_index::IndexKinds { thinking, tools },
            json,
            &loc,
            catalog,
        ),
        Command::Search {
            query,
            all,
            dir,
            role,
            since,
            thinking,
            tools,
            limit,
            rank_all,
            json,
        } => index::search(
            &index::SearchOpts {
                query: &query,
                dir: dir.as_deref(),
                all,
                roles: &role,
                since,
                json,
                limit,
                kinds: arbor_index::IndexKinds { thinking, tools },
                rank_all,
            },
            &loc,
            catalog,
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
        Command::New {
            dir,
            cwd,
            omp,
            id,
            write,
        } => write::new(dir.as_deref(), cwd, omp, id, &write, &loc),
        Command::Append {
            session,
            parent,
            root,
            body,
            write,
        } => write::append(&session, parent.as_deref(), root, &body, &write, &loc),
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
            repair,
            json,
            no_blobs,
            wait,
        } => check::check(&sessions, repair, json, no_blobs, wait, &loc),
        Command::Gc {
            blobs: _,
            yes,
            min_age,
            sessions_dir,
            json,
        } => check::gc(yes, min_age, &sessions_dir, json, &loc),
    }
}
