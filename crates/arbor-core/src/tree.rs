//! The tree index: entries by id, labels, the leaf, paths and pi's `getTree()` order.
use crate::doc::SessionDoc;
use crate::entry::{EntryType, IdKey};
use std::collections::{HashMap, HashSet};

/// Labels by target id, in pi's `Map` order: a new target goes to the end, re-setting keeps
/// its place, clearing removes it (so clear-then-set moves it to the end). Targets are keyed as
/// pi keys them ([`IdKey`]: a lone surrogate is not U+FFFD); a label is any truthy value (pi
/// keeps `42` or `["x"]` as the label), read as text through JS `String()`.
#[derive(Debug, Clone, Default)]
pub struct LabelMap {
    slots: Vec<Option<Label>>,
    pos: HashMap<IdKey, usize>,
}

/// A label's text and, when it is not a string, its JSON.
type LabelValue = (Box<str>, Option<Box<[u8]>>);

#[derive(Debug, Clone)]
struct Label {
    /// The target id as text (lossy for a lone surrogate).
    target: Box<str>,
    /// `String(label)`.
    text: Box<str>,
    /// The label's JSON when it is not a string (a number, an array, an object).
    raw: Option<Box<[u8]>>,
}

impl LabelMap {
    /// Sets (truthy label) or clears (empty or absent label) the label of `target`.
    pub fn apply(&mut self, target: &str, label: Option<&str>) {
        let label = label.filter(|l| !l.is_empty()).map(|l| (l.into(), None));
        self.apply_key(IdKey::str(target), target, label);
    }

    /// pi's `if (entry.label) labelsById.set(entry.targetId, entry.label) else delete`, for a
    /// label entry's raw `targetId` and `label` members.
    pub fn apply_raw(
        &mut self,
        target: Option<(&[u8], crate::json::ValueKind)>,
        label: Option<(&[u8], crate::json::ValueKind)>,
    ) {
        let key = IdKey::from_raw(target);
        let shown = target
            .and_then(|(r, k)| crate::entry::raw_str(r, k))
            .map_or_else(String::new, |s| s.into_owned());
        let value = crate::js::truthy_raw(label).then(|| {
            let (raw, kind) = label.expect("truthy: present");
            match crate::entry::raw_str(raw, kind) {
                Some(t) if kind == crate::json::ValueKind::String => (t.into_owned().into(), None),
                _ => {
                    let v = crate::json::JsValue::parse(raw).ok();
                    let text = crate::js::to_js_str(v.as_ref());
                    (
                        text.to_string_lossy().into_owned().into(),
                        Some(raw.to_vec().into_boxed_slice()),
                    )
                }
            }
        });
        self.apply_key(key, &shown, value);
    }

    fn apply_key(&mut self, key: IdKey, target: &str, label: Option<LabelValue>) {
        if key == IdKey::Object {
            return; // a Map key by identity: no entry's id is that object
        }
        match label {
            Some((text, raw)) => {
                let l = Label {
                    target: target.into(),
                    text,
                    raw,
                };
                if let Some(&i) = self.pos.get(&key) {
                    self.slots[i] = Some(l);
                } else {
                    self.pos.insert(key, self.slots.len());
                    self.slots.push(Some(l));
                }
            }
            None => {
                if let Some(i) = self.pos.remove(&key) {
                    self.slots[i] = None;
                }
            }
        }
    }
    /// The label of `target`.
    pub fn get(&self, target: &str) -> Option<&str> {
        self.get_key(&IdKey::str(target))
    }
    /// The label of the entry with `key`.
    pub fn get_key(&self, key: &IdKey) -> Option<&str> {
        let i = *self.pos.get(key)?;
        self.slots[i].as_ref().map(|l| l.text.as_ref())
    }
    /// Writes the label of the entry with `key` as pi's JSON has it (a string, or the value
    /// as written); false when there is none.
    pub fn write_json(&self, key: &IdKey, out: &mut Vec<u8>) -> bool {
        let Some(l) = self.pos.get(key).and_then(|&i| self.slots[i].as_ref()) else {
            return false;
        };
        match &l.raw {
            Some(raw) => crate::json::write_canonical(raw, out),
            None => crate::json::write_str_escaped(&l.text, out),
        }
        true
    }
    /// (target, label) pairs in map order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.slots
            .iter()
            .flatten()
            .map(|l| (l.target.as_ref(), l.text.as_ref()))
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
    /// Entries by `id` as pi's `byId` Map keys them ([`IdKey`]; objects are not keys).
    by_id: HashMap<IdKey, usize>,
    /// How many keys of `by_id` are strings ([`TreeIndex::id_count`]).
    str_ids: usize,
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
        if e.key != IdKey::Object
            && self.by_id.insert(e.key.clone(), i).is_none()
            && matches!(e.key, IdKey::Str(_))
        {
            self.str_ids += 1;
        }
        // pi's leaf is the last entry's id; a `null` id is pi's null leaf (empty context).
        self.leaf = (e.key != IdKey::Null).then_some(i);
        if self.omp_mark.is_none() && crate::doc::is_omp_mark(doc.line(&e.line), e) {
            self.omp_mark = Some(i);
        }
        if e.etype == EntryType::Label {
            let line = doc.line(&e.line);
            self.labels
                .apply_raw(e.fields.get(line, "targetId"), e.fields.get(line, "label"));
        }
    }

    /// The entry index for `id` (the last entry with that id).
    pub fn get(&self, id: &str) -> Option<usize> {
        self.by_id.get(&IdKey::str(id)).copied()
    }

    /// The entry index for a key (the last entry with it), as pi's `Map.get`.
    pub fn get_key(&self, key: &IdKey) -> Option<usize> {
        if *key == IdKey::Object {
            return None;
        }
        self.by_id.get(key).copied()
    }

    /// Number of distinct string ids (an entry without one, a number or `null` is not counted).
    pub fn id_count(&self) -> usize {
        self.str_ids
    }

    /// The index of the parent of entry `i`, if its `parentId` names a known entry. As pi's
    /// parent walk: `current.parentId ? byId.get(current.parentId) : undefined` (`""` and `0`
    /// are no parent; `5` names the entry with id `5`).
    pub fn parent(&self, doc: &SessionDoc, i: usize) -> Option<usize> {
        let p = &doc.entries[i].parent_key;
        if !p.truthy() {
            return None;
        }
        self.get_key(p)
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
        // pi: `parentId === null || parentId === id` is a root, else the node `nodeMap` has
        // for `parentId` (any key: `""`, `5`, `undefined`), else an orphan root.
        for (i, e) in doc.entries.iter().enumerate() {
            if e.key != IdKey::Object && self.get_key(&e.key) != Some(i) {
                hidden.push(i);
                continue;
            }
            if e.parent_key == IdKey::Null || e.parent_key.strict_eq(&e.key) {
                roots.push(i);
                continue;
            }
            match self.get_key(&e.parent_key) {
                Some(pi) => children[pi].push(i),
                None => roots.push(i),
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
        // A string member (already decoded) or the member's raw value, `null` when absent.
        // (The raw value first: a string with a lone surrogate is written back as pi writes
        // it, `\ud800`, not as its lossy decoding.)
        let member = |s: Option<&str>, key: &str, i: usize, out: &mut Vec<u8>| {
            let e = &doc.entries[i];
            match (e.fields.get(doc.line(&e.line), key), s) {
                (Some((raw, _)), _) => crate::json::write_canonical(raw, out),
                (None, Some(v)) => write_str_escaped(v, out),
                (None, None) => out.extend_from_slice(b"null"),
            }
        };
        // An entry's id as pi holds it (a number stays a number; none: `null`).
        let id_of = |i: usize, out: &mut Vec<u8>| {
            let e = &doc.entries[i];
            if e.non_object {
                out.extend_from_slice(b"null");
            } else {
                member(e.id.as_deref(), "id", i, out);
            }
        };
        out.extend_from_slice(b"{\"leaf\":");
        match doc.index.leaf {
            Some(i) => id_of(i, out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"roots\":[");
        for (k, &r) in self.roots.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            id_of(r, out);
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
            if e.non_object {
                out.extend_from_slice(b",\"raw\":");
                crate::json::write_canonical(doc.line(&e.line), out);
            }
            // pi: `labelsById.get(entry.id)`, any key (an entry without an id has the label
            // of a label entry without a `targetId`).
            let mark = out.len();
            out.extend_from_slice(b",\"label\":");
            if !doc.index.labels.write_json(&e.key, out) {
                out.truncate(mark);
            }
            out.extend_from_slice(b",\"children\":[");
            for (c, &ch) in self.children[i].iter().enumerate() {
                if c > 0 {
                    out.push(b',');
                }
                id_of(ch, out);
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
