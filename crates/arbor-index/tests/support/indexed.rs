//! A catalog at `db` with the directory `dir` indexed, texts included, for the catalog's
//! tests (`#[path]`).
use arbor_index::{Catalog, RefreshOptions};
use std::path::Path;

/// Opens (or creates) the catalog `db` and brings `dir` into it with its texts.
pub fn indexed(db: &Path, dir: &Path) -> Catalog {
    let mut cat = Catalog::open(db).expect("open catalog");
    cat.refresh_dirs(
        &[dir.to_path_buf()],
        RefreshOptions::with_texts(),
        &mut |_| {},
    )
    .expect("refresh");
    cat
}
