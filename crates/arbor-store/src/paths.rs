//! Where sessions live: agent directories, per-cwd session directories, file names.
use arbor_core::doc::Dialect;
use std::path::{Path, PathBuf};

/// The user's home directory (`$HOME`).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
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

/// The agent directory of a tool: `$PI_CODING_AGENT_DIR` when set (both tools read it),
/// else `~/.pi/agent` for pi and `~/<$PI_CONFIG_DIR or .omp>/agent` for omp.
pub fn agent_dir(dialect: Dialect) -> PathBuf {
    if let Some(v) = env_nonempty("PI_CODING_AGENT_DIR") {
        return expand_tilde(&v);
    }
    match dialect {
        Dialect::Pi => home_dir().join(".pi").join("agent"),
        Dialect::Omp => {
            let cfg = env_nonempty("PI_CONFIG_DIR").unwrap_or_else(|| ".omp".into());
            home_dir().join(cfg).join("agent")
        }
    }
}

/// The sessions root: `$PI_SESSIONS_DIR` when set, else `<agent dir>/sessions`.
pub fn sessions_root(agent_dir: &Path) -> PathBuf {
    match env_nonempty("PI_SESSIONS_DIR") {
        Some(v) => expand_tilde(&v),
        None => agent_dir.join("sessions"),
    }
}

fn replace_seps(s: &str) -> String {
    s.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect()
}

fn strip_one_sep(s: &str) -> &str {
    s.strip_prefix('/').or_else(|| s.strip_prefix('\\')).unwrap_or(s)
}

/// pi's per-cwd directory name: `--` + cwd without one leading separator, with `/`, `\`
/// and `:` replaced by `-`, + `--`.
pub fn encode_cwd_pi(cwd: &str) -> String {
    format!("--{}--", replace_seps(strip_one_sep(cwd)))
}

/// omp's per-cwd directory name: home-relative `-rest` for paths under `$HOME`, else pi's.
pub fn encode_cwd_omp(cwd: &str, home: &str) -> String {
    let under = cwd == home
        || cwd.strip_prefix(home).is_some_and(|r| r.starts_with('/') || r.starts_with('\\'));
    if under && !home.is_empty() {
        let rel = strip_one_sep(&cwd[home.len()..]);
        format!("-{}", replace_seps(rel))
    } else {
        encode_cwd_pi(cwd)
    }
}

/// The default session directory of `cwd` for a tool.
pub fn default_session_dir(dialect: Dialect, agent_dir: &Path, cwd: &str) -> PathBuf {
    let name = match dialect {
        Dialect::Pi => encode_cwd_pi(cwd),
        Dialect::Omp => encode_cwd_omp(cwd, &home_dir().to_string_lossy()),
    };
    sessions_root(agent_dir).join(name)
}

/// `<dir>/<file timestamp>_<session id>.jsonl`.
pub fn session_file_name(dir: &Path, iso: &str, session_id: &str) -> PathBuf {
    dir.join(format!("{}_{}.jsonl", crate::ids::file_timestamp(iso), session_id))
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
        assert_eq!(encode_cwd_omp("/home/u/Projects/pi", "/home/u"), "-Projects-pi");
        assert_eq!(encode_cwd_omp("/home/u", "/home/u"), "-");
        assert_eq!(encode_cwd_omp("/home/user2/x", "/home/u"), "--home-user2-x--");
        assert_eq!(encode_cwd_omp("/tmp/foo", "/home/u"), "--tmp-foo--");
    }
}
