//! The write path's promises through the library API: one writer per session (in this process
//! too), omp's title slot, blobs and truncation on omp files only, private files, lossless
//! repair.
use arbor_core::doc::Dialect;
use arbor_store::blobs::BlobStore;
use arbor_store::check::{self, CheckOptions};
use arbor_store::{ManagerOptions, NewEntry, SessionManager, StoreError};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
}

fn msg(json: &str) -> NewEntry {
    NewEntry::Message(json.as_bytes().to_vec())
}

fn omp_opts(blobs: &Path) -> ManagerOptions {
    ManagerOptions::default()
        .with_dialect(Some(Dialect::Omp))
        .with_blob_dir(Some(blobs.to_path_buf()))
}

#[test]
fn a_second_writer_in_the_same_process_is_refused_then_waits() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sm =
        SessionManager::create("/w", Some(tmp.path()), ManagerOptions::default()).expect("create");
    let path = sm.session_file().expect("path").to_path_buf();
    match SessionManager::open(&path, ManagerOptions::default()) {
        Err(StoreError::Lock(e)) => {
            let m = e.to_string();
            assert!(
                m.contains(&format!("pid {}", std::process::id())) && m.contains(" since "),
                "{m}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Readers need no lock.
    assert!(SessionManager::open_read_only(&path).is_ok());
    let p2 = path.clone();
    let waiter = std::thread::spawn(move || {
        SessionManager::open(
            &p2,
            ManagerOptions::default().with_wait(Some(Duration::from_secs(20))),
        )
        .map(|_| ())
    });
    std::thread::sleep(Duration::from_millis(200));
    sm.close().expect("close");
    waiter
        .join()
        .expect("join")
        .expect("the waiting writer gets the session");
}

#[test]
fn new_files_and_directories_are_private() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("a/b/sessions");
    let blobs = tmp.path().join("agent/blobs");
    let mut sm = SessionManager::create("/w", Some(&dir), omp_opts(&blobs)).expect("create");
    let path = sm.session_file().expect("path").to_path_buf();
    let img = arbor_core::blobref::encode_base64(&[7u8; 2000]);
    sm.append(&msg(&format!(r#"{{"role":"user","content":[{{"type":"image","data":"{img}","mimeType":"image/png"}}],"timestamp":1}}"#)))
        .expect("append");
    sm.close().expect("close");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(tmp.path().join("a").as_path()), 0o700);
    assert_eq!(mode(&blobs), 0o700);
    for e in std::fs::read_dir(&blobs).expect("blobs") {
        assert_eq!(mode(&e.expect("entry").path()), 0o600);
    }
    // A repair keeps the file's permissions (here a user's 0640).
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    std::io::Write::write_all(&mut f, b"garbage\n").expect("write");
    let out = check::repair(
        &path,
        &CheckOptions::default().with_blob_dir(Some(blobs.clone())),
        None,
    )
    .expect("repair");
    assert!(out.rewritten);
    assert_eq!(mode(&path), 0o640);
    assert_eq!(mode(out.quarantine.as_deref().expect("quarantine")), 0o600);
}

#[test]
fn omp_files_get_blobs_and_truncation_pi_files_do_not() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let blobs = tmp.path().join("agent/blobs");
    let raw = vec![0xABu8; 5000];
    let img = arbor_core::blobref::encode_base64(&raw);
    let long = "L".repeat(600_000);
    let image_msg = format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{img}","mimeType":"image/png"}}],"timestamp":1}}"#
    );
    let long_msg = format!(
        r#"{{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{{"type":"text","text":"{long}"}}],"isError":false,"timestamp":2}}"#
    );

    let mut omp = SessionManager::create("/w", Some(tmp.path()), omp_opts(&blobs)).expect("omp");
    let a = omp.append(&msg(&image_msg)).expect("image");
    let b = omp.append(&msg(&long_msg)).expect("long");
    let omp_path = omp.session_file().expect("p").to_path_buf();
    omp.close().expect("close");
    let doc = arbor_store::load_doc(&omp_path).expect("load");
    assert_eq!(doc.dialect(), Dialect::Omp);
    let hash = arbor_store::blobs::sha256_hex(&raw);
    let la = String::from_utf8_lossy(doc.entry_line(doc.index().get(&a).expect("a"))).into_owned();
    assert!(
        la.contains(&format!(r#""data":"blob:sha256:{hash}""#)),
        "{la}"
    );
    assert_eq!(BlobStore::new(&blobs).get(&hash).expect("blob"), raw);
    let lb = String::from_utf8_lossy(doc.entry_line(doc.index().get(&b).expect("b"))).into_owned();
    assert!(
        lb.contains("\\n\\n[Session persistence truncated large content]\"}]"),
        "cut with omp's notice"
    );
    assert!(lb.len() < 510_000);

    let mut pi = SessionManager::create(
        "/w",
        Some(tmp.path()),
        ManagerOptions::default().with_blob_dir(Some(blobs.clone())),
    )
    .expect("pi");
    let a = pi.append(&msg(&image_msg)).expect("image");
    let b = pi.append(&msg(&long_msg)).expect("long");
    let pi_path = pi.session_file().expect("p").to_path_buf();
    pi.close().expect("close");
    let doc = arbor_store::load_doc(&pi_path).expect("load");
    assert_eq!(doc.dialect(), Dialect::Pi);
    assert!(
        String::from_utf8_lossy(doc.entry_line(doc.index().get(&a).expect("a"))).contains(&img),
        "pi keeps images inline"
    );
    assert!(
        doc.entry_line(doc.index().get(&b).expect("b")).len() > 600_000,
        "pi does not truncate"
    );
}

#[test]
fn omp_rename_rewrites_the_slot_in_place_and_appends_title_change() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let blobs = tmp.path().join("blobs");
    let mut sm = SessionManager::create("/w", Some(tmp.path()), omp_opts(&blobs)).expect("create");
    let path = sm.session_file().expect("p").to_path_buf();
    let u = sm
        .append(&msg(r#"{"role":"user","content":"hi","timestamp":1}"#))
        .expect("u");
    let ino = std::fs::metadata(&path).expect("m").ino();
    let before = std::fs::read(&path).expect("read");
    let t1 = sm.set_session_name("  First\tname ").expect("rename");
    let t2 = sm.set_session_name("Second").expect("rename");
    assert_eq!(sm.session_name().as_deref(), Some("Second"));
    sm.close().expect("close");
    let after = std::fs::read(&path).expect("read");
    assert_eq!(
        std::fs::metadata(&path).expect("m").ino(),
        ino,
        "no rewrite: the same file"
    );
    assert_eq!(
        &after[256..before.len()],
        &before[256..],
        "everything after the slot is untouched"
    );
    let text = String::from_utf8(after).expect("utf8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0].len() + 1, 256);
    let info = arbor_core::title::parse_title_slot(lines[0].as_bytes()).expect("slot");
    assert_eq!(
        (info.title.as_str(), info.source),
        ("Second", Some(arbor_core::title::TitleSource::User))
    );
    assert!(
        lines[3].starts_with(&format!(
            r#"{{"type":"title_change","id":"{t1}","parentId":"{u}","timestamp":""#
        )),
        "{}",
        lines[3]
    );
    assert!(
        lines[3].ends_with(r#","title":"First name","source":"user"}"#),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].ends_with(r#","title":"Second","source":"user","previousTitle":"First name"}"#),
        "{}",
        lines[4]
    );
    assert!(lines[4].contains(&format!(r#""id":"{t2}""#)));
    assert_eq!(
        info.updated_at,
        serde_json::from_str::<serde_json::Value>(lines[4]).expect("json")["timestamp"]
    );

    // An omp 13 file (no slot; its Snowflake id and the model_change omp writes when a
    // session starts make it omp): the rename gives it a slot with an atomic rewrite.
    let old = tmp.path().join("old.jsonl");
    let header = r#"{"type":"session","version":3,"id":"0123456789abcdef","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let model = r#"{"type":"model_change","id":"4391e906","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","model":"anthropic/claude-x"}"#;
    std::fs::write(&old, format!("{header}\n{model}\n")).expect("write");
    let mut sm = SessionManager::open(&old, omp_opts(&blobs)).expect("open");
    assert_eq!(sm.dialect(), Dialect::Omp);
    sm.set_session_name("Named").expect("rename");
    sm.append(&msg(r#"{"role":"user","content":"after","timestamp":1}"#))
        .expect("append after rewrite");
    sm.close().expect("close");
    let text = std::fs::read_to_string(&old).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0].len() + 1, 256);
    assert_eq!(lines[1], header);
    assert_eq!(lines[2], model);
    let doc = arbor_store::load_doc(&old).expect("load");
    assert_eq!(doc.session_name().as_deref(), Some("Named"));
    assert!(doc.report().is_clean());
}

#[test]
fn pi_rename_appends_session_info() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut sm =
        SessionManager::create("/w", Some(tmp.path()), ManagerOptions::default()).expect("create");
    let id = sm.set_session_name("  My name  ").expect("rename");
    let path = sm.session_file().expect("p").to_path_buf();
    sm.close().expect("close");
    let text = std::fs::read_to_string(&path).expect("read");
    let last = text.lines().last().expect("line");
    assert!(
        last.starts_with(&format!(
            r#"{{"type":"session_info","id":"{id}","parentId":null,"#
        )),
        "{last}"
    );
    assert!(last.ends_with(r#","name":"My name"}"#), "{last}");
}
