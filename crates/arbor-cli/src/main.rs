//! `arbor`: read, write, repair, index and search pi / omp coding-agent sessions.
//!
//! Exit status: 0 success, 1 a reported failure (message on stderr), 2 a usage error.
mod args;
mod cli;
#[macro_use]
mod report;
mod browse;
mod cmd;
mod complete;
mod progress;
mod show_view;
mod stop;
mod term;
mod tree_view;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: a fresh process that loads a large session allocates
/// many entries on two threads, and glibc grew the second thread's arena one page per
/// `mprotect` call (the measurement: docs/performance.md, "Figures behind code decisions").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// When the process started (for the browser's first-frame measurement).
pub static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    let _ = STARTED.set(std::time::Instant::now());
    // The completion scripts' question, answered before anything else (no parse error, no
    // message can reach the shell's line).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == complete::SUBCOMMAND) {
        return complete::run(&args[2..]);
    }
    let cli = cli::Cli::parse_from(args);
    match cmd::run(cli) {
        Ok(code) => match report::finish_stdout() {
            // Every write to stdout went through `report::Out`: a closed pipe was accepted
            // there and the command went on to finish its work; other errors are reported.
            None => code,
            Some(e) => {
                say_err!("arbor: writing to stdout: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            // A closed pipe met by a writer that is not `report::Out` (a library writing
            // straight to a handle it was given) is not a failure worth a message either.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let _ = report::finish_stdout();
            say_err!("arbor: {}", crate::report::error_text(&e));
            // A search query arbor cannot use is the user's to fix: a usage error.
            let usage = e.chain().any(|c| {
                c.downcast_ref::<report::Usage>().is_some()
                    || matches!(
                        c.downcast_ref::<arbor_index::IndexError>(),
                        Some(arbor_index::IndexError::Query(_))
                    )
            });
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}
