//! Command implementations.
mod read;
mod write;

use crate::cli::{Cli, Command};
use anyhow::Result;
use std::process::ExitCode;

/// Runs one command.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let agent = cli.agent_dir.as_deref();
    match cli.command {
        Command::Context { session, leaf, llm } => read::context(&session, leaf.as_deref(), llm, agent),
        Command::Tree { session, json } => read::tree(&session, json, agent),
        Command::Show { session, leaf } => read::show(&session, leaf.as_deref(), agent),
        Command::Ls { dir, json, all_text } => read::ls(dir.as_deref(), json, all_text, agent),
        Command::New { dir, cwd, omp, write } => write::new(dir.as_deref(), cwd, omp, &write, agent),
        Command::Append { session, parent, root, body, write } => {
            write::append(&session, parent.as_deref(), root, &body, &write, agent)
        }
        Command::Migrate { sessions, dry_run, write } => write::migrate(&sessions, dry_run, &write, agent),
    }
}
