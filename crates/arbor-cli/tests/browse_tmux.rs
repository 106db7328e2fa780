//! The browser end to end: the real binary in a real terminal (tmux, which `.ci/run` installs),
//! on a temporary agent directory laid out as pi lays it out. A search finds a session by a
//! word said in it, Enter opens its tree on that entry, `r` resumes it in the agent (a stub
//! that records its arguments, through `$ARBOR_PI`). With `ARBOR_SCREENSHOT_DIR` set, the
//! screens are saved there with their colours (`tools/screenshot.sh` turns them into the
//! README's picture).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let o = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux is needed (.ci/run installs it: apt-get install tmux)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn wait_for(session: &str, what: &str) -> String {
    wait_until(session, what, |screen| screen.contains(what))
}

/// Waits for a screen of which `ok` holds: a capture can fall between two parts of a redraw
/// (the tree drawn, its footer not yet), so what a test checks of one screen is waited for
/// together, not asserted on the first capture that shows a part of it.
fn wait_until(session: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-t", session, "-p"]);
        if ok(&screen) {
            return screen;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}; the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn write_session(dir: &Path, id: &str, lines: &[(&str, Option<&str>, &str, &str)]) -> PathBuf {
    let p = dir.join(format!("2026-02-01T09-00-00-000Z_{id}.jsonl"));
    let mut s = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-02-01T09:00:00.000Z\",\"cwd\":\"/work/walrus\"}}\n"
    );
    for (n, (eid, parent, role, text)) in lines.iter().enumerate() {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let content = if *role == "assistant" {
            format!("[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stopReason\":\"stop\"")
        } else {
            format!("\"{text}\"")
        };
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{eid}\",\"parentId\":{parent},\"timestamp\":\"2026-02-0{}T10:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":{content},\"timestamp\":{}}}}}\n",
            n + 2,
            1_770_026_400_000u64 + n as u64 * 86_400_000
        ));
    }
    std::fs::write(&p, s).expect("write session");
    p
}

#[test]
fn find_a_session_by_a_word_open_its_tree_and_resume_it_in_pi() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let sessions = home.join(".pi/agent/sessions/--work-walrus--");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let target = write_session(
        &sessions,
        "0199a000-0000-7000-8000-0000000000aa",
        &[
            ("u1", None, "user", "migrate the walrus database"),
            ("a1", Some("u1"), "assistant", "looking at the schema"),
            ("u2", Some("a1"), "user", "use the zeppelin driver"),
            ("a2", Some("u2"), "assistant", "switched to zeppelin"),
        ],
    );
    write_session(
        &sessions,
        "0199a000-0000-7000-8000-0000000000bb",
        &[("v1", None, "user", "write the release notes")],
    );
    let record = tmp.path().join("agent-args");
    let stub = tmp.path().join("stub-pi");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n",
            record.display()
        ),
    )
    .expect("stub");
    Command::new("chmod")
        .arg("755")
        .arg(&stub)
        .status()
        .expect("chmod");

    let name = format!("arbor-e2e-{}", std::process::id());
    let cmd = format!(
        "cd / && env HOME='{}' ARBOR_CATALOG='{}' ARBOR_PI='{} --session' TERM=xterm-256color '{}' browse --all; sleep 30",
        home.display(),
        tmp.path().join("catalog.db").display(),
        stub.display(),
        env!("CARGO_BIN_EXE_arbor")
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &name,
        "-x",
        "100",
        "-y",
        "30",
        &cmd,
    ]);
    let kill = || {
        tmux(&["kill-session", "-t", &name]);
    };
    let result = std::panic::catch_unwind(|| {
        let shots = std::env::var_os("ARBOR_SCREENSHOT_DIR").map(PathBuf::from);
        let shoot = |file: &str| {
            if let Some(d) = &shots {
                let s = tmux(&["capture-pane", "-t", &name, "-p", "-e"]);
                std::fs::create_dir_all(d).expect("mkdir");
                std::fs::write(d.join(file), s).expect("screenshot");
            }
        };
        wait_for(&name, "2 of 2 sessions");
        tmux(&["send-keys", "-t", &name, "-l", "zeppelin"]);
        wait_until(&name, "the one hit under its session", |s| {
            s.contains("1 of 2 sessions")
                && s.contains("migrate the walrus database")
                && s.contains("      ↳ ")
                && s.contains("zeppelin")
        });
        shoot("picker.ansi");
        tmux(&["send-keys", "-t", &name, "Enter"]);
        // Only the tree shows it (the picker's footer says "Enter tree ·" too).
        wait_until(&name, "the tree at the leaf, u2 in it", |s| {
            s.contains("◀ leaf") && s.contains("u2 user: use the zeppelin driver")
        });
        shoot("tree.ansi");
        tmux(&["send-keys", "-t", &name, "r"]);
        let t0 = Instant::now();
        while !record.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the agent was not started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(200));
        let args = std::fs::read_to_string(&record).expect("args");
        assert_eq!(
            args.lines().collect::<Vec<_>>(),
            [
                "--session",
                &*std::fs::canonicalize(&target)
                    .expect("canon")
                    .to_string_lossy()
            ]
        );
    });
    kill();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// The last line of the screen that is not blank.
fn footer(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_end()
}

#[test]
fn at_80_columns_filters_apply_from_the_leaf_and_the_footer_keeps_the_way_out() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let sessions = home.join(".pi/agent/sessions/--work-walrus--");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    write_session(
        &sessions,
        "0199a000-0000-7000-8000-0000000000aa",
        &[
            ("u1", None, "user", "migrate the walrus database"),
            ("a1", Some("u1"), "assistant", "looking at the schema"),
            ("u2", Some("a1"), "user", "use the zeppelin driver"),
            ("a2", Some("u2"), "assistant", "switched to zeppelin"),
        ],
    );
    write_session(
        &sessions,
        "0199a000-0000-7000-8000-0000000000bb",
        &[("v1", None, "user", "write the release notes")],
    );
    let name = format!("arbor-e2e80-{}", std::process::id());
    let cmd = format!(
        "cd / && env HOME='{}' ARBOR_CATALOG='{}' TERM=xterm-256color '{}' browse --all; sleep 30",
        home.display(),
        tmp.path().join("catalog.db").display(),
        env!("CARGO_BIN_EXE_arbor")
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &name,
        "-x",
        "80",
        "-y",
        "24",
        &cmd,
    ]);
    let result = std::panic::catch_unwind(|| {
        // The footer keeps the way out: each screen below is waited for whole (the footer
        // with it), and times out naming what it lacked.
        wait_until(&name, "the list with `· Esc quit`", |s| {
            s.contains("2 of 2 sessions") && footer(s).ends_with("· Esc quit")
        });
        tmux(&["send-keys", "-t", &name, "-l", "zeppelin"]);
        wait_for(&name, "1 of 2 sessions");
        tmux(&["send-keys", "-t", &name, "Enter"]);
        wait_until(&name, "the tree with `· Esc back`", |s| {
            s.contains("◀ leaf") && footer(s).ends_with("· Esc back")
        });
        // To the leaf (an assistant turn), then user only: it applies, the cursor on u2.
        tmux(&["send-keys", "-t", &name, "G"]);
        tmux(&["send-keys", "-t", &name, "3"]);
        wait_until(
            &name,
            "user only, 4 entries, 2 shown, the reader on u2",
            |s| {
                s.contains("filter: user only")
                    && s.contains("4 entries, 2 shown")
                    && s.contains("user · u2 ·")
            },
        );
        // Labelled only, with no label: applies, and says nothing is kept.
        tmux(&["send-keys", "-t", &name, "4"]);
        wait_until(&name, "labelled, nothing matches", |s| {
            s.contains("nothing matches this filter") && s.contains("filter: labelled")
        });
    });
    tmux(&["kill-session", "-t", &name]);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
