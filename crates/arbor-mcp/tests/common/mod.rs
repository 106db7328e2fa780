//! An in-process client for the server's tests: raw JSON-RPC lines over a duplex pipe, as a
//! client speaks them over stdio (rmcp's stdio transport reads and writes the same lines).
#![allow(dead_code)]
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A secret the scanner finds (anthropic-key), planted in a session.
pub const SECRET: &str = concat!(
    "sk-ant-api03-",
    "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7lM9nO1pQ3rS5tU7vW9xY1zA3bC5dE7fG9hI1jK3lM5nO7pQ9-AA"
);

/// A scratch agent directory with the demo sessions in one project and a session with a
/// planted secret.
pub struct Corpus {
    pub tmp: tempfile::TempDir,
    pub agent: PathBuf,
    pub project: PathBuf,
}

impl Corpus {
    /// The demo sessions (the repository's `demo/sessions`) in project `/work/project`, and
    /// `secret.jsonl` (id `5ec2e7...`) whose user message holds [`SECRET`].
    pub fn new() -> Corpus {
        let tmp = tempfile::tempdir().expect("tempdir");
        let agent = tmp.path().join("agent");
        let project = agent.join("sessions").join("--work-project--");
        std::fs::create_dir_all(&project).expect("mkdir");
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo/sessions");
        for e in std::fs::read_dir(&demo).expect("demo sessions") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "jsonl") {
                std::fs::copy(&p, project.join(p.file_name().expect("name"))).expect("copy");
            }
        }
        let c = Corpus {
            tmp,
            agent,
            project,
        };
        c.write_session(
            "2026-01-02T00-00-00-000Z_5ec2e7aa-0000-7000-8000-000000000001.jsonl",
            "5ec2e7aa-0000-7000-8000-000000000001",
            &[
                (
                    "u1",
                    None,
                    "user",
                    &format!("please deploy with the key {SECRET} zebrafish"),
                ),
                (
                    "a1",
                    Some("u1"),
                    "assistant",
                    "deployed the zebrafish service",
                ),
            ],
        );
        c
    }

    /// Writes a session of `entries` (id, parent, role, text) in the project.
    pub fn write_session(
        &self,
        name: &str,
        id: &str,
        entries: &[(&str, Option<&str>, &str, &str)],
    ) -> PathBuf {
        let mut text = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-02T00:00:00.000Z\",\"cwd\":\"/work/project\"}}\n"
        );
        for (k, (eid, parent, role, body)) in entries.iter().enumerate() {
            let parent = match parent {
                Some(p) => format!("\"{p}\""),
                None => "null".into(),
            };
            let ts = format!("2026-01-02T00:00:{:02}.000Z", k + 1);
            let msg = if *role == "assistant" {
                json!({"role":"assistant","content":[{"type":"text","text":body}],"provider":"anthropic","model":"claude-x","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}},"stopReason":"stop","timestamp":1_767_312_000_000i64 + k as i64})
            } else {
                json!({"role":role,"content":body,"timestamp":1_767_312_000_000i64 + k as i64})
            };
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"{eid}\",\"parentId\":{parent},\"timestamp\":\"{ts}\",\"message\":{msg}}}\n"
            ));
        }
        let p = self.project.join(name);
        std::fs::write(&p, text).expect("write session");
        p
    }

    /// Server options for this corpus (every project, its own catalog).
    pub fn opts(&self) -> arbor_mcp::Options {
        arbor_mcp::Options {
            agent_dir: Some(self.agent.clone()),
            dir: None,
            all: true,
            catalog: Some(self.tmp.path().join("catalog.db")),
            allow_writes: false,
            redact: true,
            watch: false,
        }
    }

    /// The session files, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.project)
            .expect("read")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        v.sort();
        v
    }
}

/// A client talking to an in-process server.
pub struct Client {
    w: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    r: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    next: u64,
    /// Notifications received while waiting for answers.
    pub notes: Vec<Value>,
}

/// How long a test waits for an answer before it fails.
pub const WAIT: Duration = Duration::from_secs(60);

impl Client {
    /// Starts a server with `opts` and initializes it.
    pub async fn start(opts: arbor_mcp::Options) -> Client {
        use rmcp::ServiceExt;
        let (a, b) = tokio::io::duplex(1 << 22);
        let server = arbor_mcp::ArborServer::new(opts).expect("server");
        tokio::spawn(async move {
            if let Ok(running) = server.serve(b).await {
                let _ = running.waiting().await;
            }
        });
        let (r, w) = tokio::io::split(a);
        let mut c = Client {
            w,
            r: BufReader::new(r),
            next: 1,
            notes: Vec::new(),
        };
        let init = c
            .request(
                "initialize",
                json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "initialize: {init}");
        c.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        c
    }

    /// Sends one message (a line).
    pub async fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("json");
        line.push(b'\n');
        self.w.write_all(&line).await.expect("write");
        self.w.flush().await.expect("flush");
    }

    /// The next message from the server.
    pub async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(WAIT, self.r.read_line(&mut line))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(n > 0, "the server closed the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request and returns its answer (notifications before it are kept in `notes`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        self.answer(id).await
    }

    /// Waits for the answer to request `id`.
    pub async fn answer(&mut self, id: u64) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(&json!(id)) {
                return m;
            }
            self.notes.push(m);
        }
    }

    /// The next request id (for requests sent by hand).
    pub fn take_id(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// Calls a tool; returns its result (`structuredContent`, `content`, `isError`).
    pub async fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool}: no result: {r}"))
    }

    /// Calls a tool that must succeed; returns its structured content.
    pub async fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone()).await;
        assert_eq!(r["isError"], json!(false), "{tool} {args}: {r}");
        r["structuredContent"].clone()
    }

    /// Calls a tool that must fail as a tool error; returns its message.
    pub async fn err(&mut self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args.clone()).await;
        assert_eq!(r["isError"], json!(true), "{tool} {args} should fail: {r}");
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}
