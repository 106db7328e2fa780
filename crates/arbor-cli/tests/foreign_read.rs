//! Issue 26: `show`, `context`, `tree` and `export` of another agent's session (Claude Code,
//! Codex, opencode), through the real `arbor` binary on a private HOME holding every golden
//! source where its agent keeps it. The session is read in memory as `arbor import` would make
//! it: `context` of each SOURCE equals pi 1.5.2's own context of its import
//! (goldens/agents/expected/NAME.pi.json), every reading command prints what it prints on the
//! imported file, write commands keep refusing, a malformed source is an error naming its file
//! and line, and not a byte or an mtime of another agent's files changes.
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

/// `arbor ARGS` with `home` as HOME, no agent roots from the caller's environment.
fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("PWD", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env("COLUMNS", "100")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CONFIG_DIR")
        .env_remove("OMP_PROFILE")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run arbor")
}

fn ok(home: &Path, args: &[&str]) -> (String, String) {
    let o = run(home, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "arbor {args:?}: {err}");
    (String::from_utf8(o.stdout).expect("utf-8"), err)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Two HOMEs: every Claude Code and Codex golden and opencode's generated database in the
/// first, the recorded opencode database (goldens/agents/opencode-real/dump.sql) in the
/// second (opencode keeps one database).
fn homes() -> (tempfile::TempDir, tempfile::TempDir) {
    let a = tempfile::tempdir().unwrap();
    let h = a.path();
    for (from, to) in [
        ("claude/projects", ".claude/projects"),
        ("claude-real/projects", ".claude/projects"),
        ("codex/sessions", ".codex/sessions"),
        ("codex-real/sessions", ".codex/sessions"),
    ] {
        copy_tree(&goldens().join(from), &h.join(to));
    }
    std::fs::create_dir_all(h.join(".local/share/opencode")).unwrap();
    std::fs::copy(
        goldens().join("opencode/opencode.db"),
        h.join(".local/share/opencode/opencode.db"),
    )
    .unwrap();
    let b = tempfile::tempdir().unwrap();
    let dir = b.path().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let sql = std::fs::read_to_string(goldens().join("opencode-real/dump.sql")).unwrap();
    rusqlite::Connection::open(dir.join("opencode.db"))
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    (a, b)
}

/// Every file under the other agents' roots with its bytes and mtime.
fn sources(home: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    for root in [".claude", ".codex", ".local/share/opencode"] {
        let mut stack = vec![home.join(root)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    let m = std::fs::symlink_metadata(e.path()).unwrap();
                    out.insert(
                        e.path(),
                        (std::fs::read(e.path()).unwrap(), m.modified().unwrap()),
                    );
                }
            }
        }
    }
    out
}

/// Each golden (goldens/agents/expected/NAME.pi.json): its name, agent, session id and which
/// HOME holds its source (0: the first, 1: the recorded opencode database's).
fn golden_sessions() -> Vec<(String, &'static str, String, usize)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(goldens().join("expected")).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".pi.json"))
        else {
            continue;
        };
        let (agent, id, home) = [
            ("claude-real-", "claude", 0),
            ("claude-", "claude", 0),
            ("codex-real-", "codex", 0),
            ("codex-", "codex", 0),
            ("opencode-real-", "opencode", 1),
            ("opencode-", "opencode", 0),
        ]
        .iter()
        .find_map(|(pre, agent, home)| name.strip_prefix(pre).map(|id| (*agent, id, *home)))
        .unwrap_or_else(|| panic!("{name}: which agent's?"));
        out.push((name.to_string(), agent, id.to_string(), home));
    }
    out.sort();
    assert_eq!(out.len(), 11, "every golden: {out:?}");
    out
}

fn pick(ctx: &Value) -> Value {
    serde_json::json!({
        "messages": ctx["messages"],
        "thinkingLevel": ctx["thinkingLevel"],
        "model": ctx["model"],
    })
}

#[test]
fn context_of_each_golden_source_is_pi_152s_context_of_its_import() {
    let (a, b) = homes();
    let before = [sources(a.path()), sources(b.path())];
    for (name, _, id, home) in golden_sessions() {
        let home = [a.path(), b.path()][home];
        let want: Value = serde_json::from_slice(
            &std::fs::read(goldens().join(format!("expected/{name}.pi.json"))).unwrap(),
        )
        .unwrap();
        let (out, err) = ok(home, &["context", &id]);
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(pick(&got), pick(&want["context"]), "{name}");
        // Said once: another agent's, read in memory, and how to import it.
        assert_eq!(
            err.matches("is another agent's, read in memory").count(),
            1,
            "{name}: {err}"
        );
        assert!(err.contains("arbor import "), "{name}: {err}");
    }
    assert_eq!(
        sources(a.path()),
        before[0],
        "not a byte or an mtime changed"
    );
    assert_eq!(
        sources(b.path()),
        before[1],
        "not a byte or an mtime changed"
    );
}

/// The import's file of each source session id (`arbor import AGENT --all --json`, children
/// included).
fn imports(home: &Path, agent: &str, out: &mut BTreeMap<String, (String, String)>) {
    fn walk(v: &Value, out: &mut BTreeMap<String, (String, String)>) {
        for s in v.as_array().into_iter().flatten() {
            out.insert(
                s["sourceId"].as_str().unwrap().to_string(),
                (
                    s["file"].as_str().unwrap().to_string(),
                    s["source"].as_str().unwrap().to_string(),
                ),
            );
            walk(&s["children"], out);
        }
    }
    let (json, _) = ok(home, &["import", agent, "--all", "--json"]);
    walk(&serde_json::from_str(&json).unwrap(), out);
}

/// `text` with the imported file's path, name and session id as the source's: the only
/// things that differ between a source read in memory and its import (the import's header
/// has a new session id and its own file).
fn same_names(text: &str, file: &str, source: &str, id: &str) -> String {
    let name = |p: &str| {
        Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let file_id = name(file)
        .trim_end_matches(".jsonl")
        .rsplit('_')
        .next()
        .unwrap_or_default()
        .to_string();
    text.replace(file, "SESSION")
        .replace(source, "SESSION")
        .replace(&name(file), "SESSION")
        .replace(&name(source), "SESSION")
        .replace(&file_id, id)
}

#[test]
fn reading_a_source_prints_what_reading_its_import_prints() {
    let (a, b) = homes();
    let commands: &[&[&str]] = &[
        &["show", "--no-pager"],
        &["show", "--json"],
        &["show", "--context", "--no-pager"],
        &["context"],
        &["context", "--llm"],
        &["tree", "--no-pager"],
        &["tree", "--json"],
        &["tree", "--full", "--no-pager"],
        &["export", "--format", "md"],
        &["export", "--format", "html"],
        &["export", "--format", "json"],
    ];
    let goldens = golden_sessions();
    // What each command prints on each source, before anything is imported.
    let mut read = BTreeMap::new();
    let before = [sources(a.path()), sources(b.path())];
    for (name, _, id, home) in &goldens {
        let home = [a.path(), b.path()][*home];
        for c in commands {
            let args: Vec<&str> = c.iter().copied().chain([id.as_str()]).collect();
            read.insert((name.clone(), c.join(" ")), ok(home, &args).0);
        }
    }
    assert_eq!(
        sources(a.path()),
        before[0],
        "not a byte or an mtime changed"
    );
    assert_eq!(
        sources(b.path()),
        before[1],
        "not a byte or an mtime changed"
    );
    let mut files = [BTreeMap::new(), BTreeMap::new()];
    for agent in ["claude", "codex", "opencode"] {
        imports(a.path(), agent, &mut files[0]);
    }
    imports(b.path(), "opencode", &mut files[1]);
    for (name, _, id, home) in &goldens {
        let (file, source) = files[*home]
            .get(id)
            .unwrap_or_else(|| panic!("{name}: not imported"));
        let h = [a.path(), b.path()][*home];
        for c in commands {
            let args: Vec<&str> = c.iter().copied().chain([file.as_str()]).collect();
            let (of_import, _) = ok(h, &args);
            let of_source = &read[&(name.clone(), c.join(" "))];
            assert_eq!(
                same_names(of_source, file, source, id),
                same_names(&of_import, file, source, id),
                "{name}: arbor {}",
                c.join(" ")
            );
        }
    }
}

#[test]
fn write_commands_refuse_another_agents_session_and_write_nothing() {
    let (a, _b) = homes();
    let h = a.path();
    let before = sources(h);
    let claude = "0b7c3f0e-1111-4222-8333-444455556666";
    for args in [
        vec!["name", claude, "renamed"],
        vec!["fork", claude],
        vec!["append", claude, "--text", "hi"],
        vec!["trash", claude],
        vec!["rm", claude],
        vec!["check", "--repair", claude],
        vec!["name", "ses_01main", "renamed"],
    ] {
        let o = run(h, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "arbor {args:?} must fail: {err}");
        assert!(!err.contains("read in memory"), "arbor {args:?}: {err}");
    }
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
    assert!(
        !h.join(".pi").exists() || sources(h) == before,
        "nothing imported"
    );
}

#[test]
fn a_malformed_source_is_an_error_naming_its_file_and_line() {
    let (a, _b) = homes();
    let h = a.path();
    let bad = h.join(".claude/projects/-work-app/deadbeef-0000-4000-8000-000000000000.jsonl");
    std::fs::write(&bad, "garbage\n{\"type\":\"user\"\n").unwrap();
    let before = sources(h);
    for cmd in ["show", "context", "tree", "export"] {
        let o = run(h, &[cmd, bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "arbor {cmd}: {err}");
        assert!(
            err.contains(&format!("{}: Claude Code's session file", bad.display()))
                && err.contains("line 1: not JSON"),
            "arbor {cmd}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // A source with a bad line among good ones is read, the line named.
    let (_, err) = ok(h, &["show", "--no-pager", "0b7c3f0e"]);
    assert!(
        err.contains("0b7c3f0e-1111-4222-8333-444455556666.jsonl:28: skipped: not JSON"),
        "{err}"
    );
    assert_eq!(sources(h), before, "not a byte or an mtime changed");
}
