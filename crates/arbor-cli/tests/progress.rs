//! Progress on long work: a bar on a terminal's stderr for a big export, index and sync, and
//! nothing at all when stderr is not a terminal (piped output stays exactly the output).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A pi session of a little over 32 MiB (the size from which a bar is shown), in
/// `home/.pi/agent/sessions/--work-big--/`: few entries, each a long message.
fn big_session(home: &Path) -> PathBuf {
    let dir = home.join(".pi/agent/sessions/--work-big--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let id = "0199c000-0000-7000-8000-0000000000b1";
    let p = dir.join(format!("2026-02-01T09-00-00-000Z_{id}.jsonl"));
    let mut s = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-02-01T09:00:00.000Z\",\"cwd\":\"/work/big\"}}\n"
    );
    let text = "the walrus migrates its schema to postgres and back again ".repeat(1100);
    let mut parent = "null".to_string();
    let mut n = 0u64;
    while s.len() < (33 << 20) {
        let role = if n.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        let content = if role == "assistant" {
            format!("[{{\"type\":\"text\",\"text\":\"{n} {text}\"}}],\"stopReason\":\"stop\"")
        } else {
            format!("\"{n} {text}\"")
        };
        s.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{n:07}\",\"parentId\":{parent},\"timestamp\":\"2026-02-02T10:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":{content},\"timestamp\":{}}}}}\n",
            1_770_026_400_000u64 + n
        ));
        parent = format!("\"e{n:07}\"");
        n += 1;
    }
    std::fs::write(&p, s).expect("write session");
    p
}

fn arbor(home: &Path, catalog: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("ARBOR_CATALOG", catalog)
        .env_remove("ARBOR_SYNC_URL")
        .env("COLUMNS", "80")
        .current_dir(home)
        .output()
        .expect("run arbor")
}

/// What a progress bar leaves on a stream: carriage returns, escape sequences, its words.
fn assert_no_bar(what: &str, stream: &[u8]) {
    let text = String::from_utf8_lossy(stream);
    for mark in [
        "\r",
        "\u{1b}[",
        "indexing",
        "exporting",
        "pushing",
        "pulling",
        "█",
        "░",
    ] {
        assert!(
            !text.contains(mark),
            "{what}: {mark:?} in piped output:\n{text}"
        );
    }
}

#[test]
fn nothing_extra_is_printed_when_stderr_is_not_a_terminal() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let catalog = tmp.path().join("catalog.db");
    let session = big_session(&home);
    let s = session.to_string_lossy();

    // The first index of the big directory.
    let o = arbor(&home, &catalog, &["index"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_bar("index stderr", &o.stderr);
    assert_no_bar("index stdout", &o.stdout);

    // Export to a file: stderr says nothing at all; to stdout: stdout is the export alone.
    let out = tmp.path().join("big.md");
    let o = arbor(
        &home,
        &catalog,
        &["export", &s, "-o", &out.to_string_lossy()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = arbor(&home, &catalog, &["export", &s, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        o.stdout.first(),
        Some(&b'{'),
        "stdout starts with the export"
    );

    // sync push and pull of more than 32 MiB.
    let db = format!("sqlite:{}", tmp.path().join("shared.db").display());
    let o = arbor(&home, &catalog, &["sync", "push", "--to", &db]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_bar("push stderr", &o.stderr);
    assert_no_bar("push stdout", &o.stdout);
    let home2 = tmp.path().join("home2");
    std::fs::create_dir_all(home2.join(".pi/agent")).expect("mkdir");
    let o = arbor(&home2, &catalog, &["sync", "pull", "--from", &db]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_bar("pull stderr", &o.stderr);
    assert_no_bar("pull stdout", &o.stdout);
}

fn tmux(args: &[&str]) -> Option<String> {
    let o = Command::new("tmux").args(args).output().ok()?;
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// On a terminal (tmux, 80 columns), exporting a big session shows a bar on stderr. Its
/// stdout is a pipe nobody reads, so the export waits on it with the bar up: the test waits
/// for the bar, not for a delay.
#[test]
fn a_big_export_shows_a_bar_on_a_terminal() {
    if tmux(&["-V"]).is_none() {
        println!("skipped: tmux is not installed (.ci/run installs it)");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let session = big_session(&home);
    let name = format!("arbor-progress-{}", std::process::id());
    let cmd = format!(
        "cd / && env HOME='{}' ARBOR_CATALOG='{}' COLUMNS=80 TERM=xterm-256color '{}' export '{}' | sleep 60",
        home.display(),
        tmp.path().join("catalog.db").display(),
        env!("CARGO_BIN_EXE_arbor"),
        session.display()
    );
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &name,
        "-x",
        "80",
        "-y",
        "10",
        &cmd,
    ]);
    let t0 = Instant::now();
    let screen = loop {
        let screen = tmux(&["capture-pane", "-t", &name, "-p"]).unwrap_or_default();
        let counting = screen
            .lines()
            .any(|l| l.contains("exporting: writing") && l.contains("iB"));
        if counting || t0.elapsed() > Duration::from_secs(60) {
            break screen;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    tmux(&["kill-session", "-t", &name]);
    assert!(
        screen.contains("exporting: writing"),
        "no bar on the terminal:\n{screen}"
    );
    let bar = screen
        .lines()
        .find(|l| l.contains("exporting"))
        .unwrap_or("");
    assert!(bar.contains("KiB") || bar.contains("MiB"), "{bar}");
    assert!(bar.chars().count() <= 80, "the bar fits 80 columns: {bar}");
}
