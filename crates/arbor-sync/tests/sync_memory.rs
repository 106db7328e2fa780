//! What a sync holds in memory, counted by this test binary's allocator (the heap bytes
//! allocated at once, at their peak): a pull that meets a conflict on a large session (the
//! cursor no longer holds, so the copies are compared whole) must not hold the shared copy
//! whole beside the local file. Before, `compare` read the shared copy whole
//! (`SessionStore::read`: one buffer, then every line copied out of it), about three times
//! the session at the peak; now the shared lines that match the local ones are only counted
//! as they stream in (`compare::WholeCompare`), and the peak is the local file's lines (read
//! whole to be merged into) and the tail after the agreed prefix.
use arbor_db::SqliteStore;
use arbor_store::backend::files::FileStore;
use arbor_sync::{Local, State};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes allocated now and at their peak.
struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(p, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let q = unsafe { System.realloc(p, layout, new) };
        if !q.is_null() {
            if new >= layout.size() {
                let now =
                    NOW.fetch_add(new - layout.size(), Ordering::Relaxed) + new - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(layout.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const ID: &str = "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

#[test]
fn a_conflict_on_a_large_session_does_not_hold_the_shared_copy_whole() {
    let tmp = tempfile::tempdir().expect("tmp");
    let agent = tmp.path().join("agent");
    let dir = agent.join("sessions/--work-p--");
    std::fs::create_dir_all(&dir).expect("dir");
    // About 16 MB: a header and 16,000 entries of 1 KB, each the child of the one before.
    let mut text = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{ID}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work/p\"}}\n"
    );
    let filler = "x".repeat(1000);
    for i in 0..16_000 {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"e{:05}\"", i - 1)
        };
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{i:05}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{filler}\",\"timestamp\":1}}}}\n"
        ));
    }
    let size = text.len();
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl"));
    std::fs::write(&path, &text).expect("session");
    let local = Local {
        pi: FileStore::new(&agent),
        omp: FileStore::new(&agent.join("omp")),
        map_cwd: Vec::new(),
        cursor_file: agent.join("arbor/sync.tsv"),
        machine: "here".into(),
        user: None,
    };
    let store = SqliteStore::open(&tmp.path().join("shared.db")).expect("store");
    let rows = arbor_sync::push(&store, &local, &[]).expect("push");
    assert!(rows.iter().all(|r| !r.unresolved), "{rows:#?}");
    // Entry e15990 changed here (same id, other bytes): a conflict near the end.
    let changed = text.replacen(
        "\"id\":\"e15990\",\"parentId\":\"e15989\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x",
        "\"id\":\"e15990\",\"parentId\":\"e15989\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"y",
        1,
    );
    assert_ne!(changed, text);
    drop(text);
    std::fs::write(&path, &changed).expect("change");
    drop(changed);

    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let rows = arbor_sync::pull(&store, &local, &[], false).expect("pull");
    let held = PEAK.load(Ordering::Relaxed) - before;
    assert!(
        matches!(rows.as_slice(), [r] if matches!(r.state, State::Conflict { .. })),
        "{rows:#?}"
    );
    eprintln!(
        "a conflict pull of a {size}-byte session held {held} heap bytes at once ({:.2}x)",
        held as f64 / size as f64
    );
    // The local lines (the session once, and a vector of 16,001 lines) and the small tail,
    // with room for the hashes and the store; the shared copy whole beside them would be 2x+.
    assert!(
        held < size * 3 / 2,
        "the pull held {held} bytes at once for a {size}-byte session: a whole copy again?"
    );
}
