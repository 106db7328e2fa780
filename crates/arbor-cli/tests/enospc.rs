//! `arbor append` on a full disk: it fails loudly (exit 1, the OS error on stderr), leaves the
//! file exactly as it was, and the next `arbor append` after space is freed hangs its entry
//! from the last entry that reached the disk.
//!
//! The disk is a 256 KiB tmpfs mounted by the test where it may; else the child's
//! `RLIMIT_FSIZE` stands in for it (writes beyond the limit fail with EFBIG).
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use arbor_testkit::full_disk::{fill, try_tmpfs};

fn arbor(args: &[&str], fsize_limit: Option<u64>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
    c.args(args);
    if let Some(limit) = fsize_limit {
        // SAFETY: only async-signal-safe libc calls between fork and exec.
        unsafe {
            c.pre_exec(move || {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let lim = libc::rlimit {
                    rlim_cur: limit as libc::rlim_t,
                    rlim_max: libc::RLIM_INFINITY,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c.output().expect("run arbor")
}

fn body(text: &str) -> String {
    format!(r#"{{"type":"message","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#)
}

#[test]
fn append_on_a_full_disk_fails_loudly_and_leaves_the_file_intact() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mnt = tmp.path().join("disk");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mount = try_tmpfs(&mnt);
    let dir = mnt.join("sessions");
    let o = arbor(
        &["new", "--dir", dir.to_str().expect("utf8"), "--cwd", "/w"],
        None,
    );
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    let o = arbor(&["append", &s, &body("one")], None);
    assert!(o.status.success());
    let last = String::from_utf8(o.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    let before = std::fs::read(&s).expect("read");

    let filler = mnt.join("filler");
    let limit = if mount.is_some() {
        fill(&filler);
        None
    } else {
        Some(before.len() as u64 + 1000)
    };
    let big = "y".repeat(60_000);
    for durability in ["none", "flush", "strict"] {
        let o = arbor(
            &["append", &s, &body(&big), "--durability", durability],
            limit,
        );
        assert_eq!(o.status.code(), Some(1), "{durability}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("No space left on device") || err.contains("File too large"),
            "{err}"
        );
        assert!(
            o.stdout.is_empty(),
            "no id is printed for an entry that is not on disk"
        );
        assert_eq!(
            std::fs::read(&s).expect("read"),
            before,
            "the file is intact ({durability})"
        );
    }
    // Space freed: the next append works and continues from the last entry on disk.
    if mount.is_some() {
        std::fs::remove_file(&filler).expect("free");
    }
    let o = arbor(&["append", &s, &body(&big)], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&s).expect("read");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["parentId"], serde_json::Value::String(last));
    let o = arbor(&["check", &s], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}
