//! `arbor ls`, `index`, `search` and `history` through the binary, each test with its own HOME,
//! agent directories and catalog.
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A throwaway home with pi's and omp's agent directories and a catalog.
struct Env {
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
        }
    }
    fn home(&self) -> &Path {
        self.home.path()
    }
    fn catalog(&self) -> PathBuf {
        self.home().join("cache").join("catalog.db")
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", self.home())
            .env("ARBOR_CATALOG", self.catalog())
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_SESSIONS_DIR")
            .env_remove("PI_CONFIG_DIR")
            .env_remove("OMP_PROFILE")
            .env_remove("PI_PROFILE")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CACHE_HOME")
            .current_dir(self.home());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
    }
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "arbor {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }
    fn json(&self, args: &[&str]) -> Value {
        // `search` exits 1 when nothing matches (as grep); its JSON is {hits, more}.
        if args.first() == Some(&"search") {
            let o = self.run(args);
            assert!(
                o.status.code().is_some_and(|c| c <= 1),
                "arbor {args:?} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let v: Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
            let hits = v["hits"].clone();
            assert_eq!(
                o.status.code() == Some(1),
                hits.as_array().is_some_and(|h| h.is_empty()),
                "exit 1 exactly when nothing matched"
            );
            return hits;
        }
        let out = self.ok(args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
    fn pi_dir(&self, enc: &str) -> PathBuf {
        let d = self.home().join(".pi/agent/sessions").join(enc);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
    fn omp_dir(&self, enc: &str) -> PathBuf {
        let d = self.home().join(".omp/agent/sessions").join(enc);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

fn header(id: &str, cwd: &str, ts: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{ts}","cwd":"{cwd}"}}"#)
}

fn msg(id: &str, parent: Option<&str>, ts: &str, role: &str, text: &str) -> String {
    let p = parent
        .map(|p| format!("\"{p}\""))
        .unwrap_or_else(|| "null".into());
    let content = if role == "user" {
        format!("\"{text}\"")
    } else {
        format!(r#"[{{"type":"text","text":"{text}"}}]"#)
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{{"role":"{role}","content":{content}}}}}"#
    )
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn set_mtime(path: &Path, iso: &str) {
    let ms = arbor_core::time::parse_iso_ms(iso).unwrap();
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// The real pi's `SessionManager.list()` on `goldens/pi/list` (see goldens/README.md), cold
/// and warm catalog: the same JSON, `allMessagesText` included.
#[test]
fn ls_json_equals_pi_list() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi");
    let src = root.join("list");
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("list.json")).unwrap()).unwrap();
    let mtimes: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("mtimes.json")).unwrap()).unwrap();
    let e = Env::new();
    let dir = e.home().join("list");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(&src).unwrap().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if name == "mtimes.json" {
            continue;
        }
        std::fs::copy(f.path(), dir.join(&name)).unwrap();
        set_mtime(&dir.join(&name), mtimes[&name].as_str().unwrap());
    }
    for pass in ["cold", "warm"] {
        let mut got = e.json(&["ls", "--json", "--all-text", "--dir", dir.to_str().unwrap()]);
        for s in got.as_array_mut().unwrap() {
            let p = s["path"].as_str().unwrap().to_string();
            s["path"] = json!(Path::new(&p).strip_prefix(&dir).unwrap().to_string_lossy());
        }
        assert_eq!(got, want, "{pass} catalog");
    }
    // Without --all-text the same objects minus allMessagesText, and `path` as pi joins it.
    let got = e.json(&["ls", "--json", "--dir", "list/"]);
    assert_eq!(
        got[0]["path"],
        json!(format!("list/{}", want[0]["path"].as_str().unwrap()))
    );
    assert!(got[0].get("allMessagesText").is_none());
}

/// omp 18.3.4's `SessionManager.list()` on `goldens/omp/list` and `goldens/omp183/list-extra`
/// (goldens/omp183/list.json, see tools/goldens/omp183/make.sh): `--omp` on any directory, and
/// an omp directory (under `~/.omp/agent/sessions`) by itself, give omp's JSON exactly; `--pi`
/// gives pi's objects for the same files.
#[test]
fn ls_json_equals_omp_list() {
    let goldens = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens");
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(goldens.join("omp183/list.json")).unwrap())
            .unwrap();
    let e = Env::new();
    let plain = e.home().join("list");
    std::fs::create_dir_all(&plain).unwrap();
    let omp = e.omp_dir("-list");
    for src in [goldens.join("omp/list"), goldens.join("omp183/list-extra")] {
        let mtimes: Value =
            serde_json::from_str(&std::fs::read_to_string(src.join("mtimes.json")).unwrap())
                .unwrap();
        for dir in [&plain, &omp] {
            for f in std::fs::read_dir(&src).unwrap().flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if name == "mtimes.json" {
                    continue;
                }
                std::fs::copy(f.path(), dir.join(&name)).unwrap();
                set_mtime(&dir.join(&name), mtimes[&name].as_str().unwrap());
            }
        }
    }
    let rel = |mut got: Value, dir: &Path| {
        for s in got.as_array_mut().unwrap() {
            let p = s["path"].as_str().unwrap().to_string();
            s["path"] = json!(Path::new(&p).strip_prefix(dir).unwrap().to_string_lossy());
        }
        got
    };
    let got = e.json(&["ls", "--json", "--dir", plain.to_str().unwrap(), "--omp"]);
    assert_eq!(rel(got, &plain), want, "--omp");
    let got = e.json(&["ls", "--json", "--all-text", "--dir", omp.to_str().unwrap()]);
    assert_eq!(rel(got, &omp), want, "an omp directory");
    // Key order is omp's too.
    let out = e.ok(&["ls", "--json", "--dir", omp.to_str().unwrap()]);
    let first = out.find("\"path\"").unwrap();
    let order: Vec<usize> = [
        "\"id\"",
        "\"cwd\"",
        "\"created\"",
        "\"modified\"",
        "\"messageCount\"",
        "\"assistantTurns\"",
        "\"size\"",
        "\"firstMessage\"",
        "\"allMessagesText\"",
        "\"status\"",
    ]
    .iter()
    .map(|k| out[first..].find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{out}");
    // --pi: pi's SessionInfo for the same files (pi's keys, no omp-only fields).
    let pi = e.json(&["ls", "--json", "--dir", omp.to_str().unwrap(), "--pi"]);
    assert!(!pi.as_array().unwrap().is_empty());
    assert!(pi
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s.get("status").is_none() && s.get("size").is_none()));
    // --omp and --pi together are a usage error.
    let o = e.run(&["ls", "--json", "--omp", "--pi"]);
    assert_eq!(o.status.code(), Some(2));
    // The table still lists them (through the catalog).
    let table = e.ok(&["ls", "--dir", omp.to_str().unwrap()]);
    assert!(table.contains("v1 user"), "{table}");
}

#[test]
fn ls_lists_the_current_project_and_all_projects_of_both_agents() {
    let e = Env::new();
    let proj = e.home().join("Projects").join("app");
    std::fs::create_dir_all(&proj).unwrap();
    let cwd = proj.to_str().unwrap();
    // pi encodes the absolute cwd; omp encodes it relative to the home directory.
    let pi_enc = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
    let a = e
        .pi_dir(&pi_enc)
        .join("2025-01-01T00-00-00-000Z_aaaa.jsonl");
    write_lines(
        &a,
        &[
            header("aaaa", cwd, "2025-01-01T00:00:00.000Z"),
            msg(
                "u1",
                None,
                "2025-01-01T00:00:01.000Z",
                "user",
                "pi session here",
            ),
        ],
    );
    let b = e
        .omp_dir("-Projects-app")
        .join("2025-01-02T00-00-00-000Z_bbbb.jsonl");
    std::fs::write(
        &b,
        format!(
            "{}\n{}\n",
            header("bbbb", cwd, "2025-01-02T00:00:00.000Z"),
            msg(
                "u1",
                None,
                "2025-01-02T00:00:01.000Z",
                "user",
                "omp session here"
            )
        ),
    )
    .unwrap();
    let c = e
        .pi_dir("--elsewhere--")
        .join("2025-01-03T00-00-00-000Z_cccc.jsonl");
    write_lines(
        &c,
        &[
            header("cccc", "/elsewhere", "2025-01-03T00:00:00.000Z"),
            msg(
                "u1",
                None,
                "2025-01-03T00:00:01.000Z",
                "user",
                "other project",
            ),
        ],
    );

    // omp lists by the file's mtime (pi by the last message): the mtimes match the messages.
    set_mtime(&b, "2025-01-02T00:00:01.000Z");
    let mut cmd = e.cmd(&["ls", "--json"]);
    let out = cmd.current_dir(&proj).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let here: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = here
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec!["bbbb", "aaaa"],
        "newest first, both agents, this project only"
    );

    let all = e.json(&["ls", "--all", "--json"]);
    let ids: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["cccc", "bbbb", "aaaa"]);
    // The table: title, age, messages, size, branches.
    let table = e.ok(&["ls", "--all"]);
    assert!(table.lines().next().unwrap().contains("TITLE"), "{table}");
    assert!(
        table.contains("other project") && table.contains("omp session here"),
        "{table}"
    );
    // No progress bar when stderr is not a terminal.
    let o = e.run(&["ls", "--all"]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // --agent-dir narrows to one agent directory.
    let pi_only = e.json(&[
        "ls",
        "--all",
        "--json",
        "--agent-dir",
        e.home().join(".pi/agent").to_str().unwrap(),
    ]);
    assert_eq!(pi_only.as_array().unwrap().len(), 2);
}

#[test]
fn ls_follows_appends_rewrites_and_deletions() {
    let e = Env::new();
    let d = e.pi_dir("--w--");
    let f = d.join("2025-01-01T00-00-00-000Z_s1.jsonl");
    write_lines(
        &f,
        &[
            header("s1", "/w", "2025-01-01T00:00:00.000Z"),
            msg(
                "a1",
                None,
                "2025-01-01T00:00:01.000Z",
                "user",
                "first question",
            ),
        ],
    );
    let ls = |e: &Env| e.json(&["ls", "--json", "--dir", d.to_str().unwrap()]);
    assert_eq!(ls(&e)[0]["messageCount"], 1);
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str(&msg(
        "a2",
        Some("a1"),
        "2025-01-01T00:00:09.000Z",
        "assistant",
        "an answer",
    ));
    text.push('\n');
    std::fs::write(&f, &text).unwrap();
    let l = ls(&e);
    assert_eq!(
        (l[0]["messageCount"].as_u64(), l[0]["modified"].as_str()),
        (Some(2), Some("2025-01-01T00:00:09.000Z"))
    );
    // Rewritten shorter: re-indexed.
    write_lines(
        &f,
        &[
            header("s1", "/w", "2025-01-01T00:00:00.000Z"),
            msg("a1", None, "2025-01-01T00:00:01.000Z", "user", "rewritten"),
        ],
    );
    let l = ls(&e);
    assert_eq!(
        (l[0]["messageCount"].as_u64(), l[0]["firstMessage"].as_str()),
        (Some(1), Some("rewritten"))
    );
    std::fs::remove_file(&f).unwrap();
    assert_eq!(ls(&e), json!([]));
}

/// A session with a branch: u1 → a1 → u2 (abandoned), and u1 → a1 → u3 → a3 (current).
fn branched(e: &Env) -> PathBuf {
    let d = e.pi_dir("--work-proj--");
    let f = d.join("2025-03-01T00-00-00-000Z_9f0e.jsonl");
    write_lines(
        &f,
        &[
            header("9f0e1d2c", "/work/proj", "2025-03-01T00:00:00.000Z"),
            msg("u1", None, "2025-03-01T00:00:01.000Z", "user", "How do I fix the flaky scheduler test?"),
            msg("a1", Some("u1"), "2025-03-01T00:00:02.000Z", "assistant", "The scheduler test races on the clock."),
            msg("u2", Some("a1"), "2025-03-01T00:00:03.000Z", "user", "Try mocking the monotonic clock instead"),
            msg("u3", Some("a1"), "2025-03-02T00:00:04.000Z", "user", "Use a fake timer wheel please"),
            msg("a3", Some("u3"), "2025-03-02T00:00:05.000Z", "assistant", "Done: the timer wheel is injected."),
            r#"{"type":"label","id":"l1","parentId":"a3","timestamp":"2025-03-02T00:00:06.000Z","targetId":"u2","label":"clock idea"}"#.to_string(),
            r#"{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2025-03-02T00:00:07.000Z","name":"Scheduler flake"}"#.to_string(),
            r#"{"type":"compaction","id":"c1","parentId":"n1","timestamp":"2025-03-02T00:00:08.000Z","summary":"We replaced sleeps with a deterministic timer","firstKeptEntryId":"u3","tokensBefore":10}"#.to_string(),
        ],
    );
    f
}

#[test]
fn search_finds_phrases_on_any_branch_and_says_where() {
    let e = Env::new();
    let f = branched(&e);
    let other = e
        .pi_dir("--other--")
        .join("2025-01-01T00-00-00-000Z_other.jsonl");
    write_lines(
        &other,
        &[
            header("other", "/other", "2025-01-01T00:00:00.000Z"),
            msg(
                "x1",
                None,
                "2025-01-01T00:00:01.000Z",
                "user",
                "monotonic clock elsewhere",
            ),
        ],
    );
    let dir = f.parent().unwrap().to_str().unwrap().to_string();

    let hits = e.json(&["search", "\"monotonic clock\"", "--dir", &dir, "--json"]);
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    let h = &hits[0];
    assert_eq!(
        h["path"],
        json!(std::fs::canonicalize(&f).unwrap().to_string_lossy())
    );
    assert_eq!(h["sessionId"], "9f0e1d2c");
    assert_eq!(h["entryId"], "u2");
    assert_eq!(h["role"], "user");
    assert_eq!(h["timestamp"], "2025-03-01T00:00:03.000Z");
    assert_eq!(h["onCurrentBranch"], false);
    // The JSON snippet is plain text; the matched words are character ranges of it.
    assert_eq!(
        h["snippet"], "Try mocking the monotonic clock instead",
        "{h}"
    );
    assert_eq!(h["highlights"], json!([[16, 31]]), "{h}");
    // On the current branch; prefix; boolean; kinds.
    let hits = e.json(&["search", "timer wheel", "--dir", &dir, "--json"]);
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .all(|h| h["onCurrentBranch"] == true),
        "{hits}"
    );
    assert_eq!(
        e.json(&["search", "schedul*", "--dir", &dir, "--json", "--role", "user"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // "scheduler" is in u1, a1 and the name; u1 also says "flaky".
    assert_eq!(
        e.json(&["search", "scheduler NOT flaky", "--dir", &dir, "--json"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        e.json(&[
            "search",
            "clock OR wheel",
            "--dir",
            &dir,
            "--json",
            "--role",
            "assistant"
        ])
        .as_array()
        .unwrap()
        .len(),
        2
    );
    let label = e.json(&["search", "idea", "--dir", &dir, "--json"]);
    assert_eq!(
        (label[0]["role"].as_str(), label[0]["entryId"].as_str()),
        (Some("label"), Some("u2"))
    );
    assert_eq!(
        e.json(&["search", "flake", "--dir", &dir, "--json", "--role", "name"])[0]["role"],
        "name"
    );
    assert_eq!(
        e.json(&["search", "deterministic", "--dir", &dir, "--json"])[0]["role"],
        "compaction"
    );
    // --since drops the first day; --all reaches other projects; words that FTS5 cannot
    // parse are searched as words.
    // ("clock" is in u2, a1 and the label, written on the second day.)
    assert_eq!(
        e.json(&[
            "search",
            "clock",
            "--dir",
            &dir,
            "--json",
            "--since",
            "2025-03-02"
        ])
        .as_array()
        .unwrap()
        .len(),
        1
    );
    assert_eq!(
        e.json(&["search", "clock", "--dir", &dir, "--json"])
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        e.json(&["search", "monotonic clock", "--all", "--json"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let words = e.json(&["search", "clock: (monotonic", "--all", "--json"]);
    assert_eq!(words.as_array().unwrap().len(), 2, "{words}");
    // An appended turn is found without re-reading the rest.
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str(&msg(
        "u9",
        Some("c1"),
        "2025-03-03T00:00:00.000Z",
        "user",
        "zebra crossing",
    ));
    text.push('\n');
    std::fs::write(&f, text).unwrap();
    let hits = e.json(&["search", "zebra", "--dir", &dir, "--json"]);
    assert_eq!(
        (
            hits[0]["entryId"].as_str(),
            hits[0]["onCurrentBranch"].as_bool()
        ),
        (Some("u9"), Some(true))
    );
    // Human output names the file and the entry.
    // (Piped: no colour and no markup around the match.)
    let out = e.ok(&["search", "zebra", "--dir", &dir]);
    assert!(
        out.contains("u9") && out.contains("zebra") && !out.contains("**"),
        "{out}"
    );
    let colour = e.ok(&["search", "zebra", "--dir", &dir, "--color=always"]);
    assert!(
        colour.contains("\x1b[") && colour.contains("zebra"),
        "{colour:?}"
    );
    // Tool output only on request.
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str(r#"{"type":"message","id":"t1","parentId":"u9","timestamp":"2025-03-03T00:00:01.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"segfault in quuxlib"}],"isError":false,"timestamp":1}}"#);
    text.push('\n');
    std::fs::write(&f, text).unwrap();
    assert_eq!(
        e.json(&["search", "quuxlib", "--dir", &dir, "--json"])
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let hits = e.json(&["search", "quuxlib", "--dir", &dir, "--json", "--tools"]);
    assert_eq!(hits[0]["role"], "toolResult");
    assert_eq!(
        e.json(&["search", "quuxlib", "--dir", &dir, "--json", "--role", "tool"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn index_builds_and_rebuilds_and_survives_a_damaged_catalog() {
    let e = Env::new();
    branched(&e);
    let v = e.json(&["index", "--json"]);
    assert_eq!(
        (
            v["files"].as_u64(),
            v["full"].as_u64(),
            v["sessions"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{v}"
    );
    let v = e.json(&["index", "--json"]);
    assert_eq!(
        (v["unchanged"].as_u64(), v["full"].as_u64()),
        (Some(1), Some(0))
    );
    let v = e.json(&["index", "--rebuild", "--json"]);
    assert_eq!(v["full"], 1);
    assert!(e.catalog().exists());
    // Garbage over the catalog behind its first page (which says it is arbor's): set aside
    // with a warning, rebuilt, same answer. (Garbage over the whole file at a --catalog path
    // is not recognisably arbor's and is left alone: catalog_safety.rs.)
    for s in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", e.catalog().display()));
    }
    let mut b = std::fs::read(e.catalog()).unwrap();
    let n = b.len();
    b[4096..n].fill(b'x');
    std::fs::write(e.catalog(), b).unwrap();
    let o = e.run(&["search", "timer", "--all", "--json"]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("damaged"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let hits: Value = serde_json::from_slice::<Value>(&o.stdout).unwrap()["hits"].clone();
    assert_eq!(
        hits.as_array().unwrap().len(),
        3,
        "u3, a3 and the compaction summary"
    );
    // The default location: $XDG_CACHE_HOME/arbor/catalog.db.
    let cache = e.home().join("xdg");
    let o = e
        .cmd(&["ls", "--all"])
        .env_remove("ARBOR_CATALOG")
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(cache.join("arbor/catalog.db").exists());
}

#[test]
fn history_reads_and_writes_omps_history_db() {
    let e = Env::new();
    assert_eq!(e.json(&["history", "--json"]), json!([]));
    e.ok(&[
        "history",
        "--add",
        "fix the git-commit hook   \r\n  please",
        "--cwd",
        "/w",
        "--session",
        "s1",
    ]);
    e.ok(&["history", "--add", "refactor the parser", "--cwd", "/w"]);
    e.ok(&["history", "--add", "   "]);
    assert!(e.home().join(".omp/agent/history.db").exists());
    let all = e.json(&["history", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 2);
    let hook = all
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["prompt"].as_str().unwrap().starts_with("fix"))
        .unwrap();
    assert_eq!(hook["prompt"], "fix the git-commit hook\n  please");
    assert_eq!(
        (hook["cwd"].as_str(), hook["sessionId"].as_str()),
        (Some("/w"), Some("s1"))
    );
    let found = e.json(&["history", "git comm", "--json"]);
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(
        e.json(&["history", "mit", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1,
        "substring fallback"
    );
    let text = e.ok(&["history"]);
    assert!(text.contains("refactor the parser"), "{text}");
}

#[test]
fn sessions_are_named_by_id_prefix() {
    let e = Env::new();
    let f = branched(&e);
    let tree = e.json(&["tree", "9f0e", "--json"]);
    assert_eq!(tree["leaf"], "c1");
    // The file-name part after the last `_` is enough, case-insensitively.
    let o = e.run(&["tree", "9F0E", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A file whose name does not carry the id is found by its header.
    let d = e.pi_dir("--misc--");
    write_lines(
        &d.join("custom-name.jsonl"),
        &[header("77aa55", "/misc", "2025-01-01T00:00:00.000Z")],
    );
    assert_eq!(e.json(&["tree", "77aa", "--json"])["leaf"], Value::Null);
    // Two sessions share a prefix: ambiguous from elsewhere, the local one from its project.
    let proj = e.home().join("proj2");
    std::fs::create_dir_all(&proj).unwrap();
    let enc = format!(
        "--{}--",
        proj.to_str()
            .unwrap()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    write_lines(
        &e.pi_dir(&enc).join("2025-01-01T00-00-00-000Z_9f0eff.jsonl"),
        &[header(
            "9f0eff",
            proj.to_str().unwrap(),
            "2025-01-01T00:00:00.000Z",
        )],
    );
    let o = e.run(&["tree", "9f0e", "--json"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("matches 2 sessions"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = e
        .cmd(&["tree", "9f0e", "--json"])
        .current_dir(&proj)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        t["leaf"],
        Value::Null,
        "the header-only session of this project"
    );
    let _ = f;
}

/// A search counts at most 1,000 matches past `--limit` (counting a phrase's matches means
/// checking the positions of each: issue 21 item 15), says "over 1000" (`moreCapped` in
/// JSON) past that, and counts them all with `--count-all`.
#[test]
fn search_counts_up_to_a_cap_unless_asked_to_count_all() {
    let e = Env::new();
    let d = e.pi_dir("--home-dev-cap--");
    let mut lines = vec![header("cap", "/home/dev/cap", "2025-01-01T00:00:00.000Z")];
    let mut parent: Option<String> = None;
    for k in 0..1100 {
        let id = format!("m{k:06}");
        lines.push(msg(
            &id,
            parent.as_deref(),
            "2025-01-01T00:00:01.000Z",
            "user",
            &format!("walrus sighting number {k}"),
        ));
        parent = Some(id);
    }
    write_lines(&d.join("2025-01-01T00-00-00-000Z_cap.jsonl"), &lines);
    let dir = d.to_string_lossy().into_owned();
    let full = |args: &[&str]| -> Value {
        let o = e.run(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let capped = full(&["search", "walrus", "--dir", &dir, "--json", "--limit", "5"]);
    assert_eq!(capped["hits"].as_array().map(Vec::len), Some(5));
    assert_eq!(capped["more"], 1000, "{}", capped["more"]);
    assert_eq!(capped["moreCapped"], true);
    let all = full(&[
        "search",
        "walrus",
        "--dir",
        &dir,
        "--json",
        "--limit",
        "5",
        "--count-all",
    ]);
    assert_eq!(all["more"], 1095);
    assert!(all.get("moreCapped").is_none(), "{all}");
    // Under the cap the count is exact, and says so.
    let exact = full(&[
        "search", "walrus", "--dir", &dir, "--json", "--limit", "200",
    ]);
    assert_eq!(exact["more"], 900);
    assert!(exact.get("moreCapped").is_none(), "{exact}");
    let o = e.run(&["search", "walrus", "--dir", &dir, "--limit", "5"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("over 1000 more matches"), "{said}");
}

/// A search without a watcher reads the directories while it searches the catalog and answers
/// only from a catalog that is as the files are (issue 21, item 15): a new session, an
/// appended turn, a rewrite and a deletion made between two searches are each in the next
/// answer.
#[test]
fn search_without_a_watcher_answers_from_the_files_as_they_are() {
    let e = Env::new();
    let d = e.pi_dir("--w--");
    let dir = d.to_str().unwrap().to_string();
    let s = |q: &str| -> Vec<String> {
        e.json(&["search", q, "--dir", &dir, "--json"])
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["entryId"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let f1 = d.join("2025-01-01T00-00-00-000Z_s1.jsonl");
    write_lines(
        &f1,
        &[
            header("s1", "/w", "2025-01-01T00:00:00.000Z"),
            msg("a1", None, "2025-01-01T00:00:01.000Z", "user", "walrus one"),
        ],
    );
    assert_eq!(s("walrus"), ["a1"]);
    assert!(s("narwhal").is_empty());
    // A new session.
    let f2 = d.join("2025-01-02T00-00-00-000Z_s2.jsonl");
    write_lines(
        &f2,
        &[
            header("s2", "/w", "2025-01-02T00:00:00.000Z"),
            msg(
                "b1",
                None,
                "2025-01-02T00:00:01.000Z",
                "user",
                "narwhal two",
            ),
        ],
    );
    assert_eq!(s("narwhal"), ["b1"]);
    // An appended turn.
    let mut text = std::fs::read_to_string(&f1).unwrap();
    text.push_str(&msg(
        "a2",
        Some("a1"),
        "2025-01-01T00:00:02.000Z",
        "assistant",
        "narwhal too",
    ));
    text.push('\n');
    std::fs::write(&f1, text).unwrap();
    let mut got = s("narwhal");
    got.sort();
    assert_eq!(got, ["a2", "b1"]);
    // A rewrite: the old text is gone.
    write_lines(
        &f1,
        &[
            header("s1", "/w", "2025-01-01T00:00:00.000Z"),
            msg("a1", None, "2025-01-01T00:00:01.000Z", "user", "okapi"),
        ],
    );
    assert!(s("walrus").is_empty());
    assert_eq!(s("narwhal"), ["b1"]);
    // A deletion.
    std::fs::remove_file(&f2).unwrap();
    assert!(s("narwhal").is_empty());
    assert_eq!(s("okapi"), ["a1"]);
}
