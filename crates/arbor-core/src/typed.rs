//! Typed views of pi's messages, for callers who want structs instead of raw JSON.
//!
//! arbor keeps every entry as the bytes pi wrote (lossless: unknown fields, number spellings,
//! lone surrogates survive); these types are a view on top, deserialized on demand with
//! `serde`, never a replacement. Unknown content blocks deserialize as
//! [`ContentBlock::Unknown`]; fields pi does not always write are `Option`s; any field not
//! listed is ignored. A message serde cannot read (an unknown `role`, a lone surrogate that
//! `serde_json` refuses) is an error, and the raw bytes are still there.
//!
//! ```
//! use arbor_core::typed::{Content, ContentBlock, Message};
//! use arbor_core::SessionDoc;
//! let jsonl = concat!(
//!     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//!     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"path":"."}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":2}}"#, "\n",
//! );
//! let doc = SessionDoc::parse(std::sync::Arc::new(jsonl.as_bytes().to_vec())).unwrap();
//! let Message::Assistant(m) = doc.message_as::<Message>(0).unwrap() else { panic!() };
//! assert_eq!(m.model.as_deref(), Some("m"));
//! let Content::Blocks(blocks) = &m.content else { panic!() };
//! assert!(matches!(&blocks[1], ContentBlock::ToolCall { name, .. } if name == "ls"));
//! ```
use serde::Deserialize;

/// Why a typed view could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TypedError {
    /// The entry has no `message` member (it is not a message entry).
    #[error("the entry has no message")]
    NoMessage,
    /// serde could not read the message as the type asked for.
    #[error("the message does not read as the type asked for: {0}")]
    Json(#[from] serde_json::Error),
}

/// A message of a `message` entry, by its `role`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "role")]
pub enum Message {
    /// `role: "user"`.
    #[serde(rename = "user")]
    User(UserMessage),
    /// `role: "assistant"`.
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    /// `role: "toolResult"`.
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    /// `role: "bashExecution"` (a `!command` run by the user).
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    /// `role: "custom"` (an extension's message).
    #[serde(rename = "custom")]
    Custom(CustomMessage),
}

/// Message content: a string, or blocks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

impl Default for Content {
    fn default() -> Content {
        Content::Blocks(Vec::new())
    }
}

/// One content block, by its `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// `{"type":"text","text"}`.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"thinking","thinking","thinkingSignature"?}`.
    #[serde(rename = "thinking")]
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The provider's signature, when kept.
        #[serde(rename = "thinkingSignature", default)]
        signature: Option<String>,
    },
    /// `{"type":"image","data","mimeType"}` (base64 data, or an omp blob reference).
    #[serde(rename = "image")]
    Image {
        /// Base64 data (or `blob:sha256:<hex>` in omp files).
        data: String,
        /// The MIME type.
        #[serde(rename = "mimeType", default)]
        mime_type: Option<String>,
    },
    /// `{"type":"toolCall","id","name","arguments"}`.
    #[serde(rename = "toolCall")]
    ToolCall {
        /// The call's id (matched by a tool result's `toolCallId`).
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, as JSON.
        #[serde(default)]
        arguments: serde_json::Value,
    },
    /// A block of another type (kept in the raw bytes).
    #[serde(other)]
    Unknown,
}

/// A user's message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserMessage {
    /// The content.
    #[serde(default)]
    pub content: Content,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<f64>,
}

/// Token counts and cost of one assistant turn.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens read from the provider's cache.
    pub cache_read: f64,
    /// Tokens written to the provider's cache.
    pub cache_write: f64,
    /// All tokens.
    pub total_tokens: f64,
    /// Cost in dollars, by kind.
    pub cost: Cost,
}

/// Cost in dollars.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cost {
    /// Of the input tokens.
    pub input: f64,
    /// Of the output tokens.
    pub output: f64,
    /// Of the cache reads.
    pub cache_read: f64,
    /// Of the cache writes.
    pub cache_write: f64,
    /// In all.
    pub total: f64,
}

/// An assistant's message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// The content.
    #[serde(default)]
    pub content: Content,
    /// The API used (`anthropic-messages`, ...).
    #[serde(default)]
    pub api: Option<String>,
    /// The provider.
    #[serde(default)]
    pub provider: Option<String>,
    /// The model id.
    #[serde(default)]
    pub model: Option<String>,
    /// Token counts and cost.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Why the turn ended (`stop`, `length`, `toolUse`, `error`, `aborted`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The provider's error, when the turn failed.
    #[serde(default)]
    pub error_message: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<f64>,
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call answered.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// The tool's name.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The content.
    #[serde(default)]
    pub content: Content,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<f64>,
}

/// A `!command` the user ran.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command.
    #[serde(default)]
    pub command: String,
    /// Its output (possibly cut).
    #[serde(default)]
    pub output: String,
    /// Its exit code (absent when it did not exit).
    #[serde(default)]
    pub exit_code: Option<f64>,
    /// Cancelled by the user.
    #[serde(default)]
    pub cancelled: Option<bool>,
    /// The output was cut.
    #[serde(default)]
    pub truncated: Option<bool>,
    /// Where the whole output was saved.
    #[serde(default)]
    pub full_output_path: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<f64>,
}

/// An extension's message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// The extension's message type.
    #[serde(default)]
    pub custom_type: Option<String>,
    /// The content.
    #[serde(default)]
    pub content: Content,
    /// Shown in the interface.
    #[serde(default)]
    pub display: Option<bool>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: Option<f64>,
}
