//! The common model every reader fills: a session as a tree of nodes in the source's order,
//! each node one pi entry to be (a message, a compaction, a model change), with what the
//! reader could not use kept in a [`Report`].
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// How much of each record the reader converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Everything an import writes.
    #[default]
    Full,
    /// What a listing needs ([`crate::listing::summaries`]: rows, spends, search texts): the
    /// same nodes, tree, titles, times and usage as [`Detail::Full`], but tool results'
    /// content, tool calls' arguments, thinking signatures and images' data are never
    /// parsed (the nodes are there, those fields empty or placeholders), nor a Claude Code
    /// message's members the conversion does not read. The bulk of a session's bytes is in
    /// those fields. (Claude Code and Codex.)
    Listing,
}

/// Which agent wrote a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Anthropic's Claude Code (`~/.claude/projects`).
    Claude,
    /// OpenAI's Codex CLI (`~/.codex/sessions`).
    Codex,
    /// sst's opencode (`~/.local/share/opencode`).
    Opencode,
}

impl Agent {
    /// The name used on the command line and in the import marker.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
        }
    }

    /// The agent named `s` (`claude`, `codex`, `opencode`).
    pub fn from_name(s: &str) -> Option<Agent> {
        match s {
            "claude" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "opencode" => Some(Agent::Opencode),
            _ => None,
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One session of another agent, read.
#[derive(Debug, Clone)]
pub struct Session {
    /// The agent that wrote it.
    pub agent: Agent,
    /// The agent's own id of the session (Claude's `sessionId` or subagent id, Codex's
    /// `session_meta.id`, opencode's `ses_…`).
    pub id: String,
    /// Where it was read from (a file, or opencode's database or storage directory).
    pub path: PathBuf,
    /// The working directory it ran in, if recorded.
    pub cwd: Option<String>,
    /// Its title, if the agent recorded one.
    pub title: Option<String>,
    /// When it started (ms since the epoch), if known.
    pub created_ms: Option<i64>,
    /// The agent versions seen in it (Claude's `version`, Codex's `cli_version`, opencode's
    /// `version`), in the order first seen.
    pub versions: Vec<String>,
    /// The source session it was forked from (Codex's `forked_from_id`, opencode's
    /// `parent_id` of a fork), if any.
    pub forked_from: Option<String>,
    /// Its entries to be, in the source's order (a parent always before its children).
    pub nodes: Vec<Node>,
    /// Subagents' sessions (Claude's sidechains and `subagents/` files, opencode's child
    /// sessions): each becomes a pi session of its own whose `parentSession` is this one.
    pub children: Vec<Session>,
    /// What was skipped and why.
    pub report: Report,
}

impl Session {
    /// An empty session of `agent` read from `path`.
    pub fn new(agent: Agent, id: impl Into<String>, path: impl Into<PathBuf>) -> Session {
        Session {
            agent,
            id: id.into(),
            path: path.into(),
            cwd: None,
            title: None,
            created_ms: None,
            versions: Vec::new(),
            forked_from: None,
            nodes: Vec::new(),
            children: Vec::new(),
            report: Report::default(),
        }
    }

    /// Adds `node` and returns its index.
    pub fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Notes an agent version, once.
    pub fn saw_version(&mut self, v: &str) {
        if !v.is_empty() && !self.versions.iter().any(|x| x == v) {
            self.versions.push(v.to_string());
        }
    }

    /// The messages on the path from the root to `leaf` (node indices), root first.
    pub fn path_to(&self, leaf: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = Some(leaf);
        while let Some(i) = at {
            out.push(i);
            at = self.nodes.get(i).and_then(|n| n.parent);
            if out.len() > self.nodes.len() {
                break;
            }
        }
        out.reverse();
        out
    }
}

/// One entry to be.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// A key unique in its session and stable across reads of a growing source (the source
    /// record's id, or its line number, plus a suffix when one record gives several nodes):
    /// the imported entry's id is derived from it.
    pub key: String,
    /// The parent node (an index into [`Session::nodes`], always smaller), or a root.
    pub parent: Option<usize>,
    /// When it happened (ms since the epoch).
    pub timestamp_ms: i64,
    /// What it is.
    pub kind: NodeKind,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A user message.
    User(Vec<Part>),
    /// An assistant message (one whole reply).
    Assistant(Assistant),
    /// The result of a tool call.
    ToolResult(ToolResult),
    /// A compaction: everything before it on its path is replaced by `summary`.
    Compaction(Compaction),
    /// The model changed.
    ModelChange {
        /// Provider (pi's name: `anthropic`, `openai-codex`, ...).
        provider: String,
        /// Model id.
        model: String,
    },
}

/// Part of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// The model's thinking.
    Thinking {
        /// The text (empty when redacted or encrypted).
        text: String,
        /// The provider's signature or encrypted content, if any.
        signature: Option<String>,
        /// Whether the text was withheld (Claude's `redacted_thinking`).
        redacted: bool,
    },
    /// A tool call.
    ToolCall {
        /// Its id (a tool result names it).
        id: String,
        /// The tool.
        name: String,
        /// Its arguments (an object; a non-JSON input as `{"input": "..."}`).
        arguments: serde_json::Value,
    },
    /// An image, base64.
    Image {
        /// The base64 data.
        data: String,
        /// Its MIME type.
        mime: String,
    },
}

/// An assistant reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assistant {
    /// Its content in order.
    pub content: Vec<Part>,
    /// pi's `api` (`anthropic-messages`, `openai-responses`, ...).
    pub api: String,
    /// pi's provider name.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Tokens (and cost when the agent recorded it) of the call that made it.
    pub usage: Usage,
    /// pi's stop reason (`stop`, `toolUse`, `length`, `error`, `aborted`).
    pub stop_reason: String,
    /// The provider's response id (Claude's `message.id`).
    pub response_id: Option<String>,
    /// An error the agent recorded.
    pub error: Option<String>,
}

/// Token counts in pi's terms (`input` excludes cache reads and writes).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input: u64,
    /// Output tokens (reasoning included).
    pub output: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// Tokens written to the cache.
    pub cache_write: u64,
    /// Dollars, when the agent recorded them (opencode); `None`: not recorded.
    pub cost: Option<f64>,
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The tool's name (from the call, `unknown` if the call was not seen).
    pub tool_name: String,
    /// Text and images.
    pub content: Vec<Part>,
    /// Whether the tool failed.
    pub is_error: bool,
}

/// A compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The summary the conversation continued from.
    pub summary: String,
    /// Context tokens before it, if recorded.
    pub tokens_before: u64,
    /// The first node kept after it (before the compaction on its path); `None`: none kept.
    pub first_kept: Option<usize>,
}

/// One more `kind` in `counts` (its name copied only the first time: a reader counts most
/// lines of a file here).
fn count(counts: &mut BTreeMap<String, u64>, kind: &str) {
    match counts.get_mut(kind) {
        Some(n) => *n += 1,
        None => {
            counts.insert(kind.to_string(), 1);
        }
    }
}

/// What a reader skipped, and why: a bad line is never fatal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Lines that could not be read: (line number, 1-based; the problem).
    pub bad_lines: Vec<(u64, String)>,
    /// Record types the reader does not know, with how often each was seen.
    pub unknown: BTreeMap<String, u64>,
    /// Records known and deliberately not imported (progress, meta, snapshots, ...), by kind.
    pub skipped: BTreeMap<String, u64>,
}

impl Report {
    /// Notes a bad line.
    pub fn bad(&mut self, line: u64, problem: impl Into<String>) {
        self.bad_lines.push((line, problem.into()));
    }

    /// Counts an unknown record type.
    pub fn unknown(&mut self, kind: &str) {
        count(&mut self.unknown, kind);
    }

    /// Counts a skipped record.
    pub fn skip(&mut self, kind: &str) {
        count(&mut self.skipped, kind);
    }

    /// Whether nothing was bad or unknown.
    pub fn is_clean(&self) -> bool {
        self.bad_lines.is_empty() && self.unknown.is_empty()
    }
}
