//! `arbor_sync` against the store's rules (issue 23, items 2 and 4): push never sends a
//! line that is still being written; a local append during a pull reaches the store; push
//! never records what it did not send; a conflict resolved by a fork is not reported again;
//! one bad session does not stop the others; a missing blob is retried. Two machines are two
//! agent directories in a temporary directory, the shared store a SQLite file.
use arbor_db::SqliteStore;
use arbor_store::backend::files::FileStore;
use arbor_store::backend::{Blobs, SessionStore};
use arbor_sync::{Local, Row, State};
use std::io::Write;
use std::path::{Path, PathBuf};

const ID: &str = "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn machine(root: &Path, name: &str) -> Local {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("sessions")).expect("dirs");
    Local {
        pi: FileStore::new(&dir),
        omp: FileStore::new(&dir.join("omp")),
        map_cwd: Vec::new(),
        cursor_file: dir.join("arbor/sync-test.tsv"),
        machine: name.to_string(),
        user: None,
    }
}

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}}"#
    )
}

fn entry(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

/// A session file with `entries` (id, parent) on machine `m`.
fn session(m: &Local, id: &str, entries: &[(&str, Option<&str>)]) -> PathBuf {
    let dir = m.pi.agent_dir().join("sessions/--work-p--");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    let mut text = header(id) + "\n";
    for (e, p) in entries {
        text += &(entry(e, *p, e) + "\n");
    }
    std::fs::write(&path, text).expect("write");
    path
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

fn the_file(m: &Local, id: &str) -> PathBuf {
    m.pi.session_files()
        .into_iter()
        .find(|p| FileStore::id_of(p).as_deref() == Some(id))
        .unwrap_or_else(|| panic!("session {id} on {}", m.machine))
}

fn row<'r>(rows: &'r [Row], id: &str) -> &'r Row {
    rows.iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id} in {rows:#?}"))
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn push_never_sends_a_line_still_being_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let a = machine(tmp.path(), "a");
    let path = session(&a, ID, &[("e1", None)]);
    // pi is writing its next line: half of it is there.
    let next = entry("e2", Some("e1"), "the next line") + "\n";
    let (first, rest) = next.split_at(40);
    append(&path, first);
    let rows = arbor_sync::push(&store, &a, &[]).expect("push");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    assert_eq!(
        store.read(ID, 0).expect("read").len(),
        2,
        "only the complete lines are sent"
    );
    append(&path, rest);
    arbor_sync::push(&store, &a, &[]).expect("push");
    let shared = store.read_joined(ID, 0).expect("read");
    assert_eq!(shared, std::fs::read(&path).expect("file"));
    // The other machine gets exactly the file.
    let b = machine(tmp.path(), "b");
    let rows = arbor_sync::pull(&store, &b, &[], false).expect("pull");
    assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
    assert_eq!(
        std::fs::read(the_file(&b, ID)).expect("b"),
        std::fs::read(&path).expect("a")
    );
}

#[test]
fn push_after_the_shared_copy_moved_ahead_records_nothing_it_did_not_send() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    let pa = session(&a, ID, &[("e1", None)]);
    arbor_sync::push(&store, &a, &[]).expect("push a");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    let pb = the_file(&b, ID);
    append(&pb, &(entry("b1", Some("e1"), "from b") + "\n"));
    arbor_sync::push(&store, &b, &[]).expect("push b");
    // A has nothing new: its push sends nothing and must not take the shared line as agreed.
    let rows = arbor_sync::push(&store, &a, &[]).expect("push a");
    assert_eq!(row(&rows, ID).moved, 0);
    let rows = arbor_sync::pull(&store, &a, &[], false).expect("pull a");
    assert_eq!(row(&rows, ID).moved, 1, "{rows:#?}");
    assert_eq!(lines_of(&pa), lines_of(&pb));
}

/// pi takes no lock: its appends can land at any moment of a pull. An appender writes lines
/// (each the child of its last one, as pi does) while the other machine's lines are pulled in;
/// once it stops, a pull and a push bring both sides to the same entries, none lost.
#[test]
fn a_local_append_during_a_pull_reaches_the_store() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("shared.db");
    let store = SqliteStore::open(&db).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    let pa = session(&a, ID, &[("e1", None)]);
    arbor_sync::push(&store, &a, &[]).expect("push a");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    let pb = the_file(&b, ID);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let appender = {
        let (stop, pa) = (stop.clone(), pa.clone());
        std::thread::spawn(move || {
            let mut parent = "e1".to_string();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || n < 5 {
                let id = format!("a{n:05}");
                append(&pa, &(entry(&id, Some(&parent), "from a") + "\n"));
                parent = id;
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            n
        })
    };
    let mut parent = "e1".to_string();
    for i in 0..8 {
        let id = format!("b{i:05}");
        append(&pb, &(entry(&id, Some(&parent), "from b") + "\n"));
        parent = id;
        arbor_sync::push(&store, &b, &[]).expect("push b");
        arbor_sync::pull(&store, &a, &[], false).expect("pull a");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = appender.join().expect("appender");
    let mut last = Vec::new();
    for _ in 0..2 {
        let r1 = arbor_sync::pull(&store, &a, &[], false).expect("pull a");
        let r2 = arbor_sync::push(&store, &a, &[]).expect("push a");
        let r3 = arbor_sync::pull(&store, &b, &[], false).expect("pull b");
        let r4 = arbor_sync::push(&store, &b, &[]).expect("push b");
        last = vec![r1, r2, r3, r4];
    }
    let ids = |lines: &[String]| {
        let mut v: Vec<String> = lines
            .iter()
            .filter_map(|l| arbor_core::entry::extract(l.as_bytes()).id)
            .collect();
        v.sort();
        v
    };
    let shared: Vec<String> = store
        .read(ID, 0)
        .expect("read")
        .into_iter()
        .map(|l| String::from_utf8(l).expect("utf-8"))
        .collect();
    let here = ids(&lines_of(&pa));
    assert_eq!(here.len(), 1 + 1 + 8 + written, "every line once on a");
    assert_eq!(ids(&shared), here, "the store holds every line of a");
    assert!(
        ids(&lines_of(&pb)) == here,
        "b holds every line of a: b has {} ids, a {}; the last round: {last:#?}",
        ids(&lines_of(&pb)).len(),
        here.len()
    );
}

/// A change inside the agreed part (the same id, other bytes) is a conflict; `pull
/// --fork-on-conflict` keeps the shared copy as a fork once, and the resolved conflict is not
/// reported again by pull, push or status.
#[test]
fn a_conflict_resolved_by_a_fork_stays_resolved() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let a = machine(tmp.path(), "a");
    let pa = session(&a, ID, &[("e1", None), ("e2", Some("e1"))]);
    arbor_sync::push(&store, &a, &[]).expect("push");
    let text = std::fs::read_to_string(&pa).expect("read");
    std::fs::write(
        &pa,
        text.replace("\"content\":\"e2\"", "\"content\":\"E2\""),
    )
    .expect("w");
    let rows = arbor_sync::pull(&store, &a, &[], false).expect("pull");
    let r = row(&rows, ID);
    assert!(matches!(r.state, State::Conflict { .. }), "{r:#?}");
    assert!(r.unresolved);
    assert!(
        r.note.as_deref().is_some_and(|n| n.contains("e2")),
        "names the entry: {r:#?}"
    );
    let rows = arbor_sync::pull(&store, &a, &[], true).expect("pull --fork-on-conflict");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    assert_eq!(a.pi.session_files().len(), 2, "the fork");
    for _ in 0..2 {
        let rows = arbor_sync::pull(&store, &a, &[], true).expect("pull again");
        assert!(!row(&rows, ID).unresolved, "{rows:#?}");
        let rows = arbor_sync::push(&store, &a, &[]).expect("push");
        assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
        let rows = arbor_sync::status(&store, &a, &[]).expect("status");
        assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
    }
    assert_eq!(a.pi.session_files().len(), 2, "no second fork");
}

#[test]
fn push_goes_on_past_a_duplicate_id() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let a = machine(tmp.path(), "a");
    let ids: Vec<String> = (0..6)
        .map(|i| format!("0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a{i:02}"))
        .collect();
    for id in &ids {
        session(&a, id, &[("e1", None)]);
    }
    // A copy of the third session under another name (same id).
    let third = the_file(&a, &ids[2]);
    std::fs::copy(&third, third.with_file_name("copy.jsonl")).expect("copy");
    let rows = arbor_sync::push(&store, &a, &[]).expect("push");
    let listed: Vec<String> = store
        .list()
        .expect("list")
        .into_iter()
        .map(|s| s.meta.id)
        .collect();
    for id in &ids {
        assert!(listed.contains(id), "{id} pushed: {rows:#?}");
    }
    assert!(
        rows.iter().any(|r| r.unresolved),
        "the duplicate is named: {rows:#?}"
    );
}

#[test]
fn a_missing_blob_is_sent_on_a_later_push() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let a = machine(tmp.path(), "a");
    let blob = b"an image";
    let hash = arbor_store::blobs::sha256_hex(blob);
    let dir = a.omp.agent_dir().join("sessions/--work-p--");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl"));
    std::fs::write(
        &path,
        format!(
            "{{\"type\":\"title\",\"title\":\"t\"}}\n{}\n{{\"type\":\"message\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"data\":\"blob:sha256:{hash}\",\"mimeType\":\"image/png\"}}],\"timestamp\":1}}}}\n",
            header(ID)
        ),
    )
    .expect("write");
    let rows = arbor_sync::push(&store, &a, &[]).expect("push");
    assert_eq!(row(&rows, ID).missing_blobs, vec![hash.clone()]);
    assert!(!store.has_blob(&hash).expect("has"));
    // The blob turns up (omp wrote it late): the next push sends it.
    a.omp.put_blob(&hash, blob).expect("put");
    let rows = arbor_sync::push(&store, &a, &[]).expect("push");
    assert!(store.has_blob(&hash).expect("has"), "{rows:#?}");
}

/// The real pi 1.5.2 on a session that branched on two machines and was merged by sync
/// (tools/sync/pi-merge.sh made the two files; pi-oracle.mjs recorded pi's answers in
/// goldens/pi15/sync-merged-{a,b}.*, whose contexts and trees arbor-core's pi15_goldens
/// compares with arbor's): both files hold the same lines, and pi resumes each at its own
/// machine's last turn.
#[test]
fn pi_1_5_2_resumes_each_merged_file_at_its_own_leaf() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect(name);
    let sorted = |text: String| {
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    let (a, b) = (read("sync-merged-a.jsonl"), read("sync-merged-b.jsonl"));
    assert_ne!(a, b, "the two files order their branches differently");
    assert_eq!(
        sorted(a.clone()),
        sorted(b.clone()),
        "the same lines on both"
    );
    for (m, text) in [("A", &a), ("B", &b)] {
        let meta = read(&format!("sync-merged-{}.meta.json", m.to_lowercase()));
        let leaf = meta
            .split("\"leaf\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect("pi's leaf");
        let line = text
            .lines()
            .find(|l| l.contains(&format!("\"id\":\"{leaf}\"")))
            .expect("the leaf's line");
        assert!(
            line.contains(&format!("answered on machine {m}")),
            "{m}: pi resumes at {line}"
        );
        assert_eq!(
            text.lines().last(),
            Some(line),
            "{m}: the leaf is the last line"
        );
    }
}

/// omp's title slot (the file's first line, rewritten in place by a rename) merges: both
/// machines rename and append; after syncs both files and the store start with the slot set
/// last (the latest `title_change` wins), hold the same lines, and a further round changes
/// nothing.
#[test]
fn omp_titles_merge_the_latest_wins() {
    use arbor_core::title::{serialize_title_slot, TitleSource};
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    let slot = |title: &str, at: &str| {
        String::from_utf8(
            serialize_title_slot(Some(title), Some(TitleSource::User), at).expect("slot"),
        )
        .expect("utf-8")
    };
    let dir = a.omp.agent_dir().join("sessions/--work-p--");
    std::fs::create_dir_all(&dir).expect("dir");
    let pa = dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl"));
    std::fs::write(
        &pa,
        format!(
            "{}{}\n{}\n",
            slot("first", "2026-01-01T00:00:00.000Z"),
            header(ID),
            entry("e1", None, "hello")
        ),
    )
    .expect("write");
    arbor_sync::push(&store, &a, &[]).expect("push a");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    let pb = b.omp.session_files().into_iter().next().expect("b's file");
    // A rename as omp does it: the slot rewritten in place, a title_change entry appended.
    let rename = |path: &Path, title: &str, at: &str, id: &str| {
        let text = std::fs::read_to_string(path).expect("read");
        let rest = &text[arbor_core::title::SESSION_TITLE_SLOT_BYTES..];
        let change = format!(
            r#"{{"type":"title_change","id":"{id}","parentId":"e1","timestamp":"{at}","title":"{title}","source":"user","previousTitle":"first"}}"#
        );
        std::fs::write(path, format!("{}{rest}{change}\n", slot(title, at))).expect("rename");
    };
    rename(&pb, "from b", "2026-01-01T00:00:01.000Z", "tb");
    append(&pb, &(entry("b1", Some("tb"), "more on b") + "\n"));
    rename(&pa, "from a", "2026-01-01T00:00:02.000Z", "ta");
    for (m, action) in [
        (&a, "push"),
        (&b, "pull"),
        (&b, "push"),
        (&a, "pull"),
        (&a, "push"),
    ] {
        let rows = if action == "push" {
            arbor_sync::push(&store, m, &[])
        } else {
            arbor_sync::pull(&store, m, &[], false)
        }
        .expect("sync");
        assert!(
            rows.iter().all(|r| !r.unresolved),
            "{} {action}: {rows:#?}",
            m.machine
        );
    }
    let want = slot("from a", "2026-01-01T00:00:02.000Z");
    let (ta, tb) = (
        std::fs::read_to_string(&pa).expect("a"),
        std::fs::read_to_string(&pb).expect("b"),
    );
    let shared = String::from_utf8(store.read_joined(ID, 0).expect("store")).expect("utf-8");
    for (side, text) in [("a", &ta), ("b", &tb), ("store", &shared)] {
        assert!(
            text.starts_with(&want),
            "{side} has the latest title:\n{text}"
        );
    }
    let sorted = |t: &str| {
        let mut v: Vec<&str> = t.lines().collect();
        v.sort_unstable();
        v.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(sorted(&ta), sorted(&tb));
    assert_eq!(sorted(&ta), sorted(&shared));
    assert_eq!(ta.lines().count(), 6, "slot, header, e1, ta, tb, b1");
    assert_eq!(
        store.list().expect("list")[0].meta.name.as_deref(),
        Some("from a")
    );
    for m in [&a, &b] {
        arbor_sync::pull(&store, m, &[], false).expect("pull");
        arbor_sync::push(&store, m, &[]).expect("push");
    }
    assert_eq!(std::fs::read_to_string(&pa).expect("a"), ta);
    assert_eq!(std::fs::read_to_string(&pb).expect("b"), tb);
    assert_eq!(
        String::from_utf8(store.read_joined(ID, 0).expect("store")).expect("utf-8"),
        shared
    );
}

/// Whether every entry of `path` comes after its parent (when the parent is in the file).
fn parents_first(path: &Path) -> bool {
    let mut seen = std::collections::HashSet::new();
    let all: std::collections::HashSet<String> = lines_of(path)
        .iter()
        .filter_map(|l| arbor_core::entry::extract(l.as_bytes()).id)
        .collect();
    lines_of(path).iter().all(|l| {
        let x = arbor_core::entry::extract(l.as_bytes());
        let ok = x
            .parent_id
            .as_ref()
            .is_none_or(|p| !all.contains(p) || seen.contains(p));
        if let Some(id) = x.id {
            seen.insert(id);
        }
        ok
    })
}

/// A file whose lines are not parents-first (a line pi wrote to the old file during a merge
/// copied after its child, which pi wrote to the new one; a repair; another writer) is not a
/// conflict: pushed, the store receives its lines parents-first, and the other machine,
/// which has new lines of its own, merges them (before the race's fix, b's pull reported
/// "names parent ..., which is on neither side before it" forever).
#[test]
fn a_child_before_its_parent_in_a_file_merges() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    let pa = session(&a, ID, &[("e1", None)]);
    arbor_sync::push(&store, &a, &[]).expect("push a");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    let pb = the_file(&b, ID);
    append(&pb, &(entry("b1", Some("e1"), "from b") + "\n"));
    // a's file: the child a2 before its parent a1.
    append(&pa, &(entry("a2", Some("a1"), "second") + "\n"));
    append(&pa, &(entry("a1", Some("e1"), "first") + "\n"));
    let rows = arbor_sync::push(&store, &a, &[]).expect("push a");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    let rows = arbor_sync::push(&store, &b, &[]).expect("push b");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    for m in [&a, &b] {
        let rows = arbor_sync::pull(&store, m, &[], false).expect("pull");
        assert!(!row(&rows, ID).unresolved, "{}: {rows:#?}", m.machine);
    }
    let ids = |p: &Path| {
        let mut v: Vec<String> = lines_of(p)
            .iter()
            .filter_map(|l| arbor_core::entry::extract(l.as_bytes()).id)
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&pa), ids(&pb));
    assert_eq!(ids(&pb).len(), 5, "{:?}", ids(&pb));
    assert!(parents_first(&pb), "b writes what it adds parents-first");
    // b's own leaf stays its last line.
    assert!(lines_of(&pb).last().expect("last").contains("\"b1\""));
}

/// A shared copy whose lines are not parents-first (written by an older arbor, or another
/// tool) merges too: the pull writes the entries it adds parents-first.
#[test]
fn a_pull_writes_what_it_adds_parents_first() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    session(&a, ID, &[("e1", None)]);
    arbor_sync::push(&store, &a, &[]).expect("push a");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    let pb = the_file(&b, ID);
    append(&pb, &(entry("b1", Some("e1"), "from b") + "\n"));
    {
        let mut w = store
            .writer(ID, Some(std::time::Duration::from_secs(5)))
            .expect("writer");
        let c = entry("s2", Some("s1"), "child");
        let p = entry("s1", Some("e1"), "parent");
        w.append(&[c.as_bytes(), p.as_bytes()]).expect("append");
    }
    let rows = arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    assert_eq!(row(&rows, ID).moved, 2, "{rows:#?}");
    assert!(parents_first(&pb), "{:#?}", lines_of(&pb));
    assert!(lines_of(&pb).last().expect("last").contains("\"b1\""));
}

/// A merge killed after its rename (or one whose old file pi still held open when it ended)
/// leaves the old file as `<session>.arbor-merge`, with a line pi wrote to it. It is no session
/// of its own (not listed; it goes with the session in `rm`), and the next sync copies its
/// line into the file and sends it, then removes it.
#[test]
fn a_merge_leftover_is_settled_by_the_next_sync() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let (a, b) = (machine(tmp.path(), "a"), machine(tmp.path(), "b"));
    let pa = session(&a, ID, &[("e1", None)]);
    arbor_sync::push(&store, &a, &[]).expect("push a");
    let before = std::fs::read_to_string(&pa).expect("read");
    // The merge's new file: a line from b inserted; the old file got pi's line a1.
    let side = arbor_store::backend::sync_support::merge_sidecar_path(&pa);
    std::fs::write(
        &side,
        before.clone() + &entry("a1", Some("e1"), "late") + "\n",
    )
    .expect("old");
    assert_eq!(a.pi.session_files(), vec![pa.clone()], "not a session");
    let items = arbor_store::belongings::belongings(&pa).items;
    assert!(items.contains(&side), "{items:?}");
    let rows = arbor_sync::push(&store, &a, &[]).expect("push a");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    assert!(!side.exists(), "settled");
    assert!(lines_of(&pa).last().expect("last").contains("\"a1\""));
    let shared = store.read(ID, 0).expect("read");
    assert_eq!(shared.len(), 3, "the line reached the store");
    arbor_sync::pull(&store, &b, &[], false).expect("pull b");
    assert_eq!(lines_of(&the_file(&b, ID)), lines_of(&pa));
}

/// A pull writes a new session through the one writer: under the writer lock, so an arbor
/// writer holding the lock of that file (creating the same session here) is excluded and the
/// row says so; the next pull, the lock released, writes it. Before, the pull wrote the file
/// without the lock (`file::write_new`).
#[test]
fn a_pull_never_writes_a_new_session_under_another_writers_lock() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let a = machine(tmp.path(), "a");
    let b = machine(tmp.path(), "b");
    let here = session(&a, ID, &[("e1", None), ("e2", Some("e1"))]);
    arbor_sync::push(&store, &a, &[]).expect("push");
    let there =
        b.pi.agent_dir()
            .join("sessions/--work-p--")
            .join(here.file_name().expect("name"));
    std::fs::create_dir_all(there.parent().expect("dir")).expect("dir");
    let held = arbor_store::lock::WriterLock::acquire(&there, None).expect("lock");
    let rows = arbor_sync::pull(&store, &b, &[], false).expect("pull");
    let r = row(&rows, ID);
    assert!(r.unresolved, "{rows:#?}");
    assert!(
        r.note.as_deref().is_some_and(|n| n.contains("not written")),
        "{rows:#?}"
    );
    assert!(!there.exists(), "written under another writer's lock");
    drop(held);
    let rows = arbor_sync::pull(&store, &b, &[], false).expect("pull");
    assert!(!row(&rows, ID).unresolved, "{rows:#?}");
    assert_eq!(
        std::fs::read(&there).expect("pulled"),
        std::fs::read(&here).expect("here")
    );
}
