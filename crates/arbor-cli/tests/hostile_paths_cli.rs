//! The `arbor` binary on hostile paths (issue 10, items 4, 5, 7): devices, FIFOs and planted
//! symlinks given as SESSION, a planted lock symlink, and a rewrite of someone else's file.
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arbor_testkit::as_nobody::{self, as_nobody, unless_root};
use std::time::{Duration, Instant};

fn arbor() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
    c.stdin(Stdio::null());
    c
}

/// Runs `c`, killing it after 20 s (a read of /dev/zero or a FIFO would never end).
fn run(mut c: Command) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    (out, start.elapsed())
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("c path");
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn new_session(dir: &Path) -> PathBuf {
    let o = arbor()
        .args(["new", "--dir", dir.to_str().expect("utf8"), "--cwd", "/w"])
        .output()
        .expect("new");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    PathBuf::from(String::from_utf8(o.stdout).expect("utf8").trim())
}

const BODY: &str = r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#;

#[test]
fn devices_fifos_and_links_to_them_are_refused_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fifo = tmp.path().join("fifo.jsonl");
    mkfifo(&fifo);
    let zero = tmp.path().join("zero.jsonl");
    symlink("/dev/zero", &zero).expect("symlink");
    let catalog = tmp.path().join("catalog.db");
    for session in [
        Path::new("/dev/zero"),
        Path::new("/dev/urandom"),
        fifo.as_path(),
        zero.as_path(),
    ] {
        let s = session.to_str().expect("utf8");
        for args in [
            vec!["context", s],
            vec!["show", s],
            vec!["tree", s],
            vec!["check", s],
            vec!["check", "--repair", s],
            vec!["append", s, BODY],
            vec!["name", s, "x"],
            vec!["migrate", s],
        ] {
            let mut c = arbor();
            c.args(&args);
            if matches!(args[0], "ls" | "search" | "index") {
                c.arg("--catalog").arg(&catalog);
            }
            let (o, took) = run(c);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(took < Duration::from_secs(10), "{args:?} hung ({took:?})");
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
        }
    }
    assert!(!tmp.path().join("zero.jsonl.lock").exists());
    assert!(!tmp.path().join("fifo.jsonl.lock").exists());
    assert!(!Path::new("/dev/zero.lock").exists());
}

#[test]
fn a_planted_lock_symlink_is_refused_and_its_target_untouched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let s = new_session(tmp.path());
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").expect("victim");
    let mut lock = s.as_os_str().to_owned();
    lock.push(".lock");
    symlink(&victim, &lock).expect("plant");
    let before = std::fs::read(&s).expect("read");
    let (o, _) = run({
        let mut c = arbor();
        c.args(["append", s.to_str().expect("utf8"), BODY]);
        c
    });
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious\n"
    );
    assert_eq!(std::fs::read(&s).expect("read"), before);
}

#[test]
fn a_file_of_another_user_is_not_taken_over_by_a_rewrite() {
    if !unless_root("needs root to run arbor as another user (CI runs as root)") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // A directory `nobody` may write in, holding a session of uid 4242 that `nobody` can
    // also write (group-writable, nobody's group): a rewrite by `nobody` would hand it over.
    let dir = tmp.path().join("shared");
    std::fs::create_dir(&dir).expect("mkdir");
    let nobody = as_nobody::NOBODY;
    std::os::unix::fs::chown(&dir, Some(nobody), Some(nobody)).expect("chown dir");
    let s = new_session(&dir);
    let mut bytes = std::fs::read(&s).expect("read");
    bytes.extend_from_slice(b"{not json\n");
    std::fs::write(&s, &bytes).expect("damage");
    std::os::unix::fs::chown(&s, Some(4242), Some(nobody)).expect("chown");
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o660)).expect("chmod");
    let mut c = arbor();
    c.args(["check", "--repair", s.to_str().expect("utf8")])
        .env("HOME", &dir)
        .env("XDG_CACHE_HOME", &dir);
    as_nobody(&mut c);
    let (o, _) = run(c);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("owner could not be kept"), "{err}");
    let m = std::fs::metadata(&s).expect("meta");
    assert_eq!(
        (m.uid(), m.gid()),
        (4242, nobody),
        "the session changed hands"
    );
    assert_eq!(
        std::fs::read(&s).expect("read"),
        bytes,
        "the session changed"
    );
}
