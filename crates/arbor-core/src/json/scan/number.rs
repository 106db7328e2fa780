//! Number tokens: the JSON number grammar, and whether a token is already what
//! `JSON.stringify` prints for its value.
use super::*;

/// A number token found by [`scan_number`].
pub(crate) struct NumberToken {
    /// Index just past the token.
    pub end: usize,
    /// The token is exactly what `JSON.stringify` writes for its value, so it can be copied:
    /// an integer `0` or `-?[1-9][0-9]{0,14}` (not `-0`), or a decimal without exponent whose
    /// last digit is not 0, with at most 15 significant digits and a value >= 1e-6 (at most
    /// five zeros after `0.`). Any decimal of at most 15 significant digits survives the round
    /// trip through f64 (DBL_DIG), and no other decimal as short maps to the same double, so
    /// the shortest round-trip spelling JS prints is the token itself.
    pub canonical: bool,
}

/// Validates the number token starting at `start` (JSON grammar: `-?(0|[1-9][0-9]*)
/// (\.[0-9]+)?([eE][+-]?[0-9]+)?`).
#[inline]
pub(crate) fn scan_number(src: &[u8], start: usize) -> Result<NumberToken, JsonError> {
    let mut i = start;
    let neg = src.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let int_start = i;
    match src.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while matches!(src.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return Err(err(i, "invalid number")),
    }
    let int_len = i - int_start;
    let int_zero = src.get(int_start) == Some(&b'0');
    let mut canonical = int_len <= 15 && !(neg && int_zero);
    if src.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        if !matches!(src.get(i), Some(b'0'..=b'9')) {
            return Err(err(i, "invalid number"));
        }
        while matches!(src.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        let frac = src.get(frac_start..i).unwrap_or_default();
        canonical = if frac.last() == Some(&b'0') {
            false
        } else if int_zero {
            let zeros = frac.iter().take_while(|&&b| b == b'0').count();
            zeros <= 5 && frac.len() - zeros <= 15
        } else {
            int_len + frac.len() <= 15
        };
    }
    if matches!(src.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(src.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(src.get(i), Some(b'0'..=b'9')) {
            return Err(err(i, "invalid number"));
        }
        while matches!(src.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        canonical = false;
    }
    Ok(NumberToken { end: i, canonical })
}

/// Parses a validated number token to f64 with correct rounding (as JS does).
#[inline]
pub(crate) fn number_value(token: &[u8], offset: usize) -> Result<f64, JsonError> {
    std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| err(offset, "invalid number"))
}
