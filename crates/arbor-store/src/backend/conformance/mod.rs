//! The conformance suite every [`SessionStore`] passes: the same checks, run by each
//! backend's tests (`arbor-store`'s for the files and memory, `arbor-db`'s for SQLite and
//! PostgreSQL). Each check returns what went wrong instead of panicking, so that a backend's
//! test names the check and the store.
//!
//! ```
//! use arbor_store::backend::{conformance, memory::MemoryStore, SessionStore};
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! let fresh = |lease: Duration| -> Arc<dyn SessionStore> { Arc::new(MemoryStore::with_lease(lease)) };
//! conformance::run_all(&fresh, &[]).unwrap();
//! ```
pub mod checklist;

use super::{BackendError, SessionStore};
use crate::{ManagerOptions, NewEntry, SessionManager, StoreError};
use arbor_core::doc::{Dialect, SessionDoc};
use std::sync::Arc;
use std::time::Duration;

/// Makes an empty store whose writer leases last the given time past each append.
pub type Fresh<'a> = &'a dyn Fn(Duration) -> Arc<dyn SessionStore>;

/// What a failed check says.
pub type Check = Result<(), String>;

type CheckFn = fn(Fresh<'_>) -> Check;

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Check {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn e2s(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Two handles on one database (two processes' connections): a session written through
/// `a` cannot get a second writer through `b` (Busy, naming the holder's process), can be
/// read through `b`, and `b` may write once `a`'s writer is gone; both see the same lines.
///
/// # Errors
/// What went wrong.
pub fn one_writer_across_handles(a: Arc<dyn SessionStore>, b: Arc<dyn SessionStore>) -> Check {
    let mut w =
        SessionManager::create_in(a.clone(), "/p", ManagerOptions::default()).map_err(e2s)?;
    w.append_message(&user("hi")).map_err(e2s)?;
    let id = w.session_id();
    match SessionManager::open_in(b.clone(), &id, ManagerOptions::default()) {
        Err(StoreError::Backend(BackendError::Busy { holder, .. })) => {
            ensure(holder.contains("pid"), || format!("holder {holder:?}"))?
        }
        other => return Err(format!("second writer: {other:?}")),
    }
    let r = SessionManager::open_in(
        b.clone(),
        &id,
        ManagerOptions::default().with_read_only(true),
    )
    .map_err(e2s)?;
    ensure(r.entries().len() == 1, || {
        format!("the reader sees {} entries", r.entries().len())
    })?;
    drop(w);
    let mut w2 = SessionManager::open_in(b, &id, ManagerOptions::default()).map_err(e2s)?;
    w2.append_message(&user("again")).map_err(e2s)?;
    let n = a.read(&id, 0).map_err(e2s)?.len();
    ensure(n == 3, || format!("{n} lines through the first handle"))
}

/// After a migration that added who pushed a session (schema version 3 of the database
/// backends): through the migrated handle `rw` a new session keeps its user, the session
/// `old` made before has none, and `ro`, a read-only handle opened before the migration and
/// still open, sees the new one's user.
///
/// # Errors
/// What went wrong.
pub fn users_after_migration(rw: &dyn SessionStore, ro: &dyn SessionStore, old: &str) -> Check {
    let new = "new-1";
    let meta = super::SessionMeta {
        id: new.into(),
        cwd: "/work/p".into(),
        created: "2026-01-01T00:00:00.000Z".into(),
        tool: "pi".into(),
        machine: Some("m2".into()),
        user: Some("ann".into()),
        ..Default::default()
    };
    let header = format!(
        r#"{{"type":"session","version":3,"id":"{new}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}}"#
    );
    rw.create(&meta, &[header.as_bytes()]).map_err(e2s)?;
    let mut users: Vec<(String, Option<String>)> = rw
        .list()
        .map_err(e2s)?
        .into_iter()
        .map(|s| (s.meta.id, s.meta.user))
        .collect();
    users.sort();
    let want = vec![
        (new.to_string(), Some("ann".to_string())),
        (old.to_string(), None),
    ];
    ensure(users == want, || format!("users {users:?}, not {want:?}"))?;
    let seen: Vec<Option<String>> = ro
        .list()
        .map_err(e2s)?
        .into_iter()
        .map(|s| s.meta.user)
        .collect();
    ensure(seen.contains(&Some("ann".to_string())), || {
        format!("the read-only handle sees users {seen:?}")
    })
}

/// The bytes of the `.jsonl` files in `dir`, in name order: sessions for
/// [`run_all`]'s byte-for-byte check (the backends' tests pass the demo sessions).
///
/// # Errors
/// The directory or a file cannot be read.
pub fn session_files_in(dir: &std::path::Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files.iter().map(std::fs::read).collect()
}

/// Runs every check; `files` are session files' bytes to store and read back byte for byte
/// (real sessions: malformed lines, unicode, v1/v2 headers). Stops at the first failure,
/// naming the check.
///
/// # Errors
/// The failed check's name and what it found.
pub fn run_all(fresh: Fresh<'_>, files: &[Vec<u8>]) -> Check {
    let checks: [(&str, CheckFn); 13] = [
        ("write_and_reopen", write_and_reopen),
        ("one_writer", one_writer),
        ("lost_lease_cannot_append", lost_lease_cannot_append),
        ("deferred_session_stored_at_first_message", deferred),
        ("list_name_delete", list_name_delete),
        ("omp_title_slot", omp_title_slot),
        ("read_from_sequence", read_from_sequence),
        ("newline_in_line_refused", newline_refused),
        ("fork_copies_with_a_new_header", fork_copy),
        ("blobs_by_hash", blobs_by_hash),
        (
            "fork_from_and_continue_recent_in_the_store",
            fork_and_continue,
        ),
        ("omp_blobs_kept_in_the_store", omp_blobs_in_the_store),
        (
            "omp_blobs_read_from_the_store",
            omp_blobs_read_from_the_store,
        ),
    ];
    for (name, check) in checks {
        check(fresh).map_err(|e| {
            format!(
                "{name} ({}): {e}",
                fresh(Duration::from_secs(30)).describe()
            )
        })?;
    }
    byte_identical(fresh, files).map_err(|e| format!("byte_identical: {e}"))?;
    checklist::run(&|| checklist::in_store(fresh)).map_err(|e| {
        format!(
            "manager checklist ({}): {e}",
            fresh(Duration::from_secs(30)).describe()
        )
    })
}

/// `SessionManager::continue_recent_in` opens the store's latest session of a cwd (a new one
/// for another cwd), and `fork_from_in` copies every entry into a new session of the same
/// store with pi's new header (`cwd`, `parentSession` = the source's id).
fn fork_and_continue(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let opts = ManagerOptions::default;
    let mut a = SessionManager::create_in(store.clone(), "/p", opts()).map_err(e2s)?;
    a.append_message(&user("one")).map_err(e2s)?;
    a.append_message(&assistant("two")).map_err(e2s)?;
    let a_id = a.session_id();
    drop(a);
    let mut c = SessionManager::continue_recent_in(store.clone(), "/p", opts()).map_err(e2s)?;
    ensure(c.session_id() == a_id, || {
        "continued another session".into()
    })?;
    c.append_message(&user("three")).map_err(e2s)?;
    drop(c);
    let other =
        SessionManager::continue_recent_in(store.clone(), "/elsewhere", opts()).map_err(e2s)?;
    ensure(other.session_id() != a_id, || {
        "continued a session of another cwd".into()
    })?;
    drop(other);
    let f = SessionManager::fork_from_in(store.clone(), &a_id, "/q", opts()).map_err(e2s)?;
    let f_id = f.session_id();
    ensure(f_id != a_id && f.entries().len() == 3, || {
        format!("the fork has {} entries", f.entries().len())
    })?;
    drop(f);
    let source = store.read(&a_id, 0).map_err(e2s)?;
    let copy = store.read(&f_id, 0).map_err(e2s)?;
    ensure(copy.get(1..) == source.get(1..), || {
        "the fork's entries are not the source's, byte for byte".into()
    })?;
    let header = arbor_core::json::JsValue::parse(&copy[0]).map_err(e2s)?;
    let field = |k: &str| {
        header
            .get(k)
            .and_then(|v| v.as_str_lossy())
            .map(|v| v.into_owned())
    };
    ensure(
        field("parentSession").as_deref() == Some(a_id.as_str())
            && field("cwd").as_deref() == Some("/q")
            && field("id").as_deref() == Some(f_id.as_str()),
        || format!("the fork's header: {}", String::from_utf8_lossy(&copy[0])),
    )?;
    let again = SessionManager::open_in(store, &f_id, opts()).map_err(e2s)?;
    ensure(again.entries().len() == 3, || "the fork reopened".into())
}

/// A new omp session in `store`, its header stored.
fn omp_session(store: &Arc<dyn SessionStore>) -> Result<SessionManager, String> {
    SessionManager::create_in(
        store.clone(),
        "/p",
        ManagerOptions::default().with_dialect(Some(Dialect::Omp)),
    )
    .map_err(e2s)
}

/// An image in an omp session kept in the store goes to the store's own blobs (omp's
/// persistence transform), and the stored line names it.
fn omp_blobs_in_the_store(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm = omp_session(&store)?;
    let data = "A".repeat(4096);
    let message = format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#
    );
    sm.append_message(message.as_bytes()).map_err(e2s)?;
    let lines = store.read(&sm.session_id(), 0).map_err(e2s)?;
    let last = lines
        .last()
        .map(|l| String::from_utf8_lossy(l).into_owned());
    let last = last.unwrap_or_default();
    let hash = last
        .split("blob:sha256:")
        .nth(1)
        .and_then(|r| r.get(..64))
        .ok_or_else(|| format!("no blob reference in the stored line: {last:.200}"))?;
    let bytes = store.get_blob(hash).map_err(e2s)?;
    ensure(bytes == Some(vec![0u8; 3072]), || {
        format!(
            "blob {hash} in the store: {:?} bytes",
            bytes.map(|b| b.len())
        )
    })
}

/// An omp session kept in the store reads back with its images from the store's own blobs,
/// through the resolver `show`, `context` and `export` use for session files too
/// ([`crate::blobs::resolve_doc_blobs`] with [`crate::blobs::StoreBlobs`]); a blob the store
/// does not hold leaves its reference in place, reported with the store's name, and the
/// session still opens (omp's lenient read).
fn omp_blobs_read_from_the_store(fresh: Fresh<'_>) -> Check {
    use crate::blobs::{resolve_doc_blobs, BlobError, StoreBlobs};
    let store = fresh(Duration::from_secs(30));
    let mut sm = omp_session(&store)?;
    let image = |data: &str| {
        format!(
            r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#
        )
    };
    let data = "A".repeat(4096);
    sm.append_message(image(&data).as_bytes()).map_err(e2s)?;
    let absent = crate::blobs::sha256_hex(b"never stored");
    let absent_ref = format!("blob:sha256:{absent}");
    sm.append_message(image(&absent_ref).as_bytes())
        .map_err(e2s)?;
    let id = sm.session_id();
    drop(sm);
    // Read as `show` reads a session: its bytes parsed, its blobs resolved.
    let bytes = store.read_joined(&id, 0).map_err(e2s)?;
    let mut doc = SessionDoc::parse(Arc::new(bytes)).map_err(e2s)?;
    let issues = resolve_doc_blobs(&mut doc, &StoreBlobs::new(&*store), true).map_err(e2s)?;
    let texts: Vec<String> = doc
        .entries()
        .iter()
        .enumerate()
        .map(|(i, _)| String::from_utf8_lossy(doc.entry_line(i)).into_owned())
        .collect();
    ensure(
        texts
            .iter()
            .any(|t| t.contains(&format!(r#""data":"{data}""#))),
        || format!("the stored image was not read back from the store: {texts:.300?}"),
    )?;
    ensure(texts.iter().any(|t| t.contains(&absent_ref)), || {
        "the reference to the missing blob is not left in place".into()
    })?;
    ensure(
        matches!(
            issues.as_slice(),
            [i] if matches!(&i.error, BlobError::Missing { hash, dir }
                if *hash == absent && dir.to_string_lossy() == store.describe())
        ),
        || format!("the missing blob is not reported once, naming the store: {issues:?}"),
    )
}

fn user(text: &str) -> Vec<u8> {
    format!(
        r#"{{"role":"user","content":{},"timestamp":1767225600000}}"#,
        json_str(text)
    )
    .into_bytes()
}

fn assistant(text: &str) -> Vec<u8> {
    format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}}}},"stopReason":"stop","timestamp":1767225601000}}"#,
        json_str(text)
    )
    .into_bytes()
}

fn json_str(s: &str) -> String {
    // UTF-8 in, UTF-8 out (a byte-per-char map would turn "😀" into four Latin-1 letters).
    String::from_utf8_lossy(&arbor_core::json::JsValue::String(s.into()).to_json()).into_owned()
}

/// The session's bytes as a file would hold them.
fn joined(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// A session written through the manager (messages, a branch, a label, a name) reads back
/// with the same lines, the same tree and the same context.
fn write_and_reopen(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm = SessionManager::create_in(store.clone(), "/work/p", ManagerOptions::default())
        .map_err(e2s)?;
    let u1 = sm
        .append_message(&user("first \u{1F600} \"quoted\" \\ line"))
        .map_err(e2s)?;
    sm.append_message(&assistant("answer one")).map_err(e2s)?;
    sm.append_message(&user("second")).map_err(e2s)?;
    sm.append_message(&assistant("answer two")).map_err(e2s)?;
    sm.branch(&u1).map_err(e2s)?;
    sm.append_message(&assistant("another answer"))
        .map_err(e2s)?;
    sm.append(&NewEntry::Label {
        target_id: u1.clone(),
        label: Some("start".into()),
    })
    .map_err(e2s)?;
    sm.set_session_name("named session").map_err(e2s)?;
    let id = sm.session_id();
    let mut want_context = Vec::new();
    sm.build_session_context()
        .write_json(sm.doc(), &mut want_context);
    let want_lines: Vec<Vec<u8>> = std::iter::once(sm.header().to_vec())
        .chain(sm.entries().iter().map(|e| sm.doc().line(&e.line).to_vec()))
        .collect();
    drop(sm);
    let stored = store.read(&id, 0).map_err(e2s)?;
    ensure(stored == want_lines, || {
        format!(
            "stored {} lines, the manager wrote {}",
            stored.len(),
            want_lines.len()
        )
    })?;
    let again =
        SessionManager::open_in(store.clone(), &id, ManagerOptions::default()).map_err(e2s)?;
    let mut got_context = Vec::new();
    again
        .build_session_context()
        .write_json(again.doc(), &mut got_context);
    ensure(got_context == want_context, || {
        "the reopened session's context differs".into()
    })?;
    ensure(
        String::from_utf8_lossy(&got_context).contains("first \u{1F600} "),
        || "the first message's text did not come back as written".into(),
    )?;
    ensure(again.label(&u1) == Some("start"), || {
        "the label is gone".into()
    })?;
    ensure(
        again.session_name().as_deref() == Some("named session"),
        || format!("name {:?}", again.session_name()),
    )?;
    // The bytes are what a file of the same session holds: a file reads back the same.
    let doc = SessionDoc::parse(Arc::new(joined(&stored))).map_err(e2s)?;
    ensure(doc.entries().len() == again.entries().len(), || {
        "entries differ from a file's".into()
    })
}

/// A second writer is refused while the first holds the session; readers are not; the
/// lease is free again once the first is gone.
fn one_writer(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut a =
        SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).map_err(e2s)?;
    a.append_message(&user("hello")).map_err(e2s)?;
    let id = a.session_id();
    match SessionManager::open_in(store.clone(), &id, ManagerOptions::default()) {
        Err(StoreError::Backend(BackendError::Busy { .. })) => {}
        Err(e) => return Err(format!("second writer: {e}")),
        Ok(_) => return Err("a second writer was let in".into()),
    }
    let reader = SessionManager::open_in(
        store.clone(),
        &id,
        ManagerOptions::default().with_read_only(true),
    )
    .map_err(e2s)?;
    ensure(reader.entries().len() == 1, || {
        "the reader sees the write".into()
    })?;
    drop(a);
    let mut b = SessionManager::open_in(
        store.clone(),
        &id,
        ManagerOptions::default().with_wait(Some(Duration::from_secs(5))),
    )
    .map_err(e2s)?;
    b.append_message(&assistant("from b")).map_err(e2s)?;
    ensure(store.read(&id, 0).map_err(e2s)?.len() == 3, || {
        "b's append is stored".into()
    })
}

/// A writer whose lease ran out and was taken by another cannot append: nothing it writes
/// after that is stored, and the new writer's lines are intact.
fn lost_lease_cannot_append(fresh: Fresh<'_>) -> Check {
    let lease = Duration::from_millis(300);
    let store = fresh(lease);
    let mut a =
        SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).map_err(e2s)?;
    a.append_message(&user("hello")).map_err(e2s)?;
    let id = a.session_id();
    std::thread::sleep(lease * 2);
    if !store.leases_expire() {
        // The lock is held for as long as the writer lives: nobody takes it over.
        return match SessionManager::open_in(store.clone(), &id, ManagerOptions::default()) {
            Err(StoreError::Backend(BackendError::Busy { .. })) => a
                .append_message(&assistant("a still writes"))
                .map_err(e2s)
                .map(|_| ()),
            Err(e) => Err(format!("second writer: {e}")),
            Ok(_) => Err("a second writer took a held session".into()),
        };
    }
    let mut b =
        SessionManager::open_in(store.clone(), &id, ManagerOptions::default()).map_err(e2s)?;
    b.append_message(&assistant("b holds it now"))
        .map_err(e2s)?;
    match a.append_message(&assistant("a, too late")) {
        Err(StoreError::Backend(BackendError::Fenced { .. })) => {}
        Err(e) => return Err(format!("the fenced writer got: {e}")),
        Ok(_) => return Err("a writer that lost its lease appended".into()),
    }
    let lines = store.read(&id, 0).map_err(e2s)?;
    ensure(lines.len() == 3, || {
        format!("{} lines stored, want 3", lines.len())
    })?;
    ensure(
        String::from_utf8_lossy(&lines[2]).contains("b holds it now"),
        || "b's line".into(),
    )
}

/// pi's deferred persistence: nothing is stored before the conversation starts.
fn deferred(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm = SessionManager::create_in(
        store.clone(),
        "/p",
        ManagerOptions::default().with_deferred(true),
    )
    .map_err(e2s)?;
    sm.append_model_change("anthropic", "claude-sonnet-4-5")
        .map_err(e2s)?;
    ensure(store.list().map_err(e2s)?.is_empty(), || {
        "stored before the conversation".into()
    })?;
    sm.append_message(&user("go")).map_err(e2s)?;
    let lines = store.read(&sm.session_id(), 0).map_err(e2s)?;
    ensure(lines.len() == 3, || {
        format!("{} lines after the first message", lines.len())
    })
}

/// The listing's metadata, the name, deletion (refused while a writer holds the session).
fn list_name_delete(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm = SessionManager::create_in(store.clone(), "/proj/x", ManagerOptions::default())
        .map_err(e2s)?;
    sm.append_message(&user("hi")).map_err(e2s)?;
    let id = sm.session_id();
    sm.set_session_name("a name").map_err(e2s)?;
    let list = store.list().map_err(e2s)?;
    let one = list.iter().find(|s| s.meta.id == id).ok_or("not listed")?;
    ensure(
        one.meta.cwd == "/proj/x" && one.lines == 3 && one.meta.tool == "pi",
        || format!("{one:?}"),
    )?;
    ensure(one.meta.name.as_deref() == Some("a name"), || {
        format!("{one:?}")
    })?;
    let bytes: u64 = store
        .read(&id, 0)
        .map_err(e2s)?
        .iter()
        .map(|l| l.len() as u64 + 1)
        .sum();
    ensure(one.bytes == bytes, || {
        format!("bytes {} vs {bytes}", one.bytes)
    })?;
    match store.delete(&id) {
        Err(BackendError::Busy { .. }) => {}
        other => return Err(format!("delete while written: {other:?}")),
    }
    drop(sm);
    store.delete(&id).map_err(e2s)?;
    match store.read(&id, 0) {
        Err(BackendError::NoSession { .. }) => Ok(()),
        other => Err(format!("read after delete: {other:?}")),
    }
}

/// omp sessions: the title slot line comes first and is rewritten by a rename.
fn omp_title_slot(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm = omp_session(&store)?;
    sm.append_message(&user("hi")).map_err(e2s)?;
    sm.set_session_name("omp title").map_err(e2s)?;
    let id = sm.session_id();
    drop(sm);
    let again =
        SessionManager::open_in(store.clone(), &id, ManagerOptions::default()).map_err(e2s)?;
    ensure(again.dialect() == Dialect::Omp, || "not omp".into())?;
    ensure(again.session_name().as_deref() == Some("omp title"), || {
        format!("title {:?}", again.session_name())
    })?;
    let listed = store.list().map_err(e2s)?;
    ensure(
        listed.iter().any(|s| {
            s.meta.id == id && s.meta.name.as_deref() == Some("omp title") && s.meta.tool == "omp"
        }),
        || format!("{listed:?}"),
    )
}

/// Reading from a sequence number gives the lines from there on.
fn read_from_sequence(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm =
        SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).map_err(e2s)?;
    for i in 0..5 {
        sm.append_message(&user(&format!("m{i}"))).map_err(e2s)?;
    }
    let all = store.read(&sm.session_id(), 0).map_err(e2s)?;
    let tail = store.read(&sm.session_id(), 4).map_err(e2s)?;
    ensure(all.len() == 6 && tail == all[4..], || {
        format!("{} / {}", all.len(), tail.len())
    })?;
    let none = store.read(&sm.session_id(), 99).map_err(e2s)?;
    ensure(none.is_empty(), || "past the end".into())?;
    // The joined form is the same lines, each ended by a newline.
    for from in [0, 4, 99] {
        let joined = store.read_joined(&sm.session_id(), from).map_err(e2s)?;
        let want: Vec<u8> = all
            .iter()
            .skip(from as usize)
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect();
        ensure(joined == want, || format!("read_joined from {from}"))?;
    }
    // Streamed: the same bytes through a small writer, written as the lines are read; a
    // writer that fails is the store's `Output` error.
    struct Small<'a>(&'a mut Vec<u8>);
    impl std::io::Write for Small<'_> {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let n = b.len().min(7);
            self.0.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut streamed = Vec::new();
    store
        .read_into(&sm.session_id(), 0, &mut Small(&mut streamed))
        .map_err(e2s)?;
    let joined = store.read_joined(&sm.session_id(), 0).map_err(e2s)?;
    ensure(streamed == joined, || {
        "read_into differs from read_joined".into()
    })?;
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    match store.read_into(&sm.session_id(), 0, &mut Full) {
        Err(BackendError::Output { .. }) => {}
        other => return Err(format!("read_into a failing writer: {other:?}")),
    }
    match store.read_joined("no-such-session", 0) {
        Err(BackendError::NoSession { .. }) => Ok(()),
        other => Err(format!("read_joined of a missing session: {other:?}")),
    }
}

/// A fork is the source's lines with a new header (id, `parentSession`), a session of its
/// own that opens with the source's context and name; the source is unchanged.
fn fork_copy(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let mut sm =
        SessionManager::create_in(store.clone(), "/p", ManagerOptions::default()).map_err(e2s)?;
    let u = sm.append_message(&user("one")).map_err(e2s)?;
    sm.append_message(&assistant("two")).map_err(e2s)?;
    sm.set_session_name("the source").map_err(e2s)?;
    sm.branch(&u).map_err(e2s)?;
    sm.append_message(&assistant("two again")).map_err(e2s)?;
    let src = sm.session_id();
    let mut want_ctx = Vec::new();
    sm.build_session_context()
        .write_json(sm.doc(), &mut want_ctx);
    drop(sm);
    let before = store.read(&src, 0).map_err(e2s)?;
    let new_id = "0194f0a0-0000-7000-8000-00000000f0f0";
    let meta = store.fork(&src, new_id, "parent-ref").map_err(e2s)?;
    ensure(
        meta.id == new_id && meta.parent_session.as_deref() == Some("parent-ref"),
        || format!("{meta:?}"),
    )?;
    ensure(meta.name.as_deref() == Some("the source"), || {
        format!("name {:?}", meta.name)
    })?;
    let copy = store.read(new_id, 0).map_err(e2s)?;
    ensure(
        copy.len() == before.len() && copy[1..] == before[1..],
        || "the entries were not copied as they are".into(),
    )?;
    let header = String::from_utf8_lossy(&copy[0]).into_owned();
    ensure(
        header.contains(&format!("\"id\":\"{new_id}\""))
            && header.contains("\"parentSession\":\"parent-ref\""),
        || header.clone(),
    )?;
    ensure(store.read(&src, 0).map_err(e2s)? == before, || {
        "the source changed".into()
    })?;
    let fork =
        SessionManager::open_in(store.clone(), new_id, ManagerOptions::default()).map_err(e2s)?;
    let mut got_ctx = Vec::new();
    fork.build_session_context()
        .write_json(fork.doc(), &mut got_ctx);
    ensure(got_ctx == want_ctx, || "the fork's context differs".into())?;
    ensure(fork.session_name().as_deref() == Some("the source"), || {
        "the fork lost the name".into()
    })?;
    drop(fork);
    ensure(store.list().map_err(e2s)?.len() == 2, || {
        "two sessions".into()
    })?;
    match store.fork(&src, new_id, "again") {
        Err(BackendError::Exists { .. }) => {}
        other => return Err(format!("fork onto a taken id: {other:?}")),
    }
    match store.fork(
        "no-such-session",
        "0194f0a0-0000-7000-8000-00000000f0f1",
        "x",
    ) {
        Err(BackendError::NoSession { .. }) => Ok(()),
        other => Err(format!("fork of a missing session: {other:?}")),
    }
}

/// Blobs are kept by hash, once; bytes that do not hash to their name are refused.
fn blobs_by_hash(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let hash = crate::blobs::sha256_hex(&bytes);
    ensure(!store.has_blob(&hash).map_err(e2s)?, || {
        "held before".into()
    })?;
    ensure(store.get_blob(&hash).map_err(e2s)?.is_none(), || {
        "read before".into()
    })?;
    store.put_blob(&hash, &bytes).map_err(e2s)?;
    store.put_blob(&hash, &bytes).map_err(e2s)?;
    ensure(store.has_blob(&hash).map_err(e2s)?, || "not held".into())?;
    ensure(
        store.get_blob(&hash).map_err(e2s)? == Some(bytes.clone()),
        || "read back other bytes".into(),
    )?;
    let other = crate::blobs::sha256_hex(b"other");
    match store.put_blob(&other, b"not other") {
        Err(BackendError::BadBlob { .. }) => {}
        r => return Err(format!("mismatched bytes stored: {r:?}")),
    }
    ensure(!store.has_blob(&other).map_err(e2s)?, || {
        "a refused blob is held".into()
    })
}

/// A line holding a newline is refused and nothing is stored.
fn newline_refused(fresh: Fresh<'_>) -> Check {
    let store = fresh(Duration::from_secs(30));
    let meta = super::SessionMeta {
        id: "nl-test".into(),
        ..Default::default()
    };
    match store.create(&meta, &[b"{\"type\":\"session\"}", b"a\nb"]) {
        Err(BackendError::BadLine { .. }) => {}
        other => return Err(format!("{other:?}")),
    }
    ensure(store.list().map_err(e2s)?.is_empty(), || {
        "stored anyway".into()
    })
}

/// Real session files stored line by line read back byte for byte (newline-terminated, as
/// pi writes them; a file without a final newline gains one), and open as their files do.
fn byte_identical(fresh: Fresh<'_>, files: &[Vec<u8>]) -> Check {
    let store = fresh(Duration::from_secs(30));
    for (n, bytes) in files.iter().enumerate() {
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
        let meta = super::meta_from_header(lines.first().copied().unwrap_or_default(), "pi");
        let meta = super::SessionMeta {
            id: format!("file-{n}-{}", meta.id),
            ..meta
        };
        store.create(&meta, &lines).map_err(e2s)?;
        let back = joined(&store.read(&meta.id, 0).map_err(e2s)?);
        let mut want = body.to_vec();
        want.push(b'\n');
        ensure(back == want, || {
            format!("file {n}: {} bytes back, {} stored", back.len(), want.len())
        })?;
        let from_store = SessionManager::open_in(
            store.clone(),
            &meta.id,
            ManagerOptions::default().with_read_only(true),
        )
        .map_err(|e| format!("file {n}: {e}"))?;
        let from_file = SessionDoc::parse(Arc::new(want)).map_err(e2s)?;
        let mut a = Vec::new();
        let mut b = Vec::new();
        from_store
            .build_session_context()
            .write_json(from_store.doc(), &mut a);
        arbor_core::context::build_session_context(
            &from_file,
            arbor_core::context::LeafSel::Current,
        )
        .write_json(&from_file, &mut b);
        ensure(a == b, || {
            format!("file {n}: the context differs from the file's")
        })?;
        // A writer migrates a v1/v2 session in the store, as a file is rewritten: the lines
        // become v3 and the context stays.
        let old = from_file.migration().is_some();
        drop(from_store);
        let w = SessionManager::open_in(store.clone(), &meta.id, ManagerOptions::default())
            .map_err(|e| format!("file {n}: {e}"))?;
        let migrated = w
            .open_notes()
            .iter()
            .any(|x| matches!(x, crate::OpenNote::Migrated { .. }));
        ensure(migrated == old, || {
            format!("file {n}: migrated {migrated}, old format {old}")
        })?;
        let mut c = Vec::new();
        w.build_session_context().write_json(w.doc(), &mut c);
        ensure(c == b, || {
            format!("file {n}: the context changed by the migration")
        })?;
        let stored = SessionDoc::parse(Arc::new(joined(&store.read(&meta.id, 0).map_err(e2s)?)))
            .map_err(e2s)?;
        ensure(stored.migration().is_none(), || {
            format!("file {n}: still an old format in the store")
        })?;
    }
    Ok(())
}
