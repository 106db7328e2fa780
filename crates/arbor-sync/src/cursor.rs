//! The cursor file of one shared store (`<agent dir>/arbor/sync-*.tsv`): per session, what
//! the two sides agree on ([`Agreed`]) and what the last sync saw, read and written whole.
use crate::compare::Hash;
use crate::report::SyncError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the two sides agree on: the first `local` lines of the file and the first `shared`
/// lines of the shared copy hold the same lines (`digest`), maybe in another order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Agreed {
    pub(crate) local: u64,
    pub(crate) shared: u64,
    /// Bytes of the shared copy's first `shared` lines, newlines included.
    pub(crate) shared_bytes: u64,
    pub(crate) digest: Hash,
}

/// The sync state of one session with one shared store (see the crate documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Cursor {
    /// The local file it was.
    pub(crate) path: Option<PathBuf>,
    /// The file's size and modification time when it was last read or written, if it held
    /// exactly those lines then.
    pub(crate) stamp: Option<(u64, i128)>,
    pub(crate) agreed: Agreed,
    /// The shared copy's lines and bytes when last compared.
    /// ... and the digest of the name the store lists (a title pushed changes it).
    pub(crate) seen: (u64, u64, u64),
    /// Both whole copies agreed at `stamp` and `seen`: unchanged since, nothing is read.
    pub(crate) settled: bool,
    /// A conflict resolved by a fork against the shared copy of these lines and bytes.
    pub(crate) resolved: Option<(u64, u64)>,
    /// Blobs the session names that the shared store lacked: each push tries again.
    pub(crate) pending: Vec<String>,
    /// Blobs the session names that this machine lacked: each pull tries again.
    pub(crate) pending_here: Vec<String>,
}

/// The blobs still missing on each side by the last sync: (the shared store's, this
/// machine's); none without a cursor. A push retries the first, a pull the second.
pub(crate) fn pending_blobs(cursor: Option<&Cursor>) -> (Vec<String>, Vec<String>) {
    cursor.map_or_else(Default::default, |c| {
        (c.pending.clone(), c.pending_here.clone())
    })
}

const CURSOR_MAGIC: &str = "arbor sync cursor 2";

pub(crate) fn load_cursors(path: &Path) -> HashMap<String, Cursor> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    let mut lines = text.lines();
    // Another format (an older arbor's guesses from stat): not trusted, the copies are
    // compared whole once.
    if lines.next() != Some(CURSOR_MAGIC) {
        return HashMap::new();
    }
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != 14 {
                return None;
            }
            let hashes = |s: &str| -> Vec<String> {
                s.split(',')
                    .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .map(str::to_string)
                    .collect()
            };
            let pair = |s: &str| -> Option<(u64, u64)> {
                let (a, b) = s.split_once(':')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            };
            let stamp = match (f[2].parse::<u64>(), f[3].parse::<i128>()) {
                (Ok(s), Ok(m)) => Some((s, m)),
                _ => None,
            };
            let c = Cursor {
                path: Some(f[1]).filter(|p| !p.is_empty()).map(PathBuf::from),
                stamp,
                agreed: Agreed {
                    local: f[4].parse().ok()?,
                    shared: f[5].parse().ok()?,
                    shared_bytes: f[6].parse().ok()?,
                    digest: Hash::from_str_radix(f[7], 16).ok()?,
                },
                seen: {
                    let (l, rest) = f[8].split_once(':')?;
                    let (b, n) = rest.split_once(':')?;
                    (l.parse().ok()?, b.parse().ok()?, n.parse().ok()?)
                },
                settled: f[9] == "1",
                resolved: pair(f[10]),
                pending: hashes(f[11]),
                pending_here: hashes(f[12]),
            };
            Some((f[0].to_string(), c)).filter(|_| f[13] == "end")
        })
        .collect()
}

pub(crate) fn save_cursors(
    path: &Path,
    cursors: &HashMap<String, Cursor>,
) -> Result<(), SyncError> {
    let mut ids: Vec<&String> = cursors.keys().collect();
    ids.sort();
    let mut text = format!("{CURSOR_MAGIC}\n");
    let list = |hashes: &[String]| {
        if hashes.is_empty() {
            "-".to_string()
        } else {
            hashes.join(",")
        }
    };
    for id in ids {
        let c = &cursors[id];
        // A path that cannot be one field of the line is left out (its header is read).
        let path = c
            .path
            .as_ref()
            .and_then(|p| p.to_str())
            .filter(|p| !p.contains(['\t', '\n', '\r']))
            .unwrap_or("");
        let (size, mtime) = c
            .stamp
            .map_or(("-".to_string(), "-".to_string()), |(s, m)| {
                (s.to_string(), m.to_string())
            });
        let a = c.agreed;
        text.push_str(&format!(
            "{id}\t{path}\t{size}\t{mtime}\t{}\t{}\t{}\t{:032x}\t{}:{}:{}\t{}\t{}\t{}\t{}\tend\n",
            a.local,
            a.shared,
            a.shared_bytes,
            a.digest,
            c.seen.0,
            c.seen.1,
            c.seen.2,
            u8::from(c.settled),
            c.resolved
                .map_or("-".to_string(), |(l, b)| format!("{l}:{b}")),
            list(&c.pending),
            list(&c.pending_here),
        ));
    }
    let err = |source| SyncError::Cursor {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        arbor_store::create_dir_private(dir).map_err(err)?;
    }
    arbor_store::atomic_write(path, &[text.as_bytes()]).map_err(err)
}
