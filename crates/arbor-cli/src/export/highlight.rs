//! Code highlighting for the HTML export: syntect's default syntaxes, written as spans with
//! classes (`h-…`) so that the colours are in the page's style sheet once, for the light and
//! the dark theme.
use std::sync::OnceLock;
use syntect::highlighting::ThemeSet;
use syntect::html::{css_for_theme_with_class_style, ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

const STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "h-" };

/// Code longer than this is shown escaped but not highlighted (the highlighter's time grows
/// with it, and a page of megabytes of spans is slow to open).
const MAX_BYTES: usize = 64 << 10;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// `code` as highlighted HTML (escaped, with spans) in the language named by `lang` (a
/// fence's info string: `rust`, `ts`, `py`, `json`, `sh`, ... or a file extension); `None`
/// when no syntax is known for it or the code is too long: the caller escapes it plainly.
pub fn code(lang: &str, code: &str) -> Option<String> {
    let lang = lang.split([' ', ',', '{']).next().unwrap_or("").trim();
    if lang.is_empty() || code.len() > MAX_BYTES {
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
    let mut g = ClassedHTMLGenerator::new_with_class_style(syntax, set, STYLE);
    for line in LinesWithEndings::from(code) {
        g.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(g.finalize())
}

/// The highlighter's style sheet: a light theme, and a dark one when the system prefers it.
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

#[cfg(test)]
mod tests {
    #[test]
    fn known_languages_get_spans_and_unknown_ones_none() {
        let h = super::code("rust", "fn main() { let x = \"<b>\"; }\n").expect("rust");
        assert!(h.contains("<span class=\"h-"), "{h}");
        assert!(h.contains("&lt;b&gt;") && !h.contains("<b>"), "{h}");
        assert!(super::code("ts", "const a = 1;\n").is_some());
        assert!(super::code("no-such-language", "x\n").is_none());
        assert!(super::code("", "x\n").is_none());
        assert!(super::code("json", &"1".repeat(super::MAX_BYTES + 1)).is_none());
        assert!(super::css().contains(".h-"));
    }
}
