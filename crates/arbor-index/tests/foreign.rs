//! Other agents' sessions in the catalog: a refresh reads only the sources whose fingerprint
//! changed (opencode: its database or its `-wal`), a gone source's rows go, and a catalog of
//! the schema before them (7) is rebuilt, never read as if it held them.
use arbor_index::{Catalog, ForeignRoots};
use std::path::{Path, PathBuf};

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

fn roots(h: &Path) -> ForeignRoots {
    ForeignRoots {
        claude: h.join("claude/projects"),
        codex: h.join("codex"),
        opencode: h.join("opencode"),
    }
}

fn home() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let h = t.path();
    copy_tree(
        &goldens().join("claude/projects"),
        &h.join("claude/projects"),
    );
    copy_tree(&goldens().join("codex/sessions"), &h.join("codex/sessions"));
    std::fs::create_dir_all(h.join("opencode")).unwrap();
    std::fs::copy(
        goldens().join("opencode/opencode.db"),
        h.join("opencode/opencode.db"),
    )
    .unwrap();
    t
}

#[test]
fn a_refresh_reads_only_what_changed() {
    let t = home();
    let h = t.path();
    let mut cat = Catalog::open(&h.join("catalog.db")).unwrap();
    let first = cat.refresh_foreign(&roots(h), None).unwrap();
    // Claude Code's session (and its subagent), Codex's two rollouts, opencode's database.
    assert_eq!(first.read, 4);
    assert_eq!(first.rows.len(), 6, "{:?}", first.rows);
    let again = cat.refresh_foreign(&roots(h), None).unwrap();
    assert_eq!(again.read, 0, "nothing changed");
    assert_eq!(again.rows, first.rows);

    // A subagent's transcript grew: its session's source is read again, alone.
    let sub = h.join("claude/projects/-work-app/0b7c3f0e-1111-4222-8333-444455556666/subagents/agent-a1b2c3d.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).open(&sub).unwrap();
    std::io::Write::write_all(&mut f, b"\n").unwrap();
    drop(f);
    assert_eq!(cat.refresh_foreign(&roots(h), None).unwrap().read, 1);

    // opencode wrote into its WAL only: the database is read again.
    std::fs::write(h.join("opencode/opencode.db-wal"), b"").unwrap();
    let r = cat.refresh_foreign(&roots(h), None).unwrap();
    assert_eq!(r.read, 1);
    assert!(cat
        .foreign_fp(&h.join("opencode"))
        .unwrap()
        .unwrap()
        .contains("opencode.db-wal"));

    // A rollout gone: its rows go.
    let gone = h.join("codex/sessions/2026/11/02/rollout-2026-11-02T10-00-00-019a4c1e-0000-7000-8000-00000000f0c0.jsonl");
    std::fs::remove_file(&gone).unwrap();
    let r = cat.refresh_foreign(&roots(h), None).unwrap();
    assert_eq!(r.read, 0);
    assert_eq!(r.rows.len(), 5);
    assert!(r.rows.iter().all(|x| x.source != gone));
    // One agent only: the others' rows are kept, not dropped.
    let only = cat
        .refresh_foreign(&roots(h), Some(arbor_agents::Agent::Codex))
        .unwrap();
    assert_eq!(only.rows.len(), 1);
    assert_eq!(cat.refresh_foreign(&roots(h), None).unwrap().read, 0);
}

#[test]
fn a_catalog_of_schema_7_is_rebuilt_not_misread() {
    let t = home();
    let h = t.path();
    let path = h.join("catalog.db");
    {
        let cat = Catalog::open(&path).unwrap();
        drop(cat);
    }
    // Make it what arbor before this change left: schema 7, no foreign tables.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "DROP TABLE foreign_fts; DROP TABLE foreign_docs; DROP TABLE foreign_sessions; \
             DROP TABLE foreign_sources; UPDATE meta SET value='7' WHERE key='schema';",
        )
        .unwrap();
    }
    let mut cat = Catalog::open(&path).unwrap();
    assert!(cat.report.schema_reset, "an old catalog is rebuilt");
    let got = cat.refresh_foreign(&roots(h), None).unwrap();
    assert_eq!(got.rows.len(), 6);
}
