//! A SESSION argument of `arbor import`: a file, an id, a unique id prefix; several matches
//! and none are errors naming what was looked at.
use arbor_agents::sources::{resolve, Source};
use arbor_agents::Agent;
use std::path::Path;

#[test]
fn ids_and_prefixes_of_each_agent() {
    let g = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let codex = g.join("codex");
    let r = resolve(Agent::Codex, &codex, "019a4c1e-0000-7000-8000-00000000c0de").unwrap();
    assert!(
        matches!(&r, Source::File(Agent::Codex, p) if p.to_string_lossy().ends_with("c0de.jsonl"))
    );
    // A prefix shared by both rollouts: ambiguous, both named.
    let e = resolve(Agent::Codex, &codex, "019a4c1e")
        .unwrap_err()
        .to_string();
    assert!(e.contains("matches 2 codex sessions"), "{e}");
    // The time in the file name is not an id.
    let e = resolve(Agent::Codex, &codex, "2026")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no codex session 2026"), "{e}");
    let claude = g.join("claude/projects");
    let r = resolve(Agent::Claude, &claude, "0b7c3f0e").unwrap();
    assert!(matches!(&r, Source::File(Agent::Claude, _)));
    // A subagent's file is not a session of its own.
    assert!(resolve(Agent::Claude, &claude, "agent-a1b2c3d").is_err());
    let r = resolve(Agent::Opencode, &g.join("opencode"), "ses_01").unwrap();
    assert_eq!(r, Source::Opencode(g.join("opencode"), "ses_01main".into()));
    // A subagent's session comes with its parent's.
    assert!(resolve(Agent::Opencode, &g.join("opencode"), "ses_02sub").is_err());
}
