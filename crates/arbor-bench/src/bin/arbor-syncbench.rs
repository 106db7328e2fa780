//! The sync and PostgreSQL benchmark of issue 16, in one run on this machine (see
//! bench/sync.sh, which generates the sessions and calls this):
//!
//! - `arbor sync push` of an agent directory's sessions into an empty database (MB/s);
//! - an incremental push after one append;
//! - one append through the PostgreSQL store (`SessionManager` on `PgStore`), durable
//!   (`fsync` and `synchronous_commit` on);
//! - opening a large session from PostgreSQL against opening its file;
//! - `arbor sync pull` of everything into an empty agent directory, compared byte for byte.
//!
//! The server is a throwaway one (arbor-testkit's pg: a temporary directory, a Unix socket), with
//! `fsync` turned back on for the measurements.
use anyhow::{bail, Context, Result};
use arbor_bench::median;
use arbor_store::backend::SessionStore;
use arbor_store::{ManagerOptions, SessionManager};
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "arbor sync / PostgreSQL benchmark (issue 16)")]
struct Args {
    /// Agent directory whose sessions/ are pushed (the 1,000-session set).
    #[arg(long)]
    agent: PathBuf,
    /// A large session file (the 100 MB one) to open from PostgreSQL and from its file.
    #[arg(long)]
    big: PathBuf,
    /// The arbor binary.
    #[arg(long)]
    arbor: PathBuf,
    /// Runs of each timing (medians are reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Only the PostgreSQL store's append and open (no push or pull).
    #[arg(long)]
    store_only: bool,
}

fn sessions_bytes(dir: &Path) -> Result<(usize, u64)> {
    let mut n = 0;
    let mut bytes = 0;
    for proj in std::fs::read_dir(dir.join("sessions")).context("sessions/")? {
        for f in std::fs::read_dir(proj?.path())? {
            let f = f?;
            if f.path().extension().is_some_and(|x| x == "jsonl") {
                n += 1;
                bytes += f.metadata()?.len();
            }
        }
    }
    Ok((n, bytes))
}

/// CPU time (user + system) of the children reaped so far, in seconds.
fn children_cpu() -> f64 {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid for writing.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

thread_local! {
    /// The CPU time of the last `arbor` run (the machine is shared: wall times are noisy).
    static LAST_CPU: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

fn arbor(bin: &Path, agent: &Path, args: &[&str]) -> Result<Duration> {
    let cpu0 = children_cpu();
    let t = Instant::now();
    let o = Command::new(bin)
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("NO_COLOR", "1")
        .output()?;
    let took = t.elapsed();
    LAST_CPU.with(|c| c.set(children_cpu() - cpu0));
    if !o.status.success() {
        bail!(
            "arbor {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Ok(took)
}

fn last_cpu() -> f64 {
    LAST_CPU.with(|c| c.get())
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

fn main() -> Result<()> {
    let a = Args::parse();
    let server = arbor_testkit::pg::TestServer::start().map_err(anyhow::Error::msg)?;
    {
        let mut c = server.connect().map_err(anyhow::Error::msg)?;
        // One statement each: ALTER SYSTEM refuses a (multi-statement) transaction block.
        for sql in [
            "ALTER SYSTEM SET fsync = on",
            "ALTER SYSTEM SET full_page_writes = on",
            "ALTER SYSTEM SET synchronous_commit = on",
            "SELECT pg_reload_conf()",
        ] {
            c.batch_execute(sql)?;
        }
        std::thread::sleep(Duration::from_millis(300));
        let fsync: String = c.query_one("SHOW fsync", &[])?.get(0);
        let sc: String = c.query_one("SHOW synchronous_commit", &[])?.get(0);
        println!("server: PostgreSQL (arbor-testkit, Unix socket), fsync={fsync}, synchronous_commit={sc}");
    }
    let (n, bytes) = sessions_bytes(&a.agent)?;
    let mb = bytes as f64 / 1e6;
    println!("sessions: {n} files, {mb:.1} MB in {}", a.agent.display());
    let scratch = tempfile::tempdir()?;
    if !a.store_only {
        push_and_pull(&a, &server, scratch.path(), n, mb)?;
    }
    store_timings(&a, &server)
}

fn push_and_pull(
    a: &Args,
    server: &arbor_testkit::pg::TestServer,
    scratch: &Path,
    n: usize,
    mb: f64,
) -> Result<()> {
    // 1. Full push into an empty database, `runs` times.
    let mut full = Vec::new();
    let mut full_cpu = Vec::new();
    let mut last_url = String::new();
    for r in 0..a.runs {
        let url = server.url_for(
            &server
                .unique_database("bench_push")
                .map_err(anyhow::Error::msg)?,
        );
        // A copy of the agent directory's cursor state: none (a first push).
        let agent = scratch.join(format!("agent{r}"));
        std::fs::create_dir_all(&agent)?;
        std::os::unix::fs::symlink(a.agent.join("sessions"), agent.join("sessions"))?;
        let took = arbor(&a.arbor, &agent, &["sync", "push", "--to", &url])?;
        full.push(took.as_secs_f64());
        full_cpu.push(last_cpu());
        last_url = url;
    }
    let full_s = median(full.clone());
    let rate = mb / full_s;
    println!(
        "full push: median {full_s:.2} s of {:?} -> {rate:.1} MB/s, cpu median {:.2} s  [{} >= 50 MB/s]",
        full.iter().map(|s| format!("{s:.2}")).collect::<Vec<_>>(),
        median(full_cpu),
        verdict(rate >= 50.0)
    );

    // 2. Incremental push after one append (the last run's agent directory and database).
    let agent = scratch.join(format!("agent{}", a.runs - 1));
    let victim = std::fs::read_dir(a.agent.join("sessions"))?
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .context("a session")?;
    let original = std::fs::read(&victim)?;
    let mut inc = Vec::new();
    let mut inc_cpu = Vec::new();
    for i in 0..(a.runs.max(5)) {
        let mut f = std::fs::OpenOptions::new().append(true).open(&victim)?;
        writeln!(
            f,
            r#"{{"type":"message","id":"bench{i:04}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"bench append {i}","timestamp":1}}}}"#
        )?;
        drop(f);
        inc.push(
            arbor(&a.arbor, &agent, &["sync", "push", "--to", &last_url])?.as_secs_f64() * 1000.0,
        );
        inc_cpu.push(last_cpu() * 1000.0);
    }
    let inc_ms = median(inc.clone());
    println!(
        "incremental push after one append: median {inc_ms:.1} ms of {:?}, cpu median {:.1} ms  [{} < 50 ms]",
        inc.iter().map(|s| format!("{s:.1}")).collect::<Vec<_>>(),
        median(inc_cpu),
        verdict(inc_ms < 50.0)
    );

    // 3. Pull everything into an empty agent directory: byte-identical?
    // (`runs` pulls, each into a new directory; the earlier ones removed: the disk is shared.)
    let (mut pulls, mut pulls_cpu) = (Vec::new(), Vec::new());
    let pulled = scratch.join("pulled");
    for _ in 0..a.runs {
        let _ = std::fs::remove_dir_all(&pulled);
        std::fs::create_dir_all(&pulled)?;
        pulls.push(arbor(&a.arbor, &pulled, &["sync", "pull", "--from", &last_url])?.as_secs_f64());
        pulls_cpu.push(last_cpu());
    }
    let pull_cpu = median(pulls_cpu);
    let pull_s = median(pulls);
    let mut same = 0;
    let mut differ = 0;
    for proj in std::fs::read_dir(a.agent.join("sessions"))?.flatten() {
        for f in std::fs::read_dir(proj.path())?.flatten() {
            let p = f.path();
            if p.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let there = pulled
                .join("sessions")
                .join(proj.file_name())
                .join(f.file_name());
            if std::fs::read(&p)? == std::fs::read(&there).unwrap_or_default() {
                same += 1;
            } else {
                differ += 1;
            }
        }
    }
    std::fs::write(&victim, &original)?;
    println!(
        "pull of everything: median {pull_s:.2} s, cpu median {pull_cpu:.2} s; {same} files byte-identical, {differ} differ  [{}]",
        verdict(differ == 0 && same == n)
    );

    Ok(())
}

fn store_timings(a: &Args, server: &arbor_testkit::pg::TestServer) -> Result<()> {
    // 4. One append through the PostgreSQL store.
    let url = server.url_for(
        &server
            .unique_database("bench_append")
            .map_err(anyhow::Error::msg)?,
    );
    let store: Arc<dyn SessionStore> = Arc::new(arbor_db::PgStore::connect(&url)?);
    let mut sm = SessionManager::create_in(store.clone(), "/bench", ManagerOptions::default())?;
    let body = format!(
        r#"{{"role":"user","content":"{}","timestamp":1}}"#,
        "x".repeat(900)
    );
    let mut lat = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        sm.append_message(body.as_bytes())?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut sorted = lat.clone();
    sorted.sort_by(f64::total_cmp);
    let p95 = sorted[sorted.len() * 95 / 100];
    let append_ms = median(lat);
    println!("one append (SessionManager on PgStore, 1 KB line): median {append_ms:.2} ms, p95 {p95:.2} ms of 300  [{} < 2 ms]", verdict(append_ms < 2.0));
    drop(sm);

    // 5. Opening the large session from PostgreSQL against its file.
    let bytes = std::fs::read(&a.big)?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    let mut meta = arbor_store::backend::meta_from_header(lines[0], "pi");
    meta.id = format!("big-{}", meta.id);
    store.create(&meta, &lines)?;
    let (mut from_pg, mut from_file) = (Vec::new(), Vec::new());
    for _ in 0..a.runs.max(3) {
        let t = Instant::now();
        let sm = SessionManager::open_in(
            store.clone(),
            &meta.id,
            ManagerOptions::default().with_read_only(true),
        )?;
        let n_pg = sm.entries().len();
        from_pg.push(t.elapsed().as_secs_f64());
        drop(sm);
        let t = Instant::now();
        let sm = SessionManager::open_read_only(&a.big)?;
        let n_file = sm.entries().len();
        from_file.push(t.elapsed().as_secs_f64());
        if n_pg != n_file {
            bail!("{n_pg} entries from PostgreSQL, {n_file} from the file");
        }
    }
    let mut fetch = Vec::new();
    for _ in 0..a.runs.max(3) {
        let t = Instant::now();
        let n = store.read_joined(&meta.id, 0)?.len();
        fetch.push(t.elapsed().as_secs_f64());
        if n != bytes.len() {
            bail!("{n} bytes read back, {} stored", bytes.len());
        }
    }
    println!(
        "  of which fetching the lines: median {:.3} s",
        median(fetch)
    );
    let (pg_s, file_s) = (median(from_pg), median(from_file));
    let ratio = pg_s / file_s;
    println!(
        "open {:.0} MB session: PostgreSQL {pg_s:.3} s, file {file_s:.3} s, ratio {ratio:.2}  [{} <= 3x]",
        bytes.len() as f64 / 1e6,
        verdict(ratio <= 3.0)
    );
    let joined = store.read_joined(&meta.id, 0)?;
    println!(
        "large session read back byte-identical: {}",
        verdict(joined == bytes)
    );
    Ok(())
}
