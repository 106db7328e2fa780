//! Two writers: a second `arbor` writing the same session is refused at once with the holder
//! named, or waits with `--wait`; writers never interleave; readers never block; a lock left
//! by a killed writer is taken over.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn arbor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
}

fn new_session(dir: &Path) -> PathBuf {
    let o = arbor()
        .args(["new", "--dir", dir.to_str().expect("utf8"), "--cwd", "/w"])
        .output()
        .expect("new");
    assert!(o.status.success());
    PathBuf::from(String::from_utf8(o.stdout).expect("utf8").trim())
}

fn body(text: &str) -> String {
    format!(r#"{{"type":"message","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#)
}

/// A writer holding the session open: `arbor append S -` fed line by line.
struct Holder {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Holder {
    fn start(s: &Path) -> Holder {
        let mut child = arbor()
            .args(["append", s.to_str().expect("utf8"), "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        Holder { child, out }
    }
    fn append(&mut self, text: &str) -> String {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin
            .write_all(format!("{}\n", body(text)).as_bytes())
            .expect("feed");
        stdin.flush().expect("flush");
        let mut id = String::new();
        self.out.read_line(&mut id).expect("id");
        id.trim().to_string()
    }
    fn finish(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().expect("wait").success());
    }
}

fn lines(s: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(s)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

#[test]
fn second_writer_is_refused_then_waits_and_never_interleaves() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = new_session(tmp.path());
    let sp = s.to_str().expect("utf8");
    let mut a = Holder::start(&s);
    let a1 = a.append("a1");
    let pid = a.child.id();

    // Refused at once, holder named.
    let t = Instant::now();
    let o = arbor()
        .args(["append", sp, &body("b")])
        .output()
        .expect("b");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is being written by another process"), "{err}");
    assert!(
        err.contains(&format!("pid {pid} on ")) && err.contains(" since "),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(o.stdout.is_empty());

    // Readers do not block.
    let o = arbor().args(["context", sp]).output().expect("context");
    assert!(o.status.success());

    // --wait: C waits for A, then appends after A's last entry.
    let mut c = arbor()
        .args(["append", sp, &body("c"), "--wait=30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("c");
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        c.try_wait().expect("try_wait").is_none(),
        "C must still be waiting"
    );
    let a2 = a.append("a2");
    let a3 = a.append("a3");
    a.finish();
    let o = c.wait_with_output().expect("c done");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cid = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();

    let l = lines(&s);
    let ids: Vec<&str> = l
        .iter()
        .skip(1)
        .map(|v| v["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, vec![a1.as_str(), &a2, &a3, &cid]);
    assert_eq!(l[4]["parentId"], serde_json::Value::String(a3.clone()));
}

#[test]
fn concurrent_waiting_writers_serialize_whole_sessions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = new_session(tmp.path());
    let sp = s.to_str().expect("utf8").to_string();
    let spawn = |tag: &str| {
        let mut c = arbor()
            .args(["append", &sp, "-", "--wait=60"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let input: String = (0..100)
            .map(|i| body(&format!("{tag}{i} {}", "x".repeat(i * 37))) + "\n")
            .collect();
        let mut stdin = c.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        c
    };
    let (p, q) = (spawn("p"), spawn("q"));
    let (po, qo) = (
        p.wait_with_output().expect("p"),
        q.wait_with_output().expect("q"),
    );
    assert!(
        po.status.success(),
        "{}",
        String::from_utf8_lossy(&po.stderr)
    );
    assert!(
        qo.status.success(),
        "{}",
        String::from_utf8_lossy(&qo.stderr)
    );
    let pids: Vec<String> = String::from_utf8(po.stdout)
        .expect("utf8")
        .lines()
        .map(str::to_string)
        .collect();
    let qids: Vec<String> = String::from_utf8(qo.stdout)
        .expect("utf8")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!((pids.len(), qids.len()), (100, 100));
    let l = lines(&s);
    assert_eq!(l.len(), 201);
    let ids: Vec<String> = l
        .iter()
        .skip(1)
        .map(|v| v["id"].as_str().expect("id").to_string())
        .collect();
    // One writer's 100 entries, then the other's: no interleaving, one chain.
    let (first, second) = if ids[0] == pids[0] {
        (&pids, &qids)
    } else {
        (&qids, &pids)
    };
    assert_eq!(&ids[..100], &first[..]);
    assert_eq!(&ids[100..], &second[..]);
    for i in 1..l.len() {
        let parent = l[i]["parentId"].as_str();
        if i == 1 {
            assert!(parent.is_none());
        } else {
            assert_eq!(parent, l[i - 1]["id"].as_str(), "line {i}");
        }
    }
}

#[test]
fn a_killed_writers_lock_is_taken_over() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = new_session(tmp.path());
    let sp = s.to_str().expect("utf8");
    let mut a = Holder::start(&s);
    a.append("before the crash");
    a.child.kill().expect("kill");
    a.child.wait().expect("reap");
    // The lock file still names the dead holder, but its flock died with it.
    assert!(Path::new(&format!("{sp}.lock")).exists());
    let o = arbor()
        .args(["append", sp, &body("after")])
        .output()
        .expect("append");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(lines(&s).len(), 3);
}

/// Issue 10, item 2: the lock is the file's, not the path's. A writer appending through a
/// symlink and `check --repair` on the real path (or through a hard link) used to run at
/// once, and the repair's rewrite dropped ids the append had printed.
#[test]
fn repair_through_another_name_waits_for_the_writer_and_loses_no_printed_id() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = new_session(tmp.path());
    let link = tmp.path().join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).expect("hard link");
    // Something for the repair to do: a malformed line.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&real)
        .expect("open");
    f.write_all(b"{not json\n").expect("damage");
    drop(f);
    std::fs::remove_file(&hard).expect("unlink: a hard-linked file is not rewritten");

    let mut a = Holder::start(&link);
    let mut printed = vec![a.append("one")];
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).expect("hard link again");
    for name in [&real, &hard] {
        let o = arbor()
            .args(["check", "--repair", name.to_str().expect("utf8")])
            .output()
            .expect("check");
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is being written by another process"), "{err}");
    }
    std::fs::remove_file(&hard).expect("unlink");
    // A repair that waits runs once the writer is done, and keeps everything it printed.
    let repair = arbor()
        .args([
            "check",
            "--repair",
            "--wait=30",
            real.to_str().expect("utf8"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("repair");
    std::thread::sleep(Duration::from_millis(300));
    printed.push(a.append("two"));
    printed.push(a.append("three"));
    a.finish();
    let o = repair.wait_with_output().expect("repair done");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .expect("lstat")
        .file_type()
        .is_symlink());
    let l = lines(&real);
    for id in &printed {
        assert!(
            l.iter().any(|v| v["id"].as_str() == Some(id.as_str())),
            "printed id {id} is gone"
        );
    }
}
