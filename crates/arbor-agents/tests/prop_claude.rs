//! Property: the import of any generated Claude Code tree (replies split over several lines,
//! tool results as user lines, progress lines in the chain, branches) is a pi session that
//! arbor reads back with the same messages on each branch.
use arbor_agents::pi;
use arbor_core::{build_session_context, Dialect, LeafSel, SessionDoc};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Op {
    User,
    /// A reply of `texts` text blocks and `calls` tool calls, each block on its own line.
    Reply {
        texts: usize,
        calls: usize,
    },
    Progress,
    /// Back to before the `n`-th user message (mod their number): the next one is a sibling.
    Branch(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::User),
        3 => (1usize..3, 0usize..3).prop_map(|(texts, calls)| Op::Reply { texts, calls }),
        1 => Just(Op::Progress),
        1 => (0usize..50).prop_map(Op::Branch),
    ]
}

struct Gen {
    lines: Vec<String>,
    /// Logical messages: (parent, simplified message).
    nodes: Vec<(Option<usize>, String)>,
    /// Each user node's (parent uuid, parent node).
    users: Vec<(Option<String>, Option<usize>)>,
    tail_uuid: Option<String>,
    tail: Option<usize>,
    n: usize,
}

impl Gen {
    fn uuid(&mut self) -> String {
        self.n += 1;
        format!("u{}", self.n)
    }
    fn ts(&self) -> String {
        format!(
            "2026-01-01T00:{:02}:{:02}.000Z",
            (self.n / 60) % 60,
            self.n % 60
        )
    }
    fn line(&mut self, mut v: Value) -> String {
        let u = self.uuid();
        v["uuid"] = json!(u);
        v["parentUuid"] = json!(self.tail_uuid);
        v["timestamp"] = json!(self.ts());
        v["sessionId"] = json!("S");
        self.lines.push(v.to_string());
        self.tail_uuid = Some(u.clone());
        u
    }
    fn node(&mut self, m: String) {
        self.nodes.push((self.tail, m));
        self.tail = Some(self.nodes.len() - 1);
    }
    fn apply(&mut self, op: &Op) {
        match op {
            Op::User => {
                let text = format!("prompt {}", self.n);
                self.users.push((self.tail_uuid.clone(), self.tail));
                self.line(json!({"type":"user","message":{"role":"user","content":text}}));
                self.node(format!("user:{text}"));
            }
            Op::Reply { texts, calls } => {
                let mid = format!("msg{}", self.n);
                let mut parts = Vec::new();
                let mut ids = Vec::new();
                for i in 0..*texts {
                    let t = format!("text {} {i}", self.n);
                    parts.push(format!("text={t}"));
                    self.line(json!({"type":"assistant","message":{"id":mid,"model":"m","content":[{"type":"text","text":t}],"usage":{"input_tokens":1,"output_tokens":1}}}));
                }
                for _ in 0..*calls {
                    let id = format!("call{}", self.n);
                    parts.push(format!("call={id}"));
                    ids.push(id.clone());
                    self.line(json!({"type":"assistant","message":{"id":mid,"model":"m","content":[{"type":"tool_use","id":id,"name":"Bash","input":{"command":"ls"}}]}}));
                }
                self.node(format!("assistant:{}", parts.join("|")));
                for id in ids {
                    let out = format!("out of {id}");
                    self.line(json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":out}]}}));
                    self.node(format!("tool:{id}:{out}"));
                }
            }
            Op::Progress => {
                self.line(json!({"type":"progress","data":{"type":"hook_progress"}}));
            }
            Op::Branch(k) => {
                if !self.users.is_empty() {
                    let (u, n) = self.users[k % self.users.len()].clone();
                    self.tail_uuid = u;
                    self.tail = n;
                }
            }
        }
    }
}

fn simplify(m: &Value) -> String {
    let texts = |c: &Value| -> Vec<String> {
        match c {
            Value::String(s) => vec![format!("text={s}")],
            Value::Array(a) => a
                .iter()
                .map(|p| match p["type"].as_str() {
                    Some("text") => format!("text={}", p["text"].as_str().unwrap_or("")),
                    Some("toolCall") => format!("call={}", p["id"].as_str().unwrap_or("")),
                    other => format!("{other:?}"),
                })
                .collect(),
            _ => vec![],
        }
    };
    match m["role"].as_str() {
        Some("user") => {
            let t = texts(&m["content"]);
            format!("user:{}", t.join("|").trim_start_matches("text="))
        }
        Some("assistant") => format!("assistant:{}", texts(&m["content"]).join("|")),
        Some("toolResult") => format!(
            "tool:{}:{}",
            m["toolCallId"].as_str().unwrap_or(""),
            texts(&m["content"]).join("|").trim_start_matches("text=")
        ),
        other => format!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn every_branch_keeps_its_messages(ops in proptest::collection::vec(op(), 1..40)) {
        let mut g = Gen { lines: vec![], nodes: vec![], users: vec![], tail_uuid: None, tail: None, n: 0 };
        for o in &ops {
            g.apply(o);
        }
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("S.jsonl");
        std::fs::write(&src, g.lines.join("\n") + "\n").unwrap();
        let s = arbor_agents::claude::read(&src).unwrap();
        prop_assert!(s.report.bad_lines.is_empty(), "{:?}", s.report);

        // Expected: the messages on the path to each logical leaf.
        let parents: HashSet<usize> = g.nodes.iter().filter_map(|n| n.0).collect();
        let mut want: Vec<Vec<String>> = (0..g.nodes.len())
            .filter(|i| !parents.contains(i))
            .map(|leaf| {
                let mut path = vec![];
                let mut at = Some(leaf);
                while let Some(i) = at {
                    path.push(g.nodes[i].1.clone());
                    at = g.nodes[i].0;
                }
                path.reverse();
                path
            })
            .collect();
        want.sort();

        // Got: the import, read back by arbor, the context of each leaf entry.
        let conv = pi::to_pi(&s, Dialect::Pi);
        let mut bytes = arbor_store::new_session_head(Dialect::Pi, "s", "2026-01-01T00:00:00.000Z", "/w", None, None);
        for l in &conv.lines {
            bytes.extend_from_slice(&l.bytes);
            bytes.push(b'\n');
        }
        let doc = SessionDoc::parse(Arc::new(bytes)).unwrap();
        let with_children: HashSet<String> = doc
            .entries()
            .iter()
            .filter_map(|e| e.parent_id.as_deref().map(str::to_string))
            .collect();
        let mut got: Vec<Vec<String>> = doc
            .entries()
            .iter()
            .filter_map(|e| e.id.as_deref())
            .filter(|id| !with_children.contains(*id))
            .filter_map(|id| {
                let ctx = build_session_context(&doc, LeafSel::Id(id));
                let mut out = Vec::new();
                ctx.write_json(&doc, &mut out);
                let v: Value = serde_json::from_slice(&out).unwrap();
                let msgs: Vec<String> = v["messages"].as_array().unwrap().iter().map(simplify).collect();
                (!msgs.is_empty()).then_some(msgs)
            })
            .collect();
        got.sort();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// The listing's detail (`claude::Detail::Listing`) gives the full read's listing rows,
    /// spends and texts, and the same nodes (tool output and arguments left out).
    #[test]
    fn the_listing_detail_lists_as_the_full_read(ops in proptest::collection::vec(op(), 1..40)) {
        use arbor_agents::claude::{read, read_with, Detail};
        use arbor_agents::listing::summaries;
        let mut g = Gen { lines: vec![], nodes: vec![], users: vec![], tail_uuid: None, tail: None, n: 0 };
        for o in &ops {
            g.apply(o);
        }
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("S.jsonl");
        std::fs::write(&src, g.lines.join("\n") + "\n").unwrap();
        let full = read(&src).unwrap();
        let list = read_with(&src, Detail::Listing).unwrap();
        prop_assert_eq!(summaries(&list), summaries(&full));
        let keys = |s: &arbor_agents::Session| -> Vec<(String, Option<usize>, i64)> {
            s.nodes.iter().map(|n| (n.key.clone(), n.parent, n.timestamp_ms)).collect()
        };
        prop_assert_eq!(keys(&list), keys(&full));
    }
}
