//! The sync itself: push, pull and status, the cursor file, the comparison and the merge
//! (the rules are the crate documentation).
use arbor_store::backend::files::FileStore;
use arbor_store::backend::sync_support::{self, Snapshot, Written};
use arbor_store::backend::{BackendError, SessionMeta, SessionStore, StoredSession};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cursor::{load_cursors, save_cursors, Agreed, Cursor};

/// What a session is, between here and the shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// The same lines on both sides.
    InSync,
    /// Only here (push creates it there).
    LocalOnly,
    /// Only there (pull writes it here).
    RemoteOnly,
    /// Here has `n` lines the shared copy lacks.
    LocalAhead(u64),
    /// There are `n` lines this copy lacks.
    RemoteAhead(u64),
    /// Both sides added entries since they agreed (the session branched): push sends
    /// `here`, pull merges `shared` in.
    Diverged {
        /// Lines only here.
        here: u64,
        /// Lines only there.
        shared: u64,
    },
    /// A conflict resolved earlier by a fork (`pull --fork-on-conflict`): the shared copy is
    /// kept here as another session, this one stays here only. Reported again when the
    /// shared copy changes.
    Resolved,
    /// A local session file or directory that could not be read (the row's `path`, its
    /// `note` why): not synced, and `arbor sync` exits with status 1.
    Unreadable,
    /// Both changed in a way that cannot be merged (`local` and `remote` lines, `common`
    /// agreed): the row's note says which line and why.
    Conflict {
        /// Lines here.
        local: u64,
        /// Lines there.
        remote: u64,
        /// Lines both start with (agreed).
        common: u64,
    },
}

/// One session's line in a report.
#[derive(Debug, Clone)]
pub struct Row {
    /// The session id.
    pub id: String,
    /// The local file, if any.
    pub path: Option<PathBuf>,
    /// The state before the operation.
    pub state: State,
    /// Lines sent (push) or written (pull).
    pub moved: u64,
    /// Bytes of those lines.
    pub bytes: u64,
    /// What was done about it, when not just `moved` lines (a fork written, a refusal, a
    /// conflict's first difference).
    pub note: Option<String>,
    /// Left undone: a conflict (without a fork kept), a writer in the way, a copy that moved
    /// while syncing, a session that failed. `arbor sync` exits with status 1 then.
    pub unresolved: bool,
    /// omp blobs the moved lines name that were sent (push) or written here (pull).
    pub blobs: u64,
    /// Blobs the session names that the giving side does not hold (the lines moved without
    /// them; tried again on the next sync).
    pub missing_blobs: Vec<String>,
}

impl Row {
    fn new(id: String, path: Option<PathBuf>, state: State) -> Row {
        Row {
            id,
            path,
            state,
            moved: 0,
            bytes: 0,
            note: None,
            unresolved: false,
            blobs: 0,
            missing_blobs: Vec::new(),
        }
    }
}

/// Why a sync failed as a whole (a session's own trouble is a row's note instead).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The shared or the local store failed.
    #[error(transparent)]
    Store(#[from] BackendError),
    /// The cursor file could not be written.
    #[error("{path}: {source}")]
    Cursor {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Where this machine's sessions are, and how a pull places them.
#[derive(Debug, Clone)]
pub struct Local {
    /// pi's agent directory (`~/.pi/agent`).
    pub pi: FileStore,
    /// omp's agent directory (`~/.omp/agent`).
    pub omp: FileStore,
    /// `--map-cwd FROM=TO`: a shared session whose cwd starts with FROM is placed in TO's
    /// project directory here (its bytes, the header's cwd included, are not changed).
    pub map_cwd: Vec<(String, String)>,
    /// The cursor file of this shared store.
    pub cursor_file: PathBuf,
    /// This machine's name, recorded with what it pushes.
    pub machine: String,
}

/// Lines, each without its newline.
type Lines = Vec<Vec<u8>>;

/// One line's hash, and the order-independent digest of a set of lines (the wrapping sum of
/// their hashes: the same lines in any order give the same digest).
pub(crate) type Hash = u128;

fn line_hash(line: &[u8]) -> Hash {
    let d = Sha256::digest(line);
    let mut first = [0u8; 16];
    first.copy_from_slice(&d[..16]);
    u128::from_le_bytes(first)
}

fn digest(hashes: &[Hash]) -> Hash {
    hashes.iter().fold(0, |a, h| a.wrapping_add(*h))
}

/// What stands for omp's title slot (an omp file's first line, rewritten in place by a
/// rename) in comparisons: two slots are the same line whatever title they hold; which title
/// wins is decided apart ([`later_slot`]).
const SLOT_HASH: Hash = 0x7469_746c_6520_736c_6f74_2076_3120_0001;

/// Whether `line` (without its newline) is omp's fixed-size title slot.
fn is_slot(line: &[u8]) -> bool {
    line.len() + 1 == arbor_core::title::SESSION_TITLE_SLOT_BYTES
        && arbor_core::title::parse_title_slot(line).is_some()
}

/// The hashes of `lines`, the first of which is line `first` of its copy (line 0, a title
/// slot, hashes as [`SLOT_HASH`]).
fn hashes_of<L: AsRef<[u8]>>(lines: &[L], first: u64) -> Vec<Hash> {
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
fn later_slot<'a>(a: &'a [u8], b: &'a [u8]) -> &'a [u8] {
    let at = |l: &[u8]| arbor_core::title::parse_title_slot(l).map(|t| t.updated_at);
    match at(a).cmp(&at(b)) {
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
        std::cmp::Ordering::Equal => a.max(b),
    }
}

/// A short digest of the name a store lists for a session (what a title pushed changes).
fn name_digest(name: Option<&str>) -> u64 {
    name.map_or(0, |n| line_hash(n.as_bytes()) as u64 | 1)
}

fn stat(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), arbor_store::backend::sync_support::mtime_ns(&m)))
}

/// A local session file, as found at the start of a sync.
struct LocalFile<'l> {
    /// Its header's id (for a file unchanged since the last sync, the cursor's).
    id: String,
    path: PathBuf,
    /// The agent directory it is in.
    store: &'l FileStore,
    /// Its size and modification time when found.
    stat: Option<(u64, i128)>,
}

/// The local session files, and (as rows) the files and directories that could not be read
/// and the files whose id another file has already (each id is one session: the first file
/// in path order is synced, the others named).
fn local_sessions<'l>(
    local: &'l Local,
    cursors: &HashMap<String, Cursor>,
) -> (Vec<LocalFile<'l>>, Vec<Row>) {
    let known: HashMap<&Path, (&String, &Cursor)> = cursors
        .iter()
        .filter_map(|(id, c)| Some((c.path.as_deref()?, (id, c))))
        .collect();
    let mut out: Vec<LocalFile<'l>> = Vec::new();
    let mut first: HashMap<String, PathBuf> = HashMap::new();
    let mut rows = Vec::new();
    let same = local.pi.agent_dir() == local.omp.agent_dir();
    for store in [&local.pi, &local.omp]
        .into_iter()
        .take(if same { 1 } else { 2 })
    {
        let (files, dirs) = store.scan();
        for (dir, e) in dirs {
            rows.push(unreadable(String::new(), dir, &e));
        }
        for path in files {
            let stat = stat(&path);
            let remembered = match (known.get(path.as_path()), stat) {
                (Some((id, c)), Some(now)) if c.stamp == Some(now) => Some((*id).clone()),
                _ => None,
            };
            if let Some(id) = remembered.or_else(|| FileStore::id_of(&path)) {
                if let Some(other) = first.get(&id) {
                    let mut row = Row::new(id, Some(path), State::Unreadable);
                    row.note = Some(format!(
                        "not synced: {} has the same session id (one of the two is a copy; \
                         give it another id, e.g. with `arbor fork`, or remove it)",
                        other.display()
                    ));
                    row.unresolved = true;
                    rows.push(row);
                    continue;
                }
                first.insert(id.clone(), path.clone());
                out.push(LocalFile {
                    id,
                    path,
                    store,
                    stat,
                });
            } else if let Err(e) = arbor_store::open_regular(&path) {
                // (A readable file without a session header is not a session: passed over.)
                rows.push(unreadable(String::new(), path, &e));
            }
        }
    }
    (out, rows)
}

/// The row of a local file or directory that could not be read (`id` empty when unknown).
fn unreadable(id: String, path: PathBuf, why: &dyn std::fmt::Display) -> Row {
    let mut row = Row::new(id, Some(path), State::Unreadable);
    row.note = Some(format!("cannot be read, not synced: {why}"));
    row.unresolved = true;
    row
}

/// The row of a session whose sync failed (the others go on).
fn failed(mut row: Row, why: &dyn std::fmt::Display) -> Row {
    row.note = Some(format!("not synced: {why}"));
    row.unresolved = true;
    row
}

fn bytes_of(lines: &[Vec<u8>]) -> u64 {
    lines.iter().map(|l| l.len() as u64 + 1).sum()
}

fn joined<'a>(lines: impl IntoIterator<Item = &'a Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// How the two copies of a session compare.
struct Plan {
    state: State,
    note: Option<String>,
    /// What the copies agreed on (checked), and the shared copy after it.
    agreed: Agreed,
    tail: Vec<Vec<u8>>,
    /// Indices (in the local file) of the lines the shared copy lacks, in file order.
    local_new: Vec<usize>,
    /// Indices (in `tail`) of the lines this copy lacks, in the shared order.
    incoming: Vec<usize>,
}

impl Plan {
    fn shared_len(&self) -> u64 {
        self.agreed.shared + self.tail.len() as u64
    }
    fn shared_bytes(&self) -> u64 {
        self.agreed.shared_bytes + bytes_of(&self.tail)
    }
}

/// The agreed state of the cursor, if it still holds: the local file still starts with lines
/// of its digest, the shared copy (the listing's `s`) with lines of its size. Then the
/// shared copy from there.
fn agreed_by_cursor(
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

/// The comparison of the local lines (`lines`, their `hashes`) with the shared copy `s`.
fn compare(
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
            // Compared whole: what both start with is agreed.
            let mut all = remote.read(id, 0)?;
            let k = all.iter().zip(lines).take_while(|(a, b)| a == b).count();
            let tail = all.split_off(k);
            (
                Agreed {
                    local: k as u64,
                    shared: k as u64,
                    shared_bytes: bytes_of(&all),
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

/// Where the shared lines `incoming` go in the local `lines`: right before the last line, so
/// that pi (which resumes at the last line) stays on this machine's leaf; at the end when the
/// last line is not an entry (a header only), when an incoming line has no id, or when the
/// incoming entries continue from the last line (the conversation went on elsewhere).
/// Every incoming entry's parent must be an entry of either side (the order of lines in a
/// file is not always parents-first: a line pi wrote during a merge, a repair, another
/// writer); the caller writes `incoming` parents-first ([`parents_first`]). Returns the
/// position, or why not.
fn placement(lines: &[Vec<u8>], incoming: &[&Vec<u8>]) -> Result<usize, String> {
    let n = lines.len();
    let last = lines.last().map(|l| arbor_core::entry::extract(l));
    let incoming_x: Vec<_> = incoming
        .iter()
        .map(|l| arbor_core::entry::extract(l))
        .collect();
    let keep_leaf = match &last {
        Some(x) if x.etype.as_deref() != Some("session") => match &x.id {
            Some(leaf) => incoming_x
                .iter()
                .all(|e| e.id.is_some() && e.parent_id.as_deref() != Some(leaf.as_str())),
            None => false,
        },
        _ => false,
    };
    let at = if keep_leaf { n - 1 } else { n };
    let known: HashSet<String> = lines
        .iter()
        .filter_map(|l| arbor_core::entry::extract(l).id)
        .chain(incoming_x.iter().filter_map(|e| e.id.clone()))
        .collect();
    for e in &incoming_x {
        if let (Some(id), Some(p)) = (&e.id, &e.parent_id) {
            if !known.contains(p) {
                return Err(format!(
                    "entry {id} of the shared copy names parent {p}, which is on neither side"
                ));
            }
        }
    }
    Ok(at)
}

/// The indices of `lines` in an order where every entry comes after its parent when the
/// parent is among them; otherwise in their own order (stable; lines without an id, and
/// cycles, stay where they are met).
fn parents_first(lines: &[&Vec<u8>]) -> Vec<usize> {
    let xs: Vec<_> = lines
        .iter()
        .map(|l| arbor_core::entry::extract(l))
        .collect();
    let at: HashMap<&str, usize> = xs
        .iter()
        .enumerate()
        .filter_map(|(i, x)| x.id.as_deref().map(|id| (id, i)))
        .collect();
    let mut done = vec![false; lines.len()];
    let mut on_chain = vec![false; lines.len()];
    let mut out = Vec::with_capacity(lines.len());
    for i in 0..lines.len() {
        // The chain of not yet written ancestors of line i within `lines`, oldest last.
        let mut chain = Vec::new();
        let mut j = i;
        while !done[j] && !on_chain[j] {
            on_chain[j] = true;
            chain.push(j);
            match xs[j].parent_id.as_deref().and_then(|p| at.get(p)) {
                Some(&k) => j = k,
                None => break,
            }
        }
        for &k in chain.iter().rev() {
            done[k] = true;
            out.push(k);
        }
    }
    out
}

/// The agreed state after an operation: the longest prefix of the local lines (`final_hashes`,
/// as they are now) made of agreed lines or lines of the shared tail, against the longest
/// prefix of the shared tail (`tail_hashes`, as it is now) made of lines here, if the two hold
/// the same lines; else what was agreed before.
fn advance(
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

/// Tries again the blobs a session named that one side lacked (`from` gives, `to` takes):
/// the ones still missing on both.
fn retry_blobs(
    from: &dyn SessionStore,
    to: &dyn SessionStore,
    pending: &[String],
) -> Result<(u64, Vec<String>), BackendError> {
    copy_blobs(from, to, pending)
}

/// The pending blobs after a sync: those of `before` and `now` that `to` still lacks.
fn still_missing(
    to: &dyn SessionStore,
    before: &[String],
    now: &[String],
) -> Result<Vec<String>, BackendError> {
    let mut out = Vec::new();
    for h in before.iter().chain(now) {
        if !out.contains(h) && !to.has_blob(h)? {
            out.push(h.clone());
        }
    }
    Ok(out)
}

fn tool_of(lines: &[Vec<u8>]) -> &'static str {
    let header = arbor_core::header::locate(lines.iter().map(Vec::as_slice)).map(|(i, ..)| i);
    if header == Some(1) {
        "omp"
    } else {
        "pi"
    }
}
/// The blobs omp lines name (each once, in order of first mention); none for pi's.
fn named_blobs<'a>(tool: &str, lines: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
    if tool != "omp" {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    lines
        .into_iter()
        .flat_map(arbor_core::blobref::find_blob_hashes)
        .filter(|h| seen.insert(h.clone()))
        .collect()
}

/// Copies the blobs `hashes` from `from` to `to` where `to` lacks them, before the lines that
/// name them move (a session never names a blob its store lacks because of a sync). Returns
/// how many were copied, and the ones `from` does not hold either.
fn copy_blobs(
    from: &dyn SessionStore,
    to: &dyn SessionStore,
    hashes: &[String],
) -> Result<(u64, Vec<String>), BackendError> {
    let (mut copied, mut missing) = (0, Vec::new());
    for h in hashes {
        if to.has_blob(h)? {
            continue;
        }
        match from.get_blob(h)? {
            Some(bytes) => {
                to.put_blob(h, &bytes)?;
                copied += 1;
            }
            None => missing.push(h.clone()),
        }
    }
    Ok((copied, missing))
}

fn selected(ids: &[String], id: &str, path: Option<&Path>) -> bool {
    ids.is_empty()
        || ids.iter().any(|s| {
            s == id || id.starts_with(s.as_str()) || path.is_some_and(|p| p == Path::new(s))
        })
}

/// Sends what the shared store lacks: new sessions whole, the new lines of others (under
/// the shared copy's writer lease), each session in one transaction: a push killed halfway
/// leaves every session as it was or as it is here, never in between. Only sessions
/// selected by `ids` (ids, id prefixes or paths; empty: all). A session that fails is a row
/// (named, the rest is pushed).
///
/// # Errors
/// The shared store failing as a whole (its listing), or the cursor file.
pub fn push(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let shared: HashMap<String, StoredSession> = remote
        .list()?
        .into_iter()
        .map(|s| (s.meta.id.clone(), s))
        .collect();
    let (files, mut rows) = local_sessions(local, &cursors);
    for f in files {
        if !selected(ids, &f.id, Some(&f.path)) {
            continue;
        }
        let row = Row::new(f.id.clone(), Some(f.path.clone()), State::LocalOnly);
        let cursor = cursors.remove(&f.id);
        let (row, cursor) = match push_one(
            remote,
            local,
            &f,
            shared.get(&f.id),
            cursor.clone(),
            row.clone(),
        ) {
            Ok(x) => x,
            Err(e) => (failed(row, &e), cursor),
        };
        if let Some(c) = cursor {
            cursors.insert(f.id.clone(), c);
        }
        rows.push(row);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

/// Which way blobs go: a push retries the blobs the store lacked, a pull those this machine
/// lacked, a status looks at both.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Push,
    Pull,
    Status,
}

/// Whether nothing changed on either side since both whole copies last agreed (and no blob
/// waits to go `way`).
fn settled(c: Option<&Cursor>, stat: Option<(u64, i128)>, s: &StoredSession, way: Way) -> bool {
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

/// Whether a conflict with this shared copy was resolved by a fork.
fn resolved(c: Option<&Cursor>, s: &StoredSession) -> bool {
    c.is_some_and(|c| c.resolved == Some((s.lines, s.bytes)))
}

fn resolved_row(mut row: Row) -> Row {
    row.state = State::Resolved;
    row.note = Some(
        "a conflict resolved earlier: the shared copy is kept here as a fork, this copy is not \
         synced"
            .into(),
    );
    row
}

fn push_one(
    remote: &dyn SessionStore,
    local: &Local,
    f: &LocalFile<'_>,
    there: Option<&StoredSession>,
    cursor: Option<Cursor>,
    mut row: Row,
) -> Result<(Row, Option<Cursor>), SyncError> {
    let (id, path, here) = (&f.id, &f.path, f.store);
    let leftover = has_leftover(path);
    if leftover {
        // A merge's old file first: lines pi wrote to it belong in the file before a push.
        match sync_support::lock_session(path, Some(Duration::from_secs(10))) {
            Ok(mut lock) => {
                if let Err(e) = settle(&mut lock, &mut row) {
                    return Ok((failed(row, &e), cursor));
                }
            }
            Err(e) => return Ok((failed(row, &e), cursor)),
        }
    }
    if let Some(s) = there {
        // (The file's stamp was taken before a leftover was settled: not trusted then.)
        if !leftover && settled(cursor.as_ref(), f.stat, s, Way::Push) {
            let mut c = cursor;
            if let Some(c) = c.as_mut() {
                c.path = Some(path.clone());
            }
            row.state = State::InSync;
            return Ok((row, c));
        }
        if resolved(cursor.as_ref(), s) {
            return Ok((resolved_row(row), cursor));
        }
    }
    let snap = match sync_support::read_snapshot(path) {
        Ok(s) => s,
        Err(e) => return Ok((unreadable(id.clone(), path.clone(), &e), cursor)),
    };
    let lines = &snap.lines;
    let hashes = hashes_of(lines, 0);
    let tool = tool_of(lines);
    let pending = cursor
        .as_ref()
        .map(|c| c.pending.clone())
        .unwrap_or_default();
    let pending_here = cursor
        .as_ref()
        .map(|c| c.pending_here.clone())
        .unwrap_or_default();
    if !pending.is_empty() {
        row.blobs += retry_blobs(here, remote, &pending)?.0;
    }
    let Some(s) = there else {
        let header = arbor_core::header::locate(lines.iter().map(Vec::as_slice));
        let mut meta: SessionMeta = arbor_store::backend::meta_from_header(
            header.map(|(_, l, _)| l).unwrap_or_default(),
            tool,
        );
        meta.id = id.clone();
        meta.machine = Some(local.machine.clone());
        meta.source_path = Some(path.display().to_string());
        let hashes_b = named_blobs(tool, lines.iter().map(Vec::as_slice));
        let (n, missing) = copy_blobs(here, remote, &hashes_b)?;
        row.blobs += n;
        row.missing_blobs = missing;
        // One step: after a crash the session is there whole or not at all.
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        remote.create(&meta, &refs)?;
        row.moved = lines.len() as u64;
        row.bytes = bytes_of(lines);
        let all = digest(&hashes);
        let c = Cursor {
            path: Some(path.clone()),
            stamp: snap.stamp,
            agreed: Agreed {
                local: lines.len() as u64,
                shared: lines.len() as u64,
                shared_bytes: row.bytes,
                digest: all,
            },
            seen: (lines.len() as u64, row.bytes, name_digest(None)),
            settled: snap.stamp.is_some(),
            resolved: None,
            pending: still_missing(remote, &pending, &row.missing_blobs)?,
            pending_here,
        };
        return Ok((row, Some(c)));
    };
    let plan = compare(remote, id, lines, &hashes, s, cursor.as_ref())?;
    row.state = plan.state.clone();
    row.note = plan.note.clone();
    let mut tail = plan.tail.clone();
    match plan.state {
        State::Conflict { .. } => {
            row.unresolved = true;
            return Ok((row, cursor));
        }
        State::LocalAhead(_) | State::Diverged { .. } => {
            let new: Vec<&Vec<u8>> = plan.local_new.iter().map(|&i| &lines[i]).collect();
            let new: Vec<&Vec<u8>> = parents_first(&new).into_iter().map(|k| new[k]).collect();
            let mut w = match remote.writer(id, Some(Duration::from_secs(10))) {
                Ok(w) => w,
                Err(e @ BackendError::Busy { .. }) => {
                    row.note = Some(e.to_string());
                    row.unresolved = true;
                    return Ok((row, cursor));
                }
                Err(e) => return Err(e.into()),
            };
            if w.len() != plan.shared_len() {
                row.note = Some("the shared copy changed while pushing; run sync again".into());
                row.unresolved = true;
                return Ok((row, cursor));
            }
            let names = named_blobs(&s.meta.tool, new.iter().map(|l| l.as_slice()));
            let (n, missing) = copy_blobs(here, remote, &names)?;
            row.blobs += n;
            row.missing_blobs = missing;
            let refs: Vec<&[u8]> = new.iter().map(|l| l.as_slice()).collect();
            w.append(&refs)?;
            row.moved = new.len() as u64;
            row.bytes = new.iter().map(|l| l.len() as u64 + 1).sum();
            tail.extend(new.into_iter().cloned());
        }
        _ => {}
    }
    let mut name = name_digest(s.meta.name.as_deref());
    // omp's title: this file's slot set later than the shared copy's goes there (the whole
    // copy replaced in one step, the store's name set).
    if let Some(here0) = lines.first().filter(|l| is_slot(l)) {
        let there0 = match plan.tail.first() {
            Some(l) if plan.agreed.shared == 0 => Some(l.clone()),
            _ => remote.read_range(id, 0, 1)?.into_iter().next(),
        };
        if let Some(there0) = there0.filter(|t| is_slot(t) && t != here0) {
            if later_slot(here0, &there0) == here0.as_slice() {
                let known = plan.agreed.shared + tail.len() as u64;
                let mut w = remote.writer(id, Some(Duration::from_secs(10)))?;
                let mut all = remote.read(id, 0)?;
                let same = w.len() == known && all.len() as u64 == known;
                let first = match all.first_mut() {
                    Some(first) if same => first,
                    _ => {
                        row.note =
                            Some("the shared copy changed while pushing; run sync again".into());
                        row.unresolved = true;
                        return Ok((row, cursor));
                    }
                };
                *first = here0.clone();
                let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
                w.replace_all(&refs)?;
                drop(w);
                let title = arbor_core::title::parse_title_slot(here0)
                    .map(|t| t.title)
                    .unwrap_or_default();
                remote.set_name(id, &title)?;
                name = name_digest(Some(&title));
                row.note = Some(format!("title {title:?} sent (set here later)"));
            }
        }
    }
    let tail_hashes = hashes_of(&tail, plan.agreed.shared);
    let old_local = &hashes[..usize::try_from(plan.agreed.local).unwrap_or(0)];
    let agreed = advance(plan.agreed, old_local, &hashes, &tail, &tail_hashes);
    let seen = (
        plan.agreed.shared + tail.len() as u64,
        plan.agreed.shared_bytes + bytes_of(&tail),
        name,
    );
    let c = Cursor {
        path: Some(path.clone()),
        stamp: snap.stamp,
        agreed,
        seen,
        settled: snap.stamp.is_some()
            && agreed.local == lines.len() as u64
            && agreed.shared == seen.0,
        resolved: None,
        pending: still_missing(remote, &pending, &row.missing_blobs)?,
        pending_here,
    };
    Ok((row, Some(c)))
}

/// The local agent directory of a tool: omp's for `omp`, pi's for anything else.
fn store_of<'l>(local: &'l Local, tool: &str) -> &'l FileStore {
    if tool == "omp" {
        &local.omp
    } else {
        &local.pi
    }
}

/// Whether `id` is a session id arbor may put in a file name: pi's
/// [`check_session_id`](arbor_store::ids::check_session_id) (letters, digits, `.`, `_`, `-`,
/// a letter or digit at both ends: no `/`, never `.` or `..`), at most 128 bytes (a UUID is 36).
fn valid_session_id(id: &str) -> bool {
    id.len() <= 128 && arbor_store::ids::check_session_id(id).is_ok()
}

/// Whether `t` is a time exactly as pi and omp write it (`new Date().toISOString()`:
/// `2026-01-02T03:04:05.678Z`): it parses, and formats back to the same text.
fn valid_iso_time(t: &str) -> bool {
    arbor_core::time::parse_iso_ms(t)
        .is_some_and(|ms| arbor_core::time::format_iso_ms(ms as i64) == t)
}

/// Where a shared session goes here: its tool's agent directory, its (mapped) cwd's project
/// directory, and the file name it had where it was pushed from (when that is a plain session
/// file name), else pi's `<created>_<id>.jsonl`.
///
/// Everything in a store row is untrusted (a shared store may have been written by anyone
/// who can write to it): the name is built only from a checked id ([`valid_session_id`]) and
/// a checked time ([`valid_iso_time`]), and the result must be a file directly in a project
/// directory directly in the sessions directory. Otherwise the reason is returned, and
/// nothing is written for the row.
fn place(local: &Local, meta: &SessionMeta) -> Result<PathBuf, String> {
    if !valid_session_id(&meta.id) {
        return Err(format!(
            "refused: the shared store names it {:?}, which is not a session id",
            meta.id
        ));
    }
    let store = store_of(local, &meta.tool);
    let mut cwd = meta.cwd.clone();
    for (from, to) in &local.map_cwd {
        if let Some(rest) = cwd.strip_prefix(from.as_str()) {
            if rest.is_empty() || rest.starts_with('/') {
                cwd = format!("{to}{rest}");
                break;
            }
        }
    }
    let dialect = if meta.tool == "omp" {
        arbor_core::doc::Dialect::Omp
    } else {
        arbor_core::doc::Dialect::Pi
    };
    let root = arbor_store::paths::sessions_root(store.agent_dir());
    let dir = arbor_store::paths::default_session_dir(dialect, store.agent_dir(), &cwd);
    // The name it had where it was pushed from, when that is a plain session file name (its
    // last component only, not hidden, no control character).
    let name = meta
        .source_path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .filter(|n| {
            n.ends_with(".jsonl")
                && !n.starts_with('.')
                && n.len() <= 255
                && !n.contains('\\')
                && n.chars().all(|c| !c.is_control())
        })
        .map(str::to_string);
    let name = match name {
        Some(n) => n,
        None if valid_iso_time(&meta.created) => {
            format!(
                "{}_{}.jsonl",
                arbor_store::ids::file_timestamp(&meta.created),
                meta.id
            )
        }
        None => {
            return Err(format!(
            "refused: the shared store gives it the creation time {:?}, which is not an ISO time",
            meta.created
        ))
        }
    };
    let path = dir.join(&name);
    // Exactly <sessions>/<project directory>/<name>: two plain components below the root.
    let inside = path.strip_prefix(&root).is_ok_and(|rel| {
        let parts: Vec<_> = rel.components().collect();
        parts.len() == 2
            && parts
                .iter()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    if !inside {
        return Err(format!(
            "refused: its place here, {}, is not a file of a project directory in {}",
            path.display(),
            root.display()
        ));
    }
    Ok(path)
}

/// The id the session header among the first two lines of `bytes` names (omp's title slot may
/// come first).
fn header_id(bytes: &[u8]) -> Option<String> {
    let (_, line, fields) = arbor_core::header::locate(arbor_core::header::first_lines(bytes))?;
    fields.str(line, "id").map(|id| id.into_owned())
}

/// Writes here what only the shared store has: new sessions as files laid out as their tool
/// lays them out (byte-identical to what was pushed), the shared copy's new lines into
/// existing ones (under the local writer lock; merged when both sides added entries). A
/// conflict is reported; with `fork_on_conflict` the shared copy is also written as a fork
/// of the local session, once. A session that fails is a row (named, the rest is pulled).
///
/// # Errors
/// The shared store failing as a whole (its listing), or the cursor file.
pub fn pull(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
    fork_on_conflict: bool,
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let (files, mut rows) = local_sessions(local, &cursors);
    let here: HashMap<String, (PathBuf, Option<(u64, i128)>)> = files
        .into_iter()
        .map(|f| (f.id, (f.path, f.stat)))
        .collect();
    for s in remote.list()? {
        let id = s.meta.id.clone();
        let (path, found) = match here.get(&id) {
            Some((p, st)) => (Some(p.clone()), *st),
            None => (None, None),
        };
        if !selected(ids, &id, path.as_deref()) {
            continue;
        }
        let row = Row::new(id.clone(), path.clone(), State::RemoteOnly);
        let cursor = cursors.remove(&id);
        let result = match &path {
            None => pull_new(remote, local, &s, row.clone()),
            Some(p) => pull_into(
                remote,
                local,
                &s,
                p,
                found,
                cursor.clone(),
                fork_on_conflict,
                row.clone(),
            ),
        };
        let (row, cursor) = match result {
            Ok(x) => x,
            Err(e) => (failed(row, &e), cursor),
        };
        if let Some(c) = cursor {
            cursors.insert(id, c);
        }
        rows.push(row);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

/// A session only the shared store has: written as a new file.
fn pull_new(
    remote: &dyn SessionStore,
    local: &Local,
    s: &StoredSession,
    mut row: Row,
) -> Result<(Row, Option<Cursor>), SyncError> {
    let id = &s.meta.id;
    let target = match place(local, &s.meta) {
        Ok(t) => t,
        Err(why) => {
            row.note = Some(why);
            row.unresolved = true;
            return Ok((row, None));
        }
    };
    // Read into one buffer sized from the listing (growing it by doubling would hold up to
    // twice the session while it is copied); the size is the store's word, so only reserved
    // where the memory is to be had, and at most 4 GiB.
    let mut bytes = Vec::new();
    let _ = bytes.try_reserve_exact(usize::try_from(s.bytes.min(1 << 32)).unwrap_or(0));
    remote.read_into(id, 0, &mut bytes)?;
    if header_id(&bytes).as_deref() != Some(id.as_str()) {
        row.note = Some(format!(
            "refused: its lines are not session {id:?} (their header names {:?})",
            header_id(&bytes).unwrap_or_default()
        ));
        row.unresolved = true;
        return Ok((row, None));
    }
    let here = store_of(local, &s.meta.tool);
    let hashes = named_blobs(&s.meta.tool, bytes.split(|b| *b == b'\n'));
    (row.blobs, row.missing_blobs) = copy_blobs(remote, here, &hashes)?;
    if let Some(dir) = target.parent() {
        arbor_store::create_dir_private(dir).map_err(|e| BackendError::Db {
            store: "files".into(),
            message: format!("{}: {e}", dir.display()),
        })?;
    }
    // Another file by that name (perhaps this session, unreadable here) or another arbor
    // writer at it: kept, and this row left undone.
    if let Some(why) = write_new_session(&target, &bytes)? {
        row.note = Some(why);
        row.unresolved = true;
        return Ok((row, None));
    }
    // The lines as slices of what was read (no second copy of a large session).
    let lines: Vec<&[u8]> = match bytes.strip_suffix(b"\n") {
        Some(body) => body.split(|b| *b == b'\n').collect(),
        None => Vec::new(),
    };
    row.moved = lines.len() as u64;
    row.bytes = bytes.len() as u64;
    row.path = Some(target.clone());
    let hashes = hashes_of(&lines, 0);
    // The file was created here, exclusively, with these bytes: its stamp is theirs when it
    // is still exactly that long.
    let stamp = stat(&target).filter(|(size, _)| *size == bytes.len() as u64);
    let n = lines.len() as u64;
    let c = Cursor {
        path: Some(target),
        stamp,
        agreed: Agreed {
            local: n,
            shared: n,
            shared_bytes: row.bytes,
            digest: digest(&hashes),
        },
        seen: (n, row.bytes, name_digest(s.meta.name.as_deref())),
        settled: stamp.is_some() && (n, row.bytes) == (s.lines, s.bytes),
        resolved: None,
        pending: Vec::new(),
        pending_here: still_missing(here, &[], &row.missing_blobs)?,
    };
    Ok((row, Some(c)))
}

/// omp's title: the shared copy's slot, set later than this file's, is written over this
/// file's (in place, the 256 bytes at offset 0, as omp renames; under the lock). Whether it
/// wrote.
fn take_title(
    remote: &dyn SessionStore,
    id: &str,
    lock: &sync_support::SyncLock,
    lines: &[Vec<u8>],
    plan: &Plan,
    row: &mut Row,
) -> Result<bool, SyncError> {
    let Some(here0) = lines.first().filter(|l| is_slot(l)) else {
        return Ok(false);
    };
    let there0 = match plan.tail.first() {
        Some(l) if plan.agreed.shared == 0 => Some(l.clone()),
        _ => remote.read_range(id, 0, 1)?.into_iter().next(),
    };
    let Some(there0) = there0.filter(|t| is_slot(t) && t != here0) else {
        return Ok(false);
    };
    if later_slot(here0, &there0) != there0.as_slice() {
        return Ok(false);
    }
    let mut slot = there0.clone();
    slot.push(b'\n');
    let written = lock.write_title_slot(&slot).map_err(|e| BackendError::Db {
        store: "files".into(),
        message: format!("{}: {e}", lock.path().display()),
    })?;
    if written {
        let title = arbor_core::title::parse_title_slot(&there0)
            .map(|t| t.title)
            .unwrap_or_default();
        row.note = Some(format!(
            "title {title:?} taken from the shared copy (set there later)"
        ));
    }
    Ok(written)
}

/// Whether a merge left the old file of session `path` beside it
/// ([`sync_support::merge_sidecar_path`]; one `lstat`).
fn has_leftover(path: &Path) -> bool {
    std::fs::symlink_metadata(sync_support::merge_sidecar_path(path)).is_ok()
}

/// Settles a merge's old file ([`sync_support::SyncLock::settle_leftover`]), saying in `row`
/// what it did.
fn settle(lock: &mut sync_support::SyncLock, row: &mut Row) -> std::io::Result<()> {
    let left = lock.settle_leftover()?;
    let side = sync_support::merge_sidecar_path(lock.path());
    if let Some(why) = left.kept {
        row.note = Some(format!(
            "{} (the file before a merge) is kept: {why}; sync again",
            side.display()
        ));
    } else if left.copied > 0 {
        row.note = Some(format!(
            "{} bytes written to the file during an earlier merge were copied from {}",
            left.copied,
            side.display()
        ));
    }
    Ok(())
}

/// A session both sides have: the shared copy's new lines written into the local file,
/// under its writer lock.
#[allow(clippy::too_many_arguments)]
fn pull_into(
    remote: &dyn SessionStore,
    local: &Local,
    s: &StoredSession,
    path: &Path,
    found: Option<(u64, i128)>,
    cursor: Option<Cursor>,
    fork_on_conflict: bool,
    mut row: Row,
) -> Result<(Row, Option<Cursor>), SyncError> {
    let id = &s.meta.id;
    let leftover = has_leftover(path);
    if !leftover && settled(cursor.as_ref(), found, s, Way::Pull) {
        row.state = State::InSync;
        return Ok((row, cursor));
    }
    if resolved(cursor.as_ref(), s) {
        return Ok((resolved_row(row), cursor));
    }
    let store = store_of(local, &s.meta.tool);
    // (Blobs this machine lacked; those the store lacked are the push's.)
    let pending_there = cursor
        .as_ref()
        .map(|c| c.pending.clone())
        .unwrap_or_default();
    let pending = cursor
        .as_ref()
        .map(|c| c.pending_here.clone())
        .unwrap_or_default();
    if !pending.is_empty() {
        row.blobs += retry_blobs(remote, store, &pending)?.0;
    }
    let mut lock = match sync_support::lock_session(path, Some(Duration::from_secs(10))) {
        Ok(l) => l,
        Err(e @ arbor_store::lock::LockError::Busy { .. }) => {
            row.note = Some(e.to_string());
            row.unresolved = true;
            return Ok((row, cursor));
        }
        Err(arbor_store::lock::LockError::Io { source, .. }) => {
            return Ok((unreadable(id.clone(), path.to_path_buf(), &source), cursor));
        }
        // A refusal arbor-store may add later (LockError is non_exhaustive): as Busy.
        Err(e) => {
            row.note = Some(e.to_string());
            row.unresolved = true;
            return Ok((row, cursor));
        }
    };
    if leftover {
        if let Err(e) = settle(&mut lock, &mut row) {
            return Ok((failed(row, &e), cursor));
        }
    }
    let settled_note = row.note.clone();
    // pi takes no lock: a line it appends between the read and the write makes the write
    // refuse (the length moved), and the file is read again.
    for _ in 0..5 {
        let snap: Snapshot = match lock.read() {
            Ok(s) => s,
            Err(e) => return Ok((unreadable(id.clone(), path.to_path_buf(), &e), cursor)),
        };
        if snap.torn > 0 {
            row.note = Some(format!(
                "its last line is incomplete ({} bytes without a newline: being written?); \
                 nothing written, sync again",
                snap.torn
            ));
            row.unresolved = true;
            return Ok((row, cursor));
        }
        let lines = &snap.lines;
        let hashes = hashes_of(lines, 0);
        let plan = compare(remote, id, lines, &hashes, s, cursor.as_ref())?;
        row.state = plan.state.clone();
        row.note = plan.note.clone().or_else(|| settled_note.clone());
        let tail_hashes = hashes_of(&plan.tail, plan.agreed.shared);
        let old_local = &hashes[..usize::try_from(plan.agreed.local).unwrap_or(0)];
        let seen = (
            plan.shared_len(),
            plan.shared_bytes(),
            name_digest(s.meta.name.as_deref()),
        );
        let cursor_for =
            |final_hashes: &[Hash], stamp: Option<(u64, i128)>, pending_here: Vec<String>| {
                let agreed = advance(
                    plan.agreed,
                    old_local,
                    final_hashes,
                    &plan.tail,
                    &tail_hashes,
                );
                Cursor {
                    path: Some(path.to_path_buf()),
                    stamp,
                    agreed,
                    seen,
                    settled: stamp.is_some()
                        && agreed.local == final_hashes.len() as u64
                        && agreed.shared == seen.0,
                    resolved: None,
                    pending: pending_there.clone(),
                    pending_here,
                }
            };
        match plan.state {
            State::Conflict { .. } if fork_on_conflict => {
                let all = remote.read(id, 0)?;
                let names = named_blobs(&s.meta.tool, all.iter().map(Vec::as_slice));
                (row.blobs, row.missing_blobs) = copy_blobs(remote, store, &names)?;
                row.note = Some(fork_copy(&all, s, path)?);
                let mut c = cursor.unwrap_or_default();
                c.path = Some(path.to_path_buf());
                c.settled = false;
                c.resolved = Some((all.len() as u64, bytes_of(&all)));
                return Ok((row, Some(c)));
            }
            State::Conflict { .. } => {
                row.unresolved = true;
                return Ok((row, cursor));
            }
            State::RemoteAhead(_) | State::Diverged { .. } => {
                let inc: Vec<&Vec<u8>> = plan.incoming.iter().map(|&j| &plan.tail[j]).collect();
                // Written parents-first, whatever the shared copy's order.
                let order = parents_first(&inc);
                let inc: Vec<&Vec<u8>> = order.iter().map(|&k| inc[k]).collect();
                let at = match placement(lines, &inc) {
                    Ok(at) => at,
                    Err(why) => {
                        row.state = State::Conflict {
                            local: lines.len() as u64,
                            remote: plan.shared_len(),
                            common: plan.agreed.local,
                        };
                        row.note = Some(format!("{why}: not merged"));
                        row.unresolved = true;
                        return Ok((row, cursor));
                    }
                };
                let names = named_blobs(&s.meta.tool, inc.iter().map(|l| l.as_slice()));
                let (n, missing) = copy_blobs(remote, store, &names)?;
                let io = |e: std::io::Error| BackendError::Db {
                    store: "files".into(),
                    message: format!("{}: {e}", path.display()),
                };
                let written = if at == lines.len() {
                    lock.append_at(snap.complete_len, &joined(inc.iter().copied()))
                        .map_err(io)?
                } else {
                    let content = joined(
                        lines[..at]
                            .iter()
                            .chain(inc.iter().copied())
                            .chain(lines[at..].iter()),
                    );
                    lock.rewrite_at(snap.complete_len, &content).map_err(io)?
                };
                let (stamp, recovered, kept) = match written {
                    Written::Moved { .. } => continue,
                    Written::Done {
                        stamp,
                        recovered,
                        kept,
                    } => (stamp, recovered, kept),
                };
                row.blobs += n;
                row.missing_blobs = missing;
                row.moved = inc.len() as u64;
                row.bytes = inc.iter().map(|l| l.len() as u64 + 1).sum();
                if recovered > 0 {
                    row.note = Some(format!(
                        "{recovered} bytes appended here during the merge were kept after it"
                    ));
                }
                if let Some(why) = kept {
                    row.note = Some(format!(
                        "the file as it was before the merge stays as {} ({why}): lines written \
                         to it are copied by the next sync",
                        sync_support::merge_sidecar_path(lock.path()).display()
                    ));
                }
                let final_hashes: Vec<Hash> = hashes[..at]
                    .iter()
                    .copied()
                    .chain(order.iter().map(|&k| tail_hashes[plan.incoming[k]]))
                    .chain(hashes[at..].iter().copied())
                    .collect();
                let pending = still_missing(store, &pending, &row.missing_blobs)?;
                let stamp = match take_title(remote, id, &lock, lines, &plan, &mut row)? {
                    true => None,
                    false => stamp,
                };
                return Ok((row, Some(cursor_for(&final_hashes, stamp, pending))));
            }
            _ => {
                let pending = still_missing(store, &pending, &[])?;
                let stamp = match take_title(remote, id, &lock, lines, &plan, &mut row)? {
                    true => None,
                    false => snap.stamp,
                };
                return Ok((row, Some(cursor_for(&hashes, stamp, pending))));
            }
        }
    }
    row.note = Some("the file kept changing while pulling; run sync again".into());
    row.unresolved = true;
    Ok((row, cursor))
}

/// Writes the new session file `target` holding `bytes` (whole lines) through the one writer
/// of a session file (`FileWriter::create`): under the writer lock (a concurrent arbor writer
/// is excluded, never waited for), created exclusively (never onto a file at that name, never
/// through a planted symlink), flushed by the default durability with its directory entry,
/// removed again when its write fails. `Ok(Some(why))`: not written (a file at that name, its
/// lock held by another writer), for the row to report.
fn write_new_session(target: &Path, bytes: &[u8]) -> Result<Option<String>, SyncError> {
    use arbor_store::backend::files::FileWriter;
    use arbor_store::backend::SessionWriter;
    use arbor_store::StoreError;
    let failed = |e: &dyn std::fmt::Display| BackendError::Db {
        store: "files".into(),
        message: format!("{}: {e}", target.display()),
    };
    let mut w = match FileWriter::create(target, None, arbor_store::Durability::default()) {
        Ok(w) => w,
        Err(StoreError::Lock(e)) => {
            return Ok(Some(format!("not written: {}: {e}", target.display())))
        }
        Err(e) => return Err(failed(&e).into()),
    };
    // Written as read, whole lines (a last line without its newline gets one, as every
    // append does), without a copy.
    let owned;
    let bytes = if bytes.is_empty() || bytes.ends_with(b"\n") {
        bytes
    } else {
        owned = [bytes, b"\n"].concat();
        &owned
    };
    match w.append_joined(bytes).and_then(|()| w.flush()) {
        Ok(()) => Ok(None),
        Err(BackendError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            Ok(Some(format!(
                "not written: {} exists already",
                target.display()
            )))
        }
        Err(e) => Err(failed(&e).into()),
    }
}

/// Writes the shared copy of a conflicting session next to the local one as a fork: a new
/// session id, `parentSession` naming the local file, every other line of `lines` (the shared
/// copy) as it is.
fn fork_copy(lines: &[Vec<u8>], s: &StoredSession, local_path: &Path) -> Result<String, SyncError> {
    let new_id = arbor_store::ids::new_session_id(if s.meta.tool == "omp" {
        arbor_core::doc::Dialect::Omp
    } else {
        arbor_core::doc::Dialect::Pi
    });
    // The one fork (arbor_store::backend::fork): the header rewritten, every other line kept.
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let parent = local_path.display().to_string();
    let out = arbor_store::backend::fork::fork_lines(
        &lines,
        &new_id,
        &parent,
        &arbor_store::backend::fork::ForkHeader::Kept,
    )
    .bytes();
    // Next to the local file, named from the new id and the shared copy's creation time
    // when that is a checked ISO time (else now): nothing of the row's text but a checked time.
    let created = if valid_iso_time(&s.meta.created) {
        s.meta.created.clone()
    } else {
        arbor_store::ids::now_iso()
    };
    let dir = match local_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let target = arbor_store::paths::session_file_name(dir, &created, &new_id);
    if let Some(why) = write_new_session(&target, &out)? {
        return Ok(format!("the shared copy not kept as a fork: {why}"));
    }
    Ok(format!(
        "the shared copy kept as fork {new_id} ({})",
        target.display()
    ))
}

/// Each session's state, without changing anything.
///
/// # Errors
/// The shared store failing.
pub fn status(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
) -> Result<Vec<Row>, SyncError> {
    let shared: HashMap<String, StoredSession> = remote
        .list()?
        .into_iter()
        .map(|s| (s.meta.id.clone(), s))
        .collect();
    let cursors = load_cursors(&local.cursor_file);
    let (files, mut rows) = local_sessions(local, &cursors);
    let mut seen = HashSet::new();
    for LocalFile { id, path, stat, .. } in files {
        if !selected(ids, &id, Some(&path)) {
            continue;
        }
        seen.insert(id.clone());
        let cursor = cursors.get(&id);
        let row = Row::new(id.clone(), Some(path.clone()), State::LocalOnly);
        let row = match shared.get(&id) {
            None => row,
            Some(s) if settled(cursor, stat, s, Way::Status) => Row {
                state: State::InSync,
                ..row
            },
            Some(s) if resolved(cursor, s) => resolved_row(row),
            Some(s) => match sync_support::read_snapshot(&path) {
                Ok(snap) => {
                    let hashes = hashes_of(&snap.lines, 0);
                    match compare(remote, &id, &snap.lines, &hashes, s, cursor) {
                        Ok(plan) => Row {
                            state: plan.state,
                            note: plan.note,
                            ..row
                        },
                        Err(e) => failed(row, &e),
                    }
                }
                Err(e) => unreadable(id, path, &e),
            },
        };
        rows.push(row);
    }
    for (id, _) in shared {
        if !seen.contains(&id) && selected(ids, &id, None) {
            rows.push(Row::new(id, None, State::RemoteOnly));
        }
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(rows)
}
