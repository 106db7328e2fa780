//! What turns pi / oh-my-pi (omp) coding-agent sessions into things for people: the export
//! in every format (Markdown, one self-contained HTML page, arbor's JSON schema), the readable
//! view the `arbor` command's `show`, its browser's reader pane and the export share
//! (one-line descriptions, message text, text made safe to print), token and cost statistics,
//! and the redaction of secrets.
//!
//! The `arbor` command (crate `arbor-cli`) only parses flags, prints and runs its terminal
//! browser on top of this crate; other tools embed it the same way. Sessions are read with
//! [`arbor_store`] ([`arbor_store::load_doc`]); what this crate writes, it writes to any
//! [`std::io::Write`].
//!
//! Cargo features: `highlight` (on by default) highlights code blocks in the HTML export
//! with syntect; without it they are escaped plain text.
//!
//! # Example: a session as Markdown
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let file = dir.path().join("s.jsonl");
//! # std::fs::write(&file, concat!(
//! #   r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#, "\n",
//! #   r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}"#, "\n",
//! # ))?;
//! let mut doc = arbor_store::load_doc(&file)?;
//! // Secrets redacted first: every format then renders only redacted text.
//! let (_secrets, redactions) = arbor_view::redact(&mut doc)?;
//! let opts = arbor_view::Options::default().redacted(&redactions);
//! let paths = arbor_view::paths_of(&doc, None, false);
//! let mut out = Vec::new();
//! arbor_view::export(&doc, &file, arbor_view::Format::Md, &paths, &opts, &mut out)?;
//! assert!(String::from_utf8(out)?.contains("hello"));
//! # Ok(())
//! # }
//! ```
mod export;
mod render;
mod snippet;

pub use export::output::{
    assets_of, check_target, is_previous_export, write_export, Assets, Target, TargetError, MARKER,
};
pub use export::{
    export, html, json, markdown, paths_of, redact, Format, Options, Redactions, Report,
};
pub use render::{
    content_text, describe, describe_with, human_size, one_line, sanitize_line, sanitize_text,
    Human, OneLine,
};

#[cfg(test)]
mod tests {
    /// A library never prints: what it makes goes to the writer its caller gives it (the
    /// `arbor` command sanitizes what it prints; see its `report` module).
    #[test]
    fn no_module_prints() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![src];
        let mut seen = 0;
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("read src") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") || p.ends_with("lib.rs") {
                    continue;
                }
                seen += 1;
                let text = std::fs::read_to_string(&p).expect("read");
                for (n, line) in text.lines().enumerate() {
                    for bad in ["println!(", "eprintln!(", "print!(", "eprint!(", "stdout()"] {
                        let hit = line.match_indices(bad).any(|(i, _)| {
                            !line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                        });
                        assert!(!hit, "{}:{}: {bad}: {line}", p.display(), n + 1);
                    }
                }
            }
        }
        assert!(seen >= 8, "{seen} files read");
    }
}
