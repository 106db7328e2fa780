//! How the two copies of a session compare: line hashes and the agreed prefix's digest, the
//! cursor's check, and the [`Plan`] (what each side lacks, or the conflict).
use crate::cursor::{Agreed, Cursor};
use crate::report::State;
use arbor_store::backend::{BackendError, SessionStore, StoredSession};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Lines, each without its newline.
pub(crate) type Lines = Vec<Vec<u8>>;

/// One line's hash, and the order-independent digest of a set of lines (the wrapping sum of
/// their hashes: the same lines in any order give the same digest).
pub(crate) type Hash = u128;

pub(crate) fn line_hash(line: &[u8]) -> Hash {
    let d = Sha256::digest(line);
    let mut first = [0u8; 16];
    first.copy_from_slice(&d[..16]);
    u128::from_le_bytes(first)
}

pub(crate) fn digest(hashes: &[Hash]) -> Hash {
    hashes.iter().fold(0, |a, h| a.wrapping_add(*h))
}

/// What stands for omp's title slot (an omp file's first line, rewritten in place by a
/// rename) in comparisons: two slots are the same line whatever title they hold; which title
/// wins is decided apart ([`later_slot`]).
pub(crate) const SLOT_HASH: Hash = 0x7469_746c_6520_736c_6f74_2076_3120_0001;

/// Whether `line` (without its newline) is omp's fixed-size title slot.
pub(crate) fn is_slot(line: &[u8]) -> bool {
    line.len() + 1 == arbor_core::title::SESSION_TITLE_SLOT_BYTES
        && arbor_core::title::parse_title_slot(line).is_some()
}

/// The hashes of `lines`, the first of which is line `first` of its copy (line 0, a title
/// slot, hashes as [`SLOT_HASH`]).
pub(crate) fn hashes_of<L: AsRef<[u8]>>(lines: &[L], first: u64) -> Vec<Hash> {
    lines
        .iter()
        .map(AsRef::as_ref)
        .enumerate()
        .map(|(i, l)| {
            if first + i as u64 == 0 && is_slot(l) {
                SLOT_HASH
            } else {
                line_hash(l)
            }
        })
        .collect()
}

/// Of two title slots, the one set last (omp writes the rename's time as `updatedAt`: the
/// latest `title_change` wins); equal times: the larger bytes, so both sides choose the same.
pub(crate) fn later_slot<'a>(a: &'a [u8], b: &'a [u8]) -> &'a [u8] {
    let at = |l: &[u8]| arbor_core::title::parse_title_slot(l).map(|t| t.updated_at);
    match at(a).cmp(&at(b)) {
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
        std::cmp::Ordering::Equal => a.max(b),
    }
}

/// A short digest of the name a store lists for a session (what a title pushed changes).
pub(crate) fn name_digest(name: Option<&str>) -> u64 {
    name.map_or(0, |n| line_hash(n.as_bytes()) as u64 | 1)
}

pub(crate) fn bytes_of(lines: &[Vec<u8>]) -> u64 {
    lines.iter().map(|l| l.len() as u64 + 1).sum()
}

pub(crate) fn joined<'a>(lines: impl IntoIterator<Item = &'a Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// How the two copies of a session compare.
pub(crate) struct Plan {
    pub(crate) state: State,
    pub(crate) note: Option<String>,
    /// What the copies agreed on (checked), and the shared copy after it.
    pub(crate) agreed: Agreed,
    pub(crate) tail: Vec<Vec<u8>>,
    /// Indices (in the local file) of the lines the shared copy lacks, in file order.
    pub(crate) local_new: Vec<usize>,
    /// Indices (in `tail`) of the lines this copy lacks, in the shared order.
    pub(crate) incoming: Vec<usize>,
}

impl Plan {
    pub(crate) fn shared_len(&self) -> u64 {
        self.agreed.shared + self.tail.len() as u64
    }
    pub(crate) fn shared_bytes(&self) -> u64 {
        self.agreed.shared_bytes + bytes_of(&self.tail)
    }
}

/// The agreed state of the cursor, if it still holds: the local file still starts with lines
/// of its digest, the shared copy (the listing's `s`) with lines of its size. Then the
/// shared copy from there.
pub(crate) fn agreed_by_cursor(
    remote: &dyn SessionStore,
    id: &str,
    hashes: &[Hash],
    s: &StoredSession,
    cursor: Option<&Cursor>,
) -> Result<Option<(Agreed, Lines)>, BackendError> {
    let Some(a) = cursor.map(|c| c.agreed) else {
        return Ok(None);
    };
    let Ok(local) = usize::try_from(a.local) else {
        return Ok(None);
    };
    if local > hashes.len() || a.shared > s.lines || digest(&hashes[..local]) != a.digest {
        return Ok(None);
    }
    let tail = remote.read(id, a.shared)?;
    // The listing and the read agree on the length (nobody appended in between), and the
    // shared copy before the tail is as long as when agreed.
    let ok = a.shared + tail.len() as u64 == s.lines && a.shared_bytes + bytes_of(&tail) == s.bytes;
    Ok(ok.then_some((a, tail)))
}

/// The shared copy compared whole with the local `lines` as it streams in
/// ([`SessionStore::read_into`]): while its lines equal the local ones they are only counted
/// (the agreed prefix), from the first that differs on they are kept (the tail). What it holds
/// is the tail and at most one line in pieces, never the prefix: a conflict or a stale cursor
/// on a large session does not hold a second copy of it.
pub(crate) struct WholeCompare<'a> {
    local: &'a [Vec<u8>],
    /// Lines agreed so far, and their bytes (newlines included).
    agreed: usize,
    agreed_bytes: u64,
    /// The lines from the first that differs on.
    tail: Lines,
    /// A line whose newline has not come yet.
    partial: Vec<u8>,
}

impl<'a> WholeCompare<'a> {
    pub(crate) fn new(local: &'a [Vec<u8>]) -> WholeCompare<'a> {
        WholeCompare {
            local,
            agreed: 0,
            agreed_bytes: 0,
            tail: Vec::new(),
            partial: Vec::new(),
        }
    }

    fn line(&mut self, line: &[u8]) {
        if self.tail.is_empty() && self.local.get(self.agreed).map(Vec::as_slice) == Some(line) {
            self.agreed += 1;
            self.agreed_bytes += line.len() as u64 + 1;
        } else {
            self.tail.push(line.to_vec());
        }
    }

    /// The lines agreed, their bytes, and the tail (a last line without its newline counts as
    /// a line, as [`SessionStore::read`] reads it).
    pub(crate) fn finish(mut self) -> (usize, u64, Lines) {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last);
        }
        (self.agreed, self.agreed_bytes, self.tail)
    }
}

impl std::io::Write for WholeCompare<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                self.line(&rest[..i]);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&rest[..i]);
                self.line(&line);
            }
            rest = &rest[i + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The comparison of the local lines (`lines`, their `hashes`) with the shared copy `s`.
pub(crate) fn compare(
    remote: &dyn SessionStore,
    id: &str,
    lines: &[Vec<u8>],
    hashes: &[Hash],
    s: &StoredSession,
    cursor: Option<&Cursor>,
) -> Result<Plan, BackendError> {
    let (agreed, tail) = match agreed_by_cursor(remote, id, hashes, s, cursor)? {
        Some(x) => x,
        None => {
            // Compared whole: what both start with is agreed. Streamed: the shared lines that
            // match the local ones are only counted, the rest (the tail) kept.
            let mut whole = WholeCompare::new(lines);
            remote.read_into(id, 0, &mut whole)?;
            let (k, shared_bytes, tail) = whole.finish();
            (
                Agreed {
                    local: k as u64,
                    shared: k as u64,
                    shared_bytes,
                    digest: digest(&hashes[..k]),
                },
                tail,
            )
        }
    };
    let from = usize::try_from(agreed.local).unwrap_or(usize::MAX);
    let tail_hashes = hashes_of(&tail, agreed.shared);
    let in_tail: HashSet<Hash> = tail_hashes.iter().copied().collect();
    let local_new: Vec<usize> = (from..lines.len())
        .filter(|i| !in_tail.contains(&hashes[*i]))
        .collect();
    let incoming: Vec<usize> = if tail.is_empty() {
        Vec::new()
    } else {
        let here: HashSet<Hash> = hashes.iter().copied().collect();
        (0..tail.len())
            .filter(|j| !here.contains(&tail_hashes[*j]))
            .collect()
    };
    let mut plan = Plan {
        state: State::InSync,
        note: None,
        agreed,
        tail,
        local_new,
        incoming,
    };
    let conflict = |plan: &mut Plan, why: String| {
        plan.state = State::Conflict {
            local: lines.len() as u64,
            remote: plan.shared_len(),
            common: plan.agreed.local,
        };
        plan.note = Some(format!(
            "{why}; resolve with `arbor sync pull --fork-on-conflict` (keeps the shared copy as \
             a fork here) or by removing one of the two copies"
        ));
    };
    if plan.incoming.is_empty() && plan.local_new.is_empty() {
        return Ok(plan);
    }
    // The same id with other bytes, on either side.
    if !plan.incoming.is_empty() || !plan.local_new.is_empty() {
        let mut ids_here: HashMap<String, usize> = HashMap::new();
        for (i, l) in lines.iter().enumerate() {
            if let Some(e) = arbor_core::entry::extract(l).id {
                ids_here.entry(e).or_insert(i);
            }
        }
        for &j in &plan.incoming {
            let x = arbor_core::entry::extract(&plan.tail[j]);
            if x.etype.as_deref() == Some("session") {
                continue;
            }
            if let Some(e) = x.id {
                if let Some(i) = ids_here.get(&e) {
                    let why = format!(
                        "entry {e} is line {} here and line {} in the shared copy, with other \
                         bytes",
                        i + 1,
                        plan.agreed.shared + j as u64 + 1
                    );
                    conflict(&mut plan, why);
                    return Ok(plan);
                }
            }
        }
    }
    let both = !plan.incoming.is_empty() && !plan.local_new.is_empty();
    if both {
        // Lines without an id cannot be merged by id: the prefix rule.
        let first_bare = plan
            .local_new
            .iter()
            .map(|&i| (&lines[i], i as u64 + 1, "here"))
            .chain(
                plan.incoming
                    .iter()
                    .map(|&j| (&plan.tail[j], plan.agreed.shared + j as u64 + 1, "shared")),
            )
            .find(|(l, _, _)| {
                let x = arbor_core::entry::extract(l);
                x.id.is_none() || x.etype.as_deref() == Some("session")
            });
        if let Some((_, n, side)) = first_bare {
            let why = format!(
                "both sides changed since they agreed, and line {n} ({side}) has no entry id \
                 (a header, a v1 entry, an omp line without id): such lines merge only when one side \
                 has nothing new"
            );
            conflict(&mut plan, why);
            return Ok(plan);
        }
    }
    plan.state = match (plan.local_new.len() as u64, plan.incoming.len() as u64) {
        (0, 0) => State::InSync,
        (n, 0) => State::LocalAhead(n),
        (0, m) => State::RemoteAhead(m),
        (n, m) => State::Diverged { here: n, shared: m },
    };
    Ok(plan)
}

/// The agreed state after an operation: the longest prefix of the local lines (`final_hashes`,
/// as they are now) made of agreed lines or lines of the shared tail, against the longest
/// prefix of the shared tail (`tail_hashes`, as it is now) made of lines here, if the two hold
/// the same lines; else what was agreed before.
pub(crate) fn advance(
    old: Agreed,
    old_local: &[Hash],
    final_hashes: &[Hash],
    tail: &[Vec<u8>],
    tail_hashes: &[Hash],
) -> Agreed {
    let here: HashSet<Hash> = final_hashes.iter().copied().collect();
    let j = tail_hashes.iter().take_while(|h| here.contains(h)).count();
    let known: HashSet<Hash> = old_local
        .iter()
        .chain(tail_hashes[..j].iter())
        .copied()
        .collect();
    let x = final_hashes
        .iter()
        .take_while(|h| known.contains(h))
        .count();
    let d = digest(&final_hashes[..x]);
    if d == old.digest.wrapping_add(digest(&tail_hashes[..j])) {
        Agreed {
            local: x as u64,
            shared: old.shared + j as u64,
            shared_bytes: old.shared_bytes + bytes_of(&tail[..j]),
            digest: d,
        }
    } else {
        old
    }
}

/// Which way blobs go: a push retries the blobs the store lacked, a pull those this machine
/// lacked, a status looks at both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    Push,
    Pull,
    Status,
}

/// Whether nothing changed on either side since both whole copies last agreed (and no blob
/// waits to go `way`).
pub(crate) fn settled(
    c: Option<&Cursor>,
    stat: Option<(u64, i128)>,
    s: &StoredSession,
    way: Way,
) -> bool {
    c.is_some_and(|c| {
        c.settled
            && c.stamp.is_some()
            && c.stamp == stat
            && c.seen == (s.lines, s.bytes, name_digest(s.meta.name.as_deref()))
            && (way == Way::Pull || c.pending.is_empty())
            && (way == Way::Push || c.pending_here.is_empty())
            && c.resolved.is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::WholeCompare;
    use std::io::Write;

    /// The streamed comparison gives what splitting the whole copy did (the common prefix,
    /// its bytes, the rest), however the stream is cut: pieces of every size from 1 byte, a
    /// last line without its newline, an empty copy, a copy that is a prefix of the file.
    #[test]
    fn the_streamed_whole_comparison_is_the_split_one() {
        let local: Vec<Vec<u8>> = ["h", "a", "bb", "", "c"]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        for shared in [
            &b"h\na\nbb\n\nc\n"[..],
            b"h\na\nX\n\nc\nd\n",
            b"h\na\nbb\n\nc\nd",
            b"",
            b"h\na\n",
            b"Z\n",
            b"h\na\nbb\n\n",
        ] {
            let all: Vec<Vec<u8>> = if shared.is_empty() {
                Vec::new()
            } else {
                let body = shared.strip_suffix(b"\n").unwrap_or(shared);
                body.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect()
            };
            let k = all.iter().zip(&local).take_while(|(a, b)| a == b).count();
            let want = (
                k,
                all[..k].iter().map(|l| l.len() as u64 + 1).sum::<u64>(),
                all[k..].to_vec(),
            );
            for piece in 1..=shared.len().max(1) {
                let mut w = WholeCompare::new(&local);
                for chunk in shared.chunks(piece) {
                    w.write_all(chunk).expect("write");
                }
                assert_eq!(w.finish(), want, "{shared:?} in pieces of {piece}");
            }
        }
    }
}
