//! `arbor sync` between two agent directories (two machines) through a SQLite store: push,
//! pull byte-identical files in pi's layout (with `--map-cwd`), an append travelling back,
//! a conflict reported (exit 1) and kept as a fork, and `--watch` pushing an append within a
//! second.
use arbor_testkit::as_nobody;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn arbor(agent: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent)
        .env_remove("ARBOR_SYNC_URL")
        .env("NO_COLOR", "1")
        .output()
        .expect("run arbor")
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

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files(&p));
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn find(dir: &Path, name_part: &str) -> PathBuf {
    files(dir)
        .into_iter()
        .find(|p| p.to_string_lossy().contains(name_part))
        .unwrap_or_else(|| panic!("{name_part} under {}", dir.display()))
}

fn states(agent: &Path, url: &str) -> Vec<(String, String)> {
    let out = ok(&arbor(agent, &["sync", "status", "--from", url, "--json"]));
    let v: Value = serde_json::from_str(&out).expect("json");
    v.as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or("").to_string(),
                r["state"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn sessions_travel_through_sqlite() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", tmp.path().join("shared.db").display());
    travel(&url);
}

#[test]
fn sessions_travel_through_postgres() {
    let server = arbor_testkit::pg::TestServer::start()
        .expect("a PostgreSQL server (.ci/run installs postgresql)");
    let db = server.unique_database("arbor_sync").expect("database");
    travel(&server.url_for(&db));
}

/// Two machines (agent directories) through the store at `url`.
/// `--agent-dir` names this machine's side, as for every other command: before, sync read
/// only `$PI_CODING_AGENT_DIR` (or the defaults) and `--agent-dir X` alone synced 0 sessions.
#[test]
fn sync_uses_agent_dir() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", tmp.path().join("shared.db").display());
    let (a, b, env) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("env"),
    );
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    std::fs::create_dir_all(&b).expect("dirs");
    std::fs::create_dir_all(&env).expect("dirs");
    for f in files(&root().join("demo/sessions")) {
        std::fs::copy(&f, project.join(f.file_name().expect("name"))).expect("copy");
    }
    let run = |dir: &Path, args: &[&str]| {
        let mut full = vec!["--agent-dir", dir.to_str().expect("utf-8")];
        full.extend_from_slice(args);
        Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(&full)
            .env("PI_CODING_AGENT_DIR", &env)
            .env("HOME", &env)
            .env_remove("ARBOR_SYNC_URL")
            .env("NO_COLOR", "1")
            .output()
            .expect("run arbor")
    };
    let out = ok(&run(&a, &["sync", "push", "--to", &url]));
    assert!(out.contains("4 sessions, 0 in sync"), "{out}");
    ok(&run(&b, &["sync", "pull", "--from", &url]));
    assert_eq!(files(&b).len(), 4, "{:?}", files(&b));
    assert!(files(&env).is_empty(), "{:?}", files(&env));
    // The cursor is kept in the directory given.
    assert!(b.join("arbor").is_dir());
}

fn travel(url: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    std::fs::create_dir_all(&b).expect("dirs");
    for f in files(&root().join("demo/sessions")) {
        std::fs::copy(&f, project.join(f.file_name().expect("name"))).expect("copy");
    }
    let url = url.to_string();
    let out = ok(&arbor(&a, &["sync", "push", "--to", &url]));
    assert!(out.contains("4 sessions, 0 in sync"), "{out}");
    // Nothing new: nothing sent.
    let out = ok(&arbor(&a, &["sync", "push", "--to", &url]));
    assert!(out.contains("4 sessions, 4 in sync; 0 lines"), "{out}");
    // The other machine: everything shared only, then pulled into its project directory.
    assert!(states(&b, &url).iter().all(|(_, s)| s == "remoteOnly"));
    ok(&arbor(
        &b,
        &[
            "sync",
            "pull",
            "--from",
            &url,
            "--map-cwd",
            "/work/project=/home/b/proj",
        ],
    ));
    for f in files(&project) {
        let name = f.file_name().expect("name").to_string_lossy().into_owned();
        let there = find(&b, &name);
        assert_eq!(
            std::fs::read(&f).expect("a"),
            std::fs::read(&there).expect("b"),
            "{name}"
        );
        if name.contains("01a2031c") {
            assert!(
                there.starts_with(b.join("sessions/--home-b-proj--")),
                "{}",
                there.display()
            );
        }
    }
    assert!(states(&b, &url).iter().all(|(_, s)| s == "inSync"));
    // An append on b goes back to a.
    let id = "01a2031c-a4c8-72e3-9ce7-b742438e02ad";
    ok(&arbor(
        &b,
        &[
            "append",
            id,
            r#"{"type":"message","message":{"role":"user","content":"from b","timestamp":1767225600000}}"#,
        ],
    ));
    assert!(states(&b, &url).contains(&(id.to_string(), "localAhead".into())));
    ok(&arbor(&b, &["sync", "push", "--to", &url]));
    ok(&arbor(&a, &["sync", "pull", "--from", &url]));
    let (fa, fb) = (find(&a, id), find(&b, id));
    assert_eq!(
        std::fs::read(&fa).expect("a"),
        std::fs::read(&fb).expect("b")
    );
    let ctx_a = ok(&arbor(&a, &["context", fa.to_str().expect("utf-8")]));
    let ctx_b = ok(&arbor(&b, &["context", fb.to_str().expect("utf-8")]));
    assert_eq!(ctx_a, ctx_b);
    assert!(ctx_a.contains("from b"));
    // Both append: the session branched. Both sides end with both entries, and each file's
    // last line (where pi resumes) is its own machine's.
    ok(&arbor(
        &a,
        &[
            "append",
            id,
            r#"{"type":"message","message":{"role":"user","content":"a says","timestamp":1767225600001}}"#,
        ],
    ));
    ok(&arbor(
        &b,
        &[
            "append",
            id,
            r#"{"type":"message","message":{"role":"user","content":"b says","timestamp":1767225600002}}"#,
        ],
    ));
    ok(&arbor(&a, &["sync", "push", "--to", &url]));
    assert!(states(&b, &url).contains(&(id.to_string(), "diverged".into())));
    let out = ok(&arbor(&b, &["sync", "pull", "--from", &url]));
    assert!(out.contains("merged 1 line"), "{out}");
    ok(&arbor(&b, &["sync", "push", "--to", &url]));
    ok(&arbor(&a, &["sync", "pull", "--from", &url]));
    let last = |p: &Path| {
        std::fs::read_to_string(p)
            .expect("read")
            .lines()
            .last()
            .expect("a line")
            .to_string()
    };
    assert!(last(&fa).contains("a says") && last(&fb).contains("b says"));
    let (text_a, text_b) = (
        std::fs::read_to_string(&fa).expect("a"),
        std::fs::read_to_string(&fb).expect("b"),
    );
    let mut la: Vec<&str> = text_a.lines().collect();
    let mut lb: Vec<&str> = text_b.lines().collect();
    la.sort_unstable();
    lb.sort_unstable();
    assert_eq!(la, lb, "the same lines on both sides");
    // Nothing new: a second round changes no byte on either side.
    for m in [&a, &b] {
        let out = ok(&arbor(m, &["sync", "pull", "--from", &url]));
        assert!(out.contains("0 lines"), "{out}");
        let out = ok(&arbor(m, &["sync", "push", "--to", &url]));
        assert!(out.contains("0 lines"), "{out}");
    }
    assert_eq!(std::fs::read_to_string(&fa).expect("a"), text_a);
    assert_eq!(std::fs::read_to_string(&fb).expect("b"), text_b);
    // A change inside what both agreed on (b's copy of a's entry rewritten): a conflict,
    // reported with exit status 1, never merged.
    std::fs::write(&fb, text_b.replace("a says", "a said")).expect("rewrite b");
    let before = std::fs::read(&fb).expect("b");
    let o = arbor(&b, &["sync", "push", "--to", &url]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("CONFLICT"));
    let o = arbor(&b, &["sync", "pull", "--from", &url]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&fb).expect("b"),
        before,
        "a conflict changes nothing"
    );
    // --fork-on-conflict keeps both: b's session as it was, the shared copy as a fork of it.
    let out = ok(&arbor(
        &b,
        &["sync", "pull", "--from", &url, "--fork-on-conflict"],
    ));
    assert!(out.contains("kept as fork"), "{out}");
    assert_eq!(std::fs::read(&fb).expect("b"), before);
    let forks: Vec<PathBuf> = files(&b)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .map(|t| t.contains("\"parentSession\"") && t.contains("a says"))
                .unwrap_or(false)
        })
        .collect();
    assert_eq!(forks.len(), 1, "{forks:?}");
    let fork_text = std::fs::read_to_string(&forks[0]).expect("fork");
    assert!(fork_text.contains("a says") && !fork_text.contains("a said"));
    ok(&arbor(&b, &["context", forks[0].to_str().expect("utf-8")]));
    // Resolved once: no later sync reports it again or writes another fork.
    ok(&arbor(
        &b,
        &["sync", "pull", "--from", &url, "--fork-on-conflict"],
    ));
    ok(&arbor(&b, &["sync", "push", "--to", &url]));
    assert!(states(&b, &url).contains(&(id.to_string(), "resolved".into())));
    assert_eq!(files(&b).len(), files(&a).len() + 1, "one fork");
}

#[test]
fn watch_pushes_an_append_within_a_second() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a");
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    let src = files(&root().join("demo/sessions"))
        .into_iter()
        .find(|p| p.to_string_lossy().contains("01a2031c-af92"))
        .expect("demo");
    std::fs::copy(&src, project.join(src.file_name().expect("name"))).expect("copy");
    let url = format!("sqlite:{}", tmp.path().join("shared.db").display());
    let printed = tmp.path().join("watch.out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["sync", "push", "--to", &url, "--watch"])
        .env("PI_CODING_AGENT_DIR", &a)
        .env("NO_COLOR", "1")
        .stdout(std::fs::File::create(&printed).expect("out"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("watch");
    let id = "01a2031c-af92-7318-96c9-1aa232733476";
    let t0 = Instant::now();
    // (Until the first push has made the store, `status` says there is none.)
    let first_pushed = || {
        let o = arbor(&a, &["sync", "status", "--from", &url, "--json"]);
        o.status.success()
            && String::from_utf8_lossy(&o.stdout).contains(id)
            && states(&a, &url).contains(&(id.to_string(), "inSync".into()))
    };
    while !first_pushed() {
        assert!(t0.elapsed() < Duration::from_secs(10), "first push");
        std::thread::sleep(Duration::from_millis(50));
    }
    ok(&arbor(
        &a,
        &[
            "append",
            id,
            r#"{"type":"message","message":{"role":"user","content":"watched","timestamp":1767225600000}}"#,
        ],
    ));
    let t1 = Instant::now();
    let mut took = None;
    while t1.elapsed() < Duration::from_secs(5) {
        if states(&a, &url).contains(&(id.to_string(), "inSync".into())) {
            took = Some(t1.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = took.expect("the append was pushed");
    assert!(took < Duration::from_secs(1), "pushed after {took:?}");
    // A change that moves nothing (another file in the project directory) prints nothing;
    // the next append prints again. Events are handled in order, so once that append is
    // pushed, the run for the other file is done too.
    // Each run ends by replacing the cursor file (a new inode): that is the event waited for.
    let cursor_inode = || -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        let dir = a.join("arbor");
        std::fs::read_dir(&dir)
            .ok()?
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("sync-"))
            .and_then(|e| e.metadata().ok())
            .map(|m| m.ino())
    };
    let before = cursor_inode();
    std::fs::write(project.join("notes.txt"), "not a session").expect("notes");
    let t_notes = Instant::now();
    while cursor_inode() == before {
        assert!(
            t_notes.elapsed() < Duration::from_secs(5),
            "a run after notes.txt"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    ok(&arbor(
        &a,
        &[
            "append",
            id,
            r#"{"type":"message","message":{"role":"user","content":"watched again","timestamp":1767225600001}}"#,
        ],
    ));
    let t2 = Instant::now();
    while !states(&a, &url).contains(&(id.to_string(), "inSync".into())) {
        assert!(
            t2.elapsed() < Duration::from_secs(5),
            "second append pushed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // (The report is printed after the store has the line: wait for the third.)
    let reports = || -> Vec<String> {
        std::fs::read_to_string(&printed)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" in sync; "))
            .map(str::to_string)
            .collect()
    };
    let t3 = Instant::now();
    while reports().len() < 3 && t3.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let r = reports();
    assert_eq!(
        r.len(),
        3,
        "the first push and one per append, nothing else: {r:#?}"
    );
    assert!(
        r[1..].iter().all(|l| l.contains("; 1 line (")),
        "each report after the first is an append's: {r:#?}"
    );
}

/// omp's blobs travel with the lines that name them: pushed from one agent directory's
/// `blobs/`, pulled into the other's, where the session's context (which inlines them)
/// is then the same; a blob missing on the pushing side is reported and the lines still go.
#[test]
fn omp_blobs_travel_with_their_session() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite:{}", tmp.path().join("shared.db").display());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let golden = root().join("goldens/omp/gen-seed22-n60-images.jsonl");
    let text = std::fs::read_to_string(&golden).expect("golden");
    let mut hashes: Vec<String> = text
        .match_indices("blob:sha256:")
        .map(|(i, m)| text[i + m.len()..i + m.len() + 64].to_string())
        .collect();
    hashes.sort();
    hashes.dedup();
    assert!(!hashes.is_empty());
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    std::fs::create_dir_all(a.join("blobs")).expect("blobs");
    std::fs::create_dir_all(&b).expect("b");
    let file_a = project.join("2026-11-22T13-25-22-285Z_omp.jsonl");
    std::fs::copy(&golden, &file_a).expect("copy");
    for h in &hashes {
        std::fs::copy(
            root().join("goldens/omp/agent/blobs").join(h),
            a.join("blobs").join(h),
        )
        .expect("blob");
    }
    let pushed: Value =
        serde_json::from_str(&ok(&arbor(&a, &["sync", "push", "--to", &url, "--json"])))
            .expect("json");
    assert_eq!(pushed[0]["blobs"], hashes.len(), "{pushed}");
    assert!(pushed[0].get("missingBlobs").is_none(), "{pushed}");
    let out = ok(&arbor(&b, &["sync", "pull", "--from", &url]));
    assert!(out.contains(&format!("and {} blob", hashes.len())), "{out}");
    for h in &hashes {
        assert_eq!(
            std::fs::read(b.join("blobs").join(h)).expect("pulled blob"),
            std::fs::read(a.join("blobs").join(h)).expect("blob"),
            "{h}"
        );
    }
    let file_b = find(&b, "_omp.jsonl");
    let ctx = |agent: &Path, f: &Path| {
        ok(&arbor(
            agent,
            &["context", f.to_str().expect("utf-8"), "--llm"],
        ))
    };
    let (ca, cb) = (ctx(&a, &file_a), ctx(&b, &file_b));
    assert!(
        ca.contains("data:image") || ca.contains("\"data\""),
        "images inlined"
    );
    assert_eq!(ca, cb, "the same context, images included");
    // Without its blobs: the lines still go, the missing blobs are named.
    let c = tmp.path().join("c");
    let url2 = format!("sqlite:{}", tmp.path().join("other.db").display());
    std::fs::create_dir_all(c.join("sessions/--work-project--")).expect("c");
    std::fs::copy(&golden, c.join("sessions/--work-project--/s_omp.jsonl")).expect("copy");
    let o = arbor(&c, &["sync", "push", "--to", &url2, "--json"]);
    let v: Value = serde_json::from_str(&ok(&o)).expect("json");
    assert_eq!(v[0]["blobs"], 0);
    assert_eq!(
        v[0]["missingBlobs"].as_array().map(Vec::len),
        Some(hashes.len()),
        "{v}"
    );
    assert_eq!(v[0]["state"], "localOnly");
    assert!(v[0]["lines"].as_u64().unwrap_or(0) > 0);
    // Another machine pulls it without the blobs: the session opens all the same in show,
    // context and export, the images marked missing (never a hard failure).
    let d = tmp.path().join("d");
    std::fs::create_dir_all(&d).expect("d");
    let o = arbor(&d, &["sync", "pull", "--from", &url2]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let file_d = find(&d, "s_omp.jsonl");
    let fd = file_d.to_str().expect("utf-8");
    let shown = ok(&arbor(&d, &["show", fd]));
    assert!(shown.contains("[image missing: blob "), "{shown}");
    ok(&arbor(&d, &["context", fd]));
    let out = d.join("out.md");
    ok(&arbor(
        &d,
        &[
            "export",
            "--format",
            "md",
            "-o",
            out.to_str().expect("utf-8"),
            fd,
        ],
    ));
    // The blobs turn up on the pushing side: the next push sends them (they were remembered
    // as missing), the next pull fetches them.
    std::fs::create_dir_all(c.join("blobs")).expect("blobs");
    for h in &hashes {
        std::fs::copy(
            root().join("goldens/omp/agent/blobs").join(h),
            c.join("blobs").join(h),
        )
        .expect("blob");
    }
    let v: Value =
        serde_json::from_str(&ok(&arbor(&c, &["sync", "push", "--to", &url2, "--json"])))
            .expect("json");
    assert_eq!(v[0]["blobs"], hashes.len(), "{v}");
    // (A push from d in between must not forget what d still lacks.)
    ok(&arbor(&d, &["sync", "push", "--to", &url2]));
    ok(&arbor(&d, &["sync", "pull", "--from", &url2]));
    for h in &hashes {
        assert!(d.join("blobs").join(h).is_file(), "blob {h} pulled");
    }
    assert_eq!(ctx(&d, &file_d), ca, "the same context, images included");
}

/// A server that wants a password: arbor takes it from the password file (`$PGPASSFILE`) or
/// the URL, and no message, failed or not, shows it.
#[test]
fn postgres_passwords_come_from_the_password_file_and_are_never_printed() {
    let server = arbor_testkit::pg::TestServer::start()
        .expect("a PostgreSQL server (.ci/run installs postgresql)");
    if !server.owns_server() {
        return; // an external server's authentication is its own
    }
    let db = server.unique_database("arbor_auth").expect("database");
    let secret = "tr0ub4dor-and-3";
    let mut c = server.connect().expect("admin");
    c.batch_execute(&format!(
        "CREATE ROLE ann LOGIN PASSWORD '{secret}'; ALTER DATABASE {db} OWNER TO ann"
    ))
    .expect("role");
    let hba: String = c.query_one("SHOW hba_file", &[]).expect("hba").get(0);
    let rules = std::fs::read_to_string(&hba).expect("read hba");
    std::fs::write(&hba, format!("local all ann scram-sha-256\n{rules}")).expect("write hba");
    c.query_one("SELECT pg_reload_conf()", &[]).expect("reload");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let base = server.url_for(&db);
    let as_ann = base.replacen("postgres://postgres@", "postgres://ann@", 1);
    assert_ne!(as_ann, base);
    let with_pw = base.replacen(
        "postgres://postgres@",
        &format!("postgres://ann:{secret}@"),
        1,
    );
    let wrong_pw = base.replacen("postgres://postgres@", "postgres://ann:wrong-one@", 1);

    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a");
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    for f in files(&root().join("demo/sessions")).into_iter().take(1) {
        std::fs::copy(&f, project.join(f.file_name().expect("name"))).expect("copy");
    }
    let run = |url: &str, pgpass: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbor"));
        cmd.args(["sync", "push", "--to", url])
            .env("PI_CODING_AGENT_DIR", &a)
            .env("NO_COLOR", "1")
            .env_remove("ARBOR_SYNC_URL")
            .env_remove("PGPASSWORD")
            .env("HOME", tmp.path());
        match pgpass {
            Some(p) => cmd.env("PGPASSFILE", p),
            None => cmd.env_remove("PGPASSFILE"),
        };
        cmd.output().expect("run arbor")
    };
    let said = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // No password anywhere: refused by the server.
    let o = run(&as_ann, None);
    assert!(!o.status.success(), "{}", said(&o));
    // A wrong one in the URL: refused, and the message shows neither it nor the right one.
    let o = run(&wrong_pw, None);
    assert!(!o.status.success());
    let text = said(&o);
    assert!(
        !text.contains("wrong-one") && !text.contains(secret),
        "{text}"
    );
    assert!(text.contains("ann:***@"), "{text}");
    // A wrong one as a URL parameter, in --to and in $ARBOR_SYNC_URL: refused, not shown.
    let sep = if as_ann.contains('?') { '&' } else { '?' };
    let in_query = format!("{as_ann}{sep}password=wrong-one");
    let o = run(&in_query, None);
    let text = said(&o);
    assert!(!o.status.success(), "{text}");
    assert!(!text.contains("wrong-one"), "{text}");
    assert!(text.contains("password=***"), "{text}");
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["sync", "status"])
        .env("PI_CODING_AGENT_DIR", &a)
        .env("NO_COLOR", "1")
        .env("ARBOR_SYNC_URL", &in_query)
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env("HOME", tmp.path())
        .output()
        .expect("run arbor");
    let text = said(&o);
    assert!(!o.status.success(), "{text}");
    assert!(!text.contains("wrong-one"), "{text}");
    // From the password file (mode 0600, as libpq wants it).
    let pgpass = tmp.path().join("pgpass");
    std::fs::write(&pgpass, format!("# test\n*:*:{db}:ann:{secret}\n")).expect("pgpass");
    std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod");
    let o = run(&as_ann, Some(&pgpass));
    let text = said(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("sent"), "{text}");
    assert!(!text.contains(secret), "{text}");
    // From the URL.
    let o = run(&with_pw, None);
    let text = said(&o);
    assert!(o.status.success(), "{text}");
    assert!(!text.contains(secret), "{text}");
}

/// A password is never printed, in any form libpq takes it (`USER:PW@`, `?password=`,
/// `key=value` strings, quoted, with a raw `@`, in `$ARBOR_SYNC_URL`), whatever fails: a
/// server that is not there, a string that does not parse, a form arbor does not take.
#[test]
fn postgres_passwords_in_any_form_are_never_printed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a");
    std::fs::create_dir_all(a.join("sessions")).expect("dirs");
    // Port 1 on the loopback: nothing listens, the connection is refused.
    let cases = [
        ("postgres://ann:Pw1-x9@127.0.0.1:1/db", "Pw1-x9"),
        // A host that does not exist.
        ("postgres://ann:Pw0-x9@no-such-host.invalid/db", "Pw0-x9"),
        ("postgresql://ann:Pw2@x9@127.0.0.1:1/db", "Pw2@x9"),
        ("postgres://127.0.0.1:1/db?password=Pw3-x9", "Pw3-x9"),
        (
            "postgres://127.0.0.1:1/db?sslmode=bogus&password=Pw4-x9",
            "Pw4-x9",
        ),
        ("postgres://127.0.0.1:1/db?password=Pw5&x9=1", "x9"),
        ("host=127.0.0.1 port=1 password=Pw6-x9", "Pw6-x9"),
        ("host=127.0.0.1 port=1 password='Pw7 x9'", "Pw7"),
        ("host=127.0.0.1 port=1 password = Pw8-x9", "Pw8-x9"),
    ];
    for (url, secret) in cases {
        for via_env in [false, true] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbor"));
            cmd.args(["sync", "push"])
                .env("PI_CODING_AGENT_DIR", &a)
                .env("NO_COLOR", "1")
                .env_remove("PGPASSWORD")
                .env("PGPASSFILE", tmp.path().join("none"));
            if via_env {
                cmd.env("ARBOR_SYNC_URL", url);
            } else {
                cmd.args(["--to", url]).env_remove("ARBOR_SYNC_URL");
            }
            let o = cmd.output().expect("run arbor");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(!o.status.success(), "{url}: {text}");
            assert!(!text.contains(secret), "{url} (env: {via_env}): {text}");
            assert!(text.contains("***"), "{url}: {text}");
        }
    }
}

/// A server that takes TLS only: arbor verifies its certificate (against `$PGSSLROOTCERT`
/// when set, else the system's roots, which do not know the test CA) and syncs over it.
#[test]
fn postgres_over_tls_verifies_the_server() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let openssl = |args: &[&str]| {
        let o = Command::new("openssl")
            .args(args)
            .current_dir(d)
            .output()
            .expect("openssl (.ci/run installs it)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    fn with(v: &[&'static str], ec: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
        [v, ec, extra].concat()
    }
    openssl(&with(
        &["req", "-x509", "-days", "2"],
        &ec,
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=arbor test CA",
        ],
    ));
    openssl(&with(
        &["req"],
        &ec,
        &[
            "-keyout",
            "other.key",
            "-out",
            "other.crt",
            "-x509",
            "-days",
            "2",
            "-subj",
            "/CN=another CA",
        ],
    ));
    openssl(&with(
        &["req"],
        &ec,
        &[
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    ));
    std::fs::write(d.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    let server =
        arbor_testkit::pg::TestServer::start_tls(&d.join("server.crt"), &d.join("server.key"))
            .expect("a PostgreSQL server with TLS");
    let db = server.unique_database("arbor_tls").expect("database");
    let url = server.tls_url_for(&db).expect("tls url");

    let a = d.join("a");
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    for f in files(&root().join("demo/sessions")).into_iter().take(2) {
        std::fs::copy(&f, project.join(f.file_name().expect("name"))).expect("copy");
    }
    let run = |url: &str, roots: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbor"));
        cmd.args(["sync", "push", "--to", url])
            .env("PI_CODING_AGENT_DIR", &a)
            .env("NO_COLOR", "1")
            .env_remove("ARBOR_SYNC_URL");
        match roots {
            Some(r) => cmd.env("PGSSLROOTCERT", d.join(r)),
            None => cmd.env_remove("PGSSLROOTCERT"),
        };
        let o = cmd.output().expect("run arbor");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.success(), text)
    };
    // The system's roots do not know the test CA; neither does another CA.
    let (ok1, text) = run(&url, None);
    assert!(
        !ok1 && text.to_lowercase().contains("certificate"),
        "{text}"
    );
    let (ok2, text) = run(&url, Some("other.crt"));
    assert!(
        !ok2 && text.to_lowercase().contains("certificate"),
        "{text}"
    );
    // Plain TCP is refused by the server (TLS only).
    let plain = url.replace("sslmode=require", "sslmode=disable");
    let (ok3, text) = run(&plain, Some("ca.crt"));
    assert!(!ok3, "{text}");
    // Trusting the test CA: synced over TLS.
    let (ok4, text) = run(&url, Some("ca.crt"));
    assert!(ok4, "{text}");
    assert!(text.contains("2 sessions, 0 in sync"), "{text}");
    let (ok5, text) = run(&url, Some("ca.crt"));
    assert!(ok5 && text.contains("2 sessions, 2 in sync"), "{text}");
}

/// Every file under `dir` (not following symlinks), directories included.
fn everything(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.clone());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(everything(&p));
            }
        }
    }
    out
}

/// A shared store is untrusted input: a row whose id climbs out (`x/../../…`), whose
/// creation time is an absolute path, whose cwd is made of `..`, whose recorded file name
/// belongs elsewhere, or whose lines are another session's, writes nothing outside the
/// pulling machine's `sessions/<project>/`; the bad rows are refused by name (exit 1) and the
/// good one is still pulled.
#[test]
fn a_tampered_store_writes_nothing_outside_the_sessions_directory() {
    // No `.` in the directory's name: an absolute creation time is then a path as it is.
    let tmp = tempfile::Builder::new()
        .prefix("arbor-sync-")
        .tempdir()
        .expect("tempdir");
    let db = tmp.path().join("shared.db");
    let store = arbor_db::SqliteStore::open(&db).expect("store");
    tampered(tmp.path(), &store, &format!("sqlite:{}", db.display()));
}

/// The same through PostgreSQL (the checks are the sync's, whatever the store).
#[test]
fn a_tampered_postgres_store_writes_nothing_outside_the_sessions_directory() {
    let server = arbor_testkit::pg::TestServer::start()
        .expect("a PostgreSQL server (.ci/run installs postgresql)");
    let db = server.unique_database("arbor_tampered").expect("database");
    let url = server.url_for(&db);
    let tmp = tempfile::Builder::new()
        .prefix("arbor-sync-")
        .tempdir()
        .expect("tempdir");
    let store = arbor_db::PgStore::connect(&url).expect("store");
    tampered(tmp.path(), &store, &url);
}

/// Puts tampered rows into `store` (at `url`), pulls into an agent directory in `dir`, and
/// checks that nothing was written outside its `sessions/`.
fn tampered(dir: &Path, store: &dyn arbor_store::backend::SessionStore, url: &str) {
    use arbor_store::backend::SessionMeta;
    let b = dir.join("machine-b/agent");
    std::fs::create_dir_all(&b).expect("b");
    let outside = dir.join("outside");
    let header = |id: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}}"#,
            id.replace('\\', "\\\\").replace('"', "\\\"")
        )
    };
    let msg = r#"{"type":"message","id":"0c1301fb","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}"#;
    let put = |id: &str, cwd: &str, created: &str, source: Option<&str>, lines_id: &str| {
        let h = header(lines_id);
        let meta = SessionMeta {
            id: id.into(),
            cwd: cwd.into(),
            created: created.into(),
            name: None,
            parent_session: None,
            tool: "pi".into(),
            machine: Some("elsewhere".into()),
            user: None,
            source_path: source.map(str::to_string),
        };
        store
            .create(&meta, &[h.as_bytes(), msg.as_bytes()])
            .expect("tampered row");
    };
    let climbing = "x/../../../../../outside/climbed";
    put(
        climbing,
        "/work/p",
        "2026-01-01T00:00:00.000Z",
        None,
        climbing,
    );
    let abs_time = format!("{}/abs", outside.display());
    let ok_id = "01a2031c-0000-7000-8000-00000000000b";
    let bad_time_id = "01a2031c-0000-7000-8000-00000000000c";
    put(bad_time_id, "/work/p", &abs_time, None, bad_time_id);
    let dotdot_id = "01a2031c-0000-7000-8000-00000000000d";
    put(
        dotdot_id,
        "/../../../..",
        "2026-01-01T00:00:00.000Z",
        Some("/elsewhere/../../../outside/x.jsonl"),
        dotdot_id,
    );
    let other_lines = "01a2031c-0000-7000-8000-00000000000e";
    put(
        other_lines,
        "/work/p",
        "2026-01-01T00:00:00.000Z",
        None,
        ok_id,
    );
    put(ok_id, "/work/p", "2026-01-01T00:00:00.000Z", None, ok_id);
    let o = arbor(&b, &["sync", "pull", "--from", url]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let sessions = b.join("sessions");
    let db = dir.join("shared.db").to_string_lossy().into_owned();
    let stray: Vec<PathBuf> = everything(dir)
        .into_iter()
        .filter(|p| !p.starts_with(&sessions) && *p != dir.join("machine-b") && *p != b)
        // (the SQLite store and its side files; the cursor file)
        .filter(|p| !p.to_string_lossy().starts_with(&db))
        .filter(|p| !p.starts_with(b.join("arbor")))
        .collect();
    assert!(stray.is_empty(), "written outside: {stray:?}\n{out}{err}");
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    for (id, why) in [
        (climbing, "not a session id"),
        (bad_time_id, "not an ISO time"),
        (other_lines, "their header names"),
    ] {
        assert!(
            out.lines().any(|l| l.contains(id) && l.contains(why)),
            "{id}: {why}\n{out}{err}"
        );
    }
    // The good rows are pulled, each directly in a project directory of `sessions/` (the
    // recorded name `x.jsonl` is kept, without its directories).
    for name in [ok_id, "/x.jsonl"] {
        let f = find(&sessions, name);
        assert_eq!(f.parent().and_then(Path::parent), Some(sessions.as_path()));
    }
    assert_eq!(files(&sessions).len(), 2, "{:?}", files(&sessions));
}

/// `sync push --to sqlite:OTHER.db` writes only into a store of arbor's own (another SQLite
/// database is left as it was, exit 1), a new store is 0600; `sync pull` / `sync status`
/// from a mistyped path fail and create nothing.
#[test]
fn sqlite_stores_are_private_and_never_someone_elses_database() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = tmp.path().join("a");
    let project = a.join("sessions/--work-project--");
    std::fs::create_dir_all(&project).expect("dirs");
    for f in files(&root().join("demo/sessions")).into_iter().take(1) {
        std::fs::copy(&f, project.join(f.file_name().expect("name"))).expect("copy");
    }
    let other = tmp.path().join("app.db");
    {
        let c = rusqlite::Connection::open(&other).expect("raw");
        c.execute_batch("CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('ann');")
            .expect("other");
    }
    let before = std::fs::read(&other).expect("read");
    let o = arbor(
        &a,
        &[
            "sync",
            "push",
            "--to",
            &format!("sqlite:{}", other.display()),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("without arbor's tables") && err.contains("accounts"),
        "{err}"
    );
    assert_eq!(std::fs::read(&other).expect("read"), before);
    for action in ["pull", "status"] {
        let typo = tmp.path().join("shraed.db");
        let o = arbor(
            &a,
            &[
                "sync",
                action,
                "--from",
                &format!("sqlite:{}", typo.display()),
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{action}: {err}");
        assert!(err.contains("no such store"), "{action}: {err}");
        assert!(!typo.exists(), "{action} created {}", typo.display());
    }
    let store = tmp.path().join("shared.db");
    ok(&arbor(
        &a,
        &[
            "sync",
            "push",
            "--to",
            &format!("sqlite:{}", store.display()),
        ],
    ));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&store).expect("store").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
}

/// Sessions arbor cannot read (a file or a project directory a `sudo pi` left root-owned)
/// are never passed over in silence: `sync push` and `sync status` send and show the rest,
/// name each (`unreadable`, with why) and exit 1. Run as `nobody` under root (CI), with
/// mode 000 otherwise.
#[test]
fn unreadable_sessions_are_named_and_fail_the_sync() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let a = d.join("a");
    let (open_dir, closed_dir) = (
        a.join("sessions/--work-project--"),
        a.join("sessions/--work-root--"),
    );
    std::fs::create_dir_all(&open_dir).expect("dirs");
    std::fs::create_dir_all(&closed_dir).expect("dirs");
    let demo = files(&root().join("demo/sessions"));
    let name = |f: &PathBuf| f.file_name().expect("name").to_owned();
    std::fs::copy(&demo[1], open_dir.join(name(&demo[1]))).expect("copy");
    let closed_file = open_dir.join(name(&demo[2]));
    std::fs::copy(&demo[2], &closed_file).expect("copy");
    std::fs::copy(&demo[3], closed_dir.join(name(&demo[3]))).expect("copy");
    let root_user = arbor_testkit::skip::am_root();
    let bin = if root_user {
        // as_nobody runs a copy nobody can reach when the checkout is private.
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_arbor"));
        for p in everything(d).into_iter().chain([d.to_path_buf()]) {
            std::os::unix::fs::lchown(&p, Some(as_nobody::NOBODY), Some(as_nobody::NOBODY))
                .expect("chown");
        }
        // Left to root, private: what `sudo pi` leaves behind.
        for p in [&closed_file, &closed_dir] {
            std::os::unix::fs::chown(p, Some(0), Some(0)).expect("chown");
        }
        std::fs::set_permissions(&closed_file, std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        std::fs::set_permissions(&closed_dir, std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        bin
    } else {
        std::fs::set_permissions(&closed_file, std::fs::Permissions::from_mode(0o000))
            .expect("chmod");
        std::fs::set_permissions(&closed_dir, std::fs::Permissions::from_mode(0o000))
            .expect("chmod");
        PathBuf::from(env!("CARGO_BIN_EXE_arbor"))
    };
    let url = format!("sqlite:{}", d.join("shared.db").display());
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        cmd.args(args)
            .env("PI_CODING_AGENT_DIR", &a)
            .env("HOME", d)
            .env("NO_COLOR", "1")
            .env_remove("ARBOR_SYNC_URL");
        if root_user {
            as_nobody::as_nobody(&mut cmd);
        }
        let o = cmd.output().expect("run arbor");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["sync", "push", "--to", &url]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("sent"), "the readable session is sent: {out}");
    for p in [&closed_file, &closed_dir] {
        assert!(
            out.lines().any(|l| l.contains("NOT READ")
                && l.contains(&*p.to_string_lossy())
                && l.contains("ermission denied")),
            "{} named: {out}{err}",
            p.display()
        );
    }
    let (code, out, err) = run(&["sync", "status", "--from", &url, "--json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let states: Vec<&str> = v
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["state"].as_str())
        .collect();
    assert_eq!(
        states.iter().filter(|s| **s == "unreadable").count(),
        2,
        "{out}"
    );
    assert!(states.contains(&"inSync"), "{out}");
    // A file known from the last sync (its id remembered, never opened to list it) that must
    // be read now (the shared copy grew) and cannot be: that row is named, the rest reported.
    {
        use arbor_store::backend::SessionStore;
        let store = arbor_db::SqliteStore::open(&d.join("shared.db")).expect("store");
        let id = "01a2031c-a4c8-72e3-9ce7-b742438e02ad";
        let mut w = store.writer(id, None).expect("writer");
        w.append(&[br#"{"type":"custom","customType":"elsewhere","data":{},"id":"e1e1e1e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#])
            .expect("append there");
    }
    let known = open_dir.join(name(&demo[1]));
    if root_user {
        std::os::unix::fs::chown(&known, Some(0), Some(0)).expect("chown");
        std::fs::set_permissions(&known, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    } else {
        std::fs::set_permissions(&known, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    }
    for action in ["status", "pull"] {
        let (code, out, err) = run(&["sync", action, "--from", &url, "--json"]);
        assert_eq!(code, Some(1), "{action}: {out}{err}");
        let v: Value = serde_json::from_str(&out).expect("json: the rest is reported");
        let rows = v.as_array().expect("rows");
        assert!(
            rows.iter()
                .any(|r| r["state"] == "unreadable"
                    && r["id"] == "01a2031c-a4c8-72e3-9ce7-b742438e02ad"),
            "{action}: {out}"
        );
    }
}
