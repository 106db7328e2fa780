//! What a load of a session allocates on the heap, by size class (a counting allocator around
//! the system one): `cargo run --release -p arbor-bench --example allocs -- FILE`. Each line of
//! the report gives the bytes live, the peak and the total allocated so far; after the load,
//! a histogram by power of two. Fresh heap memory is what the kernel has to zero (see
//! docs/performance.md), so this is where to look for it.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);
static BYTES_BY_CLASS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
static COUNT_BY_CLASS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];

// SAFETY: every call is passed on to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(live, Relaxed);
        COUNT.fetch_add(1, Relaxed);
        TOTAL.fetch_add(l.size(), Relaxed);
        let class = (usize::BITS - l.size().leading_zeros()) as usize;
        BYTES_BY_CLASS[class].fetch_add(l.size(), Relaxed);
        COUNT_BY_CLASS[class].fetch_add(1, Relaxed);
        // SAFETY: same layout, as the caller asked.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        // SAFETY: `p` came from `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn report(stage: &str) {
    println!(
        "{stage:<8} live {:>11} peak {:>11} allocations {:>8} total {:>11}",
        LIVE.load(Relaxed),
        PEAK.load(Relaxed),
        COUNT.load(Relaxed),
        TOTAL.load(Relaxed)
    );
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: allocs FILE");
        std::process::exit(2);
    };
    report("start");
    let doc = match arbor_store::load_doc(std::path::Path::new(&path)) {
        Ok(doc) => doc,
        Err(e) => {
            eprintln!("allocs: {e}");
            std::process::exit(1);
        }
    };
    report("load");
    for class in 0..64 {
        let n = COUNT_BY_CLASS[class].load(Relaxed);
        if n > 0 {
            println!(
                "  below 2^{class:<2} bytes: {n:>8} allocations, {:>11} bytes",
                BYTES_BY_CLASS[class].load(Relaxed)
            );
        }
    }
    let ctx =
        arbor_core::context::build_session_context(&doc, arbor_core::context::LeafSel::Current);
    report("context");
    let mut out = Vec::new();
    ctx.write_json(&doc, &mut out);
    report("json");
    let members: usize = doc.entries().iter().map(|e| e.fields.members.len()).sum();
    let message_members: usize = doc
        .entries()
        .iter()
        .map(|e| e.message.as_ref().map_or(0, |m| m.members.len()))
        .sum();
    println!(
        "{} entries ({} bytes each), {members} line members and {message_members} message members ({} bytes each); context JSON {} bytes",
        doc.entries().len(),
        std::mem::size_of::<arbor_core::entry::Entry>(),
        std::mem::size_of::<arbor_core::json::Member>(),
        out.len()
    );
}
