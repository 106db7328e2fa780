//! Where the time of `arbor context FILE` goes, phase by phase (median of 7 runs; the parse
//! runs on two threads for large files and also notes the lines holding blob references):
//! `cargo run --release -p arbor-bench --example phases -- FILE`
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::doc::SessionDoc;
use arbor_store::FileBytes;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: phases FILE");
        std::process::exit(2);
    };
    let path = std::path::PathBuf::from(path);
    let mut rows: Vec<(&str, Vec<f64>)> = [
        "map",
        "parse",
        "build",
        "write_json",
        "drop doc",
        "unmap",
        "total",
    ]
    .iter()
    .map(|n| (*n, Vec::new()))
    .collect();
    for _ in 0..7 {
        let t0 = Instant::now();
        // As `arbor_store::load_doc`: mapped without populating; the second parsing thread maps
        // the pages in while the first one reads, so "map" is ~0 and "parse" includes that.
        let bytes = Arc::new(FileBytes::open_unpopulated(&path).expect("open"));
        let t1 = Instant::now();
        let fb = bytes.clone();
        let doc =
            SessionDoc::parse_prefetched(bytes.clone(), &move |r| fb.populate(r)).expect("session");
        let t2 = Instant::now();
        let hits = doc.blob_ref_lines().len();
        let t3 = Instant::now();
        let ctx = build_session_context(&doc, LeafSel::Current);
        let t4 = Instant::now();
        let mut out = Vec::new();
        ctx.write_json(&doc, &mut out);
        let t5 = Instant::now();
        std::hint::black_box((hits, out.len()));
        drop((ctx, out, doc));
        let t6 = Instant::now();
        drop(bytes);
        let t7 = Instant::now();
        for (k, d) in [
            t1 - t0,
            t2 - t1,
            t4 - t3,
            t5 - t4,
            t6 - t5,
            t7 - t6,
            t7 - t0,
        ]
        .iter()
        .enumerate()
        {
            rows[k].1.push(d.as_secs_f64() * 1e3);
        }
    }
    for (name, mut v) in rows {
        v.sort_by(|a, b| a.total_cmp(b));
        println!("{name:<12} {:8.2} ms", v[v.len() / 2]);
    }
}
