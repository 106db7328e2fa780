//! Writing JSON of arbor's own (the `--json` reports of check, gc, index, search): one writer
//! that puts commas, escapes keys and strings and closes what it opened, instead of strings
//! spliced by hand.
use super::write::{write_js_number, write_str_escaped};

/// A JSON object being written into a buffer; `}` is written when it is finished (or dropped).
///
/// ```
/// use arbor_core::json::JsonObject;
/// let mut out = Vec::new();
/// let mut o = JsonObject::new(&mut out);
/// o.str("path", "a \"b\"").uint("entries", 3).bool("ok", true).opt_str("name", None);
/// o.array("findings", |a| {
///     a.object(|f| {
///         f.str("kind", "bom");
///     });
/// });
/// o.finish();
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     r#"{"path":"a \"b\"","entries":3,"ok":true,"name":null,"findings":[{"kind":"bom"}]}"#
/// );
/// ```
pub struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    open: bool,
}

impl<'a> JsonObject<'a> {
    /// Starts an object (writes `{`).
    pub fn new(out: &'a mut Vec<u8>) -> JsonObject<'a> {
        out.push(b'{');
        JsonObject {
            out,
            first: true,
            open: true,
        }
    }

    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str_escaped(k, self.out);
        self.out.push(b':');
        self.out
    }

    /// A string member.
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        let out = self.key(k);
        write_str_escaped(v, out);
        self
    }

    /// A string member, `null` when absent.
    pub fn opt_str(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.str(k, v),
            None => self.raw(k, b"null"),
        }
    }

    /// A whole-number member.
    pub fn uint(&mut self, k: &str, v: u64) -> &mut Self {
        let s = v.to_string();
        self.raw(k, s.as_bytes())
    }

    /// A number member, written as JavaScript writes it (`NaN` and infinities as `null`).
    pub fn num(&mut self, k: &str, v: f64) -> &mut Self {
        let out = self.key(k);
        write_js_number(v, out);
        self
    }

    /// A boolean member.
    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.raw(k, if v { b"true" } else { b"false" })
    }

    /// A member whose value is JSON already (the caller vouches for it).
    pub fn raw(&mut self, k: &str, json: &[u8]) -> &mut Self {
        let out = self.key(k);
        out.extend_from_slice(json);
        self
    }

    /// An array member, its items written by `items`.
    pub fn array(&mut self, k: &str, items: impl FnOnce(&mut JsonArray<'_>)) -> &mut Self {
        let out = self.key(k);
        let mut a = JsonArray::new(out);
        items(&mut a);
        a.finish();
        self
    }

    /// An object member, its members written by `members`.
    pub fn object(&mut self, k: &str, members: impl FnOnce(&mut JsonObject<'_>)) -> &mut Self {
        let out = self.key(k);
        let mut o = JsonObject::new(out);
        members(&mut o);
        o.finish();
        self
    }

    /// Writes the closing `}`.
    pub fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if self.open {
            self.out.push(b'}');
            self.open = false;
        }
    }
}

impl Drop for JsonObject<'_> {
    fn drop(&mut self) {
        self.close();
    }
}

/// A JSON array being written into a buffer; `]` is written when it is finished (or dropped).
pub struct JsonArray<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    open: bool,
}

impl<'a> JsonArray<'a> {
    /// Starts an array (writes `[`).
    pub fn new(out: &'a mut Vec<u8>) -> JsonArray<'a> {
        out.push(b'[');
        JsonArray {
            out,
            first: true,
            open: true,
        }
    }

    fn sep(&mut self) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out
    }

    /// An object item, its members written by `members`.
    pub fn object(&mut self, members: impl FnOnce(&mut JsonObject<'_>)) -> &mut Self {
        let out = self.sep();
        let mut o = JsonObject::new(out);
        members(&mut o);
        o.finish();
        self
    }

    /// A string item.
    pub fn str(&mut self, v: &str) -> &mut Self {
        let out = self.sep();
        write_str_escaped(v, out);
        self
    }

    /// An item that is JSON already (the caller vouches for it).
    pub fn raw(&mut self, json: &[u8]) -> &mut Self {
        let out = self.sep();
        out.extend_from_slice(json);
        self
    }

    /// Writes the closing `]`.
    pub fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if self.open {
            self.out.push(b']');
            self.open = false;
        }
    }
}

impl Drop for JsonArray<'_> {
    fn drop(&mut self) {
        self.close();
    }
}
