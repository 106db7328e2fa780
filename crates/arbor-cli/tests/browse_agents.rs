//! Issue 26 in the browser, end to end: the real binary in a real terminal (tmux, which
//! `.ci/run` installs) on a private HOME holding all five agents (the goldens of Claude Code,
//! Codex and opencode where each agent keeps them, a pi and an omp session). The list shows
//! the other agents' rows with their TOOL; `--agent` filters; Enter reads a Claude Code
//! session; delete on it is refused; Ctrl-R asks, imports it into pi's layout and runs the
//! agent (a stub on `$ARBOR_PI` that records its arguments) on the imported file. No byte and
//! no mtime of another agent's files changes.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

fn tmux(args: &[&str]) -> String {
    let o = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux is needed (.ci/run installs it: apt-get install tmux)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn screen(session: &str) -> String {
    tmux(&["capture-pane", "-t", session, "-p"])
}

fn wait_for(session: &str, what: &str) -> String {
    let t0 = Instant::now();
    loop {
        let s = screen(session);
        if s.contains(what) {
            return s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what:?}; the screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the screen holds every one of `what` (a screen captured while it is being drawn
/// holds only some of it), and returns it.
fn wait_all(session: &str, what: &[&str]) -> String {
    let t0 = Instant::now();
    loop {
        let s = screen(session);
        if what.iter().all(|w| s.contains(w)) {
            return s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what:?}; the screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let t = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).expect("copy");
        }
    }
}

/// Every file under `dir`: its bytes and mtime.
fn snapshot(dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) {
    for e in std::fs::read_dir(dir).expect("read dir") {
        let e = e.expect("entry");
        let p = e.path();
        if e.file_type().expect("type").is_dir() {
            snapshot(&p, out);
        } else {
            let m = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .expect("mtime");
            out.insert(p.clone(), (std::fs::read(&p).expect("read"), m));
        }
    }
}

fn pi_session(home: &Path, omp: bool, id: &str, text: &str) {
    let agent = if omp { ".omp/agent" } else { ".pi/agent" };
    let dir = home.join(agent).join("sessions/--work-app--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join(format!("2026-10-20T10-00-00-000Z_{id}.jsonl")),
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-10-20T10:00:00.000Z\",\"cwd\":\"/work/app\"}}\n{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-10-20T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1792490401000}}}}\n"
        ),
    )
    .expect("write");
}

struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tempdir");
        let h = tmp.path().join("home");
        copy_tree(
            &goldens().join("claude/projects"),
            &h.join(".claude/projects"),
        );
        copy_tree(
            &goldens().join("codex/sessions"),
            &h.join(".codex/sessions"),
        );
        std::fs::create_dir_all(h.join(".local/share/opencode")).expect("mkdir");
        std::fs::copy(
            goldens().join("opencode/opencode.db"),
            h.join(".local/share/opencode/opencode.db"),
        )
        .expect("copy");
        pi_session(
            &h,
            false,
            "11111111-aaaa-4bbb-8ccc-000000000001",
            "pi walrus",
        );
        pi_session(
            &h,
            true,
            "22222222-aaaa-4bbb-8ccc-000000000002",
            "omp walrus",
        );
        let stub = tmp.path().join("stub-pi");
        std::fs::write(
            &stub,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n",
                tmp.path().join("agent-args").display()
            ),
        )
        .expect("stub");
        Command::new("chmod")
            .arg("755")
            .arg(&stub)
            .status()
            .expect("chmod");
        Home { tmp }
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// Every file of the other agents.
    fn others(&self) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
        let mut m = BTreeMap::new();
        for d in [".claude", ".codex", ".local/share/opencode"] {
            snapshot(&self.home().join(d), &mut m);
        }
        m
    }

    /// `arbor browse ARGS` in a tmux session of 80×30, started in `/`.
    fn browse(&self, name: &str, args: &str) {
        self.browse_in(name, Path::new("/"), args);
    }

    /// `arbor browse ARGS` in a tmux session of 80×30, started in `cwd`.
    fn browse_in(&self, name: &str, cwd: &Path, args: &str) {
        let h = self.home();
        let cmd = format!(
            "cd '{}' && env -u PI_CODING_AGENT_DIR -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_CACHE_HOME PWD='{}' HOME='{}' XDG_DATA_HOME='{}' ARBOR_CATALOG='{}' ARBOR_PI='{} --session' TERM=xterm-256color '{}' browse {args}; sleep 30",
            cwd.display(),
            cwd.display(),
            h.display(),
            h.join(".local/share").display(),
            self.tmp.path().join("catalog.db").display(),
            self.tmp.path().join("stub-pi").display(),
            env!("CARGO_BIN_EXE_arbor")
        );
        tmux(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "80",
            "-y",
            "30",
            &cmd,
        ]);
    }
}

/// Runs `f` with a tmux session `name`, killed whatever happens.
fn with_session(name: &str, f: impl FnOnce() + std::panic::UnwindSafe) {
    let r = std::panic::catch_unwind(f);
    tmux(&["kill-session", "-t", name]);
    if let Err(e) = r {
        std::panic::resume_unwind(e);
    }
}

/// The list's rows (between the search line and the preview), trailing spaces cut.
fn list_rows(s: &str) -> Vec<String> {
    s.lines()
        .skip(2)
        .take_while(|l| !l.starts_with('┌'))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn every_agents_sessions_are_listed_read_refused_and_resumed_through_an_import() {
    let h = Home::new();
    let before = h.others();
    let name = format!("arbor-agents-{}", std::process::id());
    h.browse(&name, "--all");
    with_session(&name, || {
        let s = wait_all(
            &name,
            &["8 of 8 sessions", "pi walrus", "omp walrus", "Esc quit"],
        );
        let rows = list_rows(&s);
        let tools: Vec<&str> = rows
            .iter()
            .map(|r| r.split_whitespace().next().unwrap_or(""))
            .collect();
        // Last activity first, as ls --all orders them: the goldens (November) before the
        // pi and omp sessions (October).
        let mut last: Vec<&str> = tools[6..].to_vec();
        last.sort_unstable();
        assert_eq!(
            tools[..6],
            ["opencode", "opencode", "codex", "codex", "claude", "claude"],
            "{s}"
        );
        assert_eq!(last, ["omp", "pi"], "{s}");
        assert!(
            s.contains("add-test fix") && s.contains("Fix the build"),
            "{s}"
        );
        assert!(s.contains("Update index.ts"), "{s}");
        // Every row fits 80 columns with its project.
        assert!(rows.iter().all(|r| r.ends_with("/work/app")), "{s}");
        // The Claude Code session: delete is refused, the file stays.
        let at = rows
            .iter()
            .position(|r| r.contains("add-test fix"))
            .expect("row");
        for _ in 0..at {
            tmux(&["send-keys", "-t", &name, "Down"]);
        }
        wait_for(&name, "claude · 0b7c3f0e");
        tmux(&["send-keys", "-t", &name, "C-d"]);
        // Waited for whole (a screen is captured while it is being drawn too).
        let s = wait_for(
            &name,
            "no delete: claude's session is read only (arbor import makes a pi copy)",
        );
        assert!(!s.contains("trash"), "{s}");
        // Enter reads it: the conversation, converted in memory.
        tmux(&["send-keys", "-t", &name, "Enter"]);
        wait_for(&name, "tree · add-test fix · claude");
        wait_for(
            &name,
            "claude's session, read only (as arbor import makes it) · r: import, resume",
        );
        wait_for(&name, "user: Use a Task agent to check the docs too");
        // r: the import is asked first; y imports and runs pi on the copy.
        tmux(&["send-keys", "-t", &name, "r"]);
        wait_for(&name, "pi cannot resume it as it is");
        tmux(&["send-keys", "-t", &name, "y"]);
        let args = h.tmp.path().join("agent-args");
        let t0 = Instant::now();
        while !args.exists() {
            assert!(t0.elapsed() < Duration::from_secs(30), "{}", screen(&name));
            std::thread::sleep(Duration::from_millis(100));
        }
        wait_for(&name, "arbor: claude session 0b7c3f0e");
        let got = std::fs::read_to_string(&args).expect("args");
        let mut lines = got.lines();
        assert_eq!(lines.next(), Some("--session"), "{got}");
        let file = PathBuf::from(lines.next().expect("a file"));
        let dir = h.home().join(".pi/agent/sessions/--work-app--");
        assert_eq!(file.parent(), Some(dir.as_path()), "{got}");
        let body = std::fs::read_to_string(&file).expect("the imported session");
        assert!(body.contains("\"arbor-import\""), "{body}");
        assert!(
            body.contains("List the files and fix the failing test"),
            "{body}"
        );
    });
    assert!(h.others() == before, "another agent's file changed");
}

#[test]
fn agent_filters_the_browser_as_it_filters_ls() {
    let h = Home::new();
    let name = format!("arbor-agents-f-{}", std::process::id());
    h.browse(&name, "--all --agent codex");
    with_session(&name, || {
        let s = wait_all(
            &name,
            &["all projects (codex only) · 2 of 2 sessions", "Esc quit"],
        );
        let rows = list_rows(&s);
        assert_eq!(rows.len(), 2, "{s}");
        assert!(rows.iter().all(|r| r.starts_with(" codex ")), "{s}");
    });
    let name = format!("arbor-agents-p-{}", std::process::id());
    h.browse(&name, "--all --agent pi");
    with_session(&name, || {
        let s = wait_all(&name, &["1 of 1 session", "pi walrus", "Esc quit"]);
        assert!(s.contains("pi walrus") && !s.contains("claude"), "{s}");
    });
}

/// The default scope is the current project across agents, as `arbor ls`'s: a Claude Code
/// session whose recorded cwd is the directory the browser starts in is listed with that
/// project's pi session; the other agents' sessions of other projects only after `Tab`.
#[test]
fn this_project_holds_every_agents_sessions_of_its_directory() {
    let h = Home::new();
    let proj = h.tmp.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let p = proj.to_string_lossy().into_owned();
    // The Claude Code golden, as if it had run in `proj` (where Claude Code keeps it).
    let from = goldens().join("claude/projects/-work-app");
    let to = h.home().join(".claude/projects").join(p.replace('/', "-"));
    let name = "0b7c3f0e-1111-4222-8333-444455556666.jsonl";
    std::fs::create_dir_all(&to).expect("mkdir");
    let body = std::fs::read_to_string(from.join(name)).expect("golden");
    std::fs::write(to.join(name), body.replace("/work/app", &p)).expect("write");
    std::fs::remove_file(h.home().join(".claude/projects/-work-app").join(name)).expect("rm");
    std::fs::remove_dir_all(
        h.home()
            .join(".claude/projects/-work-app/0b7c3f0e-1111-4222-8333-444455556666"),
    )
    .expect("rm");
    let dir = h.home().join(".pi/agent/sessions").join(format!(
        "--{}--",
        p.trim_start_matches('/').replace('/', "-")
    ));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("2026-10-20T10-00-00-000Z_33333333-aaaa-4bbb-8ccc-000000000003.jsonl"),
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"33333333-aaaa-4bbb-8ccc-000000000003\",\"timestamp\":\"2026-10-20T10:00:00.000Z\",\"cwd\":\"{p}\"}}\n{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-10-20T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"pi here\",\"timestamp\":1792490401000}}}}\n"
        ),
    )
    .expect("write");
    let name = format!("arbor-agents-here-{}", std::process::id());
    h.browse_in(&name, &proj, "");
    with_session(&name, || {
        let s = wait_all(
            &name,
            &["this project · 2 of 2 sessions", "pi here", "Esc quit"],
        );
        let rows = list_rows(&s);
        assert!(
            rows[0].starts_with(" claude ") && rows[0].contains("add-test fix"),
            "{s}"
        );
        assert!(
            rows[1].starts_with(" pi ") && rows[1].contains("pi here"),
            "{s}"
        );
        tmux(&["send-keys", "-t", &name, "Tab"]);
        wait_all(
            &name,
            &["all projects · 8 of 8 sessions", " codex ", " opencode "],
        );
    });
}
