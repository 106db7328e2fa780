//! Micro-benchmarks of arbor-store: one append with durability `none` and `strict` against a
//! bare `write` + `fdatasync` of the same bytes, and `list_dir` (what `arbor ls` does).
//!
//! `cargo bench -p arbor-bench --bench store`. fdatasync times depend on what else the disk is
//! doing; `arbor-live` (run by `bench/compare.sh`) measures `strict` and the bare floor
//! alternately, which is the comparison to trust on a shared machine.
use arbor_bench::{generate, GenConfig};
use arbor_store::{Durability, ManagerOptions, SessionManager};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

const MESSAGE: &[u8] = br#"{"role":"user","content":[{"type":"text","text":"run the tests again and tell me which ones fail, with the first error of each"}],"timestamp":1763681581000}"#;

fn session_file(dir: &std::path::Path, mb: u64, seed: u64) -> std::path::PathBuf {
    let p = dir.join(format!("2025-11-20T23-33-01-550Z_{seed:08x}.jsonl"));
    let f = std::fs::File::create(&p).expect("create session");
    generate(&GenConfig::new(mb * 1_000_000, seed), BufWriter::new(f)).expect("write session");
    p
}

fn append(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("append");
    // Each variant gets its own fresh session file, and the page cache is written back
    // before it starts: `none` leaves megabytes of dirty pages behind, which would slow the
    // fdatasyncs measured after it.
    for (k, (name, durability)) in [("none", Durability::None), ("strict", Durability::Strict)]
        .into_iter()
        .enumerate()
    {
        let path = session_file(tmp.path(), 1, 10 + k as u64);
        // SAFETY: sync(2) has no preconditions.
        unsafe { libc::sync() };
        let opts = ManagerOptions::default().with_durability(durability);
        let mut sm = SessionManager::open(&path, opts).expect("open");
        g.bench_function(name, |b| {
            b.iter(|| sm.append_message(black_box(MESSAGE)).expect("append"))
        });
    }
    // The floor for `strict`: the same bytes (one entry line of the same length) written with
    // one `write` on an O_APPEND descriptor and forced with `fdatasync`.
    let path = session_file(tmp.path(), 1, 20);
    let line_len = {
        let sm = SessionManager::open(&path, ManagerOptions::default().with_read_only(true))
            .expect("open");
        sm.entries()
            .last()
            .map(|e| sm.doc().line(&e.line).len() + 1)
            .unwrap_or(256)
    };
    let line = vec![b'x'; line_len];
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .mode(0o600)
        .open(&path)
        .expect("open");
    g.bench_function("bare_write_fdatasync", |b| {
        b.iter(|| {
            f.write_all(&line).expect("write");
            f.sync_data().expect("fdatasync");
        })
    });
    g.bench_function("bare_write", |b| {
        b.iter(|| f.write_all(&line).expect("write"))
    });
    g.finish();
}

fn ls(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    for seed in 0..20 {
        session_file(tmp.path(), 1, seed);
    }
    let mut g = c.benchmark_group("ls");
    g.bench_function("list_dir_20x1MB", |b| {
        b.iter(|| black_box(arbor_store::discover::list_dir(tmp.path())))
    });
    g.finish();
}

criterion_group! {
    name = store;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    targets = append, ls
}
criterion_main!(store);
