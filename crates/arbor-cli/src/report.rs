//! Output and error messages for a person: each cause once, nothing that drives the terminal;
//! [`Out`], the one writer of stdout, which a closed pipe does not stop.
use arbor_view::sanitize_line;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// `eprintln!` for a person: the formatted message goes through
/// [`arbor_view::sanitize_text`], so a path, id or name from a session cannot drive the
/// terminal. The CLI's modules print to stderr only through this (a test checks). A stderr
/// that cannot be written (a closed pipe) is not a reason to stop: the message is dropped.
macro_rules! say_err {
    ($($t:tt)*) => {
        $crate::report::err_line(&arbor_view::sanitize_text(&format!($($t)*)))
    };
}

/// `println!` for a person, sanitized like [`say_err!`], written through [`stdout`]: a
/// reader that went away (`arbor ... | head`) does not stop the command.
macro_rules! say {
    ($($t:tt)*) => {
        $crate::report::out_line(&arbor_view::sanitize_text(&format!($($t)*)))
    };
}

/// Set once a write to stdout found its reader gone (EPIPE).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// The first error other than EPIPE that a [`say!`] line met on stdout (a full disk behind
/// `> FILE`): `main` reports it when the command is done.
static STDOUT_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Every write of the CLI to its stdout goes through this (a test checks): a closed pipe
/// (`arbor index | true`, `arbor new | head -c0`) is not a failure of the command. Rust
/// ignores SIGPIPE, so a write to a pipe whose reader is gone returns EPIPE; the first one
/// marks stdout closed and from then on every write is accepted and dropped, so that the
/// command finishes its work (a session written, a fork made, every line of `append -`
/// appended) and exits with its own status, quietly. Other errors (a full disk) are
/// returned as they are.
pub struct Out<W: Write>(W);

impl<W: Write> Out<W> {
    /// Wraps another handle on stdout (a duplicate of its file descriptor).
    pub fn new(w: W) -> Out<W> {
        Out(w)
    }
}

/// Runs one write to stdout: once stdout was found closed (`EPIPE`, now or before), `done`
/// stands in for what the write would have returned, and nothing is written.
fn unless_closed<T>(done: T, write: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(done);
    }
    match write() {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(done)
        }
        r => r,
    }
}

impl<W: Write> Write for Out<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        unless_closed(buf.len(), || self.0.write(buf))
    }

    /// Passed on whole: the context writer hands over many slices of the mapped session at
    /// once (`writev`), and `Write`'s default would write only the first, one `write` per
    /// message (5,168 calls instead of 19 for a 100 MB session's context).
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        unless_closed(bufs.iter().map(|b| b.len()).sum(), || {
            self.0.write_vectored(bufs)
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        unless_closed((), || self.0.flush())
    }
}

/// The process's stdout, locked, as an [`Out`].
pub fn stdout() -> Out<std::io::StdoutLock<'static>> {
    Out(std::io::stdout().lock())
}

/// One line of [`say!`] to stdout. An error other than EPIPE is kept for `main` (the first).
pub fn out_line(text: &str) {
    if let Err(e) = writeln!(stdout(), "{text}") {
        keep_stdout_error(e);
    }
}

/// Keeps the first error writing to stdout that was not a closed pipe.
fn keep_stdout_error(e: std::io::Error) {
    if let Ok(mut slot) = STDOUT_ERROR.lock() {
        slot.get_or_insert(e);
    }
}

/// Flushes stdout at the end of a command and hands back the first error (other than a closed
/// pipe) that a [`say!`] line met, for `main` to report.
pub fn finish_stdout() -> Option<std::io::Error> {
    if let Err(e) = stdout().flush() {
        keep_stdout_error(e);
    }
    STDOUT_ERROR.lock().ok().and_then(|mut slot| slot.take())
}

/// One line of [`say_err!`] to stderr; an error writing it is dropped (there is nowhere left
/// to report it).
pub fn err_line(text: &str) {
    // Above a progress bar, never into its line.
    crate::progress::suspend(|| {
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    });
}

/// A mistake in how arbor was called (exit status 2, like clap's own usage errors).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// The error and its chain of causes as one line. The library errors name their cause in
/// their own message (so that they read whole on their own, through any caller), and anyhow's
/// chain holds the same cause again: a cause whose text is already in the message is not
/// repeated. Text that came from a file or an argument (paths, ids, names) may hold control
/// characters; they are made visible instead of reaching the terminal.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if s.is_empty() || text.contains(&s) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&s);
    }
    sanitize_line(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes every slice of a vectored write at once, as a pipe's `writev` does.
    struct Vectored {
        calls: usize,
        bytes: Vec<u8>,
    }

    impl Write for Vectored {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.calls += 1;
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            self.calls += 1;
            for b in bufs {
                self.bytes.extend_from_slice(b);
            }
            Ok(bufs.iter().map(|b| b.len()).sum())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The context writer's `writev` of many slices reaches stdout as one call, not one call
    /// per slice (`Write`'s default `write_vectored` writes only the first slice).
    #[test]
    fn a_vectored_write_goes_through_whole() {
        let mut out = Out::new(Vectored {
            calls: 0,
            bytes: Vec::new(),
        });
        let parts = [b"one ".as_slice(), b"two ", b"three"];
        let slices: Vec<std::io::IoSlice<'_>> =
            parts.iter().map(|p| std::io::IoSlice::new(p)).collect();
        let n = out.write_vectored(&slices).expect("write");
        assert_eq!(n, 13, "every slice written by the one call");
        assert_eq!(out.0.calls, 1);
        assert_eq!(out.0.bytes, b"one two three");
    }

    /// Human output goes through `say!`, `say_err!` or a `render::Human` writer; the plain
    /// macros would print a session's escape sequences raw.
    #[test]
    fn no_module_prints_unsanitized() {
        let sources = [
            ("main.rs", include_str!("main.rs")),
            ("cmd/mod.rs", include_str!("cmd/mod.rs")),
            ("cmd/check.rs", include_str!("cmd/check.rs")),
            ("cmd/index.rs", include_str!("cmd/index.rs")),
            ("cmd/read.rs", include_str!("cmd/read.rs")),
            ("cmd/write.rs", include_str!("cmd/write.rs")),
            ("args.rs", include_str!("args.rs")),
            ("browse/mod.rs", include_str!("browse/mod.rs")),
            ("browse/handoff.rs", include_str!("browse/handoff.rs")),
            ("browse/picker.rs", include_str!("browse/picker.rs")),
            ("browse/navigator.rs", include_str!("browse/navigator.rs")),
            ("browse/ui.rs", include_str!("browse/ui.rs")),
            ("cmd/ls.rs", include_str!("cmd/ls.rs")),
            ("cmd/fork.rs", include_str!("cmd/fork.rs")),
            ("cmd/trash.rs", include_str!("cmd/trash.rs")),
            ("show_view.rs", include_str!("show_view.rs")),
            ("tree_view.rs", include_str!("tree_view.rs")),
        ];
        for (name, src) in sources {
            for (n, line) in src.lines().enumerate() {
                for bad in ["println!(", "eprintln!(", "print!(", "eprint!("] {
                    let hit = line.match_indices(bad).any(|(i, _)| {
                        !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    assert!(!hit, "{name}:{}: {bad} prints unsanitized: {line}", n + 1);
                }
            }
        }
    }

    /// Every write to stdout goes through `Out` (a closed pipe does not stop a command
    /// halfway or panic): a handle on stdout taken anywhere else is either only asked
    /// whether it is a terminal, or is the full-screen browser's terminal (which a pipe is
    /// not: `browse` refuses to start without one), or is a handle whose file descriptor is
    /// duplicated into an `Out`.
    #[test]
    fn stdout_is_written_only_through_out() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![src.clone()];
        let mut seen = 0;
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("read src") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") || p.ends_with("report.rs") {
                    continue;
                }
                seen += 1;
                let text = std::fs::read_to_string(&p).expect("read");
                for (n, line) in text.lines().enumerate() {
                    for (i, _) in line.match_indices("io::stdout()") {
                        let rest = &line[i + "io::stdout()".len()..];
                        let ok = rest.starts_with(".is_terminal()")
                            || line.contains("terminal_size_of(")
                            || line.ends_with("// the terminal, not a pipe")
                            || line.ends_with("// its fd goes into an Out")
                            || line.contains(".flush().is_ok()");
                        assert!(
                            ok,
                            "{}:{}: stdout written around report::Out: {line}",
                            p.display(),
                            n + 1
                        );
                    }
                }
            }
        }
        assert!(seen > 20, "only {seen} source files found");
    }

    #[test]
    fn each_cause_is_printed_once() {
        let io = std::io::Error::from_raw_os_error(17);
        let store = arbor_store::StoreError::Io {
            path: "/etc/passwd".into(),
            source: io,
        };
        let e = anyhow::Error::new(store);
        assert_eq!(error_text(&e), "/etc/passwd: File exists (os error 17)");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }

    #[test]
    fn control_characters_in_messages_are_made_visible() {
        let e = anyhow::anyhow!("no session \x1b]0;pwned\x07 here");
        let t = error_text(&e);
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
    }
}
