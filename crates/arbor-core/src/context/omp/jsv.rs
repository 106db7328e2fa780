//! ECMAScript value semantics that omp's context code relies on implicitly: `ToString`,
//! `new Date(v).getTime()`, `SameValueZero` equality, truthiness of raw JSON, JS whitespace,
//! and UTF-16 views of strings (JS string indices and lengths count UTF-16 code units).
use crate::blobref::utf16_units;
use crate::json::{self, JsStr, JsValue, ValueKind};

/// A primitive JSON value (or a missing one) compared the way `===`, `Set` and `Map` compare
/// primitives (`SameValueZero`: `0` equals `-0`). Objects and arrays have no key: two of them
/// are never equal, because every parsed object is a distinct JS object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Prim {
    /// A missing member (`undefined`).
    Undefined,
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number, by the bits of its value with `-0` folded into `0`.
    Num(u64),
    /// A string, decoded.
    Str(JsStr),
}

impl Prim {
    /// The key of a raw member value (`None`: the member is missing → `undefined`), or `None`
    /// for objects and arrays (never equal to anything).
    pub(crate) fn of_raw(raw: Option<(&[u8], ValueKind)>) -> Option<Prim> {
        let Some((raw, kind)) = raw else {
            return Some(Prim::Undefined);
        };
        Some(match kind {
            ValueKind::Null => Prim::Null,
            ValueKind::Bool => Prim::Bool(raw.first() == Some(&b't')),
            ValueKind::Number => Prim::Num(num_bits(crate::js::number(raw))),
            ValueKind::String => Prim::Str(decode_raw_str(raw)?),
            ValueKind::Array | ValueKind::Object => return None,
        })
    }

    /// The key of a DOM value (`None` for objects and arrays).
    pub(crate) fn of_value(v: &JsValue) -> Option<Prim> {
        Some(match v {
            JsValue::Null => Prim::Null,
            JsValue::Bool(b) => Prim::Bool(*b),
            JsValue::Number(n) => Prim::Num(num_bits(*n)),
            JsValue::String(s) => Prim::Str(s.clone()),
            JsValue::Array(_) | JsValue::Object(_) => return None,
        })
    }
}

/// `a === b` for two optional keys (objects, `None`, are never equal).
pub(crate) fn strict_eq(a: &Option<Prim>, b: &Option<Prim>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x == y)
}

fn num_bits(n: f64) -> u64 {
    if n == 0.0 {
        0f64.to_bits()
    } else {
        n.to_bits()
    }
}

/// Decodes a raw JSON string (with its quotes).
pub(crate) fn decode_raw_str(raw: &[u8]) -> Option<JsStr> {
    let inner = raw.get(1..raw.len().checked_sub(1)?)?;
    json::decode_string(inner).ok()
}

/// A raw member as a string, when it is one.
pub(crate) fn raw_js_str(raw: Option<(&[u8], ValueKind)>) -> Option<JsStr> {
    match raw {
        Some((r, ValueKind::String)) => decode_raw_str(r),
        _ => None,
    }
}

/// Whether a raw member is the string `s`.
pub(crate) fn raw_is_str(raw: Option<(&[u8], ValueKind)>, s: &str) -> bool {
    raw_js_str(raw).is_some_and(|v| v.0 == s.as_bytes())
}

/// The UTF-16 code units of a string.
pub(crate) fn units(s: &JsStr) -> Vec<u16> {
    utf16_units(s).collect()
}

/// The units of an ASCII literal.
pub(crate) fn lit(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// A string from UTF-16 code units: pairs become one code point, lone surrogates stay (WTF-8).
pub(crate) fn from_units(u: &[u16]) -> JsStr {
    let mut out = Vec::with_capacity(u.len());
    let mut i = 0;
    while i < u.len() {
        let c = u32::from(u[i]);
        let cp = if (0xD800..0xDC00).contains(&c)
            && u.get(i + 1).is_some_and(|&l| (0xDC00..0xE000).contains(&l))
        {
            let lo = u32::from(u[i + 1]);
            i += 1;
            0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            c
        };
        i += 1;
        push_cp(cp, &mut out);
    }
    JsStr(out)
}

/// Encodes one code point (a surrogate included) as WTF-8.
fn push_cp(cp: u32, out: &mut Vec<u8>) {
    // Truncating casts below keep the low bits by construction of each branch.
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.push(0xC0 | (cp >> 6) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else if cp < 0x10000 {
        out.push(0xE0 | (cp >> 12) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else {
        out.push(0xF0 | (cp >> 18) as u8);
        out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    }
}

/// `n.toLocaleString()` for a non-negative integer count in the `en-US` locale (`1,234`).
pub(crate) fn locale_count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `x.toFixed(1)` for a finite non-negative double: the exact binary value rounded to one
/// decimal, a tie going to the larger candidate (as the spec's "pick the larger n").
pub(crate) fn to_fixed_1(x: f64) -> String {
    // The callers pass values >= 1 (a byte count over 1e3 or 1e6), whose binary fraction has
    // at most 52 bits and so an exact decimal expansion of at most 52 digits: 64 places print
    // it exactly, and the rounding below sees the true value.
    let exact = format!("{x:.64}");
    let (int_part, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut digits: Vec<u8> = int_part
        .bytes()
        .chain(frac.bytes().take(1))
        .map(|b| b - b'0')
        .collect();
    let rest = frac.as_bytes().get(1..).unwrap_or_default();
    // Round half up: the remainder is >= one half when its first digit is >= 5.
    if rest.first().is_some_and(|&d| d >= b'5') {
        let mut k = digits.len();
        loop {
            if k == 0 {
                digits.insert(0, 1);
                break;
            }
            k -= 1;
            if digits[k] == 9 {
                digits[k] = 0;
            } else {
                digits[k] += 1;
                break;
            }
        }
    }
    let n = digits.len();
    let mut s: String = digits[..n - 1]
        .iter()
        .map(|d| char::from(b'0' + d))
        .collect();
    if s.is_empty() {
        s.push('0');
    }
    s.push('.');
    s.push(char::from(b'0' + digits[n - 1]));
    s
}

/// The value of a property key that is an ECMAScript array index (canonical decimal of an
/// integer in 0..=4294967294): `JSON.stringify` writes such keys first, in ascending order.
pub(crate) fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty()
        || key.len() > 10
        || (key.len() > 1 && key[0] == b'0')
        || !key.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let v: u64 = key.iter().fold(0, |v, &d| v * 10 + u64::from(d - b'0'));
    u32::try_from(v).ok().filter(|&v| v < u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_fixed_rounds_half_up_on_exact_value() {
        assert_eq!(to_fixed_1(1.25), "1.3");
        assert_eq!(to_fixed_1(1.05), "1.1");
        assert_eq!(to_fixed_1(1.45), "1.4");
        assert_eq!(to_fixed_1(0.05), "0.1");
        assert_eq!(to_fixed_1(0.0), "0.0");
        assert_eq!(to_fixed_1(9.96), "10.0");
        assert_eq!(to_fixed_1(3.0), "3.0");
        assert_eq!(to_fixed_1(2.5e6 / 1e6), "2.5");
    }

    #[test]
    fn array_indexes() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"10"), Some(10));
        assert_eq!(array_index(b"4294967294"), Some(4_294_967_294));
        for k in [
            &b"4294967295"[..],
            b"01",
            b"-1",
            b"",
            b"1e3",
            b"99999999999",
        ] {
            assert_eq!(array_index(k), None, "{k:?}");
        }
    }

    #[test]
    fn locale_counts() {
        assert_eq!(locale_count(0), "0");
        assert_eq!(locale_count(999), "999");
        assert_eq!(locale_count(1000), "1,000");
        assert_eq!(locale_count(1234567), "1,234,567");
    }

    #[test]
    fn js_strings_and_units() {
        let v = JsValue::parse(br#"[1,null,[2,"a"],{"x":1},true,1e21]"#).unwrap_or(JsValue::Null);
        assert_eq!(
            crate::js::to_js_str(Some(&v)).0,
            b"1,,2,a,[object Object],true,1e+21"
        );
        let s = JsStr::from("a\u{1F600}b");
        assert_eq!(from_units(&units(&s)), s);
        let lone = JsStr(vec![0xED, 0xA0, 0xBD]);
        assert_eq!(from_units(&units(&lone)), lone);
    }
}
