//! `arbor sync pull`: what only the shared store has is written here, under the session's
//! writer lock (appended, or merged by an atomic rewrite).
use crate::blobs::{copy_blobs, named_blobs, retry_blobs, still_missing};
use crate::compare::{
    advance, compare, digest, hashes_of, is_slot, joined, later_slot, name_digest, settled, Hash,
    Plan, Way,
};
use crate::conflict::{fork_copy, resolved, resolved_row};
use crate::cursor::{load_cursors, save_cursors, Agreed, Cursor};
use crate::local::{local_sessions, stat, store_of, Local, Selection};
use crate::merge::{parents_first, placement};
use crate::place::{header_id, place, write_new_session};
use crate::report::{failed, unreadable, Row, State, SyncError, SyncProgress};
use arbor_store::backend::sync_support::{self, Snapshot, Written};
use arbor_store::backend::{BackendError, SessionStore, StoredSession};
use arbor_store::Durability;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    pull_with(remote, local, ids, fork_on_conflict, &mut |_| {})
}

/// [`pull`], telling `progress` how far it has come after each session.
///
/// # Errors
/// As [`pull`].
pub fn pull_with(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
    fork_on_conflict: bool,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<Vec<Row>, SyncError> {
    let options = PullOptions {
        fork_on_conflict,
        ..PullOptions::default()
    };
    pull_with_options(remote, local, ids, &options, progress)
}

/// How a pull writes: [`pull`] and `arbor sync pull` take the default (each new session file
/// flushed with its directory entry before the cursor file names it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PullOptions {
    /// `--fork-on-conflict`: a conflicting shared copy is also written as a fork, once.
    pub fork_on_conflict: bool,
    /// How each new session file is written. [`Durability::Flush`] (the default): flushed
    /// with its directory entry, one by one, as a person's session directory needs.
    /// [`Durability::None`]: not flushed, for a **cache** of the store whose owner re-checks
    /// it after a crash of the machine (`arbor serve --from`'s mirror: a crash of the process
    /// loses nothing written; after a crash of the machine the cursor file may name bytes
    /// that never reached the disk, so the mirror sets it aside when the machine has booted
    /// since it was written, and the pull then compares every file whole). Lines appended to
    /// existing files and merges are written as by default.
    pub new_files: Durability,
}

/// [`pull_with`] by `options` (see [`PullOptions`]).
///
/// # Errors
/// As [`pull`].
pub fn pull_with_options(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
    options: &PullOptions,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let (files, mut rows) = local_sessions(local, &cursors);
    let here: HashMap<String, (PathBuf, Option<(u64, i128)>)> = files
        .into_iter()
        .map(|f| (f.id, (f.path, f.stat)))
        .collect();
    let selection = Selection::new(ids);
    let chosen: Vec<StoredSession> = remote
        .list()?
        .into_iter()
        .filter(|s| {
            let path = here.get(&s.meta.id).map(|(p, _)| p.as_path());
            selection.has(&s.meta.id, path)
        })
        .collect();
    let mut at = SyncProgress {
        sessions_total: chosen.len() as u64,
        bytes_total: chosen.iter().map(|s| s.bytes).sum(),
        ..SyncProgress::default()
    };
    progress(at);
    for s in chosen {
        let id = s.meta.id.clone();
        let size = s.bytes;
        let (path, found) = match here.get(&id) {
            Some((p, st)) => (Some(p.clone()), *st),
            None => (None, None),
        };
        let row = Row::new(id.clone(), path.clone(), State::RemoteOnly);
        let cursor = cursors.remove(&id);
        let result = match &path {
            None => pull_new(remote, local, &s, row.clone(), options.new_files),
            Some(p) => pull_into(
                remote,
                local,
                &s,
                p,
                found,
                cursor.clone(),
                options.fork_on_conflict,
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
        at.sessions_done += 1;
        at.bytes_done += size;
        progress(at);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

/// The shared copy `s` whole, in one buffer sized from the listing (growing it by doubling
/// would hold up to twice the session while it is copied); the size is the store's word, so
/// only reserved where the memory is to be had, and at most 4 GiB.
fn read_whole(remote: &dyn SessionStore, s: &StoredSession) -> Result<Vec<u8>, BackendError> {
    let mut bytes = Vec::new();
    let _ = bytes.try_reserve_exact(usize::try_from(s.bytes.min(1 << 32)).unwrap_or(0));
    remote.read_into(&s.meta.id, 0, &mut bytes)?;
    Ok(bytes)
}

/// A session only the shared store has: written as a new file.
pub(crate) fn pull_new(
    remote: &dyn SessionStore,
    local: &Local,
    s: &StoredSession,
    mut row: Row,
    durability: Durability,
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
    let bytes = read_whole(remote, s)?;
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
    if let Some(why) = write_new_session(&target, &bytes, durability)? {
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
pub(crate) fn take_title(
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
pub(crate) fn has_leftover(path: &Path) -> bool {
    std::fs::symlink_metadata(sync_support::merge_sidecar_path(path)).is_ok()
}

/// Settles a merge's old file ([`sync_support::SyncLock::settle_leftover`]), saying in `row`
/// what it did.
pub(crate) fn settle(lock: &mut sync_support::SyncLock, row: &mut Row) -> std::io::Result<()> {
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
pub(crate) fn pull_into(
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
    let (pending_there, pending) = crate::cursor::pending_blobs(cursor.as_ref());
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
                // One buffer of the shared copy, its lines slices of it (no second copy).
                let bytes = read_whole(remote, s)?;
                let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
                let all: Vec<&[u8]> = if bytes.is_empty() {
                    Vec::new()
                } else {
                    body.split(|b| *b == b'\n').collect()
                };
                let names = named_blobs(&s.meta.tool, all.iter().copied());
                (row.blobs, row.missing_blobs) = copy_blobs(remote, store, &names)?;
                row.note = Some(fork_copy(&all, s, path)?);
                let mut c = cursor.unwrap_or_default();
                c.path = Some(path.to_path_buf());
                c.settled = false;
                c.resolved = Some((all.len() as u64, bytes.len() as u64));
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
                let (stamp, recovered, kept, unlinked) = match written {
                    Written::Moved { .. } => continue,
                    Written::Done {
                        stamp,
                        recovered,
                        kept,
                        unlinked,
                    } => (stamp, recovered, kept, unlinked),
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
                if let Some(why) = unlinked {
                    // No sidecar on this file system: said, with what may have been lost.
                    let lost = kept.map(|k| format!("; {k}")).unwrap_or_default();
                    row.note = Some(format!(
                        "merged without a sidecar: {why}{lost}{}",
                        row.note
                            .take()
                            .filter(|_| recovered > 0)
                            .map(|n| format!("; {n}"))
                            .unwrap_or_default()
                    ));
                } else if let Some(why) = kept {
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
