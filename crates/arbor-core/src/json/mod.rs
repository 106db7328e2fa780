//! A small JSON toolkit with ECMAScript (`JSON.parse` / `JSON.stringify`) semantics.
//!
//! pi and omp write sessions with `JSON.stringify`, and real sessions hold strings that
//! `serde_json` refuses (lone UTF-16 surrogate escapes such as `"\ud83d"`, left by tool output
//! cut in the middle of a character). This module therefore has its own reader and writer:
//!
//! * [`scan`]: a validating, allocation-free scanner that finds the members of an object
//!   (key and value byte ranges) without building a tree (docs/design-notes.md, decision 1: envelope parse).
//! * [`JsValue`]: a DOM with JS semantics, for the few places that need one.
//! * [`write`](mod@write): `JSON.stringify` output: JS number formatting, JS string escapes, integer-like
//!   keys first, and [`canonicalize`], which turns any raw JSON value into exactly the bytes
//!   `JSON.stringify(JSON.parse(raw))` gives, streaming, without a DOM.
//!
//! Strings are kept as WTF-8 ([`JsStr`]): UTF-8 that may also hold surrogate code points, so a
//! lone surrogate survives a round trip and is written back as the same `\udxxx` escape.

mod report;
pub mod scan;
mod to_string;
pub mod value;
pub mod write;

pub use report::{JsonArray, JsonObject};
pub use scan::{
    array_items, decode_string, find_in_windows, scan_object, scan_object_compact_at,
    scan_object_compact_into, set_release_hook, skip_ws, value_end, value_end_compact,
    value_end_compact_noting, Member, ObjectScan, PrefixNote, StrPieces, ValueKind, LONG_STRING,
};
pub use value::{JsStr, JsValue};
pub use write::{
    canonical_or_keep, canonicalize, canonicalize_or_keep, write_canonical, write_js_number,
    write_js_str, write_js_value, write_str_escaped, Canonical,
};

use thiserror::Error;

/// A syntax error found while reading JSON, with the byte offset inside the input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message} at byte {offset}")]
#[non_exhaustive]
pub struct JsonError {
    /// Byte offset in the scanned slice where the problem was found.
    pub offset: usize,
    /// What is wrong, in a few words (`"expected ':'"`, `"unterminated string"`, ...).
    pub message: &'static str,
}

#[cfg(test)]
mod proptests;
