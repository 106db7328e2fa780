//! The merge of a diverged tree: where the shared entries go in the local file, and their
//! order (parents first).
use std::collections::{HashMap, HashSet};

/// Where the shared lines `incoming` go in the local `lines`: right before the last line, so
/// that pi (which resumes at the last line) stays on this machine's leaf; at the end when the
/// last line is not an entry (a header only), when an incoming line has no id, or when the
/// incoming entries continue from the last line (the conversation went on elsewhere).
/// Every incoming entry's parent must be an entry of either side (the order of lines in a
/// file is not always parents-first: a line pi wrote during a merge, a repair, another
/// writer); the caller writes `incoming` parents-first ([`parents_first`]). Returns the
/// position, or why not.
pub(crate) fn placement(lines: &[Vec<u8>], incoming: &[&Vec<u8>]) -> Result<usize, String> {
    let n = lines.len();
    let last = lines.last().map(|l| arbor_core::entry::extract(l));
    let incoming_x: Vec<_> = incoming
        .iter()
        .map(|l| arbor_core::entry::extract(l))
        .collect();
    let keep_leaf = match &last {
        Some(x) if x.etype.as_deref() != Some("session") => match &x.id {
            Some(leaf) => incoming_x
                .iter()
                .all(|e| e.id.is_some() && e.parent_id.as_deref() != Some(leaf.as_str())),
            None => false,
        },
        _ => false,
    };
    let at = if keep_leaf { n - 1 } else { n };
    let known: HashSet<String> = lines
        .iter()
        .filter_map(|l| arbor_core::entry::extract(l).id)
        .chain(incoming_x.iter().filter_map(|e| e.id.clone()))
        .collect();
    for e in &incoming_x {
        if let (Some(id), Some(p)) = (&e.id, &e.parent_id) {
            if !known.contains(p) {
                return Err(format!(
                    "entry {id} of the shared copy names parent {p}, which is on neither side"
                ));
            }
        }
    }
    Ok(at)
}

/// The indices of `lines` in an order where every entry comes after its parent when the
/// parent is among them; otherwise in their own order (stable; lines without an id, and
/// cycles, stay where they are met).
pub(crate) fn parents_first(lines: &[&Vec<u8>]) -> Vec<usize> {
    let xs: Vec<_> = lines
        .iter()
        .map(|l| arbor_core::entry::extract(l))
        .collect();
    let at: HashMap<&str, usize> = xs
        .iter()
        .enumerate()
        .filter_map(|(i, x)| x.id.as_deref().map(|id| (id, i)))
        .collect();
    let mut done = vec![false; lines.len()];
    let mut on_chain = vec![false; lines.len()];
    let mut out = Vec::with_capacity(lines.len());
    for i in 0..lines.len() {
        // The chain of not yet written ancestors of line i within `lines`, oldest last.
        let mut chain = Vec::new();
        let mut j = i;
        while !done[j] && !on_chain[j] {
            on_chain[j] = true;
            chain.push(j);
            match xs[j].parent_id.as_deref().and_then(|p| at.get(p)) {
                Some(&k) => j = k,
                None => break,
            }
        }
        for &k in chain.iter().rev() {
            done[k] = true;
            out.push(k);
        }
    }
    out
}
