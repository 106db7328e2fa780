//! Migrations v1 → v2 → v3, with pi's semantics, as byte splices.
//!
//! * v1 → v2: every entry gets an 8-hex `id` and a `parentId` chaining it to the previous
//!   line (the first is `null`); a compaction's `firstKeptEntryIndex` (an index into the lines
//!   *including* the header) becomes `firstKeptEntryId`.
//! * v2 → v3: message role `hookMessage` becomes `custom`.
//! * The header gets `"version":3` (appended as the last key in a v1 header, replaced in place
//!   in a v2 one).
//!
//! Unlike pi, which re-serializes every line, only the members a migration changes are
//! touched: every other byte of every line stays as it was (numbers, escapes, key order).
//! New ids are derived from the header bytes, so every reader computes the same migrated view
//! and a later writer writes exactly that view; they are checked for collisions against every
//! id in the file (pi's migration never fills its collision set).
use crate::entry::{parse_fields, Entry, EntryType, Fields, LineRef, Role};
use std::collections::HashSet;

/// What a migration changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Migration {
    /// The version the file was written in (1 or 2).
    pub from_version: u32,
    /// 1-based line numbers of the lines whose bytes changed (header included).
    pub changed_lines: Vec<usize>,
}

/// The version pi migrates a file from: `header.version ?? 1` compared with JS coercion
/// (`version >= 3`, `< 2`, `< 3`), so `"3"` and `[3]` are 3, `"2"` is 2, `true`, `null` and a
/// missing member are 1, and a value that is NaN as a number (`{}`, `"x"`, `[2,3]`) passes none
/// of the comparisons: nothing is migrated (returned as 3).
pub fn header_version(line: &[u8], fields: &Fields) -> u32 {
    let v = match fields.get(line, "version") {
        None | Some((_, crate::json::ValueKind::Null)) => 1.0,
        raw => crate::js::to_number_raw(raw),
    };
    if v < 2.0 {
        1
    } else if v < 3.0 {
        2
    } else {
        3
    }
}

/// Deterministic 8-hex id generator (splitmix64 seeded from the header bytes).
#[derive(Debug, Clone)]
struct IdGen {
    state: u64,
    used: HashSet<String>,
}

impl IdGen {
    fn next(&mut self) -> String {
        loop {
            self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let id = format!("{:08x}", (z >> 32) as u32);
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Returns `line` with member `key` set to the raw JSON `value`: replaced in place when the
/// key exists (the last duplicate), otherwise appended as the last member.
pub fn set_member(line: &[u8], fields: &Fields, key: &str, value: &[u8]) -> Vec<u8> {
    if let Some(r) = fields.range(line, key) {
        let mut out = Vec::with_capacity(line.len() + value.len());
        out.extend_from_slice(&line[..r.start]);
        out.extend_from_slice(value);
        out.extend_from_slice(&line[r.end..]);
        return out;
    }
    let close = line.iter().rposition(|&b| b == b'}').unwrap_or(line.len());
    let mut out = Vec::with_capacity(line.len() + key.len() + value.len() + 4);
    out.extend_from_slice(&line[..close]);
    if !fields.members.is_empty() {
        out.push(b',');
    }
    crate::json::write_str_escaped(key, &mut out);
    out.push(b':');
    out.extend_from_slice(value);
    out.extend_from_slice(&line[close..]);
    out
}

/// Returns `line` without any member named `key` (and without the comma that separated it).
pub fn remove_member(line: &[u8], fields: &Fields, key: &str) -> Vec<u8> {
    let ms = &fields.members;
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for (i, m) in ms.iter().enumerate() {
        if !crate::entry::key_is(line, &m.key, key) {
            continue;
        }
        let key_start = m.key.start.saturating_sub(1); // opening quote
        if i > 0 {
            cut.push((ms[i - 1].value.end, m.value.end));
        } else if let Some(next) = ms.get(1) {
            cut.push((key_start, next.key.start.saturating_sub(1)));
        } else {
            cut.push((key_start, m.value.end));
        }
    }
    let mut out = Vec::with_capacity(line.len());
    let mut pos = 0;
    for (a, b) in cut {
        if a >= pos {
            out.extend_from_slice(&line[pos..a]);
            pos = b;
        }
    }
    out.extend_from_slice(&line[pos..]);
    out
}

fn line_of<'a>(data: &'a [u8], owned: &'a [Box<[u8]>], r: &LineRef) -> &'a [u8] {
    match *r {
        LineRef::Base { start, end } => &data[start..end],
        LineRef::Owned(i) => &owned[i],
    }
}

fn quoted(id: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(id.len() + 2);
    crate::json::write_str_escaped(id, &mut v);
    v
}

/// Migrates `records` (every JSON object line of the file, the header first) in place:
/// changed lines get new bytes in `owned` and a fresh envelope.
/// The ids the v1 → v2 migration gives a v1 file's entries, in order: what `show`, `tree`
/// and `fork --at` call them, and what a reader that does not migrate (the catalog's scan)
/// must call them too. Seeded from the header line's bytes; `existing` are the ids the file's
/// lines already carry (never given again). One id per entry that is a JSON object and not a
/// `session` line, in file order.
#[derive(Debug, Clone)]
pub struct V1Ids(IdGen);

impl V1Ids {
    /// The ids of the file whose header line is `header_line`.
    pub fn new(header_line: &[u8], existing: HashSet<String>) -> V1Ids {
        V1Ids(IdGen {
            state: fnv1a(header_line),
            used: existing,
        })
    }

    /// The next entry's id.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> String {
        self.0.next()
    }
}

pub(crate) fn migrate_records(
    data: &[u8],
    owned: &mut Vec<Box<[u8]>>,
    records: &mut [(usize, Entry)],
    from_version: u32,
) -> Migration {
    let header_bytes = records
        .first()
        .map(|(_, e)| line_of(data, owned, &e.line).to_vec())
        .unwrap_or_default();
    let mut gen = V1Ids::new(
        &header_bytes,
        records
            .iter()
            .filter_map(|(_, e)| e.id.as_deref().map(str::to_string))
            .collect(),
    );
    let mut changed = Vec::new();
    let mut new_ids: Vec<Option<String>> = vec![None; records.len()];
    let mut prev: Option<String> = None;
    for i in 0..records.len() {
        let (line_no, entry) = &records[i];
        let line_no = *line_no;
        if entry.non_object {
            // pi throws on these (it cannot set `id` on a number); arbor leaves them alone.
            continue;
        }
        let mut bytes = line_of(data, owned, &entry.line).to_vec();
        let original = bytes.clone();
        let mut fields = entry.fields.clone();
        let edit =
            |bytes: &mut Vec<u8>, fields: &mut Fields, f: &dyn Fn(&[u8], &Fields) -> Vec<u8>| {
                *bytes = f(bytes, fields);
                *fields = parse_fields(bytes).unwrap_or_default();
            };
        if entry.etype == EntryType::Session {
            edit(&mut bytes, &mut fields, &|l, f| {
                set_member(l, f, "version", b"3")
            });
        } else {
            if from_version < 2 {
                let id = gen.next();
                edit(&mut bytes, &mut fields, &|l, f| {
                    set_member(l, f, "id", &quoted(&id))
                });
                let parent = prev
                    .as_deref()
                    .map(quoted)
                    .unwrap_or_else(|| b"null".to_vec());
                edit(&mut bytes, &mut fields, &|l, f| {
                    set_member(l, f, "parentId", &parent)
                });
                new_ids[i] = Some(id.clone());
                prev = Some(id);
                if entry.etype == EntryType::Compaction
                    && fields.num(&bytes, "firstKeptEntryIndex").is_some()
                {
                    let idx = fields.num(&bytes, "firstKeptEntryIndex").unwrap_or(-1.0);
                    let target = if idx >= 0.0 && idx.fract() == 0.0 {
                        records.get(idx as usize)
                    } else {
                        None
                    };
                    let target_id = target.and_then(|(_, t)| {
                        if t.etype == EntryType::Session {
                            return None;
                        }
                        let k = idx as usize;
                        if k < i {
                            new_ids[k].clone()
                        } else {
                            t.id.as_deref().map(str::to_string)
                        }
                    });
                    edit(&mut bytes, &mut fields, &|l, f| {
                        remove_member(l, f, "firstKeptEntryIndex")
                    });
                    if let Some(t) = target_id {
                        edit(&mut bytes, &mut fields, &|l, f| {
                            set_member(l, f, "firstKeptEntryId", &quoted(&t))
                        });
                    }
                }
            }
            if entry.etype == EntryType::Message && entry.role == Some(Role::HookMessage) {
                let tmp = Entry::parse(&bytes, LineRef::Owned(0), 0);
                if let Ok(Some(r)) = tmp.map(|t| t.message.and_then(|m| m.range(&bytes, "role"))) {
                    let mut out = bytes[..r.start].to_vec();
                    out.extend_from_slice(b"\"custom\"");
                    out.extend_from_slice(&bytes[r.end..]);
                    bytes = out;
                }
            }
        }
        if bytes != original {
            changed.push(line_no);
            owned.push(bytes.into_boxed_slice());
            let idx = owned.len() - 1;
            let line = &owned[idx];
            if let Ok(e) = Entry::parse(line, LineRef::Owned(idx), line_no) {
                records[i].1 = e;
            }
        }
    }
    Migration {
        from_version,
        changed_lines: changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(line: &[u8]) -> Fields {
        parse_fields(line).expect("object")
    }

    #[test]
    fn set_and_remove_members_splice_bytes() {
        let l = br#"{"type":"x","a":1.0,"b":"\u00e9"}"#;
        assert_eq!(
            set_member(l, &f(l), "id", br#""ab""#),
            br#"{"type":"x","a":1.0,"b":"\u00e9","id":"ab"}"#
        );
        assert_eq!(
            set_member(l, &f(l), "a", b"2"),
            br#"{"type":"x","a":2,"b":"\u00e9"}"#
        );
        assert_eq!(
            remove_member(l, &f(l), "a"),
            br#"{"type":"x","b":"\u00e9"}"#
        );
        assert_eq!(
            remove_member(l, &f(l), "type"),
            br#"{"a":1.0,"b":"\u00e9"}"#
        );
        let one = br#"{"a":1}"#;
        assert_eq!(remove_member(one, &f(one), "a"), b"{}");
        let empty = b"{}";
        assert_eq!(set_member(empty, &f(empty), "v", b"3"), br#"{"v":3}"#);
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn header_version_coerces_as_js() {
        let v = |val: &str| {
            let line = format!(r#"{{"type":"session","version":{val},"id":"s"}}"#);
            let f = parse_fields(line.as_bytes()).expect("fields");
            header_version(line.as_bytes(), &f)
        };
        for (val, want) in [
            ("3", 3),
            (r#""3""#, 3),
            ("[3]", 3),
            (r#""2""#, 2),
            (r#"" 2 ""#, 2),
            (r#""0x3""#, 3),
            ("{}", 3),
            (r#""x""#, 3),
            ("[2,3]", 3),
            ("true", 1),
            ("null", 1),
            (r#""""#, 1),
            ("[]", 1),
            ("2.5", 2),
            (r#""Infinity""#, 3),
            (r#""inf""#, 3),
        ] {
            assert_eq!(v(val), want, "version {val}");
        }
    }
}
