//! Appends a user message to a session (creating it in DIR when DIR is a directory), as pi's
//! SessionManager would, and prints the new entry's id.
//!
//! `cargo run -p arbor-store --example append -- SESSION.jsonl|DIR "message text"`
use arbor_store::{ManagerOptions, SessionManager, StoreError};
use std::path::Path;
use std::process::ExitCode;

fn run(target: &Path, text: &str) -> Result<String, StoreError> {
    let mut sm = if target.is_dir() {
        SessionManager::create("/", Some(target), ManagerOptions::default())?
    } else {
        // Takes the writer lock: a second writer is refused while this one runs.
        SessionManager::open(target, ManagerOptions::default())?
    };
    let mut message = br#"{"role":"user","content":"#.to_vec();
    arbor_core::json::write_str_escaped(text, &mut message);
    message.extend_from_slice(br#","timestamp":0}"#);
    let id = sm.append_message(&message)?;
    if let Some(p) = sm.session_file() {
        eprintln!("{}", p.display());
    }
    sm.close()?;
    Ok(id)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, text] = args.as_slice() else {
        eprintln!("usage: append SESSION.jsonl|DIR TEXT");
        return ExitCode::from(2);
    };
    match run(Path::new(target), text) {
        Ok(id) => {
            println!("{id}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
