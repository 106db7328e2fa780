//! Writing a context's JSON to any `io::Write` in bounded memory, the messages that are
//! stored exactly as they are to be printed written from the session's bytes without a copy
//! (what `arbor context` uses for pi sessions).
use super::pieces::Pieces;
use super::{CtxMessage, PiContext};
use crate::doc::SessionDoc;
use std::io::{self, Write};

/// Writes `ctx`'s JSON (as [`PiContext::write_json`] writes it, then a newline) to `w`
/// in chunks of about 1 MB, so the JSON of a large context is never held whole in memory (a
/// session that was never compacted has a context as large as the file) and no large fresh
/// buffer has to be faulted in. A message stored exactly as it is to be printed is not
/// copied: it goes out as a slice of the session's bytes (`write_vectored`). On two cores,
/// windows of about 2 MB are transcoded in two halves side by side, then written in order.
/// `w` is not flushed.
pub(crate) fn write_context_streaming(
    ctx: &PiContext,
    doc: &SessionDoc,
    w: &mut dyn Write,
) -> io::Result<()> {
    const CHUNK: usize = 1 << 20;
    let sink = std::cell::RefCell::new((w, None::<io::Error>));
    let flush_pieces = |p: &mut Pieces<'_>| {
        let mut s = sink.borrow_mut();
        if s.1.is_none() {
            if let Err(e) = p.write_to(&mut *s.0) {
                s.1 = Some(e);
            }
        }
        p.clear();
    };
    // Messages are transcoded independently: on two cores, windows of about 2 MB are split in
    // two halves written side by side, then output in order (memory stays bounded). A message
    // stored exactly as it is to be printed is not copied: it is written from the map.
    const WINDOW: usize = 2 << 20;
    let two_cores = crate::two_cores();
    let size = |m: &CtxMessage| doc.line(&doc.entries[m.entry()].line).len();
    fn write_run<'d>(
        c: &PiContext,
        d: &'d SessionDoc,
        run: &[CtxMessage],
        first: bool,
        p: &mut Pieces<'d>,
    ) {
        for (k, m) in run.iter().enumerate() {
            if k > 0 || !first {
                p.buf().push(b',');
            }
            if let Some(kept) = c.write_message_or_keep(d, *m, p.buf()) {
                p.keep(kept);
            }
        }
    }
    // Two sets of pieces, each filled again for every window: fresh buffers of a few MB per
    // window cost more in page faults than writing the JSON into them.
    let mine = std::cell::RefCell::new(Pieces::default());
    let side = std::cell::RefCell::new(Pieces::default());
    let mut out = Vec::new();
    // The closure is handed `ctx` and `doc` again, for a lifetime local to the call; the
    // kept slices need `doc`'s own.
    let (c, d) = (ctx, doc);
    ctx.write_json_with(doc, &mut out, &|_, _, o| {
        // What the context's JSON starts with goes out first, with the first messages.
        let mut mine = mine.borrow_mut();
        mine.buf().append(o);
        mine.buf().push(b'[');
        let msgs = &c.messages[..];
        let mut start = 0;
        while start < msgs.len() {
            // The next window: messages up to WINDOW bytes of lines (at least one).
            let (mut end, mut bytes) = (start, 0);
            while end < msgs.len() && (end == start || bytes < WINDOW) {
                bytes += size(&msgs[end]);
                end += 1;
            }
            let window = &msgs[start..end];
            if two_cores && bytes >= WINDOW / 2 && window.len() > 1 {
                // Split at half the bytes.
                let (mut mid, mut acc) = (0, 0);
                while mid < window.len() - 1 && acc < bytes / 2 {
                    acc += size(&window[mid]);
                    mid += 1;
                }
                let mid = mid.max(1);
                let mut v = std::mem::take(&mut *side.borrow_mut());
                let second = std::thread::scope(|sc| {
                    let later = sc.spawn(move || {
                        write_run(c, d, &window[mid..], false, &mut v);
                        v
                    });
                    write_run(c, d, &window[..mid], start == 0, &mut mine);
                    later.join().unwrap_or_else(|_| {
                        let mut v = Pieces::default();
                        write_run(c, d, &window[mid..], false, &mut v);
                        v
                    })
                });
                // The first half, then the second.
                flush_pieces(&mut mine);
                let mut s = second;
                flush_pieces(&mut s);
                *side.borrow_mut() = s;
            } else {
                write_run(c, d, window, start == 0, &mut mine);
            }
            if mine.len() >= CHUNK {
                flush_pieces(&mut mine);
            }
            start = end;
        }
        o.push(b']');
    });
    // The last messages, then the rest of the JSON (written after them into `out`).
    let mut last = mine.into_inner();
    last.buf().append(&mut out);
    last.buf().push(b'\n');
    flush_pieces(&mut last);
    let (_, err) = sink.into_inner();
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
