//! Tree-aware merge (issue 23, item 3), as a property: two and three machines (agent
//! directories in a temporary directory) append pi-shaped entries to one session (each the
//! child of the machine's current leaf, the file's last line, as pi resumes; sometimes a
//! branch from an older entry), and push, pull or both in random order through one shared
//! store. Checked on every pull: a machine's last line stays its own unless the pulled entries
//! continue from it. Checked at the end, after full rounds of syncs: every side (each file,
//! the store) holds every entry exactly once with its bytes and parent, parents before
//! children everywhere, and a further round changes no byte anywhere. On SQLite, and on
//! PostgreSQL (a throwaway server from arbor-testkit; skipped visibly without one).
use arbor_db::{PgStore, SqliteStore};
use arbor_store::backend::files::FileStore;
use arbor_store::backend::SessionStore;
use arbor_sync::Local;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

const ID: &str = "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

#[derive(Debug, Clone)]
enum Op {
    /// Machine appends an entry: the child of its leaf, or (`Some(k)`) of its `k`-th entry
    /// from the end.
    Append(usize, Option<usize>),
    Push(usize),
    Pull(usize),
    /// Pull, then push.
    Sync(usize),
}

fn op(machines: usize) -> impl Strategy<Value = Op> {
    let m = 0..machines;
    prop_oneof![
        4 => (m.clone(), proptest::option::weighted(0.2, 1usize..4)).prop_map(|(m, b)| Op::Append(m, b)),
        2 => m.clone().prop_map(Op::Push),
        2 => m.clone().prop_map(Op::Pull),
        1 => m.prop_map(Op::Sync),
    ]
}

fn machine(root: &Path, n: usize) -> Local {
    let dir = root.join(format!("m{n}"));
    std::fs::create_dir_all(dir.join("sessions")).expect("dirs");
    Local {
        pi: FileStore::new(&dir),
        omp: FileStore::new(&dir.join("omp")),
        map_cwd: Vec::new(),
        cursor_file: dir.join("arbor/sync.tsv"),
        machine: format!("m{n}"),
        user: None,
    }
}

fn file_of(m: &Local) -> Option<PathBuf> {
    m.pi.session_files().into_iter().next()
}

struct Line {
    id: Option<String>,
    parent: Option<String>,
    text: String,
}

fn parse(text: &str) -> Line {
    let x = arbor_core::entry::extract(text.as_bytes());
    Line {
        id: x.id,
        parent: x.parent_id,
        text: text.to_string(),
    }
}

fn lines_of(path: &Path) -> Vec<Line> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(parse)
        .collect()
}

/// Entry id → (bytes, parent) of a side; panics on an id held twice or a parent after its
/// child (or nowhere).
fn tree_of(lines: &[Line], side: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut seen = HashSet::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(id) = &l.id else { continue };
        if let Some(p) = &l.parent {
            assert!(
                seen.contains(p),
                "{side}: line {} ({id}) comes before its parent {p}",
                i + 1
            );
        }
        assert!(seen.insert(id.clone()), "{side}: {id} twice");
        out.insert(id.clone(), l.text.clone());
    }
    out
}

fn append_entry(m: &Local, n: usize, count: &mut usize, branch: Option<usize>) -> String {
    let path = file_of(m).expect("a session file");
    let lines = lines_of(&path);
    let entries: Vec<&String> = lines
        .iter()
        .filter(|l| l.id.is_some() && !l.text.contains("\"type\":\"session\""))
        .filter_map(|l| l.id.as_ref())
        .collect();
    // pi resumes at the last line; a branch starts from an older entry.
    let parent = match branch {
        Some(k) if k < entries.len() => Some(entries[entries.len() - 1 - k].clone()),
        _ => lines
            .last()
            .and_then(|l| l.id.clone())
            .filter(|_| !entries.is_empty()),
    };
    *count += 1;
    let id = format!("m{n}e{count:04}");
    let parent = parent.map_or("null".into(), |p| format!("\"{p}\""));
    let line = format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"from m{n} #{count}","timestamp":1}}}}"#
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    writeln!(f, "{line}").expect("append");
    id
}

/// A pull on machine `m`, checking that its last line stays its own unless the pulled
/// entries continue from it.
fn pull(store: &dyn SessionStore, m: &Local) {
    let before = file_of(m).map(|p| lines_of(&p));
    let rows = arbor_sync::pull(store, m, &[], false).expect("pull");
    assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
    let (Some(before), Some(path)) = (before, file_of(m)) else {
        return;
    };
    let after = lines_of(&path);
    let (Some(old_leaf), Some(new_leaf)) = (before.last(), after.last()) else {
        return;
    };
    if old_leaf.text != new_leaf.text {
        let known: HashSet<&str> = before.iter().map(|l| l.text.as_str()).collect();
        let continued = after.iter().any(|l| {
            !known.contains(l.text.as_str()) && l.parent.is_some() && l.parent == old_leaf.id
        });
        assert!(
            continued,
            "{}: the last line moved from {:?} to {:?} without the pulled entries continuing it",
            m.machine, old_leaf.id, new_leaf.id
        );
    }
}

fn push(store: &dyn SessionStore, m: &Local) {
    let rows = arbor_sync::push(store, m, &[]).expect("push");
    assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
}

fn snapshot(store: &dyn SessionStore, ms: &[Local]) -> (Vec<u8>, Vec<Vec<u8>>) {
    (
        store.read_joined(ID, 0).expect("store"),
        ms.iter()
            .map(|m| std::fs::read(file_of(m).expect("file")).expect("read"))
            .collect(),
    )
}

fn run(store: &dyn SessionStore, root: &Path, machines: usize, ops: &[Op]) {
    let ms: Vec<Local> = (0..machines).map(|n| machine(root, n)).collect();
    // Machine 0 starts the session (a header and one entry) and shares it.
    let dir = ms[0].pi.agent_dir().join("sessions/--work-p--");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl")),
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{ID}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work/p\"}}\n{{\"type\":\"message\",\"id\":\"root\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.500Z\",\"message\":{{\"role\":\"user\",\"content\":\"start\",\"timestamp\":1}}}}\n"
        ),
    )
    .expect("session");
    push(store, &ms[0]);
    for m in &ms[1..] {
        pull(store, m);
    }
    let mut counts = vec![0usize; machines];
    let mut appended = vec![ID.to_string(), "root".to_string()];
    for o in ops {
        match *o {
            Op::Append(n, b) => appended.push(append_entry(&ms[n], n, &mut counts[n], b)),
            Op::Push(n) => push(store, &ms[n]),
            Op::Pull(n) => pull(store, &ms[n]),
            Op::Sync(n) => {
                pull(store, &ms[n]);
                push(store, &ms[n]);
            }
        }
    }
    // Full rounds: everything everywhere.
    for _ in 0..2 {
        for m in &ms {
            pull(store, m);
            push(store, m);
        }
    }
    let shared: Vec<Line> = store
        .read(ID, 0)
        .expect("store")
        .into_iter()
        .map(|l| parse(&String::from_utf8(l).expect("utf-8")))
        .collect();
    let tree = tree_of(&shared, "the store");
    let mut want = appended.clone();
    want.sort();
    assert_eq!(
        tree.keys().cloned().collect::<Vec<_>>(),
        want,
        "nothing lost"
    );
    for m in &ms {
        let here = tree_of(&lines_of(&file_of(m).expect("file")), &m.machine);
        assert_eq!(here, tree, "{} holds the store's tree", m.machine);
    }
    // Nothing new: another round changes no byte anywhere.
    let before = snapshot(store, &ms);
    for m in &ms {
        pull(store, m);
        push(store, m);
    }
    assert!(
        before == snapshot(store, &ms),
        "a round with nothing new changed bytes"
    );
}

fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(40))]
    #[test]
    fn two_machines_merge_on_sqlite(ops in proptest::collection::vec(op(2), 1..30)) {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
        run(&store, tmp.path(), 2, &ops);
    }

    #[test]
    fn three_machines_merge_on_sqlite(ops in proptest::collection::vec(op(3), 1..40)) {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
        run(&store, tmp.path(), 3, &ops);
    }
}

/// The PostgreSQL server of this test binary (started once), or why there is none.
fn pg() -> Option<&'static arbor_testkit::pg::TestServer> {
    static SERVER: std::sync::OnceLock<Result<arbor_testkit::pg::TestServer, String>> =
        std::sync::OnceLock::new();
    match SERVER.get_or_init(arbor_testkit::pg::TestServer::start) {
        Ok(s) => Some(s),
        Err(e) => {
            arbor_testkit::skip::skip(&format!("no PostgreSQL server: {e}"));
            None
        }
    }
}

proptest! {
    #![proptest_config(cases(12))]
    #[test]
    fn two_and_three_machines_merge_on_postgres(
        three in any::<bool>(),
        ops in proptest::collection::vec(op(3), 1..30),
    ) {
        let Some(server) = pg() else { return Ok(()) };
        let machines = if three { 3 } else { 2 };
        let ops: Vec<Op> = ops
            .into_iter()
            .map(|o| match o {
                Op::Append(n, b) => Op::Append(n % machines, b),
                Op::Push(n) => Op::Push(n % machines),
                Op::Pull(n) => Op::Pull(n % machines),
                Op::Sync(n) => Op::Sync(n % machines),
            })
            .collect();
        let db = server.unique_database("arbor_merge").expect("database");
        let store = PgStore::connect(&server.url_for(&db)).expect("connect");
        let tmp = tempfile::tempdir().expect("tmp");
        run(&store, tmp.path(), machines, &ops);
    }
}

/// A merge on a file system without hard links (exFAT through FUSE, arbor-testkit's
/// `no_links`; root only, skipped visibly elsewhere): a pull that inserts the shared entries
/// before this machine's leaf rewrites the file without a `.arbor-merge` sidecar (the old file
/// is held open across the rename instead), says so in the row, and the sessions end the same
/// on both machines and the store, as on any file system. Before, the rewrite refused
/// ("cannot keep the old file as …: Operation not permitted") and such a disk could not merge.
#[test]
fn a_merge_on_a_file_system_without_hard_links() {
    let fs = match arbor_testkit::no_links::mount() {
        Ok(fs) => fs,
        Err(why) => return arbor_testkit::skip::skip(&why),
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    // Both machines' agent directories on exFAT; both append, one merges, then full rounds.
    let ops = [
        Op::Append(0, None),
        Op::Append(1, None),
        Op::Push(1),
        Op::Pull(0),
        Op::Append(0, None),
        Op::Sync(1),
        Op::Sync(0),
    ];
    run(&store, fs.path(), 2, &ops);
    // Once more, looking at the merge's row.
    let ms: Vec<Local> = (0..2).map(|n| machine(fs.path(), n)).collect();
    let mut count = 100;
    append_entry(&ms[0], 0, &mut count, None);
    let theirs = append_entry(&ms[1], 1, &mut count, None);
    push(&store, &ms[1]);
    let rows = arbor_sync::pull(&store, &ms[0], &[], false).expect("pull");
    let [row] = rows.as_slice() else {
        panic!("{rows:#?}")
    };
    assert!(!row.unresolved && row.moved == 1, "{row:#?}");
    let note = row.note.as_deref().unwrap_or_default();
    assert!(note.contains("merged without a sidecar"), "{row:#?}");
    let path = file_of(&ms[0]).expect("file");
    let lines = lines_of(&path);
    assert_eq!(lines[lines.len() - 2].id.as_deref(), Some(theirs.as_str()));
    assert!(!arbor_store::backend::sync_support::merge_sidecar_path(&path).exists());
}
