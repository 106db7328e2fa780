//! `arbor-live SESSION [SMALL_SESSION] [--appends N] [--strict-runs N]`: in-process
//! measurements of a long-running `SessionManager` on a copy of SESSION (the original is
//! never written). Prints `key=value` lines:
//!
//! * `append_none_us`: median latency of one `append_message` with durability `none`;
//! * `append_strict_us`, `bare_fdatasync_us`: median of one append with durability `strict`
//!   and of a bare `write` + `fdatasync` of a line of the same length on a file in the same
//!   directory, measured alternately;
//! * `live_us`, `full_us`: per turn (a user and an assistant message appended), the median
//!   cost of the incremental context (`live_context` + writing the new messages) and of
//!   rebuilding it (`build_session_context`); with SMALL_SESSION, the same on it
//!   (`small_live_us`, `small_full_us`), to show the incremental cost does not grow with
//!   the path.
use anyhow::{Context as _, Result};
use arbor_bench::median;
use arbor_store::{Durability, ManagerOptions, SessionManager};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

const USER: &[u8] = br#"{"role":"user","content":[{"type":"text","text":"Now run the whole test suite again and tell me which tests still fail, with the first error line of each. Don't fix anything yet."}],"timestamp":1763681581000}"#;
const ASSISTANT: &[u8] = br#"{"role":"assistant","content":[{"type":"text","text":"Two tests still fail: `tree::deep_paths` (stack overflow in the recursive walk) and `context::compaction_kept` (off by one in the kept range)."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0.0036,"output":0.0012,"cacheRead":0,"cacheWrite":0,"total":0.0048}},"stopReason":"stop","timestamp":1763681582000}"#;

fn us(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

fn copy_to(dir: &Path, src: &Path, name: &str) -> Result<PathBuf> {
    let dst = dir.join(name);
    std::fs::copy(src, &dst).with_context(|| format!("copying {}", src.display()))?;
    Ok(dst)
}

fn open(path: &Path, durability: Durability) -> Result<SessionManager> {
    SessionManager::open(path, ManagerOptions::default().with_durability(durability))
        .with_context(|| format!("opening {}", path.display()))
}

/// Per-turn cost of the live context and of a full rebuild.
fn turns(path: &Path, n: usize) -> Result<(f64, f64)> {
    let mut sm = open(path, Durability::None)?;
    let mut buf = Vec::new();
    // First call builds the cache.
    sm.live_context().write_new_messages(&mut buf);
    let (mut live, mut full) = (Vec::new(), Vec::new());
    for _ in 0..n {
        sm.append_message(USER)?;
        sm.append_message(ASSISTANT)?;
        let t = Instant::now();
        buf.clear();
        sm.live_context().write_new_messages(&mut buf);
        live.push(us(t));
        let t = Instant::now();
        let ctx = sm.build_session_context();
        std::hint::black_box(&ctx);
        full.push(us(t));
    }
    Ok((median(live), median(full)))
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut files = Vec::new();
    let (mut appends, mut strict_runs) = (500usize, 40usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--appends" => appends = args.next().context("--appends N")?.parse()?,
            "--strict-runs" => strict_runs = args.next().context("--strict-runs N")?.parse()?,
            _ => files.push(PathBuf::from(a)),
        }
    }
    let session = files
        .first()
        .context("usage: arbor-live SESSION [SMALL_SESSION] [--appends N] [--strict-runs N]")?;
    let scratch = std::env::var_os("ARBOR_SCRATCH")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("arbor-live-")
        .tempdir_in(&scratch)?;
    let path = copy_to(dir.path(), session, "2025-11-20T23-33-01-550Z_live.jsonl")?;

    // Append latency, durability none.
    let mut sm = open(&path, Durability::None)?;
    for _ in 0..20 {
        sm.append_message(USER)?;
    }
    let mut lat = Vec::with_capacity(appends);
    for _ in 0..appends {
        let t = Instant::now();
        sm.append_message(USER)?;
        lat.push(us(t));
    }
    let line_len = sm
        .entries()
        .last()
        .map(|e| sm.doc().line(&e.line).len() + 1)
        .unwrap_or(256);
    drop(sm);
    println!("append_none_us={:.2}", median(lat));

    // strict vs a bare write + fdatasync of the same length, alternately.
    let mut sm = open(&path, Durability::Strict)?;
    let bare_path = dir.path().join("bare.jsonl");
    let mut bare = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&bare_path)?;
    let line = vec![b'x'; line_len];
    let (mut strict, mut floor) = (Vec::new(), Vec::new());
    for k in 0..strict_runs + 4 {
        let t = Instant::now();
        sm.append_message(USER)?;
        let s = us(t);
        let t = Instant::now();
        bare.write_all(&line)?;
        bare.sync_data()?;
        let b = us(t);
        if k >= 4 {
            strict.push(s);
            floor.push(b);
        }
    }
    drop(sm);
    println!("append_strict_us={:.1}", median(strict));
    println!("bare_fdatasync_us={:.1}", median(floor));

    // Incremental context per turn.
    let (live, full) = turns(&path, 200)?;
    println!("live_us={live:.2}");
    println!("full_us={full:.2}");
    if let Some(small) = files.get(1) {
        let p = copy_to(dir.path(), small, "2025-11-20T23-33-01-551Z_small.jsonl")?;
        let (live, full) = turns(&p, 200)?;
        println!("small_live_us={live:.2}");
        println!("small_full_us={full:.2}");
    }
    Ok(())
}
