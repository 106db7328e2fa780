//! omp's blobs: the ones lines name, copied before the lines, and those still missing.
use arbor_store::backend::{BackendError, SessionStore};

/// Tries again the blobs a session named that one side lacked (`from` gives, `to` takes):
/// the ones still missing on both.
pub(crate) fn retry_blobs(
    from: &dyn SessionStore,
    to: &dyn SessionStore,
    pending: &[String],
) -> Result<(u64, Vec<String>), BackendError> {
    copy_blobs(from, to, pending)
}

/// The pending blobs after a sync: those of `before` and `now` that `to` still lacks.
pub(crate) fn still_missing(
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

pub(crate) fn tool_of(lines: &[Vec<u8>]) -> &'static str {
    let header = arbor_core::header::locate(lines.iter().map(Vec::as_slice)).map(|(i, ..)| i);
    if header == Some(1) {
        "omp"
    } else {
        "pi"
    }
}

/// The blobs omp lines name (each once, in order of first mention); none for pi's.
pub(crate) fn named_blobs<'a>(
    tool: &str,
    lines: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<String> {
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
pub(crate) fn copy_blobs(
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
