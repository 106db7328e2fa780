//! The catalog refreshed incrementally must always hold exactly what a catalog built from
//! scratch holds, and agree with pi's listing rules and arbor-core's tree.
use arbor_index::{Catalog, RefreshOptions};
use proptest::prelude::*;
use rusqlite::types::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

const PI_HEADER: &str = r#"{"type":"session","version":3,"id":"0b7e2f6a-1111-4222-8333-444455556666","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/work/p"}"#;
const OMP_HEADER: &str = r#"{"type":"session","version":3,"id":"019aa39d-37c8-70ac-a5bf-6dda1d5af56b","timestamp":"2025-01-02T00:00:00.000Z","cwd":"/work/q","title":"old header title"}"#;
const V1_HEADER: &str = r#"{"type":"session","id":"v1-session","timestamp":"2025-01-03T00:00:00.000Z","cwd":"/work/r"}"#;

fn slot(title: &str) -> String {
    let mut s = format!(
        r#"{{"type":"title","title":"{title}","source":"user","updatedAt":"2025-01-02T00:00:00.000Z","pad":""#
    );
    while s.len() < 253 {
        s.push(' ');
    }
    s.push_str("\"}\n");
    assert_eq!(s.len(), 256);
    s
}

const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
];

/// A session file the test appends to, with the ids it wrote so far.
struct Sess {
    path: PathBuf,
    ids: Vec<String>,
    leaf: Option<String>,
    next: u32,
    v1: bool,
}

impl Sess {
    fn line(&mut self, parent: Option<String>, body: &str, dup: bool) -> String {
        self.next += 1;
        let id = if dup && !self.ids.is_empty() {
            self.ids[self.next as usize % self.ids.len()].clone()
        } else {
            format!("e{:07x}", self.next * 7919)
        };
        let ts = format!(
            "2025-02-01T00:{:02}:{:02}.000Z",
            (self.next / 60) % 60,
            self.next % 60
        );
        let l = if self.v1 {
            format!(r#"{{"type":"message","timestamp":"{ts}",{body}}}"#)
        } else {
            let p = parent
                .map(|p| format!("\"{p}\""))
                .unwrap_or_else(|| "null".into());
            format!(r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}",{body}}}"#)
        };
        self.ids.push(id.clone());
        self.leaf = Some(id);
        l
    }
}

fn message(role: &str, k: usize) -> String {
    let text = format!(
        "{} {} {}",
        WORDS[k % 10],
        WORDS[(k / 10) % 10],
        WORDS[(k * 7) % 10]
    );
    match role {
        "user" => format!(
            r#""message":{{"role":"user","content":"{text}","timestamp":{}}}"#,
            1_738_000_000_000u64 + k as u64
        ),
        "assistant" => format!(
            r#""message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"hmm {text}"}},{{"type":"text","text":"{text}"}}],"provider":"p{}","model":"m","usage":{{"input":3,"output":4,"cacheRead":0,"cacheWrite":1,"cost":{{"total":0.25}}}}}}"#,
            k % 2
        ),
        _ => format!(
            r#""message":{{"role":"toolResult","toolName":"bash","content":[{{"type":"text","text":"out {text}"}}]}}"#
        ),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Linear(usize, usize),
    Branch(usize, usize),
    Label(usize, usize, bool),
    Name(usize, usize),
    Torn(usize),
    Complete(usize),
    Unterminated(usize),
    DupId(usize),
    RewriteSameSize(usize),
    Truncate(usize, usize),
    Delete(usize),
    SlotRename(usize, usize),
    Junk(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 1..6usize).prop_map(|(f, n)| Op::Linear(f, n)),
        2 => (0..3usize, 0..100usize).prop_map(|(f, k)| Op::Branch(f, k)),
        2 => (0..3usize, 0..100usize, any::<bool>()).prop_map(|(f, k, c)| Op::Label(f, k, c)),
        1 => (0..3usize, 0..100usize).prop_map(|(f, k)| Op::Name(f, k)),
        1 => (0..3usize).prop_map(Op::Torn),
        1 => (0..3usize).prop_map(Op::Complete),
        1 => (0..3usize).prop_map(Op::Unterminated),
        1 => (0..3usize).prop_map(Op::DupId),
        1 => (0..3usize).prop_map(Op::RewriteSameSize),
        1 => (0..3usize, 0..100usize).prop_map(|(f, k)| Op::Truncate(f, k)),
        1 => (0..3usize).prop_map(Op::Delete),
        1 => (0..3usize, 0..100usize).prop_map(|(f, k)| Op::SlotRename(f, k)),
        1 => (0..3usize).prop_map(Op::Junk),
    ]
}

struct World {
    dir: tempfile::TempDir,
    sessions: Vec<Sess>,
    step: i64,
    torn: Vec<Option<String>>,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            "2025-01-01T00-00-00-000Z_a.jsonl",
            "2025-01-02T00-00-00-000Z_b.jsonl",
            "2025-01-03T00-00-00-000Z_c.jsonl",
        ];
        let mut w = World {
            sessions: Vec::new(),
            dir,
            step: 0,
            torn: vec![None, None, None],
        };
        for (i, n) in names.iter().enumerate() {
            let s = Sess {
                path: w.dir.path().join(n),
                ids: Vec::new(),
                leaf: None,
                next: 0,
                v1: i == 2,
            };
            w.sessions.push(s);
            w.create(i);
        }
        w
    }

    fn create(&mut self, f: usize) {
        let s = &mut self.sessions[f];
        s.ids.clear();
        s.leaf = None;
        let text = match f {
            0 => format!("{PI_HEADER}\n"),
            1 => format!("{}{OMP_HEADER}\n", slot("first title")),
            _ => format!("{V1_HEADER}\n"),
        };
        std::fs::write(&s.path, text).unwrap();
        self.torn[f] = None;
    }

    fn append(&mut self, f: usize, text: &str) {
        if !self.sessions[f].path.exists() {
            self.create(f);
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.sessions[f].path)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    fn touch(&mut self) {
        self.step += 1;
        let t = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(1_750_000_000 + self.step as u64 * 10);
        for s in &self.sessions {
            if let Ok(f) = std::fs::OpenOptions::new().append(true).open(&s.path) {
                // Only files whose content changed need a new mtime, but a new mtime on every
                // file also exercises the unchanged-size path.
                let _ = f.set_modified(t);
            }
        }
    }

    /// A new mtime for file `f` only.
    fn touch_file(&mut self, f: usize) {
        self.step += 1;
        let t = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(1_750_000_000 + self.step as u64 * 10);
        if let Ok(file) = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.sessions[f].path)
        {
            file.set_modified(t).unwrap();
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Linear(f, n) => {
                let mut out = String::new();
                for k in 0..n {
                    let role = ["user", "assistant", "tool"][k % 3];
                    let s = &mut self.sessions[f];
                    let leaf = s.leaf.clone();
                    let body = message(role, s.next as usize + k);
                    out.push_str(&s.line(leaf, &body, false));
                    out.push('\n');
                }
                self.append(f, &out);
            }
            Op::Branch(f, k) => {
                let s = &mut self.sessions[f];
                let parent = if s.ids.is_empty() {
                    None
                } else {
                    Some(s.ids[k % s.ids.len()].clone())
                };
                let body = message("user", k);
                let l = s.line(parent, &body, false) + "\n";
                self.append(f, &l);
            }
            Op::Label(f, k, clear) => {
                let s = &mut self.sessions[f];
                if s.ids.is_empty() || s.v1 {
                    return;
                }
                let target = s.ids[k % s.ids.len()].clone();
                s.next += 1;
                let id = format!("l{:07x}", s.next);
                let label = if clear {
                    String::new()
                } else {
                    format!(",\"label\":\"tag {}\"", WORDS[k % 10])
                };
                let l = format!(
                    r#"{{"type":"label","id":"{id}","parentId":{},"timestamp":"2025-03-01T00:00:00.000Z","targetId":"{target}"{label}}}"#,
                    s.leaf
                        .as_ref()
                        .map(|p| format!("\"{p}\""))
                        .unwrap_or("null".into())
                );
                s.ids.push(id.clone());
                s.leaf = Some(id);
                self.append(f, &(l + "\n"));
            }
            Op::Name(f, k) => {
                let s = &mut self.sessions[f];
                s.next += 1;
                let id = format!("n{:07x}", s.next);
                let l = format!(
                    r#"{{"type":"session_info","id":"{id}","parentId":{},"timestamp":"2025-03-02T00:00:00.000Z","name":"  name {} "}}"#,
                    s.leaf
                        .as_ref()
                        .map(|p| format!("\"{p}\""))
                        .unwrap_or("null".into()),
                    WORDS[k % 10]
                );
                s.ids.push(id.clone());
                s.leaf = Some(id);
                self.append(f, &(l + "\n"));
            }
            Op::Torn(f) => {
                if self.torn[f].is_some() {
                    return;
                }
                let s = &mut self.sessions[f];
                let leaf = s.leaf.clone();
                let l = s.line(leaf, &message("user", 3), false) + "\n";
                let cut = l.len() / 2;
                self.torn[f] = Some(l[cut..].to_string());
                let head = l[..cut].to_string();
                self.append(f, &head);
            }
            Op::Complete(f) => {
                if let Some(rest) = self.torn[f].take() {
                    self.append(f, &rest);
                }
            }
            Op::Unterminated(f) => {
                if self.torn[f].is_some() {
                    return;
                }
                let s = &mut self.sessions[f];
                let leaf = s.leaf.clone();
                let l = s.line(leaf, &message("assistant", 5), false);
                self.append(f, &l);
                // The next append starts a new line, as arbor's writer does.
                self.torn[f] = Some("\n".into());
            }
            Op::DupId(f) => {
                let s = &mut self.sessions[f];
                let leaf = s.leaf.clone();
                let l = s.line(leaf, &message("user", 9), true) + "\n";
                self.append(f, &l);
            }
            Op::RewriteSameSize(f) => {
                let p = &self.sessions[f].path;
                if let Ok(mut b) = std::fs::read(p) {
                    // Change a letter of the last complete text: same size, other content.
                    if let Some(i) = b.iter().rposition(|&c| c == b'a') {
                        b[i] = b'o';
                        std::fs::write(p, b).unwrap();
                    }
                }
            }
            Op::Truncate(f, k) => {
                let p = self.sessions[f].path.clone();
                if let Ok(b) = std::fs::read(&p) {
                    let ends: Vec<usize> = b
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| c == b'\n')
                        .map(|(i, _)| i + 1)
                        .collect();
                    if ends.len() > 1 {
                        let keep = ends[1 + k % (ends.len() - 1)];
                        std::fs::write(&p, &b[..keep]).unwrap();
                        self.torn[f] = None;
                        // The test's view of ids is now stale; new ids stay unique anyway.
                        let s = &mut self.sessions[f];
                        s.leaf = None;
                        s.ids.clear();
                    }
                }
            }
            Op::Delete(f) => {
                let _ = std::fs::remove_file(&self.sessions[f].path);
                self.torn[f] = None;
            }
            Op::SlotRename(f, k) => {
                if f != 1 {
                    return;
                }
                let p = &self.sessions[f].path;
                if let Ok(mut b) = std::fs::read(p) {
                    if b.len() >= 256 && b.starts_with(b"{\"type\":\"title\"") {
                        b[..256].copy_from_slice(
                            slot(&format!("renamed {}", WORDS[k % 10])).as_bytes(),
                        );
                        std::fs::write(p, b).unwrap();
                    }
                }
            }
            Op::Junk(f) => self.append(f, "this is not json\n\n"),
        }
    }
}

fn dump(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("INSERT INTO fts(fts) VALUES('integrity-check')")
        .expect("FTS index consistent with docs");
    let mut out = Vec::new();
    let queries = [
        "SELECT * FROM files ORDER BY path",
        "SELECT f.path, t.data FROM trees t JOIN files f USING(fid) ORDER BY f.path",
        "SELECT f.path, l.target, l.label FROM labels l JOIN files f USING(fid) ORDER BY f.path, l.target",
        "SELECT f.path, d.seq, d.eid, d.kind, d.ts, d.ts_ms, d.text FROM docs d JOIN files f USING(fid) ORDER BY f.path, d.seq, d.kind, d.text",
    ];
    for q in queries {
        let mut st = c.prepare(q).unwrap();
        let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = st.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let mut line = Vec::new();
            for (i, n) in names.iter().enumerate() {
                if n == "fid" || n == "gen" {
                    continue;
                }
                let v: Value = r.get(i).unwrap();
                line.push(format!("{n}={v:?}"));
            }
            out.push(line.join(" "));
        }
    }
    out
}

fn check(world: &World, inc: &mut Catalog, texts: bool) {
    let dir = world.dir.path().to_path_buf();
    // A listing alone (texts not read unless they are current), then with the texts.
    let (listed, _) = inc
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_texts(texts),
            &mut |_| {},
        )
        .unwrap();
    let (none, _) = inc
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default()
                .with_texts(true)
                .with_listing(false),
            &mut |_| {},
        )
        .unwrap();
    assert!(none.is_empty());
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh_db = fresh_dir.path().join("fresh.db");
    let mut fresh = Catalog::open(&fresh_db).unwrap();
    fresh
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default().with_threads(1).with_texts(true),
            &mut |_| {},
        )
        .unwrap();
    drop(fresh);
    assert_eq!(
        dump(inc.path()),
        dump(&fresh_db),
        "incremental catalog differs from a fresh one"
    );
    // The listing equals pi's rules computed straight from each file.
    let mut want = Vec::new();
    for s in &world.sessions {
        if let Ok(m) = std::fs::metadata(&s.path) {
            let ms = arbor_index::Stat::from_meta(&m).mtime_ms();
            if let Some(i) = arbor_store::info::session_info_streaming(&s.path, ms).unwrap() {
                want.push(i);
            }
        }
    }
    let mut got: Vec<_> = listed.iter().map(|l| l.info.clone()).collect();
    for (g, l) in got.iter_mut().zip(&listed) {
        g.all_messages_text = inc.all_messages_text(&l.file).unwrap();
    }
    got.sort_by(|a, b| a.path.cmp(&b.path));
    want.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    // On-branch flags equal arbor-core's path from the leaf (v2/v3 files).
    let c = rusqlite::Connection::open(inc.path()).unwrap();
    for s in world.sessions.iter().filter(|s| !s.v1) {
        let Ok(doc) = arbor_store::load_doc(&s.path) else {
            continue;
        };
        let mut on: Vec<i64> = Vec::new();
        if let Some(leaf) = doc.index().leaf {
            let p = doc.index().path(&doc, leaf);
            on = p
                .entries
                .iter()
                .map(|&i| doc.entries()[i].line_no as i64)
                .collect();
            on.sort();
        }
        let key = arbor_index::dir_key(s.path.parent().unwrap())
            + "/"
            + &s.path.file_name().unwrap().to_string_lossy();
        let data: Vec<u8> = c
            .query_row(
                "SELECT t.data FROM trees t JOIN files f USING(fid) WHERE f.path=?1",
                [key],
                |r| r.get(0),
            )
            .unwrap();
        let tree = arbor_index::TreeCache::decode(&data).unwrap();
        let got: Vec<i64> = (0..tree.len())
            .filter(|&i| tree.on_path[i])
            .map(|i| tree.seqs[i])
            .collect();
        assert_eq!(got, on, "on-branch entries of {}", s.path.display());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn incremental_equals_fresh(ops in proptest::collection::vec(op(), 1..25)) {
        let mut world = World::new();
        let cat_dir = tempfile::tempdir().unwrap();
        let mut inc = Catalog::open(&cat_dir.path().join("catalog.db")).unwrap();
        check(&world, &mut inc, false);
        for (i, o) in ops.iter().enumerate() {
            world.apply(o);
            world.touch();
            if i % 2 == 1 || i + 1 == ops.len() {
                check(&world, &mut inc, i % 4 == 1);
            }
        }
    }
}

fn refresh(cat: &mut Catalog, dir: &Path) -> arbor_index::RefreshStats {
    cat.refresh_dirs(&[dir.to_path_buf()], RefreshOptions::default(), &mut |_| {})
        .unwrap()
        .1
}

#[test]
fn appended_files_are_read_from_the_offset_and_rewritten_ones_again() {
    let mut w = World::new();
    let cat_dir = tempfile::tempdir().unwrap();
    let mut cat = Catalog::open(&cat_dir.path().join("c.db")).unwrap();
    let dir = w.dir.path().to_path_buf();
    let s = refresh(&mut cat, &dir);
    assert_eq!((s.files, s.full, s.appended), (3, 3, 0));
    let s = refresh(&mut cat, &dir);
    assert_eq!(
        (s.unchanged, s.full, s.appended, s.bytes_read),
        (3, 0, 0, 0)
    );
    let before = std::fs::metadata(&w.sessions[0].path).unwrap().len();
    w.apply(&Op::Linear(0, 3));
    w.touch_file(0);
    let s = refresh(&mut cat, &dir);
    let after = std::fs::metadata(&w.sessions[0].path).unwrap().len();
    assert_eq!(
        (s.full, s.appended, s.bytes_read),
        (0, 1, after - before),
        "only the appended bytes are read"
    );
    // omp renames in place (the 256-byte slot): not a rewrite of the indexed prefix
    w.apply(&Op::Linear(1, 2));
    w.touch_file(1);
    refresh(&mut cat, &dir);
    w.apply(&Op::SlotRename(1, 3));
    w.touch_file(1);
    let s = refresh(&mut cat, &dir);
    assert_eq!((s.full, s.appended, s.bytes_read), (0, 1, 0));
    let (listed, _) = cat
        .refresh_dirs(
            std::slice::from_ref(&dir),
            RefreshOptions::default(),
            &mut |_| {},
        )
        .unwrap();
    assert!(
        listed
            .iter()
            .any(|l| l.title.as_deref() == Some("renamed delta")),
        "{listed:?}"
    );
    // same size, other bytes: indexed again
    w.apply(&Op::RewriteSameSize(0));
    w.touch_file(0);
    let s = refresh(&mut cat, &dir);
    assert_eq!((s.full, s.appended), (1, 0));
    // shrunk: indexed again; deleted: dropped
    w.apply(&Op::Truncate(0, 0));
    w.touch_file(0);
    assert_eq!(refresh(&mut cat, &dir).full, 1);
    w.apply(&Op::Delete(2));
    w.touch_file(2);
    assert_eq!(refresh(&mut cat, &dir).removed, 1);
    // a torn line is not indexed until it is complete
    w.apply(&Op::Torn(0));
    w.touch_file(0);
    refresh(&mut cat, &dir);
    w.apply(&Op::Complete(0));
    w.touch_file(0);
    let s = refresh(&mut cat, &dir);
    assert_eq!((s.full, s.appended), (0, 1));
    check(&w, &mut cat, true);
}

#[test]
fn a_damaged_catalog_is_set_aside_and_rebuilt() {
    let w = World::new();
    let cat_dir = tempfile::tempdir().unwrap();
    let db = cat_dir.path().join("c.db");
    {
        let mut cat = Catalog::open(&db).unwrap();
        refresh(&mut cat, w.dir.path());
        assert!(cat.file_count().unwrap() == 3);
    }
    // Overwrite pages in the middle of the file with garbage.
    let mut bytes = std::fs::read(&db).unwrap();
    let _ = std::fs::remove_file(cat_dir.path().join("c.db-wal"));
    let _ = std::fs::remove_file(cat_dir.path().join("c.db-shm"));
    for b in bytes.iter_mut().skip(100).take(8192) {
        *b = 0x5a;
    }
    std::fs::write(&db, &bytes).unwrap();
    let mut cat = Catalog::open(&db).unwrap();
    let aside = cat.report.set_aside.clone().expect("set aside");
    assert!(aside.exists());
    assert_eq!(refresh(&mut cat, w.dir.path()).full, 3);
    assert_eq!(cat.file_count().unwrap(), 3);
    // Not a database at all: nothing says it was arbor's (it is not at arbor's own place),
    // so it is refused and left as it is (issue 10, item 9; catalog_safety.rs has the rest).
    drop(cat);
    let text = b"definitely not sqlite, just text that is long enough to be a header..............................";
    std::fs::write(&db, text).unwrap();
    let _ = std::fs::remove_file(cat_dir.path().join("c.db-wal"));
    let _ = std::fs::remove_file(cat_dir.path().join("c.db-shm"));
    assert!(matches!(
        Catalog::open(&db),
        Err(arbor_index::IndexError::NotACatalog { .. })
    ));
    assert_eq!(std::fs::read(&db).unwrap(), text);
}

/// The texts-only refresh (a search's freshness check) compares the directory's names with
/// the catalog's rows in name order: a new name before, between and after the indexed ones, a
/// deleted one, a changed one, and unchanged ones are each told apart, and the catalog ends
/// as one built from scratch.
#[test]
fn a_texts_only_refresh_finds_every_kind_of_change_in_name_order() {
    use arbor_testkit::catalog::session;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    for n in ["b", "d", "f", "h"] {
        session(&d, n, &format!("text of {n}"));
    }
    let db_dir = tempfile::tempdir().unwrap();
    let mut inc = Catalog::open(&db_dir.path().join("inc.db")).unwrap();
    let texts = RefreshOptions::default()
        .with_texts(true)
        .with_listing(false);
    let refresh = |c: &mut Catalog| {
        c.refresh_dirs(std::slice::from_ref(&d), texts, &mut |_| {})
            .unwrap()
            .1
    };
    let s = refresh(&mut inc);
    assert_eq!((s.files, s.unchanged, s.full, s.removed), (4, 0, 4, 0));
    let s = refresh(&mut inc);
    assert_eq!((s.files, s.unchanged, s.full, s.removed), (4, 4, 0, 0));
    // New before ("a"), between ("c", "e") and after ("z"); "d" deleted; "f" rewritten.
    for n in ["a", "c", "e", "z"] {
        session(&d, n, &format!("text of {n}"));
    }
    std::fs::remove_file(d.join("d.jsonl")).unwrap();
    session(&d, "f", "text of f, rewritten longer");
    let s = refresh(&mut inc);
    assert_eq!(
        (s.files, s.unchanged, s.full, s.removed),
        (7, 2, 5, 1),
        "{s:?}"
    );
    let s = refresh(&mut inc);
    assert_eq!((s.files, s.unchanged, s.full, s.removed), (7, 7, 0, 0));
    let path = inc.path().to_path_buf();
    drop(inc);
    let mut fresh = Catalog::open(&db_dir.path().join("fresh.db")).unwrap();
    refresh(&mut fresh);
    let fresh_path = fresh.path().to_path_buf();
    drop(fresh);
    assert_eq!(dump(&path), dump(&fresh_path));
}
