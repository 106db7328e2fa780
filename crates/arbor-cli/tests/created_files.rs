//! Files arbor creates and deletes for a user (issue 21, items 2-6 and 18): nothing is created
//! through a planted symlink, exports are private and never replace a file they did not make,
//! `rm` takes only what provably belongs to a session, and the trash is all or nothing.
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

arbor_testkit::private_home!();
use private_home::{arbor, fails, ok};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("lstat")
        .permissions()
        .mode()
        & 0o7777
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
    assert!(std::fs::read_to_string(&page)
        .expect("page")
        .contains(".TH"));
    assert_eq!(mode(&page), 0o644, "man pages are public");
    // No temporary file stays behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".1")), "{names:?}");
}

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../demo/sessions")
        .join(name)
}

const PLAIN: &str = "2026-11-22T11-55-38-569Z_01a2031c-a4c8-72e3-9ce7-b742438e02ad.jsonl";
const WITH_IMAGES: &str = "2026-11-22T11-55-39-946Z_01a2031c-aa28-755e-9ecf-bfbc78024ba4.jsonl";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn is_export(p: &Path) -> bool {
    std::fs::read_to_string(p)
        .expect("export")
        .starts_with("<!-- arbor-export/1")
}

#[test]
fn export_never_replaces_a_session_or_a_file_it_did_not_make_unless_forced() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let session = h.join("s.jsonl");
    std::fs::copy(demo(PLAIN), &session).expect("copy");
    let original = std::fs::read(&session).expect("read");
    // The session itself: refused, also with --force.
    for force in [false, true] {
        let mut args = vec!["export", s(&session), "-o", s(&session)];
        if force {
            args.push("--force");
        }
        let err = fails(h, &args);
        assert!(err.contains("is the session being exported"), "{err}");
        assert_eq!(std::fs::read(&session).expect("read"), original);
    }
    // Another session file: refused unless --force.
    let other = h.join("other.jsonl");
    std::fs::copy(demo(PLAIN), &other).expect("copy");
    let err = fails(h, &["export", s(&session), "-o", s(&other)]);
    assert!(err.contains("is a session file"), "{err}");
    assert_eq!(std::fs::read(&other).expect("read"), original);
    // Any other file: refused unless --force.
    let notes = h.join("notes.md");
    std::fs::write(&notes, b"my notes\n").expect("notes");
    let err = fails(h, &["export", s(&session), "-o", s(&notes)]);
    assert!(err.contains("not written by arbor export"), "{err}");
    assert_eq!(std::fs::read(&notes).expect("read"), b"my notes\n");
    // A symlink: refused; with --force the link is replaced, its target kept.
    let link = h.join("link.md");
    std::os::unix::fs::symlink(&notes, &link).expect("link");
    let err = fails(h, &["export", s(&session), "-o", s(&link)]);
    assert!(err.contains("symbolic link"), "{err}");
    ok(h, &["export", s(&session), "-o", s(&link), "--force"]);
    assert_eq!(std::fs::read(&notes).expect("read"), b"my notes\n");
    assert!(std::fs::symlink_metadata(&link).expect("lstat").is_file());
    // An earlier export is replaced, in any format.
    let out = h.join("out");
    for format in ["md", "html", "json", "md"] {
        ok(
            h,
            &["export", s(&session), "--format", format, "-o", s(&out)],
        );
    }
    assert!(is_export(&out));
    // An empty file (mktemp) holds nothing to lose.
    let empty = h.join("empty.md");
    std::fs::write(&empty, b"").expect("empty");
    ok(h, &["export", s(&session), "-o", s(&empty)]);
    assert!(is_export(&empty));
    // --force replaces a file that is not a session.
    ok(h, &["export", s(&session), "-o", s(&notes), "--force"]);
    assert!(std::fs::read(&notes).expect("read").len() > 100);
    ok(h, &["export", s(&session), "-o", s(&other), "--force"]);
    assert_ne!(std::fs::read(&other).expect("read"), original);
    assert_eq!(std::fs::read(&session).expect("read"), original);
    assert!(
        names(h).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        names(h)
    );
}

#[test]
fn exports_are_private_and_a_failed_export_leaves_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let out = h.join("out.md");
    // Private, also unredacted; the images directory too.
    ok(
        h,
        &[
            "export",
            "--tree",
            "--no-redact",
            s(&demo(WITH_IMAGES)),
            "-o",
            s(&out),
        ],
    );
    assert_eq!(mode(&out), 0o600);
    let assets = h.join("out.md.assets");
    assert_eq!(mode(&assets), 0o700);
    let images = names(&assets);
    assert!(!images.is_empty());
    for i in &images {
        assert_eq!(mode(&assets.join(i)), 0o600, "{i}");
    }
    for format in ["html", "json"] {
        let o = h.join(format!("out.{format}"));
        ok(
            h,
            &[
                "export",
                "--no-redact",
                "--format",
                format,
                s(&demo(PLAIN)),
                "-o",
                s(&o),
            ],
        );
        assert_eq!(mode(&o), 0o600, "{format}");
    }
    // `-o DIR`: refused, nothing left beside it or in it.
    let dir = h.join("dir");
    std::fs::create_dir(&dir).expect("mkdir");
    let before = names(h);
    let err = fails(h, &["export", s(&demo(PLAIN)), "-o", s(&dir)]);
    assert!(err.contains("is a directory"), "{err}");
    assert_eq!(names(h), before);
    assert!(names(&dir).is_empty());
    // A failure while writing (the images directory is taken by a file): no export, no
    // temporary file.
    let fail = h.join("fail.md");
    std::fs::write(h.join("fail.md.assets"), b"x").expect("file");
    let before = names(h);
    fails(
        h,
        &["export", "--tree", s(&demo(WITH_IMAGES)), "-o", s(&fail)],
    );
    assert_eq!(names(h), before);
}

fn golden(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../goldens")
        .join(rel)
}

#[test]
fn rm_takes_only_what_provably_belongs_to_the_session() {
    for force in [false, true] {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path();
        let work = h.join("work");
        std::fs::create_dir_all(&work).expect("mkdir");
        // A pi session in a project directory, with the user's own files named like it.
        let pi = work.join("bugfix.jsonl");
        std::fs::copy(demo(PLAIN), &pi).expect("copy");
        let user_dir = work.join("bugfix");
        std::fs::create_dir(&user_dir).expect("mkdir");
        std::fs::write(user_dir.join("main.rs"), b"fn main() {}").expect("code");
        let keep = [
            "bugfix.jsonl.md",
            "bugfix.md",
            "bugfix.jsonl.html",
            "bugfix.jsonl.torn-notes",
        ];
        for k in keep {
            std::fs::write(work.join(k), b"mine").expect("file");
        }
        std::fs::create_dir(work.join("bugfix.jsonl.assets")).expect("mkdir");
        std::fs::write(work.join("bugfix.jsonl.assets/a.png"), b"png").expect("png");
        let torn = work.join("bugfix.jsonl.torn-2026-01-01T00-00-00-000Z");
        let quarantine = work.join("bugfix.jsonl.quarantine-2026-01-01T00-00-00-000Z-1");
        std::fs::write(&torn, b"tail").expect("torn");
        std::fs::write(&quarantine, b"removed").expect("quarantine");
        // An omp session with its artifact directory (logs, a subagent), and another whose
        // directory of that name holds something omp does not put there.
        let omp = work.join("omp.jsonl");
        std::fs::copy(golden("omp/gen-seed21-n40.jsonl"), &omp).expect("copy");
        let art = work.join("omp");
        std::fs::create_dir_all(art.join("task1")).expect("mkdir");
        std::fs::write(art.join("1.bash.log"), b"log").expect("log");
        std::fs::write(art.join("task1.jsonl"), b"{}\n").expect("sub");
        std::fs::write(art.join("task1.md"), b"out").expect("out");
        std::fs::write(art.join("task1/1.read.log"), b"log").expect("log");
        let backup = work.join("omp.jsonl.0123456789abcdef.bak");
        std::fs::write(&backup, b"bak").expect("bak");
        let omp2 = work.join("omp2.jsonl");
        std::fs::copy(golden("omp/gen-seed21-n40.jsonl"), &omp2).expect("copy");
        let art2 = work.join("omp2");
        std::fs::create_dir(&art2).expect("mkdir");
        std::fs::write(art2.join("1.bash.log"), b"log").expect("log");
        std::fs::write(art2.join("thesis.tex"), b"mine").expect("mine");

        let mut args = vec!["rm", s(&pi), s(&omp), s(&omp2)];
        if force {
            args.push("--force");
        }
        let o = arbor(h, &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for gone in [&pi, &torn, &quarantine, &omp, &art, &backup, &omp2] {
            assert!(
                std::fs::symlink_metadata(gone).is_err(),
                "{} should be gone (force: {force})",
                gone.display()
            );
        }
        for k in keep {
            assert_eq!(std::fs::read(work.join(k)).expect(k), b"mine", "{k}");
        }
        assert!(
            user_dir.join("main.rs").exists(),
            "a pi project's directory stays"
        );
        assert!(work.join("bugfix.jsonl.assets/a.png").exists());
        assert!(art2.join("thesis.tex").exists() && art2.join("1.bash.log").exists());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("thesis.tex") && err.contains("left"),
            "the kept directory is named: {err}"
        );
        if !force {
            // What went is in the trash, and comes back whole.
            ok(h, &["trash", "restore", s(&omp)]);
            assert!(omp.exists() && art.join("task1/1.read.log").exists() && backup.exists());
            ok(h, &["trash", "restore", s(&pi)]);
            assert!(pi.exists() && torn.exists() && quarantine.exists());
        }
    }
}

#[test]
fn trash_restore_is_all_or_nothing_and_a_session_trashed_twice_stays_restorable() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let dir = h.join(".pi/agent/sessions/--p--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let id = "0199b000-0000-7000-8000-0000000000aa";
    let name = format!("2026-01-01T00-00-00-000Z_{id}.jsonl");
    let session = dir.join(&name);
    let side = dir.join(format!("{name}.torn-2026-01-01T00-00-00-000Z"));
    std::fs::copy(demo(PLAIN), &session).expect("copy");
    std::fs::write(&side, b"first tail").expect("sidecar");
    ok(h, &["rm", id]);
    // Only the sidecar's name is taken: nothing comes back, the error names it.
    std::fs::write(&side, b"in the way").expect("collision");
    let err = fails(h, &["trash", "restore", id]);
    assert!(err.contains(&side.display().to_string()), "{err}");
    assert!(!session.exists(), "the session stays in the trash");
    assert_eq!(std::fs::read(&side).expect("kept"), b"in the way");
    let list: serde_json::Value =
        serde_json::from_str(&ok(h, &["trash", "list", "--json"])).expect("json");
    assert_eq!(list[0]["items"], 2, "{list}");
    std::fs::remove_file(&side).expect("rm");
    // Trashed a second time (the file came back): both copies stay restorable, newest first.
    ok(h, &["trash", "restore", id]);
    assert_eq!(std::fs::read(&side).expect("back"), b"first tail");
    ok(h, &["rm", id]);
    let first = unix_second();
    std::fs::copy(demo(PLAIN), &session).expect("copy");
    std::fs::write(&side, b"second tail").expect("sidecar");
    // The trash records deletion times in seconds: wait for the next one, so that it tells
    // the copies apart (and which is newer).
    while unix_second() <= first {
        std::thread::yield_now();
    }
    ok(h, &["rm", id]);
    let list: serde_json::Value =
        serde_json::from_str(&ok(h, &["trash", "list", "--json"])).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    assert!(
        list.as_array()
            .expect("array")
            .iter()
            .all(|t| t["items"] == 2),
        "{list}"
    );
    ok(h, &["trash", "restore", id]);
    assert_eq!(std::fs::read(&side).expect("newest"), b"second tail");
    let elsewhere = h.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::fs::rename(&session, elsewhere.join("s.jsonl")).expect("mv");
    std::fs::rename(&side, elsewhere.join("side")).expect("mv");
    ok(h, &["trash", "restore", id]);
    assert_eq!(std::fs::read(&side).expect("older"), b"first tail");
    assert!(session.exists());
    let list: serde_json::Value =
        serde_json::from_str(&ok(h, &["trash", "list", "--json"])).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list}");
}

fn unix_second() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// Removes the volume trash a test made (and the test's directory) when it ends.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
                let _ = std::fs::remove_dir_all(p);
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

#[test]
fn a_volume_trash_someone_else_could_have_made_is_not_used() {
    // /dev/shm: a volume of its own, writable by everyone (a shared volume).
    let shm = Path::new("/dev/shm");
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    if dev(shm).is_none() || dev(shm) == dev(h) {
        arbor_testkit::skip::skip("/dev/shm is not a volume of its own here");
        return;
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mine = shm.join(format!(".Trash-{uid}"));
    if std::fs::symlink_metadata(&mine).is_ok() || shm.join(".Trash").exists() {
        arbor_testkit::skip::skip(&format!(
            "{} or /dev/shm/.Trash exists (a real trash; not touched)",
            mine.display()
        ));
        return;
    }
    let work = shm.join(format!("arbor-created-files-{}", std::process::id()));
    let _cleanup = Cleanup(vec![mine.clone(), work.clone()]);
    std::fs::create_dir(&work).expect("mkdir");
    let session = work.join("2026-01-01T00-00-00-000Z_0199b000-0000-7000-8000-0000000000bb.jsonl");
    std::fs::copy(demo(PLAIN), &session).expect("copy");

    // A symlink planted at .Trash-$uid: refused, nothing moved through it.
    let elsewhere = h.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, &mine).expect("plant");
    // With a session of the home volume before it: nothing moves at all.
    let at_home = h.join("home.jsonl");
    std::fs::copy(demo(PLAIN), &at_home).expect("copy");
    let err = fails(h, &["rm", s(&at_home), s(&session)]);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(session.exists() && at_home.exists());
    assert!(names(&elsewhere).is_empty());
    std::fs::remove_file(&mine).expect("unplant");

    // One's own, but open to others: refused.
    std::fs::create_dir(&mine).expect("mkdir");
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let err = fails(h, &["rm", s(&session)]);
    assert!(err.contains("0700"), "{err}");
    assert!(session.exists());
    std::fs::remove_dir(&mine).expect("rmdir");

    // Made by another user first (root only can make one for another uid).
    if arbor_testkit::skip::unless_root("a trash made by another user needs root (CI runs as root)")
    {
        std::fs::create_dir(&mine).expect("mkdir");
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::os::unix::fs::chown(&mine, Some(65534), Some(65534)).expect("chown");
        let err = fails(h, &["rm", s(&session)]);
        assert!(err.contains("belongs to uid 65534"), "{err}");
        assert!(session.exists());
        assert!(
            names(&mine).is_empty(),
            "nothing moved into their directory"
        );
        // What such a trash holds is not listed, so it can never be "restored".
        std::os::unix::fs::chown(&mine, Some(0), Some(0)).expect("chown");
        for d in ["files", "info"] {
            std::fs::create_dir(mine.join(d)).expect("mkdir");
        }
        let planted =
            work.join("2026-01-02T00-00-00-000Z_0199b000-0000-7000-8000-0000000000cc.jsonl");
        std::fs::write(
            mine.join("info/p.jsonl.trashinfo"),
            format!(
                "[Trash Info]\nPath={}\nDeletionDate=2026-01-02T00:00:00\n",
                planted.display()
            ),
        )
        .expect("info");
        std::fs::copy(demo(PLAIN), mine.join("files/p.jsonl")).expect("file");
        std::os::unix::fs::chown(&mine, Some(65534), Some(65534)).expect("chown");
        let o = arbor(h, &["trash", "list", "--json"]);
        assert!(o.status.success());
        let list = String::from_utf8_lossy(&o.stdout);
        assert!(!list.contains("0000000000cc"), "{list}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("not reading"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = fails(
            h,
            &["trash", "restore", "0199b000-0000-7000-8000-0000000000cc"],
        );
        assert!(err.contains("no session"), "{err}");
        assert!(!planted.exists());
        std::fs::remove_dir_all(&mine).expect("rm");
    }

    // Missing: arbor makes it 0700, and the session goes there and comes back.
    ok(h, &["rm", s(&session)]);
    assert!(!session.exists());
    assert_eq!(mode(&mine), 0o700);
    assert!(mine
        .join("files")
        .join(session.file_name().expect("name"))
        .exists());
    ok(
        h,
        &["trash", "restore", "0199b000-0000-7000-8000-0000000000bb"],
    );
    assert!(session.exists());
}
