//! Running `arbor` (or any program) as another user in the CLI tests (root only; CI runs as
//! root): the tests of files a user cannot read or write, which root could.
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, Once};

/// The uid and gid of `nobody`.
pub const NOBODY: u32 = 65534;

pub use crate::skip::unless_root;

/// Makes `c` run as `nobody` (no supplementary groups). A command whose program (an absolute
/// path: the `arbor` under test) `nobody` cannot start where it is is rebuilt (same
/// arguments, environment and working directory; stdin null: set stdout and stderr after
/// this) on a copy of the program that `nobody` can reach ([`reachable`]): the checkout may
/// sit in a directory only root may enter (a clone in `/root`, mode 0700), and `nobody` could
/// then not even start it ("Permission denied"). A working directory left unset becomes the
/// copy's directory (the test's own is the checkout's).
pub fn as_nobody(c: &mut Command) {
    let program = Path::new(c.get_program()).to_path_buf();
    if program.is_absolute() {
        let bin = reachable(&program);
        if bin != program {
            let mut n = Command::new(&bin);
            n.args(c.get_args());
            for (k, v) in c.get_envs() {
                match v {
                    Some(v) => n.env(k, v),
                    None => n.env_remove(k),
                };
            }
            match c.get_current_dir() {
                Some(d) => n.current_dir(d),
                None => n.current_dir(bin.parent().unwrap_or(Path::new("/"))),
            };
            n.stdin(Stdio::null());
            *c = n;
        }
    }
    // SAFETY: setgroups/setgid/setuid in the child before exec; no allocation.
    unsafe {
        c.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The program `bin` where every user may run it: itself when every directory above it lets
/// others through, else a hard link (or a copy, across file systems) in a fresh directory of
/// mode 0755 under the temporary directory, made once per program and removed when the test
/// process exits. The directory is made by this process (never a name another user could have
/// planted first).
pub fn reachable(bin: &Path) -> PathBuf {
    static COPIES: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
    if reachable_by_others(bin) {
        return bin.to_path_buf();
    }
    let mut copies = COPIES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, copy)) = copies.iter().find(|(b, _)| b == bin) {
        return copy.clone();
    }
    let dir = tempfile::Builder::new()
        .prefix("arbor-as-nobody-")
        .tempdir()
        .expect("tempdir")
        .keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let copy = dir.join(bin.file_name().unwrap_or("program".as_ref()));
    if std::fs::hard_link(bin, &copy).is_err() {
        std::fs::copy(bin, &copy).expect("copy the program");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
    static AT_EXIT: Once = Once::new();
    // SAFETY: `remove_copies` is an `extern "C" fn()` that does not unwind.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(remove_copies);
    });
    copies.push((bin.to_path_buf(), copy.clone()));
    copy
}

static CLEANUP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_copies() {
    if let Ok(dirs) = CLEANUP.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Whether a user other than the owner may execute `bin`: every directory above it searchable
/// (x) by others, and the file executable by others.
fn reachable_by_others(bin: &Path) -> bool {
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode())
            .unwrap_or(0)
    };
    mode(bin) & 0o001 != 0 && bin.ancestors().skip(1).all(|d| mode(d) & 0o001 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program in a directory `nobody` cannot enter (a checkout in `/root`) runs from a
    /// reachable copy, made once.
    #[test]
    fn a_program_nobody_cannot_reach_runs_from_a_reachable_copy() {
        if !unless_root("running a program as nobody needs root (CI runs as root)") {
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("a directory only root may enter");
        let prog = dir.path().join("true");
        std::fs::copy("/bin/true", &prog).expect("copy /bin/true");
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut c = Command::new(&prog);
        as_nobody(&mut c);
        assert_ne!(Path::new(c.get_program()), prog);
        assert_eq!(Path::new(c.get_program()), reachable(&prog), "one copy");
        assert!(c.status().expect("run as nobody").success());
        // A program everyone reaches is run where it is.
        let mut t = Command::new("/bin/true");
        as_nobody(&mut t);
        assert_eq!(t.get_program(), "/bin/true");
        assert!(t.status().expect("run as nobody").success());
    }
}
