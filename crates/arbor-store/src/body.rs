//! Turning a JSON entry body (what `arbor append` reads) into a [`NewEntry`].
use crate::build::NewEntry;
use arbor_core::doc::Dialect;
use arbor_core::json::JsValue;

/// Why a body cannot be appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// Not a JSON object.
    #[error("the entry body is not a JSON object")]
    NotObject,
    /// No string `type`.
    #[error("the entry body has no string \"type\"")]
    NoType,
    /// A required field is missing or has the wrong JSON type.
    #[error("a \"{etype}\" entry needs \"{field}\" ({what})")]
    Field {
        /// Entry type.
        etype: String,
        /// Field name.
        field: &'static str,
        /// What it must be.
        what: &'static str,
    },
    /// The body sets a field the session manager assigns.
    #[error("\"{0}\" is assigned by the session manager; remove it from the body")]
    Assigned(&'static str),
    /// The body is a header.
    #[error("a \"session\" header cannot be appended as an entry")]
    Header,
}

fn field<'a>(
    body: &'a JsValue,
    etype: &str,
    key: &'static str,
    what: &'static str,
) -> Result<&'a JsValue, BodyError> {
    body.get(key).ok_or_else(|| BodyError::Field {
        etype: etype.into(),
        field: key,
        what,
    })
}

fn string(body: &JsValue, etype: &str, key: &'static str) -> Result<String, BodyError> {
    match field(body, etype, key, "a string")? {
        JsValue::String(s) => Ok(s.to_string_lossy().into_owned()),
        _ => Err(BodyError::Field {
            etype: etype.into(),
            field: key,
            what: "a string",
        }),
    }
}

fn opt_raw(body: &JsValue, key: &str) -> Option<Vec<u8>> {
    body.get(key).map(JsValue::to_json)
}

impl NewEntry {
    /// Reads an entry body `{"type": ..., ...}` (without `id`, `parentId`, `timestamp`).
    /// `parent` is the id the entry will hang from (used as a branch summary's `fromId`).
    pub fn from_body(
        body: &JsValue,
        dialect: Dialect,
        parent: Option<&str>,
    ) -> Result<NewEntry, BodyError> {
        if !matches!(body, JsValue::Object(_)) {
            return Err(BodyError::NotObject);
        }
        for key in ["id", "parentId", "timestamp"] {
            if body.get(key).is_some() {
                return Err(BodyError::Assigned(match key {
                    "id" => "id",
                    "parentId" => "parentId",
                    _ => "timestamp",
                }));
            }
        }
        let etype = body
            .get("type")
            .and_then(|t| t.as_str_lossy())
            .ok_or(BodyError::NoType)?
            .into_owned();
        let t = etype.as_str();
        Ok(match t {
            "session" => return Err(BodyError::Header),
            "message" => match field(body, t, "message", "an object")? {
                v @ JsValue::Object(_) => NewEntry::Message(v.to_json()),
                _ => {
                    return Err(BodyError::Field {
                        etype,
                        field: "message",
                        what: "an object",
                    })
                }
            },
            "thinking_level_change" => NewEntry::ThinkingLevelChange(
                body.get("thinkingLevel")
                    .and_then(|v| v.as_str_lossy())
                    .map(|s| s.into_owned()),
                opt_raw(body, "configured"),
            ),
            "model_change" => {
                if body.get("provider").is_some() || body.get("modelId").is_some() {
                    NewEntry::ModelChange {
                        provider: string(body, t, "provider")?,
                        model_id: string(body, t, "modelId")?,
                    }
                } else {
                    NewEntry::OmpModelChange {
                        model: string(body, t, "model")?,
                        role: body
                            .get("role")
                            .and_then(|v| v.as_str_lossy())
                            .map(|s| s.into_owned()),
                        fallback: opt_raw(body, "resolvedModelIsFallback"),
                    }
                }
            }
            "compaction" => NewEntry::Compaction {
                summary: field(body, t, "summary", "a string")?.to_json(),
                short_summary: opt_raw(body, "shortSummary"),
                // pi 1.5 defaults it to the compaction's own id; omp requires it.
                first_kept_entry_id: match dialect {
                    Dialect::Pi => opt_raw(body, "firstKeptEntryId"),
                    Dialect::Omp => {
                        Some(field(body, t, "firstKeptEntryId", "an entry id")?.to_json())
                    }
                },
                tokens_before: field(body, t, "tokensBefore", "a number")?.to_json(),
                details: opt_raw(body, "details"),
                from_hook: opt_raw(
                    body,
                    if dialect == Dialect::Omp {
                        "fromExtension"
                    } else {
                        "fromHook"
                    },
                )
                .or_else(|| opt_raw(body, "fromHook"))
                .or_else(|| opt_raw(body, "fromExtension")),
                preserve_data: opt_raw(body, "preserveData"),
                usage: opt_raw(body, "usage"),
                system_message: opt_raw(body, "systemMessage"),
            },
            "context_edit" => NewEntry::ContextEdit {
                target_id: string(body, t, "targetId")?,
                replacement: match field(body, t, "replacement", "null or {\"content\": ...}")? {
                    JsValue::Null => None,
                    v => Some(v.to_json()),
                },
            },
            "usage" => NewEntry::Usage {
                kind: field(body, t, "kind", "a string")?.to_json(),
                provider: field(body, t, "provider", "a string")?.to_json(),
                model: field(body, t, "model", "a string")?.to_json(),
                usage: field(body, t, "usage", "token counts")?.to_json(),
                note: body
                    .get("note")
                    .filter(|n| n.is_truthy())
                    .map(JsValue::to_json),
            },
            "branch_summary" => NewEntry::BranchSummary {
                from_id: match body.get("fromId") {
                    Some(v) => v
                        .as_str_lossy()
                        .map(|s| s.into_owned())
                        .filter(|s| s != "root"),
                    None => parent.map(str::to_string),
                },
                summary: field(body, t, "summary", "a string")?.to_json(),
                details: opt_raw(body, "details"),
                from_hook: opt_raw(body, "fromHook").or_else(|| opt_raw(body, "fromExtension")),
            },
            "custom" => NewEntry::Custom {
                custom_type: field(body, t, "customType", "a string")?.to_json(),
                data: opt_raw(body, "data"),
            },
            "custom_message" => NewEntry::CustomMessage {
                custom_type: field(body, t, "customType", "a string")?.to_json(),
                content: field(body, t, "content", "a string or content blocks")?.to_json(),
                display: field(body, t, "display", "a boolean")?.to_json(),
                details: opt_raw(body, "details"),
                attribution: opt_raw(body, "attribution"),
            },
            "label" => NewEntry::Label {
                target_id: string(body, t, "targetId")?,
                label: body
                    .get("label")
                    .and_then(|v| v.as_str_lossy())
                    .map(|s| s.into_owned()),
            },
            "session_info" => NewEntry::SessionInfo(
                string(body, t, "name")?
                    .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                    .to_string(),
            ),
            _ => {
                let JsValue::Object(members) = body else {
                    return Err(BodyError::NotObject);
                };
                NewEntry::Other {
                    etype: etype.clone(),
                    members: members
                        .iter()
                        .filter(|(k, _)| k.0 != b"type")
                        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_json()))
                        .collect(),
                }
            }
        })
    }
}
