//! pi_agent_rust's fork link (`branchedFrom` in the header, the parent's path: seed 004) is
//! pi's `parentSession` to arbor: the listing names the parent (the browser threads the fork
//! under it) and `stats` counts the fork's copies of its parent's turns once. Golden in
//! pi_agent_rust's shape: goldens/pi-agent-rust/ (`@DIR@` is the directory it is copied to).
use serde_json::Value;
use std::path::{Path, PathBuf};

arbor_testkit::private_home!();
use private_home::ok;

const PARENT: &str = "2026-11-04T09-00-00.000Z_7c1e2a90.jsonl";
const FORK: &str = "2026-11-04T10-00-00.000Z_9e8d7c6b.jsonl";

fn setup(home: &Path) -> (PathBuf, PathBuf) {
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/pi-agent-rust");
    let d = home.join(".pi/agent/sessions/--work-rust--");
    std::fs::create_dir_all(&d).unwrap();
    for f in [PARENT, FORK] {
        let text = std::fs::read_to_string(g.join(f)).unwrap();
        std::fs::write(d.join(f), text.replace("@DIR@", &d.to_string_lossy())).unwrap();
    }
    (d.join(PARENT), d.join(FORK))
}

#[test]
fn branched_from_is_the_fork_link() {
    let home = tempfile::tempdir().unwrap();
    let (parent, fork) = setup(home.path());
    let ls: Value = serde_json::from_str(&ok(home.path(), &["ls", "--all", "--json"])).unwrap();
    let row = |id: &str| {
        ls.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"].as_str().is_some_and(|i| i.starts_with(id)))
            .unwrap()
            .clone()
    };
    assert_eq!(
        row("9e8d7c6b")["parentSessionPath"],
        parent.to_string_lossy().as_ref()
    );
    assert!(row("7c1e2a90")
        .get("parentSessionPath")
        .is_none_or(Value::is_null));

    let v: Value = serde_json::from_str(&ok(
        home.path(),
        &[
            "stats",
            parent.to_str().unwrap(),
            fork.to_str().unwrap(),
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(v["forkCopiesSkipped"], 1, "{v}");
    assert_eq!(v["total"]["turns"], 3, "the copied turn counted once");
    assert_eq!(v["total"]["currentPath"]["input"], 100 + 200 + 300);
}
