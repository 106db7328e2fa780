//! A full disk: the append fails loudly, the file is cut back to exactly what it was, the tree
//! does not advance, the failure is latched until the session is reopened, and after space is
//! freed a reopened session appends normally.
//!
//! The disk is a 256 KiB tmpfs mounted by the test where it may (root, mount allowed); else
//! the per-process file size limit (`RLIMIT_FSIZE`, failing writes with EFBIG) stands in for
//! it. This file holds a single test because the fallback limit applies to the whole process.
//! A new session (a fork) whose first write fails leaves no file behind, not even an empty one.
use arbor_store::{ManagerOptions, NewEntry, SessionManager, StoreError};

use arbor_testkit::full_disk::{fill, fill_leaving, set_fsize_limit, try_tmpfs};

fn msg(text: &str) -> NewEntry {
    NewEntry::Message(format!(r#"{{"role":"user","content":"{text}","timestamp":1}}"#).into_bytes())
}

#[test]
fn full_disk_append_fails_loudly_and_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mnt = tmp.path().join("disk");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mount = try_tmpfs(&mnt);
    eprintln!(
        "ENOSPC test on {}",
        if mount.is_some() {
            "a 256 KiB tmpfs"
        } else {
            "RLIMIT_FSIZE (tmpfs mount not allowed here)"
        }
    );
    let dir = mnt.join("sessions");
    let mut sm =
        SessionManager::create("/w", Some(&dir), ManagerOptions::default()).expect("create");
    let path = sm.session_file().expect("path").to_path_buf();
    let first = sm.append(&msg("one")).expect("append");
    let second = sm.append(&msg("two")).expect("append");
    sm.flush().expect("flush");
    let before = std::fs::read(&path).expect("read");

    let filler = mnt.join("filler");
    if mount.is_some() {
        fill(&filler);
    } else {
        set_fsize_limit(before.len() as u64 + 1000);
    }
    // 40 KB: more than any slack left in the file's last page.
    let big = "x".repeat(40_000);
    let err = sm.append(&msg(&big)).expect_err("the disk is full");
    let code = match &err {
        StoreError::Io { source, .. } => source.raw_os_error(),
        other => panic!("expected an I/O error, got {other}"),
    };
    assert!(
        code == Some(libc::ENOSPC) || code == Some(libc::EFBIG),
        "{err}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "the error names the file: {err}"
    );
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "cut back to the exact previous bytes"
    );
    assert_eq!(
        sm.leaf_id(),
        Some(second.as_str()),
        "the tree did not advance"
    );
    assert_eq!(sm.entries().len(), 2);

    // Latched: every later write reports the first failure, even a small one, even after
    // space comes back.
    match sm.append(&msg("small")) {
        Err(StoreError::Latched { reason, .. }) => assert!(!reason.is_empty()),
        other => panic!("expected the latched error, got {other:?}"),
    }
    if mount.is_some() {
        std::fs::remove_file(&filler).expect("free space");
    } else {
        set_fsize_limit(u64::MAX);
    }
    assert!(matches!(
        sm.append(&msg("still latched")),
        Err(StoreError::Latched { .. })
    ));
    assert_eq!(std::fs::read(&path).expect("read"), before);
    drop(sm);

    // Reopened: appends work and hang from the last entry that reached the disk.
    let mut sm = SessionManager::open(&path, ManagerOptions::default()).expect("reopen");
    assert_eq!(sm.leaf_id(), Some(second.as_str()));
    let third = sm.append(&msg(&big)).expect("append after space was freed");
    sm.close().expect("close");
    let doc = arbor_store::load_doc(&path).expect("load");
    assert!(doc.report().is_clean(), "{:?}", doc.report());
    let ids: Vec<&str> = doc
        .entries()
        .iter()
        .filter_map(|e| e.id.as_deref())
        .collect();
    assert_eq!(ids, vec![first.as_str(), &second, &third]);
    assert_eq!(doc.entries()[2].parent_id.as_deref(), Some(second.as_str()));

    // The disk nearly full again (room for a lock file, not for the 40 KB entry): a fork
    // fails and leaves no session file, empty or not, where it would have been.
    let fresh = mnt.join("fresh");
    std::fs::create_dir(&fresh).expect("mkdir");
    if mount.is_some() {
        fill_leaving(&filler, 16 << 10);
    } else {
        set_fsize_limit(4096);
    }
    let err = SessionManager::fork_from(&path, "/w", Some(&fresh), ManagerOptions::default())
        .expect_err("no room for the fork");
    if mount.is_none() {
        set_fsize_limit(u64::MAX);
    }
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    let left: Vec<_> = std::fs::read_dir(&fresh)
        .expect("the directory")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".jsonl"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
