//! `gc --blobs` over aliased paths (issue 10, item 1): whatever a reader would resolve, gc
//! sees; whatever gc cannot read stops the run before anything is removed. Regression tests
//! for each way a referenced blob used to be deleted, then a property test over random trees
//! of symlinks (cycles included), hard links, escaped references, gz archives, registered
//! files, breadcrumbs and unreadable entries: gc removes exactly the unreferenced blobs, or
//! nothing.
use arbor_store::blobs::{gc, reference_files, BlobStore};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn line_with(reference: &str) -> String {
    format!(
        "{{\"type\":\"message\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"{reference}\"}}]}}}}\n"
    )
}

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn write_session(path: &Path, reference: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, format!("{HEADER}{}", line_with(reference))).expect("write");
}

fn remaining(store: &BlobStore) -> BTreeSet<String> {
    store
        .list()
        .expect("list")
        .into_iter()
        .map(|b| b.hash)
        .collect()
}

/// How a reference is spelled in the file.
#[derive(Debug, Clone, Copy)]
enum Spell {
    Plain,
    /// The first hex digit as `\u00XX`.
    EscapedDigit,
    /// `b` of `blob:` and the `:` after `sha256` escaped.
    EscapedPrefix,
}

fn spell(hash: &str, how: Spell) -> String {
    match how {
        Spell::Plain => format!("blob:sha256:{hash}"),
        Spell::EscapedDigit => {
            let first = hash.as_bytes()[0];
            format!("blob:sha256:\\u{:04x}{}", first, &hash[1..])
        }
        Spell::EscapedPrefix => format!("\\u0062lob:sha256\\u003a{hash}"),
    }
}

fn run_gc(agent: &Path, store: &BlobStore) -> Result<arbor_store::blobs::GcReport, String> {
    let files = reference_files(agent, &[]).map_err(|e| e.to_string())?;
    gc(store, &files, Duration::ZERO, false).map_err(|e| e.to_string())
}

#[test]
fn symlinked_session_files_and_project_directories_are_followed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let store = BlobStore::for_agent_dir(&agent);
    let a = store.put(b"via file link", None).expect("put");
    let b = store.put(b"via dir link", None).expect("put");
    let orphan = store.put(b"orphan", None).expect("put");
    let outside = tmp.path().join("outside");
    write_session(&outside.join("s.jsonl"), &format!("blob:sha256:{a}"));
    write_session(&outside.join("proj/t.jsonl"), &format!("blob:sha256:{b}"));
    let sessions = agent.join("sessions");
    std::fs::create_dir_all(sessions.join("--w--")).expect("mkdir");
    symlink(outside.join("s.jsonl"), sessions.join("--w--/s.jsonl")).expect("file link");
    symlink(outside.join("proj"), sessions.join("--linked--")).expect("dir link");
    // A cycle must not hang the walk.
    symlink(&sessions, sessions.join("--w--/loop")).expect("cycle");
    let r = run_gc(&agent, &store).expect("gc");
    assert_eq!(r.removed, 1);
    assert_eq!(remaining(&store), [a, b].into_iter().collect());
    assert!(store.verify(&orphan).is_err());
}

#[test]
fn references_spelled_with_json_escapes_are_seen() {
    for how in [Spell::EscapedDigit, Spell::EscapedPrefix] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let agent = tmp.path().join("agent");
        let store = BlobStore::for_agent_dir(&agent);
        let h = store.put(b"escaped", None).expect("put");
        let path = agent.join("sessions/--w--/s.jsonl");
        write_session(&path, &spell(&h, how));
        // What a reader resolves: the JSON string decodes to the plain reference.
        let text = std::fs::read_to_string(&path).expect("read");
        let v: serde_json::Value =
            serde_json::from_str(text.lines().nth(1).expect("line")).expect("json");
        assert_eq!(
            v["message"]["content"][0]["data"],
            format!("blob:sha256:{h}"),
            "{how:?}"
        );
        run_gc(&agent, &store).expect("gc");
        assert!(store.verify(&h).is_ok(), "{how:?}: the blob was removed");
    }
}

#[test]
fn an_unreadable_entry_stops_gc_before_anything_is_removed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let store = BlobStore::for_agent_dir(&agent);
    let orphan = store.put(b"orphan", None).expect("put");
    std::fs::create_dir_all(agent.join("sessions/--w--")).expect("mkdir");
    // A symlink to itself cannot be read by anyone, root included (ELOOP).
    symlink("self.jsonl", agent.join("sessions/--w--/self.jsonl")).expect("loop");
    let err = run_gc(&agent, &store).expect_err("must stop");
    assert!(err.contains("self.jsonl"), "{err}");
    assert!(
        store.verify(&orphan).is_ok(),
        "removed despite the unreadable entry"
    );
}

#[test]
fn a_blob_that_is_not_a_regular_file_is_an_error_not_an_endless_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = BlobStore::new(tmp.path().join("blobs"));
    let h = store.put(b"real", None).expect("put");
    let path = store.path_of(&h).expect("path");
    std::fs::remove_file(&path).expect("rm");
    symlink("/dev/zero", &path).expect("plant");
    let start = std::time::Instant::now();
    let err = store.get(&h).expect_err("not a blob");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn an_omp_session_outside_the_root_is_registered_before_its_blob_line() {
    use arbor_core::doc::Dialect;
    use arbor_store::{ManagerOptions, NewEntry, SessionManager};
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    let elsewhere = tmp.path().join("elsewhere");
    let opts = ManagerOptions::default()
        .with_dialect(Some(Dialect::Omp))
        .with_blob_dir(Some(agent.join("blobs")));
    let mut sm = SessionManager::create("/w", Some(&elsewhere), opts).expect("create");
    let data = "QUJD".repeat(400);
    sm.append(&NewEntry::Message(
        format!(r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#)
            .into_bytes(),
    ))
    .expect("append");
    sm.close().expect("close");
    let store = BlobStore::for_agent_dir(&agent);
    assert_eq!(store.list().expect("list").len(), 1);
    let r = run_gc(&agent, &store).expect("gc");
    assert_eq!(r.removed, 0, "the blob of a registered session was removed");
    let registry = agent.join("custom-session-files");
    let markers: Vec<PathBuf> = std::fs::read_dir(&registry)
        .expect("registry")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(markers.len(), 1);
}

// ---------------------------------------------------------------------------------------
// The property: random trees.

/// Where blob `i`'s only reference lives.
#[derive(Debug, Clone, Copy)]
enum Holder {
    Nowhere,
    Project(usize, Spell),
    GzArchive,
    LinkedFile(usize),
    LinkedDir,
    HardLinked(usize),
    Registered(Spell),
    Breadcrumb,
    QuarantineSidecar,
}

fn holder() -> impl Strategy<Value = Holder> {
    let spell = prop_oneof![
        Just(Spell::Plain),
        Just(Spell::EscapedDigit),
        Just(Spell::EscapedPrefix)
    ];
    prop_oneof![
        2 => Just(Holder::Nowhere),
        2 => (0usize..3, spell.clone()).prop_map(|(p, s)| Holder::Project(p, s)),
        1 => Just(Holder::GzArchive),
        1 => (0usize..3).prop_map(Holder::LinkedFile),
        1 => Just(Holder::LinkedDir),
        1 => (0usize..3).prop_map(Holder::HardLinked),
        1 => spell.prop_map(Holder::Registered),
        1 => Just(Holder::Breadcrumb),
        1 => Just(Holder::QuarantineSidecar),
    ]
}

fn build(
    root: &Path,
    holders: &[Holder],
    unreadable: bool,
    cycle: bool,
) -> (PathBuf, BlobStore, BTreeSet<String>) {
    let agent = root.join("agent");
    let store = BlobStore::for_agent_dir(&agent);
    let sessions = agent.join("sessions");
    let outside = root.join("outside");
    for p in 0..3 {
        std::fs::create_dir_all(sessions.join(format!("--p{p}--"))).expect("mkdir");
    }
    std::fs::create_dir_all(&outside).expect("mkdir");
    let mut referenced = BTreeSet::new();
    for (i, h) in holders.iter().enumerate() {
        let hash = store
            .put(format!("blob {i}").as_bytes(), None)
            .expect("put");
        let plain = format!("blob:sha256:{hash}");
        match *h {
            Holder::Nowhere => continue,
            Holder::Project(p, s) => write_session(
                &sessions.join(format!("--p{p}--/s{i}.jsonl")),
                &spell(&hash, s),
            ),
            Holder::GzArchive => {
                let path = agent.join(format!("archive/sessions/--p0--/s{i}.jsonl.gz"));
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                let mut enc = flate2::write::GzEncoder::new(
                    std::fs::File::create(&path).expect("create"),
                    flate2::Compression::default(),
                );
                enc.write_all(format!("{HEADER}{}", line_with(&plain)).as_bytes())
                    .expect("gz");
                enc.finish().expect("finish");
            }
            Holder::LinkedFile(p) => {
                let target = outside.join(format!("f{i}.jsonl"));
                write_session(&target, &plain);
                symlink(&target, sessions.join(format!("--p{p}--/link{i}.jsonl"))).expect("link");
            }
            Holder::LinkedDir => {
                let dir = outside.join(format!("d{i}"));
                write_session(&dir.join("s.jsonl"), &plain);
                symlink(&dir, sessions.join(format!("--linked{i}--"))).expect("link");
            }
            Holder::HardLinked(p) => {
                let target = outside.join(format!("h{i}.jsonl"));
                write_session(&target, &plain);
                std::fs::hard_link(&target, sessions.join(format!("--p{p}--/hard{i}.jsonl")))
                    .expect("hard link");
            }
            Holder::Registered(s) => {
                let target = outside.join(format!("custom{i}"));
                write_session(&target, &spell(&hash, s));
                let reg = agent.join("custom-session-files");
                std::fs::create_dir_all(&reg).expect("mkdir");
                std::fs::write(
                    reg.join(format!("m{i}")),
                    target.to_string_lossy().as_bytes(),
                )
                .expect("marker");
            }
            Holder::Breadcrumb => {
                let dir = outside.join(format!("crumb{i}"));
                write_session(&dir.join("s.jsonl"), &plain);
                let crumbs = agent.join("terminal-sessions");
                std::fs::create_dir_all(&crumbs).expect("mkdir");
                std::fs::write(
                    crumbs.join(format!("pts-{i}")),
                    format!("{}\ns.jsonl\n", dir.display()),
                )
                .expect("crumb");
            }
            Holder::QuarantineSidecar => write_session(
                &sessions.join(format!(
                    "--p1--/s{i}.jsonl.quarantine-2026-01-01T00-00-00-000Z"
                )),
                &plain,
            ),
        }
        referenced.insert(hash);
    }
    // Noise every tree may have: a dangling link, a FIFO named like a session.
    symlink(root.join("nowhere"), sessions.join("--p2--/dangling.jsonl")).expect("dangling");
    let fifo = sessions.join("--p2--/fifo.jsonl");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("c path");
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    if cycle {
        symlink(&sessions, sessions.join("--p0--/cycle")).expect("cycle");
        symlink(&agent, outside.join("back")).expect("cycle");
    }
    if unreadable {
        symlink("self.jsonl", sessions.join("--p1--/self.jsonl")).expect("loop");
    }
    (agent, store, referenced)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(120)
    ))]
    #[test]
    fn gc_removes_exactly_the_unreferenced_blobs_or_nothing(
        holders in proptest::collection::vec(holder(), 1..10),
        unreadable in proptest::bool::weighted(0.2),
        cycle in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (agent, store, referenced) = build(tmp.path(), &holders, unreadable, cycle);
        let before = remaining(&store);
        match run_gc(&agent, &store) {
            Ok(r) => {
                prop_assert!(!unreadable, "gc ran past an unreadable entry");
                prop_assert_eq!(remaining(&store), referenced.clone());
                prop_assert_eq!(r.removed, before.len() - referenced.len());
            }
            Err(e) => {
                prop_assert!(unreadable, "gc failed: {}", e);
                prop_assert_eq!(remaining(&store), before);
            }
        }
    }
}
