//! The freedesktop trash specification's checks of a volume's trash, which the `trash` crate
//! (5.3) does not make: it takes `$topdir/.Trash-$uid` as it finds it (following a symlink,
//! whoever owns it, whatever its mode; a missing one is created with the umask's mode) and
//! `$topdir/.Trash/$uid` without looking at its owner. On a shared volume another user who
//! made `.Trash-0` first would receive root's sessions. So before every move to the trash
//! arbor checks the directory the crate will use, and creates a missing `.Trash-$uid` itself
//! with mode 0700; a trash that fails a check is refused (the spec allows "trash it into the
//! user's home trash or refuse": arbor refuses and says why, `rm --force` deletes instead).
//! The listing skips such trash directories too, so a planted `.trashinfo` is never restored.
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions. (The trash crate uses the real uid.)
    unsafe { libc::getuid() }
}

/// The mount points, longest first (as the trash crate finds a file's `$topdir`).
fn mount_points() -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/mounts")
        .or_else(|_| std::fs::read_to_string("/etc/mtab"))
        .unwrap_or_default();
    let mut v: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .map(|d| PathBuf::from(unescape_mount(d)))
        .collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    v
}

/// `getmntent`'s decoding of `\040`-style octal escapes.
fn unescape_mount(d: &str) -> String {
    let b = d.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = oct.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                if let Ok(c) = u8::try_from(v) {
                    out.push(c);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn topdir_of(path: &Path, mounts: &[PathBuf]) -> PathBuf {
    mounts
        .iter()
        .find(|m| path.starts_with(m))
        .cloned()
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The canonical form of `path`, through its nearest existing ancestor.
fn canonical(path: &Path) -> PathBuf {
    let mut tail = Vec::new();
    let mut p = path;
    loop {
        if let Ok(c) = std::fs::canonicalize(p) {
            return tail.iter().rev().fold(c, |acc: PathBuf, n| acc.join(n));
        }
        match (p.file_name(), p.parent()) {
            (Some(n), Some(parent)) => {
                tail.push(n.to_owned());
                p = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn home_trash() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/share")
        }
    };
    Some(canonical(&base.join("Trash")))
}

/// A user's trash directory on a volume: a real directory (not a symlink) of the caller,
/// with no access for anyone else.
fn check_own_private(dir: &Path) -> Result<(), String> {
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let me = uid();
    if m.file_type().is_symlink() {
        return Err(format!("{} is a symbolic link", dir.display()));
    }
    if !m.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if m.uid() != me {
        return Err(format!(
            "{} belongs to uid {}, not to you (uid {me}); someone else may have made it",
            dir.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "{} has mode {:o}; a trash directory must be 0700 (chmod 700 it)",
            dir.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// `$topdir/.Trash`: the spec's administrator-made trash, used only when it is a real
/// directory with the sticky bit.
fn admin_trash_valid(dot_trash: &Path) -> bool {
    std::fs::symlink_metadata(dot_trash).is_ok_and(|m| m.is_dir() && m.mode() & 0o1000 != 0)
}

/// The volume's top directory must not let another user replace what arbor checked:
/// owned by the caller or root, and writable by others only with the sticky bit.
fn check_topdir(topdir: &Path) -> Result<(), String> {
    let m = std::fs::metadata(topdir).map_err(|e| format!("{}: {e}", topdir.display()))?;
    if m.uid() != uid() && m.uid() != 0 {
        return Err(format!(
            "the volume's top directory {} belongs to uid {}, who could replace its trash",
            topdir.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 && m.mode() & 0o1000 == 0 {
        return Err(format!(
            "the volume's top directory {} is writable by others without the sticky bit",
            topdir.display()
        ));
    }
    Ok(())
}

/// Checks (and, when missing, creates with mode 0700) the trash directory the `trash`
/// crate will move `item` into; an error in words when it must not be used.
pub fn check_before_trashing(item: &Path) -> Result<(), String> {
    let path = canonical(item);
    let mounts = mount_points();
    let topdir = topdir_of(&path, &mounts);
    let Some(home) = home_trash() else {
        return Ok(()); // The crate fails on its own: no home to put a trash in.
    };
    if topdir_of(&home, &mounts) == topdir {
        return Ok(()); // The home trash.
    }
    let me = uid();
    let admin = topdir.join(".Trash");
    let fail = |why: String| {
        format!(
            "the trash of the volume {} is not safe to use: {why}; nothing moved (arbor                  rm --force deletes instead)",
            topdir.display()
        )
    };
    if std::fs::metadata(&admin).is_ok_and(|m| m.is_dir()) && admin_trash_valid(&admin) {
        let mine = admin.join(me.to_string());
        if std::fs::metadata(&mine).is_ok_and(|m| m.is_dir()) {
            check_topdir(&topdir).map_err(fail)?;
            return check_own_private(&mine).map_err(fail);
        }
    }
    let mine = topdir.join(format!(".Trash-{me}"));
    match std::fs::symlink_metadata(&mine) {
        Ok(_) => {
            check_topdir(&topdir).map_err(fail)?;
            check_own_private(&mine).map_err(fail)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_topdir(&topdir).map_err(fail)?;
            match std::fs::DirBuilder::new().mode(0o700).create(&mine) {
                // Not writable: the crate falls back to the home trash (a copy).
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Ok(()),
                Err(e) => Err(fail(format!("{}: {e}", mine.display()))),
                Ok(()) => check_own_private(&mine).map_err(fail),
            }
        }
        Err(e) => Err(fail(format!("{}: {e}", mine.display()))),
    }
}

/// Whether the trash directory `folder` (holding `files/` and `info/`), as the trash
/// crate lists it, may be read: the home trash, or a volume trash that passes the checks.
pub fn check_trash_folder(folder: &Path) -> Result<(), String> {
    if home_trash().is_some_and(|h| h == canonical(folder)) {
        return Ok(());
    }
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = folder.parent().unwrap_or(Path::new("/"));
    let me = uid();
    if name == format!(".Trash-{me}") {
        check_topdir(parent)?;
        return check_own_private(folder);
    }
    if name == me.to_string() && parent.file_name().is_some_and(|n| n == ".Trash") {
        if !admin_trash_valid(parent) {
            return Err(format!(
                "{} is not a sticky directory of its own",
                parent.display()
            ));
        }
        check_topdir(parent.parent().unwrap_or(Path::new("/")))?;
        return check_own_private(folder);
    }
    Err("not a trash directory arbor knows".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_decoded_and_the_longest_wins() {
        assert_eq!(unescape_mount("/media/my\\040disk"), "/media/my disk");
        assert_eq!(unescape_mount("/a\\9x\\"), "/a\\9x\\");
        let mounts = vec![
            PathBuf::from("/dev/shm"),
            PathBuf::from("/dev"),
            PathBuf::from("/"),
        ];
        assert_eq!(
            topdir_of(Path::new("/dev/shm/x/s.jsonl"), &mounts),
            Path::new("/dev/shm")
        );
        assert_eq!(
            topdir_of(Path::new("/dev/shmx/s.jsonl"), &mounts),
            Path::new("/dev")
        );
        assert_eq!(
            topdir_of(Path::new("/home/u/s.jsonl"), &mounts),
            Path::new("/")
        );
    }
}
