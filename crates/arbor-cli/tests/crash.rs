//! The crash test: `arbor` is killed with SIGKILL at random moments, hundreds of times, while it
//! appends entries from a few bytes to several hundred KB (pi and omp sessions), writes omp
//! blobs, renames omp sessions in place, appends through a symlink to the session, migrates v2 files and repairs files with atomic
//! rewrites. After every kill:
//!
//! * every id arbor printed is in the file (an id is printed only after its line was written),
//! * the file still opens, and every entry seen before is still there, byte for byte,
//! * no line is malformed (only a torn last line may be left by a write cut short, and the next
//!   writer moves it to a sidecar), the omp title slot is valid, every blob an omp line refers
//!   to exists and matches its hash.
//!
//! `ARBOR_CRASH_KILLS` sets the number of kills (default 320), `ARBOR_CRASH_SEED` the seed
//! (default: from the clock; printed, so a failure can be replayed).
use arbor_core::doc::SessionDoc;
use arbor_store::blobs::BlobStore;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn text(&mut self, n: usize) -> String {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz ABCDEFG 0123456789\n\t\"\\/";
        (0..n)
            .map(|_| A[self.below(A.len() as u64) as usize] as char)
            .collect()
    }
}

fn arbor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
}

fn b64(bytes: &[u8]) -> String {
    arbor_core::blobref::encode_base64(bytes)
}

fn json_str(s: &str) -> String {
    let mut out = Vec::new();
    arbor_core::json::write_str_escaped(s, &mut out);
    String::from_utf8(out).expect("utf8")
}

/// A text size: mostly small, some tens of KB, some several hundred KB.
fn size(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0..=59 => 1 + rng.below(300) as usize,
        60..=89 => 1000 + rng.below(30_000) as usize,
        _ => 100_000 + rng.below(350_000) as usize,
    }
}

fn pi_body(rng: &mut Rng) -> String {
    let n = size(rng);
    let role = if rng.below(2) == 0 {
        "user"
    } else {
        "assistant"
    };
    match role {
        "user" => format!(
            r#"{{"type":"message","message":{{"role":"user","content":{},"timestamp":1}}}}"#,
            json_str(&rng.text(n))
        ),
        _ => format!(
            r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"provider":"p","model":"m","timestamp":2}}}}"#,
            json_str(&rng.text(n))
        ),
    }
}

fn omp_body(rng: &mut Rng) -> String {
    if rng.below(3) == 0 {
        return pi_body(rng);
    }
    let img = match rng.below(10) {
        0..=5 => 800 + rng.below(20_000) as usize,
        _ => 50_000 + rng.below(200_000) as usize,
    };
    let data = b64(&rng.bytes(img));
    format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":{}}},{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":3}}}}"#,
        {
            let n = 1 + rng.below(200) as usize;
            json_str(&rng.text(n))
        }
    )
}

fn line_hash(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// What the test knows about one session file.
struct Tracked {
    path: PathBuf,
    omp: bool,
    /// Ids arbor printed.
    acked: HashSet<String>,
    /// id → hash of its line, for every entry seen on disk so far.
    seen: HashMap<String, u64>,
    /// Lines the test itself made malformed (repair scenario), until repaired.
    injected: bool,
}

/// Evidence of where kills landed.
#[derive(Debug, Default)]
struct Stats {
    /// Kills after at least one id was printed (mid-stream).
    after_ack: usize,
    /// Torn last lines observed (a write cut short).
    torn: usize,
    /// Temporary files of an interrupted atomic rewrite or blob write, found and removed.
    temps: usize,
}

fn sweep_temps(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
            n += 1;
        }
    }
    n
}

fn verify(t: &mut Tracked, store: &BlobStore, ctx: &str) -> bool {
    let bytes =
        std::fs::read(&t.path).unwrap_or_else(|e| panic!("{ctx}: {}: {e}", t.path.display()));
    let doc = SessionDoc::parse(Arc::new(bytes))
        .unwrap_or_else(|e| panic!("{ctx}: {} is no longer a session: {e}", t.path.display()));
    if !t.injected {
        assert!(
            doc.report().malformed.is_empty(),
            "{ctx}: malformed lines {:?}",
            doc.report().malformed
        );
    } else {
        for m in &doc.report().malformed {
            let line = &doc.base_bytes()[m.offset..m.offset + m.len];
            assert!(
                line.starts_with(b"garbage "),
                "{ctx}: unexpected malformed line {}",
                m.line_no
            );
        }
    }
    for id in &t.acked {
        assert!(
            doc.index().get(id).is_some(),
            "{ctx}: acknowledged id {id} is not in {}",
            t.path.display()
        );
    }
    let mut now: HashMap<String, u64> = HashMap::with_capacity(doc.entries().len());
    for (i, e) in doc.entries().iter().enumerate() {
        if let Some(id) = &e.id {
            now.insert(id.to_string(), line_hash(doc.entry_line(i)));
        }
    }
    for (id, h) in &t.seen {
        assert_eq!(
            now.get(id),
            Some(h),
            "{ctx}: entry {id} changed or vanished"
        );
    }
    if t.omp {
        let slot = doc.title_slot().expect("omp file keeps its title slot");
        assert_eq!(slot.physical_len, 256, "{ctx}: title slot size");
        assert!(
            arbor_core::title::parse_title_slot(doc.line(&slot.line)).is_some(),
            "{ctx}: title slot invalid"
        );
        for (i, e) in doc.entries().iter().enumerate() {
            if !now.contains_key(e.id.as_deref().unwrap_or(""))
                || t.seen.contains_key(e.id.as_deref().unwrap_or(""))
            {
                continue;
            }
            for h in arbor_core::blobref::find_blob_hashes(doc.entry_line(i)) {
                store
                    .verify(&h)
                    .unwrap_or_else(|err| panic!("{ctx}: line refers to a bad blob: {err}"));
            }
        }
    }
    t.seen = now;
    doc.report().torn_tail.is_some()
}

/// Runs `args` (stdin fed with `bodies`), kills it after `delay`; returns (printed ids, killed).
fn run_and_kill(args: &[&str], bodies: Vec<String>, delay: Duration) -> (Vec<String>, bool) {
    let mut child = arbor()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn arbor");
    let mut stdin = child.stdin.take();
    let feeder = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            for b in bodies {
                if s.write_all(b.as_bytes()).is_err() || s.write_all(b"\n").is_err() {
                    return;
                }
            }
        }
        drop(stdin);
    });
    let stdout = child.stdout.take().expect("stdout");
    let ids = Arc::new(Mutex::new(Vec::new()));
    let ids2 = ids.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            match line {
                Ok(l) => ids2.lock().expect("lock").push(l.trim().to_string()),
                Err(_) => break,
            }
        }
    });
    std::thread::sleep(delay);
    let _ = child.kill();
    let status = child.wait().expect("wait");
    let _ = feeder.join();
    let _ = reader.join();
    let killed = status.signal() == Some(libc_sigkill());
    let ids = ids.lock().expect("lock").clone();
    (ids, killed)
}

fn libc_sigkill() -> i32 {
    9
}

fn new_session(dir: &Path, agent: &Path, omp: bool) -> PathBuf {
    let mut args = vec![
        "--agent-dir",
        agent.to_str().expect("utf8"),
        "new",
        "--dir",
        dir.to_str().expect("utf8"),
        "--cwd",
        "/crash",
    ];
    if omp {
        args.push("--omp");
    }
    let o = arbor().args(&args).output().expect("arbor new");
    assert!(o.status.success());
    PathBuf::from(String::from_utf8(o.stdout).expect("utf8").trim())
}

/// A v2 session (pi's tree format before v3) that opening for write migrates with an atomic
/// rewrite; about 1 MB so the rewrite takes a while.
fn v2_template(rng: &mut Rng) -> Vec<u8> {
    let mut s = String::from(
        r#"{"type":"session","version":2,"id":"v2-crash","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/crash"}"#,
    );
    s.push('\n');
    let mut parent = "null".to_string();
    for i in 0..120 {
        let id = format!("{i:08x}");
        let role = if i % 3 == 2 { "hookMessage" } else { "user" };
        s.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"{role}","content":{},"timestamp":1}}}}"#,
            json_str(&rng.text(8000))
        ));
        s.push('\n');
        parent = format!("\"{id}\"");
    }
    s.into_bytes()
}

#[test]
fn sigkill_at_random_moments_never_loses_an_acknowledged_entry() {
    let target: usize = std::env::var("ARBOR_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(320);
    let seed: u64 = std::env::var("ARBOR_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    eprintln!(
        "crash test: seed {seed}, {target} kills (ARBOR_CRASH_SEED / ARBOR_CRASH_KILLS to change)"
    );
    let mut rng = Rng(seed);
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let dir = agent.join("sessions").join("--crash--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let store = BlobStore::for_agent_dir(&agent);
    let agent_s = agent.to_str().expect("utf8").to_string();
    let started = Instant::now();

    let mut pi = Tracked {
        path: new_session(&dir, &agent, false),
        omp: false,
        acked: HashSet::new(),
        seen: HashMap::new(),
        injected: false,
    };
    let mut omp = Tracked {
        path: new_session(&dir, &agent, true),
        omp: true,
        acked: HashSet::new(),
        seen: HashMap::new(),
        injected: false,
    };
    let mut rw = Tracked {
        path: new_session(&dir, &agent, false),
        omp: false,
        acked: HashSet::new(),
        seen: HashMap::new(),
        injected: false,
    };
    // Give the repair target some bulk so its rewrite takes a moment.
    {
        let bodies: Vec<String> = (0..40).map(|_| pi_body(&mut Rng(rng.next() | 1))).collect();
        let mut c = arbor()
            .args(["append", rw.path.to_str().expect("utf8"), "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn");
        c.stdin
            .take()
            .expect("stdin")
            .write_all((bodies.join("\n") + "\n").as_bytes())
            .expect("feed");
        assert!(c.wait().expect("wait").success());
        verify(&mut rw, &store, "setup");
    }
    let template = v2_template(&mut rng);
    let template_doc = SessionDoc::parse(Arc::new(template.clone())).expect("template");

    let (mut kills, mut runs) = (0usize, 0usize);
    let mut stats = Stats::default();
    let mut by_kind: HashMap<&str, usize> = HashMap::new();
    while kills < target && runs < target * 4 {
        runs += 1;
        let kind = match rng.below(20) {
            0..=6 => "pi-append",
            7..=12 => "omp-append-blobs",
            13..=15 => "repair-rewrite",
            16..=17 => "omp-rename",
            _ => "v2-migrate",
        };
        let durability = ["none", "flush", "strict"][rng.below(3) as usize];
        let delay =
            Duration::from_micros(rng.below(if kind == "omp-rename" { 15_000 } else { 60_000 }));
        let ctx = format!("run {runs} ({kind}, {durability}, kill after {delay:?}, seed {seed})");
        let killed = match kind {
            "pi-append" | "omp-append-blobs" => {
                let omp_kind = kind == "omp-append-blobs";
                let n = 5 + rng.below(30) as usize;
                let bodies: Vec<String> = (0..n)
                    .map(|_| {
                        if omp_kind {
                            omp_body(&mut rng)
                        } else {
                            pi_body(&mut rng)
                        }
                    })
                    .collect();
                let t = if omp_kind { &mut omp } else { &mut pi };
                // Half of the pi appends go through a symlink to the session (the lock and
                // the torn-tail cut must act on the file, not the link).
                let p = if !omp_kind && rng.below(2) == 0 {
                    let alias = dir.join("alias.jsonl");
                    let _ = std::fs::remove_file(&alias);
                    std::os::unix::fs::symlink(&t.path, &alias).expect("alias");
                    alias.to_str().expect("utf8").to_string()
                } else {
                    t.path.to_str().expect("utf8").to_string()
                };
                let (ids, killed) = run_and_kill(
                    &[
                        "--agent-dir",
                        &agent_s,
                        "append",
                        &p,
                        "-",
                        "--durability",
                        durability,
                    ],
                    bodies,
                    delay,
                );
                if killed && !ids.is_empty() {
                    stats.after_ack += 1;
                }
                t.acked.extend(ids);
                stats.torn += usize::from(verify(t, &store, &ctx));
                killed
            }
            "omp-rename" => {
                let p = omp.path.to_str().expect("utf8").to_string();
                let n = 1 + rng.below(300) as usize;
                let name = format!("title {} {}", runs, rng.text(n));
                let (ids, killed) = run_and_kill(
                    &[
                        "--agent-dir",
                        &agent_s,
                        "name",
                        &p,
                        &name,
                        "--durability",
                        durability,
                    ],
                    Vec::new(),
                    delay,
                );
                omp.acked.extend(ids);
                verify(&mut omp, &store, &ctx);
                killed
            }
            "repair-rewrite" => {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&rw.path)
                    .expect("open");
                // Only ever after a complete line: a torn tail would be cut, not quarantined.
                let bytes = std::fs::read(&rw.path).expect("read");
                if bytes.last() != Some(&b'\n') && !bytes.is_empty() {
                    f.write_all(b"\n").expect("newline");
                }
                f.write_all(format!("garbage {runs}\n").as_bytes())
                    .expect("inject");
                drop(f);
                rw.injected = true;
                let p = rw.path.to_str().expect("utf8").to_string();
                let (_, killed) =
                    run_and_kill(&["check", "--repair", "--no-blobs", &p], Vec::new(), delay);
                verify(&mut rw, &store, &ctx);
                killed
            }
            _ => {
                let p = dir.join(format!("v2-{runs}.jsonl"));
                std::fs::write(&p, &template).expect("copy template");
                let mut t = Tracked {
                    path: p.clone(),
                    omp: false,
                    acked: HashSet::new(),
                    seen: HashMap::new(),
                    injected: false,
                };
                // Every template entry, as its migrated line, must survive.
                for (i, e) in template_doc.entries().iter().enumerate() {
                    if let Some(id) = &e.id {
                        t.seen
                            .insert(id.to_string(), line_hash(template_doc.entry_line(i)));
                    }
                }
                let bodies: Vec<String> = (0..3).map(|_| pi_body(&mut rng)).collect();
                let ps = p.to_str().expect("utf8").to_string();
                let (ids, killed) = run_and_kill(
                    &["append", &ps, "-", "--durability", durability],
                    bodies,
                    delay,
                );
                t.acked.extend(ids);
                verify(&mut t, &store, &ctx);
                let _ = std::fs::remove_file(&p);
                killed
            }
        };
        stats.temps += sweep_temps(&dir) + sweep_temps(store.dir());
        if killed {
            kills += 1;
            *by_kind.entry(kind).or_default() += 1;
        }
        // Keep files small enough to verify quickly: start a new one now and then.
        for t in [&mut pi, &mut omp] {
            if std::fs::metadata(&t.path).map(|m| m.len()).unwrap_or(0) > 6_000_000 {
                let omp_kind = t.omp;
                *t = Tracked {
                    path: new_session(&dir, &agent, omp_kind),
                    omp: omp_kind,
                    acked: HashSet::new(),
                    seen: HashMap::new(),
                    injected: false,
                };
            }
        }
    }
    eprintln!(
        "crash test: {kills} kills in {runs} runs, {:?}: {by_kind:?}, {stats:?}",
        started.elapsed()
    );
    assert!(
        kills >= target,
        "only {kills} of {runs} runs were killed mid-flight"
    );

    // Every session still takes a write (a torn tail is moved aside first), then checks clean.
    for t in [&mut pi, &mut omp, &mut rw] {
        let p = t.path.to_str().expect("utf8").to_string();
        let o = arbor()
            .args(["--agent-dir", &agent_s, "check", "--repair", &p])
            .output()
            .expect("repair");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        t.injected = false;
        let o = arbor()
            .args([
                "--agent-dir",
                &agent_s,
                "append",
                &p,
                r#"{"type":"message","message":{"role":"user","content":"after","timestamp":9}}"#,
            ])
            .output()
            .expect("append");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        t.acked
            .insert(String::from_utf8_lossy(&o.stdout).trim().to_string());
        verify(t, &store, "final");
        let o = arbor()
            .args(["--agent-dir", &agent_s, "check", &p])
            .output()
            .expect("check");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        let o = arbor()
            .args(["--agent-dir", &agent_s, "context", &p])
            .output()
            .expect("context");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}
