//! Where sessions live: agent directories, per-cwd session directories, file names.
use arbor_core::doc::Dialect;
use std::path::{Path, PathBuf};

/// `path` with `suffix` appended to its last component, byte for byte (`s.jsonl` →
/// `s.jsonl.lock`, `catalog.db` → `catalog.db-wal`): the name of a file that sits beside
/// another and belongs to it.
///
/// ```
/// use std::path::Path;
/// let p = arbor_store::paths::with_suffix(Path::new("/a/s.jsonl"), ".lock");
/// assert_eq!(p, Path::new("/a/s.jsonl.lock"));
/// ```
pub fn with_suffix(path: &Path, suffix: impl AsRef<std::ffi::OsStr>) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The user's home directory (`$HOME`).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The OS user running arbor, as a person names it: `$USER` when set (not empty), else the
/// login name of the effective uid (`getpwuid_r`), else `None`. `arbor sync push` records it
/// with each session it creates in a shared store.
pub fn user_name() -> Option<String> {
    if let Some(u) = env_nonempty("USER") {
        return Some(u);
    }
    // SAFETY: `passwd` is a plain C struct of integers and pointers, for which all zeroes
    // (null pointers) is a valid value; getpwuid_r fills it.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to memory of ours of the length given; `out` is either null or
    // `&mut pw`, whose strings point into `buf`, read before `buf` is dropped.
    let r = unsafe {
        libc::getpwuid_r(
            crate::euid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    if r != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded: pw_name is a NUL-terminated string inside `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
    Some(name.to_string_lossy().into_owned()).filter(|n| !n.is_empty())
}

/// Expands `~` and `~/...` as pi's `getAgentDir` does (plain concatenation, no resolving).
pub fn expand_tilde(v: &str) -> PathBuf {
    if v == "~" {
        home_dir()
    } else if let Some(rest) = v.strip_prefix("~/") {
        let mut s = home_dir().into_os_string();
        s.push("/");
        s.push(rest);
        PathBuf::from(s)
    } else {
        PathBuf::from(v)
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// omp's profile (`$OMP_PROFILE`, else `$PI_PROFILE`; blank or `default`: none). An invalid
/// name counts as none (omp refuses to start with one).
pub fn omp_profile() -> Option<String> {
    let raw = match std::env::var("OMP_PROFILE") {
        Ok(v) => v,
        Err(_) => std::env::var("PI_PROFILE").ok()?,
    };
    let p = raw.trim();
    let valid = !p.is_empty()
        && p != "default"
        && p.len() <= 64
        && p.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && p.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
        && !p.ends_with('.');
    valid.then(|| p.to_string())
}

fn omp_config_root() -> PathBuf {
    let cfg = env_nonempty("PI_CONFIG_DIR").unwrap_or_else(|| ".omp".into());
    let root = home_dir().join(cfg);
    match omp_profile() {
        Some(p) => root.join("profiles").join(p),
        None => root,
    }
}

/// omp's default agent directory (`~/<$PI_CONFIG_DIR or .omp>/agent`, or a profile's), before
/// any `$PI_CODING_AGENT_DIR` override.
pub fn omp_default_agent_dir() -> PathBuf {
    omp_config_root().join("agent")
}

/// The agent directory of a tool: `$PI_CODING_AGENT_DIR` when set (both tools read it; omp
/// ignores it under a named profile), else `~/.pi/agent` for pi and
/// `~/<$PI_CONFIG_DIR or .omp>/agent` for omp (`.../profiles/<name>/agent` with
/// `$OMP_PROFILE`).
pub fn agent_dir(dialect: Dialect) -> PathBuf {
    if dialect == Dialect::Omp && omp_profile().is_some() {
        return omp_default_agent_dir();
    }
    if let Some(v) = env_nonempty("PI_CODING_AGENT_DIR") {
        return expand_tilde(&v);
    }
    match dialect {
        Dialect::Pi => home_dir().join(".pi").join("agent"),
        Dialect::Omp => omp_default_agent_dir(),
    }
}

/// Where omp keeps an agent directory's data of one XDG category (`"DATA"`, `"STATE"`,
/// `"CACHE"`): for omp's default agent directory on Linux, `$XDG_<CATEGORY>_HOME/omp` (or
/// its `profiles/<name>`) once that directory exists (`omp config init-xdg`); else the agent
/// directory itself.
pub fn omp_xdg_dir(agent_dir: &Path, category: &str) -> PathBuf {
    if agent_dir == omp_default_agent_dir() {
        if let Some(base) = env_nonempty(&format!("XDG_{category}_HOME")) {
            let app = PathBuf::from(base).join("omp");
            let dir = match omp_profile() {
                Some(p) => app.join("profiles").join(p),
                None => app,
            };
            if dir.is_dir() {
                return dir;
            }
        }
    }
    agent_dir.to_path_buf()
}

/// The directory holding `sessions/`, `history.db` and `blobs/` of an agent directory (see
/// [`omp_xdg_dir`]).
pub fn data_dir(agent_dir: &Path) -> PathBuf {
    omp_xdg_dir(agent_dir, "DATA")
}

/// The directory holding omp's `terminal-sessions/` breadcrumbs of an agent directory.
pub fn state_dir(agent_dir: &Path) -> PathBuf {
    omp_xdg_dir(agent_dir, "STATE")
}

/// omp's prompt history database of an agent directory.
pub fn history_db(agent_dir: &Path) -> PathBuf {
    data_dir(agent_dir).join("history.db")
}

/// The sessions root: `$PI_SESSIONS_DIR` when set, else `<agent dir>/sessions` (omp with XDG
/// directories: `$XDG_DATA_HOME/omp/sessions`).
pub fn sessions_root(agent_dir: &Path) -> PathBuf {
    match env_nonempty("PI_SESSIONS_DIR") {
        Some(v) => expand_tilde(&v),
        None => data_dir(agent_dir).join("sessions"),
    }
}

fn replace_seps(s: &str) -> String {
    s.chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect()
}

fn strip_one_sep(s: &str) -> &str {
    s.strip_prefix('/')
        .or_else(|| s.strip_prefix('\\'))
        .unwrap_or(s)
}

/// pi's per-cwd directory name: `--` + cwd without one leading separator, with `/`, `\`
/// and `:` replaced by `-`, + `--`.
pub fn encode_cwd_pi(cwd: &str) -> String {
    format!("--{}--", replace_seps(strip_one_sep(cwd)))
}

/// omp's per-cwd directory name: home-relative `-rest` for paths under `$HOME`, else pi's.
pub fn encode_cwd_omp(cwd: &str, home: &str) -> String {
    let under = cwd == home
        || cwd
            .strip_prefix(home)
            .is_some_and(|r| r.starts_with('/') || r.starts_with('\\'));
    if under && !home.is_empty() {
        let rel = strip_one_sep(&cwd[home.len()..]);
        format!("-{}", replace_seps(rel))
    } else {
        encode_cwd_pi(cwd)
    }
}

/// Lexical `path.resolve(p)`: absolute against the current directory, `.`/`..` resolved.
pub(crate) fn resolve_lexical(p: &str) -> PathBuf {
    let abs = if Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(p)
    };
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// omp's `resolveEquivalentPath`: the real path, or the resolved path when it does not exist.
fn canonical(p: &str) -> String {
    let r = resolve_lexical(p);
    std::fs::canonicalize(&r)
        .unwrap_or(r)
        .to_string_lossy()
        .into_owned()
}

/// `path.relative(root, p)` for `p` inside `root` (`Some("")` for `p == root`), as omp uses
/// it: a relative path starting with `..` (even `..foo`) counts as outside.
fn inside(root: &str, p: &str) -> Option<String> {
    let root = root.trim_end_matches('/');
    let rel = if p == root {
        ""
    } else {
        p.strip_prefix(root)?.strip_prefix('/')?
    };
    let rel = rel.trim_end_matches('/');
    (!rel.starts_with("..")).then(|| rel.to_string())
}

/// omp 18's per-cwd directory name from canonical paths: home-relative `-rest` (`-` for home
/// itself), temp-relative `-tmp-rest` (`-tmp`), else pi's absolute form.
pub fn encode_cwd_omp18(cwd: &str, home: &str, tmp: &str) -> String {
    let rel_name = |prefix: &str, rel: &str| {
        let enc = replace_seps(rel);
        match (enc.is_empty(), prefix.ends_with('-')) {
            (true, _) => prefix.to_string(),
            (false, true) => format!("{prefix}{enc}"),
            (false, false) => format!("{prefix}-{enc}"),
        }
    };
    if let Some(rel) = inside(home, cwd) {
        rel_name("-", &rel)
    } else if let Some(rel) = inside(tmp, cwd) {
        rel_name("-tmp", &rel)
    } else {
        encode_cwd_pi(cwd)
    }
}

/// omp's directory name for `cwd`: [`encode_cwd_omp18`] of the real paths of `cwd`, `$HOME`
/// and the temp directory (`$TMPDIR`, else `/tmp`).
pub fn omp_session_dir_name(cwd: &str) -> String {
    let tmp = env_nonempty("TMPDIR").map(|t| {
        let t = t.trim_end_matches('/');
        if t.is_empty() {
            "/".to_string()
        } else {
            t.to_string()
        }
    });
    encode_cwd_omp18(
        &canonical(cwd),
        &canonical(&home_dir().to_string_lossy()),
        &canonical(tmp.as_deref().unwrap_or("/tmp")),
    )
}

/// The default session directory of `cwd` for a tool (pi: [`encode_cwd_pi`] of the cwd as
/// given; omp: [`omp_session_dir_name`]).
pub fn default_session_dir(dialect: Dialect, agent_dir: &Path, cwd: &str) -> PathBuf {
    let name = match dialect {
        Dialect::Pi => encode_cwd_pi(cwd),
        Dialect::Omp => omp_session_dir_name(cwd),
    };
    sessions_root(agent_dir).join(name)
}

/// `<dir>/<file timestamp>_<session id>.jsonl`.
pub fn session_file_name(dir: &Path, iso: &str, session_id: &str) -> PathBuf {
    dir.join(format!(
        "{}_{}.jsonl",
        crate::ids::file_timestamp(iso),
        session_id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encodings_match_pi_and_omp() {
        assert_eq!(encode_cwd_pi("/home/u/proj"), "--home-u-proj--");
        assert_eq!(encode_cwd_pi("/"), "----");
        assert_eq!(encode_cwd_pi("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(encode_cwd_pi("//srv/x"), "---srv-x--");
        assert_eq!(
            encode_cwd_omp("/home/u/Projects/pi", "/home/u"),
            "-Projects-pi"
        );
        assert_eq!(encode_cwd_omp("/home/u", "/home/u"), "-");
        assert_eq!(
            encode_cwd_omp("/home/user2/x", "/home/u"),
            "--home-user2-x--"
        );
        assert_eq!(encode_cwd_omp("/tmp/foo", "/home/u"), "--tmp-foo--");
        assert_eq!(
            encode_cwd_omp18("/home/u/Projects/pi", "/home/u", "/tmp"),
            "-Projects-pi"
        );
        assert_eq!(encode_cwd_omp18("/home/u", "/home/u", "/tmp"), "-");
        assert_eq!(
            encode_cwd_omp18("/home/u/..x", "/home/u", "/tmp"),
            "--home-u-..x--"
        );
        assert_eq!(
            encode_cwd_omp18("/tmp/foo/bar", "/home/u", "/tmp"),
            "-tmp-foo-bar"
        );
        assert_eq!(encode_cwd_omp18("/tmp", "/home/u", "/tmp"), "-tmp");
        assert_eq!(encode_cwd_omp18("/srv/x", "/home/u", "/tmp"), "--srv-x--");
    }
}
