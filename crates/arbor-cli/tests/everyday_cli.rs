//! The everyday command line, run as a user runs it: `ls` (short ids, tools, columns, order),
//! `tree` and `show` as a person reads them (snapshots at a fixed width, colour on and off),
//! completions, man page and help, flags and exit codes, and what `append` refuses.
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn h(&self) -> &Path {
        self.home.path()
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", self.h())
            .env("ARBOR_CATALOG", self.h().join("catalog.db"))
            .env("COLUMNS", "80")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("NO_COLOR")
            .env_remove("PAGER")
            .current_dir(self.h());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
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
    fn code(&self, args: &[&str]) -> (Option<i32>, String) {
        let o = self.run(args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    fn pi_dir(&self, cwd: &str) -> PathBuf {
        let enc = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
        let d = self.h().join(".pi/agent/sessions").join(enc);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }
}

const H: &str = r#"{"type":"session","version":3,"id":"SID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"CWD"}"#;

/// A session with a branch, a label, an assistant error, a failing tool with long output and
/// a compaction.
fn story(id: &str, cwd: &str) -> String {
    let long: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
    let long = long.join("\\n");
    [
        H.replace("SID", id).replace("CWD", cwd),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"fix the walrus","timestamp":1767225601000}}"#.into(),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t1\nt2\nt3\nt4\nt5"},{"type":"text","text":"looking"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"provider":"anthropic","model":"claude-x","stopReason":"toolUse","timestamp":1767225602000}}"#.into(),
        format!(r#"{{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{long}"}}],"isError":true,"timestamp":1767225603000}}}}"#),
        r#"{"type":"message","id":"a2","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded","timestamp":1767225604000}}"#.into(),
        r#"{"type":"label","id":"l1","parentId":"a2","timestamp":"2026-01-01T00:00:05.000Z","targetId":"u1","label":"start"}"#.into(),
        r#"{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"try again 日本語","timestamp":1767225606000}}"#.into(),
        r#"{"type":"message","id":"a3","parentId":"u2","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":1767225607000}}"#.into(),
    ]
    .join("\n")
        + "\n"
}

fn session(env: &Env, cwd: &str, id: &str, name_ts: &str) -> PathBuf {
    let d = env.pi_dir(cwd);
    let p = d.join(format!("{name_ts}_{id}.jsonl"));
    std::fs::write(&p, story(id, cwd)).expect("write");
    p
}

#[test]
fn ls_rows_carry_a_short_id_that_the_other_commands_take() {
    let env = Env::new();
    let proj = env.h().join("proj");
    std::fs::create_dir_all(proj.join("src/deep")).expect("mkdir");
    let cwd = proj.to_str().expect("utf-8");
    session(
        &env,
        cwd,
        "0199aaaa-1111-7000-8000-000000000001",
        "2026-01-01T00-00-00-000Z",
    );
    session(
        &env,
        cwd,
        "0199aaaa-2222-7000-8000-000000000002",
        "2026-01-02T00-00-00-000Z",
    );
    let out = String::from_utf8(
        env.cmd(&["ls"])
            .current_dir(&proj)
            .output()
            .expect("ls")
            .stdout,
    )
    .expect("utf-8");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("TOOL"),
        "{out}"
    );
    assert_eq!(lines.len(), 3, "{out}");
    // The two ids share "0199aaaa-": the shortest unique prefixes are one character longer.
    let ids: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split_whitespace().next().expect("id"))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, ["0199aaaa-1", "0199aaaa-2"], "{out}");
    assert!(lines[1..]
        .iter()
        .all(|l| l.split_whitespace().nth(1) == Some("pi")));
    for id in &ids {
        env.ok(&["show", id]);
        env.ok(&["tree", id]);
        env.ok(&["context", id]);
    }
    // --long adds the project and the file.
    let long = String::from_utf8(
        env.cmd(&["ls", "--long"])
            .current_dir(&proj)
            .output()
            .expect("ls")
            .stdout,
    )
    .expect("utf-8");
    assert!(
        long.contains("PROJECT") && long.contains(".jsonl"),
        "{long}"
    );
    // A subdirectory names the project above it.
    let o = env
        .cmd(&["ls"])
        .current_dir(proj.join("src/deep"))
        .output()
        .expect("ls");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("its parent {cwd} has 2")), "{err}");
}

#[test]
fn ls_columns_stay_aligned_with_wide_titles_and_table_and_json_agree() {
    let env = Env::new();
    let d = env.pi_dir("/w");
    let titles = [
        "plain title",
        "日本語のタイトルです",
        "emoji 😀😀 title",
        "a",
    ];
    for (n, t) in titles.iter().enumerate() {
        let id = format!("0199bbbb-{n}000-7000-8000-00000000000{n}");
        let body = [
            H.replace("SID", &id).replace("CWD", "/w"),
            format!(r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-0{}T00:00:01.000Z","message":{{"role":"user","content":"{t}","timestamp":{}}}}}"#, n + 1, 1767225601000u64 + n as u64 * 86_400_000),
        ]
        .join("\n")
            + "\n";
        std::fs::write(
            d.join(format!("2026-01-0{}T00-00-00-000Z_{id}.jsonl", n + 1)),
            body,
        )
        .expect("write");
    }
    let out = env.ok(&["ls", "--all"]);
    // The PROJECT column starts at the same display column on every row.
    let cols: Vec<usize> = out
        .lines()
        .map(|l| {
            let at = l
                .rfind("/w")
                .or_else(|| l.find("PROJECT"))
                .expect("project");
            unicode_width(&l[..at])
        })
        .collect();
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{cols:?}\n{out}");
    // Same order as --json.
    let json: Value = serde_json::from_str(&env.ok(&["ls", "--all", "--json"])).expect("json");
    let json_titles: Vec<String> = json
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["firstMessage"].as_str().expect("first").to_string())
        .collect();
    let table_order: Vec<String> = out
        .lines()
        .skip(1)
        .map(|l| {
            titles
                .iter()
                .find(|t| l.contains(*t))
                .map(|t| t.to_string())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(table_order, json_titles, "{out}");
}

fn unicode_width(s: &str) -> usize {
    // Wide: CJK and emoji used above.
    s.chars()
        .map(|c| {
            if ('\u{3000}'..='\u{9fff}').contains(&c) || c >= '\u{1f300}' {
                2
            } else {
                1
            }
        })
        .sum()
}

const TREE_80: &str = "\
● u1 user: fix the walrus [start]
├─ ○ a1 assistant: [thinking] looking [tool call bash]
│  ┊ 2 entries (1 tool result, 1 assistant)
│  ○ l1 label u1 → start
└─ ● u2 user: try again 日本語
   ● a3 assistant: done ◀ leaf
";

#[test]
fn tree_draws_branches_the_path_and_the_leaf() {
    let env = Env::new();
    let p = session(
        &env,
        "/t",
        "0199cccc-0000-7000-8000-000000000001",
        "2026-01-01T00-00-00-000Z",
    );
    let out = env.ok(&["tree", p.to_str().expect("utf-8")]);
    assert_eq!(out, TREE_80);
    // Every line fits 80 columns.
    assert!(out.lines().all(|l| unicode_width(l) <= 80), "{out}");
    // --full: the label entry gets its own line.
    let full = env.ok(&["tree", "--full", p.to_str().expect("utf-8")]);
    assert!(full.contains("│  ○ t1 toolResult: line 1 line 2"), "{full}");
    assert!(full.contains("│  ○ a2 assistant:"), "{full}");
    // Colour only when asked for (or on a terminal), never with NO_COLOR / TERM=dumb.
    let colour = env.ok(&["tree", "--color=always", p.to_str().expect("utf-8")]);
    assert!(colour.contains("\x1b["), "{colour:?}");
    let no = env
        .cmd(&["tree", p.to_str().expect("utf-8")])
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    assert!(!String::from_utf8_lossy(&no.stdout).contains('\x1b'));
    let never = env.ok(&["tree", "--color=never", p.to_str().expect("utf-8")]);
    assert_eq!(never, TREE_80);
}

#[test]
fn show_prints_the_whole_path_errors_as_errors_and_folds_long_output() {
    let env = Env::new();
    let p = session(
        &env,
        "/t",
        "0199dddd-0000-7000-8000-000000000001",
        "2026-01-01T00-00-00-000Z",
    );
    let s = p.to_str().expect("utf-8");
    let out = env.ok(&["show", s, "--leaf", "a2"]);
    assert!(out.contains("── user · u1"), "{out}");
    assert!(out.contains("── assistant claude-x · a1"), "{out}");
    assert!(
        out.contains("▸ thinking\n  t1\n  t2\n  t3\n  … 2 more lines (--full)"),
        "{out}"
    );
    assert!(
        out.contains("▸ tool call bash {\"command\":\"ls\"}"),
        "{out}"
    );
    assert!(out.contains("── tool result bash · t1"), "{out}");
    assert!(out.contains("✗ error\nline 1\n"), "{out}");
    assert!(out.contains("… 22 more lines (--full)"), "{out}");
    assert!(
        out.contains("── assistant · a2"),
        "no empty model brackets: {out}"
    );
    assert!(out.contains("✗ error: overloaded"), "{out}");
    assert!(!out.contains("()"), "{out}");
    let full = env.ok(&["show", s, "--leaf", "a2", "--full"]);
    assert!(full.contains("line 30") && full.contains("t5"), "{full}");
    let quiet = env.ok(&["show", s, "--leaf", "a2", "--no-tools", "--no-thinking"]);
    assert!(
        !quiet.contains("line 1") && !quiet.contains("t1\n") && !quiet.contains("tool call"),
        "{quiet}"
    );
    // --json: the path's entries, raw, with what the model sees of them.
    let j: Value = serde_json::from_str(&env.ok(&["show", s, "--json"])).expect("json");
    let ids: Vec<&str> = j["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["entry"]["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["u1", "u2", "a3"]);
    assert_eq!(j["leaf"], "a3");
    assert_eq!(j["entries"][0]["inContext"], true);
    let c: Value =
        serde_json::from_str(&env.ok(&["show", s, "--context", "--json"])).expect("json");
    assert_eq!(c["messages"].as_array().map(Vec::len), Some(3));
    // No pager when stdout is not a terminal (a pager that fails would fail the command).
    let o = env
        .cmd(&["show", s])
        .env("PAGER", "false")
        .env("LINES", "2")
        .output()
        .expect("run");
    assert!(o.status.success() && !o.stdout.is_empty());
}

#[test]
fn flags_and_exit_codes_do_what_they_say() {
    let env = Env::new();
    let d = env.pi_dir("/f");
    let p = session(
        &env,
        "/f",
        "0199eeee-0000-7000-8000-000000000001",
        "2026-01-01T00-00-00-000Z",
    );
    let s = p.to_str().expect("utf-8");
    let ds = d.to_str().expect("utf-8");
    // search: a hit exits 0, none exits 1 (like grep), a bad flag or role exits 2.
    assert_eq!(env.code(&["search", "walrus", "--dir", ds]).0, Some(0));
    assert_eq!(env.code(&["search", "zzzqqq", "--dir", ds]).0, Some(1));
    assert_eq!(
        env.code(&["search", "zzzqqq", "--dir", ds, "--json"]).0,
        Some(1)
    );
    let (c, e) = env.code(&["search", "walrus", "--dir", ds, "--role", "bogus"]);
    assert_eq!(c, Some(2), "{e}");
    assert_eq!(
        env.code(&["search", "walrus", "--since", "yesterday"]).0,
        Some(2)
    );
    assert_eq!(env.code(&["search", "walrus", "--limit", "0"]).0, Some(2));
    // --limit says how many more there are.
    let (c, e) = env.code(&["search", "walrus OR again", "--dir", ds, "--limit", "1"]);
    assert_eq!(c, Some(0));
    assert!(e.contains("more match"), "{e}");
    let j: Value = serde_json::from_slice(
        &env.run(&[
            "search",
            "walrus OR again",
            "--dir",
            ds,
            "--json",
            "--limit",
            "1",
        ])
        .stdout,
    )
    .expect("json");
    assert_eq!(j["more"], 1, "{j}");
    // ls --dir on a file or a missing directory is an error.
    assert_eq!(env.code(&["ls", "--dir", s]).0, Some(1));
    assert_eq!(env.code(&["ls", "--dir", "/nonexistent/x"]).0, Some(1));
    // --wait takes its value attached; the next argument stays an argument.
    let body = r#"{"type":"message","message":{"role":"user","content":"waited","timestamp":1}}"#;
    env.ok(&["append", "--wait", s, body]);
    env.ok(&["append", "--wait=5", s, body]);
    for bad in ["inf", "nan", "-1", "1e19"] {
        let (c, e) = env.code(&["append", &format!("--wait={bad}"), s, body]);
        assert_eq!(c, Some(2), "--wait={bad}: {e}");
    }
    // One wording for an unknown entry.
    for args in [
        vec!["show", s, "--leaf", "nope"],
        vec!["context", s, "--leaf", "nope"],
        vec!["fork", s, "--at", "nope"],
        vec!["append", s, "--parent", "nope", body],
    ] {
        let (c, e) = env.code(&args);
        assert_eq!(c, Some(1), "{args:?}");
        assert!(e.contains("no entry with id nope"), "{args:?}: {e}");
    }
}

#[test]
fn append_refuses_what_pi_would_not_read_back_and_check_notes_it() {
    let env = Env::new();
    let p = session(
        &env,
        "/a",
        "0199ffff-0000-7000-8000-000000000001",
        "2026-01-01T00-00-00-000Z",
    );
    let s = p.to_str().expect("utf-8");
    for (body, why) in [
        (r#"{"type":"mystery","x":1}"#, "entry type \"mystery\""),
        (
            r#"{"type":"message","message":{"role":"usr","content":"x","timestamp":1}}"#,
            "role \"usr\"",
        ),
        (
            r#"{"type":"message","message":{"role":"user","content":"x"}}"#,
            "timestamp",
        ),
        (
            r#"{"type":"message","message":{"role":"user","content":5,"timestamp":1}}"#,
            "content",
        ),
    ] {
        let before = std::fs::read(&p).expect("read");
        let (c, e) = env.code(&["append", s, body]);
        assert_eq!(c, Some(1), "{body}");
        assert!(
            e.contains("refused") && e.contains(why) && e.contains("--raw"),
            "{e}"
        );
        assert_eq!(std::fs::read(&p).expect("read"), before, "nothing written");
    }
    env.ok(&["append", "--raw", s, r#"{"type":"mystery","x":1}"#]);
    let check = env.run(&["check", s]);
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(out.contains("note: entry type \"mystery\""), "{out}");
    assert_eq!(check.status.code(), Some(0), "a note is not a problem");
    // An empty name is refused.
    let (c, e) = env.code(&["name", s, "  "]);
    assert_eq!(c, Some(1));
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn completions_man_page_and_help() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = env.ok(&["completions", shell]);
        assert!(out.contains("arbor") && out.contains("fork"), "{shell}");
    }
    let man = env.ok(&["man"]);
    assert!(man.contains(".TH arbor") && man.contains("fork"), "{man}");
    let dir = env.h().join("man1");
    env.ok(&["man", "--dir", dir.to_str().expect("utf-8")]);
    assert!(dir.join("arbor.1").exists() && dir.join("arbor-show.1").exists());
    // Each command shows its own flags and examples.
    let new = env.ok(&["new", "--help"]);
    for absent in ["--catalog", "--durability", "--wait"] {
        assert!(!new.contains(absent), "new --help shows {absent}");
    }
    assert!(env.ok(&["ls", "--help"]).contains("--catalog"));
    let migrate = env.ok(&["migrate", "--help"]);
    assert!(
        migrate.contains("Sessions (paths, ids or id prefixes)"),
        "{migrate}"
    );
    for cmd in [
        "ls", "show", "tree", "fork", "rm", "search", "append", "check",
    ] {
        let h = env.ok(&[cmd, "--help"]);
        assert!(h.contains("Example"), "{cmd} --help has no example");
    }
}

#[test]
fn ls_all_orders_omp_and_pi_sessions_the_same_in_the_table_and_the_json() {
    let env = Env::new();
    let pi = env.pi_dir("/mix");
    let omp = env.h().join(".omp/agent/sessions/mix");
    std::fs::create_dir_all(&omp).expect("mkdir");
    // omp's `modified` is the file's mtime (now); pi's the last message (2026-01-0N).
    for n in 1..=2 {
        let id = format!("0199aaaa-000{n}-7000-8000-00000000000{n}");
        let body = [
            H.replace("SID", &id).replace("CWD", "/mix"),
            format!(r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-0{n}T00:00:01.000Z","message":{{"role":"user","content":"pi {n}","timestamp":{}}}}}"#, 1767225601000u64 + n * 86_400_000),
        ]
        .join("\n")
            + "\n";
        std::fs::write(
            pi.join(format!("2026-01-0{n}T00-00-00-000Z_{id}.jsonl")),
            body,
        )
        .expect("write");
    }
    let slot = format!(
        "{{\"type\":\"title\",\"v\":1,\"title\":\"omp one\"{}}}",
        " ".repeat(200)
    );
    let slot = format!("{:<255}", slot);
    let id = "0199bbbb-0001-7000-8000-000000000001";
    let body = [
        slot.chars().take(255).collect::<String>(),
        H.replace("SID", id).replace("CWD", "/mix"),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-05T00:00:01.000Z","message":{"role":"user","content":"omp 1","timestamp":1767571201000}}"#.into(),
    ]
    .join("\n")
        + "\n";
    std::fs::write(
        omp.join(format!("2026-01-05T00-00-00-000Z_{id}.jsonl")),
        body,
    )
    .expect("write");
    let json: Value = serde_json::from_str(&env.ok(&["ls", "--all", "--json"])).expect("json");
    let json_ids: Vec<String> = json
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(json_ids.len(), 3, "{json}");
    let table = env.ok(&["ls", "--all"]);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for (row, id) in rows.iter().zip(&json_ids) {
        let short = row.split_whitespace().next().expect("id");
        assert!(id.starts_with(short), "table {short} vs json {id}\n{table}");
    }
    // The omp session (modified now) comes first in both, with its tool and age.
    assert!(
        rows[0].contains(" omp ") && rows[0].contains("now"),
        "{table}"
    );
}

/// The README's command reference names every command and every flag `--help` shows.
#[test]
fn readme_reference_matches_help() {
    let env = Env::new();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README");
    let top = env.ok(&["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 18, "{commands:?}");
    let mut missing = Vec::new();
    for c in &commands {
        if !readme.contains(&format!("arbor {c}")) {
            missing.push(format!("arbor {c}"));
        }
        let help = env.ok(&[c, "--help"]);
        for word in help.split(|ch: char| ch.is_whitespace() || ch == ',' || ch == '[' || ch == ']')
        {
            let flag = word
                .split('=')
                .next()
                .unwrap_or(word)
                .trim_end_matches(['.', ')', ':', ';']);
            if flag.starts_with("--")
                && flag.len() > 2
                && !["--help", "--agent-dir", "--color"].contains(&flag)
                && !readme.contains(flag)
            {
                missing.push(format!("arbor {c} {flag}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "not in the README: {missing:?}");
}

/// A session listed twice, under its name and through a symbolic link beside it (pi lists
/// both), is one file for the short ids: the link's name, which holds the whole id, does not
/// make the session's short id longer. (`ls` resolves a directory once and each listed link
/// whole, instead of a `canonicalize` per file.)
#[test]
fn a_session_listed_through_a_symlink_is_one_file_for_the_short_ids() {
    let env = Env::new();
    let proj = env.h().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let cwd = proj.to_str().expect("utf-8");
    let id = "0199bbbb-1111-7000-8000-000000000001";
    let p = session(&env, cwd, id, "2026-01-01T00-00-00-000Z");
    let alias = p.with_file_name(format!("{id}-alias.jsonl"));
    std::os::unix::fs::symlink(p.file_name().expect("name"), &alias).expect("symlink");
    let out = env.ok(&[
        "ls",
        "--dir",
        p.parent().expect("dir").to_str().expect("utf-8"),
    ]);
    let ids: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().expect("id"))
        .collect();
    assert_eq!(ids, ["0199bb", "0199bb"], "{out}");
}
