//! A small full disk for the ENOSPC tests of arbor-store and arbor-cli: a size-limited tmpfs
//! mounted by the test where it may (root, mount allowed; `ARBOR_TEST_NO_TMPFS` turns it off),
//! and a filler that uses up its space.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted on a directory, unmounted (lazily) when dropped.
pub struct Mount(PathBuf);
impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Mounts a 256 KiB tmpfs on `dir`, or `None` where that is not allowed.
pub fn try_tmpfs(dir: &Path) -> Option<Mount> {
    if std::env::var_os("ARBOR_TEST_NO_TMPFS").is_some() {
        return None;
    }
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
        .arg(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| Mount(dir.to_path_buf()))
}

/// Fills the filesystem of `filler` until a write fails.
pub fn fill(filler: &Path) {
    let mut f = std::fs::File::create(filler).expect("filler");
    let chunk = vec![b'z'; 4096];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.write_all(b"z");
    let _ = f.sync_all();
}

/// Fills the filesystem of `filler`, then gives back `room` bytes: room for a small file
/// (a lock file's page), not for a larger write.
pub fn fill_leaving(filler: &Path, room: u64) {
    fill(filler);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(filler)
        .expect("filler");
    let len = f.metadata().expect("filler").len();
    f.set_len(len.saturating_sub(room)).expect("give room back");
}

/// Limits the size of files this process writes (`RLIMIT_FSIZE`; a write past it fails with
/// EFBIG instead of a signal): the full disk where a tmpfs cannot be mounted. `u64::MAX`
/// lifts it.
pub fn set_fsize_limit(bytes: u64) {
    // SAFETY: plain libc calls on this process.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let lim = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: libc::RLIM_INFINITY,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}
