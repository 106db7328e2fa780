//! Small JS string conversions shared by the store.
use arbor_core::json::JsValue;

/// JS `String(value)` as UTF-8 (WTF-8 for lone surrogates).
pub fn to_js_string(v: Option<&JsValue>, out: &mut Vec<u8>) {
    arbor_core::llm::js_to_string(v, out)
}
