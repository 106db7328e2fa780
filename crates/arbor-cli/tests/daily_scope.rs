//! Issue 24, items 6, 9 and 10 (scopes, the README's truth, completion, listing filters):
//! what a person sees at 80 columns, run through the real binary with a private HOME laid
//! out as pi lays it out.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A private HOME with one project (`$HOME/app`) of pi sessions.
struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

/// pi's session directory of a working directory.
fn pi_dir(home: &Path, cwd: &Path) -> PathBuf {
    let enc = cwd
        .to_string_lossy()
        .trim_start_matches('/')
        .replace(['/', '\\', ':'], "-");
    home.join(".pi/agent/sessions").join(format!("--{enc}--"))
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-0DT10:00:00.000Z","cwd":"CWD"}"#;

fn user(id: &str, parent: Option<&str>, text: &str, day: u32) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-0{day}T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":{ms}}}}}"#,
        ms = 1_767_261_601_000u64 + u64::from(day - 1) * 86_400_000
    )
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().canonicalize().expect("canonical");
        let project = home.join("app");
        std::fs::create_dir_all(&project).expect("project");
        Env {
            _tmp: tmp,
            home,
            project,
        }
    }

    /// Writes a session of the project: `day` sets its times, `lines` its entries.
    fn session(&self, id: &str, day: u32, lines: &[String]) -> PathBuf {
        let dir = pi_dir(&self.home, &self.project);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(format!("2026-01-0{day}T10-00-00-000Z_{id}.jsonl"));
        let mut text = HEADER
            .replace("ID", id)
            .replace("CWD", &self.project.to_string_lossy())
            .replace("0D", &format!("0{day}"));
        text.push('\n');
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).expect("write");
        let t = filetime_of(day);
        let f = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        f.set_modified(t).expect("mtime");
        path
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("COLUMNS", "80")
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ARBOR_CATALOG")
            .env_remove("PI_CONFIG_DIR")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
    }

    /// stdout, then stderr, with HOME written `~`.
    fn seen(&self, o: &Output) -> String {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        text.replace(&self.home.to_string_lossy().to_string(), "~")
    }
}

fn filetime_of(day: u32) -> std::time::SystemTime {
    // 2026-01-0D 10:00:00 UTC.
    let base = 1_767_261_600u64; // 2026-01-01T10:00:00Z
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(base + u64::from(day - 1) * 86_400)
}

/// Two healthy sessions and one with a malformed line, in the current project.
fn three_sessions(env: &Env) -> PathBuf {
    env.session(
        "019a0000-0000-7000-8000-00000000aaaa",
        1,
        &[user("a1", None, "walrus migration plan", 1)],
    );
    env.session(
        "019a0000-0000-7000-8000-00000000bbbb",
        2,
        &[
            user(
                "b1",
                None,
                "export X=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
                2,
            ),
            user("b2", Some("b1"), "thanks", 2),
        ],
    );
    env.session(
        "019a0000-0000-7000-8000-00000000cccc",
        3,
        &[
            user("c1", None, "tidy the theme", 3),
            "{not json".to_string(),
        ],
    )
}

/// Item 6: `check` without SESSION checks the current project, as `ls` lists it, prints
/// only what has problems and a one-line summary; `--verbose` lists every file.
#[test]
fn check_takes_the_current_project_and_prints_problems_and_a_summary() {
    let env = Env::new();
    three_sessions(&env);
    let o = env.run(&["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", env.seen(&o));
    let dir = "~/.pi/agent/sessions/--";
    let seen = env.seen(&o);
    let proj = seen
        .split(dir)
        .nth(1)
        .and_then(|s| s.split("--/").next())
        .expect("the session directory is named")
        .to_string();
    assert_eq!(
        seen,
        format!(
            "{dir}{proj}--/2026-01-03T10-00-00-000Z_019a0000-0000-7000-8000-00000000cccc.jsonl: 1 problem\n  line 3: repairable: line 3 (9 bytes) is not a JSON object: invalid JSON: expected string key at byte 1\narbor: checked 3 sessions: 2 ok, 1 with problems\n"
        )
    );
    let v = env.seen(&env.run(&["check", "--verbose"]));
    // (Each healthy file's line; "1 entries" is item 8's, another change's.)
    assert_eq!(v.matches(".jsonl: ok (").count(), 2, "{v}");
    assert!(v.contains("00000000cccc.jsonl: 1 problem"), "{v}");
    // The same scope flags as ls: --dir and --all.
    let d = pi_dir(&env.home, &env.project);
    let o = env.run(&["check", "--dir", d.to_str().expect("utf8")]);
    assert!(env
        .seen(&o)
        .ends_with("checked 3 sessions: 2 ok, 1 with problems\n"));
    let o = env.run(&["check", "--all"]);
    assert!(env
        .seen(&o)
        .ends_with("checked 3 sessions: 2 ok, 1 with problems\n"));
    // An explicit SESSION is checked alone.
    let o = env.run(&["check", "019a0000-0000-7000-8000-00000000aaaa"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        env.seen(&o),
        "arbor: checked 1 session: 1 ok, 0 with problems\n"
    );
    // An argument that names no session is reported and the others are still checked, each
    // in its place (JSON: an object per argument).
    let o = env.run(&[
        "check",
        "--json",
        "nosuch",
        "019a0000-0000-7000-8000-00000000aaaa",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v[0]["path"], "nosuch");
    assert_eq!(v[0]["findings"][0]["kind"], "unreadable");
    assert_eq!(v[1]["ok"], true);
    let o = env.run(&["check", "nosuch", "019a0000-0000-7000-8000-00000000aaaa"]);
    let seen = env.seen(&o);
    assert!(
        seen.ends_with(
            "arbor: checked 1 session: 1 ok, 0 with problems; 1 file not checked (see above)\n"
        ),
        "{seen}"
    );
    // A directory with no sessions gets ls's hint, naming the command.
    let sub = env.home.join("elsewhere");
    std::fs::create_dir_all(&sub).expect("dir");
    let o = env.cmd(&["check"]).current_dir(&sub).output().expect("run");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        env.seen(&o),
        "arbor: no sessions for ~/elsewhere (arbor check --all: every project)\n"
    );
}

/// Item 6: `secrets` without SESSION scans the current project.
#[test]
fn secrets_takes_the_current_project() {
    let env = Env::new();
    three_sessions(&env);
    let o = env.run(&["secrets"]);
    let seen = env.seen(&o);
    assert_eq!(o.status.code(), Some(1), "{seen}");
    assert!(
        seen.contains("00000000bbbb.jsonl:2  github-token  entry b1"),
        "{seen}"
    );
    assert!(seen.contains("1 secret in 3 sessions"), "{seen}");
    // The same flags as ls.
    let o = env.run(&["secrets", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let d = pi_dir(&env.home, &env.project);
    let o = env.run(&["secrets", "--dir", d.to_str().expect("utf8"), "--json"]);
    assert_eq!(o.status.code(), Some(1));
}

/// Item 6: one scope group: `ls`, `search`, `stats`, `check` and `secrets` document `--dir`
/// and `--all` in the same words.
#[test]
fn the_scope_flags_read_the_same_on_every_command() {
    let env = Env::new();
    let help_line = |cmd: &str, flag: &str| -> String {
        let o = env.run(&[cmd, "--help"]);
        let h = String::from_utf8_lossy(&o.stdout).to_string();
        let at = h
            .find(&format!("  {flag}"))
            .unwrap_or_else(|| panic!("{cmd} has no {flag}:\n{h}"));
        h[at..].lines().next().unwrap_or("").to_string()
    };
    for flag in ["--dir <DIR>", "-a, --all"] {
        let want = help_line("ls", flag);
        for cmd in ["search", "stats", "check", "secrets"] {
            assert_eq!(help_line(cmd, flag), want, "{cmd} {flag}");
        }
    }
}

/// The commands `arbor --help` lists.
fn commands(env: &Env) -> Vec<String> {
    let top = String::from_utf8_lossy(&env.run(&["--help"]).stdout).to_string();
    top.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// Item 9: the README says each command's `--help` lists its own flags, and the options every
/// command takes once, under their own heading: true of every command.
#[test]
fn each_help_lists_its_own_flags_then_the_global_options_under_their_heading() {
    let env = Env::new();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README");
    assert!(
        readme.contains("under `Global options:`"),
        "the README says where the global options are"
    );
    let cmds = commands(&env);
    assert!(cmds.len() >= 18, "{cmds:?}");
    for c in &cmds {
        let h = String::from_utf8_lossy(&env.run(&[c, "-h"]).stdout).to_string();
        let own: String = h
            .lines()
            .skip_while(|l| !l.starts_with("Options:"))
            .take_while(|l| !l.starts_with("Global options:"))
            .collect::<Vec<_>>()
            .join("\n");
        let global: String = h
            .lines()
            .skip_while(|l| !l.starts_with("Global options:"))
            .collect::<Vec<_>>()
            .join("\n");
        for flag in ["--agent-dir", "--color"] {
            assert!(
                !own.contains(flag),
                "arbor {c} -h: {flag} among its own:\n{h}"
            );
            assert!(
                global.contains(flag),
                "arbor {c} -h: no {flag} under Global options:\n{h}"
            );
        }
    }
}

/// Item 9: every flag an error message suggests is one the command takes. A malformed blob
/// reference stops `show`, `context` and `export`; each offers `--lenient`, and each takes it.
#[test]
fn every_flag_a_message_suggests_exists_on_that_command() {
    let env = Env::new();
    let image = r#"{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"screenshot","content":[{"type":"image","data":"blob:sha256:zz","mimeType":"image/png"}],"isError":false,"timestamp":2}}"#;
    let path = env.session(
        "019a0000-0000-7000-8000-00000000dddd",
        1,
        &[user("a1", None, "look", 1), image.to_string()],
    );
    let s = path.to_str().expect("utf8");
    let mut suggested = 0;
    for cmd in [
        vec!["show", s, "--no-pager"],
        vec!["context", s],
        vec!["export", s],
        vec!["export", s, "--format", "json"],
        vec!["export", s, "--format", "html"],
    ] {
        let o = env.run(&cmd);
        assert_ne!(o.status.code(), Some(0), "{cmd:?} fails on the reference");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let flags: Vec<String> = err
            .split(|c: char| c.is_whitespace() || "()`,;".contains(c))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(str::to_string)
            .collect();
        for flag in flags {
            suggested += 1;
            let mut again = cmd.clone();
            again.push(&flag);
            let o = env.run(&again);
            let e = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{cmd:?} suggests {flag}, which it does not take: {e}"
            );
            assert!(e.contains("blob reference left in place"), "{e}");
        }
    }
    assert!(suggested >= 5, "each error suggests a flag");
    // What --lenient leaves in place is marked, never decoded as if it were an image.
    for format in ["md", "html"] {
        let out = env.home.join(format!("out.{format}"));
        let o = env.run(&[
            "export",
            s,
            "--lenient",
            "--format",
            format,
            "-o",
            out.to_str().expect("utf8"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", env.seen(&o));
        let text = std::fs::read_to_string(&out).expect("export");
        assert!(
            text.contains("[image missing: malformed blob reference]"),
            "{format}"
        );
        assert!(!env.home.join(format!("out.{format}.assets")).exists());
    }
    let o = env.run(&["show", s, "--lenient", "--no-pager"]);
    assert!(env
        .seen(&o)
        .contains("[image missing: malformed blob reference]"));
}

/// The id column of a table (its first word per row).
fn ids(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// An omp session of another project, with a title.
fn omp_session(env: &Env) {
    let dir = env.home.join(".omp/agent/sessions/-mix");
    std::fs::create_dir_all(&dir).expect("dir");
    let slot = format!(
        "{{\"type\":\"title\",\"v\":1,\"title\":\"Omp Walrus notes\"{}}}",
        " ".repeat(200)
    );
    let slot: String = format!("{slot:<255}").chars().take(255).collect();
    let id = "019b0000-0000-7000-8000-00000000eeee";
    let body = [
        slot,
        HEADER
            .replace("ID", id)
            .replace("CWD", "/mix")
            .replace("0D", "05"),
        user("o1", None, "a very large omp session", 5),
    ]
    .join("\n")
        + "\n"
        + &format!("{}\n", user("o2", Some("o1"), &"x".repeat(4000), 5));
    let path = dir.join(format!("2026-01-05T10-00-00-000Z_{id}.jsonl"));
    std::fs::write(&path, body).expect("write");
    let f = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    f.set_modified(filetime_of(5)).expect("mtime");
}

/// Item 10: `ls` filters (`--since`, `--tool`, `--grep`) and orders (`--sort`, `--reverse`).
#[test]
fn ls_filters_and_sorts() {
    let env = Env::new();
    three_sessions(&env);
    omp_session(&env);
    let ls = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["ls"];
        all.extend_from_slice(args);
        let o = env.run(&all);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", env.seen(&o));
        ids(&String::from_utf8_lossy(&o.stdout))
    };
    let (a, b, c, e) = (
        "019a0000-0000-7000-8000-00000000aaaa",
        "019a0000-0000-7000-8000-00000000bbbb",
        "019a0000-0000-7000-8000-00000000cccc",
        "019b0000-0000-7000-8000-00000000eeee",
    );
    let short = |v: Vec<String>| -> Vec<char> {
        v.iter()
            .map(|id| {
                [a, b, c, e]
                    .iter()
                    .position(|full| full.starts_with(id.as_str()))
                    .map_or('?', |n| ['a', 'b', 'c', 'e'][n])
            })
            .collect()
    };
    assert_eq!(short(ls(&[])), ['c', 'b', 'a']);
    assert_eq!(short(ls(&["--reverse"])), ['a', 'b', 'c']);
    // --grep: titles and first messages, in any case; the omp title too.
    assert_eq!(short(ls(&["--grep", "WALRUS"])), ['a']);
    assert_eq!(short(ls(&["--all", "--grep", "walrus"])), ['e', 'a']);
    assert_eq!(short(ls(&["--all", "--grep", "a very LARGE"])), ['e']);
    // --tool.
    assert_eq!(short(ls(&["--all", "--tool", "omp"])), ['e']);
    assert_eq!(short(ls(&["--all", "--tool", "pi"])), ['c', 'b', 'a']);
    // --since: last activity at or after.
    assert_eq!(short(ls(&["--since", "2026-01-02"])), ['c', 'b']);
    // --sort.
    assert_eq!(
        short(ls(&["--all", "--sort", "size"])),
        ['e', 'b', 'c', 'a']
    );
    assert_eq!(short(ls(&["--sort", "name"])), ['b', 'c', 'a']);
    assert_eq!(
        short(ls(&["--sort", "created", "--reverse"])),
        ['a', 'b', 'c']
    );
    // JSON lists what the table lists.
    let o = env.run(&["ls", "--grep", "tidy", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(1));
    assert_eq!(v[0]["id"], c);
    // Nothing matching says so.
    let o = env.run(&["ls", "--grep", "nowhere"]);
    assert_eq!(env.seen(&o), "arbor: no session matches (3 listed)\n");
    // -n N: the first N of what the filters kept, in their order.
    assert_eq!(
        short(ls(&["--all", "--sort", "size", "-n", "2"])),
        ['e', 'b']
    );
    assert_eq!(short(ls(&["--all", "--tool", "pi", "-n", "1"])), ['c']);
    // --tool keeps what the TOOL column says: a pi-written file in omp's directory is omp's
    // (omp reads it; pi never looks there).
    let dir = env.home.join(".omp/agent/sessions/-mix");
    let f = dir.join("2026-01-06T10-00-00-000Z_019c0000-0000-7000-8000-00000000ffff.jsonl");
    let body = HEADER
        .replace("ID", "019c0000-0000-7000-8000-00000000ffff")
        .replace("CWD", "/mix")
        .replace("0D", "06")
        + "\n"
        + &user("f1", None, "pi words in omp's place", 6)
        + "\n";
    std::fs::write(&f, body).expect("write");
    let table = String::from_utf8_lossy(&env.run(&["ls", "--all"]).stdout).to_string();
    let row = table
        .lines()
        .find(|l| l.starts_with("019c"))
        .expect("listed")
        .to_string();
    assert!(row.contains(" omp "), "{table}");
    let pi = ls(&["--all", "--tool", "pi"]);
    assert!(!pi.iter().any(|id| id.starts_with("019c")), "{pi:?}");
    let omp = ls(&["--all", "--tool", "omp"]);
    assert!(omp.iter().any(|id| id.starts_with("019c")), "{omp:?}");
}

/// Item 10: completion of session ids and entry ids, asked the way the scripts ask
/// (`arbor __complete INDEX WORD...`), and through the bash script in a real bash.
#[test]
fn completion_of_session_and_entry_ids() {
    let env = Env::new();
    three_sessions(&env);
    let ask = |words: &[&str]| -> (Option<i32>, String, String) {
        let o = env.run(words);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (a, b, c) = (
        "019a0000-0000-7000-8000-00000000aaaa",
        "019a0000-0000-7000-8000-00000000bbbb",
        "019a0000-0000-7000-8000-00000000cccc",
    );
    // Session ids where a SESSION goes, newest first, matching the word typed.
    assert_eq!(
        ask(&["__complete", "2", "arbor", "show", "019A"]),
        (Some(0), format!("{c}\n{b}\n{a}\n"), String::new())
    );
    assert_eq!(
        ask(&[
            "__complete",
            "3",
            "arbor",
            "check",
            a,
            "019a0000-0000-7000-8000-00000000b"
        ]),
        (Some(0), format!("{b}\n"), String::new())
    );
    // Entry ids after --at / --leaf, of the SESSION on the line.
    assert_eq!(
        ask(&[
            "__complete",
            "4",
            "arbor",
            "fork",
            "019a0000-0000-7000-8000-00000000bb",
            "--at",
            ""
        ]),
        (Some(0), "b1\nb2\n".to_string(), String::new())
    );
    assert_eq!(
        ask(&["__complete", "3", "arbor", "show", "--leaf", "", b]),
        (Some(0), String::new(), String::new()),
        "no SESSION before the cursor: nothing to offer"
    );
    // Elsewhere the static script answers (exit 1), and nothing is ever said on stderr.
    for words in [
        vec!["__complete", "2", "arbor", "ls", ""],
        vec!["__complete", "1", "arbor", "sh"],
        vec!["__complete", "2", "arbor", "show", "--fu"],
        vec!["__complete", "3", "arbor", "export", "-o", ""],
        vec!["__complete", "x"],
        vec!["__complete"],
    ] {
        assert_eq!(
            ask(&words),
            (Some(1), String::new(), String::new()),
            "{words:?}"
        );
    }
    assert_eq!(
        ask(&["__complete", "2", "arbor", "show", "zz", "--at", "x"]).2,
        "",
        "an unknown session: silence"
    );
    // The scripts call it.
    for shell in ["bash", "zsh", "fish"] {
        let o = env.run(&["completions", shell]);
        let script = String::from_utf8_lossy(&o.stdout);
        assert!(script.contains("arbor __complete"), "{shell}");
        assert!(
            script.contains("agent-dir"),
            "{shell}: the static part stays"
        );
    }
    // In a real bash: the script's function fills COMPREPLY for `arbor show 019a0000-0000-7000-8000-00000000c<TAB>`.
    let script = env.home.join("arbor.bash");
    std::fs::write(&script, env.run(&["completions", "bash"]).stdout).expect("script");
    let bin = Path::new(env!("CARGO_BIN_EXE_arbor"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run_bash = |line: &str| -> String {
        let o = Command::new("bash")
            .args([
                "-c",
                r#"source "$SCRIPT"; read -ra COMP_WORDS <<< "$LINE"; [[ "$LINE" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$LINE"; COMP_POINT=${#LINE}; _arbor_dynamic arbor "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\n' "${COMPREPLY[@]}""#,
            ])
            .current_dir(&env.project)
            .env("HOME", &env.home)
            .env("XDG_CACHE_HOME", env.home.join("cache"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env("PATH", &path)
            .env("LINE", line)
            .env("SCRIPT", &script)
            .output()
            .expect("bash");
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    assert_eq!(
        run_bash("arbor show 019a0000-0000-7000-8000-00000000c"),
        format!("{c}\n")
    );
    assert_eq!(run_bash(&format!("arbor show {a} --leaf ")), "a1\n");
    // A file name is anyone's: one that would run a command in bash's expansion, or split
    // into two candidates, is never offered, and nothing it holds runs.
    let dir = pi_dir(&env.home, &env.project);
    let hostile = dir.join("2026-01-04T10-00-00-000Z_019a$(touch PWNED)x.jsonl");
    std::fs::copy(
        dir.join(format!("2026-01-01T10-00-00-000Z_{a}.jsonl")),
        &hostile,
    )
    .expect("copy");
    let offered = run_bash("arbor show 019a");
    assert_eq!(offered, format!("{c}\n{b}\n{a}\n"));
    assert!(
        !env.project.join("PWNED").exists(),
        "a file name ran a command"
    );
    assert_eq!(
        ask(&["__complete", "2", "arbor", "show", "019a$"]),
        (Some(0), String::new(), String::new())
    );
    // Subcommands still come from the static part.
    assert!(run_bash("arbor sec").contains("secrets"));
}

/// Splits a README command line as sh would for these lines: words, '...' and "..." quoted.
fn sh_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in line.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Item 9: every command of the README's tour runs (on sessions standing in for the tour's
/// ids), so that the tour cannot name a flag or a form arbor does not take.
#[test]
fn every_command_of_the_readme_tour_runs() {
    let env = Env::new();
    three_sessions(&env);
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README");
    let tour = readme
        .split("\n## A tour\n")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("the README has a tour");
    let mut in_sh = false;
    let mut lines = Vec::new();
    for l in tour.lines() {
        match l.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh && l.starts_with("arbor") => {
                lines.push(l.split(" #").next().unwrap_or(l).trim().to_string())
            }
            _ => {}
        }
    }
    assert!(lines.len() >= 6, "{lines:?}");
    let mut ran = Vec::new();
    for line in &lines {
        let line = line
            .replace("01a2031c-aa", "019a0000-0000-7000-8000-00000000aaaa")
            .replace("01a2031c-af", "019a0000-0000-7000-8000-00000000bbbb")
            .replace("e4b1", "a1");
        let words = sh_words(&line);
        let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
        let o = env.run(&args);
        // search: 1 is "no match", as grep.
        let ok = o.status.code() == Some(0) || (args[0] == "search" && o.status.code() == Some(1));
        assert!(ok, "{line}: {}", env.seen(&o));
        ran.push(args[0].to_string());
    }
    for c in ["ls", "show", "tree", "fork", "search", "rm"] {
        assert!(ran.iter().any(|r| r == c), "the tour runs {c}: {ran:?}");
    }
}
