//! Typed values of the numeric flags. Every duration, count and span is checked when clap
//! parses it, so a non-finite, negative or absurd value (`--wait inf`, `--min-age nan`,
//! `--since 99999999999w`) is a usage error (exit 2) naming the flag and the range, and no
//! command ever sees it (`Duration::from_secs_f64` panics on such values).
use std::time::Duration;

/// The longest duration a flag takes: ten years, in seconds.
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;
/// The largest `--limit` of `arbor search`.
pub const MAX_HITS: usize = 1_000_000;
/// The longest `--since` span back from now: 100 years, in milliseconds.
pub const MAX_SPAN_MS: f64 = 100.0 * 365.25 * 86_400_000.0;

/// A number of seconds (`--wait`, `--min-age`): finite, from 0 to ten years.
pub fn seconds(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, got '{s}'"))?;
    if !v.is_finite() || !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!(
            "expected seconds from 0 to {MAX_SECONDS} (ten years), got '{s}'"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `arbor search --limit`: a whole number from 1 to [`MAX_HITS`].
pub fn hits(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_HITS).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a whole number from 1 to {MAX_HITS}, got '{s}'"
        )),
    }
}

/// `arbor history --limit`: omp's limit, a finite number from 0 (omp then keeps at most
/// 1,000 and rounds down).
pub fn history_limit(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number from 0 to 1000 (more is read as 1000), got '{s}'"
        )),
    }
}

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

/// Reads `--since`: `YYYY-MM-DD`, an ISO date-time, or a span back from now (`30m`, `12h`,
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
    match arbor_core::time::parse_iso_ms(t) {
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
    fn seconds_reject_what_duration_cannot_hold() {
        for bad in [
            "inf", "infinity", "-inf", "nan", "NaN", "-5", "1e19", "1e308", "1e300", "", "x",
            "-0.5",
        ] {
            assert!(seconds(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(seconds("0").expect("0"), Duration::ZERO);
        assert_eq!(seconds("2.5").expect("2.5"), Duration::from_millis(2500));
        assert!(seconds(&MAX_SECONDS.to_string()).is_ok());
    }

    #[test]
    fn counts_and_spans_have_ranges() {
        for bad in ["0", "-1", "1e3", "99999999999999999999", "nan"] {
            assert!(hits(bad).is_err(), "{bad:?}");
        }
        assert_eq!(hits("20"), Ok(20));
        for bad in ["inf", "nan", "-1", "1e300"] {
            assert!(history_limit(bad).is_err(), "{bad:?}");
        }
        for bad in ["99999999999w", "infw", "nanh", "-5d", "1e308m", "yesterday"] {
            assert!(since(bad).is_err(), "{bad:?}");
        }
        assert_eq!(since("2h"), Ok(Since::Ago(7_200_000.0)));
        assert!(matches!(since("2025-01-31"), Ok(Since::At(_))));
    }
}
