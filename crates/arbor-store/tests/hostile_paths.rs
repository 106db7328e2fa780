//! Aliased and planted paths (issue 10, items 2, 4, 5 and 7): one writer per *file* whatever
//! name reaches it, lock files and sidecars never written through a planted symlink, atomic
//! rewrites that keep a symlink and the owner, and only regular files read as sessions.
use arbor_store::check::{self, CheckOptions};
use arbor_store::lock::{LockError, WriterLock};
use arbor_store::{load_doc, ManagerOptions, NewEntry, SessionManager, StoreError};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn msg(text: &str) -> NewEntry {
    NewEntry::Message(format!(r#"{{"role":"user","content":"{text}","timestamp":1}}"#).into_bytes())
}

/// A pi session with two messages, written and closed.
fn session_in(dir: &Path) -> PathBuf {
    let mut sm =
        SessionManager::create("/w", Some(dir), ManagerOptions::default()).expect("create");
    sm.append(&msg("one")).expect("append");
    sm.append(&msg("two")).expect("append");
    sm.flush().expect("flush");
    sm.session_file().expect("path").to_path_buf()
}

fn is_busy(r: Result<WriterLock, LockError>) -> bool {
    matches!(r, Err(LockError::Busy { .. }))
}

#[test]
fn a_second_writer_through_a_symlink_or_a_hard_link_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let link = tmp.path().join("link.jsonl");
    symlink(&real, &link).expect("symlink");
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).expect("hard link");

    let held = WriterLock::acquire(&real, None).expect("first writer");
    assert!(
        is_busy(WriterLock::acquire(&link, None)),
        "symlink let a second writer in"
    );
    match WriterLock::acquire(&hard, None) {
        Err(LockError::Busy { holder, .. }) => {
            assert!(
                holder.contains(&format!("pid {}", std::process::id())),
                "{holder}"
            );
            assert!(holder.contains("another name"), "{holder}");
        }
        other => panic!("hard link let a second writer in: {other:?}"),
    }
    drop(held);

    // The issue's scenario: a writer on the symlink, `check --repair` on the real path.
    let mut through_link = SessionManager::open(&link, ManagerOptions::default()).expect("open");
    let id = through_link.append(&msg("three")).expect("append");
    match check::repair(&real, &CheckOptions::default(), None) {
        Err(StoreError::Lock(LockError::Busy { .. })) => {}
        other => panic!("repair ran beside a writer: {other:?}"),
    }
    let mut from_hard = None;
    if let Ok(sm) = SessionManager::open(&hard, ManagerOptions::default()) {
        from_hard = Some(sm);
    }
    assert!(
        from_hard.is_none(),
        "a writer through the hard link was let in"
    );
    through_link.flush().expect("flush");
    drop(through_link);
    let doc = load_doc(&real).expect("load");
    assert!(
        doc.index().get(&id).is_some(),
        "the printed id {id} is not in the file"
    );
}

#[test]
fn the_identity_lock_follows_the_file_after_an_atomic_rewrite() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("v2.jsonl");
    let v2 = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi/edge-numbers-v2.jsonl"),
    )
    .expect("golden");
    std::fs::write(&path, v2).expect("write");
    let sm = SessionManager::open(&path, ManagerOptions::default()).expect("open migrates");
    assert!(!sm.open_notes().is_empty(), "the v2 file was not migrated");
    // The migration made a new file; a hard link to it must still find it locked.
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&path, &hard).expect("hard link");
    assert!(
        is_busy(WriterLock::acquire(&hard, None)),
        "the lock stayed on the replaced file"
    );
    drop(sm);
    std::fs::remove_file(&hard).expect("unlink");
    drop(WriterLock::acquire(&path, None).expect("free after close"));
}

#[test]
fn a_waiting_writer_through_another_name_gets_the_lock_when_it_is_free() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).expect("hard link");
    let held = WriterLock::acquire(&real, None).expect("first");
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        drop(held);
    });
    let start = Instant::now();
    let second = WriterLock::acquire(&hard, Some(Duration::from_secs(10))).expect("waited");
    assert!(start.elapsed() >= Duration::from_millis(100));
    t.join().expect("join");
    drop(second);
}

#[test]
fn a_planted_lock_symlink_is_never_followed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, b"precious\n").expect("victim");
    let lock = arbor_store::lock::lock_path(&real);
    symlink(&victim, &lock).expect("plant");
    let before = std::fs::read(&real).expect("read");
    match SessionManager::open(&real, ManagerOptions::default()) {
        Err(StoreError::Lock(LockError::Io { source, .. })) => {
            assert!(source.to_string().contains("symbolic link"), "{source}")
        }
        other => panic!("the planted lock was accepted: {:?}", other.map(|_| ())),
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), b"precious\n");
    assert_eq!(std::fs::read(&real).expect("read"), before);

    // A dangling one must not create its target.
    std::fs::remove_file(&lock).expect("unplant");
    let target = tmp.path().join("created-through-link");
    symlink(&target, &lock).expect("plant dangling");
    assert!(WriterLock::acquire(&real, None).is_err());
    assert!(
        !target.exists(),
        "the dangling lock symlink created its target"
    );
}

#[test]
fn a_lock_file_of_another_user_or_kind_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let lock = arbor_store::lock::lock_path(&real);
    let c = std::ffi::CString::new(lock.as_os_str().as_encoded_bytes()).expect("c path");
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let r = WriterLock::acquire(&real, None);
    assert!(
        matches!(&r, Err(LockError::Io { source, .. }) if source.to_string().contains("FIFO")),
        "{r:?}"
    );
}

#[test]
fn a_world_writable_directory_without_sticky_bit_is_refused_for_writing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let open_dir = tmp.path().join("open");
    std::fs::create_dir(&open_dir).expect("mkdir");
    let real = session_in(&open_dir);
    std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let r = SessionManager::open(&real, ManagerOptions::default());
    match r {
        Err(StoreError::Lock(LockError::Io { path, source })) => {
            assert_eq!(path, std::fs::canonicalize(&open_dir).expect("canon"));
            assert!(source.to_string().contains("sticky"), "{source}");
        }
        other => panic!(
            "wrote in a world-writable directory: {:?}",
            other.map(|_| ())
        ),
    }
    // Reading is fine.
    assert!(load_doc(&real).is_ok());
}

#[test]
fn rewrites_through_a_symlink_replace_the_target_and_keep_the_link() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = tmp.path().join("store");
    std::fs::create_dir(&store).expect("mkdir");
    let real = store.join("v2.jsonl");
    let v2 = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi/edge-numbers-v2.jsonl"),
    )
    .expect("golden");
    std::fs::write(&real, &v2).expect("write");
    let link = tmp.path().join("link.jsonl");
    symlink(&real, &link).expect("symlink");

    // Migration (an atomic rewrite) through the link.
    let sm = SessionManager::open(&link, ManagerOptions::default()).expect("open");
    drop(sm);
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("lstat")
            .file_type()
            .is_symlink(),
        "the symlink was replaced by a regular file"
    );
    assert!(
        load_doc(&real).expect("load").migration().is_none(),
        "the target was not migrated"
    );

    // Repair through the link: the target is repaired, the link stays.
    let mut damaged = std::fs::read(&real).expect("read");
    damaged.extend_from_slice(b"{not json\n");
    std::fs::write(&real, &damaged).expect("damage");
    let out = check::repair(&link, &CheckOptions::default(), None).expect("repair");
    assert!(out.rewritten);
    assert!(std::fs::symlink_metadata(&link)
        .expect("lstat")
        .file_type()
        .is_symlink());
    assert!(!std::fs::read(&real)
        .expect("read")
        .ends_with(b"{not json\n"));
    let q = out.quarantine.expect("quarantine");
    assert_eq!(
        q.parent(),
        Some(std::fs::canonicalize(&store).expect("canon").as_path())
    );
}

#[test]
fn a_hard_linked_session_is_not_split_by_a_rewrite() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let mut damaged = std::fs::read(&real).expect("read");
    damaged.extend_from_slice(b"{not json\n");
    std::fs::write(&real, &damaged).expect("damage");
    let hard = tmp.path().join("hard.jsonl");
    std::fs::hard_link(&real, &hard).expect("hard link");
    let err = check::repair(&real, &CheckOptions::default(), None).expect_err("refused");
    assert!(err.to_string().contains("hard links"), "{err}");
    assert_eq!(std::fs::read(&real).expect("read"), damaged);
    assert_eq!(std::fs::read(&hard).expect("read"), damaged);
    let inode = |p: &Path| std::fs::metadata(p).expect("meta").ino();
    assert_eq!(inode(&real), inode(&hard));
}

#[test]
fn root_rewriting_a_users_session_keeps_its_owner_group_and_mode() {
    if !arbor_testkit::skip::unless_root(
        "only root can give a file to another user (CI runs as root)",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = session_in(tmp.path());
    let mut damaged = std::fs::read(&real).expect("read");
    damaged.extend_from_slice(b"{not json\n");
    std::fs::write(&real, &damaged).expect("damage");
    let (uid, gid) = (4242, 4343);
    std::os::unix::fs::chown(&real, Some(uid), Some(gid)).expect("chown");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let out = check::repair(&real, &CheckOptions::default(), None).expect("repair");
    assert!(out.rewritten);
    let m = std::fs::metadata(&real).expect("meta");
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (uid, gid, 0o640));
    let q = std::fs::metadata(out.quarantine.expect("quarantine")).expect("meta");
    assert_eq!((q.uid(), q.gid(), q.mode() & 0o777), (uid, gid, 0o600));

    // A torn tail saved by a writer: the sidecar is the user's too.
    let mut torn = std::fs::read(&real).expect("read");
    torn.extend_from_slice(b"{\"type\":\"mess");
    std::fs::write(&real, &torn).expect("tear");
    let sm = SessionManager::open(&real, ManagerOptions::default()).expect("open");
    let side = sm
        .open_notes()
        .iter()
        .find_map(|n| match n {
            arbor_store::OpenNote::TornTailSaved { sidecar, .. } => Some(sidecar.clone()),
            _ => None,
        })
        .expect("torn sidecar");
    let s = std::fs::metadata(side).expect("meta");
    assert_eq!((s.uid(), s.gid()), (uid, gid));
    drop(sm);
    let m = std::fs::metadata(&real).expect("meta");
    assert_eq!((m.uid(), m.gid()), (uid, gid));
}

#[test]
fn only_regular_files_are_sessions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let zero = tmp.path().join("zero.jsonl");
    symlink("/dev/zero", &zero).expect("symlink");
    let fifo = tmp.path().join("fifo.jsonl");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("c path");
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for p in [
        zero.as_path(),
        fifo.as_path(),
        Path::new("/dev/zero"),
        tmp.path(),
    ] {
        let start = Instant::now();
        let e = load_doc(p).expect_err("not a session");
        assert!(e.to_string().contains("not a regular file"), "{p:?}: {e}");
        let e = SessionManager::open(p, ManagerOptions::default())
            .map(|_| ())
            .expect_err("not writable");
        assert!(e.to_string().contains("not a regular file"), "{p:?}: {e}");
        let e = check::check(p, &CheckOptions::default()).expect_err("not checkable");
        assert!(e.to_string().contains("not a regular file"), "{p:?}: {e}");
        assert!(start.elapsed() < Duration::from_secs(5), "{p:?} was read");
    }
    assert!(!tmp.path().join("zero.jsonl.lock").exists());
    assert!(!Path::new("/dev/zero.lock").exists());
}
