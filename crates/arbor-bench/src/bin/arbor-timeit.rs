//! `arbor-timeit [-n RUNS] [--warmup K] [--label NAME] [--ok-status N]... -- CMD ARGS...`: runs
//! a command several times (stdout to /dev/null) and prints one line:
//! `NAME median_s=.. min_s=.. max_s=.. rss_kb=.. cpu_s=.. runs=..`, the wall time measured
//! around fork/exec/wait, the peak resident set size reported by `wait4` (what
//! `/usr/bin/time -f %M` prints) and the CPU time (user + system, from the same `wait4`: the
//! fairer figure on a machine shared with other work), medians over the runs. An exit status
//! other than 0 is a failure unless `--ok-status` names it (`arbor search` exits 1 with no
//! match).
use anyhow::{bail, Context as _, Result};
use std::process::{Command, Stdio};
use std::time::Instant;

fn run_once(cmd: &[String], ok: &[i32]) -> Result<(f64, u64, f64)> {
    let t = Instant::now();
    let child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", cmd[0]))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for the child we just spawned
    // (std's Child is not waited on elsewhere, so the pid is ours to reap).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `status` and `ru` are valid for writing.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let secs = t.elapsed().as_secs_f64();
    if r != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    if !(libc::WIFEXITED(status)
        && (libc::WEXITSTATUS(status) == 0 || ok.contains(&libc::WEXITSTATUS(status))))
    {
        bail!("{} failed (status {status})", cmd.join(" "));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((secs, ru.ru_maxrss as u64, tv(ru.ru_utime) + tv(ru.ru_stime)))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5usize;
    let mut warmup = 1usize;
    let mut label = String::from("cmd");
    let mut ok: Vec<i32> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-n" => runs = args.get(i + 1).context("-n needs a value")?.parse()?,
            "--warmup" => warmup = args.get(i + 1).context("--warmup needs a value")?.parse()?,
            "--label" => label = args.get(i + 1).context("--label needs a value")?.clone(),
            "--ok-status" => ok.push(
                args.get(i + 1)
                    .context("--ok-status needs a value")?
                    .parse()?,
            ),
            "--" => break,
            other => bail!("unknown option {other}"),
        }
        i += 2;
    }
    let cmd: Vec<String> = args.get(i + 1..).unwrap_or_default().to_vec();
    if cmd.is_empty() || runs == 0 {
        bail!("usage: arbor-timeit [-n RUNS] [--warmup K] [--label NAME] [--ok-status N]... -- CMD ARGS...");
    }
    for _ in 0..warmup {
        run_once(&cmd, &ok)?;
    }
    let (mut times, mut rss, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (t, m, c) = run_once(&cmd, &ok)?;
        times.push(t);
        rss.push(m as f64);
        cpu.push(c);
    }
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = times.iter().cloned().fold(0.0, f64::max);
    println!(
        "{label} median_s={:.4} min_s={:.4} max_s={:.4} rss_kb={:.0} cpu_s={:.4} runs={runs}",
        median(&mut times),
        min,
        max,
        median(&mut rss),
        median(&mut cpu)
    );
    Ok(())
}
