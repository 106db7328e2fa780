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
        return TreeFacts { on_path: vec![true; n], branches: i64::from(n > 0), clean: true };
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
    let visible = |i: usize| c.eids[i].as_deref().is_none_or(|e| c.by_id.get(e) == Some(&i));
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
    TreeFacts { on_path, branches, clean }
}

/// The running tree state of one file while it is indexed.
#[derive(Debug, Default)]
pub struct TreeState {
    /// Id of the leaf (the last node).
    pub leaf_eid: Option<String>,
    /// Line of the leaf.
    pub leaf_seq: Option<i64>,
    /// Tips.
    pub branches: i64,
    /// The fast path applies.
    pub clean: bool,
    /// Nodes.
    pub entries: i64,
    /// A v1 file (no ids: one chain).
    pub linear: bool,
    /// The stored nodes, when loaded (always for a file indexed from the start).
    pub cache: Option<TreeCache>,
}

/// What to write for a chunk's nodes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TreeWrites {
    /// On-branch flag of each new node, in order.
    pub new_flags: Vec<bool>,
    /// Earlier nodes whose flag flipped: (seq, flag).
    pub flips: Vec<(i64, bool)>,
}

impl TreeState {
    /// Applies a chunk's nodes. `id_stored(id)` says whether an earlier node of the file
    /// (already in the database) has that id; it is asked only when the cache is not loaded.
    /// `load()` returns the stored nodes when the slow path needs them.
    pub fn apply(
        &mut self,
        nodes: &[NodeIn],
        id_stored: &mut dyn FnMut(&str) -> bool,
        load: &mut dyn FnMut() -> TreeCache,
    ) -> TreeWrites {
        let mut flags = Vec::with_capacity(nodes.len());
        let mut slow = false;
        let mut chunk_ids: HashSet<&str> = HashSet::new();
        for n in nodes {
            if self.linear {
                flags.push(true);
                self.branches = 1;
            } else if !slow {
                let fast = self.clean
                    && n.parent.as_deref() == self.leaf_eid.as_deref()
                    && n.eid.as_deref().is_some_and(|e| {
                        !chunk_ids.contains(e)
                            && match &self.cache {
                                Some(c) => !c.by_id.contains_key(e),
                                None => !id_stored(e),
                            }
                    });
                if fast {
                    flags.push(true);
                    if self.entries == 0 {
                        self.branches = 1;
                    }
                } else {
                    slow = true;
                }
            }
            if let Some(e) = n.eid.as_deref() {
                chunk_ids.insert(e);
            }
            self.leaf_eid = n.eid.clone();
            self.leaf_seq = Some(n.seq);
            self.entries += 1;
        }
        if !slow {
            if let Some(c) = &mut self.cache {
                for (n, &f) in nodes.iter().zip(&flags) {
                    c.push(n.seq, n.eid.as_deref(), n.parent.as_deref(), f);
                }
            }
            return TreeWrites { new_flags: flags, flips: Vec::new() };
        }
        let cache = self.cache.get_or_insert_with(load);
        let base = cache.len();
        for n in nodes {
            cache.push(n.seq, n.eid.as_deref(), n.parent.as_deref(), false);
        }
        let facts = recompute(cache, self.linear);
        let mut flips = Vec::new();
        for i in 0..base {
            if cache.on_path[i] != facts.on_path[i] {
                flips.push((cache.seqs[i], facts.on_path[i]));
                cache.on_path[i] = facts.on_path[i];
            }
        }
        for i in base..cache.len() {
            cache.on_path[i] = facts.on_path[i];
        }
        self.branches = facts.branches;
        self.clean = facts.clean;
        TreeWrites { new_flags: facts.on_path[base..].to_vec(), flips }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(seq: i64, id: &str, parent: Option<&str>) -> NodeIn {
        NodeIn { seq, eid: Some(id.into()), parent: parent.map(Into::into) }
    }

    /// Applies chunks to a fresh state, then compares with a recomputation from scratch.
    fn run(chunks: &[Vec<NodeIn>]) -> (TreeState, Vec<bool>) {
        let mut st = TreeState { clean: true, cache: Some(TreeCache::default()), ..Default::default() };
        let mut db: Vec<(i64, bool)> = Vec::new();
        for c in chunks {
            let w = st.apply(c, &mut |_| unreachable!(), &mut || unreachable!());
            for (seq, f) in &w.flips {
                db.iter_mut().find(|(s, _)| s == seq).expect("flip of a stored row").1 = *f;
            }
            db.extend(c.iter().map(|n| n.seq).zip(w.new_flags));
        }
        let flags = db.iter().map(|(_, f)| *f).collect();
        (st, flags)
    }

    #[test]
    fn linear_then_branch_then_back() {
        let (st, flags) = run(&[vec![node(2, "a", None), node(3, "b", Some("a"))], vec![node(4, "c", Some("b"))]]);
        assert_eq!((flags, st.branches, st.clean), (vec![true, true, true], 1, true));
        // c's sibling d: a branch back from b
        let (st, flags) = run(&[vec![node(2, "a", None), node(3, "b", Some("a")), node(4, "c", Some("b"))], vec![node(5, "d", Some("b"))]]);
        assert_eq!((flags, st.branches, st.clean), (vec![true, true, false, true], 2, true));
        // then continuing from c again (the other branch)
        let (st, flags) = run(&[
            vec![node(2, "a", None), node(3, "b", Some("a")), node(4, "c", Some("b"))],
            vec![node(5, "d", Some("b"))],
            vec![node(6, "e", Some("c"))],
        ]);
        assert_eq!((flags, st.branches), (vec![true, true, true, false, true], 2));
    }

    #[test]
    fn odd_trees() {
        // a duplicate id, a missing parent, a cycle
        let (st, flags) = run(&[vec![node(2, "a", None), node(3, "a", Some("a"))]]);
        assert!(!st.clean);
        assert_eq!(flags, vec![false, true]);
        let (st, flags) = run(&[vec![node(2, "a", Some("zz")), node(3, "b", Some("a"))]]);
        assert_eq!((flags, st.clean, st.branches), (vec![true, true], false, 1));
        let (st, _) = run(&[vec![node(2, "a", Some("b")), node(3, "b", Some("a"))]]);
        assert!(!st.clean);
    }

    #[test]
    fn incremental_fast_path_asks_the_database() {
        let mut st = TreeState { clean: true, leaf_eid: Some("b".into()), leaf_seq: Some(3), branches: 1, entries: 2, ..Default::default() };
        let mut asked = Vec::new();
        let w = st.apply(&[node(4, "c", Some("b")), node(5, "d", Some("c"))], &mut |e| {
            asked.push(e.to_string());
            false
        }, &mut || unreachable!());
        assert_eq!(w, TreeWrites { new_flags: vec![true, true], flips: vec![] });
        assert_eq!(asked, vec!["c", "d"]);
        // a branch loads the stored nodes
        let w = st.apply(&[node(6, "e", Some("b"))], &mut |_| false, &mut || {
            let mut c = TreeCache::default();
            for (s, id, p) in [(2, "a", None), (3, "b", Some("a")), (4, "c", Some("b")), (5, "d", Some("c"))] {
                c.push(s, Some(id), p, true);
            }
            c
        });
        assert_eq!(w, TreeWrites { new_flags: vec![true], flips: vec![(4, false), (5, false)] });
        assert_eq!(st.branches, 2);
    }
}
