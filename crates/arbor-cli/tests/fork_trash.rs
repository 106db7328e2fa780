//! `arbor fork` against pi 1.5.2's own `createBranchedSession` (goldens/pi15/branched/, made by
//! tools/goldens/pi15/branched.sh), `fork` without `--at` (pi's `--fork`), and `arbor rm` /
//! `arbor trash` through the freedesktop trash in a private home.
use serde_json::Value;
use std::path::{Path, PathBuf};

arbor_testkit::private_home!();
use private_home::{arbor, ok};

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi15/branched")
}

/// The lines of a session with what is drawn at random made comparable: the header's id,
/// time and parentSession, and the ids of re-created labels (and the parentIds naming them).
fn normalized(text: &str) -> Vec<Value> {
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let mut renamed = std::collections::HashMap::new();
    for (n, v) in lines.iter_mut().enumerate() {
        if n == 0 {
            v["id"] = "ID".into();
            v["timestamp"] = "TS".into();
            v["parentSession"] = "PARENT".into();
            continue;
        }
        if v["type"] == "label" {
            let new = format!("LABEL{}", renamed.len());
            renamed.insert(v["id"].as_str().expect("id").to_string(), new.clone());
            v["id"] = new.into();
        }
        if let Some(p) = v["parentId"].as_str() {
            if let Some(r) = renamed.get(p) {
                v["parentId"] = r.clone().into();
            }
        }
    }
    lines
}

#[test]
fn fork_at_an_entry_writes_what_pi_1_5_writes() {
    let home = tempfile::tempdir().expect("tempdir");
    let src = home.path().join("input.jsonl");
    std::fs::copy(goldens().join("input.jsonl"), &src).expect("copy");
    let mut compared = 0;
    for leaf in ["a3", "b1", "a2"] {
        let out = ok(
            home.path(),
            &["fork", src.to_str().expect("utf-8"), "--at", leaf, "--json"],
        );
        let v: Value = serde_json::from_str(&out).expect("JSON");
        let path = v["path"].as_str().expect("path");
        assert_eq!(v["parentSession"], src.to_str().expect("utf-8"));
        let have = std::fs::read_to_string(path).expect("new session");
        let want =
            std::fs::read_to_string(goldens().join(format!("at-{leaf}.jsonl"))).expect("golden");
        assert_eq!(normalized(&have), normalized(&want), "--at {leaf}");
        // Byte for byte too, apart from what is drawn at random.
        assert_eq!(have.lines().count(), want.lines().count());
        for (h, w) in have.lines().zip(want.lines()).skip(1) {
            if !w.contains("\"type\":\"label\"") {
                assert_eq!(h, w, "--at {leaf}");
            }
        }
        compared += 1;
        // The source is untouched.
        assert_eq!(
            std::fs::read(&src).expect("src"),
            std::fs::read(goldens().join("input.jsonl")).expect("input")
        );
    }
    assert_eq!(compared, 3);
    // An unknown entry: the one wording arbor uses.
    let o = arbor(
        home.path(),
        &["fork", src.to_str().expect("utf-8"), "--at", "nope"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no entry with id nope"));
}

#[test]
fn fork_copies_everything_into_another_project() {
    let home = tempfile::tempdir().expect("tempdir");
    let src = home.path().join("input.jsonl");
    std::fs::copy(goldens().join("input.jsonl"), &src).expect("copy");
    let other = home.path().join("other project");
    let out = ok(
        home.path(),
        &[
            "fork",
            src.to_str().expect("utf-8"),
            "--cwd",
            other.to_str().expect("utf-8"),
        ],
    );
    let mut lines = out.lines();
    let path = PathBuf::from(lines.next().expect("path"));
    let id = lines.next().expect("id");
    assert!(
        path.starts_with(home.path().join(".pi/agent/sessions")),
        "{path:?}"
    );
    assert!(path.to_string_lossy().contains(id));
    let text = std::fs::read_to_string(&path).expect("fork");
    let header: Value = serde_json::from_str(text.lines().next().expect("header")).expect("json");
    assert_eq!(header["cwd"], other.to_str().expect("utf-8"));
    // Every entry, byte for byte.
    let src_text = std::fs::read_to_string(&src).expect("src");
    assert_eq!(
        text.lines().skip(1).collect::<Vec<_>>(),
        src_text.lines().skip(1).collect::<Vec<_>>()
    );
}

#[test]
fn rm_moves_sessions_and_their_sidecars_to_the_trash_and_restore_brings_them_back() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let dir = h.join(".pi/agent/sessions/--p--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let name = "2026-01-01T00-00-00-000Z_0199b000-0000-7000-8000-000000000001.jsonl";
    let s = dir.join(name);
    std::fs::copy(goldens().join("input.jsonl"), &s).expect("copy");
    let side = dir.join(format!("{name}.torn-2026-01-01T00-00-00-000Z"));
    std::fs::write(&side, b"torn bytes").expect("sidecar");
    let other = dir.join("2026-01-02T00-00-00-000Z_0199b000-0000-7000-8000-000000000002.jsonl");
    std::fs::copy(goldens().join("input.jsonl"), &other).expect("copy");

    let out = ok(h, &["rm", "0199b000-0000-7000-8000-000000000001"]);
    assert!(
        out.contains("moved to the trash") && out.contains("1 file beside it"),
        "{out}"
    );
    assert!(!s.exists() && !side.exists());
    assert!(other.exists(), "only the named session goes");
    // In the trash, not deleted.
    let trash = h.join(".local/share/Trash/files");
    assert!(
        trash.join(name).exists(),
        "{:?}",
        std::fs::read_dir(&trash).map(|d| d.count())
    );
    let list: Value = serde_json::from_str(&ok(h, &["trash", "list", "--json"])).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["id"], "0199b000-0000-7000-8000-000000000001");
    assert_eq!(list[0]["items"], 2);
    // Empty is a report without --force.
    let report = ok(h, &["trash", "empty"]);
    assert!(report.contains("would delete"), "{report}");
    assert!(trash.join(name).exists());
    // Restore puts both back.
    ok(
        h,
        &["trash", "restore", "0199b000-0000-7000-8000-000000000001"],
    );
    assert!(s.exists() && side.exists());
    assert_eq!(
        std::fs::read(&s).expect("restored"),
        std::fs::read(goldens().join("input.jsonl")).expect("input")
    );
    // A restore over a file that came back in the meantime is refused.
    ok(h, &["rm", s.to_str().expect("utf-8")]);
    std::fs::write(&s, b"new").expect("write");
    let o = arbor(h, &["trash", "restore", "0199b000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&s).expect("kept"), b"new");
    std::fs::remove_file(&s).expect("rm");
    // --force on empty deletes for good.
    ok(h, &["trash", "empty", "--force"]);
    assert!(!trash.join(name).exists());
    // rm --force unlinks at once; a missing session is an error naming it.
    ok(h, &["rm", "--force", other.to_str().expect("utf-8")]);
    assert!(!other.exists());
    let o = arbor(h, &["rm", "0199b000-0000-7000-8000-000000000009"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn rm_takes_a_planted_symlink_as_a_link() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let victim = h.join("victim.jsonl");
    std::fs::copy(goldens().join("input.jsonl"), &victim).expect("copy");
    let link = h.join("link.jsonl");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    ok(h, &["rm", link.to_str().expect("utf-8")]);
    assert!(victim.exists(), "the link's target is never touched");
    assert!(std::fs::symlink_metadata(&link).is_err());
}

/// pi's `forkFrom` and `createBranchedSession` record the source as an absolute path
/// (`resolvePath`: against the current directory, `.` and `..` resolved, symlinks kept), so
/// `arbor fork` of a relative path records the same: a relative `parentSession` would name
/// another file as soon as pi runs from another directory.
#[test]
fn fork_of_a_relative_path_records_the_absolute_parent_as_pi_does() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("proj/sub")).expect("dirs");
    let src = home.path().join("proj/in.jsonl");
    std::fs::copy(goldens().join("input.jsonl"), &src).expect("copy");
    for at in [None, Some("a3")] {
        let mut args = vec!["fork", "./proj/sub/../in.jsonl", "--json"];
        if let Some(a) = at {
            args.extend(["--at", a]);
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(&args)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join(".local/share"))
            .env("ARBOR_CATALOG", home.path().join("catalog.db"))
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run arbor");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let want = src.to_str().expect("utf-8");
        assert_eq!(v["parentSession"], want, "--at {at:?}");
        let path = home.path().join(v["path"].as_str().expect("path"));
        let text = std::fs::read_to_string(&path).expect("fork");
        let header: Value =
            serde_json::from_str(text.lines().next().expect("header")).expect("header JSON");
        assert_eq!(header["parentSession"], want, "--at {at:?}");
    }
}
