//! What a person reads in a day of use (issue 24, items 1, 3, 7 and 8), run as a user runs
//! it: the real `arbor` at 80 columns, a private HOME with pi's and omp's agent directories
//! laid out as they lay them out, and the text compared whole.
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
            .env_remove("PI_CONFIG_DIR")
            .env_remove("NO_COLOR")
            .env_remove("PAGER")
            .current_dir(self.h());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run arbor")
    }
    /// stdout and stderr, with the home directory written `HOME`.
    fn texts(&self, args: &[&str]) -> (String, String) {
        let o = self.run(args);
        let h = self.h().to_string_lossy().into_owned();
        (
            String::from_utf8_lossy(&o.stdout).replace(&h, "HOME"),
            String::from_utf8_lossy(&o.stderr).replace(&h, "HOME"),
        )
    }
    fn project_dir(&self, tool: &str, cwd: &str) -> PathBuf {
        let enc = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
        let d = self.h().join(tool).join("agent/sessions").join(enc);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }
}

/// A pi v3 session of `turns` user/assistant turns, the first user message `title`.
fn session_text(id: &str, cwd: &str, title: &str, turns: usize) -> String {
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}"#
    )];
    let mut parent = "null".to_string();
    for t in 0..turns {
        let text = if t == 0 {
            title.to_string()
        } else {
            format!("turn {t}")
        };
        lines.push(format!(
            r#"{{"type":"message","id":"u{t}","parentId":{parent},"timestamp":"2026-01-01T00:0{t}:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1767225601000}}}}"#
        ));
        lines.push(format!(
            r#"{{"type":"message","id":"a{t}","parentId":"u{t}","timestamp":"2026-01-01T00:0{t}:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"done {t}"}}],"provider":"anthropic","model":"claude-x","usage":{{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{{"input":0.01,"output":0.01,"cacheRead":0,"cacheWrite":0,"total":0.02}}}},"stopReason":"stop","timestamp":1767225602000}}}}"#
        ));
        parent = format!(r#""a{t}""#);
    }
    lines.join("\n") + "\n"
}

fn session(env: &Env, tool: &str, cwd: &str, id: &str, title: &str, turns: usize) -> PathBuf {
    let p = env
        .project_dir(tool, cwd)
        .join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&p, session_text(id, cwd, title, turns)).expect("write");
    p
}

/// Item 7: a file that is not a session is named once, with its path once; on the next run
/// (the file unchanged) one line counts it instead of naming it again; an empty file (what
/// pi and omp leave before their first write, and `ls` does not list) is not warned about.
#[test]
fn not_counted_files_are_named_once_and_empty_files_not_at_all() {
    let env = Env::new();
    let d = env.project_dir(".pi", "/w/app");
    session(
        &env,
        ".pi",
        "/w/app",
        "0199aaaa-1111-7000-8000-000000000001",
        "hello",
        1,
    );
    std::fs::write(d.join("junk.jsonl"), "not json\n").expect("write");
    std::fs::write(d.join("2026-01-02T00-00-00-000Z_empty.jsonl"), "").expect("write");
    let (_, first) = env.texts(&["stats", "--all"]);
    assert_eq!(
        first,
        "arbor: HOME/.pi/agent/sessions/--w-app--/junk.jsonl: not counted: not a session file: \
         no line of the file is a JSON object\n"
    );
    let (_, again) = env.texts(&["stats", "--all"]);
    assert_eq!(
        again,
        "arbor: 1 file not counted, as said before (--no-catalog names it)\n"
    );
    // Without the catalog every file is read, and named, again.
    let (_, read) = env.texts(&["stats", "--all", "--no-catalog"]);
    assert_eq!(read, first);
    // A session named on the command line is read the same way.
    let junk = d.join("junk.jsonl");
    let (_, named) = env.texts(&["stats", junk.to_str().expect("utf-8")]);
    assert!(named.ends_with(&first), "{named}");
    // `secrets` says the same of the same files: the path once, nothing of the empty file.
    let (_, secrets) = env.texts(&["secrets", "--all"]);
    assert_eq!(
        secrets,
        "arbor: HOME/.pi/agent/sessions/--w-app--/junk.jsonl: not scanned: not a session \
         file: no line of the file is a JSON object\n\
         arbor: 0 secrets in 1 session; 1 not scanned (see above)\n"
    );
}

/// Item 8: one of a thing is "1 entry", "1 session", "1 file", never "1 entries".
#[test]
fn one_of_a_thing_is_singular() {
    let env = Env::new();
    let p = session(
        &env,
        ".pi",
        "/w/app",
        "0199aaaa-1111-7000-8000-000000000001",
        "hello",
        1,
    );
    let lone = env
        .project_dir(".pi", "/w/lone")
        .join("2026-01-01T00-00-00-000Z_0199bbbb-1111-7000-8000-000000000001.jsonl");
    std::fs::write(
        &lone,
        r#"{"type":"session","version":3,"id":"0199bbbb-1111-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/lone"}
{"type":"message","id":"u0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}
"#,
    )
    .expect("write");
    let (out, _) = env.texts(&["check", "--verbose", lone.to_str().expect("utf-8")]);
    assert!(out.ends_with(": ok (1 entry)\n"), "{out}");
    let (out, _) = env.texts(&["show", "0199bbbb"]);
    assert!(out.contains(" · 1 entry from the root to"), "{out}");
    let (_, err) = env.texts(&["secrets", p.to_str().expect("utf-8")]);
    assert_eq!(err, "arbor: 0 secrets in 1 session\n");
    let one = Env::new();
    session(
        &one,
        ".pi",
        "/w/app",
        "0199aaaa-1111-7000-8000-000000000001",
        "hello",
        1,
    );
    let (out, _) = one.texts(&["index"]);
    assert!(
        out.starts_with("1 session in 1 file under 1 project directory\n"),
        "{out}"
    );
}

/// Item 8: `show` on a screen of 80 columns breaks long lines at spaces, not inside words
/// (the terminal would cut "understand" into "understan" and "d").
#[test]
fn show_wraps_at_spaces_on_a_screen() {
    let env = Env::new();
    let words = "Please read the module and tell me whether you understand what the cache \
                 invalidation does when two writers race, and what 日本語の文字 look like";
    session(
        &env,
        ".pi",
        "/w/app",
        "0199aaaa-1111-7000-8000-000000000001",
        words,
        1,
    );
    let (out, _) = env.texts(&["show", "0199aaaa"]);
    let body: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("── user"))
        .skip(1)
        .take(3)
        .collect();
    assert_eq!(
        body,
        [
            "Please read the module and tell me whether you understand what the cache",
            "invalidation does when two writers race, and what 日本語の文字 look like",
            "",
        ],
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    // Into a pipe without $COLUMNS the lines stay whole (a reader may rewrap them).
    let o = env
        .cmd(&["show", "0199aaaa"])
        .env_remove("COLUMNS")
        .output()
        .expect("show");
    assert!(String::from_utf8_lossy(&o.stdout).contains(words));
}

/// Item 8: an export into a directory that does not exist names the directory, not the
/// temporary file arbor would have written first.
#[test]
fn an_export_into_a_missing_directory_names_the_directory() {
    let env = Env::new();
    session(
        &env,
        ".pi",
        "/w/app",
        "0199aaaa-1111-7000-8000-000000000001",
        "hello",
        1,
    );
    let target = env.h().join("no/such/dir/x.md");
    for format in ["md", "html", "json"] {
        let o = env.run(&[
            "export",
            "0199aaaa",
            "--format",
            format,
            "-o",
            target.to_str().expect("utf-8"),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).replace(&*env.h().to_string_lossy(), "HOME"),
            "arbor: HOME/no/such/dir/x.md: the directory HOME/no/such/dir does not exist\n"
        );
    }
}

/// Item 1: at 80 columns, `stats` names each session as `ls` does (short id and title) and
/// each project by its directory (`~` for the home directory, the end of a long path kept),
/// and every line fits.
#[test]
fn stats_rows_are_told_apart_at_80_columns() {
    let env = Env::new();
    let home = env.h().to_string_lossy().into_owned();
    let webapp = format!("{home}/work/clients/acme/webapp");
    let api = format!("{home}/work/clients/acme/api-server-with-a-long-name");
    session(
        &env,
        ".pi",
        &webapp,
        "0199aaaa-1111-7000-8000-000000000001",
        "fix the login form",
        2,
    );
    session(
        &env,
        ".pi",
        &webapp,
        "0199aaaa-2222-7000-8000-000000000002",
        "theme colours in dark mode",
        1,
    );
    session(
        &env,
        ".pi",
        &api,
        "0199bbbb-3333-7000-8000-000000000003",
        "why is the cache invalidated twice on every write",
        3,
    );
    session(
        &env,
        ".omp",
        "/srv/tools",
        "0199cccc-4444-7000-8000-000000000004",
        "omp session",
        1,
    );
    let (out, err) = env.texts(&["stats", "--all"]);
    assert_eq!(err, "");
    let want = "\
GROUP                    TURNS  INPUT OUTPUT CACHE-R CACHE-W COST PATH BRANCHES
0199cc     omp session       1    100     10       0       0     $0.02    $0.00
0199bb     why is the c…     3    300     30       0       0     $0.06    $0.00
0199aaaa-1 fix the logi…     2    200     20       0       0     $0.04    $0.00
0199aaaa-2 theme colour…     1    100     10       0       0     $0.02    $0.00

total                        7    700     70       0       0     $0.14    $0.00
";
    assert_eq!(out, want);
    let (out, _) = env.texts(&["stats", "--all", "--by", "project"]);
    let want = "\
GROUP                    TURNS  INPUT OUTPUT CACHE-R CACHE-W COST PATH BRANCHES
/srv/tools                   1    100     10       0       0     $0.02    $0.00
…server-with-a-long-name     3    300     30       0       0     $0.06    $0.00
…/clients/acme/webapp        3    300     30       0       0     $0.06    $0.00

total                        7    700     70       0       0     $0.14    $0.00
";
    assert_eq!(out, want);
    for l in out.lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
}

/// Item 3: a hit is headed as `ls` names its session (short id, age, title), with the role
/// and entry, and fits 80 columns; `--long` adds the file; `re:` is the browser's regular
/// expression here too; a directory without sessions gets `ls`'s hint.
#[test]
fn search_hits_read_as_ls_rows_and_take_the_browsers_queries() {
    let env = Env::new();
    let cwd = env.h().join("app");
    std::fs::create_dir_all(cwd.join("src")).expect("mkdir");
    let cwd = cwd.to_str().expect("utf-8");
    let long = "the theme colours are read once at start, so a change of the theme in the \
                settings needs a restart of the whole application before it shows anywhere";
    session(
        &env,
        ".pi",
        cwd,
        "0199aaaa-1111-7000-8000-000000000001",
        long,
        1,
    );
    session(
        &env,
        ".pi",
        cwd,
        "0199bbbb-2222-7000-8000-000000000002",
        "dark theming",
        2,
    );
    let run = |args: &[&str], dir: &str| {
        let o = env.cmd(args).current_dir(dir).output().expect("search");
        let h = env.h().to_string_lossy().into_owned();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).replace(&h, "HOME"),
            String::from_utf8_lossy(&o.stderr).replace(&h, "HOME"),
        )
    };
    let (code, out, err) = run(&["search", "restart"], cwd);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let age = out.split_whitespace().nth(1).unwrap_or("").to_string();
    let want = format!(
        "\
0199aa {age:>4}  the theme colours are read once at start, so a change of …  user u0
    …the theme in the settings needs a restart of the whole application before …
"
    );
    assert_eq!(out, want);
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    let (_, out, _) = run(&["search", "restart", "--long"], cwd);
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("    ~/.pi/agent/sessions/--",)
                && l.contains("_0199aaaa-1111-7000-8000-000000000001.jsonl  2026-01-01 00:00")),
        "{out}"
    );
    // `re:` as in the browser: a regular expression, case-insensitive.
    let (code, out, err) = run(&["search", "re:them(e|ing)\\b", "--role", "user"], cwd);
    assert_eq!((code, err.as_str()), (Some(0), ""), "{out}");
    let heads: Vec<&str> = out.lines().step_by(2).map(|l| &l[..6]).collect();
    assert_eq!(heads, ["0199bb", "0199aa"], "{out}");
    let (code, _, err) = run(&["search", "re:("], cwd);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("arbor: ") && err.contains("unclosed group") && err.lines().count() == 1,
        "{err}"
    );
    // Nothing found in a subdirectory without sessions: `ls`'s hint, not "0 directories".
    let sub = format!("{cwd}/src");
    let (code, _, err) = run(&["search", "theme"], &sub);
    let (_, _, ls) = run(&["ls"], &sub);
    assert_eq!(code, Some(1));
    // The same hint, naming the command that was run.
    assert_eq!(err, ls.replace("arbor ls", "arbor search"));
    assert!(err.contains("its parent HOME/app has 2"), "{err}");
}

/// Item 3: a hit in a v1 session (entries without ids) carries the id the file's migration
/// gives the entry, the id `show` prints and `show --leaf` / `fork --at` take; a catalog that
/// indexed the file before is rebuilt (schema 7).
#[test]
fn search_hits_in_v1_sessions_carry_the_ids_show_gives() {
    let env = Env::new();
    let d = env.project_dir(".pi", "/w/old");
    let p = d.join("2024-12-03T14-00-00-000Z_0188aaaa-1111-7000-8000-000000000001.jsonl");
    std::fs::write(
        &p,
        r#"{"type":"session","id":"0188aaaa-1111-7000-8000-000000000001","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/w/old"}
{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"where is the walrus","timestamp":1733234401000}}
{"type":"message","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"the walrus is in the zoo"}],"provider":"p","model":"m","stopReason":"stop","timestamp":1733234402000}}
{"type":"message","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"user","content":"thanks, walrus","timestamp":1733234403000}}
"#,
    )
    .expect("write");
    let (show, _) = env.texts(&["show", "0188aaaa"]);
    let shown: Vec<String> = show
        .lines()
        .filter(|l| l.starts_with("── "))
        .filter_map(|l| l.split(" · ").nth(1).map(str::to_string))
        .collect();
    assert_eq!(shown.len(), 3, "{show}");
    let (json, err) = env.texts(&["search", "walrus", "--all", "--json"]);
    assert_eq!(err, "");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let mut found: Vec<String> = v["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["entryId"].as_str().unwrap_or("null").to_string())
        .collect();
    found.sort();
    let mut want = shown.clone();
    want.sort();
    assert_eq!(found, want, "{json}");
    // The ids are ones the other commands take.
    let o = env.run(&["show", "0188aaaa", "--leaf", &shown[1]]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // `re:` hits carry them too.
    let (human, _) = env.texts(&["search", "re:walrus$", "--all"]);
    assert!(
        human
            .lines()
            .next()
            .is_some_and(|l| l.ends_with(&format!("user {}", shown[2]))),
        "{human}"
    );
}
