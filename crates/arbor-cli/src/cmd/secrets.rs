//! `arbor secrets`: where sessions hold API keys, tokens, private keys and passwords (never
//! the secrets themselves).
use crate::term::{Out, Paint, Term};
use anyhow::Result;
use arbor_store::locate::Locator;
use std::path::PathBuf;
use std::process::ExitCode;

/// `arbor secrets SESSION... | --all`. Exit status 1 when something was found (as a linter).
pub fn secrets(
    sessions: &[String],
    all: bool,
    json: bool,
    term: &Term,
    loc: &Locator,
) -> Result<ExitCode> {
    let mut files: Vec<PathBuf> = Vec::new();
    for s in sessions {
        files.push(loc.resolve_session(s)?);
    }
    if all {
        let mut every = loc.all_session_files();
        every.sort();
        files.extend(every);
    }
    if files.is_empty() {
        return Err(crate::report::Usage("name sessions, or --all".into()).into());
    }
    let mut total = 0usize;
    let mut out = Out::new(term);
    let mut list = Vec::new();
    let mut arr = arbor_core::json::JsonArray::new(&mut list);
    for f in &files {
        let doc = match arbor_store::load_doc(f) {
            Ok(d) => d,
            Err(e) => {
                say_err!("arbor: {}: not scanned: {e}", f.display());
                continue;
            }
        };
        for s in arbor_store::secrets::scan_doc(&doc) {
            total += 1;
            if json {
                arr.object(|o| {
                    o.str("path", &f.to_string_lossy())
                        .uint("line", s.line as u64)
                        .opt_str("entryId", s.entry_id.as_deref())
                        .str("field", &s.path)
                        .str("kind", s.kind)
                        .uint("chars", s.chars as u64);
                });
            } else {
                out.paint(Paint::Dim, &format!("{}:{}", f.display(), s.line))
                    .put("  ")
                    .paint(Paint::Warn, s.kind)
                    .put(&format!(
                        "  entry {} · {} · {} characters",
                        s.entry_id.as_deref().unwrap_or("(header)"),
                        s.path,
                        s.chars
                    ))
                    .nl();
            }
        }
    }
    arr.finish();
    if json {
        list.push(b'\n');
        std::io::Write::write_all(&mut crate::report::stdout(), &list)?;
    } else {
        out.print(term, false)?;
        say_err!(
            "arbor: {total} secret{} in {} session{}",
            if total == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
    }
    Ok(if total > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
