//! Redacting a session read again after it grew: what a redaction found in the file's complete
//! lines is kept ([`Seen`]), so that the next redaction of the same file, when those bytes are
//! unchanged, looks again only at what may differ. A live page (`arbor serve`) reads a growing
//! session again at every change; the secret scan's look at every line was most of that.
use super::{text, Redactions};
use crate::secrets::RedactError;
use arbor_core::doc::SessionDoc;
use arbor_core::entry::LineRef;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

/// What a redaction of a session's bytes found, for the next one: keyed hashes of their
/// first bytes up to a few places (the start of each of the last entry lines, and the end of
/// the complete lines), and where the entry lines with a secret start.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `(length, hash of the first length bytes)`, shortest first.
    marks: Vec<(usize, u64)>,
    secret_starts: HashSet<usize>,
}

/// How many of the last entry lines' starts a [`Seen`] marks: another agent's session read
/// again (Claude Code, Codex) changes its last lines, not only adds after them (the title,
/// placed last, moves after the new entries; a reply written over several records is one
/// entry that grows), so the bytes before the last few lines are what stays.
const MARKED_LAST_LINES: usize = 8;

/// Bytes hashed at a time (the hash of the first `len` bytes is always made of the same pieces
/// from the start, so that the same bytes hash the same).
const PIECE: usize = 1 << 20;

/// Keyed hashes of the first `len` bytes of `base`, for each of `lens` (ascending, each at
/// most `base.len()`), in one pass. The key is made once per process, so that nobody who
/// writes a session can choose bytes that hash as the ones a redaction cleared (foldhash's
/// quality hasher). A mapped session's pages go back to the page cache behind the pass
/// ([`arbor_store::Resident`]): hashing a 1 GB session must not make it resident whole.
fn hashes(base: &[u8], lens: &[usize]) -> Vec<u64> {
    static KEY: std::sync::OnceLock<foldhash::quality::RandomState> = std::sync::OnceLock::new();
    let mut h = KEY.get_or_init(Default::default).build_hasher();
    let mut behind = arbor_store::Resident::new(base);
    let mut pos = 0;
    let mut out = Vec::with_capacity(lens.len());
    for &len in lens {
        let len = len.min(base.len());
        let whole = len / PIECE * PIECE;
        while pos < whole {
            let piece = &base[pos..pos + PIECE];
            h.write(piece);
            behind.read(piece);
            pos += PIECE;
        }
        let mut at = h.clone();
        at.write(&base[pos.min(len)..len]);
        out.push(at.finish());
    }
    behind.done();
    out
}

/// [`super::redact`] of `doc`, a session read again: when `before` (what the last
/// `redact_again` of the same session returned) marks bytes that `doc` still begins with (the
/// same keyed hash of its first bytes up to a mark: the longest such), the entry lines among
/// those bytes in which that redaction found no secret are not looked at again (the same
/// bytes give the same answer); the lines after them, those with a secret, and those not read
/// from the bytes as they are (an omp blob put in, a migrated line) are. Otherwise (`None`,
/// other bytes: a file rewritten in place) every line is, as `redact` does. The header and
/// omp's title slot always are. Returns how many secrets, what the renderer replaces, and
/// what to pass next time.
///
/// ```
/// use arbor_core::doc::SessionDoc;
/// let head = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n";
/// let one = "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n";
/// let two = "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"my key ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5\",\"timestamp\":2}}\n";
/// let doc = |text: String| SessionDoc::parse(std::sync::Arc::new(text.into_bytes())).unwrap();
/// let mut first = doc(format!("{head}{one}"));
/// let (_, _, seen) = arbor_view::redact_again(&mut first, None).unwrap();
/// // The session grew: only the new line is looked at, and its secret is found.
/// let mut grown = doc(format!("{head}{one}{two}"));
/// let (n, _, _) = arbor_view::redact_again(&mut grown, Some(&seen)).unwrap();
/// assert_eq!(n, 1);
/// assert!(!String::from_utf8_lossy(grown.entry_line(1)).contains("ghp_"));
/// ```
///
/// # Errors
/// As `redact`.
pub fn redact_again(
    doc: &mut SessionDoc,
    before: Option<&Seen>,
) -> Result<(usize, Redactions, Seen), RedactError> {
    let complete = doc.complete_len().min(doc.base_bytes().len());
    // Where each entry line starts in the bytes (`None`: not the bytes as they are).
    let starts: Vec<Option<usize>> = doc
        .entries()
        .iter()
        .map(|e| match e.line {
            LineRef::Base { start, .. } => Some(start),
            _ => None,
        })
        .collect();
    // The marks to keep (the starts of the last lines in the bytes' order, and the end) and
    // those of `before` that fit, hashed in one pass over the bytes.
    let mut marks: Vec<usize> = starts.iter().flatten().copied().collect();
    marks.sort_unstable();
    let mut marks = marks.split_off(marks.len().saturating_sub(MARKED_LAST_LINES));
    marks.push(complete);
    marks.retain(|&l| l <= complete);
    marks.dedup();
    let mut lens = marks.clone();
    lens.extend(before.iter().flat_map(|s| &s.marks).map(|&(len, _)| len));
    lens.retain(|&l| l <= complete);
    lens.sort_unstable();
    lens.dedup();
    let hashed = hashes(doc.base_bytes(), &lens);
    let hash_at = |len: usize| lens.binary_search(&len).ok().map(|i| hashed[i]);
    // The longest mark of `before` that the bytes still hash to.
    let same = before.and_then(|s| {
        s.marks
            .iter()
            .filter(|&&(len, was)| hash_at(len) == Some(was))
            .map(|&(len, _)| len)
            .max()
            .map(|len| (len, &s.secret_starts))
    });
    let only: Option<Vec<usize>> = same.map(|(len, secret)| {
        starts
            .iter()
            .enumerate()
            .filter(|(_, st)| st.is_none_or(|st| st >= len || secret.contains(&st)))
            .map(|(i, _)| i)
            .collect()
    });
    let (n, deferred) =
        crate::secrets::redact_doc_deferring(doc, only.as_deref(), &text::long_strings)?;
    // The lines with a secret: redacted in place (their line is no longer the bytes') or
    // left to the renderer.
    let mut secret_starts: HashSet<usize> = starts
        .iter()
        .zip(doc.entries())
        .filter(|(_, e)| !matches!(e.line, LineRef::Base { .. }))
        .filter_map(|(st, _)| *st)
        .collect();
    secret_starts.extend(
        deferred
            .iter()
            .filter_map(|(i, _)| starts.get(*i).copied().flatten()),
    );
    let marks = marks
        .into_iter()
        .filter_map(|len| hash_at(len).map(|h| (len, h)))
        .collect();
    let seen = Seen {
        marks,
        secret_starts,
    };
    Ok((n, Redactions::new(doc, deferred), seen))
}

#[cfg(test)]
mod tests {
    use super::{redact_again, Seen};
    use arbor_core::doc::SessionDoc;

    const HEAD: &str =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n";

    fn user(id: &str, parent: &str, text: &str) -> String {
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n"
        )
    }

    fn doc(text: &str) -> SessionDoc {
        SessionDoc::parse(std::sync::Arc::new(text.as_bytes().to_vec())).expect("a session")
    }

    fn key(c: char) -> String {
        format!("ghp_{}", c.to_string().repeat(36))
    }

    /// Every entry line of `d` as text.
    fn lines(d: &SessionDoc) -> Vec<String> {
        (0..d.entries().len())
            .map(|i| String::from_utf8_lossy(d.entry_line(i)).into_owned())
            .collect()
    }

    /// A session of `n` entries, a secret in every third, grown by `more` entries.
    fn sessions(n: usize, more: usize) -> (String, String) {
        let mut text = HEAD.to_string();
        let mut parent = "null".to_string();
        let mut grown = String::new();
        for i in 0..n + more {
            let said = if i % 3 == 0 {
                format!("key {}", key(char::from(b'a' + (i % 26) as u8)))
            } else {
                format!("line {i}")
            };
            let line = user(&format!("e{i}"), &parent, &said);
            parent = format!("\"e{i}\"");
            if i < n {
                text.push_str(&line);
            } else {
                grown.push_str(&line);
            }
        }
        (text.clone(), format!("{text}{grown}"))
    }

    #[test]
    fn a_grown_session_redacted_again_is_the_session_redacted_whole() {
        let (first, grown) = sessions(30, 12);
        let mut a = doc(&first);
        let (n1, _, seen) = redact_again(&mut a, None).expect("redact");
        assert_eq!(n1, 10);
        let mut again = doc(&grown);
        let (n, _, next) = redact_again(&mut again, Some(&seen)).expect("redact");
        let mut whole = doc(&grown);
        let (n_whole, _, _) = redact_again(&mut whole, None).expect("redact");
        assert_eq!(n, n_whole, "the secrets of the prefix are counted again");
        assert_eq!(lines(&again), lines(&whole));
        assert!(lines(&again).iter().all(|l| !l.contains("ghp_")));
        // What it found carries on: grown again, still the whole redaction.
        let mut third = doc(&format!("{grown}{}", user("z", "\"e41\"", &key('z'))));
        redact_again(&mut third, Some(&next)).expect("redact");
        assert!(lines(&third).iter().all(|l| !l.contains("ghp_")));
    }

    #[test]
    fn a_line_rewritten_in_place_is_looked_at_again() {
        // A line of the same length in the same place, a secret where there was none, and a
        // line more: the bytes seen differ, so every line is looked at.
        let (first, _) = sessions(6, 0);
        let clean = format!("line 4{}", " ".repeat(40));
        let first = first.replacen("line 4", &clean, 1);
        let mut a = doc(&first);
        let (_, _, seen) = redact_again(&mut a, None).expect("redact");
        let planted = format!("{}      ", key('q'));
        assert_eq!(planted.len(), clean.len());
        let rewritten = first.replacen(&clean, &planted, 1);
        let grown = format!("{rewritten}{}", user("n", "\"e5\"", "more"));
        let mut b = doc(&grown);
        let (n, _, _) = redact_again(&mut b, Some(&seen)).expect("redact");
        assert!(
            lines(&b).iter().all(|l| !l.contains("ghp_")),
            "{:?}",
            lines(&b)
        );
        assert_eq!(n, 3, "e0's, e3's and the line rewritten");
    }

    #[test]
    fn seen_of_other_bytes_is_not_used() {
        let (first, _) = sessions(4, 0);
        let mut a = doc(&first);
        let (_, _, seen): (usize, _, Seen) = redact_again(&mut a, None).expect("redact");
        // A shorter file than what was seen: every line.
        let short = doc(&format!("{HEAD}{}", user("e0", "null", &key('k'))));
        let mut s = short;
        let (n, _, _) = redact_again(&mut s, Some(&seen)).expect("redact");
        assert_eq!(n, 1);
    }

    /// A session of `said` user messages in a chain, as text.
    fn chain(said: &[String]) -> String {
        let mut text = HEAD.to_string();
        for (i, t) in said.iter().enumerate() {
            let parent = if i == 0 {
                "null".to_string()
            } else {
                format!("\"e{}\"", i - 1)
            };
            text.push_str(&user(&format!("e{i}"), &parent, t));
        }
        text
    }

    /// What a message says: a secret or not, 46 bytes either way.
    fn said(secret: bool, c: u8) -> String {
        if secret {
            format!("{}      ", key(char::from(b'a' + c % 26)))
        } else {
            format!("clean {:0>40}", c)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// However the session changed (lines added, its last lines replaced, a line rewritten
        /// in place), redacting it again with what the last redaction found is redacting it
        /// whole.
        #[test]
        fn redacting_again_is_redacting_whole(
            first in proptest::collection::vec((proptest::bool::ANY, 0u8..26), 1..40),
            replaced in 0usize..4,
            added in proptest::collection::vec((proptest::bool::ANY, 0u8..26), 0..6),
            rewrite in proptest::option::of((0usize..40, proptest::bool::ANY, 0u8..26)),
        ) {
            let before: Vec<String> = first.iter().map(|&(s, c)| said(s, c)).collect();
            let mut a = doc(&chain(&before));
            let (_, _, seen) = redact_again(&mut a, None).expect("redact");
            let mut after = before.clone();
            after.truncate(before.len().saturating_sub(replaced));
            after.extend(added.iter().map(|&(s, c)| said(s, c)));
            if let Some((at, s, c)) = rewrite {
                if !after.is_empty() {
                    let at = at % after.len();
                    after[at] = said(s, c);
                }
            }
            if after.is_empty() {
                after.push(said(true, 0));
            }
            let text = chain(&after);
            let mut again = doc(&text);
            let (n, _, _) = redact_again(&mut again, Some(&seen)).expect("redact");
            let mut whole = doc(&text);
            let (n_whole, _, _) = redact_again(&mut whole, None).expect("redact");
            proptest::prop_assert_eq!(n, n_whole);
            proptest::prop_assert_eq!(lines(&again), lines(&whole));
        }
    }
}
