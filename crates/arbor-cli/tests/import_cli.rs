//! `arbor import` in a private home: Claude Code, Codex and opencode sessions written into pi's
//! layout for their cwd (and omp's with --omp), subagents as child sessions, a second import
//! finding the first and appending only what is new, the sources' bytes never changed, bad
//! lines reported with file and line.
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

arbor_testkit::private_home!();
use private_home::{arbor, ok};

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

fn pi_files(home: &Path, project: &str) -> Vec<PathBuf> {
    let dir = home.join(".pi/agent/sessions").join(project);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    v.sort();
    v
}

const SESSION: &str = "0b7c3f0e-1111-4222-8333-444455556666";

#[test]
fn claude_import_then_again_then_grown() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let claude = h.join(".claude/projects");
    copy_tree(&goldens().join("claude/projects"), &claude);
    let before = snapshot(&h.join(".claude"));

    let out = arbor(h, &["import", "claude", "--all"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!("claude {SESSION}: imported (18 entries)")),
        "{stdout}"
    );
    assert!(
        stdout.contains("claude subagent a1b2c3d: imported"),
        "{stdout}"
    );
    // The torn last line, named by file and line; the record type arbor does not know.
    assert!(
        stderr.contains(&format!("{SESSION}.jsonl:28: ")),
        "{stderr}"
    );
    assert!(stderr.contains("future-record-kind"), "{stderr}");
    let files = pi_files(h, "--work-app--");
    assert_eq!(files.len(), 2, "{files:?}");
    // The subagent's session names the parent's file.
    let child = files
        .iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("\"parentSession\"")
        })
        .unwrap();
    let parent = files.iter().find(|f| *f != child).unwrap();
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(child)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["parentSession"], parent.to_string_lossy().as_ref());
    // arbor reads it as a pi session with the title and the branch taken last.
    let ctx: Value = serde_json::from_str(&ok(h, &["context", parent.to_str().unwrap()])).unwrap();
    let msgs = ctx["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "compactionSummary");
    assert_eq!(
        msgs.last().unwrap()["content"][1]["text"],
        "Un seul pixel rouge."
    );
    assert!(ok(h, &["ls", "--all"]).contains("add-test fix"));

    // Again: found, nothing written.
    let written = snapshot(&h.join(".pi"));
    let again = ok(h, &["import", "claude", SESSION]);
    assert!(again.contains("already imported, nothing new"), "{again}");
    assert_eq!(snapshot(&h.join(".pi")), written);

    // The source grows (Claude appends): only the new entries are appended.
    let src = claude.join(format!("-work-app/{SESSION}.jsonl"));
    let mut text = std::fs::read_to_string(&src).unwrap();
    text.push_str(concat!(
        r#"{"parentUuid":"a9","isSidechain":false,"cwd":"/work/app","sessionId":"0b7c3f0e-1111-4222-8333-444455556666","type":"user","message":{"role":"user","content":"And in German?"},"uuid":"u5","timestamp":"2026-11-01T10:09:00.000Z"}"#, "\n",
        r#"{"parentUuid":"u5","isSidechain":false,"cwd":"/work/app","sessionId":"0b7c3f0e-1111-4222-8333-444455556666","type":"assistant","message":{"id":"msg_01G","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Ein rotes Pixel."}],"usage":{"input_tokens":2,"output_tokens":4}},"uuid":"a10","timestamp":"2026-11-01T10:09:01.000Z"}"#, "\n",
    ));
    std::fs::write(&src, &text).unwrap();
    let grown_source = snapshot(&h.join(".claude"));
    let old = std::fs::read(parent).unwrap();
    let third = ok(h, &["import", "claude", src.to_str().unwrap()]);
    assert!(third.contains("appended 2 new entries"), "{third}");
    let new = std::fs::read(parent).unwrap();
    assert!(new.starts_with(&old), "appended, never rewritten");
    assert_eq!(
        String::from_utf8_lossy(&new[old.len()..]).lines().count(),
        2
    );
    let ctx: Value = serde_json::from_str(&ok(h, &["context", parent.to_str().unwrap()])).unwrap();
    let last = ctx["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "Ein rotes Pixel.");
    assert_eq!(pi_files(h, "--work-app--").len(), 2);

    // The source was only ever read.
    assert_eq!(snapshot(&h.join(".claude")), grown_source);
    let mut expect = before;
    expect.insert(src.clone(), text.into_bytes());
    assert_eq!(grown_source, expect);
}

#[test]
fn codex_and_opencode_import_with_json_output_and_omp() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    copy_tree(
        &goldens().join("codex/sessions"),
        &h.join(".codex/sessions"),
    );
    copy_tree(
        &goldens().join("opencode"),
        &h.join(".local/share/opencode"),
    );
    let before = snapshot(h);

    let out = ok(
        h,
        &[
            "import",
            "codex",
            "--all",
            "--project",
            "/work/app",
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 2, "{out}");
    assert!(arr.iter().all(|i| i["outcome"] == "created"));
    // The fork hangs under its parent's import.
    let fork = arr
        .iter()
        .find(|i| i["sourceId"] == "019a4c1e-0000-7000-8000-00000000f0c0")
        .unwrap();
    let parent = arr
        .iter()
        .find(|i| i["sourceId"] == "019a4c1e-0000-7000-8000-00000000c0de")
        .unwrap();
    let head = std::fs::read_to_string(fork["file"].as_str().unwrap()).unwrap();
    let header: Value = serde_json::from_str(head.lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], parent["file"]);
    assert_eq!(parent["badLines"][0]["line"], 40);

    let none = ok(h, &["import", "codex", "--all", "--project", "/elsewhere"]);
    assert!(none.is_empty(), "{none}");

    let oc = ok(h, &["import", "opencode", "--all", "--omp"]);
    assert!(oc.contains("opencode ses_01main: imported"), "{oc}");
    assert!(oc.contains("opencode subagent ses_02sub: imported"), "{oc}");
    let omp_dir = h.join(".omp/agent/sessions");
    let files: Vec<_> = snapshot(&omp_dir).into_keys().collect();
    assert_eq!(files.len(), 2, "{files:?}");
    // omp's file: the title slot first, read back as omp's.
    let ls = ok(h, &["ls", "--all"]);
    assert!(ls.contains("Update index.ts"), "{ls}");
    assert!(ls.lines().any(|l| l.contains(" omp ")), "{ls}");
    let again = ok(h, &["import", "opencode", "ses_01main", "--omp"]);
    assert!(again.contains("already imported, nothing new"), "{again}");

    // Nothing of Codex's or opencode's changed.
    let after = snapshot(h);
    for (p, b) in &before {
        assert_eq!(after.get(p), Some(b), "{}", p.display());
    }
}

#[test]
fn a_session_that_is_not_there_and_a_symlink_in_the_agents_directory() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let stderr = private_home::fails(h, &["import", "claude", "nope"]);
    assert!(stderr.contains("no claude session nope"), "{stderr}");
    // A symlink planted among Claude's sessions is not a session of Claude's: --all passes it.
    let proj = h.join(".claude/projects/-work-x");
    std::fs::create_dir_all(&proj).unwrap();
    let outside = h.join("outside.jsonl");
    std::fs::write(
        &outside,
        r#"{"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}"#.to_string() + "\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("planted.jsonl")).unwrap();
    let out = arbor(h, &["import", "claude", "--all"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no claude sessions"));
    assert!(!h.join(".pi").exists());
}
