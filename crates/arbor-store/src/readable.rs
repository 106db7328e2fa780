//! Whether pi (or omp) reads an entry back as what it was meant to be: the rules `arbor
//! append` enforces (unless `--raw`) and `arbor check` reports as notes. Such entries are not
//! damage (pi keeps them and skips what it does not know), but an entry of a type pi does not
//! know is never in any context, a message with an unknown role is dropped by `convertToLlm`,
//! one without a `timestamp` prints as an Invalid Date, and a user or assistant `content` that
//! is neither a string nor an array makes pi's session listing throw and hide the session.
use arbor_core::doc::{Dialect, SessionDoc};
use arbor_core::entry::EntryType;
use arbor_core::json::{JsValue, ValueKind};

/// Message roles pi 1.5.2 reads (its own, and the ones its extensions store).
const PI_ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "system",
];
/// Message roles omp 18 reads, beyond pi's.
const OMP_ROLES: &[&str] = &["developer", "pythonExecution", "fileMention", "hookMessage"];

/// Why pi would not read `body` (an entry body or a whole entry) back as meant, or `None`.
///
/// ```
/// use arbor_core::doc::Dialect;
/// use arbor_core::json::JsValue;
/// let bad = JsValue::parse(br#"{"type":"message","message":{"role":"usr","content":"hi","timestamp":1}}"#).unwrap();
/// assert!(arbor_store::readable::unreadable_reason(&bad, Dialect::Pi).unwrap().contains("role"));
/// let ok = JsValue::parse(br#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#).unwrap();
/// assert_eq!(arbor_store::readable::unreadable_reason(&ok, Dialect::Pi), None);
/// ```
pub fn unreadable_reason(body: &JsValue, dialect: Dialect) -> Option<String> {
    let kind = |v: Option<&JsValue>| match v {
        Some(JsValue::String(_)) => Some(ValueKind::String),
        Some(JsValue::Array(_)) => Some(ValueKind::Array),
        Some(JsValue::Number(_)) => Some(ValueKind::Number),
        Some(JsValue::Null) => Some(ValueKind::Null),
        Some(JsValue::Bool(_)) => Some(ValueKind::Bool),
        Some(JsValue::Object(_)) => Some(ValueKind::Object),
        None => None,
    };
    let etype = body.get("type").and_then(|t| t.as_str_lossy())?;
    let m = body.get("message");
    let role = m.and_then(|m| m.get("role")).and_then(|r| r.as_str_lossy());
    reason(
        &View {
            etype: &etype,
            role: role.as_deref(),
            timestamp: m.and_then(|m| kind(m.get("timestamp"))),
            content: m.and_then(|m| kind(m.get("content"))),
            entry_content: kind(body.get("content")),
        },
        dialect,
    )
}

/// [`unreadable_reason`] of entry `i` of a loaded session, read from its raw members (no
/// DOM). Message entries whose `message` is not an object are left to the check's own
/// finding.
pub fn unreadable_entry(doc: &SessionDoc, i: usize) -> Option<String> {
    let e = &doc.entries()[i];
    let line = doc.line(&e.line);
    let name = e.etype.name();
    let msg = e.message.as_ref();
    if e.etype == EntryType::Message && msg.is_none() {
        return None;
    }
    let role = msg.and_then(|m| m.str(line, "role"));
    reason(
        &View {
            etype: name,
            role: role.as_deref(),
            timestamp: msg.and_then(|m| m.get(line, "timestamp")).map(|(_, k)| k),
            content: msg.and_then(|m| m.get(line, "content")).map(|(_, k)| k),
            entry_content: e.fields.get(line, "content").map(|(_, k)| k),
        },
        doc.dialect(),
    )
}

/// What the rules look at.
struct View<'a> {
    etype: &'a str,
    role: Option<&'a str>,
    timestamp: Option<ValueKind>,
    content: Option<ValueKind>,
    entry_content: Option<ValueKind>,
}

fn reason(v: &View<'_>, dialect: Dialect) -> Option<String> {
    let etype = v.etype;
    let known = match EntryType::from_name(etype) {
        EntryType::Other(_) => false,
        EntryType::TtsrInjection
        | EntryType::SessionInit
        | EntryType::ModeChange
        | EntryType::ServiceTierChange
        | EntryType::TitleChange
        | EntryType::ModelUsage
        | EntryType::CredentialPin
        | EntryType::ResetBoundary => dialect == Dialect::Omp,
        _ => true,
    };
    let tool = if dialect == Dialect::Omp { "omp" } else { "pi" };
    if !known {
        return Some(format!(
            "entry type \"{etype}\" is not one {tool} knows: it is kept but never read"
        ));
    }
    if etype == "message" {
        let role_ok = v.role.is_some_and(|r| {
            PI_ROLES.contains(&r) || (dialect == Dialect::Omp && OMP_ROLES.contains(&r))
        });
        if !role_ok {
            return Some(match v.role {
                Some(r) => {
                    format!("message role \"{r}\" is not one {tool} knows: the model never sees it")
                }
                None => "message without a string \"role\"".to_string(),
            });
        }
        if v.timestamp != Some(ValueKind::Number) {
            return Some(format!(
                "message without a numeric \"timestamp\" ({tool} shows an Invalid Date)"
            ));
        }
        if matches!(v.role, Some("user" | "assistant"))
            && !matches!(v.content, Some(ValueKind::String | ValueKind::Array))
        {
            return Some(format!(
                "{} message whose \"content\" is neither a string nor an array ({tool}'s session list fails on it and hides the session)",
                v.role.unwrap_or_default()
            ));
        }
    }
    if etype == "custom_message"
        && !matches!(v.entry_content, Some(ValueKind::String | ValueKind::Array))
    {
        return Some(format!(
            "custom_message whose \"content\" is neither a string nor an array ({tool} cannot send it)"
        ));
    }
    None
}
