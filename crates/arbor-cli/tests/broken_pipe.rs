//! Every command with its stdout on a pipe whose reader has gone (`arbor index | true`,
//! `arbor new | head -c0`): no panic ("failed printing to stdout", exit 101), no message, the
//! command's own exit status, and its work done in full (the session written, the fork made,
//! every line of `append -` appended, the trash emptied).
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    home: tempfile::TempDir,
}

const SID: &str = "01a2031c-a4c8-72e3-9ce7-b742438e02ad";

impl Env {
    fn new() -> Env {
        let home = tempfile::tempdir().expect("tempdir");
        let d = home.path().join(".pi/agent/sessions/--work--");
        std::fs::create_dir_all(&d).expect("mkdir");
        let lines = [
            format!(
                r#"{{"type":"session","version":3,"id":"{SID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}}"#
            ),
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"fix the walrus","timestamp":1767225601000}}"#.into(),
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":1767225602000}}"#.into(),
        ];
        std::fs::write(
            d.join(format!("2026-01-01T00-00-00-000Z_{SID}.jsonl")),
            lines.join("\n") + "\n",
        )
        .expect("write session");
        Env { home }
    }
    fn h(&self) -> &Path {
        self.home.path()
    }
    fn sessions(&self) -> PathBuf {
        self.h().join(".pi/agent/sessions/--work--")
    }
    fn session(&self) -> PathBuf {
        self.sessions()
            .join(format!("2026-01-01T00-00-00-000Z_{SID}.jsonl"))
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
        c.args(args)
            .env("HOME", self.h())
            .env("ARBOR_CATALOG", self.h().join("catalog.db"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PAGER")
            .env("NO_COLOR", "1")
            .current_dir(self.h())
            .stdin(Stdio::null());
        c
    }
    /// Runs `arbor ARGS` with stdout on a pipe whose reading end is already closed, so that
    /// the first write fails with EPIPE (not a race with a reader such as `true`).
    fn closed(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let (r, w) = std::io::pipe().expect("pipe");
        drop(r);
        let mut c = self.cmd(args);
        c.stdout(w).stderr(Stdio::piped());
        if stdin.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().expect("run arbor");
        drop(c);
        if let Some(input) = stdin {
            use std::io::Write;
            let mut i = child.stdin.take().expect("stdin");
            i.write_all(input).expect("write stdin");
        }
        child.wait_with_output().expect("wait")
    }
    /// `closed`, checking that it exited with `code`, quietly.
    fn quiet(&self, args: &[&str], code: i32) {
        self.quiet_in(args, None, code);
    }
    fn quiet_in(&self, args: &[&str], stdin: Option<&[u8]>, code: i32) {
        let o = self.closed(args, stdin);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("panicked")
                && !err.contains("failed printing")
                && !err.contains("Broken pipe"),
            "arbor {args:?} on a closed pipe: {err}"
        );
        assert_eq!(o.status.code(), Some(code), "arbor {args:?}: {err}");
    }
    fn count(&self, dir: &Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
    }
}

#[test]
fn write_commands_finish_their_work_and_exit_quietly() {
    let e = Env::new();
    e.quiet(&["index"], 0);
    let ls = e.cmd(&["ls", "--all", "--json"]).output().expect("ls");
    assert!(
        String::from_utf8_lossy(&ls.stdout).contains(SID),
        "the index was made"
    );

    let man = e.h().join("man");
    e.quiet(&["man", "--dir", man.to_str().expect("utf-8")], 0);
    assert!(
        e.count(&man) > 10,
        "every man page written: {}",
        e.count(&man)
    );

    let before = e.count(&e.sessions());
    e.quiet(&["new", "--cwd", "/work"], 0);
    assert_eq!(e.count(&e.sessions()), before + 1, "new wrote its session");

    let before = e.count(&e.sessions());
    e.quiet(&["fork", SID], 0);
    assert_eq!(e.count(&e.sessions()), before + 1, "fork wrote its copy");

    e.quiet(&["name", SID, "the walrus"], 0);
    let text = std::fs::read_to_string(e.session()).expect("read");
    assert!(text.contains("the walrus"), "name wrote its entry");

    // Three lines on stdin: all three appended, although the first id found no reader.
    let lines_before = text.lines().count();
    let bodies = b"{\"type\":\"custom\",\"customType\":\"n\",\"data\":1}\n\
        {\"type\":\"custom\",\"customType\":\"n\",\"data\":2}\n\
        {\"type\":\"custom\",\"customType\":\"n\",\"data\":3}\n";
    e.quiet_in(&["append", SID, "-"], Some(bodies), 0);
    let text = std::fs::read_to_string(e.session()).expect("read");
    assert_eq!(
        text.lines().count(),
        lines_before + 3,
        "every line appended:\n{text}"
    );

    let forks: Vec<_> = std::fs::read_dir(e.sessions())
        .expect("ls")
        .map(|d| d.expect("entry").path())
        .filter(|p| *p != e.session())
        .collect();
    let mut rm = vec!["rm"];
    rm.extend(forks.iter().map(|p| p.to_str().expect("utf-8")));
    e.quiet(&rm, 0);
    assert_eq!(e.count(&e.sessions()), 1, "rm moved them to the trash");
    e.quiet(&["trash", "list"], 0);
    e.quiet(&["trash", "empty", "--force"], 0);
    let left = e
        .cmd(&["trash", "list", "--json"])
        .output()
        .expect("trash list");
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains(".jsonl"),
        "the trash was emptied: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn read_commands_exit_quietly() {
    let e = Env::new();
    for args in [
        &["ls", "--all"][..],
        &["ls", "--all", "--json"],
        &["search", "walrus", "--all"],
        &["stats", "--all"],
        &["tree", SID],
        &["show", SID],
        &["context", SID],
        &["export", SID],
        &["export", SID, "--format", "json"],
        &["export", SID, "--format", "html"],
        &["secrets", SID],
        &["check", SID],
        &["completions", "bash"],
        &["man"],
        &["--help"],
    ] {
        e.quiet(args, 0);
    }
}
