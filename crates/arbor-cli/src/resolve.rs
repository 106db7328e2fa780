//! `SESSION` arguments: a path, or a session id / unique id prefix found through discovery.
use anyhow::{bail, Result};
use arbor_core::doc::Dialect;
use arbor_store::paths;
use std::path::{Path, PathBuf};

/// The agent directories searched: `--agent-dir`, else `$PI_CODING_AGENT_DIR`, else pi's
/// and omp's defaults.
pub fn agent_dirs(over: Option<&Path>) -> Vec<PathBuf> {
    if let Some(d) = over {
        return vec![d.to_path_buf()];
    }
    let pi = paths::agent_dir(Dialect::Pi);
    let omp = paths::agent_dir(Dialect::Omp);
    if pi == omp {
        vec![pi]
    } else {
        vec![pi, omp]
    }
}

/// Every `*.jsonl` below the sessions roots (project directories, and omp's nested
/// sub-agent sessions).
pub fn all_session_files(over: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in agent_dirs(over) {
        let root = paths::sessions_root(&a);
        let mut stack = vec![(root, 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() && depth < 3 {
                    stack.push((p, depth + 1));
                } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                    out.push(p);
                }
            }
        }
    }
    out
}

fn id_of_file_name(p: &Path) -> Option<String> {
    let stem = p.file_stem()?.to_string_lossy().into_owned();
    Some(
        stem.rsplit_once('_')
            .map(|(_, id)| id.to_string())
            .unwrap_or(stem),
    )
}

/// Whether a file's name matches `lower` (a lowercased prefix) as omp's
/// `resolveResumableSession` matches: the part after the last `_` or the whole base name.
fn name_matches(f: &Path, lower: &str) -> bool {
    let base = f
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    base.starts_with(lower)
        || id_of_file_name(f).is_some_and(|id| id.to_lowercase().starts_with(lower))
}

/// The header id of a session file, read from its first lines only.
fn header_id(path: &Path) -> Option<String> {
    use std::io::{BufRead, BufReader};
    let mut r = BufReader::new(arbor_store::safe_fs::open_regular(path).ok()?);
    for _ in 0..2 {
        let mut line = Vec::new();
        r.read_until(b'\n', &mut line).ok()?;
        let l = line
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(&line);
        let f = arbor_core::entry::parse_fields(l).ok()?;
        match f.str(l, "type").as_deref() {
            Some("title") => continue,
            Some("session") => return f.str(l, "id").map(|s| s.into_owned()),
            _ => return None,
        }
    }
    None
}

/// The session directories of the current directory (pi's and omp's encodings).
fn local_dirs(agent_dir: Option<&Path>) -> Vec<PathBuf> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let cwd = cwd.to_string_lossy().into_owned();
    let mut v = Vec::new();
    for a in agent_dirs(agent_dir) {
        for d in [Dialect::Pi, Dialect::Omp] {
            let dir = paths::default_session_dir(d, &a, &cwd);
            if !v.contains(&dir) {
                v.push(dir);
            }
        }
    }
    v
}

/// Resolves `arg` to a session file: a path (anything with a `/`, ending in `.jsonl`, or an
/// existing file), else a session id or unique id prefix (case-insensitive; the file name's
/// part after its last `_`, the whole file name, or the header id). Sessions of the current
/// directory are preferred, as pi and omp search the current project before all of them.
pub fn resolve_session(arg: &str, agent_dir: Option<&Path>) -> Result<PathBuf> {
    let p = Path::new(arg);
    if p.exists() || arg.contains('/') || arg.ends_with(".jsonl") {
        return Ok(p.to_path_buf());
    }
    let files = all_session_files(agent_dir);
    let lower = arg.to_lowercase();
    let mut hits: Vec<PathBuf> = files
        .iter()
        .filter(|f| name_matches(f, &lower))
        .cloned()
        .collect();
    if hits.is_empty() {
        // File names normally carry the id; fall back to reading the headers.
        hits = files
            .iter()
            .filter(|f| header_id(f).is_some_and(|id| id.to_lowercase().starts_with(&lower)))
            .cloned()
            .collect();
    }
    if hits.len() > 1 {
        let local = local_dirs(agent_dir);
        let here: Vec<PathBuf> = hits
            .iter()
            .filter(|h| h.parent().is_some_and(|d| local.iter().any(|l| l == d)))
            .cloned()
            .collect();
        if here.len() == 1 {
            return Ok(here.into_iter().next().unwrap_or_default());
        }
    }
    match hits.len() {
        0 => bail!(
            "no session found matching '{arg}' (searched {} session files)",
            files.len()
        ),
        1 => Ok(hits.remove(0)),
        n => {
            let list: Vec<String> = hits
                .iter()
                .take(10)
                .map(|h| format!("  {}", h.display()))
                .collect();
            bail!(
                "'{arg}' matches {n} sessions; give more of the id:\n{}",
                list.join("\n")
            )
        }
    }
}
