//! Indexes a directory of sessions into a catalog and searches it.
//!
//! `cargo run -p arbor-index --example search -- DIR QUERY [CATALOG.db]`
use arbor_index::{Catalog, RefreshOptions, SearchQuery};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, query, catalog) = match args.as_slice() {
        [d, q] => (PathBuf::from(d), q.clone(), None),
        [d, q, c] => (PathBuf::from(d), q.clone(), Some(PathBuf::from(c))),
        _ => {
            eprintln!("usage: search DIR QUERY [CATALOG.db]");
            return ExitCode::from(2);
        }
    };
    let opened = match &catalog {
        Some(c) => Catalog::open(c),
        None => Catalog::in_memory(),
    };
    let result = opened.and_then(|mut cat| {
        cat.refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_texts(true),
            &mut |_| {},
        )?;
        cat.search(&SearchQuery::new(&query))
    });
    match result {
        Ok(hits) => {
            for h in hits {
                println!(
                    "{} {} {}: {}",
                    h.path.display(),
                    h.entry_id.as_deref().unwrap_or("-"),
                    h.kind.name(),
                    h.snippet
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
