//! omp's title slot on disk: the in-place 256-byte rewrite of line 1 (one positional write at
//! offset 0, as omp's `updateSessionTitle`), and the bytes of the atomic rewrite that gives a
//! file without a valid slot one.
use crate::error::{IoContext, StoreError};
use crate::file::Durability;
use arbor_core::title::{parse_title_slot, SESSION_TITLE_SLOT_BYTES};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Whether the first bytes of a file are a valid, exactly 256-byte title slot (the only
/// shape omp updates in place).
pub fn has_fixed_slot(head: &[u8]) -> bool {
    head.len() >= SESSION_TITLE_SLOT_BYTES
        && head[SESSION_TITLE_SLOT_BYTES - 1] == b'\n'
        && !head[..SESSION_TITLE_SLOT_BYTES - 1].contains(&b'\n')
        && parse_title_slot(&head[..SESSION_TITLE_SLOT_BYTES - 1]).is_some()
}

/// Overwrites the 256-byte slot at offset 0 of `path` with `slot` (which must be 256 bytes
/// ending in a newline). The file is checked first: if line 1 is no longer a fixed-size slot,
/// nothing is written and `Ok(false)` is returned (the caller falls back to
/// an atomic rewrite, [`after_new_slot`]). The caller holds the writer lock.
pub fn write_slot_in_place(
    path: &Path,
    slot: &[u8],
    durability: Durability,
) -> Result<bool, StoreError> {
    if slot.len() != SESSION_TITLE_SLOT_BYTES || slot.last() != Some(&b'\n') {
        return Ok(false);
    }
    let mut f = crate::safe_fs::open_rw_nofollow(path).at(path)?;
    let mut head = vec![0u8; SESSION_TITLE_SLOT_BYTES];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]).at(path)? {
            0 => break,
            n => got += n,
        }
    }
    if got < SESSION_TITLE_SLOT_BYTES || !has_fixed_slot(&head) {
        return Ok(false);
    }
    f.write_all_at(slot, 0).at(path)?;
    if durability != Durability::None {
        f.sync_data().at(path)?;
    }
    Ok(true)
}

/// What follows a new title slot when a file whose bytes are `bytes` is given one: an existing
/// line 1 of type `"title"` (a slot of the wrong size, or one omp would not accept) is
/// dropped, a UTF-8 BOM is dropped (omp could not read a slot behind it), every other byte is
/// kept. The writer rewrites the file as the slot followed by these bytes
/// ([`crate::backend::files::FileWriter`]).
pub fn after_new_slot(bytes: &[u8]) -> &[u8] {
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    let first_end = body
        .iter()
        .position(|&b| b == b'\n')
        .map_or(body.len(), |i| i + 1);
    let first = &body[..first_end];
    let is_title_line = arbor_core::entry::parse_fields(first.strip_suffix(b"\n").unwrap_or(first))
        .ok()
        .and_then(|f| f.str(first, "type").map(|t| t == "title"))
        .unwrap_or(false);
    if is_title_line {
        &body[first_end..]
    } else {
        body
    }
}
