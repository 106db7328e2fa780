//! Prints the context pi would build for a session's leaf, and its tree.
//!
//! `cargo run -p arbor-store --example context -- SESSION.jsonl`
use arbor_store::SessionManager;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: context SESSION.jsonl");
        return ExitCode::from(2);
    };
    // Reading takes no lock and never writes (a v1/v2 file is migrated in memory only).
    let sm = match SessionManager::open_read_only(std::path::Path::new(&path)) {
        Ok(sm) => sm,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let doc = sm.doc();
    let tree = doc.index().tree(doc);
    println!(
        "{} entries, {} roots, leaf {}",
        doc.entries().len(),
        tree.roots.len(),
        sm.leaf_id().unwrap_or("(none)")
    );
    let mut json = Vec::new();
    sm.build_session_context().write_json(doc, &mut json);
    println!("{}", String::from_utf8_lossy(&json));
    ExitCode::SUCCESS
}
