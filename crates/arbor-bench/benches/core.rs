//! Micro-benchmarks of arbor-core on a generated session: load (envelope parse + index),
//! tree index, `getTree()` and its JSON, context building and writing.
//!
//! `cargo bench -p arbor-bench --bench core` (set `ARBOR_BENCH_MB` to change the session
//! size, default 20).
use arbor_bench::{generate_vec, GenConfig};
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::doc::SessionDoc;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

fn session_mb() -> u64 {
    std::env::var("ARBOR_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

fn benches(c: &mut Criterion) {
    let mb = session_mb();
    let mut cfg = GenConfig::new(mb * 1_000_000, 1);
    // Keep the context a good part of the file at this size (one compaction).
    cfg.compaction_every = 1_200;
    let (bytes, summary) = generate_vec(&cfg);
    let len = bytes.len() as u64;
    let bytes: Arc<Vec<u8>> = Arc::new(bytes);
    let doc = match SessionDoc::parse(bytes.clone()) {
        Ok(d) => d,
        Err(e) => panic!("generated session does not load: {e}"),
    };
    eprintln!(
        "session: {len} bytes, {} entries, path {} entries",
        summary.entries, summary.path_len
    );

    let mut g = c.benchmark_group("load");
    g.throughput(Throughput::Bytes(len));
    g.bench_function(format!("parse_{mb}MB"), |b| {
        b.iter(|| SessionDoc::parse(black_box(bytes.clone())))
    });
    g.finish();

    let mut g = c.benchmark_group("tree");
    g.throughput(Throughput::Elements(summary.entries));
    let mut d2 = match SessionDoc::parse(bytes.clone()) {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    g.bench_function("rebuild_index", |b| b.iter(|| d2.rebuild_index()));
    g.bench_function("get_tree", |b| b.iter(|| black_box(doc.index().tree(&doc))));
    let tree = doc.index().tree(&doc);
    let mut out = Vec::new();
    g.bench_function("tree_write_json", |b| {
        b.iter(|| {
            out.clear();
            tree.write_json(&doc, &mut out);
        })
    });
    let leaf = doc.index().leaf.unwrap_or(0);
    g.bench_function("path_to_leaf", |b| {
        b.iter(|| black_box(doc.index().path(&doc, leaf)))
    });
    g.finish();

    let mut g = c.benchmark_group("context");
    g.bench_function("build", |b| {
        b.iter(|| black_box(build_session_context(&doc, LeafSel::Current)))
    });
    let ctx = build_session_context(&doc, LeafSel::Current);
    let mut out = Vec::new();
    ctx.write_json(&doc, &mut out);
    g.throughput(Throughput::Bytes(out.len() as u64));
    g.bench_function("write_json", |b| {
        b.iter(|| {
            out.clear();
            ctx.write_json(&doc, &mut out);
        })
    });
    g.finish();
}

criterion_group! {
    name = core;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(core);
