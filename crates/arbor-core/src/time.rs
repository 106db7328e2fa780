//! ISO-8601 timestamps as JavaScript's `Date` reads and writes them.
//!
//! Entry timestamps are ISO strings (`2024-12-03T14:00:00.000Z`); context messages carry
//! `Date.parse(entry.timestamp)` as epoch milliseconds, `NaN` (JSON `null`) when unparseable.

/// Days from 1970-01-01 to the given proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `Date.parse(s)` / `new Date(s).getTime()` as V8 computes it (arbor's port of V8's date parser): the
/// ECMAScript date-time string format (`YYYY-MM-DDTHH:mm:ss.sssZ` and its shorter forms, `±YYYYYY`
/// years) and everything V8's legacy parser accepts beyond it (`"2026-11-24 20:05:04Z"`,
/// `"Nov 24 2026 20:05:05 GMT"`, `"2024/01/02"`, days past the month's end rolled over, ...).
/// Forms without a zone are local time in V8 and read as UTC here. Returns `None` where JS
/// gives `NaN`.
pub fn parse_iso_ms(s: &str) -> Option<f64> {
    crate::v8date::parse(s)
}

/// Formats epoch milliseconds as `Date.prototype.toISOString` does (`YYYY-MM-DDTHH:mm:ss.sssZ`).
pub fn format_iso_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, rem) = (rem / 3_600_000, rem % 3_600_000);
    let (mi, rem) = (rem / 60_000, rem % 60_000);
    let (s, milli) = (rem / 1000, rem % 1000);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!("{year}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// The longest span back from now `since` takes: 100 years, in milliseconds.
pub const MAX_SPAN_MS: f64 = 100.0 * 365.25 * 86_400_000.0;

/// `--since`: a date, a date-time, or a span back from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Since {
    /// A point in time, ms since the epoch.
    At(f64),
    /// A span back from now, in ms.
    Ago(f64),
}

impl Since {
    /// The point in time, for spans counted back from `now_ms`.
    pub fn at(self, now_ms: f64) -> f64 {
        match self {
            Since::At(ms) => ms,
            Since::Ago(span) => now_ms - span,
        }
    }
}

/// Reads `--since` (and the MCP server's `since`/`until`): `YYYY-MM-DD`, an ISO date-time, or a span back from now (`30m`, `12h`,
/// `7d`, `2w`) of at most 100 years.
pub fn since(s: &str) -> Result<Since, String> {
    let t = s.trim();
    if let Some(n) = t.strip_suffix(|c: char| matches!(c, 'm' | 'h' | 'd' | 'w')) {
        if let Ok(v) = n.parse::<f64>() {
            let unit = match t.chars().last() {
                Some('m') => 60_000.0,
                Some('h') => 3_600_000.0,
                Some('d') => 86_400_000.0,
                _ => 7.0 * 86_400_000.0,
            };
            let span = v * unit;
            if !span.is_finite() || !(0.0..=MAX_SPAN_MS).contains(&span) {
                return Err(format!(
                    "a span back from now must be from 0 to 100 years, got '{s}'"
                ));
            }
            return Ok(Since::Ago(span));
        }
    }
    match parse_iso_ms(t) {
        Some(ms) => Ok(Since::At(ms)),
        None => Err(format!(
            "expected a date (2025-01-31), a date-time (2025-01-31T12:00:00Z) or a span (30m, 12h, 7d, 2w), got '{s}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_js_iso_forms() {
        assert_eq!(
            parse_iso_ms("2025-01-01T00:00:06.000Z"),
            Some(1_735_689_606_000.0)
        );
        assert_eq!(parse_iso_ms("1970-01-01"), Some(0.0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00Z"), Some(0.0));
        assert_eq!(parse_iso_ms("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00.1234Z"), Some(123.0));
        assert_eq!(parse_iso_ms("garbage"), None);
        // V8 rolls a day past the month's end over (node: 1740873600000, March 2).
        assert_eq!(
            parse_iso_ms("2025-02-30T00:00:00.000Z"),
            Some(1_740_873_600_000.0)
        );
        assert_eq!(parse_iso_ms(""), None);
    }

    #[test]
    fn formats_like_to_iso_string() {
        assert_eq!(format_iso_ms(1_735_689_606_000), "2025-01-01T00:00:06.000Z");
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
        for ms in [0i64, 951_782_400_123, 1_763_681_581_000, 4_102_444_800_000] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms as f64));
        }
    }
}
