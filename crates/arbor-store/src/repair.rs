//! Repairs that never lose a byte: torn tails go to a sidecar before the file is cut.
use crate::backend::files::FileWriter;
use crate::error::{IoContext, StoreError};
use crate::file::write_new_owned;
use arbor_core::doc::{BadLine, SessionDoc};
use std::io;
use std::path::{Path, PathBuf};

/// The kinds of sidecar arbor writes beside a session: `torn` (a torn last line, see
/// [`save_torn_tail`]) and `quarantine` (what a repair removed).
pub const SIDECAR_KINDS: [&str; 2] = ["torn", "quarantine"];

/// Whether `name` is the name of a sidecar [`write_sidecar`] writes beside the session file
/// named `session_name`: `<session_name>.<kind>-<YYYY-MM-DDTHH-MM-SS-mmmZ>`, optionally `-<n>`,
/// with a kind of [`SIDECAR_KINDS`]. Nothing else (an export `<session>.md`, a user's file
/// `<session>.torn-notes`) has this shape.
pub fn is_sidecar_name(session_name: &str, name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(session_name)
        .and_then(|r| r.strip_prefix('.'))
    else {
        return false;
    };
    SIDECAR_KINDS.iter().any(|kind| {
        rest.strip_prefix(kind)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|r| {
                let b = r.as_bytes();
                // 2026-01-01T00-00-00-000Z
                let shape = b"dddd-dd-ddTdd-dd-dd-dddZ";
                b.len() >= shape.len()
                    && shape.iter().zip(b).all(|(s, c)| match s {
                        b'd' => c.is_ascii_digit(),
                        _ => s == c,
                    })
                    && match &r[shape.len()..] {
                        "" => true,
                        n => n.strip_prefix('-').is_some_and(|n| {
                            !n.is_empty() && n.len() <= 4 && n.bytes().all(|c| c.is_ascii_digit())
                        }),
                    }
            })
    })
}

/// Writes `content` to a new sidecar beside `session`, `<session>.<what>-<file timestamp>`
/// (`-1`, `-2`, ... added while the name is taken), fsynced, and returns its path. The sidecar
/// is created with `O_EXCL | O_NOFOLLOW` (a planted file or symlink of that name is never
/// written through), gets the session's owner where the caller may give it (root), and is
/// removed again if it cannot be written whole (a full disk leaves no empty sidecar).
/// `session` should be the session's real path ([`crate::lock::WriterLock::real_path`]).
pub fn write_sidecar(session: &Path, what: &str, content: &[u8]) -> Result<PathBuf, StoreError> {
    let ts = crate::ids::file_timestamp(&crate::ids::now_iso());
    write_sidecar_at(session, what, &ts, content)
}

fn write_sidecar_at(
    session: &Path,
    what: &str,
    ts: &str,
    content: &[u8],
) -> Result<PathBuf, StoreError> {
    let base = session.as_os_str().to_string_lossy().into_owned();
    let owner = std::fs::metadata(session).ok();
    for n in 0..10_000u32 {
        let p = if n == 0 {
            PathBuf::from(format!("{base}.{what}-{ts}"))
        } else {
            PathBuf::from(format!("{base}.{what}-{ts}-{n}"))
        };
        match write_new_owned(&p, content, owner.as_ref()) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).at(&p),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free name for a {what} sidecar"),
    ))
    .at(session)
}

/// Moves the torn last line of a session (as found in `doc`) to a sidecar file, fsynced,
/// then cuts the session back to its last complete line through its writer
/// ([`FileWriter::cut`]: only if the file is still what was read). Returns the sidecar's path.
pub fn save_torn_tail(
    writer: &mut FileWriter,
    doc: &SessionDoc,
    torn: &BadLine,
) -> Result<PathBuf, StoreError> {
    let data = doc.base_bytes();
    let tail = data.get(torn.offset..).unwrap_or_default();
    let sidecar = write_sidecar(writer.real_path(), "torn", tail)?;
    writer.cut(torn.offset as u64, data.len() as u64)?;
    Ok(sidecar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn sidecar_names_are_recognised_exactly() {
        let s = "a.jsonl";
        for yes in [
            "a.jsonl.torn-2026-01-01T00-00-00-000Z",
            "a.jsonl.quarantine-2026-01-01T00-00-00-000Z-12",
        ] {
            assert!(is_sidecar_name(s, yes), "{yes}");
        }
        for no in [
            "a.jsonl.md",
            "a.jsonl.lock",
            "a.jsonl.torn-notes",
            "a.jsonl.torn-2026-01-01T00-00-00-000Z.md",
            "a.jsonl.torn-2026-01-01T00-00-00-000Z-",
            "a.jsonl.quarantine-2026-01-01T00-00-00-000",
            "b.jsonl.torn-2026-01-01T00-00-00-000Z",
            "a.jsonltorn-2026-01-01T00-00-00-000Z",
        ] {
            assert!(!is_sidecar_name(s, no), "{no}");
        }
        // What write_sidecar writes is recognised.
        let dir = tempfile::tempdir().expect("tempdir");
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, b"{}\n").expect("session");
        for kind in SIDECAR_KINDS {
            for _ in 0..2 {
                let p = write_sidecar(&session, kind, b"x").expect("sidecar");
                let name = p.file_name().expect("name").to_string_lossy().into_owned();
                assert!(is_sidecar_name("s.jsonl", &name), "{name}");
            }
        }
    }

    #[test]
    fn a_planted_sidecar_name_is_never_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, b"{}\n").expect("session");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").expect("victim");
        let ts = "2026-01-01T00-00-00-000Z";
        // Someone guessed the first two names: a symlink to a victim, a dangling symlink.
        symlink(&victim, dir.path().join(format!("s.jsonl.torn-{ts}"))).expect("plant");
        symlink(
            dir.path().join("made-through-link"),
            dir.path().join(format!("s.jsonl.torn-{ts}-1")),
        )
        .expect("plant");
        let side = write_sidecar_at(&session, "torn", ts, b"tail").expect("sidecar");
        assert_eq!(side, dir.path().join(format!("s.jsonl.torn-{ts}-2")));
        assert_eq!(std::fs::read(&side).expect("read"), b"tail");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"keep");
        assert!(!dir.path().join("made-through-link").exists());
    }
}
