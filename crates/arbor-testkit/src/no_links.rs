//! A real file system without hard links for the tests of arbor's rewrite fallback: an exFAT
//! image (`mkfs.exfat`, Debian's `exfatprogs`) on a loop device, mounted through FUSE
//! (`mount.exfat-fuse`, Debian's `exfat-fuse`), where `link(2)` fails with `EPERM` as on a
//! vfat/exFAT USB disk. Root only; [`mount`] says why not (for the test's visible skip)
//! where it cannot be had.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A mounted exFAT file system; unmounted, its loop device detached and its image removed
/// when dropped.
pub struct NoLinks {
    mnt: PathBuf,
    loopdev: String,
    /// Holds the image; removed after the unmount (fields drop after `Drop::drop`).
    _dir: tempfile::TempDir,
}

impl NoLinks {
    /// The mount point (a directory of mode 0700, owned by root).
    pub fn path(&self) -> &Path {
        &self.mnt
    }
}

impl Drop for NoLinks {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg(&self.mnt)
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("losetup")
            .args(["-d", &self.loopdev])
            .stderr(Stdio::null())
            .status();
    }
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Mounts a fresh 16 MiB exFAT file system, or says why it cannot (not root, a tool missing,
/// no loop device or FUSE here).
pub fn mount() -> Result<NoLinks, String> {
    if !crate::skip::am_root() {
        return Err("needs root to mount an exFAT image".into());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let img = dir.path().join("fs.img");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).map_err(|e| e.to_string())?;
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(16 << 20))
        .map_err(|e| e.to_string())?;
    run(Command::new("mkfs.exfat").arg(&img).stdout(Stdio::null()))?;
    let loopdev = run(Command::new("losetup").args(["-f", "--show"]).arg(&img))?;
    let fs = NoLinks {
        mnt: mnt.clone(),
        loopdev,
        _dir: dir,
    };
    run(Command::new("mount.exfat-fuse")
        .args(["-o", "umask=077"])
        .arg(&fs.loopdev)
        .arg(&mnt)
        .stdout(Stdio::null()))?;
    // It must really refuse hard links (what the tests are for).
    let probe = mnt.join("probe");
    std::fs::write(&probe, b"x").map_err(|e| e.to_string())?;
    let linked = std::fs::hard_link(&probe, mnt.join("probe2"));
    let _ = std::fs::remove_file(&probe);
    if linked.is_ok() {
        return Err("this exFAT mount gives hard links".into());
    }
    Ok(fs)
}
