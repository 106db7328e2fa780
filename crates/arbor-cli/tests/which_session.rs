//! Which session a command means (issue 24, items 2, 5 and 10): the ids `ls --dir` prints
//! resolve with `--dir`, a file whose name does not carry its id is listed and resolved by
//! its header's id, an ambiguous prefix lists its candidates one per line as `ls` shows them,
//! `show`/`tree`/`export`/`context`/`fork` without a SESSION take the current project's most
//! recent session, `ls -l -a -n N`, and the TOOL column is the directory's. Run as a user
//! runs arbor: the real binary, `COLUMNS=80`, a private HOME laid out as pi and omp lay it out.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

struct Env {
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let e = Env {
            home: tempfile::tempdir().expect("tempdir"),
        };
        std::fs::create_dir_all(e.project()).expect("mkdir project");
        e
    }
    fn h(&self) -> &Path {
        self.home.path()
    }
    /// The project the commands run in.
    fn project(&self) -> PathBuf {
        self.h().join("proj")
    }
    fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", self.h())
            .env("ARBOR_CATALOG", self.h().join("catalog.db"))
            .env("COLUMNS", "80")
            .env("XDG_DATA_HOME", self.h().join(".local/share"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CONFIG_DIR")
            .env_remove("NO_COLOR")
            .env_remove("PAGER")
            .current_dir(cwd)
            .output()
            .expect("run arbor")
    }
    fn run(&self, args: &[&str]) -> Output {
        self.run_in(&self.project(), args)
    }
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "arbor {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).expect("utf-8")
    }
    /// The exit code and stderr of a command that fails.
    fn fails(&self, args: &[&str]) -> (Option<i32>, String) {
        let o = self.run(args);
        assert!(!o.status.success(), "arbor {args:?} succeeded");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    /// pi's session directory of the project.
    fn pi_dir(&self) -> PathBuf {
        let cwd = self.project().to_string_lossy().into_owned();
        let enc = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
        self.h().join(".pi/agent/sessions").join(enc)
    }
    /// omp's session directory of the project (omp names it relative to the home directory).
    fn omp_dir(&self) -> PathBuf {
        self.h().join(".omp/agent/sessions/-proj")
    }
}

/// Now, less `ago`, in ms since the epoch.
fn ms_ago(ago: Duration) -> u64 {
    (SystemTime::now() - ago)
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64
}

/// ISO-8601 of `ms` (UTC), as pi writes timestamps.
fn iso(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Writes a one-message session (header id `id`, first message `text`, written `ago`, the
/// file's mtime too) as `dir/name` and returns its path.
fn session(dir: &Path, name: &str, id: &str, cwd: &str, text: &str, ago: Duration) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let ms = ms_ago(ago);
    let t = iso(ms);
    let body = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{t}\",\"cwd\":\"{cwd}\"}}\n\
         {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"{t}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":{ms}}}}}\n",
    );
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write session");
    let f = std::fs::File::options()
        .append(true)
        .open(&p)
        .expect("open");
    f.set_modified(SystemTime::now() - ago).expect("set mtime");
    p
}

fn pi_name(id: &str) -> String {
    format!("2026-01-01T00-00-00-000Z_{id}.jsonl")
}

const A: &str = "01a2031c-aaaa-7000-8000-000000000001";
const B: &str = "01a2031c-bbbb-7000-8000-000000000002";
const C: &str = "01a2ffff-cccc-7000-8000-000000000003";
const D: &str = "01a20000-dddd-7000-8000-000000000004";

/// The project's sessions: two of pi's (2 h and 3 d old), a plain (pi-format) one in omp's
/// directory (5 min old).
fn project(env: &Env) {
    let cwd = "/work/proj";
    session(
        &env.pi_dir(),
        &pi_name(A),
        A,
        cwd,
        "fix the walrus",
        Duration::from_secs(3 * 86_400),
    );
    session(
        &env.pi_dir(),
        &pi_name(B),
        B,
        cwd,
        "teach the penguin",
        Duration::from_secs(2 * 3600),
    );
    session(
        &env.omp_dir(),
        &pi_name(C),
        C,
        cwd,
        "omp reads this one",
        Duration::from_secs(300),
    );
}

/// Item 2: `ls --dir DIR` of a directory outside the agent directories prints ids that
/// `show --dir DIR` (and `tree`, `export`, `context`, `fork`, `name`, `rm`) resolve; without
/// `--dir` the error says where it looked and how to look there. A file renamed by hand is
/// listed by its header's id, in the table and in `--json`, and that id resolves (in `rm`
/// and `trash restore` too); so is an old file whose name carries another id.
#[test]
fn ids_ls_dir_prints_resolve_with_dir() {
    let env = Env::new();
    project(&env);
    let elsewhere = env.h().join("elsewhere");
    session(
        &elsewhere,
        "renamed.jsonl",
        D,
        "/work/other",
        "kept elsewhere",
        Duration::from_secs(4 * 3600),
    );
    let dir = elsewhere.to_string_lossy().into_owned();
    let table = env.ok(&["ls", "--dir", &dir]);
    assert_eq!(
        table,
        "\
ID     TOOL AGE     MSGS   SIZE  BR  TITLE
01a200 pi   4h         1   297B   1  kept elsewhere
",
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["ls", "--dir", &dir, "--json"])).expect("json");
    assert_eq!(json[0]["id"], D);
    // The id the table printed resolves, with the listing's --dir, in every reading command.
    for cmd in [
        vec!["show", "--dir", &dir, "01a200"],
        vec!["tree", "--dir", &dir, "01a200"],
        vec!["export", "--dir", &dir, "01a200"],
        vec!["context", "--dir", &dir, "01a200"],
    ] {
        let out = env.ok(&cmd);
        assert!(
            out.contains("kept elsewhere"),
            "arbor {cmd:?} took another session: {out}"
        );
    }
    // Without --dir: where the resolver looked, and how to look elsewhere.
    let (code, err) = env.fails(&["show", "01a200"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "arbor: no session found matching '01a200' (searched 3 session files in \
         ~/.pi/agent/sessions, ~/.omp/agent/sessions); a session of another directory: --dir DIR\n"
    );
    // With --dir, only that directory: the project's sessions are not found there.
    let (_, err) = env.fails(&["show", "--dir", &dir, "01a2031c-a"]);
    assert!(
        err.contains("(searched 1 session files in ") && !err.contains("--dir DIR"),
        "{err}"
    );
    // `rm --dir` takes it too, and the trash lists it by that id and restores it by it (a
    // session outside the agent directories, its name without an id, was not a session to
    // `trash list`).
    env.ok(&["rm", "--dir", &dir, "01a200"]);
    assert!(!elsewhere.join("renamed.jsonl").exists());
    let list = env.ok(&["trash", "list"]);
    assert!(list.contains(D), "{list}");
    env.ok(&["trash", "restore", "01a200"]);
    assert!(elsewhere.join("renamed.jsonl").exists());
    // A renamed file inside the agent directory: its header id is listed and resolves,
    // even though other files' names start with the same characters.
    let renamed = env.pi_dir().join("notes.jsonl");
    std::fs::rename(env.pi_dir().join(pi_name(A)), &renamed).expect("rename");
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("\n01a2031c-a pi "), "{ls}");
    assert!(!ls.contains("notes"), "{ls}");
    let out = env.ok(&["show", "01a2031c-a"]);
    assert!(out.contains("fix the walrus"), "{out}");
    // An old file named `<time>_<not its id>` (as pi's v1 fixtures are): its header's id.
    session(
        &env.pi_dir(),
        "2025-11-20T23-33-01-550Z_pi-real-v1-fixture.jsonl",
        "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
        "/work/proj",
        "an old one",
        Duration::from_secs(400 * 86_400),
    );
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("\nd703a1     pi "), "{ls}");
    let json = env.ok(&["ls", "--json"]);
    assert!(
        json.contains("\"id\":\"d703a1a9-1b7b-4fb1-b512-c9738b1fe617\""),
        "{json}"
    );
    let out = env.ok(&["show", "d703a1"]);
    assert!(out.contains("an old one"), "{out}");
}

/// Item 5: an ambiguous prefix lists the candidates one per line, as `ls` shows them (short
/// id, age, title), newest first, says how to pick one, and fails with status 1.
#[test]
fn an_ambiguous_id_lists_its_candidates_one_per_line() {
    let env = Env::new();
    project(&env);
    let (code, err) = env.fails(&["show", "01a2"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "\
arbor: '01a2' matches 3 sessions; give more of the id (one of these), or a path:
  01a2ff      5m    omp reads this one
  01a2031c-b  2h    teach the penguin
  01a2031c-a  3d    fix the walrus
",
        "{err}"
    );
    assert!(!err.contains('␤'));
    // The ids it offers are the ones `ls` prints, and each resolves.
    let ls = env.ok(&["ls"]);
    for id in ["01a2031c-a", "01a2031c-b", "01a2ff"] {
        assert!(ls.contains(&format!("\n{id} ")), "{id} not in {ls}");
        env.ok(&["show", id]);
    }
}

/// Item 10: `show`, `tree`, `export`, `context` and `fork` without a SESSION take the current
/// project's most recent session (pi's and omp's directories, by file time, as pi's
/// `--continue`); a directory with no sessions says so.
#[test]
fn without_a_session_the_most_recent_of_the_project() {
    let env = Env::new();
    project(&env);
    for cmd in [vec!["show"], vec!["tree"], vec!["export"], vec!["context"]] {
        let out = env.ok(&cmd);
        assert!(
            out.contains("omp reads this one") && !out.contains("penguin"),
            "arbor {cmd:?}: {out}"
        );
    }
    // --dir picks among that directory's sessions.
    let dir = env.pi_dir().to_string_lossy().into_owned();
    let out = env.ok(&["show", "--dir", &dir]);
    assert!(out.contains("teach the penguin"), "{out}");
    let forked = env.ok(&["fork", "--dir", &dir, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&forked).expect("json");
    assert!(
        v["parentSession"]
            .as_str()
            .is_some_and(|p| p.ends_with(&pi_name(B))),
        "{forked}"
    );
    // A directory without sessions.
    let empty = env.h().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let o = env.run_in(&empty, &["show"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "arbor: no sessions for {} (name one, or see arbor ls --all)\n",
            empty.display()
        )
    );
}

/// Item 10: `ls -l`, `-a` and `-n N`, and the TOOL column is the directory's (a plain session
/// in omp's directory is omp's: omp reads it, pi never does).
#[test]
fn ls_short_flags_and_the_tool_of_the_directory() {
    let env = Env::new();
    project(&env);
    let out = env.ok(&["ls"]);
    assert_eq!(
        out,
        "\
ID         TOOL AGE     MSGS   SIZE  BR  TITLE
01a2ff     omp  5m         1   300B   1  omp reads this one
01a2031c-b pi   2h         1   299B   1  teach the penguin
01a2031c-a pi   3d         1   296B   1  fix the walrus
",
        "{out}"
    );
    let out = env.ok(&["ls", "-l", "-a", "-n", "1"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].ends_with("PROJECT"), "{out}");
    assert!(lines[1].starts_with("01a2ff omp "), "{out}");
    assert!(
        lines[2]
            .trim_start()
            .starts_with("~/.omp/agent/sessions/-proj/"),
        "{out}"
    );
    assert_eq!(
        env.ok(&["ls", "--limit", "2", "--json"])
            .matches("\"path\"")
            .count(),
        2
    );
}

/// Item 10: on a terminal, the session taken when none is named is said on stderr, on one
/// line as `ls` shows it (short id, age, title); into a pipe nothing is said (the test above).
/// Run under `script` (util-linux), which gives the command a terminal; without it the test
/// says it is skipped.
#[test]
fn on_a_terminal_the_session_taken_is_named() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("skipped: `script` (util-linux) is not installed");
        return;
    }
    let env = Env::new();
    project(&env);
    let arbor = env!("CARGO_BIN_EXE_arbor");
    let o = Command::new("script")
        .args([
            "-qec",
            &format!("'{arbor}' show --no-pager --color never"),
            "/dev/null",
        ])
        .env("HOME", env.h())
        .env("ARBOR_CATALOG", env.h().join("catalog.db"))
        .env("COLUMNS", "80")
        .env("XDG_DATA_HOME", env.h().join(".local/share"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CONFIG_DIR")
        .env_remove("PAGER")
        .current_dir(env.project())
        .output()
        .expect("run script");
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    let first = out.lines().next().unwrap_or_default();
    assert_eq!(
        first, "arbor: the most recent session: 01a2ff  5m  omp reads this one",
        "{out}"
    );
}
