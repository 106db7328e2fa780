//! Redaction of everything served: every string of every answer (structured content, its
//! text rendering, resources, error messages that quote session text) goes through
//! [`arbor_view::secrets`], the one secret scanner, unless the server was started with
//! `--no-redact`.
use arbor_view::secrets;

/// Whether answers are redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redactor {
    on: bool,
}

impl Redactor {
    /// A redactor that redacts (`on`) or passes everything through (`--no-redact`).
    pub fn new(on: bool) -> Redactor {
        Redactor { on }
    }

    /// Whether it redacts.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// `text` with every secret replaced by `[REDACTED:kind]`.
    ///
    /// ```
    /// let r = arbor_mcp::redact::Redactor::new(true);
    /// assert_eq!(r.text("key AKIAIOSFODNN7EXAMPLE".into()), "key [REDACTED:aws-access-key]");
    /// ```
    pub fn text(&self, text: String) -> String {
        if !self.on {
            return text;
        }
        match secrets::redact(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(s) => s,
        }
    }

    /// Every string of `v` (values, not member names: those are the answer's own) redacted
    /// in place; a string under a member whose name says it is a secret is read as
    /// `name=value` too, as the scanner reads session JSON ([`secrets::find_in`]).
    pub fn value(&self, v: &mut serde_json::Value) {
        if self.on {
            walk(None, v);
        }
    }
}

fn walk(key: Option<&str>, v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = secrets::redact_in(key, s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(None, x)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| walk(Some(k), x)),
        _ => {}
    }
}
