//! `arbor-gen --size 100MB --seed N OUT`: writes a deterministic, realistic pi session.
use anyhow::{Context as _, Result};
use arbor_bench::{generate, parse_size, GenConfig};
use clap::Parser;
use std::io::BufWriter;
use std::path::PathBuf;

/// Writes a large, realistic pi v3 session file (same size and seed: same bytes).
#[derive(Parser)]
#[command(name = "arbor-gen", version)]
struct Args {
    /// Approximate size: 500KB, 100MB, 1GB, 2GiB...
    #[arg(long, default_value = "100MB", value_parser = parse_size)]
    size: u64,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A compaction every this many entries (0: none).
    #[arg(long, default_value_t = 6000)]
    compaction_every: u64,
    /// Chance per turn, in thousandths, of branching back.
    #[arg(long, default_value_t = 15)]
    branch_per_mille: u32,
    /// Print a JSON summary (entries, leaf id, ...) on stdout.
    #[arg(long)]
    summary: bool,
    /// Output file.
    out: PathBuf,
}

fn main() -> Result<()> {
    let a = Args::parse();
    let mut cfg = GenConfig::new(a.size, a.seed);
    cfg.compaction_every = a.compaction_every;
    cfg.branch_per_mille = a.branch_per_mille;
    let f =
        std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let s = generate(&cfg, BufWriter::with_capacity(1 << 20, f))
        .with_context(|| format!("writing {}", a.out.display()))?;
    if a.summary {
        println!(
            "{{\"bytes\":{},\"entries\":{},\"messages\":{},\"pathLen\":{},\"branches\":{},\"compactions\":{},\"images\":{},\"labels\":{},\"sessionId\":\"{}\",\"leafId\":\"{}\"}}",
            s.bytes, s.entries, s.messages, s.path_len, s.branches, s.compactions, s.images, s.labels, s.session_id, s.leaf_id
        );
    }
    Ok(())
}
