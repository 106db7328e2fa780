//! The context of a session that is being written: kept up to date as entries are appended,
//! at a cost proportional to what was appended, not to the length of the path.
//!
//! An agent asks for the context every turn. [`build_session_context`] walks the whole path
//! from the root (pi does the same), so over a long session the agent pays for the path again
//! at every turn. [`ContextCache`] remembers the last result and, when the new leaf descends
//! from the old one through appended entries only, folds just those entries in: the
//! messages they add are appended and the state (thinking level, model, models, TTSR rules,
//! mode, service tier) is updated. Anything else (a branch, a compaction, a reused id, a
//! `parentId` cycle, a replaced document) rebuilds from the path, so the result is always
//! exactly [`build_session_context`]`(doc, LeafSel::Current)`. omp's context is rebuilt at
//! every update: its post-processing passes (dangling tool calls, failed turns) look at the
//! whole path.
use crate::context::pi::{apply_entry, emit_entry, finish_default_model};
use crate::context::{build_session_context, LeafSel, SessionContext};
use crate::doc::{Dialect, SessionDoc};
use crate::entry::EntryType;

/// What [`ContextCache::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextChange {
    /// Nothing changed since the last update.
    Unchanged,
    /// Entries were appended below the old leaf: `messages[from..]` are new, the messages
    /// before `from` are as they were; the state fields may have changed.
    Extended {
        /// Index of the first new message.
        from: usize,
        /// Number of path entries folded in.
        entries: usize,
    },
    /// Built from the path (first use, a branch, a compaction, anything unusual).
    Rebuilt,
}

/// The context of the current leaf, maintained incrementally (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ContextCache {
    ctx: Option<SessionContext>,
    leaf: Option<usize>,
    leaf_id: Option<Box<str>>,
    entries: usize,
    ids: usize,
    dialect: Option<Dialect>,
    /// Address and length of the document's loaded bytes: a replaced document (reloaded,
    /// branched into a new file) has other bytes, and is rebuilt from.
    base: (usize, usize),
}

impl ContextCache {
    /// An empty cache: the first [`update`](Self::update) builds the context.
    pub fn new() -> ContextCache {
        ContextCache::default()
    }

    /// Forgets the cached context (the next update rebuilds it).
    pub fn invalidate(&mut self) {
        *self = ContextCache::default();
    }

    /// The context as of the last [`update`](Self::update) (`None` before the first).
    pub fn context(&self) -> Option<&SessionContext> {
        self.ctx.as_ref()
    }

    /// Brings the context up to date with `doc`'s current leaf and tells what changed. The
    /// result equals `build_session_context(doc, LeafSel::Current)`.
    pub fn update(&mut self, doc: &SessionDoc) -> ContextChange {
        match self.try_extend(doc) {
            Some(change) => change,
            None => {
                self.rebuild(doc);
                ContextChange::Rebuilt
            }
        }
    }

    /// Updates and returns the context.
    pub fn get(&mut self, doc: &SessionDoc) -> &SessionContext {
        self.update(doc);
        match self.ctx {
            Some(ref c) => c,
            None => unreachable_context(),
        }
    }

    fn rebuild(&mut self, doc: &SessionDoc) {
        let ctx = build_session_context(doc, LeafSel::Current);
        self.leaf = doc.index.leaf;
        self.leaf_id = self
            .leaf
            .and_then(|i| doc.entries.get(i))
            .and_then(|e| e.id.clone());
        self.entries = doc.entries.len();
        self.ids = doc.index.id_count();
        self.dialect = Some(ctx.dialect());
        self.base = base_of(doc);
        self.ctx = Some(ctx);
    }

    /// `None`: rebuild.
    fn try_extend(&mut self, doc: &SessionDoc) -> Option<ContextChange> {
        let Some(SessionContext::Pi(ctx)) = self.ctx.as_mut() else {
            return None;
        };
        if ctx.cycle
            || ctx.empty
            || self.dialect != Some(doc.dialect())
            || self.base != base_of(doc)
        {
            return None;
        }
        let (old, new) = (self.leaf?, doc.index.leaf?);
        let n = doc.entries.len();
        // The document must still be the one the context was built from, plus appends.
        if n < self.entries || doc.entries.get(old)?.id != self.leaf_id {
            return None;
        }
        if old == new && n == self.entries {
            return Some(ContextChange::Unchanged);
        }
        // Appended entries must bring new ids only (a reused id re-links the tree).
        let appended = doc.entries.get(self.entries..)?;
        let new_ids = appended.iter().filter(|e| e.id.is_some()).count();
        if doc.index.id_count() != self.ids + new_ids {
            return None;
        }
        // Walk up from the new leaf through appended entries to the old leaf.
        let mut suffix = Vec::new();
        let mut cur = new;
        while cur != old {
            if cur < self.entries || suffix.len() >= appended.len() {
                return None;
            }
            suffix.push(cur);
            cur = doc.index.parent(doc, cur)?;
        }
        // A compaction restarts the context; a context edit (pi 1.5) changes an earlier
        // message, and so may a message an earlier edit already names.
        if ctx.has_edits
            || suffix.iter().any(|&i| {
                matches!(
                    doc.entries[i].etype,
                    EntryType::Compaction | EntryType::ContextEdit
                )
            })
        {
            return None;
        }
        suffix.reverse();
        let from = ctx.messages.len();
        let (mut compaction, mut default_model) = (None, None);
        for &i in &suffix {
            apply_entry(ctx, doc, i, &mut compaction, &mut default_model);
            emit_entry(ctx, doc, i);
            ctx.path.push(i);
        }
        finish_default_model(ctx, doc, default_model);
        self.leaf = Some(new);
        self.leaf_id = doc.entries[new].id.clone();
        self.entries = n;
        self.ids = doc.index.id_count();
        Some(ContextChange::Extended {
            from,
            entries: suffix.len(),
        })
    }
}

fn base_of(doc: &SessionDoc) -> (usize, usize) {
    let b = doc.base_bytes();
    (b.as_ptr() as usize, b.len())
}

#[cold]
fn unreachable_context() -> ! {
    panic!("ContextCache::update always leaves a context")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn line(id: &str, parent: Option<&str>, body: &str) -> Vec<u8> {
        let p = parent
            .map(|p| format!("\"{p}\""))
            .unwrap_or_else(|| "null".into());
        format!(
            r#"{{"type":{body},"id":"{id}","parentId":{p},"timestamp":"2025-01-01T00:00:00.000Z"}}"#
        )
        .replace(r#"{"type":{"#, "{")
        .into_bytes()
    }

    fn msg(role: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","message":{{"role":"{role}","content":"{text}","provider":"p","model":"m{text}","timestamp":1}}"#
        )
    }

    fn json(doc: &SessionDoc, ctx: &SessionContext) -> Vec<u8> {
        let mut out = Vec::new();
        ctx.write_json(doc, &mut out);
        out
    }

    fn check(cache: &mut ContextCache, doc: &SessionDoc) -> ContextChange {
        let change = cache.update(doc);
        let full = build_session_context(doc, LeafSel::Current);
        let inc = cache.context().expect("context");
        assert_eq!(json(doc, inc), json(doc, &full));
        assert_eq!(inc.path(), full.path());
        assert_eq!(inc.outline(), full.outline());
        change
    }

    fn doc() -> SessionDoc {
        let header = br#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
"#;
        SessionDoc::parse(Arc::new(header.to_vec())).expect("header parses")
    }

    #[test]
    fn appends_extend_branches_and_compactions_rebuild() {
        let mut d = doc();
        let mut cache = ContextCache::new();
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
        d.push_line(line("a", None, &msg("user", "hi")))
            .expect("line");
        assert_eq!(
            check(&mut cache, &d),
            ContextChange::Rebuilt,
            "empty contexts are rebuilt"
        );
        d.push_line(line("b", Some("a"), &msg("assistant", "yo")))
            .expect("line");
        assert_eq!(
            check(&mut cache, &d),
            ContextChange::Extended {
                from: 1,
                entries: 1
            }
        );
        assert_eq!(check(&mut cache, &d), ContextChange::Unchanged);
        d.push_line(line(
            "c",
            Some("b"),
            r#"{"type":"thinking_level_change","thinkingLevel":"high""#,
        ))
        .expect("line");
        d.push_line(line(
            "d",
            Some("c"),
            r#"{"type":"model_change","provider":"x","modelId":"y""#,
        ))
        .expect("line");
        d.push_line(line("e", Some("d"), &msg("user", "more")))
            .expect("line");
        assert_eq!(
            check(&mut cache, &d),
            ContextChange::Extended {
                from: 2,
                entries: 3
            }
        );
        d.push_line(line(
            "f",
            Some("e"),
            r#"{"type":"label","targetId":"a","label":"L""#,
        ))
        .expect("line");
        d.push_line(line(
            "g",
            Some("f"),
            r#"{"type":"custom_message","customType":"t","content":"c","display":true"#,
        ))
        .expect("line");
        d.push_line(line(
            "h",
            Some("g"),
            r#"{"type":"branch_summary","fromId":"g","summary":"s""#,
        ))
        .expect("line");
        assert_eq!(
            check(&mut cache, &d),
            ContextChange::Extended {
                from: 3,
                entries: 3
            }
        );
        // A branch: the new entry's parent is not the old leaf.
        d.push_line(line("i", Some("b"), &msg("user", "other")))
            .expect("line");
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
        d.push_line(line("j", Some("i"), &msg("assistant", "ok")))
            .expect("line");
        assert!(matches!(
            check(&mut cache, &d),
            ContextChange::Extended { .. }
        ));
        // A compaction rebuilds; entries after it extend again.
        d.push_line(line(
            "k",
            Some("j"),
            r#"{"type":"compaction","summary":"S","firstKeptEntryId":"i","tokensBefore":5"#,
        ))
        .expect("line");
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
        d.push_line(line("l", Some("k"), &msg("user", "after")))
            .expect("line");
        assert!(matches!(
            check(&mut cache, &d),
            ContextChange::Extended { .. }
        ));
        // A reused id rebuilds.
        d.push_line(line("a", Some("l"), &msg("user", "dup")))
            .expect("line");
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
        // Moving the leaf back (pi's branch()) rebuilds.
        d.index.leaf = d.index.get("e");
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
        // Resetting the leaf gives the empty context.
        d.index.leaf = None;
        assert_eq!(check(&mut cache, &d), ContextChange::Rebuilt);
    }

    #[test]
    fn random_appends_and_branches_match_full_builds() {
        // A deterministic walk: appends of every kind, with a branch now and then.
        let kinds = [
            msg("user", "u"),
            msg("assistant", "a"),
            msg("toolResult", "t"),
            r#"{"type":"thinking_level_change","thinkingLevel":"low""#.to_string(),
            r#"{"type":"model_change","provider":"x","modelId":"y""#.to_string(),
            r#"{"type":"custom","customType":"c","data":1"#.to_string(),
            r#"{"type":"custom_message","customType":"t","content":"c","display":false"#
                .to_string(),
            r#"{"type":"branch_summary","fromId":"x","summary":"""#.to_string(),
        ];
        let mut d = doc();
        let mut cache = ContextCache::new();
        let mut s: u64 = 12345;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut extended = 0;
        for n in 0..400u64 {
            let r = next();
            let id = format!("e{n}");
            if r % 17 == 0 && !d.entries.is_empty() {
                let k = (next() % d.entries.len() as u64) as usize;
                d.index.leaf = Some(k);
            }
            let parent = d
                .index
                .leaf
                .and_then(|i| d.entries[i].id.as_deref().map(str::to_string));
            let kind = &kinds[(next() % kinds.len() as u64) as usize];
            d.push_line(line(&id, parent.as_deref(), kind))
                .expect("line");
            if r % 3 != 0 && matches!(check(&mut cache, &d), ContextChange::Extended { .. }) {
                extended += 1;
            }
        }
        assert!(extended > 100, "{extended}");
    }
}
