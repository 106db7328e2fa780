//! The JavaScript semantics pi and omp rely on without saying so, in one place: `ToString`,
//! `new Date(v).getTime()` and `TimeClip`, truthiness, and what `String.prototype.trim`
//! strips. pi and omp are TypeScript; wherever their session code converts, compares or trims
//! a value read from a file, arbor answers as the JavaScript engine would, through these.
//!
//! ```
//! use arbor_core::js;
//! use arbor_core::json::JsValue;
//!
//! assert_eq!(js::trim("\u{a0}\u{feff} hi \u{2028}"), "hi");
//! let t = JsValue::parse(br#""2026-01-01T00:00:00.000Z""#).unwrap();
//! assert_eq!(js::date_ms(Some(&t)), 1767225600000.0);
//! assert!(js::date_ms(None).is_nan());
//! let mut s = Vec::new();
//! js::to_string(Some(&JsValue::parse(b"[1,[2,null],true]").unwrap()), &mut s);
//! assert_eq!(s, b"1,2,,true");
//! ```

/// V8's `Array.prototype.sort` (TimSort, with its answers for comparators that are not
/// consistent): the order pi's sorts give.
pub use crate::js_sort::{v8_sort, v8_sort_by_number, v8_sort_slice_by_number};
use crate::json::{JsStr, JsValue, ValueKind};

/// JS `String(value)` (template literals, `+`, property keys, `Array.prototype.join`), as
/// WTF-8 appended to `out`; `None` is `undefined`. Any nesting depth
/// ([`JsValue::write_js_string`]).
pub fn to_string(v: Option<&JsValue>, out: &mut Vec<u8>) {
    match v {
        None => out.extend_from_slice(b"undefined"),
        Some(v) => v.write_js_string(out),
    }
}

/// [`to_string`] as a new string.
pub fn to_js_str(v: Option<&JsValue>) -> JsStr {
    let mut out = Vec::new();
    to_string(v, &mut out);
    JsStr(out)
}

/// ECMAScript `TimeClip`: NaN for a non-finite time or one beyond ±8.64e15 ms, else the time
/// truncated toward zero (`-0` becomes `+0`).
pub fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > 8.64e15 {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// [`time_clip`] as an `Option`: `None` for an Invalid Date (NaN).
pub fn valid_time(t: f64) -> Option<f64> {
    Some(time_clip(t)).filter(|t| !t.is_nan())
}

/// `new Date(v).getTime()` for a JSON value (`None`: `undefined`): NaN where JS gives an
/// Invalid Date. A string is parsed ([`crate::time::parse_iso_ms`]), a number time-clipped,
/// `null` is 0 and booleans 0 or 1; an array is its `join` string parsed (ToPrimitive), an
/// object `"[object Object]"` (NaN).
pub fn date_ms(v: Option<&JsValue>) -> f64 {
    match v {
        None | Some(JsValue::Object(_)) => f64::NAN,
        Some(JsValue::Null) => 0.0,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::Number(n)) => time_clip(*n),
        Some(JsValue::String(s)) => parse_date(s),
        Some(a @ JsValue::Array(_)) => parse_date(&to_js_str(Some(a))),
    }
}

/// [`date_ms`] of a raw JSON member (`None`: missing), reading strings and numbers without
/// building a value.
pub fn date_ms_raw(raw: Option<(&[u8], ValueKind)>) -> f64 {
    match raw {
        None | Some((_, ValueKind::Object)) => f64::NAN,
        Some((_, ValueKind::Null)) => 0.0,
        Some((r, ValueKind::Bool)) => f64::from(u8::from(r == b"true")),
        Some((r, ValueKind::Number)) => time_clip(number(r)),
        Some((r, ValueKind::String)) => crate::entry::raw_str(r, ValueKind::String)
            .and_then(|s| crate::time::parse_iso_ms(&s))
            .unwrap_or(f64::NAN),
        Some((r, ValueKind::Array)) => date_ms(JsValue::parse(r).ok().as_ref()),
    }
}

fn parse_date(s: &JsStr) -> f64 {
    s.as_str()
        .and_then(crate::time::parse_iso_ms)
        .unwrap_or(f64::NAN)
}

/// The value of a raw JSON number token (NaN when it is not one).
pub fn number(raw: &[u8]) -> f64 {
    std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

/// JS `Number(value)` (`ToNumber`) of a raw JSON member (`None`: `undefined`, NaN): `null` is 0,
/// booleans 0 or 1, a string by `StringToNumber` (trimmed; empty is 0; decimal, `Infinity`,
/// `0x`/`0o`/`0b` integers), an array by its `join` string (ToPrimitive), an object NaN.
pub fn to_number_raw(raw: Option<(&[u8], ValueKind)>) -> f64 {
    match raw {
        None | Some((_, ValueKind::Object)) => f64::NAN,
        Some((_, ValueKind::Null)) => 0.0,
        Some((r, ValueKind::Bool)) => f64::from(u8::from(r == b"true")),
        Some((r, ValueKind::Number)) => number(r),
        Some((r, ValueKind::String)) => {
            crate::entry::raw_str(r, ValueKind::String).map_or(f64::NAN, |s| string_to_number(&s))
        }
        Some((r, ValueKind::Array)) => match JsValue::parse(r) {
            Ok(v) => string_to_number(&to_js_str(Some(&v)).to_string_lossy()),
            Err(_) => f64::NAN,
        },
    }
}

/// ECMAScript `StringToNumber`.
pub fn string_to_number(s: &str) -> f64 {
    let t = trim(s);
    if t.is_empty() {
        return 0.0;
    }
    let radix = |digits: &str, r: u32| -> f64 {
        if digits.is_empty() {
            return f64::NAN;
        }
        let mut v = 0f64;
        for c in digits.chars() {
            match c.to_digit(r) {
                Some(d) => v = v * f64::from(r) + f64::from(d),
                None => return f64::NAN,
            }
        }
        v
    };
    let lower = t.get(..2).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("0x") => return radix(&t[2..], 16),
        Some("0o") => return radix(&t[2..], 8),
        Some("0b") => return radix(&t[2..], 2),
        _ => {}
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // StrUnsignedDecimalLiteral: digits, `.`, an exponent; Rust's parser also takes words
    // (`inf`, `nan`), which JS does not.
    if !unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        || !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.')
    {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// JS truthiness of a raw JSON member (missing: `undefined`, falsy). See also
/// [`JsValue::is_truthy`] for a parsed value.
pub fn truthy_raw(raw: Option<(&[u8], ValueKind)>) -> bool {
    match raw {
        None | Some((_, ValueKind::Null)) => false,
        Some((r, ValueKind::Bool)) => r.first() == Some(&b't'),
        Some((r, ValueKind::Number)) => {
            let n = number(r);
            n != 0.0 && !n.is_nan()
        }
        // `""` is the only empty string spelling: any escape decodes to a character.
        Some((r, ValueKind::String)) => r.len() > 2,
        Some((_, ValueKind::Array | ValueKind::Object)) => true,
    }
}

/// ECMAScript `WhiteSpace` or `LineTerminator` (what `trim` and `\s` strip), as a UTF-16 unit.
pub fn is_whitespace_unit(u: u16) -> bool {
    matches!(
        u,
        0x09..=0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

/// [`is_whitespace_unit`] for a `char` (every JS whitespace character is in the BMP).
pub fn is_whitespace(c: char) -> bool {
    u16::try_from(u32::from(c)).is_ok_and(is_whitespace_unit)
}

/// JS `s.trim()`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_whitespace)
}

/// JS `s.trim()` on UTF-16 units.
pub fn trim_units(s: &[u16]) -> &[u16] {
    trim_start_units(trim_end_units(s))
}

/// JS `s.trimEnd()` on UTF-16 units.
pub fn trim_end_units(s: &[u16]) -> &[u16] {
    let end = s
        .iter()
        .rposition(|&u| !is_whitespace_unit(u))
        .map_or(0, |p| p + 1);
    &s[..end]
}

/// JS `s.trimStart()` on UTF-16 units.
pub fn trim_start_units(s: &[u16]) -> &[u16] {
    let start = s
        .iter()
        .position(|&u| !is_whitespace_unit(u))
        .unwrap_or(s.len());
    &s[start..]
}

/// Whether a JS string (WTF-8) has a character other than JS whitespace
/// (`s.trim().length > 0`).
pub fn has_non_whitespace(s: &JsStr) -> bool {
    crate::blobref::utf16_units(s).any(|u| !is_whitespace_unit(u))
}

/// Printable ASCII in the order of `String.prototype.localeCompare` (ICU's root collation, as
/// node 22 sorts it): spaces and punctuation, symbols, digits, then letters with each
/// lowercase letter just before its capital.
const ASCII_COLLATION: &[u8] =
    b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

/// `a.localeCompare(b)` for the names arbor sorts as pi does (session file names): printable
/// ASCII compared as ICU's root collation does (first by letter regardless of case and by
/// the punctuation, digit, letter order of the table below, then lowercase before
/// uppercase); other characters after them by code point. Exact for printable ASCII, an
/// approximation beyond it (arbor does not carry ICU's tables).
pub fn locale_compare(a: &str, b: &str) -> std::cmp::Ordering {
    locale_key(a).cmp(&locale_key(b))
}

/// The sort key of [`locale_compare`]: keys compare as their strings do (for sorting many
/// names, each key made once: `sort_by_cached_key`).
///
/// ```
/// use arbor_core::js::{locale_compare, locale_key};
/// assert_eq!(locale_key("a_2").cmp(&locale_key("a-2")), locale_compare("a_2", "a-2"));
/// ```
pub fn locale_key(s: &str) -> LocaleKey {
    LocaleKey {
        primary: s.chars().map(primary_rank).collect(),
        upper: s.chars().map(|c| c.is_ascii_uppercase()).collect(),
        text: s.to_string(),
    }
}

/// See [`locale_key`]: primary ranks (letters regardless of case), then case at the first
/// difference (lowercase first), then code points.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LocaleKey {
    primary: Vec<u32>,
    upper: Vec<bool>,
    text: String,
}

/// Ranks of printable ASCII in [`ASCII_COLLATION`] order (letters share a rank with their
/// capital), made once.
fn primary_rank(c: char) -> u32 {
    static RANKS: std::sync::OnceLock<[u32; 128]> = std::sync::OnceLock::new();
    let ranks = RANKS.get_or_init(|| {
        let mut r = [u32::MAX; 128];
        for (p, &b) in ASCII_COLLATION.iter().enumerate() {
            r[usize::from(b)] = if p >= 43 {
                43 + (p as u32 - 43) / 2
            } else {
                p as u32
            };
        }
        r
    });
    match ranks.get(c as usize) {
        Some(&r) if r != u32::MAX => r,
        _ => 1000 + u32::from(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_what_v8_trims() {
        // String.prototype.trim's set, checked against node: every unit below 0x10000.
        let ws: Vec<u16> = (0..=0xFFFFu32)
            .filter_map(|u| u16::try_from(u).ok())
            .filter(|&u| is_whitespace_unit(u))
            .collect();
        assert_eq!(ws.len(), 25);
        assert!(is_whitespace('\u{feff}') && !is_whitespace('\u{200b}') && !is_whitespace('x'));
        assert_eq!(trim("\u{b}\u{a0}a b\u{3000}"), "a b");
    }

    #[test]
    fn dates_as_new_date_reads_them() {
        let v = |s: &str| JsValue::parse(s.as_bytes()).unwrap();
        assert_eq!(date_ms(Some(&v("0.9"))), 0.0);
        assert_eq!(date_ms(Some(&v("-0.9"))).to_bits(), 0f64.to_bits());
        assert!(date_ms(Some(&v("8.64e15"))).is_finite());
        assert!(date_ms(Some(&v("8.640000000000001e15"))).is_nan());
        assert_eq!(date_ms(Some(&v("true"))), 1.0);
        assert_eq!(date_ms(Some(&v("null"))), 0.0);
        assert!(date_ms(Some(&v("{}"))).is_nan());
        assert_eq!(
            date_ms(Some(&v(r#"["2026-01-01T00:00:00Z"]"#))),
            1767225600000.0
        );
        for (raw, kind) in [
            ("0.9", ValueKind::Number),
            ("true", ValueKind::Bool),
            ("null", ValueKind::Null),
            ("{}", ValueKind::Object),
            (r#"["2026-01-01"]"#, ValueKind::Array),
            (r#""2026-01-01""#, ValueKind::String),
        ] {
            let (a, b) = (
                date_ms(Some(&v(raw))),
                date_ms_raw(Some((raw.as_bytes(), kind))),
            );
            assert!(a == b || (a.is_nan() && b.is_nan()), "{raw}");
        }
        assert!(date_ms_raw(None).is_nan());
    }

    #[test]
    fn locale_compare_sorts_as_node() {
        // node -e: [...].sort((x, y) => x.localeCompare(y))
        let mut v = [
            "a_b", "a-b", "a.b", "aB", "ab", "Ab", "a1", "a9", "a_1", "A_1", "a~b", "a b", "a0b",
            "aa", "a+b",
        ];
        v.sort_by(|x, y| locale_compare(x, y));
        assert_eq!(
            v.join(" | "),
            "a b | a_1 | A_1 | a_b | a-b | a.b | a+b | a~b | a0b | a1 | a9 | aa | ab | aB | Ab"
        );
    }

    #[test]
    fn truthiness() {
        for (raw, kind, want) in [
            ("0", ValueKind::Number, false),
            ("-0", ValueKind::Number, false),
            ("1e-400", ValueKind::Number, false),
            ("2", ValueKind::Number, true),
            (r#""""#, ValueKind::String, false),
            (r#"" ""#, ValueKind::String, true),
            ("[]", ValueKind::Array, true),
            ("false", ValueKind::Bool, false),
            ("null", ValueKind::Null, false),
        ] {
            assert_eq!(truthy_raw(Some((raw.as_bytes(), kind))), want, "{raw}");
        }
        assert!(!truthy_raw(None));
    }
}
