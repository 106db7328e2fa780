//! Typed values of the numeric flags. Every duration, count and span is checked when clap
//! parses it, so a non-finite, negative or absurd value (`--wait inf`, `--min-age nan`,
//! `--since 99999999999w`) is a usage error (exit 2) naming the flag and the range, and no
//! command ever sees it (`Duration::from_secs_f64` panics on such values).
use std::time::Duration;

/// The longest duration a flag takes: ten years, in seconds.
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;
/// The largest `--limit` of `arbor search`.
pub const MAX_HITS: usize = 1_000_000;

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

/// `--since` / `--until`: a date, a date-time, or a span back from now (in the library, so
/// that the MCP server's `since`/`until` arguments read the same).
pub use arbor_core::time::{since, Since};

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
