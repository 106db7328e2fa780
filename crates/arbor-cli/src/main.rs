//! `arbor`: read, write, repair, index and search pi / omp coding-agent sessions.
//!
//! Exit status: 0 success, 1 a reported failure (message on stderr), 2 a usage error.
mod cli;
mod cmd;
mod render;
mod resolve;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`arbor ... | head`) is not a failure worth a message.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let _ = std::io::stdout().flush();
            eprintln!("arbor: {e:#}");
            ExitCode::from(1)
        }
    }
}
