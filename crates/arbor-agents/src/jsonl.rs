//! Reading another agent's JSONL file leniently, and the small JSON accessors every reader
//! shares.
use crate::model::{Part, Report};
use crate::AgentError;
use serde_json::{Map, Value};
use std::path::Path;

/// The bytes of a source file, through arbor's safe open (a regular file only: never a FIFO
/// or device planted in another agent's directory; opened read-only): a file of 1 MiB and more
/// mapped read-only (a file cut by its agent while it is read gives zero pages, read as bad
/// lines, never a crash), a smaller one read into a buffer of its size
/// (`arbor_store::FileBytes`, as arbor reads pi's sessions).
pub(crate) fn read_source(path: &Path) -> Result<arbor_store::FileBytes, AgentError> {
    arbor_store::FileBytes::open(path).map_err(|e| AgentError::io(path, e))
}

/// `path` made absolute (not resolved: the path the agent's own directory has), as the
/// import marker names it.
pub(crate) fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Writes a line again with only what its reader reads: `(line, its members, out)`.
pub(crate) type Slim<'a> = dyn FnMut(&[u8], &arbor_core::entry::Fields, &mut Vec<u8>) + 'a;

/// Every JSON object line of `bytes` with its 1-based line number, parsed after `slim` wrote
/// it again with only what its reader reads (`slim(line, its members, out)`; arbor's field
/// scanner finds the members without parsing them, so what `slim` leaves out is never
/// parsed). A line that is not JSON, or not an object, is reported and skipped; so is a last
/// line without its newline (the agent may still be writing it: a later import takes it).
/// Blank lines are passed over.
pub(crate) fn objects(
    bytes: &[u8],
    report: &mut Report,
    slim: &mut Slim<'_>,
) -> Vec<(u64, Map<String, Value>)> {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut n = 0u64;
    while start < bytes.len() {
        n += 1;
        let (line, next, complete) = match memchr(bytes, start) {
            Some(i) => (&bytes[start..i], i + 1, true),
            None => (&bytes[start..], bytes.len(), false),
        };
        start = next;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !complete {
            report.bad(
                n,
                "last line has no newline (still being written?): skipped",
            );
            continue;
        }
        // A line the scanner refuses is given to the parser whole, for its own words.
        let parsed = match arbor_core::entry::parse_fields(line) {
            Ok(f) => {
                slim(line, &f, &mut buf);
                serde_json::from_slice::<Value>(&buf)
            }
            Err(_) => serde_json::from_slice::<Value>(line),
        };
        match parsed {
            Ok(Value::Object(m)) => out.push((n, m)),
            Ok(other) => report.bad(n, format!("not a JSON object but {}", kind_of(&other))),
            Err(e) => report.bad(n, format!("not JSON: {e}")),
        }
    }
    out
}

/// The index of the first `\n` at or after `from`.
pub(crate) fn memchr(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', &bytes[from..]).map(|i| i + from)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `o[k]` as a non-empty string.
pub(crate) fn s<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str).filter(|v| !v.is_empty())
}

/// `o[k]` as an object.
pub(crate) fn obj<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a Map<String, Value>> {
    o.get(k).and_then(Value::as_object)
}

/// `o[k]` as a non-negative integer (a float is truncated; anything else is 0).
pub(crate) fn u(o: &Map<String, Value>, k: &str) -> u64 {
    match o.get(k) {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        _ => 0,
    }
}

/// `o[k] == true`.
pub(crate) fn flag(o: &Map<String, Value>, k: &str) -> bool {
    o.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// A timestamp (ISO string, or ms / s since the epoch) in ms.
pub(crate) fn time_ms(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::String(t) => arbor_core::time::parse_iso_ms(t).map(|f| f as i64),
        Value::Number(n) => {
            let f = n.as_f64()?;
            // Seconds (opencode's and Codex's databases) or ms.
            Some(if f < 1e11 {
                (f * 1000.0) as i64
            } else {
                f as i64
            })
        }
        _ => None,
    }
}

/// A tool call's arguments as pi keeps them: an object; a JSON string holding an object is
/// parsed; anything else is kept as `{"input": value}`.
pub(crate) fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::Object(_)) => v.cloned().unwrap_or(Value::Null),
        Some(Value::String(t)) => match serde_json::from_str::<Value>(t) {
            Ok(p @ Value::Object(_)) => p,
            _ => single("input", Value::String(t.clone())),
        },
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(other) => single("input", other.clone()),
    }
}

fn single(k: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(k.to_string(), v);
    Value::Object(m)
}

/// An image from a `data:MIME;base64,DATA` URL.
pub(crate) fn data_url_image(url: &str) -> Option<Part> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some(Part::Image {
        data: data.to_string(),
        mime: mime.to_string(),
    })
}

/// Any JSON value as text (a string as itself, anything else as JSON).
pub(crate) fn as_text(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The object `raw` (scanned as `scan`) written again into `out`, member by member in its
/// order; `each(key, value, kind, out)` writes a member's value itself and returns `true`, or
/// returns `false` to have the value copied as it is. Keys are compared as their raw bytes (a
/// key written with escapes is not one of ours and is copied).
pub(crate) fn rebuild(
    raw: &[u8],
    scan: &arbor_core::json::ObjectScan,
    out: &mut Vec<u8>,
    each: impl FnMut(&[u8], &[u8], arbor_core::json::ValueKind, &mut Vec<u8>) -> bool,
) {
    rebuild_some(raw, scan, out, |_| true, each)
}

/// [`rebuild`] with only the members whose raw key `keep` takes (every other member left out,
/// as if it were not there).
pub(crate) fn rebuild_some(
    raw: &[u8],
    scan: &arbor_core::json::ObjectScan,
    out: &mut Vec<u8>,
    keep: impl Fn(&[u8]) -> bool,
    mut each: impl FnMut(&[u8], &[u8], arbor_core::json::ValueKind, &mut Vec<u8>) -> bool,
) {
    out.push(b'{');
    let mut first = true;
    for m in scan.members.iter() {
        let key = &raw[m.key.clone()];
        if !keep(key) {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        let value = &raw[m.value.clone()];
        if !each(key, value, m.kind, out) {
            out.extend_from_slice(value);
        }
    }
    out.push(b'}');
}
