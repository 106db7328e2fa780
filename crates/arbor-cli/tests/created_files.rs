//! Files arbor creates and deletes for a user (issue 21, items 2-6 and 18): nothing is created
//! through a planted symlink, exports are private and never replace a file they did not make,
//! `rm` takes only what provably belongs to a session, and the trash is all or nothing.
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn arbor(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run arbor")
}

fn ok(home: &Path, args: &[&str]) -> String {
    let o = arbor(home, args);
    assert!(
        o.status.success(),
        "arbor {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

fn fails(home: &Path, args: &[&str]) -> String {
    let o = arbor(home, args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "arbor {args:?} should fail: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stderr).expect("utf-8")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).expect("lstat").permissions().mode() & 0o7777
}

#[test]
fn man_dir_replaces_a_planted_symlink_instead_of_writing_through_it() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let victim = h.join("root-only");
    std::fs::write(&victim, b"keep").expect("victim");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let dir = h.join("man1");
    std::fs::create_dir(&dir).expect("mkdir");
    std::os::unix::fs::symlink(&victim, dir.join("arbor.1")).expect("plant");
    ok(h, &["man", "--dir", s(&dir)]);
    assert_eq!(std::fs::read(&victim).expect("victim"), b"keep");
    let page = dir.join("arbor.1");
    assert!(std::fs::symlink_metadata(&page).expect("lstat").is_file());
    assert!(std::fs::read_to_string(&page).expect("page").contains(".TH"));
    assert_eq!(mode(&page), 0o644, "man pages are public");
    // No temporary file stays behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".1")), "{names:?}");
}
