//! `arbor gc --blobs` through the binary (issue 10, item 1): an omp session made outside the
//! sessions root keeps its blob, and a directory gc cannot read stops it before it removes
//! anything.
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use arbor_testkit::as_nobody::{as_nobody, unless_root};

fn arbor(agent: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
    c.arg("--agent-dir")
        .arg(agent)
        .args(args)
        .env("HOME", agent.parent().unwrap_or(agent))
        .env("XDG_CACHE_HOME", agent.join("cache"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_SESSIONS_DIR")
        .stdin(Stdio::null());
    c
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("utf8")
}

fn image_body() -> String {
    let data = "iVBORw0KGgo".repeat(120);
    format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}}}"#
    )
}

#[test]
fn an_omp_session_made_outside_the_root_keeps_its_blob() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let agent = tmp.path().join("agent");
    std::fs::create_dir_all(agent.join("sessions")).expect("mkdir");
    let elsewhere = tmp.path().join("elsewhere");
    let e = elsewhere.to_str().expect("utf8");
    let s = ok(arbor(&agent, &["new", "--omp", "--dir", e])
        .output()
        .expect("new"));
    let s = s.trim();
    ok(arbor(&agent, &["append", s, &image_body()])
        .output()
        .expect("append"));
    let line = std::fs::read_to_string(s).expect("read");
    assert!(
        line.contains("blob:sha256:"),
        "the image was not externalized"
    );
    let blobs: Vec<_> = std::fs::read_dir(agent.join("blobs"))
        .expect("blobs")
        .flatten()
        .collect();
    assert!(!blobs.is_empty());
    let out = ok(arbor(
        &agent,
        &["gc", "--blobs", "--yes", "--min-age", "0", "--json"],
    )
    .output()
    .expect("gc"));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v[0]["removed"], 0, "{v}");
    let ctx = ok(arbor(&agent, &["context", s]).output().expect("context"));
    assert!(ctx.contains("iVBORw0KGgo"), "context lost the image");
}

#[test]
fn an_unreadable_directory_stops_gc_before_anything_is_removed() {
    if !unless_root("needs root to run arbor as a user who cannot read a directory") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let agent = tmp.path().join("agent");
    let locked = agent.join("sessions/--locked--");
    std::fs::create_dir_all(&locked).expect("mkdir");
    std::fs::create_dir_all(agent.join("blobs")).expect("mkdir");
    let orphan = agent.join("blobs").join("a".repeat(64));
    std::fs::write(&orphan, b"orphan").expect("blob");
    let own = |p: &Path| std::os::unix::fs::chown(p, Some(65534), Some(65534)).expect("chown");
    for p in [
        agent.as_path(),
        &agent.join("sessions"),
        &locked,
        &agent.join("blobs"),
        &orphan,
    ] {
        own(p);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let mut c = arbor(&agent, &["gc", "--blobs", "--yes", "--min-age", "0"]);
    as_nobody(&mut c);
    let o = c.output().expect("gc");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--locked--") && err.contains("nothing removed"),
        "{err}"
    );
    assert!(
        orphan.exists(),
        "a blob was removed past an unreadable directory"
    );
}
