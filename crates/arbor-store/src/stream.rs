//! Reading a session file line by line from any byte offset, in bounded memory.
//!
//! Listing and indexing never need a whole file: [`LineStream`] reads fixed-size chunks and
//! hands out one complete line at a time (only a single line longer than the chunk makes the
//! buffer grow, to that line's length). An index that stopped at byte `n` continues from `n`.
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Default read size.
pub const CHUNK: usize = 1 << 20;

/// One physical line handed out by [`LineStream::next_line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAt<'a> {
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
    /// The line without its `\n` (a `\r` before it is kept).
    pub bytes: &'a [u8],
    /// Whether the line ended with `\n` (`false` only for the last line of the input).
    pub terminated: bool,
}

impl LineAt<'_> {
    /// Offset just past the line and its `\n`.
    pub fn end(&self) -> u64 {
        self.offset + self.bytes.len() as u64 + u64::from(self.terminated)
    }
}

/// Lines of a file, from a start offset up to a limit (normally the size seen by `stat`).
pub struct LineStream<R = File> {
    src: R,
    /// `buf[..len]` holds data; the rest is spare room, zeroed once when allocated.
    buf: Vec<u8>,
    len: usize,
    /// Consumed prefix of `buf`.
    pos: usize,
    /// File offset of `buf[0]`.
    base: u64,
    /// Bytes still to read from `src`.
    remaining: u64,
    chunk: usize,
}

impl LineStream<File> {
    /// Opens `path` and positions at `from`; at most `limit - from` bytes are read
    /// (`limit`: `None` reads to the end).
    pub fn open(path: &Path, from: u64, limit: Option<u64>) -> io::Result<LineStream<File>> {
        LineStream::open_with_buffer(path, from, limit, Vec::new())
    }

    /// [`LineStream::open`] reusing `buf` (see [`LineStream::into_buffer`]): a reader of many
    /// files then allocates (and zeroes) its buffer once.
    pub fn open_with_buffer(
        path: &Path,
        from: u64,
        limit: Option<u64>,
        buf: Vec<u8>,
    ) -> io::Result<LineStream<File>> {
        let mut f = crate::safe_fs::open_regular(path)?;
        let limit = match limit {
            Some(l) => l,
            None => f.metadata()?.len(),
        };
        if from > 0 {
            f.seek(SeekFrom::Start(from))?;
        }
        let mut s = LineStream::new(f, from, limit.saturating_sub(from));
        s.buf = buf;
        Ok(s)
    }
}

impl<R: Read> LineStream<R> {
    /// Lines of `src`, whose first byte sits at file offset `base`; reads `len` bytes at most.
    pub fn new(src: R, base: u64, len: u64) -> LineStream<R> {
        LineStream {
            src,
            buf: Vec::new(),
            len: 0,
            pos: 0,
            base,
            remaining: len,
            chunk: CHUNK,
        }
    }

    /// Uses `chunk` bytes per read (tests use tiny chunks to cross every boundary).
    pub fn with_chunk(mut self, chunk: usize) -> LineStream<R> {
        self.chunk = chunk.max(1);
        self
    }

    /// The buffer, for the next [`LineStream::open_with_buffer`].
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// File offset of the first byte not yet handed out.
    pub fn position(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Reads more input; returns `false` at the end.
    fn fill(&mut self) -> io::Result<bool> {
        if self.remaining == 0 {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.base += self.pos as u64;
            self.pos = 0;
        }
        let want = (self.chunk as u64).min(self.remaining) as usize;
        if self.buf.len() < self.len + want {
            // Grows only for a line longer than the buffer (the zeroing happens once).
            self.buf
                .resize((self.len + want).max(self.buf.len() * 2), 0);
        }
        let mut got = 0;
        while got < want {
            match self
                .src
                .read(&mut self.buf[self.len + got..self.len + want])
            {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.len += got;
                    return Err(e);
                }
            }
        }
        self.len += got;
        if got == 0 {
            // The file is shorter than it was: stop here.
            self.remaining = 0;
            return Ok(false);
        }
        self.remaining -= got as u64;
        Ok(true)
    }

    /// The next line, or `None` at the end of the input. The last line may be unterminated.
    pub fn next_line(&mut self) -> io::Result<Option<LineAt<'_>>> {
        let mut scanned = 0;
        loop {
            let avail = &self.buf[self.pos + scanned..self.len];
            if let Some(i) = memchr::memchr(b'\n', avail) {
                let start = self.pos;
                let end = self.pos + scanned + i;
                self.pos = end + 1;
                return Ok(Some(LineAt {
                    offset: self.base + start as u64,
                    bytes: &self.buf[start..end],
                    terminated: true,
                }));
            }
            scanned = self.len - self.pos;
            if !self.fill()? {
                break;
            }
        }
        if self.pos < self.len {
            let start = self.pos;
            self.pos = self.len;
            return Ok(Some(LineAt {
                offset: self.base + start as u64,
                bytes: &self.buf[start..self.len],
                terminated: false,
            }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &[u8], chunk: usize, from: u64) -> Vec<(u64, Vec<u8>, bool)> {
        let mut s = LineStream::new(&data[from as usize..], from, data.len() as u64 - from)
            .with_chunk(chunk);
        let mut out = Vec::new();
        while let Some(l) = s.next_line().unwrap() {
            out.push((l.offset, l.bytes.to_vec(), l.terminated));
        }
        out
    }

    #[test]
    fn splits_lines_across_any_chunk_size() {
        let data = b"{\"a\":1}\n\n{\"bb\":22}\r\ntail";
        for chunk in [1, 2, 3, 5, 8, 64, 1 << 20] {
            let got = lines(data, chunk, 0);
            assert_eq!(
                got,
                vec![
                    (0, b"{\"a\":1}".to_vec(), true),
                    (8, b"".to_vec(), true),
                    (9, b"{\"bb\":22}\r".to_vec(), true),
                    (20, b"tail".to_vec(), false)
                ],
                "chunk {chunk}"
            );
        }
        assert_eq!(
            lines(data, 4, 9),
            vec![
                (9, b"{\"bb\":22}\r".to_vec(), true),
                (20, b"tail".to_vec(), false)
            ]
        );
        assert!(lines(b"", 4, 0).is_empty());
        assert_eq!(lines(b"x\n", 1, 0), vec![(0, b"x".to_vec(), true)]);
    }
}
