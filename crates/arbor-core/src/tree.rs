//! The tree index: entries by id, labels, the leaf, paths and pi's `getTree()` order.
use crate::doc::SessionDoc;
use crate::entry::EntryType;
use std::collections::{HashMap, HashSet};

/// Labels by target id, in pi's `Map` order: a new target goes to the end, re-setting keeps
/// its place, clearing removes it (so clear-then-set moves it to the end).
#[derive(Debug, Clone, Default)]
pub struct LabelMap {
    slots: Vec<Option<(Box<str>, Box<str>)>>,
    pos: HashMap<Box<str>, usize>,
}

impl LabelMap {
    /// Sets (truthy label) or clears (empty or absent label) the label of `target`.
    pub fn apply(&mut self, target: &str, label: Option<&str>) {
        match label.filter(|l| !l.is_empty()) {
            Some(l) => {
                if let Some(&i) = self.pos.get(target) {
                    self.slots[i] = Some((target.into(), l.into()));
                } else {
                    self.pos.insert(target.into(), self.slots.len());
                    self.slots.push(Some((target.into(), l.into())));
                }
            }
            None => {
                if let Some(i) = self.pos.remove(target) {
                    self.slots[i] = None;
                }
            }
        }
    }
    /// The label of `target`.
    pub fn get(&self, target: &str) -> Option<&str> {
        let i = *self.pos.get(target)?;
        self.slots[i].as_ref().map(|(_, l)| l.as_ref())
    }
    /// (target, label) pairs in map order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.slots
            .iter()
            .flatten()
            .map(|(t, l)| (t.as_ref(), l.as_ref()))
    }
    /// Number of labelled targets.
    pub fn len(&self) -> usize {
        self.pos.len()
    }
    /// Whether no entry is labelled.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }
}

/// Index over a [`SessionDoc`]'s entries.
#[derive(Debug, Clone, Default)]
pub struct TreeIndex {
    by_id: HashMap<Box<str>, usize>,
    /// Labels by target id.
    pub labels: LabelMap,
    /// The current leaf: the last entry in file order after load (pi's rule), then wherever
    /// appends and branch operations move it. `None` is pi's `null` leaf (empty context).
    pub leaf: Option<usize>,
    /// The first entry only omp writes ([`crate::doc::is_omp_mark`]), for the dialect.
    pub omp_mark: Option<usize>,
}

/// A path from a root to an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathResult {
    /// Entry indices, root first.
    pub entries: Vec<usize>,
    /// The walk met an entry it had already visited (a `parentId` cycle) and was cut there.
    pub cycle: bool,
}

/// pi's `getTree()`: roots in file order, each node's children sorted by timestamp.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Root entry indices.
    pub roots: Vec<usize>,
    /// Children of each entry index (indices), in pi's order.
    pub children: Vec<Vec<usize>>,
    /// Entry indices not reachable from any root (members of `parentId` cycles) and entries
    /// hidden by a later entry with the same id.
    pub unreachable: Vec<usize>,
}

impl Tree {
    /// Depth-first pre-order over the tree (iterative).
    pub fn preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.children.len());
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(self.children[n].iter().rev().copied());
        }
        out
    }
}

impl TreeIndex {
    /// An empty index with room for `n` ids (a load indexes every entry at once: growing the
    /// map step by step rehashed it 14 times for 15,000 entries).
    pub fn with_capacity(n: usize) -> TreeIndex {
        TreeIndex {
            by_id: HashMap::with_capacity(n),
            ..TreeIndex::default()
        }
    }

    /// Indexes entry `i` of `doc` (which must be its last entry so far): later duplicate ids
    /// win, the leaf moves to it, label entries update the labels.
    pub fn insert(&mut self, doc: &SessionDoc, i: usize) {
        let e = &doc.entries[i];
        if let Some(id) = &e.id {
            self.by_id.insert(id.clone(), i);
        }
        self.leaf = Some(i);
        if self.omp_mark.is_none() && crate::doc::is_omp_mark(doc.line(&e.line), e) {
            self.omp_mark = Some(i);
        }
        if e.etype == EntryType::Label {
            let line = doc.line(&e.line);
            if let Some(target) = e.fields.str(line, "targetId") {
                let label = e.fields.str(line, "label");
                self.labels.apply(&target, label.as_deref());
            }
        }
    }

    /// The entry index for `id` (the last entry with that id).
    pub fn get(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Number of distinct ids.
    pub fn id_count(&self) -> usize {
        self.by_id.len()
    }

    /// The index of the parent of entry `i`, if its `parentId` names a known entry.
    pub fn parent(&self, doc: &SessionDoc, i: usize) -> Option<usize> {
        doc.entries[i]
            .parent_id
            .as_deref()
            .and_then(|p| self.get(p))
    }

    /// The path from the root to entry `i` (pi's `getBranch`), cut where a cycle closes.
    pub fn path(&self, doc: &SessionDoc, i: usize) -> PathResult {
        let n = doc.entries.len();
        let mut out = vec![i];
        let mut cur = i;
        // Fast walk; a walk longer than the number of entries must have met a cycle.
        while let Some(p) = self.parent(doc, cur) {
            if out.len() > n {
                return self.path_guarded(doc, i);
            }
            out.push(p);
            cur = p;
        }
        out.reverse();
        PathResult {
            entries: out,
            cycle: false,
        }
    }

    fn path_guarded(&self, doc: &SessionDoc, i: usize) -> PathResult {
        let mut seen = HashSet::new();
        let mut out = vec![i];
        seen.insert(i);
        let mut cur = i;
        let mut cycle = false;
        while let Some(p) = self.parent(doc, cur) {
            if !seen.insert(p) {
                cycle = true;
                break;
            }
            out.push(p);
            cur = p;
        }
        out.reverse();
        PathResult {
            entries: out,
            cycle,
        }
    }

    /// pi's `getTree()`. An entry whose id is reused by a later entry is left out (pi lists
    /// the later entry twice instead); entries on `parentId` cycles are unreachable (pi and
    /// omp drop them from the tree too) and listed in [`Tree::unreachable`].
    pub fn tree(&self, doc: &SessionDoc) -> Tree {
        let n = doc.entries.len();
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        let mut hidden = Vec::new();
        for (i, e) in doc.entries.iter().enumerate() {
            if let Some(id) = &e.id {
                if self.get(id) != Some(i) {
                    hidden.push(i);
                    continue;
                }
            }
            match e.parent_id.as_deref() {
                Some(p) if Some(p) != e.id.as_deref() => match self.get(p) {
                    Some(pi) => children[pi].push(i),
                    None => roots.push(i),
                },
                _ => roots.push(i),
            }
        }
        // `new Date(entry.timestamp).getTime()`, as pi sorts by it (a numeric timestamp
        // is a time too).
        let ts: Vec<f64> = doc
            .entries
            .iter()
            .map(|e| match e.timestamp {
                Some(_) => e.timestamp_ms().unwrap_or(f64::NAN),
                None => e.date_ms(doc.line(&e.line)),
            })
            .collect();
        for c in children.iter_mut() {
            if c.len() > 1 {
                sort_like_v8(c, &ts);
            }
        }
        let mut tree = Tree {
            roots,
            children,
            unreachable: hidden,
        };
        // Reached or hidden (already listed): a flag per entry, not a search of the list
        // (a cycle through 100,000 entries made that quadratic).
        let mut listed = vec![false; n];
        for i in tree.preorder() {
            listed[i] = true;
        }
        for &i in &tree.unreachable {
            listed[i] = true;
        }
        for (i, l) in listed.iter().enumerate() {
            if !l {
                tree.unreachable.push(i);
            }
        }
        tree.unreachable.sort_unstable();
        tree
    }
}

/// `Array.prototype.sort` with pi's comparator `ts(a) - ts(b)` (NaN compares as equal), by
/// V8's own algorithm at every length ([`crate::js_sort`]): with an unparseable timestamp the
/// comparator is inconsistent and the order depends on every step of the algorithm.
fn sort_like_v8(v: &mut [usize], ts: &[f64]) {
    crate::js_sort::v8_sort_by_number(v, |a, b| ts[a] - ts[b]);
}

impl Tree {
    /// Writes the `arbor tree --json` object (README): `{"leaf", "roots", "nodes"}`, nodes in
    /// depth-first pre-order, each `{"id","parentId","type","timestamp","label"?,"children"}`.
    pub fn write_json(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        use crate::json::write_str_escaped;
        let opt_str = |s: Option<&str>, out: &mut Vec<u8>| match s {
            Some(v) => write_str_escaped(v, out),
            None => out.extend_from_slice(b"null"),
        };
        // A string member (already decoded) or the member's raw value, `null` when absent.
        let member = |s: Option<&str>, key: &str, i: usize, out: &mut Vec<u8>| {
            if let Some(v) = s {
                return write_str_escaped(v, out);
            }
            let e = &doc.entries[i];
            match e.fields.get(doc.line(&e.line), key) {
                Some((raw, _)) => crate::json::write_canonical(raw, out),
                None => out.extend_from_slice(b"null"),
            }
        };
        out.extend_from_slice(b"{\"leaf\":");
        opt_str(
            doc.index.leaf.and_then(|i| doc.entries[i].id.as_deref()),
            out,
        );
        out.extend_from_slice(b",\"roots\":[");
        for (k, &r) in self.roots.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            opt_str(doc.entries[r].id.as_deref(), out);
        }
        out.extend_from_slice(b"],\"nodes\":[");
        for (k, i) in self.preorder().into_iter().enumerate() {
            let e = &doc.entries[i];
            if k > 0 {
                out.push(b',');
            }
            // Each field as the entry holds it (pi prints `entry.type`, `entry.timestamp`
            // verbatim: a numeric timestamp stays a number, a missing type is `null`).
            out.extend_from_slice(b"{\"id\":");
            member(e.id.as_deref(), "id", i, out);
            out.extend_from_slice(b",\"parentId\":");
            member(e.parent_id.as_deref(), "parentId", i, out);
            out.extend_from_slice(b",\"type\":");
            let ty = match &e.etype {
                EntryType::Other(t) if t.is_empty() => None,
                t => Some(t.name()),
            };
            member(ty, "type", i, out);
            out.extend_from_slice(b",\"timestamp\":");
            member(e.timestamp.as_deref(), "timestamp", i, out);
            if let Some(l) = e.id.as_deref().and_then(|id| doc.index.labels.get(id)) {
                out.extend_from_slice(b",\"label\":");
                write_str_escaped(l, out);
            }
            out.extend_from_slice(b",\"children\":[");
            for (c, &ch) in self.children[i].iter().enumerate() {
                if c > 0 {
                    out.push(b',');
                }
                opt_str(doc.entries[ch].id.as_deref(), out);
            }
            out.extend_from_slice(b"]}");
        }
        out.extend_from_slice(b"]}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_map_keeps_pi_map_order() {
        let mut m = LabelMap::default();
        m.apply("b", Some("L2"));
        m.apply("a", Some("L1"));
        m.apply("b", Some("L2b"));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            vec![("b", "L2b"), ("a", "L1")]
        );
        m.apply("b", Some(""));
        m.apply("b", Some("again"));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            vec![("a", "L1"), ("b", "again")]
        );
        m.apply("a", None);
        assert_eq!(m.get("a"), None);
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn v8_sort_without_nan_is_stable_ascending() {
        let ts = [3.0, 1.0, 2.0, 1.0];
        let mut v = vec![0, 1, 2, 3];
        sort_like_v8(&mut v, &ts);
        assert_eq!(v, vec![1, 3, 2, 0]);
    }

    #[test]
    fn v8_sort_with_nan_matches_binary_insertion() {
        // c2 (9s), c1 (7s), bad (NaN): pi's getTree gives c1, c2, bad.
        let ts = [9000.0, 7000.0, f64::NAN];
        let mut v = vec![0, 1, 2];
        sort_like_v8(&mut v, &ts);
        assert_eq!(v, vec![1, 0, 2]);
    }
}
