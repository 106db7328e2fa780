//! New entry lines in pi's (or omp's) key order.
//!
//! Every append method of pi's `SessionManager` writes its own key order (verified byte for
//! byte against pi 0.58 and omp 13/18); these builders reproduce them. Values arrive as raw
//! JSON (already canonical, e.g. from [`arbor_core::json::JsValue::to_json`]) and keys whose
//! value is `None` are omitted, as `JSON.stringify` omits `undefined`.
use arbor_core::doc::Dialect;
use arbor_core::json::write_str_escaped;

/// A line under construction.
pub struct LineBuilder {
    out: Vec<u8>,
    first: bool,
}

impl LineBuilder {
    /// Starts `{`.
    pub fn new() -> Self {
        LineBuilder {
            out: vec![b'{'],
            first: true,
        }
    }
    /// Adds `"key":<raw>`.
    pub fn raw(mut self, key: &str, raw: &[u8]) -> Self {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str_escaped(key, &mut self.out);
        self.out.push(b':');
        self.out.extend_from_slice(raw);
        self
    }
    /// Adds `"key":<raw>` when `raw` is `Some`.
    pub fn opt(self, key: &str, raw: Option<&[u8]>) -> Self {
        match raw {
            Some(r) => self.raw(key, r),
            None => self,
        }
    }
    /// Adds a string member.
    pub fn str(self, key: &str, s: &str) -> Self {
        let mut v = Vec::with_capacity(s.len() + 2);
        write_str_escaped(s, &mut v);
        self.raw(key, &v)
    }
    /// Adds a string member, or `null`.
    pub fn str_or_null(self, key: &str, s: Option<&str>) -> Self {
        match s {
            Some(s) => self.str(key, s),
            None => self.raw(key, b"null"),
        }
    }
    /// Finishes with `}` (no newline).
    pub fn finish(mut self) -> Vec<u8> {
        self.out.push(b'}');
        self.out
    }
}

impl Default for LineBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// The tree fields every entry has.
#[derive(Debug, Clone)]
pub struct Base<'a> {
    /// New entry id.
    pub id: &'a str,
    /// Parent id (`None`: `null`).
    pub parent_id: Option<&'a str>,
    /// ISO timestamp.
    pub timestamp: &'a str,
}

impl LineBuilder {
    /// Adds `id, parentId, timestamp`.
    pub fn base(self, b: &Base<'_>) -> Self {
        self.str("id", b.id)
            .str_or_null("parentId", b.parent_id)
            .str("timestamp", b.timestamp)
    }
}

/// The body of a new entry: what a caller asks to append.
#[derive(Debug, Clone)]
pub enum NewEntry {
    /// `appendMessage(message)`: raw JSON of the message object.
    Message(Vec<u8>),
    /// `appendThinkingLevelChange(level)`; omp's `configured` (raw JSON; omp writes `null` when
    /// not given, pi has no such key).
    ThinkingLevelChange(Option<String>, Option<Vec<u8>>),
    /// pi `appendModelChange(provider, modelId)`.
    ModelChange {
        /// Provider name.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// omp `appendModelChange("provider/model", role?)`.
    OmpModelChange {
        /// `provider/modelId`.
        model: String,
        /// Model role (`default`, `smol`, ...).
        role: Option<String>,
        /// `resolvedModelIsFallback` (raw JSON; omp writes `false` when not given).
        fallback: Option<Vec<u8>>,
    },
    /// `appendCompaction(...)`: raw JSON values.
    Compaction {
        /// Summary (raw JSON string).
        summary: Vec<u8>,
        /// omp's short summary.
        short_summary: Option<Vec<u8>>,
        /// First kept entry id (raw JSON; `None`: the compaction's own id, as pi 1.5 writes).
        first_kept_entry_id: Option<Vec<u8>>,
        /// Tokens before (raw JSON number).
        tokens_before: Vec<u8>,
        /// Details.
        details: Option<Vec<u8>>,
        /// pi `fromHook` / omp `fromExtension`.
        from_hook: Option<Vec<u8>>,
        /// omp `preserveData`.
        preserve_data: Option<Vec<u8>>,
        /// pi 1.5 `usage` of the summarization call.
        usage: Option<Vec<u8>>,
        /// pi 1.5 `systemMessage`: the system message folded when the compaction was made.
        system_message: Option<Vec<u8>>,
    },
    /// pi 1.5 `appendContextEdit(targetId, replacement)`, already checked and normalized.
    ContextEdit {
        /// The edited entry.
        target_id: String,
        /// `{content}` (raw JSON), or `None` for `null` (the target's messages removed).
        replacement: Option<Vec<u8>>,
    },
    /// pi 1.5 `appendUsage(kind, provider, model, usage, note?)`: raw JSON values.
    Usage {
        /// What the usage was for.
        kind: Vec<u8>,
        /// Provider.
        provider: Vec<u8>,
        /// Model.
        model: Vec<u8>,
        /// Token and cost counts.
        usage: Vec<u8>,
        /// A note (written only when truthy, as pi).
        note: Option<Vec<u8>>,
    },
    /// `branchWithSummary(fromId, summary, details?, fromHook?)` (the parent is set by the caller).
    BranchSummary {
        /// The branch point (`None`: `"root"`).
        from_id: Option<String>,
        /// Summary (raw JSON).
        summary: Vec<u8>,
        /// Details.
        details: Option<Vec<u8>>,
        /// pi `fromHook` / omp `fromExtension`.
        from_hook: Option<Vec<u8>>,
    },
    /// `appendCustomEntry(customType, data?)`.
    Custom {
        /// Extension type (raw JSON).
        custom_type: Vec<u8>,
        /// Data.
        data: Option<Vec<u8>>,
    },
    /// `appendCustomMessageEntry(customType, content, display, details?)`.
    CustomMessage {
        /// Extension type (raw JSON).
        custom_type: Vec<u8>,
        /// Content: string or blocks.
        content: Vec<u8>,
        /// Display flag (raw JSON).
        display: Vec<u8>,
        /// Details.
        details: Option<Vec<u8>>,
        /// omp attribution (defaults to `"agent"` in omp files).
        attribution: Option<Vec<u8>>,
    },
    /// `appendLabelChange(targetId, label?)`.
    Label {
        /// Target entry id.
        target_id: String,
        /// Label (`None`: key omitted, clears).
        label: Option<String>,
    },
    /// pi `appendSessionInfo(name)` (name already trimmed).
    SessionInfo(String),
    /// Any other type: the body's members other than `type`/`id`/`parentId`/`timestamp`, raw,
    /// written after the tree fields (omp's order for `session_init`, `mode_change`, ...).
    Other {
        /// The `type` string.
        etype: String,
        /// `(key, raw value)` members in the caller's order.
        members: Vec<(String, Vec<u8>)>,
    },
}

impl NewEntry {
    /// Whether this entry starts the conversation deferred persistence waits for: a user or
    /// assistant message in pi 1.5 (`_hasConversation`), an assistant message in omp.
    pub fn starts_conversation(&self, dialect: Dialect) -> bool {
        let NewEntry::Message(raw) = self else {
            return false;
        };
        let role = arbor_core::json::JsValue::parse(raw).ok().and_then(|v| {
            v.get("role")
                .and_then(|r| r.as_str_lossy().map(|s| s.into_owned()))
        });
        match role.as_deref() {
            Some("assistant") => true,
            Some("user") => dialect == Dialect::Pi,
            _ => false,
        }
    }

    /// The line bytes (without newline) in the dialect's key order.
    pub fn to_line(&self, dialect: Dialect, b: &Base<'_>) -> Vec<u8> {
        let omp = dialect == Dialect::Omp;
        let l = LineBuilder::new();
        match self {
            NewEntry::Message(raw) => l
                .str("type", "message")
                .base(b)
                .raw("message", raw)
                .finish(),
            NewEntry::ThinkingLevelChange(level, configured) => {
                let l = l.str("type", "thinking_level_change").base(b);
                let l = match (level, omp) {
                    (Some(v), _) => l.str("thinkingLevel", v),
                    (None, true) => l.raw("thinkingLevel", b"null"),
                    (None, false) => l,
                };
                // omp 18: `configured: configured ?? null`, always written.
                if omp {
                    l.raw("configured", configured.as_deref().unwrap_or(b"null"))
                } else {
                    l
                }
                .finish()
            }
            NewEntry::ModelChange { provider, model_id } => l
                .str("type", "model_change")
                .base(b)
                .str("provider", provider)
                .str("modelId", model_id)
                .finish(),
            NewEntry::OmpModelChange {
                model,
                role,
                fallback,
            } => {
                let l = l.str("type", "model_change").base(b).str("model", model);
                let l = match role {
                    Some(r) => l.str("role", r),
                    None => l,
                };
                // omp 18: `resolvedModelIsFallback = false` (a default parameter), always written.
                l.raw(
                    "resolvedModelIsFallback",
                    fallback.as_deref().unwrap_or(b"false"),
                )
                .finish()
            }
            NewEntry::Compaction {
                summary,
                short_summary,
                first_kept_entry_id,
                tokens_before,
                details,
                from_hook,
                preserve_data,
                usage,
                system_message,
            } => {
                let l = l.str("type", "compaction").base(b).raw("summary", summary);
                let own_id = arbor_core::json::JsValue::String(b.id.into()).to_json();
                let first_kept_entry_id = first_kept_entry_id.as_deref().unwrap_or(&own_id);
                let l = if omp {
                    l.opt("shortSummary", short_summary.as_deref())
                } else {
                    l
                };
                let l = l
                    .raw("firstKeptEntryId", first_kept_entry_id)
                    .raw("tokensBefore", tokens_before)
                    .opt("details", details.as_deref());
                if omp {
                    l.opt("fromExtension", from_hook.as_deref())
                        .opt("preserveData", preserve_data.as_deref())
                        .finish()
                } else {
                    // pi 1.5's order: details, usage, fromHook, systemMessage.
                    l.opt("usage", usage.as_deref())
                        .opt("fromHook", from_hook.as_deref())
                        .opt("systemMessage", system_message.as_deref())
                        .finish()
                }
            }
            NewEntry::ContextEdit {
                target_id,
                replacement,
            } => l
                .str("type", "context_edit")
                .base(b)
                .str("targetId", target_id)
                .raw("replacement", replacement.as_deref().unwrap_or(b"null"))
                .finish(),
            NewEntry::Usage {
                kind,
                provider,
                model,
                usage,
                note,
            } => l
                .str("type", "usage")
                .base(b)
                .raw("kind", kind)
                .raw("provider", provider)
                .raw("model", model)
                .raw("usage", usage)
                .opt("note", note.as_deref())
                .finish(),
            NewEntry::BranchSummary {
                from_id,
                summary,
                details,
                from_hook,
            } => l
                .str("type", "branch_summary")
                .base(b)
                .str("fromId", from_id.as_deref().unwrap_or("root"))
                .raw("summary", summary)
                .opt("details", details.as_deref())
                .opt(
                    if omp { "fromExtension" } else { "fromHook" },
                    from_hook.as_deref(),
                )
                .finish(),
            NewEntry::Custom { custom_type, data } => l
                .str("type", "custom")
                .raw("customType", custom_type)
                .opt("data", data.as_deref())
                .base(b)
                .finish(),
            NewEntry::CustomMessage {
                custom_type,
                content,
                display,
                details,
                attribution,
            } => {
                let l = l
                    .str("type", "custom_message")
                    .raw("customType", custom_type)
                    .raw("content", content)
                    .raw("display", display)
                    .opt("details", details.as_deref());
                let l = if omp {
                    l.raw(
                        "attribution",
                        attribution.as_deref().unwrap_or(b"\"agent\""),
                    )
                } else {
                    l.opt("attribution", attribution.as_deref())
                };
                l.base(b).finish()
            }
            NewEntry::Label { target_id, label } => {
                let l = l.str("type", "label").base(b).str("targetId", target_id);
                match label {
                    Some(lb) => l.str("label", lb),
                    None => l,
                }
                .finish()
            }
            NewEntry::SessionInfo(name) => l
                .str("type", "session_info")
                .base(b)
                .str("name", name)
                .finish(),
            NewEntry::Other { etype, members } => {
                let mut l = l.str("type", etype).base(b);
                for (k, v) in members {
                    l = l.raw(k, v);
                }
                l.finish()
            }
        }
    }
}
