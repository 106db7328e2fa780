//! What the catalog's checks cost: `quick_check` of the files table, of the whole file, and
//! FTS5's check of the text index, on an existing catalog (medians of 5 runs each).
//! `cargo run --release -p arbor-index --example checkcost -- CATALOG.db`
use arbor_index::Catalog;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: checkcost CATALOG.db");
        std::process::exit(2);
    };
    let cat = match Catalog::open(std::path::Path::new(&path)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    type Check = fn(&Catalog) -> Result<(), arbor_index::IndexError>;
    let checks: [(&str, Check); 3] = [
        ("quick_check(files)", Catalog::check_files_table),
        ("quick_check (whole file)", Catalog::check_integrity),
        ("fts integrity-check", Catalog::check_text_index),
    ];
    for (name, f) in checks {
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            if let Err(e) = f(&cat) {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        println!("{name}: {:.1} ms", median(times));
    }
}
