//! `arbor sync push`: what the shared store lacks is sent.
use crate::blobs::{copy_blobs, named_blobs, retry_blobs, still_missing, tool_of};
use crate::compare::{
    advance, bytes_of, compare, digest, hashes_of, is_slot, later_slot, name_digest, settled, Way,
};
use crate::conflict::{resolved, resolved_row};
use crate::cursor::{load_cursors, save_cursors, Agreed, Cursor};
use crate::local::{local_sessions, Local, LocalFile, Selection};
use crate::merge::parents_first;
use crate::pull::{has_leftover, settle};
use crate::report::{failed, unreadable, Row, State, SyncError, SyncProgress};
use arbor_store::backend::sync_support::{self};
use arbor_store::backend::{BackendError, SessionMeta, SessionStore, StoredSession};
use std::collections::HashMap;
use std::time::Duration;

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
    push_with(remote, local, ids, &mut |_| {})
}

/// [`push`], telling `progress` how far it has come after each session.
///
/// # Errors
/// As [`push`].
pub fn push_with(
    remote: &dyn SessionStore,
    local: &Local,
    ids: &[String],
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<Vec<Row>, SyncError> {
    let mut cursors = load_cursors(&local.cursor_file);
    let shared: HashMap<String, StoredSession> = remote
        .list()?
        .into_iter()
        .map(|s| (s.meta.id.clone(), s))
        .collect();
    let (files, mut rows) = local_sessions(local, &cursors);
    let chosen = Selection::new(ids);
    let files: Vec<LocalFile<'_>> = files
        .into_iter()
        .filter(|f| chosen.has(&f.id, Some(&f.path)))
        .collect();
    let mut at = SyncProgress {
        sessions_total: files.len() as u64,
        bytes_total: files.iter().map(|f| f.stat.map_or(0, |s| s.0)).sum(),
        ..SyncProgress::default()
    };
    progress(at);
    for f in files {
        let size = f.stat.map_or(0, |s| s.0);
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
        at.sessions_done += 1;
        at.bytes_done += size;
        progress(at);
    }
    save_cursors(&local.cursor_file, &cursors)?;
    Ok(rows)
}

pub(crate) fn push_one(
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
    let (pending, pending_here) = crate::cursor::pending_blobs(cursor.as_ref());
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
        meta.user = local.user.clone();
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
