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
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
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
    Some(stem.rsplit_once('_').map(|(_, id)| id.to_string()).unwrap_or(stem))
}

/// Resolves `arg` to a session file.
pub fn resolve_session(arg: &str, agent_dir: Option<&Path>) -> Result<PathBuf> {
    let p = Path::new(arg);
    if p.exists() || arg.contains('/') || arg.ends_with(".jsonl") {
        return Ok(p.to_path_buf());
    }
    let files = all_session_files(agent_dir);
    let lower = arg.to_lowercase();
    let mut hits: Vec<PathBuf> = files
        .iter()
        .filter(|f| id_of_file_name(f).is_some_and(|id| id.to_lowercase().starts_with(&lower)))
        .cloned()
        .collect();
    if hits.is_empty() {
        // File names normally carry the id; fall back to reading headers.
        for f in &files {
            if let Ok(doc) = arbor_store::load_doc(f) {
                if doc.session_id().is_some_and(|id| id.to_lowercase().starts_with(&lower)) {
                    hits.push(f.clone());
                }
            }
        }
    }
    match hits.len() {
        0 => bail!("no session found matching '{arg}' (searched {} session files)", files.len()),
        1 => Ok(hits.remove(0)),
        n => {
            let list: Vec<String> = hits.iter().take(10).map(|h| format!("  {}", h.display())).collect();
            bail!("'{arg}' matches {n} sessions; give more of the id:\n{}", list.join("\n"))
        }
    }
}
