//! What the full-text index holds: the kinds of text, and how each is taken from an entry.
use arbor_core::entry::{Entry, Fields};
use arbor_core::json::{JsValue, ValueKind};

/// The kind of an indexed text (the `role` of a search hit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// User message text (string content, or its `text` blocks).
    User,
    /// Assistant message text (its `text` blocks).
    Assistant,
    /// Assistant thinking blocks (indexed only when asked for).
    Thinking,
    /// Tool result text (indexed only when asked for).
    ToolResult,
    /// A `!command` run by the user: command and output (indexed with tool output).
    BashExecution,
    /// A compaction summary.
    Compaction,
    /// A branch summary.
    BranchSummary,
    /// A session name (`session_info`, omp's `title_change`, an omp header title).
    Name,
    /// A label (the hit points at the labelled entry).
    Label,
    /// A pi 1.5 system message: its text and its sections.
    System,
    /// A pi 1.5 context edit: the replacement content (the hit points at the edit).
    ContextEdit,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 11] = [
        Kind::User,
        Kind::Assistant,
        Kind::Thinking,
        Kind::ToolResult,
        Kind::BashExecution,
        Kind::Compaction,
        Kind::BranchSummary,
        Kind::Name,
        Kind::Label,
        Kind::System,
        Kind::ContextEdit,
    ];

    /// Storage code.
    pub fn code(self) -> i64 {
        match self {
            Kind::User => 1,
            Kind::Assistant => 2,
            Kind::Thinking => 3,
            Kind::ToolResult => 4,
            Kind::BashExecution => 5,
            Kind::Compaction => 6,
            Kind::BranchSummary => 7,
            Kind::Name => 8,
            Kind::Label => 9,
            Kind::System => 10,
            Kind::ContextEdit => 11,
        }
    }

    /// The kind of a storage code.
    pub fn from_code(c: i64) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == c)
    }

    /// The name used in output and in `--role`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::Thinking => "thinking",
            Kind::ToolResult => "toolResult",
            Kind::BashExecution => "bashExecution",
            Kind::Compaction => "compaction",
            Kind::BranchSummary => "branchSummary",
            Kind::Name => "name",
            Kind::Label => "label",
            Kind::System => "system",
            Kind::ContextEdit => "contextEdit",
        }
    }

    /// The kinds a `--role` value selects (`tool` is tool results and bash runs, `summary`
    /// both summaries); case-insensitive. `None` for an unknown name.
    pub fn parse_role(s: &str) -> Option<Vec<Kind>> {
        let l = s.to_ascii_lowercase();
        let one = |k: Kind| Some(vec![k]);
        match l.as_str() {
            "user" => one(Kind::User),
            "assistant" => one(Kind::Assistant),
            "thinking" => one(Kind::Thinking),
            "toolresult" | "tool_result" => one(Kind::ToolResult),
            "bashexecution" | "bash" => one(Kind::BashExecution),
            "tool" | "tools" => Some(vec![Kind::ToolResult, Kind::BashExecution]),
            "compaction" => one(Kind::Compaction),
            "branchsummary" | "branch_summary" => one(Kind::BranchSummary),
            "summary" | "summaries" => Some(vec![Kind::Compaction, Kind::BranchSummary]),
            "name" | "title" => one(Kind::Name),
            "label" => one(Kind::Label),
            "system" => one(Kind::System),
            "contextedit" | "context_edit" | "edit" => one(Kind::ContextEdit),
            _ => None,
        }
    }

    /// Whether the kind is indexed only on request.
    pub fn is_opt_in(self) -> bool {
        matches!(
            self,
            Kind::Thinking | Kind::ToolResult | Kind::BashExecution
        )
    }
}

/// Which opt-in kinds a catalog indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexKinds {
    /// Assistant thinking blocks.
    pub thinking: bool,
    /// Tool results and bash runs.
    pub tools: bool,
}

impl IndexKinds {
    /// Whether `k` is indexed.
    pub fn includes(self, k: Kind) -> bool {
        match k {
            Kind::Thinking => self.thinking,
            Kind::ToolResult | Kind::BashExecution => self.tools,
            _ => true,
        }
    }
    /// Storage form (`"thinking,tools"`).
    pub fn to_setting(self) -> String {
        let mut v = Vec::new();
        if self.thinking {
            v.push("thinking");
        }
        if self.tools {
            v.push("tools");
        }
        v.join(",")
    }
    /// Reads [`IndexKinds::to_setting`].
    pub fn from_setting(s: &str) -> IndexKinds {
        IndexKinds {
            thinking: s.split(',').any(|p| p == "thinking"),
            tools: s.split(',').any(|p| p == "tools"),
        }
    }
    /// Both flags of `self` and `other`.
    pub fn union(self, other: IndexKinds) -> IndexKinds {
        IndexKinds {
            thinking: self.thinking || other.thinking,
            tools: self.tools || other.tools,
        }
    }
}

/// A string value, decoded.
fn string_of(raw: &[u8], kind: ValueKind) -> Option<String> {
    arbor_core::entry::raw_str(raw, kind).map(|s| s.into_owned())
}

/// Text of the blocks of `content` (an array) whose `type` is `block_type`, member `key`,
/// joined with `sep`; a string content counts when `block_type` is `"text"`.
pub fn blocks_text(content: &JsValue, block_type: &str, key: &str, sep: &str) -> String {
    match content {
        JsValue::String(s) if block_type == "text" => s.to_string_lossy().into_owned(),
        JsValue::Array(blocks) => {
            let mut parts: Vec<String> = Vec::new();
            for b in blocks {
                if b.get("type").and_then(|t| t.as_str_lossy()).as_deref() == Some(block_type) {
                    if let Some(t) = b.get(key).and_then(|t| t.as_str_lossy()) {
                        if !t.is_empty() {
                            parts.push(t.into_owned());
                        }
                    }
                }
            }
            parts.join(sep)
        }
        _ => String::new(),
    }
}

/// The message's `content`, parsed.
pub fn content_of(line: &[u8], msg: &Fields) -> JsValue {
    msg.value(line, "content").unwrap_or(JsValue::Null)
}

/// Thinking text of an assistant message.
pub fn thinking_text(line: &[u8], msg: &Fields) -> String {
    blocks_text(&content_of(line, msg), "thinking", "thinking", "\n")
}

/// Text of a tool result.
pub fn tool_result_text(line: &[u8], msg: &Fields) -> String {
    blocks_text(&content_of(line, msg), "text", "text", "\n")
}

/// Command and output of a `bashExecution` message.
pub fn bash_text(line: &[u8], msg: &Fields) -> String {
    let c = msg.str(line, "command").unwrap_or_default();
    let o = msg.str(line, "output").unwrap_or_default();
    if o.is_empty() {
        c.into_owned()
    } else {
        format!("{c}\n{o}")
    }
}

/// A string member of an entry, decoded, when non-empty.
pub fn entry_str(line: &[u8], e: &Entry, key: &str) -> Option<String> {
    let (raw, kind) = e.fields.get(line, key)?;
    string_of(raw, kind).filter(|s| !s.is_empty())
}

/// The text pi lists for a user or assistant message (`extractTextContent`), for sessions pi
/// hides (their texts are still searchable). `None` when there is none.
pub fn message_text(line: &[u8], msg: &Fields) -> Option<String> {
    if !msg.has(line, "content") {
        return None;
    }
    arbor_store::discover::extract_text(&content_of(line, msg))
        .filter(|t| !t.is_empty())
        .map(|t| t.to_string_lossy().into_owned())
}

/// A system message's searchable text: its content, then each section's text.
pub fn system_text(line: &[u8], msg: &Fields) -> Option<String> {
    let mut parts: Vec<String> = message_text(line, msg).into_iter().collect();
    if let Some(JsValue::Object(sections)) = msg.value(line, "sections").as_ref() {
        for (_, v) in sections {
            if let Some(t) = arbor_store::discover::extract_text(v).filter(|t| !t.is_empty()) {
                parts.push(t.to_string_lossy().into_owned());
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A context edit's searchable text: its replacement's content (nothing for a removal).
pub fn context_edit_text(line: &[u8], e: &arbor_core::Entry) -> Option<String> {
    let r = e.fields.value(line, "replacement")?;
    let c = r.get("content")?;
    arbor_store::discover::extract_text(c)
        .filter(|t| !t.is_empty())
        .map(|t| t.to_string_lossy().into_owned())
}

/// Token and cost totals: the one usage sum, [`arbor_store::usage::Tokens`].
pub use arbor_store::usage::Tokens as Usage;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_code(k.code()), Some(k));
            assert_eq!(Kind::parse_role(k.name()), Some(vec![k]));
        }
        assert_eq!(
            Kind::parse_role("tool"),
            Some(vec![Kind::ToolResult, Kind::BashExecution])
        );
        assert_eq!(Kind::parse_role("nope"), None);
        let k = IndexKinds {
            thinking: true,
            tools: false,
        };
        assert_eq!(IndexKinds::from_setting(&k.to_setting()), k);
    }

    #[test]
    fn block_texts() {
        let c = JsValue::parse(br#"[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"a"},{"type":"text","text":"b"}]"#).unwrap();
        assert_eq!(blocks_text(&c, "text", "text", "\n"), "a\nb");
        assert_eq!(blocks_text(&c, "thinking", "thinking", "\n"), "hmm");
        let mut u = Usage::default();
        u.add(&Usage::of(
            &JsValue::parse(br#"{"input":10,"output":5,"cacheRead":1,"cost":{"total":0.5}}"#)
                .unwrap(),
        ));
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_write, u.cost),
            (10.0, 5.0, 1.0, 0.0, 0.5)
        );
        let mut r = Usage::default();
        r.add(&Usage::of_raw(
            br#"{"input":10,"output":5,"cacheRead":1,"cost":{"total":0.5}}"#,
        ));
        assert_eq!(r, u);
    }
}
