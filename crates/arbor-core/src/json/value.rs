//! A JSON DOM with ECMAScript semantics, used only where a whole value must be rebuilt.
use super::JsonError;
use std::borrow::Cow;

/// A JS string held as WTF-8: UTF-8 that may also contain surrogate code points
/// (encoded as the 3-byte sequences `ED A0..BF xx`), so lone surrogates round-trip.
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct JsStr(pub Vec<u8>);

impl JsStr {
    /// The text as `&str` when it holds no surrogate code point.
    pub fn as_str(&self) -> Option<&str> {
        todo!()
    }
    /// The text with every lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        todo!()
    }
    /// Length in UTF-16 code units (JS `string.length`).
    pub fn utf16_len(&self) -> usize {
        todo!()
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> Self {
        JsStr(s.as_bytes().to_vec())
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> Self {
        JsStr(s.into_bytes())
    }
}

impl std::fmt::Debug for JsStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

/// A parsed JSON value with `JSON.parse` semantics: numbers are f64, object members keep
/// insertion order, and a duplicate key replaces the earlier value in the earlier position.
#[derive(Clone, Debug, PartialEq)]
pub enum JsValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number (JS numbers are IEEE doubles).
    Number(f64),
    /// A string.
    String(JsStr),
    /// An array.
    Array(Vec<JsValue>),
    /// An object, members in JS insertion order (duplicates already merged).
    Object(Vec<(JsStr, JsValue)>),
}

impl JsValue {
    /// Parses one JSON value (surrounding whitespace allowed, nothing else) like `JSON.parse`.
    pub fn parse(src: &[u8]) -> Result<JsValue, JsonError> {
        todo!()
    }
    /// The member `key` of an object, if this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        todo!()
    }
    /// Mutable access to member `key` of an object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        todo!()
    }
    /// Sets `key` (replacing in place if present, else appending), as JS property assignment.
    pub fn set(&mut self, key: &str, value: JsValue) {
        todo!()
    }
    /// Removes `key` from an object (JS `delete`), returning the old value.
    pub fn remove(&mut self, key: &str) -> Option<JsValue> {
        todo!()
    }
    /// The string value, if this is a string.
    pub fn as_js_str(&self) -> Option<&JsStr> {
        todo!()
    }
    /// The string value as UTF-8 text (lossy for lone surrogates), if this is a string.
    pub fn as_str_lossy(&self) -> Option<Cow<'_, str>> {
        todo!()
    }
    /// JS truthiness (`""`, `0`, `NaN`, `null`, `false` are falsy).
    pub fn is_truthy(&self) -> bool {
        todo!()
    }
    /// `JSON.stringify(self)` as bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        super::write::write_js_value(self, &mut out);
        out
    }
}
