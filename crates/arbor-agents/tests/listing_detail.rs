//! The listing's detail of the Claude Code reader (`claude::Detail::Listing`: tool output,
//! tool arguments, thinking signatures and images' data never parsed) gives the same listing
//! rows, spends and search texts as the full read the import uses, and the same tree: on
//! every golden, on hand-written records of every block kind, and (prop_claude.rs) on
//! generated trees.
use arbor_agents::claude::{self, Detail};
use arbor_agents::codex;
use arbor_agents::listing;
use arbor_agents::model::{NodeKind, Part, Session};
use std::path::{Path, PathBuf};

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

/// The tree of `s` and its children: each node's key, parent and kind, without the fields
/// the listing's detail leaves out.
fn shape(s: &Session) -> Vec<String> {
    let mut out = vec![format!(
        "session {} cwd={:?} title={:?} created={:?} versions={:?} report={:?}",
        s.id, s.cwd, s.title, s.created_ms, s.versions, s.report
    )];
    for n in &s.nodes {
        let kind = match &n.kind {
            NodeKind::User(p) => format!("user {}", parts(p)),
            NodeKind::Assistant(a) => format!(
                "assistant {} {} {:?} {} {:?} {:?}",
                parts(&a.content),
                a.model,
                a.usage,
                a.stop_reason,
                a.response_id,
                a.error
            ),
            NodeKind::ToolResult(t) => {
                format!("tool {} {} {}", t.call_id, t.tool_name, t.is_error)
            }
            NodeKind::Compaction(c) => format!("compaction {:?} {}", c.summary, c.tokens_before),
            NodeKind::ModelChange { provider, model } => format!("model {provider}/{model}"),
        };
        out.push(format!(
            "{} {:?} {} {kind}",
            n.key, n.parent, n.timestamp_ms
        ));
    }
    for c in &s.children {
        out.extend(shape(c));
    }
    out
}

fn parts(p: &[Part]) -> String {
    p.iter()
        .map(|p| match p {
            Part::Text(t) => format!("text={t}"),
            Part::Thinking { text, redacted, .. } => format!("thinking={text}/{redacted}"),
            Part::ToolCall { id, name, .. } => format!("call={id}/{name}"),
            Part::Image { .. } => "image".to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn same(path: &Path) -> Session {
    same_with(path, claude::read, claude::read_with)
}

type Read = fn(&Path) -> Result<Session, arbor_agents::AgentError>;
type ReadWith = fn(&Path, Detail) -> Result<Session, arbor_agents::AgentError>;

fn same_with(path: &Path, read: Read, read_with: ReadWith) -> Session {
    let full = read(path).unwrap();
    assert_eq!(shape(&read_with(path, Detail::Full).unwrap()), shape(&full));
    let list = read_with(path, Detail::Listing).unwrap();
    assert_eq!(shape(&list), shape(&full), "{}", path.display());
    assert_eq!(
        listing::summaries(&list),
        listing::summaries(&full),
        "{}",
        path.display()
    );
    full
}

#[test]
fn every_golden_lists_the_same_at_the_listing_detail() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let mut fs = Vec::new();
    for set in ["claude", "claude-real"] {
        files(&root.join(set), &mut fs);
    }
    assert!(fs.len() >= 3, "{fs:?}");
    let (mut results, mut calls) = (0, 0);
    for f in &fs {
        let s = same(f);
        for n in s
            .nodes
            .iter()
            .chain(s.children.iter().flat_map(|c| &c.nodes))
        {
            match &n.kind {
                NodeKind::ToolResult(t) if !t.content.is_empty() => results += 1,
                NodeKind::Assistant(a) => {
                    calls += a
                        .content
                        .iter()
                        .filter(|p| matches!(p, Part::ToolCall { .. }))
                        .count()
                }
                _ => {}
            }
        }
    }
    // The goldens hold what the listing's detail leaves out.
    assert!(results >= 3 && calls >= 3, "{results} {calls}");
}

#[test]
fn every_codex_golden_lists_the_same_at_the_listing_detail() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/agents");
    let mut fs = Vec::new();
    for set in ["codex", "codex-real"] {
        files(&root.join(set), &mut fs);
    }
    assert!(fs.len() >= 3, "{fs:?}");
    let mut results = 0;
    for f in &fs {
        let s = same_with(f, codex::read, codex::read_with);
        results += s
            .nodes
            .iter()
            .filter(|n| matches!(&n.kind, NodeKind::ToolResult(t) if !t.content.is_empty()))
            .count();
    }
    assert!(results >= 3, "{results}");
}

#[test]
fn codex_events_not_read_are_not_parsed_and_the_listing_leaves_out_tool_output() {
    let d = tempfile::tempdir().unwrap();
    let src = d
        .path()
        .join("rollout-2026-11-02T10-00-00-019a4c1e-0000-7000-8000-00000000f0c0.jsonl");
    let big = "y".repeat(3000);
    let lines = [
        r#"{"timestamp":"2026-11-02T10:00:00.000Z","type":"session_meta","payload":{"id":"019a4c1e-0000-7000-8000-00000000f0c0","timestamp":"2026-11-02T10:00:00.000Z","cwd":"/work/app","cli_version":"0.150.0"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:00.100Z","type":"turn_context","payload":{"cwd":"/work/app","model":"gpt-5-codex"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"build it"}]}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:01.100Z","type":"event_msg","payload":{"type":"user_message","message":"build it","images":[]}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:02.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**"}],"content":null,"encrypted_content":"gAAAAB"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:02.100Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAAC"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:03.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"make\"]}","call_id":"c1"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:03.100Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":10},"last_token_usage":{"input_tokens":8,"cached_input_tokens":2,"output_tokens":2}}}}"#.to_string(),
        // An event the reader does not read, its payload not even valid for serde_json's
        // depth limit: only its type is parsed.
        format!(r#"{{"timestamp":"2026-11-02T10:00:04.000Z","type":"event_msg","payload":{{"type":"exec_command_end","call_id":"c1","stdout":"{big}","deep":{}{}}}}}"#, "[".repeat(200), "]".repeat(200)),
        format!(r#"{{"timestamp":"2026-11-02T10:00:04.100Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c1","output":"{big}"}}}}"#),
        r#"{"timestamp":"2026-11-02T10:00:05.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:05.100Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c2","output":{"content":"failed","success":false}}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:06.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c3","status":"completed","action":{"type":"exec","command":["ls"]}}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:06.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"a b"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:07.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"built"}]}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:07.100Z","type":"event_msg","payload":{"type":"agent_message","message":"built"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:07.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":20},"last_token_usage":{"input_tokens":9,"cached_input_tokens":0,"output_tokens":1}}}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:08.000Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_name":"Build"}}"#.to_string(),
        r#"{"timestamp":"2026-11-02T10:00:09.000Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Summary: built"}]}]}}"#.to_string(),
        "[1,2]".to_string(),
        r#"{"timestamp":"2026-11-02T10:00:10.000Z","type":"future_record","payload":{"x":1}}"#.to_string(),
    ];
    std::fs::write(&src, lines.join("\n") + "\n").unwrap();
    let s = same_with(&src, codex::read, codex::read_with);
    let list = codex::read_with(&src, Detail::Listing).unwrap();
    let out = |s: &Session| -> Vec<(String, usize, bool)> {
        s.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::ToolResult(t) => {
                    Some((t.call_id.clone(), parts(&t.content).len(), t.is_error))
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        out(&s),
        [
            ("c1".to_string(), 3005, false),
            ("c2".into(), 11, true),
            ("c3".into(), 8, false)
        ]
    );
    assert_eq!(
        out(&list),
        [
            ("c1".to_string(), 5, false),
            ("c2".into(), 5, true),
            ("c3".into(), 5, false)
        ]
    );
    // The exec_command_end line is read (its nesting is never parsed), counted as skipped.
    assert_eq!(s.report.bad_lines.len(), 1, "{:?}", s.report);
    assert_eq!(s.report.skipped.get("event_msg/exec_command_end"), Some(&1));
    assert_eq!(s.title.as_deref(), Some("Build"));
}

#[test]
fn every_block_kind_lists_the_same_and_the_bulk_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("S.jsonl");
    let big = "x".repeat(4000);
    let lines = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S","cwd":"/w","version":"2.1.72","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"image","source":{"type":"url","url":"https://e.x/a.png"}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}},{"type":"mystery","x":1}]}}"#.to_string(),
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","model":"claude-sonnet-4-5-20250929","content":[{"type":"thinking","thinking":"hmm","signature":"SIG"}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1,"cache_read_input_tokens":100}}}"#.to_string(),
        r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","timestamp":"2026-01-01T00:00:02Z","message":{"id":"m1","model":"claude-sonnet-4-5-20250929","content":[{"type":"redacted_thinking","data":"RED"},{"type":"text","text":"I will run it"},{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls"}},{"type":"web_fetch_tool_result","content":"odd"}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":9,"cache_read_input_tokens":100}}}"#.to_string(),
        format!(r#"{{"type":"user","uuid":"t1","parentUuid":"a2","timestamp":"2026-01-01T00:00:03Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"c1","content":[{{"type":"text","text":"{big}"}},{{"type":"image","source":{{"type":"base64","data":"AAAA"}}}}],"is_error":false}}]}},"toolUseResult":{{"stdout":"{big}","stderr":"","nested":{{"deep":[1,2,{{"a":"\\ud800"}}]}}}}}}"#),
        r#"{"type":"user","uuid":"t2","parentUuid":"t1","timestamp":"2026-01-01T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"boom"}]},"toolUseResult":"Error: boom"}"#.to_string(),
        r#"{"type":"progress","uuid":"p1","parentUuid":"t2","timestamp":"2026-01-01T00:00:05Z","data":{"type":"hook_progress","big":[1,2,3]}}"#.to_string(),
        r#"{"type":"user","uuid":"m0","parentUuid":"p1","isMeta":true,"timestamp":"2026-01-01T00:00:06Z","message":{"role":"user","content":"caveat"}}"#.to_string(),
        r#"{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"m0","timestamp":"2026-01-01T00:00:07Z","compactMetadata":{"trigger":"auto","preTokens":1234}}"#.to_string(),
        r#"{"type":"user","uuid":"s1","parentUuid":"b1","isCompactSummary":true,"timestamp":"2026-01-01T00:00:08Z","message":{"role":"user","content":"the summary"}}"#.to_string(),
        r#"{"type":"assistant","uuid":"a3","parentUuid":"s1","isApiErrorMessage":true,"error":"rate_limit","timestamp":"2026-01-01T00:00:09Z","message":{"id":"m2","model":"<synthetic>","content":[{"type":"text","text":"API Error"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}}}"#.to_string(),
        r#"{"type":"user","uuid":"u2","parentUuid":"u1","timestamp":"2026-01-01T00:00:10Z","message":{"role":"user","content":"a branch","content":"the last duplicate"}}"#.to_string(),
        // A reply whose message and usage hold members the conversion does not read (left out
        // at the listing's detail), a duplicate and keys written with escapes (kept).
        r#"{"type":"assistant","uuid":"a4","parentUuid":"u2","timestamp":"2026-01-01T00:00:11Z","message":{"type":"message","role":"assistant","\u0069d":"m3","model":"claude-opus-4-6","content":[{"type":"text","text":"usage in full"}],"stop_reason":"end_turn","stop_sequence":null,"container":{"deep":[[[1]]]},"usage":{"input_tokens":1,"input_tokens":7,"output_tokens":2,"cache_creation_input_tokens":5,"cache_read_input_tokens":11,"service_tier":"standard","cache_creation":{"ephemeral_5m_input_tokens":5},"server_tool_use":{"web_search_requests":1},"out\u0070ut_tokens":4}}}"#.to_string(),
        r#"{"type":"custom-title","customTitle":"named","sessionId":"S"}"#.to_string(),
        "not json".to_string(),
        r#"{"type":"futuristic","uuid":"f1","parentUuid":"u2"}"#.to_string(),
    ];
    std::fs::write(&src, lines.join("\n") + "\n").unwrap();
    let s = same(&src);
    // The file holds what it should: the full read keeps the bulk, the listing's does not.
    let list = claude::read_with(&src, Detail::Listing).unwrap();
    let tool = |s: &Session| {
        s.nodes
            .iter()
            .find_map(|n| match &n.kind {
                NodeKind::ToolResult(t) if t.call_id == "c1" => Some(t.content.clone()),
                _ => None,
            })
            .unwrap()
    };
    // The reply of members left out: its id (written with escapes) and its usage (the last of
    // a duplicate, an escaped key) read as the full read reads them.
    let m3 = list
        .nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Assistant(a) if a.response_id.as_deref() == Some("m3") => Some(a.usage),
            _ => None,
        })
        .expect("m3 read at the listing's detail");
    assert_eq!(
        (m3.input, m3.output, m3.cache_read, m3.cache_write),
        (7, 4, 11, 5)
    );
    assert_eq!(tool(&s).len(), 2, "the full read keeps the tool output");
    assert_eq!(
        tool(&list),
        vec![Part::Text(String::new())],
        "the listing's read does not parse it"
    );
    // The tool result whose toolUseResult holds a lone surrogate is read (toolUseResult's
    // structure is never parsed), and the error string still marks the failed one.
    let errors: Vec<bool> = s
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::ToolResult(t) => Some(t.is_error),
            _ => None,
        })
        .collect();
    assert_eq!(errors, vec![false, true]);
    assert_eq!(s.report.bad_lines.len(), 1, "{:?}", s.report);
    assert_eq!(s.title.as_deref(), Some("named"));
}

/// Sets `p`'s mtime to `secs` ago (a directory that settled long ago: its listing of
/// subagents' files is remembered).
fn age(p: &Path, secs: i64) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as libc::time_t;
    let t = libc::timespec {
        tv_sec: now - secs as libc::time_t,
        tv_nsec: 0,
    };
    // SAFETY: `c` is a NUL-terminated path; `times` points at two valid timespecs.
    let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [t, t].as_ptr(), 0) };
    assert_eq!(r, 0);
}

#[test]
fn a_remembered_directory_listing_sees_a_subagent_file_added_later() {
    let d = tempfile::tempdir().unwrap();
    let proj = d.path().join("proj");
    std::fs::create_dir(&proj).unwrap();
    let main = proj.join("S1.jsonl");
    std::fs::write(
        &main,
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S1","message":{"role":"user","content":"main"}}"#.to_string() + "\n",
    )
    .unwrap();
    let agent = |id: &str| {
        std::fs::write(
            proj.join(format!("agent-{id}.jsonl")),
            format!(r#"{{"type":"user","uuid":"x{id}","parentUuid":null,"isSidechain":true,"agentId":"{id}","sessionId":"S1","message":{{"role":"user","content":"task"}}}}"#) + "\n",
        )
        .unwrap();
    };
    agent("aaaa");
    age(&proj, 3600);
    let kids = |s: &Session| s.children.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    for detail in [Detail::Full, Detail::Listing] {
        assert_eq!(kids(&claude::read_with(&main, detail).unwrap()), ["aaaa"]);
    }
    // A file added changes the directory's mtime: listed again.
    agent("bbbb");
    assert_eq!(kids(&claude::read(&main).unwrap()), ["aaaa", "bbbb"]);
    // Settled again, and a file removed.
    age(&proj, 7200);
    assert_eq!(kids(&claude::read(&main).unwrap()), ["aaaa", "bbbb"]);
    std::fs::remove_file(proj.join("agent-aaaa.jsonl")).unwrap();
    assert_eq!(kids(&claude::read(&main).unwrap()), ["bbbb"]);
}
