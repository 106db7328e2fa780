//! The imports checked against pi 1.5.2's own SessionManager: for every golden source
//! (goldens/agents/, named in goldens/README.md), pi opened arbor's import and recorded the
//! context it resumes from, its leaf, entry count and session name
//! (goldens/agents/expected/NAME.pi.json, made by tools/goldens/agents/make.sh). arbor's import
//! today must give the same entries (NAME.pi.jsonl) and arbor's context on it must equal pi's.
use arbor_agents::model::Session;
use arbor_agents::{claude, codex, opencode, pi};
use arbor_core::{build_session_context, Dialect, LeafSel, SessionDoc};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "subagents" {
                files(&e.path(), out);
            }
        } else if e.path().extension().is_some_and(|x| x == "jsonl") {
            out.push(e.path());
        }
    }
}

/// Every session of every golden set, by golden name, with its parent's source id.
fn sessions() -> BTreeMap<String, (Session, Option<String>)> {
    fn add(
        set: &str,
        s: Session,
        parent: Option<String>,
        out: &mut BTreeMap<String, (Session, Option<String>)>,
    ) {
        let children = s.children.clone();
        let id = s.id.clone();
        out.insert(format!("{set}-{id}"), (s, parent));
        for c in children {
            add(set, c, Some(id.clone()), out);
        }
    }
    let mut out = BTreeMap::new();
    for (set, read) in [
        ("claude", claude::read as fn(&Path) -> _),
        ("claude-real", claude::read),
        ("codex", codex::read),
        ("codex-real", codex::read),
    ] {
        let mut fs = Vec::new();
        files(&goldens().join(set), &mut fs);
        for f in fs {
            add(set, read(&f).unwrap(), None, &mut out);
        }
    }
    let store = opencode::Store::load(&goldens().join("opencode")).unwrap();
    for r in store.sessions.iter().filter(|r| r.parent_id.is_none()) {
        add("opencode", store.read(&r.id).unwrap(), None, &mut out);
    }
    let real = opencode_real();
    let store = opencode::Store::load(real.path()).unwrap();
    for r in &store.sessions {
        add("opencode-real", store.read(&r.id).unwrap(), None, &mut out);
    }
    out
}

/// goldens/agents/opencode-real/dump.sql as an opencode.db in a temporary directory.
pub fn opencode_real() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(goldens().join("opencode-real/dump.sql")).unwrap();
    rusqlite::Connection::open(d.path().join("opencode.db"))
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    d
}

fn pick(ctx: &Value) -> Value {
    serde_json::json!({
        "messages": ctx["messages"],
        "thinkingLevel": ctx["thinkingLevel"],
        "model": ctx["model"],
    })
}

#[test]
fn arbor_context_on_each_import_equals_pi_152s() {
    let all = sessions();
    let mut checked = 0;
    for e in std::fs::read_dir(goldens().join("expected")).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".pi.json"))
        else {
            continue;
        };
        let want: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let (s, parent) = all
            .get(name)
            .unwrap_or_else(|| panic!("{name}: no such golden source"));
        let conv = pi::to_pi_child(s, Dialect::Pi, parent.as_deref());

        // The same entries as when pi opened them (the marker names where it was read).
        let recorded = std::fs::read_to_string(p.with_extension("jsonl")).unwrap();
        let recorded: Vec<&str> = recorded.lines().skip(1).collect();
        assert_eq!(recorded.len(), conv.lines.len(), "{name}");
        for (r, l) in recorded.iter().zip(&conv.lines).skip(1) {
            assert_eq!(*r, String::from_utf8_lossy(&l.bytes), "{name}");
        }
        let marker: Value = serde_json::from_str(recorded[0]).unwrap();
        assert_eq!(marker["data"]["sourceId"], s.id.as_str(), "{name}");

        // arbor's context at the leaf pi resumes from, as pi built it.
        let mut bytes = arbor_store::new_session_head(
            Dialect::Pi,
            "ID",
            "2026-01-01T00:00:00.000Z",
            "/w",
            parent.as_deref(),
            None,
        );
        for l in &conv.lines {
            bytes.extend_from_slice(&l.bytes);
            bytes.push(b'\n');
        }
        let doc = SessionDoc::parse(Arc::new(bytes)).unwrap();
        assert_eq!(doc.dialect(), Dialect::Pi);
        assert_eq!(
            doc.entries().len() as u64,
            want["entries"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            doc.entries().last().and_then(|e| e.id.as_deref()),
            want["leaf"].as_str(),
            "{name}"
        );
        assert_eq!(
            doc.session_name().as_deref(),
            want["sessionName"].as_str(),
            "{name}"
        );
        let mut out = Vec::new();
        build_session_context(&doc, LeafSel::Current).write_json(&doc, &mut out);
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(pick(&got), pick(&want["context"]), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 11, "every golden session checked");
}
