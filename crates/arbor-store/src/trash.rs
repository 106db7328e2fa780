//! Sessions to the freedesktop trash (the `trash` crate, the trash file managers use), with
//! what belongs to them, after the checks of a volume's trash the crate does not make
//! ([`check_before_trashing`]): the one implementation of `arbor rm`, the terminal browser's
//! delete and `arbor serve`'s.
use std::path::{Path, PathBuf};

mod volume;
pub use volume::{check_before_trashing, check_trash_folder};

/// The session and what belongs to it ([`crate::belongings`]: its lock, arbor's repair
/// sidecars, omp's rewrite backups, omp's artifact directory when it provably is one), and a
/// note naming a directory left in place.
pub fn with_belongings(session: &Path) -> (Vec<PathBuf>, Option<String>) {
    let b = crate::belongings::belongings(session);
    let note = b
        .left
        .map(|(dir, why)| format!("left {} in place: {why}", dir.display()));
    let mut items = vec![session.to_path_buf()];
    items.extend(b.items);
    (items, note)
}

/// Moves `items` (a session and its belongings, [`with_belongings`]) to the freedesktop
/// trash, after checking the volume trash the `trash` crate would use
/// ([`check_before_trashing`]).
///
/// # Errors
/// A trash that must not be used, or the move failed: the reason, in words.
pub fn to_trash(items: &[PathBuf]) -> Result<(), String> {
    for i in items {
        check_before_trashing(i)?;
    }
    trash::delete_all(items).map_err(|e| e.to_string())
}
