//! A hostile source: a cwd that tries to climb out of the sessions directory, absurd nesting,
//! control characters, ids that look like paths. The import lands under the agent directory's
//! `sessions/`, every bad line is reported, the pi file reads back.
use arbor_agents::import::{import, Options};
use arbor_core::Dialect;

#[test]
fn a_hostile_claude_session_is_imported_inside_the_sessions_directory() {
    let d = tempfile::tempdir().unwrap();
    let deep = format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000));
    for cwd in ["../../../../tmp/escape", "..", "/a/../../b", ""] {
        let src = d.path().join("s.jsonl");
        let text = [
            format!(r#"{{"type":"user","uuid":"../../x","parentUuid":null,"sessionId":"../../../etc/passwd","cwd":{},"timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"hi\u001b[2J\u0000\r\nthere"}}}}"#, serde_json::json!(cwd)),
            deep.clone(),
            r#"{"type":"assistant","uuid":"a","parentUuid":"../../x","message":{"id":"m","model":"m\n","content":[{"type":"text","text":"ok"}]}}"#.to_string(),
        ]
        .join("\n")
            + "\n";
        std::fs::write(&src, text).unwrap();
        let s = arbor_agents::claude::read(&src).unwrap();
        assert_eq!(
            s.report.bad_lines.len(),
            1,
            "the nesting: {:?}",
            s.report.bad_lines
        );
        assert_eq!(s.report.bad_lines[0].0, 2);
        let agent = d.path().join("agent");
        let i = import(
            &s,
            &Options {
                dialect: Dialect::Pi,
                agent_dir: agent.clone(),
                fallback_cwd: "/fallback".into(),
            },
        )
        .unwrap();
        let sessions = std::fs::canonicalize(agent.join("sessions")).unwrap();
        let file = std::fs::canonicalize(&i.file).unwrap();
        assert!(file.starts_with(&sessions), "{cwd:?}: {}", file.display());
        assert_eq!(file.parent().unwrap().parent().unwrap(), sessions);
        let sm = arbor_store::SessionManager::open_read_only(&i.file).unwrap();
        assert_eq!(
            sm.entries().len(),
            4,
            "marker, user, model change, assistant"
        );
        std::fs::remove_dir_all(&agent).unwrap();
    }
}
