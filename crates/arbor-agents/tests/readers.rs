//! The readers on the golden sources (goldens/agents/, named in goldens/README.md) and on small
//! hand-made files: every record kind, bad lines and records of future versions reported and
//! skipped, never fatal.
use arbor_agents::model::{NodeKind, Part, Session, Usage};
use arbor_agents::{claude, codex, opencode};
use std::path::{Path, PathBuf};

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents")
}

const CLAUDE: &str = "claude/projects/-work-app/0b7c3f0e-1111-4222-8333-444455556666.jsonl";

fn texts(parts: &[Part]) -> Vec<String> {
    parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => format!("text:{t}"),
            Part::Thinking { text, redacted, .. } => format!("thinking:{text}:{redacted}"),
            Part::ToolCall { id, name, .. } => format!("call:{id}:{name}"),
            Part::Image { mime, .. } => format!("image:{mime}"),
        })
        .collect()
}

/// A one-line picture of each node: kind, parent index and content.
fn shape(s: &Session) -> Vec<String> {
    s.nodes
        .iter()
        .map(|n| {
            let p = n.parent.map_or("-".to_string(), |p| p.to_string());
            match &n.kind {
                NodeKind::User(parts) => format!("{p} user {:?}", texts(parts)),
                NodeKind::Assistant(a) => format!(
                    "{p} assistant {} {} {:?} in={} out={} cr={} cw={}",
                    a.model,
                    a.stop_reason,
                    texts(&a.content),
                    a.usage.input,
                    a.usage.output,
                    a.usage.cache_read,
                    a.usage.cache_write
                ),
                NodeKind::ToolResult(r) => format!(
                    "{p} result {} {} err={} {:?}",
                    r.call_id,
                    r.tool_name,
                    r.is_error,
                    texts(&r.content)
                ),
                NodeKind::Compaction(c) => {
                    format!("{p} compaction {} {:?}", c.tokens_before, c.summary)
                }
                NodeKind::ModelChange { provider, model } => {
                    format!("{p} model {provider}/{model}")
                }
            }
        })
        .collect()
}

#[test]
fn claude_golden_every_record_kind() {
    let s = claude::read(&goldens().join(CLAUDE)).unwrap();
    let got = shape(&s);
    let want = [
        r#"- user ["text:List the files and fix the failing test"]"#,
        "0 model anthropic/claude-sonnet-4-5-20250929",
        // One reply over four lines sharing message.id: one message, usage counted once
        // (the largest of the repeated counts: the last line's output).
        r#"1 assistant claude-sonnet-4-5-20250929 toolUse ["thinking:I should look at the tree first.:false", "text:Let me look.", "call:toolu_1:Bash", "call:toolu_2:Read"] in=10 out=60 cr=0 cw=500"#,
        // The progress line between the reply and its result is skipped; the result hangs
        // under the reply.
        r#"2 result toolu_1 Bash err=false ["text:app.py\ntest.py"]"#,
        r#"3 result toolu_2 Read err=false ["text:def test_add(): assert add(1,1) == 3"]"#,
        r#"4 assistant claude-sonnet-4-5-20250929 stop ["text:The test expects 3; 1+1 is 2. I will fix the test."] in=8 out=20 cr=500 cw=100"#,
        // The turn_duration system line is skipped: the next prompt hangs under the reply.
        r#"5 user ["text:Use a Task agent to check the docs too"]"#,
        r#"6 assistant claude-sonnet-4-5-20250929 toolUse ["call:toolu_3:Task"] in=4 out=30 cr=600 cw=0"#,
        r#"7 result toolu_3 Task err=false ["text:No typos found."]"#,
        "8 model anthropic/claude-opus-4-5-20251101",
        r#"9 assistant claude-opus-4-5-20251101 stop ["text:Docs are fine."] in=3 out=6 cr=700 cw=0"#,
        // compact_boundary (parentUuid null, logicalParentUuid the reply) + isCompactSummary.
        r#"10 compaction 12345 "This session is being continued from a previous conversation that ran out of context. Summary: listed files, fixed test_add, docs checked.""#,
        r#"11 user ["text:Now look at this screenshot", "image:image/png"]"#,
        r#"12 assistant claude-opus-4-5-20251101 stop ["text:It is a single red pixel."] in=50 out=8 cr=0 cw=0"#,
        // A second child of the summary: a branch.
        r#"11 user ["text:Actually, describe the screenshot in French"]"#,
        r#"14 assistant claude-opus-4-5-20251101 stop ["thinking::true", "text:Un seul pixel rouge."] in=9 out=7 cr=300 cw=0"#,
    ];
    assert_eq!(got, want, "{got:#?}");
    assert_eq!(
        s.title.as_deref(),
        Some("add-test fix"),
        "custom-title wins"
    );
    assert_eq!(s.cwd.as_deref(), Some("/work/app"));
    assert_eq!(s.versions, ["2.1.20"]);
    // The torn last line, reported with its number; the future record type counted.
    assert_eq!(s.report.bad_lines.len(), 1, "{:?}", s.report.bad_lines);
    assert_eq!(s.report.bad_lines[0].0, 28);
    assert_eq!(s.report.unknown.get("future-record-kind"), Some(&1));
    assert_eq!(s.report.skipped.get("progress"), Some(&1));
    assert_eq!(s.report.skipped.get("user (isMeta)"), Some(&1));
    // The subagent's file is a child session.
    assert_eq!(s.children.len(), 1);
    let c = &s.children[0];
    assert_eq!(c.id, "a1b2c3d");
    assert_eq!(
        shape(c),
        [
            r#"- user ["text:Read README.md and report typos"]"#,
            "0 model anthropic/claude-haiku-4-5-20251001",
            r#"1 assistant claude-haiku-4-5-20251001 toolUse ["call:toolu_s1:Read"] in=100 out=12 cr=0 cw=0"#,
            r#"2 result toolu_s1 Read err=false ["text:# App\nAdds numbers."]"#,
            r#"3 assistant claude-haiku-4-5-20251001 stop ["text:No typos found."] in=120 out=5 cr=0 cw=0"#,
        ]
    );
}

#[test]
fn claude_real_fragment_reads_with_its_missing_parents_as_roots() {
    let s = claude::read(&goldens().join(
        "claude-real/projects/-home-ubuntulinuxqa2-repos-hallucination-detector/8427ae52-369a-420b-bf83-434a42ea03ab.jsonl",
    ))
    .unwrap();
    assert!(s.report.is_clean(), "{:?}", s.report);
    assert_eq!(s.versions, ["2.1.72"]);
    let got = shape(&s);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].starts_with("- model anthropic/claude-opus-4-6"));
    assert!(
        got[1].starts_with("0 assistant claude-opus-4-6 stop"),
        "{}",
        got[1]
    );
    assert!(
        got[1].ends_with("in=3 out=186 cr=82371 cw=453"),
        "{}",
        got[1]
    );
    // Its parent (line 137) is not in the fragment: a root.
    assert!(got[2].starts_with("- user "), "{}", got[2]);
}

#[test]
fn claude_real_reply_over_two_lines_is_one_message_with_the_final_usage() {
    let s = claude::read(&goldens().join(
        "claude-real/projects/C--Users-Hardel-IdeaProjects-twichplay/9ecbeb02-4f54-4380-9b7b-38cdf9a92eab.jsonl",
    ))
    .unwrap();
    assert!(s.report.is_clean(), "{:?}", s.report);
    assert_eq!(
        s.cwd.as_deref(),
        Some(r"C:\Users\Hardel\IdeaProjects\twichplay")
    );
    assert_eq!(s.versions, ["1.0.51"]);
    let got = shape(&s);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert_eq!(got[0], "- model anthropic/claude-sonnet-4-20250514");
    assert_eq!(
        got[1],
        r#"0 assistant claude-sonnet-4-20250514 toolUse ["call:toolu_014qExS3KR73RMGrui4anoLR:Read"] in=5 out=24 cr=17299 cw=262"#
    );
    // msg_01FD7cj8CxRDrzLMpPuZVEH3: a text line (output_tokens 11 so far) and a tool_use line
    // (427): one message, the final count. Its parent is not in the excerpt: a root. Every
    // line says `stop_reason: null` (written before the reply ended): it stopped to use a tool.
    assert!(
        got[2].starts_with("- assistant claude-sonnet-4-20250514 toolUse [\"text:Parfait ! J'ai"),
        "{}",
        got[2]
    );
    assert!(
        got[2].ends_with(
            r#""call:toolu_019Xtmc2e5WddjEPtrXDQwdp:Edit"] in=4 out=427 cr=17832 cw=525"#
        ),
        "{}",
        got[2]
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn claude_a_reply_copied_to_another_branch_counts_its_usage_once() {
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "s.jsonl",
        concat!(
            r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"q"}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"c","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":7}}}"#,
            "\n",
            r#"{"type":"user","uuid":"u2","parentUuid":null,"timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"q again"}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a2","parentUuid":"u2","timestamp":"2026-01-01T00:00:03Z","message":{"id":"m1","model":"c","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":7}}}"#,
            "\n",
        ),
    );
    let s = claude::read(&p).unwrap();
    let usages: Vec<Usage> = s
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Assistant(a) => Some(a.usage),
            _ => None,
        })
        .collect();
    assert_eq!(usages.len(), 2, "not on the first one's path: not merged");
    assert_eq!(usages[0].output, 7);
    assert_eq!(usages[1], Usage::default());
}

#[test]
fn claude_inline_sidechains_are_child_sessions_and_bad_lines_never_fatal() {
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "s.jsonl",
        concat!(
            "[1,2]\n",
            "\u{feff}garbage\n",
            r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S","message":{"role":"user","content":"main"}}"#,
            "\n",
            r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true,"sessionId":"S","message":{"role":"user","content":"side task"}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"x2","parentUuid":"x1","isSidechain":true,"sessionId":"S","message":{"id":"mx","model":"c","content":[{"type":"text","text":"side answer"}]}}"#,
            "\n",
            r#"{"type":"user","uuid":"u2","parentUuid":"u1"}"#,
            "\n",
            r#"{"uuid":"u3"}"#,
            "\n",
            r#"{"type":"assistant","version":"9.0.0","uuid":"a1","parentUuid":"u1","message":{"id":"m","model":"c","content":[{"type":"future_block","x":1},{"type":"text","text":"ok"}]}}"#,
            "\n",
        ),
    );
    let s = claude::read(&p).unwrap();
    assert_eq!(s.id, "S");
    let lines: Vec<u64> = s.report.bad_lines.iter().map(|b| b.0).collect();
    assert_eq!(lines, [1, 2, 6, 7], "{:?}", s.report.bad_lines);
    assert_eq!(s.nodes.len(), 3, "{:#?}", shape(&s));
    // A block of a future version is kept as text, counted.
    assert!(shape(&s)[2].contains("future_block"), "{:?}", shape(&s));
    assert_eq!(s.children.len(), 1);
    assert_eq!(
        shape(&s.children[0]),
        [
            r#"- user ["text:side task"]"#,
            "0 model anthropic/c",
            r#"1 assistant c stop ["text:side answer"] in=0 out=0 cr=0 cw=0"#
        ]
    );
}

#[test]
fn claude_an_empty_or_unreadable_source() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "empty.jsonl", "");
    let s = claude::read(&p).unwrap();
    assert!(s.nodes.is_empty() && s.report.is_clean());
    // A FIFO planted where a session was: refused without blocking.
    let fifo = d.path().join("fifo.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = claude::read(&fifo).unwrap_err().to_string();
    assert!(
        e.contains("fifo.jsonl") && e.contains("not a regular file"),
        "{e}"
    );
}

const CODEX: &str = "codex/sessions/2026/11/02/rollout-2026-11-02T09-00-00-019a4c1e-0000-7000-8000-00000000c0de.jsonl";

#[test]
fn codex_golden_every_record_kind() {
    let s = codex::read(&goldens().join(CODEX)).unwrap();
    let got = shape(&s);
    let want = [
        r#"- user ["text:<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>"]"#,
        "0 model openai-codex/gpt-5-codex",
        r#"1 user ["text:Why does the build fail?", "image:image/png"]"#,
        // reasoning + function_call until token_count: one reply with that usage (the
        // repeated token_count is not counted again).
        r#"2 assistant gpt-5-codex toolUse ["thinking:**Checking the build log**:false", "call:call_A1:shell"] in=1000 out=120 cr=4000 cw=0"#,
        r#"3 result call_A1 shell err=false ["text:{\"output\":\"error[E0425]: cannot find value `x`\",\"metadata\":{\"exit_code\":101,\"duration_seconds\":1.2}}"]"#,
        r#"4 assistant gpt-5-codex toolUse ["call:call_A2:apply_patch"] in=300 out=80 cr=5000 cw=0"#,
        r#"5 result call_A2 apply_patch err=false ["text:Success. Updated the following files:\nM src/main.rs"]"#,
        r#"6 assistant gpt-5-codex stop ["text:`x` was undefined; I replaced it with `1`. The build passes now."] in=500 out=40 cr=5000 cw=0"#,
        r#"7 user ["text:Now delete the tests"]"#,
        r#"8 assistant gpt-5-codex stop ["text:Deleting tests is risky; are you sure?"] in=600 out=20 cr=5000 cw=0"#,
        // thread_rolled_back 1: the turn stays, an abandoned branch; the next hangs under 7.
        "7 model openai-codex/gpt-5.1-codex-max",
        r#"10 user ["text:Now add a test for the fix"]"#,
        r#"11 assistant gpt-5.1-codex-max stop ["text:Added `tests/fix.rs`."] in=700 out=30 cr=5000 cw=0"#,
        "12 compaction 0 \"Why does the build fail?\\n\\nSummary: the build failed on an undefined `x`; fixed and a test was added.\"",
        r#"13 user ["text:Thanks, commit it"]"#,
        r#"14 assistant gpt-5.1-codex-max toolUse ["call:call_B1:local_shell"] in=0 out=0 cr=0 cw=0"#,
        r#"15 result call_B1 local_shell err=false ["text:[main 1a2b3c] fix"]"#,
        r#"16 assistant gpt-5.1-codex-max stop ["call:ws_1:web_search", "text:Committed as 1a2b3c."] in=0 out=0 cr=0 cw=0"#,
    ];
    assert_eq!(got, want, "{got:#?}");
    assert_eq!(s.id, "019a4c1e-0000-7000-8000-00000000c0de");
    assert_eq!(s.title.as_deref(), Some("Fix the build"));
    assert_eq!(s.versions, ["0.150.0"]);
    assert_eq!(s.report.bad_lines.len(), 1);
    assert_eq!(s.report.bad_lines[0].0, 40);
    assert_eq!(s.report.unknown.get("future_record"), Some(&1));
    assert_eq!(
        s.report.unknown.get("response_item/ghost_snapshot_v9"),
        Some(&1)
    );
    let fork = codex::read(&goldens().join(
        "codex/sessions/2026/11/02/rollout-2026-11-02T10-00-00-019a4c1e-0000-7000-8000-00000000f0c0.jsonl",
    ))
    .unwrap();
    assert_eq!(
        fork.forked_from.as_deref(),
        Some("019a4c1e-0000-7000-8000-00000000c0de")
    );
}

#[test]
fn codex_real_rollouts_old_and_new_user_prompts() {
    let dir = goldens().join("codex-real/sessions/2026/05/18");
    let old = codex::read(
        &dir.join("rollout-2026-05-18T08-26-15-019e3bb1-e75b-7423-b373-f8b8d573b237.jsonl"),
    )
    .unwrap();
    let got = shape(&old);
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(got[3], r#"2 user ["text:add a retry to the uploader"]"#);
    assert!(old.report.is_clean(), "{:?}", old.report);
    let new = codex::read(
        &dir.join("rollout-2026-09-10T21-44-10-01a08d46-8735-7c00-b558-f23eb1ce6cbc.jsonl"),
    )
    .unwrap();
    assert_eq!(
        shape(&new),
        [r#"- user ["text:explore this project and review my draft post"]"#]
    );
}

#[test]
fn opencode_database_and_json_files_read_alike() {
    let db = opencode::Store::load(&goldens().join("opencode")).unwrap();
    let js = opencode::Store::load(&goldens().join("opencode-storage")).unwrap();
    let a = db.read("ses_01main").unwrap();
    let b = js.read("ses_01main").unwrap();
    assert_eq!(shape(&a), shape(&b));
    let got = shape(&a);
    let want = [
        r#"- user ["text:Please update index.ts using sqlite transcript data", "image:image/png"]"#,
        // One assistant message of three steps: three pi messages, each with its step's tokens.
        r#"0 assistant gpt-5 toolUse ["thinking:Edit index.ts first.:false", "text:I will make the edit from sqlite.", "call:call-sql-001:edit"] in=10 out=45 cr=100 cw=0"#,
        r#"1 result call-sql-001 edit err=false ["text:Edit applied"]"#,
        r#"2 assistant gpt-5 toolUse ["call:call-sql-002:bash"] in=10 out=5 cr=0 cw=0"#,
        r#"3 result call-sql-002 bash err=true ["text:exit code 1"]"#,
        r#"4 assistant gpt-5 stop ["text:Edited; the tests still fail."] in=10 out=5 cr=0 cw=0"#,
        r#"5 user ["text:Ask a subagent to explore the repo"]"#,
        r#"6 assistant claude-sonnet-4-5 toolUse ["call:call-task-1:task"] in=20 out=10 cr=0 cw=0"#,
        r#"7 result call-task-1 task err=false ["text:modules: a, b"]"#,
        r#"8 compaction 900 "Summary: index.ts edited, tests failing, modules a and b.""#,
        r#"9 user ["text:Fix the tests"]"#,
        r#"10 assistant claude-sonnet-4-5 error [] in=0 out=0 cr=0 cw=0"#,
    ];
    assert_eq!(got, want, "{got:#?}");
    // Per-step cost.
    let costs: Vec<Option<f64>> = a
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Assistant(x) => Some(x.usage.cost),
            _ => None,
        })
        .collect();
    assert_eq!(costs[..3], [Some(0.01), Some(0.0013), Some(0.001)]);
    assert_eq!(a.title.as_deref(), Some("Update index.ts"));
    assert_eq!(a.children.len(), 1);
    assert_eq!(a.children[0].id, "ses_02sub");
    // The part that is not JSON, reported; a role of a later version, counted.
    assert_eq!(a.report.bad_lines.len(), 1, "{:?}", a.report.bad_lines);
    assert_eq!(a.report.unknown.get("message role system"), Some(&1));
    assert!(db.read("ses_nope").is_err());
}

#[test]
fn opencode_reading_never_touches_the_database() {
    let d = tempfile::tempdir().unwrap();
    let src = goldens().join("opencode/opencode.db");
    std::fs::create_dir_all(d.path().join("oc")).unwrap();
    let db = d.path().join("oc/opencode.db");
    std::fs::copy(&src, &db).unwrap();
    let before = std::fs::read(&db).unwrap();
    let s = opencode::Store::load(&d.path().join("oc")).unwrap();
    assert_eq!(s.sessions.len(), 2);
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(d.path().join("oc"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["opencode.db"], "no -wal, -shm or journal beside it");
}

#[test]
fn opencode_real_database_one_message_per_model_call() {
    let d = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(goldens().join("opencode-real/dump.sql")).unwrap();
    rusqlite::Connection::open(d.path().join("opencode.db"))
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let store = opencode::Store::load(d.path()).unwrap();
    let s = store.read("ses_f0de500f8ffeXvsiYJDOg5JtrU").unwrap();
    assert!(s.report.is_clean(), "{:?}", s.report);
    assert_eq!(s.versions, ["1.18.33"]);
    assert_eq!(s.cwd.as_deref(), Some("/work/proj"));
    assert_eq!(s.title.as_deref(), Some("The command printed fixture."));
    assert_eq!(
        shape(&s),
        [
            r#"- user ["text:\"run echo fixture please\""]"#,
            r#"0 assistant fake-model toolUse ["call:call_1:bash"] in=120 out=8 cr=0 cw=0"#,
            r#"1 result call_1 bash err=false ["text:fixture\n"]"#,
            r#"2 assistant fake-model stop ["text:The command printed fixture."] in=50 out=6 cr=100 cw=0"#,
        ]
    );
}

#[test]
fn claude_older_subagent_files_beside_the_session_are_its_children() {
    let d = tempfile::tempdir().unwrap();
    let main = write(
        d.path(),
        "proj/S1.jsonl",
        concat!(
            r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S1","message":{"role":"user","content":"main"}}"#,
            "\n"
        ),
    );
    write(
        d.path(),
        "proj/agent-1a2b3c4d.jsonl",
        concat!(
            r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true,"agentId":"1a2b3c4d","sessionId":"S1","message":{"role":"user","content":"task"}}"#,
            "\n"
        ),
    );
    write(
        d.path(),
        "proj/agent-99999999.jsonl",
        concat!(
            r#"{"type":"user","uuid":"y1","parentUuid":null,"isSidechain":true,"agentId":"99999999","sessionId":"OTHER","message":{"role":"user","content":"not ours"}}"#,
            "\n"
        ),
    );
    let s = claude::read(&main).unwrap();
    let kids: Vec<&str> = s.children.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(kids, ["1a2b3c4d"]);
    // --all lists the sessions, not the subagents' files.
    let files = claude::session_files(d.path());
    assert_eq!(files, [main]);
}
