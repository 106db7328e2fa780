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
//!
//! # Example: token statistics as rows
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let file = dir.path().join("s.jsonl");
//! # std::fs::write(&file, concat!(
//! #   r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#, "\n",
//! #   r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
//! #   r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"stop","timestamp":2}}"#, "\n",
//! # ))?;
//! let (sessions, unreadable) = arbor_view::stats_from_files(&[file]);
//! assert!(unreadable.is_empty());
//! let stats = arbor_view::aggregate_stats(&sessions, arbor_view::StatsBy::Model, None);
//! assert_eq!(stats.rows.len(), 1);
//! assert_eq!(stats.total.turns, 1);
//! assert_eq!(stats.total.path.tokens().input, 100.0);
//! let mut json = Vec::new();
//! stats.write_json(&mut json)?; // what `arbor stats --by model --json` prints
//! # Ok(())
//! # }
//! ```
//!
//! # Example: redacting a text
//!
//! ```
//! let text = "key: sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
//! let red = arbor_view::redact_text(text);
//! assert!(!red.contains("sk-ant-api03-aaaa"));
//! ```
// What an agent reads of a session (the data `arbor mcp` serves): its own `//!` docs (an
// outer doc here would make rustdoc resolve the module's links from this file).
pub mod agent;
mod export;
mod fork;
mod render;
mod snippet;
mod stats;
pub mod stats_catalog;
mod words;

/// The secret scanner and its redaction, the one `arbor secrets`, [`fork_redacted`] and the
/// export use: the rules (`find`, `Finder`), a text (`redact`), a JSON value or line, and a
/// whole session (`scan_doc`, `redact_doc`).
pub mod secrets;

/// Token usage and cost as arbor sums it (the one sum, shared with the catalog).
pub use arbor_store::usage;
pub use export::again::{redact_again, Seen};
pub use export::output::{
    assets_of, check_target, is_previous_export, write_export, Assets, Target, TargetError, MARKER,
};
pub use export::{
    entries_css, escape_html, export, html, html_entries, json, markdown, paths_of, redact,
    title_of, unresolved_image, Format, Options, Redactions, Report,
};
pub use fork::fork_redacted;
pub use render::{
    content_text, content_text_with, describe, describe_with, human_size, image_placeholder,
    one_line, sanitize_line, sanitize_text, Human, OneLine, TextOpts,
};
pub use secrets::redact as redact_text;
pub use stats::{
    activity as stats_activity, aggregate as aggregate_stats,
    aggregate_between as aggregate_stats_between, canon_of, from_files as stats_from_files,
    keep_model as stats_keep_model, parent_index, Activity as StatsActivity, By as StatsBy,
    Counted, Loaded as SessionSpends, Row as StatsRow, Stats,
};
pub use words::count;

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
