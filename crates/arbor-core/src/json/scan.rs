//! Validating scanner: finds object members as byte ranges without allocating a tree.
use super::{JsStr, JsonError};
use std::ops::Range;

/// The kind of a JSON value, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// a number token
    Number,
    /// a string (the range includes the quotes)
    String,
    /// an array
    Array,
    /// an object
    Object,
}

/// One member of a scanned object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key's raw bytes between the quotes (escapes not decoded).
    pub key: Range<usize>,
    /// The value's bytes, from its first to its last byte (quotes and brackets included).
    pub value: Range<usize>,
    /// The value's kind.
    pub kind: ValueKind,
}

/// The members of one object, in source order (duplicates included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectScan {
    /// Members in the order they appear.
    pub members: Vec<Member>,
    /// Byte range of the whole object (`{` to `}` inclusive).
    pub span: Range<usize>,
}

impl ObjectScan {
    /// The value range of the *last* member named `key` (JS: the last duplicate wins).
    /// `key` is compared with the decoded key text.
    pub fn get(&self, src: &[u8], key: &str) -> Option<&Member> {
        todo!()
    }
}

/// Index of the first byte at or after `pos` that is not JSON whitespace (space, tab, LF, CR).
pub fn skip_ws(src: &[u8], pos: usize) -> usize {
    todo!()
}

/// Validates the JSON value starting at `pos` (after optional whitespace) and returns the index
/// just past it. Lone surrogate escapes are accepted, as `JSON.parse` accepts them. Nesting
/// depth is limited (to 10 000) so hostile input cannot overflow the stack.
pub fn value_end(src: &[u8], pos: usize) -> Result<usize, JsonError> {
    todo!()
}

/// Scans `src` as one JSON object (surrounding JSON whitespace allowed, nothing else after it)
/// and returns its members. Nested values are validated but not decoded.
/// Errors if the text is not valid JSON or the value is not an object.
pub fn scan_object(src: &[u8]) -> Result<ObjectScan, JsonError> {
    todo!()
}

/// Decodes the contents of a JSON string (the raw bytes between the quotes) into WTF-8.
pub fn decode_string(raw: &[u8]) -> Result<JsStr, JsonError> {
    todo!()
}
