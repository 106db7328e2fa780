//! What `arbor stats` adds up of each session, kept in the catalog: the session's spends in
//! [`Bucket`]s (see `arbor_store::usage`), its `cwd` and `parentSession`, and whether it could
//! be read, valid while the file's `stat` is the one stored. A fork's buckets mark the turns
//! its parent holds too; the parent's `stat` when they were marked is kept with them, so that
//! a parent that changed has its forks marked again. The parent is the counted session its
//! `parentSession` names: by path (pi), else by session id (omp).
use crate::catalog::Catalog;
use crate::error::{IndexError, SqlContext};
use crate::scan::Stat;
use arbor_store::usage::{decode_buckets, encode_buckets, Bucket};
use rusqlite::{params, Row};
use std::collections::HashMap;

/// One session file as `arbor stats` counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct SpendRow {
    /// The file's `stat` when it was read.
    pub stat: Stat,
    /// Why it could not be read (it is not counted).
    pub error: Option<String>,
    /// Header `cwd` (`""` when absent).
    pub cwd: String,
    /// Header `id` (what an omp fork's `parentSession` names).
    pub id: Option<String>,
    /// Header `parentSession`.
    pub parent: Option<String>,
    /// The parent's canonical path and `stat` when the fork's copies were marked (`None`: not
    /// marked).
    pub parent_seen: Option<(String, Stat)>,
    /// The spends.
    pub buckets: Vec<Bucket>,
}

fn stat_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Stat>> {
    let size: Option<i64> = r.get(i)?;
    let mtime: Option<i64> = r.get(i + 1)?;
    let ino: Option<i64> = r.get(i + 2)?;
    let dev: Option<i64> = r.get(i + 3)?;
    Ok(match (size, mtime, ino, dev) {
        (Some(size), Some(mtime_ns), Some(ino), Some(dev)) => Some(Stat {
            size: size as u64,
            mtime_ns,
            ino: ino as u64,
            dev: dev as u64,
        }),
        _ => None,
    })
}

impl Catalog {
    /// The stored rows of the directory `dir_key` ([`crate::dir_key`]), by file name. A row
    /// whose buckets cannot be read back is left out (it is counted again).
    pub fn spend_rows(&self, dir_key: &str) -> Result<HashMap<String, SpendRow>, IndexError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT name, size, mtime_ns, ino, dev, error, cwd, parent, parent_canon, \
                 parent_size, parent_mtime_ns, parent_ino, parent_dev, buckets, sid \
                 FROM spend_files WHERE dir=?1",
            )
            .db(&self.path)?;
        let rows = st
            .query_map([dir_key], |r| {
                let name: String = r.get(0)?;
                let stat = stat_at(r, 1)?;
                let parent_canon: Option<String> = r.get(8)?;
                let parent_stat = stat_at(r, 9)?;
                let blob: Vec<u8> = r.get(13)?;
                Ok((
                    name,
                    stat,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, Option<String>>(7)?,
                    parent_canon.zip(parent_stat),
                    decode_buckets(&blob),
                    r.get::<_, Option<String>>(14)?,
                ))
            })
            .db(&self.path)?;
        let mut out = HashMap::new();
        for row in rows {
            let (name, stat, error, cwd, parent, parent_seen, buckets, id) = row.db(&self.path)?;
            let (Some(stat), Some(buckets)) = (stat, buckets) else {
                continue;
            };
            out.insert(
                name,
                SpendRow {
                    stat,
                    error,
                    cwd,
                    id,
                    parent,
                    parent_seen,
                    buckets,
                },
            );
        }
        Ok(out)
    }

    /// Stores `rows` (directory key, file name, row) and drops the rows of the files `gone`
    /// (directory key, file name), in one transaction.
    pub fn put_spend_rows(
        &mut self,
        rows: &[(String, String, SpendRow)],
        gone: &[(String, String)],
    ) -> Result<(), IndexError> {
        if rows.is_empty() && gone.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .db(&path)?;
        {
            let mut del = tx
                .prepare_cached("DELETE FROM spend_files WHERE dir=?1 AND name=?2")
                .db(&path)?;
            for (d, n) in gone {
                del.execute(params![d, n]).db(&path)?;
            }
            let mut ins = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO spend_files(dir, name, size, mtime_ns, ino, dev, error, \
                     cwd, parent, parent_canon, parent_size, parent_mtime_ns, parent_ino, parent_dev, \
                     buckets, sid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                )
                .db(&path)?;
            for (d, n, r) in rows {
                let ps = r.parent_seen.as_ref();
                ins.execute(params![
                    d,
                    n,
                    r.stat.size as i64,
                    r.stat.mtime_ns,
                    r.stat.ino as i64,
                    r.stat.dev as i64,
                    r.error,
                    r.cwd,
                    r.parent,
                    ps.map(|p| p.0.as_str()),
                    ps.map(|p| p.1.size as i64),
                    ps.map(|p| p.1.mtime_ns),
                    ps.map(|p| p.1.ino as i64),
                    ps.map(|p| p.1.dev as i64),
                    encode_buckets(&r.buckets),
                    r.id,
                ])
                .db(&path)?;
            }
        }
        tx.commit().db(&path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let mut c = Catalog::in_memory().expect("catalog");
        let stat = Stat {
            size: 10,
            mtime_ns: 5,
            ino: 7,
            dev: 9,
        };
        let row = SpendRow {
            stat,
            error: None,
            cwd: "/p".into(),
            id: Some("B".into()),
            parent: Some("/x/a.jsonl".into()),
            parent_seen: Some(("/x/a.jsonl".into(), stat)),
            buckets: Vec::new(),
        };
        c.put_spend_rows(&[("/x".into(), "b.jsonl".into(), row.clone())], &[])
            .expect("put");
        let got = c.spend_rows("/x").expect("rows");
        assert_eq!(got.get("b.jsonl"), Some(&row));
        c.put_spend_rows(&[], &[("/x".into(), "b.jsonl".into())])
            .expect("gone");
        assert!(c.spend_rows("/x").expect("rows").is_empty());
    }
}
