//! arbor-bench: a deterministic generator of large, realistic pi sessions, used by arbor's
//! micro-benchmarks (`cargo bench -p arbor-bench`) and by `bench/compare.sh`, which times
//! arbor against the real pi on the same files.
//!
//! [`generate`] writes a pi v3 session (`{"type":"session","version":3,...}` header, then
//! entries chained by `id` / `parentId`) of about the requested size. The content looks like
//! a long coding-agent session: user prompts (some with base64 screenshots), assistant turns
//! with thinking blocks and signatures, tool calls and their results (file reads, bash output
//! with ANSI colour escapes, edits with diffs in `details`), `!cmd` bash executions, model and
//! thinking-level changes, compactions, abandoned branches with branch summaries, labels,
//! extension entries, custom messages and session names. Strings hold unicode (accents, CJK,
//! emoji), quotes, backslashes, tabs, newlines, control characters and, rarely, a lone UTF-16
//! surrogate escape (tool output cut in the middle of a character), all written as
//! `JSON.stringify` writes them. The same seed and size always give the same bytes.
#![deny(missing_docs)]

pub mod gen;

pub use gen::{generate, generate_vec, parse_size, GenConfig, GenSummary, SizeError};

/// The median of `values` (the mean of the middle two for an even count; NaN when empty).
///
/// ```
/// assert_eq!(arbor_bench::median(vec![3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(arbor_bench::median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
/// ```
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}
