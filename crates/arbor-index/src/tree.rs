//! Keeping each file's tree facts current while it is indexed: which entries are on the
//! current branch (the path from the leaf, pi's last entry, to its root), how many tips the
//! tree has, and whether the tree is clean enough for the fast path.
//!
//! Appending a turn to a session is the common case: every new entry's parent is the previous
//! leaf, and the new entries simply join the current branch (no other row changes). Anything
//! else (a branch back, a reused id, a parent that is missing or comes later, an entry without
//! id) recomputes the file's tree from its stored nodes, and rewrites only the rows whose flag
//! flipped.
use crate::scan::NodeIn;
use std::collections::{HashMap, HashSet};

/// The stored nodes of one file, in file order, with their flags as the database has them.
#[derive(Debug, Default)]
pub struct TreeCache {
    /// Line numbers.
    pub seqs: Vec<i64>,
    /// Ids.
    pub eids: Vec<Option<Box<str>>>,
    /// Parent ids.
    pub parents: Vec<Option<Box<str>>>,
    /// On the current branch.
    pub on_path: Vec<bool>,
    /// Last index of each id.
    pub by_id: HashMap<Box<str>, usize>,
}

impl TreeCache {
    /// Appends a node.
    pub fn push(&mut self, seq: i64, eid: Option<&str>, parent: Option<&str>, on_path: bool) {
        let i = self.seqs.len();
        self.seqs.push(seq);
        if let Some(e) = eid {
            self.by_id.insert(e.into(), i);
        }
        self.eids.push(eid.map(Into::into));
        self.parents.push(parent.map(Into::into));
        self.on_path.push(on_path);
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// Whether there is no node.
    pub fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }
}

impl TreeCache {
    /// The compact form stored in the catalog (`trees.data`): per node, the line number as a
    /// delta, the on-branch flag, the id and the parent id (`u32::MAX` length: absent).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * 24 + 8);
        put_varint(&mut out, self.len() as u64);
        let mut prev = 0i64;
        for i in 0..self.len() {
            put_varint(&mut out, (self.seqs[i] - prev).max(0) as u64);
            prev = self.seqs[i];
            out.push(u8::from(self.on_path[i]));
            for s in [&self.eids[i], &self.parents[i]] {
                match s {
                    Some(v) => {
                        put_varint(&mut out, v.len() as u64);
                        out.extend_from_slice(v.as_bytes());
                    }
                    None => put_varint(&mut out, u64::from(u32::MAX)),
                }
            }
        }
        out
    }

    /// Reads [`TreeCache::encode`]; `None` for bytes it did not write.
    pub fn decode(b: &[u8]) -> Option<TreeCache> {
        let mut c = TreeCache::default();
        let mut pos = 0;
        let n = get_varint(b, &mut pos)? as usize;
        let mut seq = 0i64;
        for _ in 0..n {
            seq += get_varint(b, &mut pos)? as i64;
            let flag = *b.get(pos)? != 0;
            pos += 1;
            let mut ids: [Option<String>; 2] = [None, None];
            for slot in &mut ids {
                let len = get_varint(b, &mut pos)?;
                if len != u64::from(u32::MAX) {
                    let end = pos.checked_add(len as usize)?;
                    *slot = Some(std::str::from_utf8(b.get(pos..end)?).ok()?.to_string());
                    pos = end;
                }
            }
            c.push(seq, ids[0].as_deref(), ids[1].as_deref(), flag);
        }
        (pos == b.len()).then_some(c)
    }

    /// On-branch flag of the entry on line `seq`.
    pub fn on_path_at(&self, seq: i64) -> Option<bool> {
        self.seqs.binary_search(&seq).ok().map(|i| self.on_path[i])
    }

    /// On-branch flag of the entry with id `eid` (the last one with it).
    pub fn on_path_of(&self, eid: &str) -> Option<bool> {
        self.by_id.get(eid).map(|&i| self.on_path[i])
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// The outcome of [`recompute`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFacts {
    /// On-branch flag per node.
    pub on_path: Vec<bool>,
    /// Tips of the tree (nodes no other node descends from; ids hidden by a later duplicate
    /// do not count).
    pub branches: i64,
    /// Every node has a unique id and a parent that is absent or an earlier node.
    pub clean: bool,
}

/// Recomputes the tree facts of `c` (`linear`: a v1 file, one chain in file order).
pub fn recompute(c: &TreeCache, linear: bool) -> TreeFacts {
    let n = c.len();
    if linear {
        return TreeFacts {
            on_path: vec![true; n],
            branches: i64::from(n > 0),
            clean: true,
        };
    }
    let mut kids = vec![0u32; n];
    let mut clean = true;
    let resolve = |p: &Option<Box<str>>| p.as_deref().and_then(|p| c.by_id.get(p).copied());
    for i in 0..n {
        match &c.eids[i] {
            None => clean = false,
            Some(e) => {
                if c.by_id.get(e) != Some(&i) {
                    clean = false;
                }
            }
        }
        if let Some(p) = &c.parents[i] {
            match c.by_id.get(p) {
                Some(&j) => {
                    kids[j] += 1;
                    if j >= i {
                        clean = false;
                    }
                }
                None => clean = false,
            }
        }
    }
    let visible = |i: usize| {
        c.eids[i]
            .as_deref()
            .is_none_or(|e| c.by_id.get(e) == Some(&i))
    };
    let branches = (0..n).filter(|&i| kids[i] == 0 && visible(i)).count() as i64;
    let mut on_path = vec![false; n];
    if n > 0 {
        let mut i = n - 1;
        let mut seen = HashSet::new();
        loop {
            if !seen.insert(i) {
                clean = false; // a cycle
                break;
            }
            on_path[i] = true;
            match resolve(&c.parents[i]) {
                Some(j) => i = j,
                None => break,
            }
        }
    }
    TreeFacts {
        on_path,
        branches,
        clean,
    }
}

/// The running tree state of one file while it is indexed.
#[derive(Debug, Default)]
pub struct TreeState {
    /// Tips.
    pub branches: i64,
    /// The fast path applies.
    pub clean: bool,
    /// A v1 file (no ids: one chain).
    pub linear: bool,
    /// The file's nodes so far.
    pub cache: TreeCache,
}

impl TreeState {
    /// A state for a file indexed from its start.
    pub fn fresh() -> TreeState {
        TreeState {
            clean: true,
            ..TreeState::default()
        }
    }

    /// The state stored for a file (its nodes, tips and cleanliness).
    pub fn stored(cache: TreeCache, branches: i64, clean: bool) -> TreeState {
        TreeState {
            branches,
            clean,
            linear: false,
            cache,
        }
    }

    /// Id of the leaf (the last node).
    pub fn leaf_eid(&self) -> Option<&str> {
        self.cache.eids.last().and_then(|e| e.as_deref())
    }

    /// Applies a chunk's nodes. Returns whether any flag of an earlier node flipped (a
    /// branch, or a tree that is not clean).
    pub fn apply(&mut self, nodes: &[NodeIn]) -> bool {
        let mut slow = false;
        for n in nodes {
            let fast = self.linear
                || (!slow
                    && self.clean
                    && n.parent.as_deref() == self.leaf_eid()
                    && (n.parent.is_some() || self.cache.is_empty())
                    && n.eid
                        .as_deref()
                        .is_some_and(|e| !self.cache.by_id.contains_key(e)));
            if fast {
                if self.cache.is_empty() || self.linear {
                    self.branches = 1;
                }
            } else {
                slow = true;
            }
            self.cache
                .push(n.seq, n.eid.as_deref(), n.parent.as_deref(), fast);
        }
        if !slow {
            return false;
        }
        let facts = recompute(&self.cache, self.linear);
        let flipped = self.cache.on_path != facts.on_path;
        self.cache.on_path = facts.on_path;
        self.branches = facts.branches;
        self.clean = facts.clean;
        flipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(seq: i64, id: &str, parent: Option<&str>) -> NodeIn {
        NodeIn {
            seq,
            eid: Some(id.into()),
            parent: parent.map(Into::into),
        }
    }

    /// Applies chunks to a fresh state and checks it against a recomputation from scratch.
    fn run(chunks: &[Vec<NodeIn>]) -> (TreeState, Vec<bool>) {
        let mut st = TreeState::fresh();
        for c in chunks {
            st.apply(c);
            let again = TreeCache::decode(&st.cache.encode()).expect("round trip");
            assert_eq!(again.on_path, st.cache.on_path);
            assert_eq!(again.eids, st.cache.eids);
            st.cache = again;
        }
        let facts = recompute(&st.cache, false);
        assert_eq!(facts.on_path, st.cache.on_path);
        assert_eq!(facts.branches, st.branches);
        let flags = st.cache.on_path.clone();
        (st, flags)
    }

    #[test]
    fn linear_then_branch_then_back() {
        let (st, flags) = run(&[
            vec![node(2, "a", None), node(3, "b", Some("a"))],
            vec![node(4, "c", Some("b"))],
        ]);
        assert_eq!(
            (flags, st.branches, st.clean),
            (vec![true, true, true], 1, true)
        );
        let (st, flags) = run(&[
            vec![
                node(2, "a", None),
                node(3, "b", Some("a")),
                node(4, "c", Some("b")),
            ],
            vec![node(5, "d", Some("b"))],
        ]);
        assert_eq!(
            (flags, st.branches, st.clean),
            (vec![true, true, false, true], 2, true)
        );
        let (st, flags) = run(&[
            vec![
                node(2, "a", None),
                node(3, "b", Some("a")),
                node(4, "c", Some("b")),
            ],
            vec![node(5, "d", Some("b"))],
            vec![node(6, "e", Some("c"))],
        ]);
        assert_eq!(
            (flags, st.branches),
            (vec![true, true, true, false, true], 2)
        );
        assert_eq!(st.cache.on_path_at(5), Some(false));
        assert_eq!(st.cache.on_path_of("c"), Some(true));
    }

    #[test]
    fn odd_trees() {
        let (st, flags) = run(&[vec![node(2, "a", None), node(3, "a", Some("a"))]]);
        assert!(!st.clean);
        assert_eq!(flags, vec![false, true]);
        let (st, flags) = run(&[vec![node(2, "a", Some("zz")), node(3, "b", Some("a"))]]);
        assert_eq!((flags, st.clean, st.branches), (vec![true, true], false, 1));
        let (st, _) = run(&[vec![node(2, "a", Some("b")), node(3, "b", Some("a"))]]);
        assert!(!st.clean);
        // a second root
        let (st, flags) = run(&[vec![node(2, "a", None), node(3, "b", None)]]);
        assert_eq!((flags, st.branches), (vec![false, true], 2));
        assert!(TreeCache::decode(b"\x05").is_none());
    }
}
