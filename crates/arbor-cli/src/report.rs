//! Error messages for a person: each cause once, nothing that drives the terminal.
use crate::render::sanitize_line;

/// `eprintln!` for a person: the formatted message goes through
/// [`crate::render::sanitize_text`], so a path, id or name from a session cannot drive the
/// terminal. The CLI's modules print to stderr only through this (a test checks).
macro_rules! say_err {
    ($($t:tt)*) => {
        eprintln!("{}", $crate::render::sanitize_text(&format!($($t)*)))
    };
}

/// `println!` for a person, sanitized like [`say_err!`].
macro_rules! say {
    ($($t:tt)*) => {
        println!("{}", $crate::render::sanitize_text(&format!($($t)*)))
    };
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
            ("render.rs", include_str!("render.rs")),
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
