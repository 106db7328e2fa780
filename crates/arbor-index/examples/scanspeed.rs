//! Where the time of a cold listing goes (single thread): reading lines, envelope parsing,
//! pi's listing state, and the whole per-file scan of the catalog.
//! `cargo run --release -p arbor-index --example scanspeed -- DIR`
use arbor_core::entry::Entry;
use arbor_store::info::InfoState;
use arbor_store::LineStream;
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("DIR");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    let mbs = |t: f64| bytes as f64 / 1e6 / t;
    let t = Instant::now();
    let mut n = 0u64;
    for f in &files {
        let mut s = LineStream::open(f, 0, None).unwrap();
        while let Some(l) = s.next_line().unwrap() {
            n += l.bytes.len() as u64;
        }
    }
    let e = t.elapsed().as_secs_f64();
    println!("lines only        {e:.3}s {:.0} MB/s ({n})", mbs(e));
    let t = Instant::now();
    let mut k = 0usize;
    for f in &files {
        let mut s = LineStream::open(f, 0, None).unwrap();
        while let Some(l) = s.next_line().unwrap() {
            if let Ok(e) = Entry::parse(l.bytes, arbor_core::LineRef::Owned(0), 1) {
                k += e.fields.members.len();
            }
        }
    }
    let e = t.elapsed().as_secs_f64();
    println!("+ Entry::parse    {e:.3}s {:.0} MB/s ({k})", mbs(e));
    let t = Instant::now();
    for f in &files {
        let mut s = LineStream::open(f, 0, None).unwrap();
        let mut st = InfoState::default();
        let mut i = 0;
        while let Some(l) = s.next_line().unwrap() {
            i += 1;
            st.feed_line(l.bytes, i);
        }
        k += st.message_count as usize;
    }
    let e = t.elapsed().as_secs_f64();
    println!("+ InfoState       {e:.3}s {:.0} MB/s", mbs(e));
    let t = Instant::now();
    for f in &files {
        let stat = arbor_index::Stat::of(f).unwrap();
        let job = arbor_index::Job {
            idx: 0,
            path: f.clone(),
            stat,
            stored: None,
            kinds: Default::default(),
            want_docs: false,
        };
        arbor_index::scan_job(&job, &mut |c| k += c.nodes.len()).unwrap();
    }
    let e = t.elapsed().as_secs_f64();
    println!("scan_job listing  {e:.3}s {:.0} MB/s", mbs(e));
    let t = Instant::now();
    for f in &files {
        let stat = arbor_index::Stat::of(f).unwrap();
        let job = arbor_index::Job {
            idx: 0,
            path: f.clone(),
            stat,
            stored: None,
            kinds: Default::default(),
            want_docs: true,
        };
        arbor_index::scan_job(&job, &mut |c| k += c.docs.len()).unwrap();
    }
    let e = t.elapsed().as_secs_f64();
    println!("scan_job + texts  {e:.3}s {:.0} MB/s", mbs(e));
}
