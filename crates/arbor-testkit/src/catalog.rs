//! Catalog fixtures for the catalog's tests (arbor-index's and arbor-cli's): a pi session of
//! one message ([`session`]), and a catalog with a directory indexed, texts included
//! ([`indexed`]).
use arbor_index::{Catalog, RefreshOptions};
use std::path::Path;

/// Opens (or creates) the catalog `db` and brings `dir` into it with its texts.
pub fn indexed(db: &Path, dir: &Path) -> Catalog {
    let mut cat = Catalog::open(db).expect("open catalog");
    cat.refresh_dirs(
        &[dir.to_path_buf()],
        RefreshOptions::default().with_texts(true),
        &mut |_| {},
    )
    .expect("refresh");
    cat
}

/// Writes a pi v3 session of one user message as `DIR/NAME.jsonl` (session id NAME); `text`
/// goes into the JSON as it is (no quotes or backslashes in it).
pub fn session(dir: &Path, name: &str, text: &str) {
    std::fs::write(
        dir.join(format!("{name}.jsonl")),
        format!(
            "{}\n{}\n",
            r#"{"type":"session","version":3,"id":"ID","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#
                .replace("ID", name),
            format_args!(
                r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
            )
        ),
    )
    .expect("write session");
}
