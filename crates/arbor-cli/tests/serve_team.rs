//! `arbor serve --from`: team mode over the store `arbor sync push` fills, with the real
//! binary and a real PostgreSQL (and SQLite). Two machines of two users push; the server,
//! connected as a role that may only SELECT, lists every session, mirrors them byte for byte
//! (the usage numbers over the mirror equal `arbor stats` over the machines' own files), picks
//! up a session pushed while it runs, and leaves the database exactly as it was. A version-2
//! database is served as it is and keeps working for `arbor sync`, which brings it to
//! version 3. `--allow-writes` with `--from` is refused at the start.
//!
//! The first fill of the mirror (over SQLite): the mirror is a cache, its new files written
//! without a flush (a crash of the machine is answered by comparing it whole after the next
//! boot: `team.rs`'s unit tests), while `arbor sync pull` into a person's session directory
//! still flushes every new file (both seen with strace). A server killed (`kill -9`) in the
//! middle of its first fill, its mirror then damaged further (a file torn, one emptied, one
//! removed), serves after a restart exactly the store's sessions, byte for byte, none torn.
use arbor_testkit::pg::TestServer;
use arbor_testkit::served::Served;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

fn demo(n: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo/sessions");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("demo")
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.to_string_lossy().contains("v1-fixture"))
        .collect();
    v.sort();
    v[n].clone()
}

/// A machine: its agent directory, name and user.
struct Machine {
    agent: PathBuf,
    name: &'static str,
    user: &'static str,
}

impl Machine {
    fn new(root: &Path, name: &'static str, user: &'static str) -> Machine {
        let agent = root.join(name).join("agent");
        std::fs::create_dir_all(agent.join("sessions/--work-project--")).expect("agent");
        Machine { agent, name, user }
    }

    /// Puts a copy of `file` among its sessions.
    fn has(&self, file: &Path) -> PathBuf {
        let to = self
            .agent
            .join("sessions/--work-project--")
            .join(file.file_name().expect("name"));
        std::fs::copy(file, &to).expect("copy");
        to
    }

    fn arbor(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .args(args)
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("ARBOR_MACHINE", self.name)
            .env("USER", self.user)
            .env("ARBOR_CATALOG", self.agent.join("catalog.db"))
            .env_remove("ARBOR_SYNC_URL")
            .env("NO_COLOR", "1")
            .output()
            .expect("run arbor")
    }

    fn push(&self, url: &str) {
        ok(&self.arbor(&["sync", "push", "--to", url]));
    }
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

/// A session file written here: a header and one user message.
fn small_session(dir: &Path, id: &str) -> PathBuf {
    let p = dir.join(format!("2026-11-23T10-00-00-000Z_{id}.jsonl"));
    std::fs::write(
        &p,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-11-23T10:00:00.000Z\",\"cwd\":\"/work/project\"}}\n\
             {{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2026-11-23T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"pushed later\",\"timestamp\":1795428001000}}}}\n"
        ),
    )
    .expect("session");
    p
}

/// Everything arbor keeps in the database, as one digest, with the row counts.
fn pg_digest(c: &mut postgres::Client) -> (i64, i64, String) {
    let q = |c: &mut postgres::Client, sql: &str| -> postgres::Row {
        c.query_one(sql, &[]).expect("digest query")
    };
    let sessions: i64 = q(c, "SELECT count(*) FROM arbor_sessions").get(0);
    let entries: i64 = q(c, "SELECT count(*) FROM arbor_entries").get(0);
    let d: String = q(
        c,
        "SELECT md5(coalesce((SELECT string_agg(to_jsonb(s)::text, '|' ORDER BY id) FROM arbor_sessions s), '')
            || coalesce((SELECT string_agg(session_id || ':' || seq || ':' || md5(line), '|' ORDER BY session_id, seq) FROM arbor_entries), '')
            || coalesce((SELECT string_agg(version::text, ',') FROM arbor_schema), '')
            || coalesce((SELECT string_agg(hash, ',' ORDER BY hash) FROM arbor_blobs), ''))",
    )
    .get(0);
    (sessions, entries, d)
}

/// Waits (up to 60 s) until `check` holds, polling.
fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < end, "waited 60 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The session files under `dir` (recursively), sorted.
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

/// The session files under `dir`, by the id their name ends with.
fn files_by_id(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = session_files(dir)
        .into_iter()
        .map(|p| {
            let id = arbor_store::locate::id_of_file(&p).expect("id");
            (id, std::fs::read(&p).expect("read"))
        })
        .collect();
    out.sort();
    out
}

/// The mirror's agent directory of the one store served with `cache` as `$XDG_CACHE_HOME`.
fn mirror_agent(cache: &Path) -> PathBuf {
    mirror_root(cache).expect("the mirror").join("agent")
}

/// `arbor stats --all --by model --json` over the sessions of `agent`.
fn stats_over(agent: &Path, catalog: &Path) -> serde_json::Value {
    let o = Command::new(bin())
        .args(["stats", "--all", "--by", "model", "--json"])
        .env("PI_CODING_AGENT_DIR", agent)
        .env("ARBOR_CATALOG", catalog)
        .output()
        .expect("stats");
    serde_json::from_str(&ok(&o)).expect("json")
}

#[test]
fn team_mode_serves_a_postgresql_store_read_only() {
    let server = TestServer::start().expect("a PostgreSQL server (.ci/run installs postgresql)");
    let db = server.unique_database("serve_team").expect("database");
    let url = server.url_for(&db);
    let tmp = tempfile::tempdir().expect("tmp");
    let alpha = Machine::new(tmp.path(), "alpha", "ann");
    let beta = Machine::new(tmp.path(), "beta", "bob");
    alpha.has(&demo(0));
    alpha.has(&demo(1));
    beta.has(&demo(2));
    alpha.push(&url);
    beta.push(&url);

    let mut c = server.connect_to(&db).expect("connect");
    // `arbor sync push` recorded the machine and the OS user of each session.
    let mut origins: Vec<(String, String, Option<String>)> = c
        .query("SELECT id, machine, pushed_by FROM arbor_sessions", &[])
        .expect("origins")
        .into_iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    origins.sort();
    let ids: Vec<String> = origins.iter().map(|o| o.0.clone()).collect();
    assert_eq!(ids.len(), 3);
    for (id, machine, user) in &origins {
        let (m, u) = if demo(2).to_string_lossy().contains(id.as_str()) {
            ("beta", "bob")
        } else {
            ("alpha", "ann")
        };
        assert_eq!((machine.as_str(), user.as_deref()), (m, Some(u)), "{id}");
    }
    // A version-2 database: the user column not there yet (the rows pushed so far lose
    // their users: they show as unknown).
    c.batch_execute(
        "ALTER TABLE arbor_sessions DROP COLUMN pushed_by; UPDATE arbor_schema SET version = 2;
         CREATE ROLE team_reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO team_reader",
    )
    .expect("version 2, and a role that may only read");
    let reader = url.replacen("postgres@", "team_reader@", 1);
    assert_ne!(reader, url);
    let before = pg_digest(&mut c);

    let cache = tmp.path().join("cache");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let envs = [
        ("HOME", home.to_str().expect("utf-8")),
        ("XDG_CACHE_HOME", cache.to_str().expect("utf-8")),
        ("ARBOR_TEAM_REFRESH_MS", "200"),
        ("PI_CODING_AGENT_DIR", "/nonexistent/agent"),
    ];
    let s = Served::start(bin(), &["--from", &reader], &envs);
    let page = s.get("/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    for id in &ids {
        assert!(page.contains(&format!("/session/{id}")), "{id} not listed");
    }
    // The mirror holds the store's sessions byte for byte, and nothing else.
    let mirror = mirror_agent(&cache);
    let mut pushed = files_by_id(&alpha.agent);
    pushed.extend(files_by_id(&beta.agent));
    pushed.sort();
    assert_eq!(files_by_id(&mirror), pushed);
    // Private: the team's sessions are readable by the user running the server only.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(mirror.parent().expect("root"))
        .expect("mirror root")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    // The usage numbers over the mirror are `arbor stats` over the machines' own files.
    let both = tmp.path().join("both/agent");
    std::fs::create_dir_all(both.join("sessions/--work-project--")).expect("both");
    for m in [&alpha, &beta] {
        for f in std::fs::read_dir(m.agent.join("sessions/--work-project--")).expect("dir") {
            let f = f.expect("entry").path();
            std::fs::copy(
                &f,
                both.join("sessions/--work-project--")
                    .join(f.file_name().expect("n")),
            )
            .expect("copy");
        }
    }
    let want = stats_over(&both, &tmp.path().join("c1.db"));
    assert!(want["total"]["turns"].as_u64().unwrap_or(0) > 0, "{want}");
    assert_eq!(stats_over(&mirror, &tmp.path().join("c2.db")), want);
    // Serving changed nothing in the database (a version-2 database is not migrated).
    assert_eq!(pg_digest(&mut c), before);

    // A session pushed while the server runs appears; this push, by an arbor of version 3,
    // brings the database to version 3 and records its user.
    let later = "0b0b0b0b-1111-4222-8333-444444444444";
    small_session(&beta.agent.join("sessions/--work-project--"), later);
    beta.push(&url);
    let (version, user): (i32, Option<String>) = {
        let v: i32 = c
            .query_one("SELECT version FROM arbor_schema", &[])
            .expect("version")
            .get(0);
        let u = c
            .query_one(
                "SELECT pushed_by FROM arbor_sessions WHERE id = $1",
                &[&later],
            )
            .expect("user")
            .get(0);
        (v, u)
    };
    assert_eq!((version, user.as_deref()), (3, Some("bob")));
    let after_push = pg_digest(&mut c);
    wait_for("the session pushed later on the sessions page", || {
        s.get("/").contains(&format!("/session/{later}"))
    });
    assert!(files_by_id(&mirror).iter().any(|(id, _)| id == later));
    // And the refreshes that brought it wrote nothing.
    assert_eq!(pg_digest(&mut c), after_push);
    drop(s);
    // The old rows kept working for sync: a push from alpha finds them in sync.
    let out = ok(&alpha.arbor(&["sync", "status", "--from", &url, "--json"]));
    assert!(!out.contains("conflict"), "{out}");
}

#[test]
fn team_mode_serves_a_sqlite_store_without_changing_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("team.db");
    let url = format!("sqlite:{}", store.display());
    let alpha = Machine::new(tmp.path(), "alpha", "ann");
    let beta = Machine::new(tmp.path(), "beta", "bob");
    alpha.has(&demo(0));
    beta.has(&demo(1));
    alpha.push(&url);
    beta.push(&url);
    // Settled into the main file, so that its bytes say everything.
    {
        let c = rusqlite::Connection::open(&store).expect("raw");
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("checkpoint");
        let origins: Vec<(String, String)> = c
            .prepare("SELECT machine, pushed_by FROM sessions ORDER BY machine")
            .expect("q")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("origins");
        assert_eq!(
            origins,
            vec![
                ("alpha".into(), "ann".into()),
                ("beta".into(), "bob".into())
            ]
        );
    }
    let digest = || arbor_store::blobs::sha256_hex(&std::fs::read(&store).expect("store"));
    let before = digest();
    let cache = tmp.path().join("cache");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let envs = [
        ("HOME", home.to_str().expect("utf-8")),
        ("XDG_CACHE_HOME", cache.to_str().expect("utf-8")),
        ("ARBOR_TEAM_REFRESH_MS", "200"),
    ];
    let s = Served::start(bin(), &["--from", &url], &envs);
    let page = s.get("/");
    for (id, _) in files_by_id(&alpha.agent)
        .into_iter()
        .chain(files_by_id(&beta.agent))
    {
        assert!(page.contains(&format!("/session/{id}")), "{id} not listed");
    }
    // Per machine and per user: the sessions page lists only the chosen ones, with their
    // machine and user; the usage page counts only theirs, as `arbor stats` over their files.
    let alpha_ids: Vec<String> = files_by_id(&alpha.agent).into_iter().map(|f| f.0).collect();
    let beta_ids: Vec<String> = files_by_id(&beta.agent).into_iter().map(|f| f.0).collect();
    for (query, shown, hidden, cell) in [
        (
            "/?scope=all&machine=alpha",
            &alpha_ids,
            &beta_ids,
            "<td class=\"machine\">alpha</td>",
        ),
        (
            "/?scope=all&user=bob",
            &beta_ids,
            &alpha_ids,
            "<td class=\"user\">bob</td>",
        ),
    ] {
        let page = s.get(query);
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains(cell), "{query}: {page}");
        for id in shown {
            assert!(
                page.contains(&format!("/session/{id}")),
                "{query}: {id} not listed"
            );
        }
        for id in hidden {
            assert!(
                !page.contains(&format!("/session/{id}")),
                "{query}: {id} listed"
            );
        }
    }
    let usage = s.get("/usage/model.json?scope=all&user=ann");
    assert!(usage.starts_with("HTTP/1.1 200"), "{usage}");
    let body = usage.split("\r\n\r\n").nth(1).expect("body");
    let body = body.trim_start_matches(|c: char| c.is_ascii_hexdigit() || c == '\r' || c == '\n');
    let got: serde_json::Value = serde_json::Deserializer::from_str(body)
        .into_iter()
        .next()
        .expect("a JSON value")
        .expect("json");
    assert_eq!(got, stats_over(&alpha.agent, &tmp.path().join("ca.db")));
    let opened = s.get(&format!("/session/{}", beta_ids[0]));
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    drop(s);
    assert_eq!(digest(), before, "serving changed the store");
}

/// Runs `cmd`, which must end by itself within 30 s (a server that starts instead of
/// refusing is stopped, and the test fails).
fn refused(cmd: &mut Command) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "still running after 30 s instead of refusing: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn writes_are_refused_with_from() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = refused(
        Command::new(bin())
            .args(["serve", "--addr", "127.0.0.1:0", "--allow-writes", "--from"])
            .arg(format!("sqlite:{}", tmp.path().join("none.db").display()))
            .env("XDG_CACHE_HOME", tmp.path().join("cache")),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-writes with --from"), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(!tmp.path().join("none.db").exists(), "nothing created");
    // An unknown kind of store is named as such, nothing mirrored.
    let out = refused(
        Command::new(bin())
            .args(["serve", "--addr", "127.0.0.1:0", "--from", "mysql://db/x"])
            .env("XDG_CACHE_HOME", tmp.path().join("cache")),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sqlite:PATH or postgres://"), "{err}");
}

/// Without `$USER`, `arbor sync push` records the login name of the effective uid
/// (`getpwuid`), as `id -un` prints it; without `$ARBOR_MACHINE`, the host name.
#[test]
fn push_records_the_login_name_without_user() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("team.db");
    let url = format!("sqlite:{}", store.display());
    let m = Machine::new(tmp.path(), "alpha", "ann");
    m.has(&demo(0));
    let o = Command::new(bin())
        .args(["sync", "push", "--to", &url])
        .env("PI_CODING_AGENT_DIR", &m.agent)
        .env("ARBOR_CATALOG", m.agent.join("catalog.db"))
        .env_remove("USER")
        .env_remove("ARBOR_MACHINE")
        .env_remove("ARBOR_SYNC_URL")
        .output()
        .expect("push");
    ok(&o);
    let id_un = Command::new("id").arg("-un").output().expect("id -un");
    let login = String::from_utf8_lossy(&id_un.stdout).trim().to_string();
    assert!(!login.is_empty());
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    let c = rusqlite::Connection::open(&store).expect("raw");
    let (machine, user): (String, String) = c
        .query_row("SELECT machine, pushed_by FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("row");
    assert_eq!((machine, user), (host, login));
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
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (mut child, rx) = Served::spawn(bin(), &["--from", &url], &envs);
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
