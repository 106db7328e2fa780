//! What belongs to a session file on disk, by name, so that `arbor rm` and `arbor trash` take
//! with a session exactly what arbor, pi and omp create for it and nothing a user put beside
//! it.
//!
//! - `<file>.lock`: the writer lock (arbor's, and omp's `flock` fallback), a regular file.
//! - `<file>.torn-<time>[-n]`, `<file>.quarantine-<time>[-n]`: arbor's repair sidecars
//!   (see `write_sidecar`), regular files.
//! - `<file>.arbor-merge`: the file as it was before a sync merge replaced it, kept while a
//!   process may still write to it (see `backend::sync_support::merge_sidecar_path`), a
//!   regular file.
//! - `<file>.<16 hex>.bak`: omp's backup of a rewrite that was interrupted, a regular file
//!   (omp promotes it back to `<file>` when `<file>` is missing, so it must go too).
//! - `<file minus .jsonl>/`: omp's artifact directory, only for an omp session and only when
//!   everything in it is what omp puts there (tool output logs `<n>.<tool>.log`, subagent
//!   sessions `<task>.jsonl` with their own sidecars and artifact directories, task outputs
//!   `<task>.md`, `draft.txt`, `.draft-only-session`). A pi project's `bugfix/` beside
//!   `bugfix.jsonl`, or an omp directory holding anything else, is left where it is.
//!
//! Anything else with the session's name as prefix (an export `bugfix.jsonl.md`, a directory
//! `bugfix.jsonl.d/`) is not the session's.
use std::path::{Path, PathBuf};

/// What belongs to one session file.
#[derive(Debug, Default)]
pub struct Belongings {
    /// Paths that go with the session (sorted sidecars, then the artifact directory).
    pub items: Vec<PathBuf>,
    /// The directory named like omp's artifact directory of an omp session, left in place
    /// because it holds what omp does not put there, and why.
    pub left: Option<(PathBuf, String)>,
}

/// Whether `name` is the name of a file arbor, pi or omp create beside the session file named
/// `session_name` (the lock, arbor's repair sidecars, a sync merge's old file, omp's rewrite
/// backups).
pub fn is_sidecar_name(session_name: &str, name: &str) -> bool {
    if crate::repair::is_sidecar_name(session_name, name) {
        return true;
    }
    let Some(rest) = name
        .strip_prefix(session_name)
        .and_then(|r| r.strip_prefix('.'))
    else {
        return false;
    };
    rest == "lock"
        || rest == "arbor-merge"
        || rest.strip_suffix(".bak").is_some_and(|id| {
            id.len() == 16
                && id
                    .bytes()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        })
}

/// Whether `name` (of an item trashed or found beside the session file `session_name`) is
/// one of the session's belongings by its name: a sidecar ([`is_sidecar_name`]) or omp's
/// artifact directory (the session's name without `.jsonl`).
pub fn is_belonging_name(session_name: &str, name: &str) -> bool {
    is_sidecar_name(session_name, name) || session_name.strip_suffix(".jsonl") == Some(name)
}

/// What belongs to `session` (see the module documentation). Only names that exist; symlinks
/// are never followed nor taken as sidecars.
pub fn belongings(session: &Path) -> Belongings {
    let mut out = Belongings::default();
    let Some(name) = session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return out;
    };
    let dir = match session.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    out.items = sidecars(dir, &name);
    if let Some(stem) = name.strip_suffix(".jsonl") {
        let artifacts = dir.join(stem);
        if std::fs::symlink_metadata(&artifacts).is_ok_and(|m| m.is_dir()) {
            let omp = crate::load_doc_lean(session)
                .is_ok_and(|d| d.dialect() == arbor_core::Dialect::Omp);
            // pi has no artifact directory: a directory of that name is the user's.
            if omp {
                match foreign_in_artifacts(&artifacts, 0) {
                    None => out.items.push(artifacts),
                    Some(why) => out.left = Some((artifacts, why)),
                }
            }
        }
    }
    out
}

/// The sidecars of the session named `name` in `dir`, sorted.
fn sidecars(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut side: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| is_sidecar_name(name, &e.file_name().to_string_lossy()))
        .filter(|e| std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file()))
        .map(|e| dir.join(e.file_name()))
        .collect();
    side.sort();
    side
}

/// The first thing in `dir` (an omp artifact directory) that omp does not put there, in
/// words; `None` when all of it is omp's.
fn foreign_in_artifacts(dir: &Path, depth: usize) -> Option<String> {
    if depth > 16 {
        return Some(format!("{}: nested too deep", dir.display()));
    }
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => return Some(format!("{}: {e}", dir.display())),
    };
    let names: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for n in &names {
        let p = dir.join(n);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            return Some(format!("{}: unreadable", p.display()));
        };
        let ok = if m.is_dir() {
            // A subagent's own artifact directory, beside its session.
            names.iter().any(|s| s == &format!("{n}.jsonl"))
                && foreign_in_artifacts(&p, depth + 1).is_none()
        } else if m.is_file() {
            is_artifact_file_name(n)
                || names
                    .iter()
                    .any(|s| s.ends_with(".jsonl") && is_sidecar_name(s, n))
        } else {
            false
        };
        if !ok {
            return Some(format!(
                "it holds {}, which omp does not put there",
                p.display()
            ));
        }
    }
    None
}

/// The names of files omp writes into an artifact directory.
fn is_artifact_file_name(n: &str) -> bool {
    let log = n
        .strip_suffix(".log")
        .and_then(|r| r.split_once('.'))
        .is_some_and(|(num, tool)| {
            !num.is_empty() && num.bytes().all(|c| c.is_ascii_digit()) && !tool.is_empty()
        });
    log || n == "draft.txt"
        || n == ".draft-only-session"
        || (n.len() > ".jsonl".len() && n.ends_with(".jsonl") && !n.starts_with('.'))
        || (n.len() > ".md".len() && n.ends_with(".md") && !n.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecar_names_are_exact() {
        let s = "a.jsonl";
        for yes in [
            "a.jsonl.lock",
            "a.jsonl.torn-2026-01-01T00-00-00-000Z",
            "a.jsonl.0123456789abcdef.bak",
            "a.jsonl.arbor-merge",
        ] {
            assert!(is_sidecar_name(s, yes), "{yes}");
        }
        for no in [
            "a.jsonl.md",
            "a.jsonl.html",
            "a.jsonl.assets",
            "a.jsonl.lock.md",
            "a.jsonl.bak",
            "a.jsonl.0123456789ABCDEF.bak",
            "a.jsonl.d",
            "a.jsonl.arbor-merge.md",
        ] {
            assert!(!is_sidecar_name(s, no), "{no}");
        }
        assert!(is_belonging_name(s, "a"));
        assert!(!is_belonging_name(s, "a.md"));
    }

    #[test]
    fn artifact_file_names() {
        for yes in [
            "1.bash.log",
            "12.read.log",
            "task1.jsonl",
            "task1.md",
            "draft.txt",
        ] {
            assert!(is_artifact_file_name(yes), "{yes}");
        }
        for no in [
            "notes.txt",
            "x.log",
            ".jsonl",
            "main.rs",
            ".md",
            "a.bash.log",
        ] {
            assert!(!is_artifact_file_name(no), "{no}");
        }
    }
}
