//! `arbor sync push` into a real PostgreSQL, killed with SIGKILL at random moments while it
//! pushes new sessions and appends: every session in the store is always exactly what a
//! finished push left or what one is sending (never part of a session or of an append), and
//! a last push completes everything byte for byte. Then two machines pushing appends to the
//! same session at once: one goes through, the other is told or sends its line as a branch,
//! and after both sync nothing is lost. And `arbor sync pull` merging into a session (an
//! atomic rewrite) killed at random moments while "pi" appends to the same file: no line is
//! lost, the next sync finds the lines a killed merge left in the old file.
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn arbor(agent: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("NO_COLOR", "1")
        .output()
        .expect("run arbor")
}

fn states(agent: &Path, url: &str) -> Vec<(String, String)> {
    let o = arbor(agent, &["sync", "status", "--from", url, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or("").into(),
                r["state"].as_str().unwrap_or("").into(),
            )
        })
        .collect()
}

/// A pi session of about `kb` KB with `id`.
fn write_session(dir: &Path, id: &str, kb: usize) -> PathBuf {
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    let mut f = std::fs::File::create(&path).expect("create");
    writeln!(f, r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/crash"}}"#).expect("w");
    let pad = "x".repeat(900);
    let mut parent = "null".to_string();
    for i in 0..kb {
        writeln!(f, r#"{{"type":"message","id":"e{i:06}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{i} {pad}","timestamp":1}}}}"#).expect("w");
        parent = format!("\"e{i:06}\"");
    }
    path
}

fn append_line(path: &Path, n: usize) {
    let last = std::fs::read_to_string(path).expect("read");
    let count = last.lines().count();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    writeln!(f, r#"{{"type":"message","id":"x{count:06}{n}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"appended {n}","timestamp":2}}}}"#).expect("w");
}

#[test]
fn killed_pushes_leave_no_partial_session() {
    let server = arbor_testkit::pg::TestServer::start()
        .expect("a PostgreSQL server (.ci/run installs postgresql)");
    let url = server.url_for(&server.unique_database("arbor_crash").expect("db"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("a");
    let dir = agent.join("sessions/--work-crash--");
    std::fs::create_dir_all(&dir).expect("dir");
    let ids: Vec<String> = (0..12)
        .map(|i| format!("0195b000-0000-7000-8000-{i:012}"))
        .collect();
    let mut files: Vec<PathBuf> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| write_session(&dir, id, 300 + 150 * i))
        .collect();
    let mut seed = 0x9e37_79b9_u64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // Each file's line counts so far: what the store may hold of it.
    let mut history: std::collections::HashMap<String, Vec<i64>> = std::collections::HashMap::new();
    let count = |p: &Path| std::fs::read_to_string(p).expect("read").lines().count() as i64;
    let mut db = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let mut kills = 0;
    // Rounds killed after the push had stored some sessions and before it stored all.
    let (mut midway, mut last_synced) = (0, 0);
    for round in 0..14 {
        // Something new each round: a new session of 1.5 MB and appends to two others.
        if round > 0 {
            append_line(&files[rand(files.len() as u64) as usize], round);
            append_line(&files[rand(files.len() as u64) as usize], round + 100);
            let id = format!("0195b000-0000-7000-8001-{round:012}");
            files.push(write_session(&dir, &id, 1500));
        }
        for f in &files {
            let id = f
                .file_stem()
                .and_then(|n| n.to_str())
                .and_then(|n| n.split_once('_'))
                .map(|x| x.1.to_string())
                .expect("id");
            history.entry(id).or_default().push(count(f));
        }
        // What the store holds before this push (no table yet before the first).
        let stored_lines = |db: &mut postgres::Client| -> i64 {
            db.query_one(
                "SELECT coalesce(sum(lines), 0)::bigint FROM arbor_sessions",
                &[],
            )
            .map(|r| r.get(0))
            .unwrap_or(0)
        };
        let before = stored_lines(&mut db);
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(["sync", "push", "--to", &url])
            .env("PI_CODING_AGENT_DIR", &agent)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("push");
        // Killed once the push has stored its first session (an event, however slow the
        // machine), then at a random moment: in the middle of the others, or of the next.
        // Every third round is killed at once instead (before it stores anything).
        if round % 3 != 0 {
            let deadline = std::time::Instant::now() + Duration::from_secs(120);
            while stored_lines(&mut db) == before
                && child.try_wait().expect("wait").is_none()
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        std::thread::sleep(Duration::from_millis(rand(40)));
        if child.try_wait().expect("wait").is_none() {
            kills += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        // Every stored session is a complete earlier state of its file: in sync, or behind
        // by whole appends; never a conflict (a partial line set), never ahead.
        // What the store holds of each session is a state its file had, whole.
        if let Ok(rows) = db.query("SELECT id, lines FROM arbor_sessions", &[]) {
            for r in rows {
                let (id, n): (String, i64) = (r.get(0), r.get(1));
                assert!(
                    history.get(&id).is_some_and(|h| h.contains(&n)),
                    "round {round}: {id} stored with {n} lines, its file had {:?}",
                    history.get(&id)
                );
                let stored: i64 = db
                    .query_one(
                        "SELECT count(*) FROM arbor_entries WHERE session_id = $1",
                        &[&id],
                    )
                    .expect("count")
                    .get(0);
                assert_eq!(stored, n, "round {round}: {id}'s rows and count disagree");
            }
        }
        let now = states(&agent, &url);
        let synced = now.iter().filter(|(_, s)| s == "inSync").count();
        if synced > last_synced && synced < now.len() {
            midway += 1;
        }
        last_synced = synced;
        for (id, state) in now {
            assert!(
                matches!(state.as_str(), "inSync" | "localAhead" | "localOnly"),
                "round {round}: {id} is {state}"
            );
        }
    }
    assert!(kills > 0, "no push was killed while running");
    let o = arbor(&agent, &["sync", "push", "--to", &url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fin = states(&agent, &url);
    assert!(fin.iter().all(|(_, s)| s == "inSync"), "{fin:?}");
    // Pulled elsewhere: the same bytes.
    let b = tmp.path().join("b");
    std::fs::create_dir_all(&b).expect("b");
    let o = arbor(&b, &["sync", "pull", "--from", &url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in &files {
        let name = f.file_name().expect("name");
        let there = b.join("sessions/--work-crash--").join(name);
        assert_eq!(
            std::fs::read(f).expect("a"),
            std::fs::read(&there).expect("b"),
            "{}",
            name.to_string_lossy()
        );
    }
    eprintln!("{kills} of 14 pushes killed while running");
    eprintln!("{midway} killed after storing some sessions and before all");
    assert!(
        midway >= 2,
        "too few pushes killed mid-way ({midway}) for the test to mean much"
    );
}

#[test]
fn two_machines_pushing_the_same_session_at_once() {
    let server = arbor_testkit::pg::TestServer::start().expect("server");
    let url = server.url_for(&server.unique_database("arbor_two").expect("db"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let dir = a.join("sessions/--work-crash--");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&b).expect("b");
    let id = "0195b000-0000-7000-8000-0000000000aa";
    let fa = write_session(&dir, id, 2000);
    assert!(arbor(&a, &["sync", "push", "--to", &url]).status.success());
    assert!(arbor(&b, &["sync", "pull", "--from", &url])
        .status
        .success());
    let fb = b
        .join("sessions/--work-crash--")
        .join(fa.file_name().expect("name"));
    for round in 0..5 {
        append_line(&fa, 1000 + round);
        append_line(&fb, 2000 + round);
        let (ta, tb) = (fa.clone(), fb.clone());
        let spawn = |agent: &Path| {
            Command::new(env!("CARGO_BIN_EXE_arbor"))
                .args(["sync", "push", "--to", &url])
                .env("PI_CODING_AGENT_DIR", agent)
                .env("NO_COLOR", "1")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("push")
        };
        let (ca, cb) = (spawn(&a), spawn(&b));
        let (oa, ob) = (
            ca.wait_with_output().expect("a"),
            cb.wait_with_output().expect("b"),
        );
        let won: Vec<bool> = [&oa, &ob].iter().map(|o| o.status.success()).collect();
        // One takes the shared copy's writer lease first; the other either finds the copy
        // changed under it (told, exit 1, nothing sent) or came after and sent its line as
        // a branch. Never neither.
        assert!(
            won.iter().any(|w| *w),
            "round {round}: one goes through: {won:?}"
        );
        for (o, w) in [(&oa, won[0]), (&ob, won[1])] {
            if !w {
                let out = String::from_utf8_lossy(&o.stdout);
                assert!(
                    out.contains("changed while pushing") || out.contains("another writer"),
                    "round {round}: the loser is told: {out}"
                );
            }
        }
        // Both sync (pull merges the other's line, push sends its own): both files and the
        // store hold the same lines, nothing lost.
        for agent in [&a, &b, &a] {
            for action in [["pull", "--from"], ["push", "--to"]] {
                let o = arbor(agent, &["sync", action[0], action[1], &url]);
                assert!(
                    o.status.success(),
                    "round {round}: {}",
                    String::from_utf8_lossy(&o.stdout)
                );
            }
        }
        let c = tmp.path().join(format!("check{round}"));
        std::fs::create_dir_all(&c).expect("c");
        assert!(arbor(&c, &["sync", "pull", "--from", &url])
            .status
            .success());
        let pulled = c
            .join("sessions/--work-crash--")
            .join(fa.file_name().expect("name"));
        let sorted = |p: &Path| {
            let text = std::fs::read_to_string(p).expect("read");
            let mut v: Vec<String> = text.lines().map(str::to_string).collect();
            v.sort();
            v
        };
        let (la, lb, ls) = (sorted(&ta), sorted(&tb), sorted(&pulled));
        assert_eq!(la, lb, "round {round}");
        assert_eq!(la, ls, "round {round}");
        assert_eq!(
            la.len(),
            2001 + 2 * (round + 1),
            "round {round}: every line once"
        );
    }
}

/// A pull that merges (inserts the other machine's entries before this file's last line:
/// an atomic rewrite that keeps the old file as `<session>.arbor-merge`) killed with SIGKILL
/// at random moments while a thread appends pi-shaped lines to the same file (open, write,
/// close, no lock, as pi does). After a last pull and push without kills, every line the
/// appender wrote is in the file once, and in the store; no sidecar is left.
#[test]
fn killed_merges_lose_no_line_appended_during_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", tmp.path().join("shared.db").display());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let dir = a.join("sessions/--work-crash--");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(b.join("sessions")).expect("dir");
    let id = "0195b000-0000-7000-8002-000000000001";
    // About 300 KB.
    let pa = write_session(&dir, id, 300);
    assert!(arbor(&a, &["sync", "push", "--to", &url]).status.success());
    assert!(arbor(&b, &["sync", "pull", "--from", &url])
        .status
        .success());
    let pb = std::fs::read_dir(b.join("sessions/--work-crash--"))
        .expect("b")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("b's file");
    let line = |who: &str, n: usize| {
        format!(
            r#"{{"type":"message","id":"{who}{n:06}","parentId":"e000000","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{who} {n}","timestamp":2}}}}"#
        )
    };
    let add = |p: &Path, text: &str| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .expect("open");
        writeln!(f, "{text}").expect("append");
    };
    let mut seed = 0x2545_f491_u64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut written = 0usize;
    let (mut kills, mut leftovers, mut merged, mut busy) = (0, 0, 0, 0);
    for round in 0..40 {
        // b has something new, and so has a: the pull merges (inserts before a's last line).
        add(&pb, &line("b", round));
        assert!(arbor(&b, &["sync", "push", "--to", &url]).status.success());
        add(&pa, &line("a", written));
        written += 1;
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(["sync", "pull", "--from", &url])
            .env("PI_CODING_AGENT_DIR", &a)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("pull");
        // "pi" appends while the pull runs; once the merge's rewrite has begun (its temporary
        // file or the old file's sidecar is there: an event, however slow the machine), it
        // appends again and the pull is killed at a random moment shortly after.
        // Every fourth pull runs to its end (the merge then happens, whatever the timing).
        if round % 4 == 3 {
            assert!(child.wait().expect("wait").success());
            if std::fs::read_to_string(&pa)
                .expect("a")
                .contains(&line("b", round))
            {
                merged += 1;
            }
            continue;
        }
        let name = pa.file_name().expect("name").to_string_lossy().into_owned();
        // Odd rounds wait for the old file's second name itself (the moment right before the
        // rename) and kill at once.
        let at_link = round % 2 == 1;
        let rewriting = || {
            std::fs::read_dir(&dir).expect("dir").flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                (!at_link && n.starts_with(&format!(".{name}.")) && n.ends_with(".tmp"))
                    || n == format!("{name}.arbor-merge")
            })
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut next = std::time::Instant::now() + Duration::from_millis(rand(20));
        while !rewriting()
            && child.try_wait().expect("wait").is_none()
            && std::time::Instant::now() < deadline
        {
            if std::time::Instant::now() >= next && rand(4) == 0 {
                add(&pa, &line("a", written));
                written += 1;
                next = std::time::Instant::now() + Duration::from_millis(20 + rand(40));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        let wait = if at_link { 300 } else { 3_000 };
        std::thread::sleep(Duration::from_micros(rand(wait)));
        add(&pa, &line("a", written));
        written += 1;
        std::thread::sleep(Duration::from_micros(rand(wait)));
        if child.try_wait().expect("wait").is_none() {
            kills += 1;
        }
        let _ = child.kill();
        let out = child.wait_with_output().expect("wait");
        if out.status.success() && String::from_utf8_lossy(&out.stdout).contains("kept changing") {
            busy += 1;
        }
        if std::fs::read_to_string(&pa)
            .expect("a")
            .contains(&line("b", round))
        {
            merged += 1;
        }
        if std::fs::symlink_metadata(format!("{}.arbor-merge", pa.display())).is_ok() {
            leftovers += 1;
        }
    }
    for agent in [&a, &b, &a] {
        let o = arbor(agent, &["sync", "pull", "--from", &url]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        let o = arbor(agent, &["sync", "push", "--to", &url]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
    let text = std::fs::read_to_string(&pa).expect("a");
    for n in 0..written {
        let want = line("a", n);
        assert_eq!(
            text.lines().filter(|l| *l == want).count(),
            1,
            "line a{n:06} once in a's file ({written} written, {kills} pulls killed)"
        );
    }
    let text_b = std::fs::read_to_string(&pb).expect("b");
    let mut la: Vec<&str> = text.lines().collect();
    let mut lb: Vec<&str> = text_b.lines().collect();
    la.sort_unstable();
    lb.sort_unstable();
    assert_eq!(la, lb, "both machines hold the same lines");
    assert!(
        std::fs::symlink_metadata(format!("{}.arbor-merge", pa.display())).is_err(),
        "no sidecar left"
    );
    eprintln!(
        "{kills} of 30 merging pulls killed while running (10 more ran to their end), {merged} \
         of the 40 merged before the kill or their end, {busy} gave \
         up (the file kept changing), {leftovers} left the old file as a sidecar; {written} lines \
         appended during them"
    );
    assert!(kills > 0, "no pull was killed while running");
    assert!(merged >= 10, "the pulls that ran to their end merged");
}
