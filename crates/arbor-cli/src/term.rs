//! Terminal manners: whether to colour, how wide the screen is, styled text that is safe to
//! print, and the pager.
//!
//! Colour follows `--color auto|always|never`; `auto` colours only a terminal, and never when
//! `NO_COLOR` is set (to anything but the empty string) or `TERM` is `dumb`. Styles come from
//! `anstyle` (the crate clap itself draws with); display widths from `unicode-width`, so that
//! CJK and emoji titles keep columns aligned; the screen size from `terminal_size`, overridden
//! by `$COLUMNS` / `$LINES` (what tests and scripts set).
use anstyle::{AnsiColor, Style};
use std::io::{IsTerminal, Write};
use unicode_width::UnicodeWidthChar;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour when stdout is a terminal, `NO_COLOR` is unset and `TERM` is not `dumb`.
    #[default]
    Auto,
    /// Always colour (also into a pipe).
    Always,
    /// Never colour.
    Never,
}

/// What the terminal allows, decided once per command.
#[derive(Debug, Clone, Copy)]
pub struct Term {
    /// Whether to emit colour.
    pub color: bool,
    /// Whether stdout is a terminal.
    pub tty: bool,
    /// Columns to fit (the terminal's, `$COLUMNS`, else 100 when stdout is not a terminal).
    pub width: usize,
    /// Whether `width` is the screen's (a terminal, or `$COLUMNS`), not the default: text is
    /// wrapped at spaces only for a screen ([`wrap`]).
    pub sized: bool,
    /// Rows of the screen, when known (for the pager decision).
    pub height: Option<usize>,
}

impl Term {
    /// Reads the environment and stdout.
    pub fn detect(when: ColorWhen) -> Term {
        let tty = std::io::stdout().is_terminal();
        let env = |k: &str| std::env::var(k).ok();
        let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = env("TERM").is_some_and(|t| t == "dumb");
        let color = match when {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => tty && !no_color && !dumb,
        };
        let size = terminal_size::terminal_size_of(std::io::stdout());
        let num = |k: &str| env(k).and_then(|v| v.trim().parse::<usize>().ok());
        let screen = num("COLUMNS")
            .filter(|&w| w > 0)
            .or_else(|| size.map(|(w, _)| usize::from(w.0)));
        let sized = screen.is_some();
        let width = screen.unwrap_or(100).max(20);
        let height = num("LINES")
            .filter(|&h| h > 0)
            .or_else(|| size.map(|(_, h)| usize::from(h.0)));
        Term {
            color,
            tty,
            width,
            sized,
            height,
        }
    }
}

/// The styles arbor uses, one name per meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Secondary text: paths, timestamps, ids in passing.
    Dim,
    /// A heading or the column names.
    Header,
    /// Session and entry ids (what can be passed on).
    Id,
    /// The user speaking.
    User,
    /// The assistant speaking.
    Assistant,
    /// Tools, bash, thinking.
    Tool,
    /// Errors.
    Error,
    /// Warnings and notes.
    Warn,
    /// The current branch / path.
    Current,
    /// The leaf.
    Leaf,
    /// A search hit.
    Hit,
    /// Compactions and summaries.
    Summary,
    /// Labels.
    Label,
}

impl Paint {
    fn style(self) -> Style {
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        match self {
            Paint::Dim => Style::new().dimmed(),
            Paint::Header => Style::new().bold().underline(),
            Paint::Id => fg(AnsiColor::Yellow),
            Paint::User => fg(AnsiColor::Green).bold(),
            Paint::Assistant => fg(AnsiColor::Blue).bold(),
            Paint::Tool => fg(AnsiColor::Magenta),
            Paint::Error => fg(AnsiColor::Red).bold(),
            Paint::Warn => fg(AnsiColor::Yellow).bold(),
            Paint::Current => Style::new().bold(),
            Paint::Leaf => fg(AnsiColor::Green).bold(),
            Paint::Hit => fg(AnsiColor::Red).bold(),
            Paint::Summary => fg(AnsiColor::Cyan),
            Paint::Label => fg(AnsiColor::Cyan).bold(),
        }
    }
}

/// The display width of `s` in terminal columns (wide CJK and emoji count 2, combining marks
/// 0).
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` cut to at most `max` columns, with `…` where it was cut.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// `s` broken into lines of at most `max` columns (display width), at spaces: the space a
/// line is broken at is dropped, every other character is kept; a word longer than a line is
/// broken where the line is full. Always at least one line.
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut w = 0;
    // The last space of `line` not at its start: its byte offset and the width before it.
    let mut space: Option<(usize, usize)> = None;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if c == ' ' && w + 1 > max {
            out.push(std::mem::take(&mut line));
            (w, space) = (0, None);
            continue;
        }
        if w + cw > max {
            match space {
                Some((at, before)) => {
                    let rest = line.split_off(at + 1);
                    line.truncate(at);
                    out.push(std::mem::replace(&mut line, rest));
                    w -= before + 1;
                }
                None => {
                    out.push(std::mem::take(&mut line));
                    w = 0;
                }
            }
            space = None;
        }
        if c == ' ' && !line.is_empty() {
            space = Some((line.len(), w));
        }
        line.push(c);
        w += cw;
    }
    out.push(line);
    out
}

/// `s` padded with spaces to `cols` columns (left-aligned), cut first when longer.
pub fn pad(s: &str, cols: usize) -> String {
    let t = fit(s, cols);
    let w = width(&t);
    format!("{t}{}", " ".repeat(cols.saturating_sub(w)))
}

/// `s` right-aligned in `cols` columns.
pub fn pad_left(s: &str, cols: usize) -> String {
    let w = width(s);
    format!("{}{s}", " ".repeat(cols.saturating_sub(w)))
}

/// Text for a person, built up in memory: what comes from a session goes through
/// [`arbor_view::sanitize_text`], and only arbor's own styles reach the terminal as escape
/// sequences (none at all without colour).
#[derive(Debug, Default)]
pub struct Out {
    buf: String,
    color: bool,
}

impl Out {
    /// An empty buffer, colouring as `term` allows.
    pub fn new(term: &Term) -> Out {
        Out {
            buf: String::new(),
            color: term.color,
        }
    }

    /// Room for `n` more bytes at once (a long table need not grow the buffer by doubling).
    pub fn reserve(&mut self, n: usize) {
        self.buf.reserve(n);
    }

    /// Plain text (sanitized).
    pub fn put(&mut self, s: &str) -> &mut Out {
        self.buf.push_str(&arbor_view::sanitize_text(s));
        self
    }

    /// Styled text (sanitized).
    pub fn paint(&mut self, p: Paint, s: &str) -> &mut Out {
        if self.color && !s.is_empty() {
            let st = p.style();
            self.buf.push_str(&st.render().to_string());
            self.buf.push_str(&arbor_view::sanitize_text(s));
            self.buf.push_str(&st.render_reset().to_string());
        } else {
            self.put(s);
        }
        self
    }

    /// Text another `Out` of the same colouring made ([`Out::into_text`]), as it is: already
    /// sanitized, its styles arbor's own (a table the watcher of this user rendered).
    pub fn put_made(&mut self, s: &str) -> &mut Out {
        self.buf.push_str(s);
        self
    }

    /// How many bytes were written so far.
    pub fn written(&self) -> usize {
        self.buf.len()
    }

    /// The text written.
    pub fn into_text(self) -> String {
        self.buf
    }

    /// A newline.
    pub fn nl(&mut self) -> &mut Out {
        self.buf.push('\n');
        self
    }

    /// The text written so far.
    #[cfg(test)]
    pub fn as_str(&self) -> &str {
        &self.buf
    }

    /// Writes the text to stdout, through the pager when `pager` allows it, stdout is a
    /// terminal and the text is taller than the screen.
    pub fn print(self, term: &Term, pager: bool) -> std::io::Result<()> {
        let lines = self.buf.lines().count();
        if pager && term.tty && term.height.is_some_and(|h| lines >= h) {
            if let Some(()) = page(&self.buf) {
                return Ok(());
            }
        }
        let mut out = crate::report::stdout();
        out.write_all(self.buf.as_bytes())?;
        out.flush()
    }
}

/// Runs `$PAGER` (default `less -FRX`: colours kept, quits at once if the text fits) with
/// `text` on its stdin. `None` when no pager could be started (the caller prints instead).
fn page(text: &str) -> Option<()> {
    let spec = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -FRX".to_string());
    let mut parts = spec.split_whitespace();
    let prog = parts.next()?;
    let mut cmd = std::process::Command::new(prog);
    cmd.args(parts).stdin(std::process::Stdio::piped());
    if prog == "less" || prog.ends_with("/less") {
        // Keep colours even when $LESS is set without -R.
        if std::env::var_os("LESS").is_none() {
            cmd.env("LESS", "FRX");
        }
    }
    let mut child = cmd.spawn().ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit early (q) closes the pipe: not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_by_display_width() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
        // A word longer than the line is broken where the line is full.
        assert_eq!(wrap("abcdefghij klm", 4), ["abcd", "efgh", "ij", "klm"]);
        // Wide characters count two columns; nothing is lost but the spaces broken at.
        assert_eq!(wrap("日本語 日本語", 7), ["日本語", "日本語"]);
        assert_eq!(wrap("日本語日本語", 5), ["日本", "語日", "本語"]);
        assert_eq!(wrap("  indented code", 80), ["  indented code"]);
        assert_eq!(wrap("", 10), [""]);
        for s in ["a  b   c d", "understand the word", "x y z w v"] {
            for max in 1..8 {
                let lines = wrap(s, max);
                assert!(
                    lines.iter().all(|l| width(l) <= max),
                    "{s:?} {max} {lines:?}"
                );
                let kept: String = lines.concat();
                assert_eq!(
                    kept.replace(' ', ""),
                    s.replace(' ', ""),
                    "{s:?} {max} {lines:?}"
                );
            }
        }
    }

    #[test]
    fn widths_count_columns_not_chars() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("😀x"), 3);
        assert_eq!(fit("日本語テキスト", 7), "日本語…");
        assert_eq!(width(&pad("日本", 7)), 7);
        assert_eq!(pad_left("5", 3), "  5");
    }

    #[test]
    fn no_escapes_without_colour_and_session_text_is_sanitized() {
        let t = Term {
            color: false,
            tty: false,
            width: 80,
            sized: true,
            height: None,
        };
        let mut o = Out::new(&t);
        o.paint(Paint::Error, "bad\x1b[31m").put(" x");
        assert_eq!(o.as_str(), "bad␛[31m x");
        let t = Term { color: true, ..t };
        let mut o = Out::new(&t);
        o.paint(Paint::Error, "e\x1b]0;t\x07");
        let s = o.as_str();
        assert!(s.starts_with('\x1b') && s.contains("e␛]0;t␇"), "{s:?}");
        let own = Paint::Error
            .style()
            .render()
            .to_string()
            .matches('\x1b')
            .count()
            + 1;
        assert_eq!(
            s.matches('\x1b').count(),
            own,
            "only arbor's own style and reset"
        );
    }
}
