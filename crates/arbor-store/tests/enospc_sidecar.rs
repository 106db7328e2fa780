//! A full disk while a sidecar is written (issue 10, item 13): the torn-tail sidecar of a
//! writer and the quarantine sidecar of `check --repair` fail loudly, no empty or partial
//! sidecar stays behind, and the session is byte-identical.
//!
//! Same disk as `enospc.rs`: a 256 KiB tmpfs where the test may mount one, else
//! `RLIMIT_FSIZE` (EFBIG) for this process; one test per file for that reason.
use arbor_store::check::{self, CheckOptions};
use arbor_store::{ManagerOptions, NewEntry, SessionManager};

use arbor_testkit::full_disk::{fill_leaving, set_fsize_limit, try_tmpfs};

fn sidecars(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".torn-") || n.contains(".quarantine-"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_sidecar_that_cannot_be_written_whole_is_not_left_behind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mnt = tmp.path().join("disk");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mount = try_tmpfs(&mnt);
    let dir = mnt.join("sessions");
    let mut sm =
        SessionManager::create("/w", Some(&dir), ManagerOptions::default()).expect("create");
    let path = sm.session_file().expect("path").to_path_buf();
    sm.append(&NewEntry::Message(
        br#"{"role":"user","content":"one","timestamp":1}"#.to_vec(),
    ))
    .expect("append");
    sm.close().expect("close");
    // 60 KB of a torn last line, then 60 KB of a malformed line before it for the repair.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(b"{\"malformed\": ");
    bytes.extend_from_slice(&vec![b'm'; 60_000]);
    bytes.extend_from_slice(b"\n{\"type\":\"message\",\"message\":\"");
    bytes.extend_from_slice(&vec![b't'; 60_000]);
    std::fs::write(&path, &bytes).expect("write");

    let filler = mnt.join("filler");
    if mount.is_some() {
        // Room for the lock file's page, not for a 60 KB sidecar.
        fill_leaving(&filler, 16 * 1024);
    } else {
        set_fsize_limit(1000);
    }

    // A writer must save the torn tail before cutting it: the save fails, nothing is cut.
    let err = SessionManager::open(&path, ManagerOptions::default())
        .map(|_| ())
        .expect_err("no room for the torn sidecar");
    assert!(
        err.to_string().contains(".torn-"),
        "names the sidecar: {err}"
    );
    assert_eq!(
        sidecars(&dir),
        Vec::<String>::new(),
        "a partial sidecar was left"
    );
    assert_eq!(std::fs::read(&path).expect("read"), bytes);

    // The repair must quarantine the malformed line and the tail first: that fails too.
    let err = check::repair(&path, &CheckOptions::default(), None).expect_err("no room");
    assert!(
        err.to_string().contains(".quarantine-"),
        "names the sidecar: {err}"
    );
    assert_eq!(
        sidecars(&dir),
        Vec::<String>::new(),
        "a partial sidecar was left"
    );
    assert_eq!(std::fs::read(&path).expect("read"), bytes);

    // With space again, the repair works and the sidecar holds every removed byte.
    if mount.is_some() {
        std::fs::remove_file(&filler).expect("free");
    } else {
        set_fsize_limit(u64::MAX);
    }
    let out = check::repair(&path, &CheckOptions::default(), None).expect("repair");
    let q = std::fs::read(out.quarantine.expect("quarantine")).expect("read");
    assert!(q.len() > 120_000, "{}", q.len());
}
