//! ISO-8601 timestamps as JavaScript's `Date` reads and writes them.
//!
//! Entry timestamps are ISO strings (`2024-12-03T14:00:00.000Z`); context messages carry
//! `Date.parse(entry.timestamp)` as epoch milliseconds, `NaN` (JSON `null`) when unparseable.

/// Days from 1970-01-01 to the given proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
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

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let s = self.b.get(self.i..self.i + n)?;
        let mut v = 0i64;
        for &c in s {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        self.i += n;
        Some(v)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
}

/// `Date.parse` for the ECMAScript date-time string format (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`,
/// optionally `THH:mm`, `:ss`, `.sss`, and `Z` or `±HH:mm`; also `±YYYYYY` years).
/// Date-only forms are UTC; a date-time without offset is local time in JS, read here as UTC
/// (pi and omp always write `Z`). Returns `None` where JS gives `NaN`.
pub fn parse_iso_ms(s: &str) -> Option<f64> {
    let mut c = Cursor {
        b: s.as_bytes(),
        i: 0,
    };
    let year = if c.eat(b'+') {
        c.digits(6)?
    } else if c.eat(b'-') {
        let y = c.digits(6)?;
        if y == 0 {
            return None;
        }
        -y
    } else {
        c.digits(4)?
    };
    let (mut month, mut day) = (1, 1);
    if c.eat(b'-') {
        month = c.digits(2)?;
        if c.eat(b'-') {
            day = c.digits(2)?;
        }
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let (mut h, mut mi, mut sec, mut ms) = (0, 0, 0, 0i64);
    let mut offset_min = 0i64;
    if c.eat(b'T') {
        h = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.digits(2)?;
        if c.eat(b':') {
            sec = c.digits(2)?;
            if c.eat(b'.') {
                // JS accepts one or more fraction digits and uses the first three.
                let start = c.i;
                while c.i < c.b.len() && c.b[c.i].is_ascii_digit() {
                    c.i += 1;
                }
                let frac = &c.b[start..c.i];
                if frac.is_empty() {
                    return None;
                }
                let mut v = 0i64;
                for k in 0..3 {
                    v = v * 10 + frac.get(k).map_or(0, |d| i64::from(d - b'0'));
                }
                ms = v;
            }
        }
        if c.eat(b'Z') {
        } else if c.i < c.b.len() && (c.b[c.i] == b'+' || c.b[c.i] == b'-') {
            let sign = if c.b[c.i] == b'-' { -1 } else { 1 };
            c.i += 1;
            let oh = c.digits(2)?;
            if !c.eat(b':') {
                return None;
            }
            let om = c.digits(2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            offset_min = sign * (oh * 60 + om);
        }
        let h24 = h == 24 && mi == 0 && sec == 0 && ms == 0;
        if (h > 23 && !h24) || mi > 59 || sec > 59 {
            return None;
        }
    }
    if !c.done() {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let t = ((days * 24 + h) * 60 + mi - offset_min) * 60 + sec;
    let total = t as f64 * 1000.0 + ms as f64;
    // ECMAScript time values are limited to ±8.64e15 ms.
    if total.abs() > 8.64e15 {
        return None;
    }
    Some(total)
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
        assert_eq!(parse_iso_ms("2025-02-30T00:00:00.000Z"), None);
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
