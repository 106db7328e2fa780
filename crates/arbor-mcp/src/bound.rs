//! The one size bound of every answer: a budget in characters, and opaque cursors to
//! continue where an answer stopped.
//!
//! Every tool and every resource goes through this module, so that no call returns a 1 GB
//! session: a list is cut at the item that would pass the budget ([`page`]), a text at the
//! character that would ([`cut_text`]), and the server checks the whole answer once more
//! before it is sent ([`fits`]). A cut answer carries a `next_cursor`; passing it back as
//! `cursor` with the same arguments continues after the last item served.
use serde::Serialize;

/// The budget of an answer when the caller names none, in characters.
pub const DEFAULT_BUDGET: usize = 40_000;
/// The largest budget a caller may ask for, in characters.
pub const MAX_BUDGET: usize = 200_000;
/// The largest `limit` (items per answer) any tool accepts.
pub const MAX_LIMIT: usize = 1_000;

/// Why an argument of the bound was refused (a tool error names it).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoundError {
    /// `budget` out of range.
    #[error("budget: {0} is out of range (100 to {MAX_BUDGET} characters)")]
    Budget(u64),
    /// `limit` out of range.
    #[error("limit: {0} is out of range (1 to {max})", max = MAX_LIMIT)]
    Limit(u64),
    /// A cursor this server did not make, or made for another question.
    #[error("cursor: not a cursor of this tool for these arguments (start again without it)")]
    Cursor,
}

/// A character budget, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget(pub usize);

impl Budget {
    /// The budget a caller asked for (`None`: [`DEFAULT_BUDGET`]), refused outside 100 to
    /// [`MAX_BUDGET`].
    ///
    /// ```
    /// use arbor_mcp::bound::{Budget, DEFAULT_BUDGET};
    /// assert_eq!(Budget::new(None).unwrap().0, DEFAULT_BUDGET);
    /// assert!(Budget::new(Some(1_000_000_000_000)).is_err());
    /// ```
    pub fn new(asked: Option<u64>) -> Result<Budget, BoundError> {
        match asked {
            None => Ok(Budget(DEFAULT_BUDGET)),
            Some(n) if (100..=MAX_BUDGET as u64).contains(&n) => Ok(Budget(n as usize)),
            Some(n) => Err(BoundError::Budget(n)),
        }
    }
}

/// A `limit` argument, checked: `None` is `default`, 0 or more than [`MAX_LIMIT`] is refused.
pub fn limit(asked: Option<u64>, default: usize) -> Result<usize, BoundError> {
    match asked {
        None => Ok(default),
        Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => Ok(n as usize),
        Some(n) => Err(BoundError::Limit(n)),
    }
}

/// What a cursor is bound to: the tool and a digest of the arguments that shape the answer
/// (everything but `cursor`, `limit` and `budget`), so that a cursor is not taken for
/// another question.
fn digest(tool: &str, key: &str) -> u64 {
    // FNV-1a: stable across runs and builds (a cursor may outlive a server).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in tool.bytes().chain([0]).chain(key.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A cursor that continues `tool`'s answer to the question `key` at `offset` (an item index
/// or a character offset, as the tool counts).
///
/// ```
/// use arbor_mcp::bound::{cursor, offset};
/// let c = cursor("list_sessions", "all", 40);
/// assert_eq!(offset(Some(&c), "list_sessions", "all"), Ok(40));
/// assert!(offset(Some(&c), "list_sessions", "other").is_err());
/// assert_eq!(offset(None, "list_sessions", "all"), Ok(0));
/// ```
pub fn cursor(tool: &str, key: &str, offset: usize) -> String {
    format!("c1.{:016x}.{offset:x}", digest(tool, key))
}

/// The offset a `cursor` argument carries (0 without one); a cursor of another tool or
/// question is refused.
pub fn offset(cursor: Option<&str>, tool: &str, key: &str) -> Result<usize, BoundError> {
    let Some(c) = cursor.filter(|c| !c.is_empty()) else {
        return Ok(0);
    };
    let mut parts = c.split('.');
    let (Some("c1"), Some(d), Some(o), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BoundError::Cursor);
    };
    let d = u64::from_str_radix(d, 16).map_err(|_| BoundError::Cursor)?;
    if d != digest(tool, key) {
        return Err(BoundError::Cursor);
    }
    usize::from_str_radix(o, 16).map_err(|_| BoundError::Cursor)
}

/// What a text rendering says at its end when the answer was cut: how to go on.
pub fn more_note(next_cursor: Option<&str>) -> &'static str {
    if next_cursor.is_some() {
        " (more: pass next_cursor back as cursor)"
    } else {
        ""
    }
}

/// The characters `v` takes as JSON.
pub fn json_chars<T: Serialize + ?Sized>(v: &T) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.chars().count())
}

/// One page of a list.
#[derive(Debug)]
pub struct Page<T> {
    /// The items that fit.
    pub items: Vec<T>,
    /// The offset of the first item not served, when some were not.
    pub next: Option<usize>,
}

/// The items of `all` from `start` that fit in `budget` characters (as JSON) and `limit`
/// items; at least one item is served when there is one (a single item larger than the
/// budget is cut by the server's last check, [`fits`]).
///
/// ```
/// use arbor_mcp::bound::{page, Budget};
/// let words: Vec<String> = (0..100).map(|i| format!("word{i}")).collect();
/// let p = page(words.into_iter(), 10, 5, Budget(1000));
/// assert_eq!(p.items, ["word10", "word11", "word12", "word13", "word14"]);
/// assert_eq!(p.next, Some(15));
/// ```
pub fn page<T: Serialize>(
    all: impl Iterator<Item = T>,
    start: usize,
    limit: usize,
    budget: Budget,
) -> Page<T> {
    let mut items = Vec::new();
    let mut used = 0usize;
    let mut next = None;
    for (i, item) in all.enumerate().skip(start) {
        let n = json_chars(&item) + 1;
        if items.len() >= limit || (!items.is_empty() && used + n > budget.0) {
            next = Some(i);
            break;
        }
        used += n;
        items.push(item);
    }
    Page { items, next }
}

/// `text` cut to at most `budget` characters at a line end when there is one in the last
/// quarter; `Some(offset)` (in characters) of what was left out, else `None`.
///
/// ```
/// use arbor_mcp::bound::cut_text;
/// assert_eq!(cut_text("short", 100), ("short".to_string(), None));
/// let (t, more) = cut_text("aaaa\nbbbb\ncccc\n", 12);
/// assert_eq!((t.as_str(), more), ("aaaa\nbbbb\n", Some(10)));
/// ```
pub fn cut_text(text: &str, budget: usize) -> (String, Option<usize>) {
    let Some((byte_end, _)) = text.char_indices().nth(budget) else {
        return (text.to_string(), None);
    };
    let head = &text[..byte_end];
    let keep = match head.rfind('\n') {
        Some(nl) if head[..nl + 1].chars().count() >= budget * 3 / 4 => nl + 1,
        _ => byte_end,
    };
    let cut = &text[..keep];
    (cut.to_string(), Some(cut.chars().count()))
}

/// The server's last check on an answer: every string of `v` longer than what the budget
/// allows is cut (with `…[cut: N more characters]`), until the answer fits in `budget`
/// characters. Returns whether anything was cut.
///
/// Strings cut to 16 characters and still too long (a list of many short items), the longest
/// arrays lose their last items, half at a time, until it fits: a tool that may have that
/// many items says how many there were in a count of its own.
///
/// ```
/// let mut v = serde_json::json!({"text": "x".repeat(10_000), "n": 1});
/// assert!(arbor_mcp::bound::fits(&mut v, 1_000));
/// assert!(arbor_mcp::bound::json_chars(&v) <= 1_000);
/// assert!(v["text"].as_str().unwrap().contains("[cut:"));
/// let mut many = serde_json::json!({"items": vec![1_000_000u64; 5_000]});
/// assert!(arbor_mcp::bound::fits(&mut many, 1_000));
/// assert!(arbor_mcp::bound::json_chars(&many) <= 1_000);
/// ```
pub fn fits(v: &mut serde_json::Value, budget: usize) -> bool {
    let mut cut = false;
    let mut cap = budget;
    while json_chars(v) > budget && cap > 16 {
        cap /= 2;
        cut |= cut_strings(v, cap);
    }
    while json_chars(v) > budget && halve_longest_array(v) {
        cut = true;
    }
    cut
}

/// Drops the second half of the longest array in `v`; `false` when no array has items left.
fn halve_longest_array(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    /// One step down: an object's member or an array's item.
    enum Step {
        Key(String),
        Index(usize),
    }
    /// The path to the longest non-empty array below `v`, and its length.
    fn find(v: &Value) -> Option<(usize, Vec<Step>)> {
        let mut best: Option<(usize, Vec<Step>)> = None;
        let mut consider = |found: Option<(usize, Vec<Step>)>, step: Step| {
            if let Some((n, mut path)) = found {
                if best.as_ref().is_none_or(|(b, _)| n > *b) {
                    path.insert(0, step);
                    best = Some((n, path));
                }
            }
        };
        match v {
            Value::Array(a) => {
                for (k, x) in a.iter().enumerate() {
                    consider(find(x), Step::Index(k));
                }
                match best {
                    Some((n, p)) if n > a.len() => Some((n, p)),
                    _ if !a.is_empty() => Some((a.len(), Vec::new())),
                    _ => None,
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    consider(find(x), Step::Key(k.clone()));
                }
                best
            }
            _ => None,
        }
    }
    let Some((_, path)) = find(v) else {
        return false;
    };
    let mut at = v;
    for step in path {
        let next = match (step, at) {
            (Step::Key(k), Value::Object(o)) => o.get_mut(&k),
            (Step::Index(i), Value::Array(a)) => a.get_mut(i),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    match at {
        Value::Array(a) if !a.is_empty() => {
            let keep = a.len() / 2;
            a.truncate(keep);
            true
        }
        _ => false,
    }
}

fn cut_strings(v: &mut serde_json::Value, cap: usize) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            if n <= cap {
                return false;
            }
            let (head, _) = cut_text(s, cap);
            let more = n - head.chars().count();
            *s = format!("{head}…[cut: {more} more characters]");
            true
        }
        Value::Array(a) => a.iter_mut().fold(false, |c, x| cut_strings(x, cap) | c),
        Value::Object(o) => o.values_mut().fold(false, |c, x| cut_strings(x, cap) | c),
        _ => false,
    }
}
