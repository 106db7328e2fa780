//! omp's terminal breadcrumbs: `<state dir>/terminal-sessions/<terminal id>` remembers the
//! last session of each terminal, so `--continue` resumes this terminal's session even when
//! several agents run in one project (omp 18, `session-paths.ts` and `pi-tui/src/ttyid.ts`).
//!
//! The file holds `cwd\nsessionFile\n`, then optional lines: `fresh` (a new session whose file
//! is not written yet) and `cwdstat <dev> <ino>` (to recognise a moved project).
use crate::paths;
use std::path::{Path, PathBuf};

/// omp's `getTerminalId()`: the TTY of stdin (`/dev/pts/3` → `pts-3`) when stdin is a
/// terminal, else the first of `$ZELLIJ_PANE_ID` (with `$ZELLIJ_SESSION_NAME`),
/// `$TMUX_PANE`, `$CMUX_SURFACE_ID`, `$KITTY_WINDOW_ID`, `$WEZTERM_PANE`, `$TERM_SESSION_ID`,
/// `$WT_SESSION`; `None` when no terminal can be named.
pub fn terminal_id() -> Option<String> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        if let Ok(p) = std::fs::read_link("/proc/self/fd/0") {
            let s = p.to_string_lossy();
            if let Some(rest) = s.strip_prefix("/dev/") {
                return Some(rest.replace('/', "-"));
            }
        }
    }
    terminal_id_from_env(&|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

/// The environment part of [`terminal_id`].
pub fn terminal_id_from_env(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(pane) = var("ZELLIJ_PANE_ID") {
        return Some(match var("ZELLIJ_SESSION_NAME") {
            Some(s) => format!("zellij-{}-{pane}", s.replace(['/', '\\'], "-")),
            None => format!("zellij-{pane}"),
        });
    }
    for (k, prefix) in [
        ("TMUX_PANE", "tmux"),
        ("CMUX_SURFACE_ID", "cmux"),
        ("KITTY_WINDOW_ID", "kitty"),
        ("WEZTERM_PANE", "wezterm"),
        ("TERM_SESSION_ID", "apple"),
        ("WT_SESSION", "wt"),
    ] {
        if let Some(v) = var(k) {
            return Some(format!("{prefix}-{v}"));
        }
    }
    None
}

/// The breadcrumb file of a terminal.
pub fn breadcrumb_path(agent_dir: &Path, terminal: &str) -> PathBuf {
    paths::state_dir(agent_dir)
        .join("terminal-sessions")
        .join(terminal)
}

/// A terminal's breadcrumb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breadcrumb {
    /// The cwd it was written for.
    pub cwd: String,
    /// The session file.
    pub session_file: PathBuf,
    /// The session file exists (is a file) now.
    pub exists: bool,
    /// A new session whose file was not written yet.
    pub fresh: bool,
    /// Device and inode of `cwd` when it was written.
    pub cwd_identity: Option<(String, String)>,
}

/// Reads a breadcrumb file as omp does: `None` for fewer than two lines, or when the session
/// file is missing and the breadcrumb is not `fresh`.
pub fn parse_breadcrumb(content: &str) -> Option<Breadcrumb> {
    let lines: Vec<&str> = arbor_core::js::trim(content).split('\n').collect();
    if lines.len() < 2 {
        return None;
    }
    let mut fresh = false;
    let mut ident = None;
    for extra in &lines[2..] {
        if *extra == "fresh" {
            fresh = true;
        } else if let Some(rest) = extra.strip_prefix("cwdstat ") {
            let mut it = rest.split(' ');
            if let (Some(d), Some(i)) = (it.next(), it.next()) {
                if !d.is_empty() && !i.is_empty() {
                    ident = Some((d.to_string(), i.to_string()));
                }
            }
        }
    }
    let session_file = PathBuf::from(lines[1]);
    let exists = std::fs::metadata(&session_file).is_ok_and(|m| m.is_file());
    (exists || fresh).then(|| Breadcrumb {
        cwd: lines[0].to_string(),
        session_file,
        exists,
        fresh,
        cwd_identity: ident,
    })
}

/// This terminal's breadcrumb under `agent_dir`, if any.
pub fn read_breadcrumb(agent_dir: &Path) -> Option<Breadcrumb> {
    let id = terminal_id()?;
    // A breadcrumb is a few hundred bytes; a device or FIFO planted in its place is not one.
    let content =
        crate::safe_fs::read_regular_at_most(&breadcrumb_path(agent_dir, &id), 1 << 20).ok()?;
    parse_breadcrumb(&String::from_utf8_lossy(&content))
}

/// Writes this terminal's breadcrumb as omp does (best effort; nothing without a terminal id).
pub fn write_breadcrumb(agent_dir: &Path, cwd: &str, session_file: &Path, fresh: bool) {
    let Some(id) = terminal_id() else { return };
    let file = breadcrumb_path(agent_dir, &id);
    let mut extras = String::new();
    if fresh {
        extras.push_str("fresh\n");
    }
    if let Ok(m) = std::fs::metadata(resolve(cwd)) {
        if m.is_dir() {
            use std::os::unix::fs::MetadataExt;
            extras.push_str(&format!("cwdstat {} {}\n", m.dev(), m.ino()));
        }
    }
    let content = format!("{cwd}\n{}\n{extras}", session_file.display());
    if let Some(dir) = file.parent() {
        let _ = crate::file::create_dir_private(dir);
    }
    // Replaced by a rename, never written through: a symlink planted at the breadcrumb's
    // name is replaced, not followed (`std::fs::write` would truncate its target).
    let _ = crate::safe_fs::replace_file(&file, content.as_bytes());
}

/// Lexical `path.resolve`.
fn resolve(p: &str) -> PathBuf {
    paths::resolve_lexical(p)
}

/// A sub-agent session (`<parent>/<task>.jsonl` next to `<parent>.jsonl`) resolves to the
/// top-level session, as omp's `resolveBreadcrumbToInteractiveRoot` does.
pub fn interactive_root(session_file: &Path) -> PathBuf {
    let mut cur = resolve(&session_file.to_string_lossy());
    for _ in 0..8 {
        let Some(dir) = cur.parent() else { break };
        let mut parent = dir.as_os_str().to_owned();
        parent.push(".jsonl");
        let parent = PathBuf::from(parent);
        if !parent.exists() {
            break;
        }
        cur = parent;
    }
    cur
}

/// What `--continue` resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContinueTarget {
    /// This session file.
    Session(PathBuf),
    /// A new session (omp: the breadcrumb marks a fresh session that was never written).
    New,
}

fn within(dir: &Path, file: &Path) -> bool {
    let canon =
        |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| resolve(&p.to_string_lossy()));
    canon(file).starts_with(canon(dir))
}

/// omp's `continueRecent` choice for `cwd` in `dir` (`explicit_dir`: the caller named the
/// directory): this terminal's breadcrumb when it was written for the same cwd (and lies in
/// `dir` when that was named), else the most recent session of `dir`, else a new session.
/// (omp's re-rooting of a moved project is not done: a breadcrumb of another cwd is ignored.)
pub fn omp_continue_target(
    agent_dir: &Path,
    cwd: &str,
    dir: &Path,
    explicit_dir: bool,
) -> ContinueTarget {
    continue_with(read_breadcrumb(agent_dir), cwd, dir, explicit_dir)
}

/// [`omp_continue_target`] with the breadcrumb given.
pub fn continue_with(
    crumb: Option<Breadcrumb>,
    cwd: &str,
    dir: &Path,
    explicit_dir: bool,
) -> ContinueTarget {
    if let Some(b) = crumb {
        if b.fresh
            && !b.exists
            && (!explicit_dir || within(dir, b.session_file.parent().unwrap_or(Path::new("/"))))
        {
            return ContinueTarget::New;
        }
        let file = interactive_root(&b.session_file);
        if resolve(&b.cwd) == resolve(cwd)
            && (!explicit_dir || within(dir, &file))
            && file.is_file()
        {
            return ContinueTarget::Session(file);
        }
    }
    match crate::discover::most_recent_session(dir) {
        Some(p) => ContinueTarget::Session(p),
        None => ContinueTarget::New,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_ids_from_env() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            terminal_id_from_env(&env(&[("TMUX_PANE", "%3"), ("KITTY_WINDOW_ID", "1")])),
            Some("tmux-%3".into())
        );
        assert_eq!(
            terminal_id_from_env(&env(&[
                ("ZELLIJ_PANE_ID", "2"),
                ("ZELLIJ_SESSION_NAME", "a/b")
            ])),
            Some("zellij-a-b-2".into())
        );
        assert_eq!(
            terminal_id_from_env(&env(&[("WT_SESSION", "x")])),
            Some("wt-x".into())
        );
        assert_eq!(terminal_id_from_env(&env(&[])), None);
    }

    #[test]
    fn breadcrumbs_choose_this_terminals_session() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let hdr = "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
        let older = dir.join("a.jsonl");
        let newer = dir.join("b.jsonl");
        std::fs::write(&older, hdr).unwrap();
        std::fs::write(&newer, hdr).unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&older)
            .unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1000))
            .unwrap();
        let crumb = parse_breadcrumb(&format!("/p\n{}\ncwdstat 1 2\n", older.display())).unwrap();
        assert_eq!(crumb.cwd_identity, Some(("1".into(), "2".into())));
        assert_eq!(
            continue_with(Some(crumb.clone()), "/p", &dir, false),
            ContinueTarget::Session(resolve(&older.to_string_lossy()))
        );
        // another cwd: the most recent session of the directory
        assert_eq!(
            continue_with(Some(crumb), "/q", &dir, false),
            ContinueTarget::Session(newer.clone())
        );
        // a fresh crumb whose file was never written: a new session
        let fresh =
            parse_breadcrumb(&format!("/p\n{}\nfresh\n", dir.join("c.jsonl").display())).unwrap();
        assert_eq!(
            continue_with(Some(fresh), "/p", &dir, false),
            ContinueTarget::New
        );
        // a missing file without `fresh`: no breadcrumb
        assert!(parse_breadcrumb(&format!("/p\n{}\n", dir.join("gone.jsonl").display())).is_none());
        assert!(parse_breadcrumb("only one line").is_none());
        // a sub-agent session resolves to its parent
        let sub = dir.join("a").join("task.jsonl");
        std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
        std::fs::write(&sub, hdr).unwrap();
        assert_eq!(interactive_root(&sub), resolve(&older.to_string_lossy()));
    }
}
