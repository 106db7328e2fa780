//! Words for a person: the one way a count is written with its noun.

/// `n` and its noun, singular for exactly one: `count(1, "entry", "entries")` is
/// `"1 entry"`, `count(2, "entry", "entries")` is `"2 entries"`, and so is 0. Every count
/// arbor prints with a noun goes through this (both forms are given: English plurals are not
/// all an added `s`).
///
/// ```
/// assert_eq!(arbor_view::count(1, "session", "sessions"), "1 session");
/// assert_eq!(arbor_view::count(0, "branch", "branches"), "0 branches");
/// ```
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
