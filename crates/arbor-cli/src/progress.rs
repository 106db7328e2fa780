//! Progress on long work: the first `arbor index` of a big agent directory, `sync push` and
//! `sync pull` of many bytes, `export` of a big session. One kind of bar for all of them, on
//! stderr (stdout stays the command's output), only when stderr is a terminal and the command
//! was not asked for JSON, and only for work big enough to need one. Updated by bytes, drawn
//! at most [`DRAW_HZ`] times a second (indicatif throttles; an update is an atomic add), so
//! it costs the work nothing measurable. Piped, nothing extra is printed.
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Work under this many bytes ends before a bar could tell anyone anything.
pub const MIN_BYTES: u64 = 32 << 20;

/// How often a bar is drawn at most.
pub const DRAW_HZ: u8 = 10;

static OFF: AtomicBool = AtomicBool::new(false);

/// The bar on the screen, if any: a line for stderr goes above it ([`suspend`]).
static SHOWN: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

/// Runs `f` (a write to stderr) with the bar on the screen, if any, taken away while it
/// runs and drawn again below, so that a warning is never written into the bar's line.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let shown = SHOWN.lock().ok().and_then(|g| g.clone());
    match shown {
        Some(b) => b.suspend(f),
        None => f(),
    }
}

/// No bars for the rest of the run (`--json`: the output is for a program).
pub fn turn_off() {
    OFF.store(true, Ordering::Relaxed);
}

/// Whether bars may be drawn: stderr is a terminal and they were not turned off.
pub fn allowed() -> bool {
    !OFF.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// A progress bar, or nothing (not a terminal, `--json`, small work).
pub struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// Nothing shown.
    pub fn hidden() -> Bar {
        Bar(None)
    }

    fn make(len: Option<u64>, template: &str) -> Bar {
        let target = indicatif::ProgressDrawTarget::stderr_with_hz(DRAW_HZ);
        let b = match len {
            Some(n) => indicatif::ProgressBar::with_draw_target(Some(n), target),
            None => indicatif::ProgressBar::with_draw_target(None, target),
        };
        b.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        if let Ok(mut g) = SHOWN.lock() {
            *g = Some(b.clone());
        }
        Bar(Some(b))
    }

    /// A bar over `total` bytes, `what` before it ("indexing", "pushing"), shown when bars are
    /// [`allowed`] and `total` is at least [`MIN_BYTES`] (or `files` at least `min_files`).
    pub fn bytes(what: &str, total: u64, files: u64, min_files: u64) -> Bar {
        if !allowed() || (total < MIN_BYTES && files < min_files) {
            return Bar::hidden();
        }
        Bar::make(
            Some(total),
            &format!("{what} {{bar:30}} {{binary_bytes}}/{{binary_total_bytes}} {{msg}} ({{eta}})"),
        )
    }

    /// A spinner counting bytes of work whose total is not known in advance (what an export
    /// writes), `what` before it, ticking on its own so that a long step shows it is alive.
    /// Shown when bars are [`allowed`] and `size` (what the work is about) is at least
    /// [`MIN_BYTES`].
    pub fn counter(what: &str, size: u64) -> Bar {
        if !allowed() || size < MIN_BYTES {
            return Bar::hidden();
        }
        let b = Bar::make(
            None,
            &format!("{{spinner}} {what}: {{msg}} · {{binary_bytes}} written ({{elapsed}})"),
        );
        if let Some(p) = &b.0 {
            p.enable_steady_tick(Duration::from_millis(1000 / u64::from(DRAW_HZ)));
        }
        b
    }

    /// Sets the bytes done.
    pub fn set(&self, done: u64) {
        if let Some(b) = &self.0 {
            b.set_position(done);
        }
    }

    /// Adds bytes done.
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// Sets the total (it can grow as work is found).
    pub fn set_total(&self, total: u64) {
        if let Some(b) = &self.0 {
            b.set_length(total);
        }
    }

    /// Sets the words after the bar.
    pub fn message(&self, m: impl Into<std::borrow::Cow<'static, str>>) {
        if let Some(b) = &self.0 {
            b.set_message(m);
        }
    }

    /// Clears the bar from the screen (dropping it does too).
    pub fn finish(&mut self) {
        if let Some(b) = self.0.take() {
            b.finish_and_clear();
            if let Ok(mut g) = SHOWN.lock() {
                *g = None;
            }
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A writer that counts what goes through it on a [`Bar`].
pub struct Counting<'b, W> {
    inner: W,
    bar: &'b Bar,
}

impl<'b, W: Write> Counting<'b, W> {
    /// Counts what is written to `inner` on `bar`.
    pub fn new(inner: W, bar: &'b Bar) -> Self {
        Counting { inner, bar }
    }
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
