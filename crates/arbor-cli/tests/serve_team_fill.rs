//! `arbor serve --from`: the first fill of the mirror, with the real binary over a SQLite
//! store. The mirror is a cache: its new files are written without a flush (a crash of the
//! machine is answered by comparing it whole after the next boot: `team.rs`'s unit tests),
//! while `arbor sync pull` into a person's session directory still flushes every new file
//! (both seen with strace). A server killed
//! (`kill -9`) in the middle of its first fill, its mirror then damaged further (a file torn,
//! one emptied, one removed), serves after a restart exactly the store's sessions, byte for
//! byte, none torn.
use arbor_testkit::served::Served;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A session id of the `n`th session: a UUID.
fn id_of(n: usize) -> String {
    format!("{n:08x}-0000-4000-8000-{n:012x}")
}

/// A machine's agent directory holding `n` small pi sessions (a header and four messages
/// each), pushed to the SQLite store `url`.
fn pushed(root: &Path, url: &str, n: usize) -> PathBuf {
    let agent = root.join("machine/agent");
    let dir = agent.join("sessions/--work-project--");
    std::fs::create_dir_all(&dir).expect("agent");
    for i in 0..n {
        let id = id_of(i);
        let mut text = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-11-23T10:00:00.000Z\",\"cwd\":\"/work/project\"}}\n"
        );
        let mut parent = "null".to_string();
        for k in 0..4 {
            let eid = format!("{:04x}{k:04x}", i % 0x10000);
            let role = if k % 2 == 0 { "user" } else { "assistant" };
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"{eid}\",\"parentId\":{parent},\"timestamp\":\"2026-11-23T10:00:0{k}.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":\"words of session {i} turn {k}\",\"timestamp\":179542800{k}000}}}}\n"
            ));
            parent = format!("\"{eid}\"");
        }
        std::fs::write(
            dir.join(format!("2026-11-23T10-00-00-000Z_{id}.jsonl")),
            text,
        )
        .expect("session");
    }
    let o = Command::new(bin())
        .args(["sync", "push", "--to", url])
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("ARBOR_MACHINE", "alpha")
        .env("USER", "ann")
        .env("ARBOR_CATALOG", root.join("ca.db"))
        .env_remove("ARBOR_SYNC_URL")
        .env("NO_COLOR", "1")
        .output()
        .expect("push");
    ok(&o);
    agent
}

/// The session files under `dir` (recursively), by the id their name ends with, with their
/// bytes.
fn files_by_id(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let id = arbor_store::locate::id_of_file(&p).expect("id");
                out.push((id, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// The session files under `dir` (recursively).
fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The mirror's directory (`…/arbor/team/<key>`) of the one store served with `cache` as
/// `$XDG_CACHE_HOME`, once it exists.
fn mirror_root(cache: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cache.join("arbor/team"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(dirs.len() <= 1, "{dirs:?}");
    dirs.pop()
}

/// The environment of a server whose cache (and so mirror) is under `root`.
fn envs(root: &Path) -> Vec<(String, String)> {
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    vec![
        ("HOME".into(), home.to_string_lossy().into_owned()),
        (
            "XDG_CACHE_HOME".into(),
            root.join("cache").to_string_lossy().into_owned(),
        ),
        ("ARBOR_TEAM_REFRESH_MS".into(), "200".into()),
    ]
}

/// The fsync-like calls on session files (`.jsonl`), and the truncations of lock files to
/// nothing, of `arbor ARGS` run under strace (`-f -y`: each call with the path of its descriptor), or `None` when
/// strace is not installed. With `until_listening`, the command is `arbor serve`: it is
/// killed once it says it listens (after its first fill).
fn flushes(
    args: &[&str],
    envs: &[(String, String)],
    trace: &Path,
    until_listening: bool,
) -> Option<(Vec<String>, Vec<String>)> {
    let mut traced = Command::new("strace");
    traced
        .args([
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=fsync,fdatasync,syncfs,sync,sync_file_range,ftruncate",
            "-o",
        ])
        .arg(trace)
        .arg(bin())
        .args(args)
        .envs(envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env_remove("ARBOR_SYNC_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match traced.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("strace: {e}"),
    };
    let err = child.stderr.take().expect("stderr");
    let mut said = Vec::new();
    for line in BufReader::new(err).lines() {
        let line = line.expect("stderr line");
        let listening = line.starts_with("arbor serve: listening on ");
        said.push(line);
        if until_listening && listening {
            // The traced arbor is strace's child: stopped; strace ends with it.
            let children =
                std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
                    .expect("strace's children");
            for pid in children.split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
            break;
        }
    }
    let status = child.wait().expect("strace ends");
    assert!(
        until_listening || status.success(),
        "{status}: {}",
        said.join("\n")
    );
    if until_listening {
        assert!(
            said.iter().any(|l| l.contains("listening")),
            "the server did not start: {}",
            said.join("\n")
        );
    }
    let text = std::fs::read_to_string(trace).expect("the trace");
    let on_sessions = text
        .lines()
        .filter(|l| !l.contains("ftruncate("))
        .filter(|l| {
            (l.contains(".jsonl>") && !l.contains(".jsonl.lock>"))
                || l.contains("syncfs(")
                || l.contains(" sync(")
        })
        .map(str::to_string)
        .collect();
    let emptied = text
        .lines()
        .filter(|l| l.contains("ftruncate(") && l.contains(".lock>, 0)"))
        .map(str::to_string)
        .collect();
    Some((on_sessions, emptied))
}

/// `arbor sync pull` into a person's session directory flushes each new session file (as
/// it did: its durability is unchanged); `arbor serve --from`'s first fill of its mirror
/// flushes none of them (nor the file system) and truncates no lock file to nothing. Needs
/// strace (without it the test is recorded as skipped, and fails
/// under `ARBOR_REQUIRE_ALL=1`).
#[test]
fn a_pull_flushes_each_new_file_and_the_mirror_none() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("team.db");
    let url = format!("sqlite:{}", store.display());
    const N: usize = 8;
    pushed(tmp.path(), &url, N);

    // `arbor sync pull` into another machine's empty agent directory.
    let other = tmp.path().join("other/agent");
    std::fs::create_dir_all(&other).expect("other");
    let pull_env = vec![
        (
            "PI_CODING_AGENT_DIR".into(),
            other.to_string_lossy().into_owned(),
        ),
        (
            "ARBOR_CATALOG".into(),
            tmp.path().join("cb.db").to_string_lossy().into_owned(),
        ),
        ("NO_COLOR".into(), "1".into()),
    ];
    let Some((each, _)) = flushes(
        &["sync", "pull", "--from", &url],
        &pull_env,
        &tmp.path().join("pull.trace"),
        false,
    ) else {
        arbor_testkit::skip::skip("strace is not installed (apt-get install strace)");
        return;
    };
    assert_eq!(session_files(&other).len(), N);
    let flushed: std::collections::BTreeSet<&str> = each
        .iter()
        .filter_map(|l| l.split('<').nth(1)?.split('>').next())
        .collect();
    assert_eq!(
        flushed.len(),
        N,
        "arbor sync pull flushes every new session file: {each:#?}"
    );

    // The server's first fill: the same files, none flushed.
    let envs = envs(tmp.path());
    let (each, emptied) = flushes(
        &["serve", "--addr", "127.0.0.1:0", "--from", &url],
        &envs,
        &tmp.path().join("serve.trace"),
        true,
    )
    .expect("strace ran once already");
    let mirror = mirror_root(&tmp.path().join("cache")).expect("the mirror");
    assert_eq!(session_files(&mirror.join("agent")).len(), N);
    assert!(
        each.is_empty(),
        "the mirror's files are not flushed: {each:#?}"
    );
    // Nor is a lock file truncated to nothing (ext4's `auto_da_alloc` writes such a file out
    // at its close: a wait for the disk per new session while others write).
    assert!(emptied.is_empty(), "lock files emptied: {emptied:#?}");
}

/// A server killed (`kill -9`) in the middle of its first fill (once some of the mirror's
/// files exist, before it says it listens: its cursor file behind its files), its mirror
/// then damaged as a crash of the machine could leave it (one file torn in its last line, one
/// empty, one gone), is started again: it serves every session of the store, its mirror
/// holding each byte for byte (the damaged ones pulled again whole), and their pages show
/// their last entries.
#[test]
fn a_fill_killed_midway_is_completed_at_the_next_start() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("team.db");
    let url = format!("sqlite:{}", store.display());
    const N: usize = 1500;
    let agent = pushed(tmp.path(), &url, N);
    let want = files_by_id(&agent);
    assert_eq!(want.len(), N);

    let envs = envs(tmp.path());
    let mut child = Command::new(bin())
        .args(["serve", "--addr", "127.0.0.1:0", "--from", &url])
        .envs(envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arbor serve starts");
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The event: the fill has written some of the mirror's files.
    let end = Instant::now() + Duration::from_secs(60);
    let cache = tmp.path().join("cache");
    loop {
        let written = mirror_root(&cache).map_or(0, |m| session_files(&m.join("agent")).len());
        if written >= 10 {
            break;
        }
        assert!(Instant::now() < end, "no mirror file after 60 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().expect("kill -9");
    child.wait().expect("killed");
    let said: Vec<String> = rx.try_iter().collect();
    assert!(
        !said.iter().any(|l| l.contains("listening")),
        "the fill ended before the kill (the test proves nothing): {said:?}"
    );
    let mirror = mirror_root(&cache).expect("the mirror");
    let files = session_files(&mirror.join("agent"));
    assert!(
        files.len() < N && !mirror.join("sync.tsv").exists(),
        "killed midway: {} of {N} files, no cursor file yet",
        files.len()
    );
    eprintln!("killed with {} of {N} mirror files written", files.len());
    // A crash of the machine: one file torn in its last line, one empty, one gone (of the
    // complete ones: the file being written at the kill may be empty already).
    let len = |p: &PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let whole: Vec<&PathBuf> = files.iter().filter(|p| len(p) > 100).collect();
    assert!(whole.len() >= 3, "{}", whole.len());
    std::fs::OpenOptions::new()
        .write(true)
        .open(whole[0])
        .and_then(|f| f.set_len(len(whole[0]) - 7))
        .expect("tear");
    std::fs::write(whole[1], b"").expect("empty");
    std::fs::remove_file(whole[2]).expect("remove");
    let damaged: Vec<String> = whole[..3]
        .iter()
        .map(|p| arbor_store::locate::id_of_file(p).expect("id"))
        .collect();

    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = Served::start(bin(), &["--from", &url], &envs);
    let got = files_by_id(&mirror.join("agent"));
    assert_eq!(got.len(), N, "every session of the store is mirrored");
    for ((id, bytes), (wid, wbytes)) in got.iter().zip(&want) {
        assert_eq!(id, wid);
        assert!(bytes == wbytes, "session {id}: the mirror's copy differs");
    }
    for id in &damaged {
        let page = s.get(&format!("/session/{id}"));
        assert!(page.starts_with("HTTP/1.1 200"), "{id}: {page}");
        let n: usize = usize::from_str_radix(&id[..8], 16).expect("n");
        assert!(
            page.contains(&format!("words of session {n} turn 3")),
            "{id}: its last entry is shown"
        );
    }
}
