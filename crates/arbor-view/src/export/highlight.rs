//! Code highlighting for the HTML export: syntect's default syntaxes, written as spans with
//! classes (`h-…`) so that the colours are in the page's style sheet once, for the light and
//! the dark theme.
//!
//! The work is bounded per session, not per block: syntect's time on a line grows with the
//! square of its length (each token's search runs over the rest of the line), so a line longer
//! than [`MAX_LINE`] is written escaped and not highlighted, and one export highlights at most
//! [`SESSION_BUDGET`] bytes of code; the code after that is escaped plainly.
//!
//! Behind the cargo feature `highlight` (on by default). Without it, [`Highlighter::code`]
//! is always `None` and [`css`] empty: every code block is escaped plain text.
#[cfg(feature = "highlight")]
use std::sync::OnceLock;
#[cfg(feature = "highlight")]
use syntect::highlighting::ThemeSet;
#[cfg(feature = "highlight")]
use syntect::html::{css_for_theme_with_class_style, line_tokens_to_classed_spans, ClassStyle};
#[cfg(feature = "highlight")]
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};
#[cfg(feature = "highlight")]
use syntect::util::LinesWithEndings;

#[cfg(feature = "highlight")]
const STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "h-" };

/// Code longer than this is shown escaped but not highlighted (a page of megabytes of spans
/// is slow to open).
pub(crate) const MAX_BYTES: usize = 64 << 10;

/// A line longer than this (minified code, a data line) is written escaped, not highlighted:
/// the highlighter's time on a line grows with the square of its length.
#[cfg_attr(not(feature = "highlight"), allow(dead_code))]
const MAX_LINE: usize = 1000;

/// The bytes of code one export highlights at most; after that, code is escaped plainly.
/// With lines of at most [`MAX_LINE`] bytes this bounds the highlighter's work per session.
const SESSION_BUDGET: usize = 256 << 10;

#[cfg(feature = "highlight")]
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The highlighter of one export, with what is left of its budget.
pub struct Highlighter {
    left: usize,
}

impl Highlighter {
    /// A highlighter with the whole [`SESSION_BUDGET`].
    pub fn new() -> Highlighter {
        Highlighter::with_budget(SESSION_BUDGET)
    }

    fn with_budget(left: usize) -> Highlighter {
        Highlighter { left }
    }

    /// `code` as highlighted HTML (escaped, with spans) in the language named by `lang` (a
    /// fence's info string: `rust`, `ts`, `py`, `json`, `sh`, ... or a file extension); `None`
    /// when no syntax is known for it, the code is too long or the budget is spent: the
    /// caller escapes it plainly. Lines longer than [`MAX_LINE`] are escaped in place and
    /// not counted.
    #[cfg(feature = "highlight")]
    pub fn code(&mut self, lang: &str, code: &str) -> Option<String> {
        let lang = lang.split([' ', ',', '{']).next().unwrap_or("").trim();
        if lang.is_empty() || code.len() > MAX_BYTES {
            return None;
        }
        let cost: usize = LinesWithEndings::from(code)
            .map(str::len)
            .filter(|n| *n <= MAX_LINE)
            .sum();
        if cost > self.left {
            return None;
        }
        let set = syntaxes();
        let token = match lang.to_ascii_lowercase().as_str() {
            "ts" | "typescript" | "tsx" => "js".to_string(),
            "shell" | "bash" | "zsh" | "console" => "sh".to_string(),
            "jsonl" | "json5" => "json".to_string(),
            l => l.to_string(),
        };
        let syntax = set.find_syntax_by_token(&token)?;
        self.left -= cost;
        // What syntect's ClassedHTMLGenerator does, with the long lines left out of the parse.
        let mut state = ParseState::new(syntax);
        let mut stack = ScopeStack::new();
        let mut html = String::with_capacity(code.len() * 2);
        let mut open: isize = 0;
        for line in LinesWithEndings::from(code) {
            if line.len() > MAX_LINE {
                html.push_str(&super::escape_html(line));
                continue;
            }
            let ops = state.parse_line(line, set).ok()?;
            let (h, delta) = line_tokens_to_classed_spans(line, &ops, STYLE, &mut stack).ok()?;
            html.push_str(&h);
            open += delta;
        }
        for _ in 0..open {
            html.push_str("</span>");
        }
        Some(html)
    }

    /// Without the `highlight` feature: never highlighted, the caller escapes the code.
    #[cfg(not(feature = "highlight"))]
    pub fn code(&mut self, _lang: &str, _code: &str) -> Option<String> {
        let _ = self.left;
        None
    }
}

/// Without the `highlight` feature: no style sheet for code.
#[cfg(not(feature = "highlight"))]
pub fn css() -> String {
    String::new()
}

/// The highlighter's style sheet: a light theme, and a dark one when the system prefers it.
#[cfg(feature = "highlight")]
pub fn css() -> String {
    let themes = ThemeSet::load_defaults();
    let css = |name: &str| {
        themes
            .themes
            .get(name)
            .and_then(|t| css_for_theme_with_class_style(t, STYLE).ok())
            .unwrap_or_default()
    };
    // The themes' own page background is left to the page's (`pre` sets its own).
    let strip = |c: String| c.replace("background-color", "--unused-bg");
    format!(
        "{}\n@media (prefers-color-scheme:dark){{{}}}",
        strip(css("InspiredGitHub")),
        strip(css("base16-ocean.dark"))
    )
}

#[cfg(all(test, feature = "highlight"))]
mod tests {
    use super::{Highlighter, MAX_BYTES, MAX_LINE};

    #[test]
    fn known_languages_get_spans_and_unknown_ones_none() {
        let mut h = Highlighter::new();
        let x = h
            .code("rust", "fn main() { let x = \"<b>\"; }\n")
            .expect("rust");
        assert!(x.contains("<span class=\"h-"), "{x}");
        assert!(x.contains("&lt;b&gt;") && !x.contains("<b>"), "{x}");
        assert!(h.code("ts", "const a = 1;\n").is_some());
        assert!(h.code("no-such-language", "x\n").is_none());
        assert!(h.code("", "x\n").is_none());
        assert!(h.code("json", &"1".repeat(MAX_BYTES + 1)).is_none());
        assert!(super::css().contains(".h-"));
    }

    /// A long line is escaped, not highlighted, and the lines around it still are: the
    /// highlighter never sees a line longer than MAX_LINE.
    #[test]
    fn a_long_line_is_escaped_not_highlighted() {
        let long = format!("let s = \"{}<i>\";", "a".repeat(MAX_LINE));
        let code = format!("let a = 1;\n{long}\nlet b = 2;\n");
        let x = Highlighter::new().code("js", &code).expect("js");
        assert!(
            x.contains(&format!("{}&lt;i&gt;&quot;;\n", "a".repeat(MAX_LINE))),
            "{x}"
        );
        let line = x.lines().nth(1).expect("line 2");
        assert!(!line.contains("<span"), "the long line was highlighted");
        assert!(x.lines().next().is_some_and(|l| l.contains("<span")), "{x}");
        assert!(x.lines().nth(2).is_some_and(|l| l.contains("<span")), "{x}");
        assert_eq!(x.matches("<span").count(), x.matches("</span>").count());
    }

    /// The budget is per export: once it is spent, the rest is left to the caller to
    /// escape, however it is split into blocks; long lines cost nothing (not highlighted).
    #[test]
    fn one_export_highlights_at_most_its_budget() {
        let line = format!("let x = {};\n", "1".repeat(60));
        let block = line.repeat(100);
        let budget = 4 * block.len() + block.len() / 2;
        let mut h = Highlighter::with_budget(budget);
        let mut done = 0;
        let mut refused = 0;
        for _ in 0..8 {
            match h.code("js", &block) {
                Some(_) => done += block.len(),
                None => refused += 1,
            }
        }
        assert_eq!((done, refused), (4 * block.len(), 4));
        // A small block still fits in what is left.
        assert!(h.code("js", "let y;\n").is_some());
        let mut h = Highlighter::with_budget(budget);
        let long = format!("{}\n", "x".repeat(MAX_LINE + 1)).repeat(50);
        for _ in 0..8 {
            assert!(h.code("js", &long).is_some());
        }
        assert_eq!(h.left, budget);
        // The default budget: 256 KB, about a second of highlighting at most.
        assert_eq!(Highlighter::new().left, super::SESSION_BUDGET);
    }
}
