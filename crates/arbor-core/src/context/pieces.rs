//! Output made of bytes written here and of slices of a session's mapped file that are
//! already what is to be printed (a message's payload as `JSON.stringify` wrote it): written
//! with `writev`, those slices are never copied in this process.
use std::io::{self, IoSlice, Write};

/// One part of the output, in order.
enum Piece<'a> {
    /// `buf[start..end]`.
    Written(usize, usize),
    /// Bytes that live elsewhere (the session's map).
    Kept(&'a [u8]),
}

/// Output waiting to be written: a buffer, and the order in which its runs and the kept
/// slices go out. Cleared and filled again for each part of a large output, so the buffer
/// stays small.
#[derive(Default)]
pub(crate) struct Pieces<'a> {
    buf: Vec<u8>,
    pieces: Vec<Piece<'a>>,
    /// Start of the run of `buf` not yet in `pieces`.
    open: usize,
    /// Bytes in kept slices.
    kept: usize,
}

/// Slices handed to one `writev` at most (Linux takes up to 1024).
const BATCH: usize = 512;

impl<'a> Pieces<'a> {
    /// The buffer to append written bytes to.
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Appends bytes that are kept where they are.
    pub(crate) fn keep(&mut self, bytes: &'a [u8]) {
        self.close();
        if !bytes.is_empty() {
            self.kept += bytes.len();
            self.pieces.push(Piece::Kept(bytes));
        }
    }

    /// Bytes waiting, written and kept.
    pub(crate) fn len(&self) -> usize {
        self.buf.len() + self.kept
    }

    fn close(&mut self) {
        if self.buf.len() > self.open {
            self.pieces.push(Piece::Written(self.open, self.buf.len()));
            self.open = self.buf.len();
        }
    }

    /// Writes everything, in order, then empties `self` (its buffer's memory is kept).
    pub(crate) fn write_to(&mut self, w: &mut dyn Write) -> io::Result<()> {
        self.close();
        let mut batch = [IoSlice::new(&[]); BATCH];
        for group in self.pieces.chunks(BATCH) {
            for (slot, piece) in batch.iter_mut().zip(group) {
                *slot = IoSlice::new(match *piece {
                    Piece::Written(a, b) => self.buf.get(a..b).unwrap_or_default(),
                    Piece::Kept(s) => s,
                });
            }
            let mut rest = &mut batch[..group.len()];
            while !rest.is_empty() {
                match w.write_vectored(rest) {
                    // No piece is empty: nothing written means the writer cannot take more.
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => IoSlice::advance_slices(&mut rest, n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        self.clear();
        Ok(())
    }

    /// Forgets everything waiting.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.pieces.clear();
        self.open = 0;
        self.kept = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes at most `max` bytes per call (as a pipe may), one slice at a time
    /// or across several.
    struct Trickle {
        got: Vec<u8>,
        max: usize,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let n = b.len().min(self.max);
            self.got.extend_from_slice(&b[..n]);
            self.calls += 1;
            Ok(n)
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(self.max - n);
                self.got.extend_from_slice(&b[..take]);
                n += take;
                if n == self.max {
                    break;
                }
            }
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn pieces_come_out_in_order_through_short_writes() {
        let kept: Vec<Vec<u8>> = (0..1500)
            .map(|k| format!("<kept {k}>").into_bytes())
            .collect();
        let mut p = Pieces::default();
        let mut want = Vec::new();
        for (k, s) in kept.iter().enumerate() {
            if k % 4 != 0 {
                let w = format!("[w{k}]");
                p.buf().extend_from_slice(w.as_bytes());
                want.extend_from_slice(w.as_bytes());
            }
            if k % 5 == 0 {
                p.keep(b"");
            }
            p.keep(s);
            want.extend_from_slice(s);
        }
        p.buf().extend_from_slice(b"end");
        want.extend_from_slice(b"end");
        assert_eq!(p.len(), want.len());
        for max in [1, 7, 64, 1 << 20] {
            let mut q = Pieces::default();
            q.buf.clone_from(&p.buf);
            q.open = p.open;
            q.kept = p.kept;
            q.pieces = p
                .pieces
                .iter()
                .map(|x| match *x {
                    Piece::Written(a, b) => Piece::Written(a, b),
                    Piece::Kept(s) => Piece::Kept(s),
                })
                .collect();
            let mut w = Trickle {
                got: Vec::new(),
                max,
                calls: 0,
            };
            q.write_to(&mut w).expect("written");
            assert_eq!(w.got, want, "max {max}");
            assert_eq!(q.len(), 0);
        }
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Ok(0)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut p = Pieces::default();
        p.keep(b"abc");
        let e = p.write_to(&mut Full).expect_err("nothing taken");
        assert_eq!(e.kind(), io::ErrorKind::WriteZero);
    }
}
