//! `JSON.stringify` output: JS numbers, JS string escapes, integer-like keys first.
use super::{JsStr, JsValue, JsonError};

/// Appends `JSON.stringify(value)` to `out`: array-index keys (canonical decimal integers
/// 0..=4294967294) first in ascending numeric order, then the others in insertion order.
pub fn write_js_value(value: &JsValue, out: &mut Vec<u8>) {
    todo!()
}

/// Appends the JS `Number.prototype.toString` spelling of `n` (`1`, `0.5`, `1e+21`, `1e-7`);
/// NaN and infinities are written `null`, `-0` as `0`.
pub fn write_js_number(n: f64, out: &mut Vec<u8>) {
    todo!()
}

/// Appends a JSON string literal (with quotes) for a WTF-8 string, escaped as
/// `JSON.stringify` escapes: `\" \\ \b \f \n \r \t`, other controls as `\u00xx` (lowercase),
/// lone surrogates as `\udxxx` (lowercase), everything else raw.
pub fn write_js_str(s: &JsStr, out: &mut Vec<u8>) {
    todo!()
}

/// Appends a JSON string literal (with quotes) for UTF-8 text, escaped as `JSON.stringify` does.
pub fn write_str_escaped(s: &str, out: &mut Vec<u8>) {
    todo!()
}

/// Appends to `out` exactly what `JSON.stringify(JSON.parse(raw))` gives for the JSON value in
/// `raw`, without building a DOM in the common case: strings are re-escaped the JS way,
/// numbers re-spelled, duplicate keys merged (last value in the first position) and
/// integer-like keys moved first. Bytes that are already canonical are copied as they are.
pub fn canonicalize(raw: &[u8], out: &mut Vec<u8>) -> Result<(), JsonError> {
    todo!()
}
