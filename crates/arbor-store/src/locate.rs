//! Finding sessions from what a user types: the agent directories to search (one
//! [`Locator`], built once from an optional override), and a `SESSION` argument resolved to a
//! file: a path, or a session id / unique id prefix.
use crate::paths;
use arbor_core::doc::Dialect;
use std::path::{Path, PathBuf};

/// Why a `SESSION` argument names no single session, or a scope no directories.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocateError {
    /// A directory the user named is not one.
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
    /// A directory the user named cannot be used.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No session file matches.
    #[error("no session found matching '{arg}' (searched {searched} session files in {}){}", where_text(.looked_in), if *.scoped { "" } else { "; a session of another directory: --dir DIR" })]
    NotFound {
        /// The argument.
        arg: String,
        /// How many session files were searched.
        searched: usize,
        /// Where: the sessions roots of the agent directories, or the `--dir` directories.
        looked_in: Vec<PathBuf>,
        /// Whether the search was limited to directories the user named (`--dir`).
        scoped: bool,
    },
    /// No session to take when none was named: the scope holds no session file.
    #[error("no sessions {} (name one, or see arbor ls --all)", match .project { Some(p) => format!("for {}", p.display()), None => format!("in {}", where_text(.looked_in)) })]
    NoneHere {
        /// The current directory, when it was the scope (the project has no session directory).
        project: Option<PathBuf>,
        /// The directories looked in (empty with `project`).
        looked_in: Vec<PathBuf>,
    },
    /// More than one session matches (the first ten are listed, one per line).
    #[error("'{arg}' matches {count} sessions; give more of the id, or the path:\n{}", .matches.iter().map(|m| format!("  {}", m.display())).collect::<Vec<_>>().join("\n"))]
    Ambiguous {
        /// The argument.
        arg: String,
        /// How many sessions match.
        count: usize,
        /// Up to ten of them.
        matches: Vec<PathBuf>,
    },
}

/// The directories of an error, for a person: `~/` for the home directory, comma-separated;
/// "no directory" when there are none.
fn where_text(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "no directory".to_string();
    }
    let home = paths::home_dir();
    dirs.iter()
        .map(|d| match d.strip_prefix(&home) {
            Ok(rest) if !home.as_os_str().is_empty() && home != Path::new("/") => {
                format!("~/{}", rest.display())
            }
            _ => d.display().to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where sessions are looked for: one agent directory given by the user, else
/// `$PI_CODING_AGENT_DIR`, else pi's and omp's defaults. Built once per command and passed
/// down (instead of an optional override threaded through every function).
///
/// ```
/// let loc = arbor_store::locate::Locator::new(Some("/tmp/agent".into()));
/// assert_eq!(loc.agent_dirs(), vec![std::path::PathBuf::from("/tmp/agent")]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Locator {
    over: Option<PathBuf>,
    /// `--dir`: the session directory a `SESSION` argument is resolved in instead of the
    /// agent directories (what `ls --dir` listed).
    within: Option<PathBuf>,
    /// `--all`: no preference for the current project's sessions.
    everywhere: bool,
}

impl Locator {
    /// A locator for `agent_dir` (`None`: the environment's and the defaults).
    pub fn new(agent_dir: Option<PathBuf>) -> Locator {
        Locator {
            over: agent_dir,
            within: None,
            everywhere: false,
        }
    }

    /// This locator with a command's scope flags: `dir` (`--dir`) is the one session
    /// directory a `SESSION` argument is resolved in, and the one whose most recent session
    /// is taken when none is named; `all` (`--all`) resolves over every project without
    /// preferring the current one's sessions. The same flags as `ls` takes, so that an id
    /// `ls --dir DIR` prints resolves with `--dir DIR`.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(
    ///     dir.path().join("notes.jsonl"),
    ///     "{\"type\":\"session\",\"version\":3,\"id\":\"01a2f3\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    /// )?;
    /// let loc = arbor_store::locate::Locator::new(Some("/nonexistent/agent".into()))
    ///     .scoped(Some(dir.path().to_path_buf()), false);
    /// // The header's id: the file's name does not carry one.
    /// assert_eq!(loc.resolve_session("01a2")?, dir.path().join("notes.jsonl"));
    /// assert_eq!(loc.most_recent()?, dir.path().join("notes.jsonl"));
    /// let e = loc.resolve_session("ffff").unwrap_err().to_string();
    /// assert!(e.contains("searched 1 session files in "), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scoped(mut self, dir: Option<PathBuf>, all: bool) -> Locator {
        self.within = dir;
        self.everywhere = all;
        self
    }

    /// The session directory `--dir` named, if any.
    pub fn within(&self) -> Option<&Path> {
        self.within.as_deref()
    }

    /// The session a command takes when none is named, as pi's `--continue` takes one: the
    /// most recently modified session file (with a valid header) of the `--dir` directory,
    /// else of the current directory's session directories (pi's and omp's), else of every
    /// project with `--all`.
    pub fn most_recent(&self) -> Result<PathBuf, LocateError> {
        let scope = Scope::of(self.within.as_deref(), self.everywhere);
        let dirs = self.project_dirs(scope)?;
        let newest = dirs
            .iter()
            .filter_map(|d| crate::discover::most_recent_session(d))
            .map(|p| (mtime(&p), p))
            .fold(
                None::<(std::time::SystemTime, PathBuf)>,
                |best, (m, p)| match best {
                    Some((bm, bp)) if bm >= m => Some((bm, bp)),
                    _ => Some((m, p)),
                },
            );
        match newest {
            Some((_, p)) => Ok(p),
            None => Err(LocateError::NoneHere {
                project: match (scope, dirs.is_empty()) {
                    (Scope::Current, true) => std::env::current_dir().ok(),
                    _ => None,
                },
                looked_in: match scope {
                    Scope::All if dirs.is_empty() => self.sessions_roots(),
                    _ => dirs,
                },
            }),
        }
    }

    /// The sessions roots of the agent directories (`<agent>/sessions`).
    fn sessions_roots(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = Vec::new();
        for a in self.agent_dirs() {
            let r = paths::sessions_root(&a);
            if !v.contains(&r) {
                v.push(r);
            }
        }
        v
    }

    /// The sessions roots of the agent directories that are directories now, each once: what
    /// a watcher watches (`arbor index --watch`, `arbor mcp`), and what the files a table's
    /// short ids are unique among lie under.
    pub fn existing_sessions_roots(&self) -> Vec<PathBuf> {
        self.sessions_roots()
            .into_iter()
            .filter(|r| r.is_dir())
            .collect()
    }

    /// The directories whose sessions a server (`arbor mcp`, `arbor serve`) serves, as real
    /// paths: `dir` (the `--dir` directory) when given, else the sessions roots of the agent
    /// directories (those that exist).
    pub fn served_roots(&self, dir: Option<&Path>) -> Vec<PathBuf> {
        let dirs: Vec<PathBuf> = match dir {
            Some(d) => vec![d.to_path_buf()],
            None => self
                .agent_dirs()
                .iter()
                .map(|a| paths::sessions_root(a))
                .collect(),
        };
        dirs.iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect()
    }

    /// The agent directory the user gave, if any.
    pub fn agent_override(&self) -> Option<&Path> {
        self.over.as_deref()
    }

    /// The agent directories searched.
    pub fn agent_dirs(&self) -> Vec<PathBuf> {
        agent_dirs(self.over.as_deref())
    }

    /// Every `*.jsonl` below the sessions roots.
    pub fn all_session_files(&self) -> Vec<PathBuf> {
        all_session_files(self.over.as_deref())
    }

    /// [`Locator::all_session_files`], and the directories that could not be read.
    pub fn all_session_files_reporting(&self) -> (Vec<PathBuf>, Vec<(PathBuf, std::io::Error)>) {
        all_session_files_reporting(self.over.as_deref())
    }

    /// Resolves a `SESSION` argument: a path (anything with a `/`, ending in `.jsonl`, or an
    /// existing file), else a session id or unique id prefix (see the function below).
    pub fn resolve_session(&self, arg: &str) -> Result<PathBuf, LocateError> {
        resolve_session(arg, self)
    }
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or(std::time::UNIX_EPOCH)
}

/// The agent directories searched: `--agent-dir`, else `$PI_CODING_AGENT_DIR`, else pi's
/// and omp's defaults.
fn agent_dirs(over: Option<&Path>) -> Vec<PathBuf> {
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
fn all_session_files(over: Option<&Path>) -> Vec<PathBuf> {
    all_session_files_reporting(over).0
}

/// [`Locator::all_session_files`], and the directories below the roots that could not be
/// read (with why): a caller that promises to have looked at every session names them.
fn all_session_files_reporting(
    over: Option<&Path>,
) -> (Vec<PathBuf>, Vec<(PathBuf, std::io::Error)>) {
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    for a in agent_dirs(over) {
        let root = paths::sessions_root(&a);
        let mut stack = vec![(root, 0)];
        while let Some((dir, depth)) = stack.pop() {
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                // A root that does not exist (no pi, or no omp) holds nothing.
                Err(e) if depth == 0 && e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    unreadable.push((dir, e));
                    continue;
                }
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
    (out, unreadable)
}

/// The session id a file's name carries: the part of its stem after the last `_` (pi and omp
/// name sessions `<time>_<id>.jsonl`), else the whole stem. This is what [`Locator::resolve_session`]
/// matches an id prefix against.
pub fn id_of_file_name(p: &Path) -> Option<String> {
    let stem = p.file_stem()?.to_string_lossy().into_owned();
    Some(
        stem.rsplit_once('_')
            .map(|(_, id)| id.to_string())
            .unwrap_or(stem),
    )
}

/// Whether a file's name is trusted to carry its session id without reading the header: pi
/// and omp name sessions `<time>_<uuid>.jsonl` (a suffix after the UUID, as copies made by
/// tools carry, is kept: reading the header of each of 10,000 such files on every `ls`
/// would cost more than the listing). A file renamed by hand (`notes.jsonl`), an old
/// (v1) file named otherwise (`<time>_pi-real-v1-fixture.jsonl`), or one with an id chosen by
/// hand is not, and its id is its header's (one bounded read, for those files only).
pub fn name_carries_id(p: &Path) -> bool {
    p.file_stem().is_some_and(|s| {
        s.to_string_lossy()
            .rsplit_once('_')
            .is_some_and(|(_, id)| id.get(..36).is_some_and(is_uuid))
    })
}

/// Whether `s` is a UUID in its text form (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The session id of a file as `ls` shows it and the resolver matches it: the id its name
/// carries ([`id_of_file_name`]), else (a name without one: [`name_carries_id`]) its header's
/// id, else its name's stem (an empty or headerless file).
pub fn id_of_file(p: &Path) -> Option<String> {
    if !name_carries_id(p) {
        if let Some(id) = crate::discover::header_id(p) {
            return Some(id);
        }
    }
    id_of_file_name(p)
}

/// Whether a file's name matches `lower` (a lowercased prefix) as omp's
/// `resolveResumableSession` matches: the part after the last `_` or the whole base name;
/// or, for a file whose name does not carry its id, the header's id ([`id_of_file`]).
fn name_matches(f: &Path, lower: &str) -> bool {
    let base = f
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    base.starts_with(lower) || id_of_file(f).is_some_and(|id| id.to_lowercase().starts_with(lower))
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
/// directory are preferred, as pi and omp search the current project before all of them
/// (not with `--all`). With `--dir` only that directory's `*.jsonl` files are searched.
fn resolve_session(arg: &str, loc: &Locator) -> Result<PathBuf, LocateError> {
    let agent_dir = loc.over.as_deref();
    let p = Path::new(arg);
    if p.exists() || arg.contains('/') || arg.ends_with(".jsonl") {
        return Ok(p.to_path_buf());
    }
    let files = match &loc.within {
        Some(d) => {
            loc.project_dirs(Scope::Dir(d))?;
            crate::discover::session_files(d)
        }
        None => all_session_files(agent_dir),
    };
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
            .filter(|f| {
                crate::discover::header_id(f)
                    .is_some_and(|id| id.to_lowercase().starts_with(&lower))
            })
            .cloned()
            .collect();
    }
    if hits.len() > 1 && !loc.everywhere && loc.within.is_none() {
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
        0 => Err(LocateError::NotFound {
            arg: arg.to_string(),
            searched: files.len(),
            looked_in: match &loc.within {
                Some(d) => vec![d.clone()],
                None => loc.sessions_roots(),
            },
            scoped: loc.within.is_some(),
        }),
        1 => Ok(hits.remove(0)),
        count => Err(LocateError::Ambiguous {
            arg: arg.to_string(),
            count,
            matches: hits.into_iter().take(10).collect(),
        }),
    }
}

/// Which project directories a command looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// One directory of session files.
    Dir(&'a Path),
    /// Every project directory of every agent directory.
    All,
    /// The current directory's session directories (pi's and omp's encodings).
    Current,
}

impl<'a> Scope<'a> {
    /// The scope of the flags every command shares: `--dir DIR` (that directory), else
    /// `--all` (every project), else the current directory's project.
    ///
    /// ```
    /// use arbor_store::locate::Scope;
    /// use std::path::Path;
    /// assert!(matches!(Scope::of(None, true), Scope::All));
    /// assert!(matches!(Scope::of(Some(Path::new("/s")), true), Scope::Dir(_)));
    /// assert!(matches!(Scope::of(None, false), Scope::Current));
    /// ```
    pub fn of(dir: Option<&'a Path>, all: bool) -> Scope<'a> {
        match (dir, all) {
            (Some(d), _) => Scope::Dir(d),
            (None, true) => Scope::All,
            (None, false) => Scope::Current,
        }
    }
}

impl Locator {
    /// The project directories under the sessions roots of the agent directories: pi's
    /// `listAll` (subdirectories of the root) and omp's (`*/*.jsonl`), sorted per root.
    pub fn all_project_dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut roots: Vec<PathBuf> = Vec::new();
        for a in self.agent_dirs() {
            let r = paths::sessions_root(&a);
            if !roots.contains(&r) {
                roots.push(r);
            }
        }
        for root in roots {
            let Ok(rd) = std::fs::read_dir(&root) else {
                continue;
            };
            let mut dirs: Vec<PathBuf> = rd
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            dirs.sort();
            out.extend(dirs);
        }
        out
    }

    /// The directories of a scope. A directory the user named must be one: a typo is an
    /// error, not "no sessions". The current directory's scope holds only directories that
    /// exist.
    pub fn project_dirs(&self, scope: Scope<'_>) -> Result<Vec<PathBuf>, LocateError> {
        Ok(match scope {
            Scope::Dir(d) => {
                match std::fs::metadata(d) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => return Err(LocateError::NotADirectory(d.to_path_buf())),
                    Err(source) => {
                        return Err(LocateError::Io {
                            path: d.to_path_buf(),
                            source,
                        })
                    }
                }
                vec![d.to_path_buf()]
            }
            Scope::All => self.all_project_dirs(),
            Scope::Current => {
                let cwd = std::env::current_dir().map_err(|source| LocateError::Io {
                    path: PathBuf::from("."),
                    source,
                })?;
                self.project_dirs_for_cwd(&cwd.to_string_lossy())
            }
        })
    }

    /// The existing session directories of pi and omp for the working directory `cwd`.
    pub fn project_dirs_for_cwd(&self, cwd: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = Vec::new();
        for a in self.agent_dirs() {
            for d in [Dialect::Pi, Dialect::Omp] {
                let dir = paths::default_session_dir(d, &a, cwd);
                if !v.contains(&dir) && dir.is_dir() {
                    v.push(dir);
                }
            }
        }
        v
    }
}

fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Whether a session directory is omp's: under the sessions root of omp's agent directory
/// (`$PI_CODING_AGENT_DIR`, else `~/<$PI_CONFIG_DIR or .omp>/agent` or its profile) or of
/// omp's default one. When pi and omp share the agent directory (`$PI_CODING_AGENT_DIR`), a
/// directory named in pi's encoding (`--…--`) is pi's.
pub fn is_omp_dir(dir: &Path) -> bool {
    let d = real(dir);
    let under = |agent: PathBuf| d.starts_with(real(&paths::sessions_root(&agent)));
    let omp = under(paths::agent_dir(Dialect::Omp)) || under(paths::omp_default_agent_dir());
    if !omp {
        return false;
    }
    if under(paths::agent_dir(Dialect::Pi)) {
        let name = d.file_name().map(|n| n.to_string_lossy().into_owned());
        return !name.is_some_and(|n| n.len() >= 4 && n.starts_with("--") && n.ends_with("--"));
    }
    true
}

/// The command that resumes a session of `tool` in its agent, program and arguments: `pi
/// --session PATH` for pi files, `omp --session PATH` for omp files; `$ARBOR_PI` /
/// `$ARBOR_OMP` replace the command (words split on spaces, the path added last).
pub fn resume_command(tool: Dialect, session: &Path) -> Vec<String> {
    let (var, default) = match tool {
        Dialect::Pi => ("ARBOR_PI", "pi --session"),
        Dialect::Omp => ("ARBOR_OMP", "omp --session"),
    };
    let spec = std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_string());
    let mut words: Vec<String> = spec.split_whitespace().map(str::to_string).collect();
    words.push(session.to_string_lossy().into_owned());
    words
}

/// `words` as one line a POSIX shell reads back as those words (each quoted unless plain).
///
/// ```
/// let w = ["pi".to_string(), "--session".into(), "/a b/it's.jsonl".into()];
/// assert_eq!(arbor_store::locate::shell_line(&w), r#"pi --session '/a b/it'\''s.jsonl'"#);
/// ```
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `p` as the real file it names, when that lies below one of `roots` ([`Locator::served_roots`])
/// and is a `*.jsonl` regular file; else why not. What a server checks before it reads or
/// writes a session file it was asked about (a symlink planted in a sessions directory
/// that points elsewhere is refused: its real path is outside).
pub fn served_session_file(roots: &[PathBuf], p: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(p).map_err(|e| format!("cannot be read: {e}"))?;
    if !roots.iter().any(|r| real.starts_with(r)) {
        return Err("outside the agent directories this server serves".into());
    }
    if real.extension().is_none_or(|x| x != "jsonl") {
        return Err("not a session file (*.jsonl)".into());
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    Ok(real)
}
