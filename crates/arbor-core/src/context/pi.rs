//! pi's `buildSessionContext` (1.5.2, `buildSessionProjection`): the messages, thinking level
//! and model of a leaf of a pi session, and the JSON pi's `JSON.stringify` writes for them.
//!
//! pi 1.5 reads every file as 0.73.1 did except where the new features appear: `system`
//! messages (kept in place; those before a compaction's first kept entry dropped), a
//! compaction's `systemMessage` (emitted before its summary), `context_edit` entries (the last
//! edit of an entry in the context replaces its content, `null` removes its messages), and
//! `null` contents read as `[]` (`""` for system messages; a custom message's missing content
//! too). `docs/pi-versions.md` lists the rules and the goldens behind them.
use super::{leaf_index, write_member, write_model, CtxMessage, LeafSel, ModelSource};
use crate::doc::SessionDoc;
use crate::entry::{EntryType, Role};
use crate::json::JsValue;
use crate::json::{self, write_canonical, write_str_escaped, ValueKind};
use std::collections::HashMap;
use std::io;

/// pi's context for a leaf ([`super::SessionContext::Pi`]): message and setting references
/// into the document it was built from.
#[derive(Debug, Clone, Default)]
pub struct PiContext {
    /// Messages in order.
    pub(crate) messages: Vec<CtxMessage>,
    /// The last `thinking_level_change` on the path (`None`: `"off"`).
    pub(crate) thinking_level: Option<usize>,
    /// Where the model comes from.
    pub(crate) model: ModelSource,
    /// The model map (role → `provider/modelId`), in first-set order.
    pub(crate) models: Vec<(String, String)>,
    /// Injected TTSR rules, first-seen order, de-duplicated.
    pub(crate) injected_ttsr_rules: Vec<String>,
    /// The last `mode_change` on the path.
    pub(crate) mode: Option<usize>,
    /// The path from the root to the leaf (entry indices).
    pub(crate) path: Vec<usize>,
    /// The path walk met a `parentId` cycle and was cut.
    pub(crate) cycle: bool,
    /// The explicit empty context (`null` leaf or no entries).
    pub(crate) empty: bool,
    /// `Message` and `Custom` messages whose JSON is not what their entry alone gives (a
    /// `null` content read as pi 1.5 reads it, a context edit's replacement), by entry index:
    /// the whole message as pi stringifies it.
    pub(crate) rewritten: HashMap<usize, Vec<u8>>,
    /// A `context_edit` entry is in the context (appending may change earlier messages).
    pub(crate) has_edits: bool,
    /// The entries whose content a context edit replaced, with the edit's entry index.
    pub(crate) edited: HashMap<usize, usize>,
}

impl PiContext {
    /// The messages in order, by the entries they come from.
    pub fn messages(&self) -> &[CtxMessage] {
        &self.messages
    }

    /// The JSON of message `m` when it is not its entry's stored payload (a `null` content
    /// read as pi 1.5 reads it, a context edit's replacement).
    pub(crate) fn rewritten(&self, m: CtxMessage) -> Option<&[u8]> {
        if self.rewritten.is_empty() {
            return None;
        }
        match m {
            CtxMessage::Message(i) | CtxMessage::Custom(i) => {
                self.rewritten.get(&i).map(Vec::as_slice)
            }
            _ => None,
        }
    }

    /// pi-ai's `getCurrentSystemMessage` over this context's messages (what pi 1.5's
    /// `appendCompaction` stores as `systemMessage`): every system message replayed into one,
    /// later `content` appended to the base prompt (`\n\n` between non-empty texts),
    /// `sections` patched by name (`null` deletes), tools resolved (`toolsRemoved` then
    /// `toolsAdded`, by name), the first system message's `timestamp`. `None` when the
    /// context has no system message and no tools.
    pub fn current_system_message(&self, doc: &SessionDoc) -> Option<JsValue> {
        let mut content: Vec<String> = Vec::new();
        let mut sections: Vec<(json::JsStr, JsValue)> = Vec::new();
        let mut tools: Vec<(json::JsStr, JsValue)> = Vec::new();
        let mut timestamp: Option<JsValue> = None;
        for &m in &self.messages {
            // Only system messages fold (edits never change a role): the others are not
            // written and parsed, which on a long session would be all of it.
            let system = match m {
                CtxMessage::Message(i) => doc.entries[i].role == Some(Role::System),
                CtxMessage::CompactionSystem(_) => true,
                _ => false,
            };
            if !system {
                continue;
            }
            let mut raw = Vec::new();
            self.write_message(doc, m, &mut raw);
            let Ok(v) = JsValue::parse(&raw) else {
                continue;
            };
            if v.get("role")
                .and_then(JsValue::as_js_str)
                .map(|r| r.0.as_slice())
                != Some(b"system")
            {
                continue;
            }
            // `timestamp ??= message.timestamp`
            if timestamp.is_none() {
                timestamp = v.get("timestamp").filter(|t| **t != JsValue::Null).cloned();
            }
            let text = match v.get("content") {
                Some(JsValue::String(s)) => s.to_string_lossy().into_owned(),
                Some(JsValue::Array(blocks)) => blocks
                    .iter()
                    .filter(|b| {
                        b.get("type")
                            .and_then(JsValue::as_js_str)
                            .map(|t| t.0.as_slice())
                            == Some(b"text")
                    })
                    .map(|b| match b.get("text") {
                        // `Array.prototype.join` writes `undefined` and `null` as "".
                        None | Some(JsValue::Null) => String::new(),
                        t => {
                            let mut out = Vec::new();
                            crate::js::to_string(t, &mut out);
                            String::from_utf8_lossy(&out).into_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            if !text.is_empty() {
                content.push(text);
            }
            if let Some(JsValue::Object(patch)) = v.get("sections") {
                // A Map: `set` keeps an existing key's place, `delete` then `set` moves it last.
                for (name, value) in patch {
                    let at = sections.iter().position(|(n, _)| n == name);
                    match (at, value) {
                        (Some(k), JsValue::Null) => {
                            sections.remove(k);
                        }
                        (None, JsValue::Null) => {}
                        (Some(k), v) => sections[k].1 = v.clone(),
                        (None, v) => sections.push((name.clone(), v.clone())),
                    }
                }
            }
            for (key, add) in [("toolsRemoved", false), ("toolsAdded", true)] {
                if let Some(JsValue::Array(list)) = v.get(key) {
                    for t in list {
                        let name = t.get("name").map(|n| crate::js::to_js_str(Some(n)));
                        let Some(name) = name else { continue };
                        if add {
                            match tools.iter_mut().find(|(n, _)| *n == name) {
                                Some(slot) => slot.1 = t.clone(),
                                None => tools.push((name, t.clone())),
                            }
                        } else {
                            tools.retain(|(n, _)| *n != name);
                        }
                    }
                }
            }
        }
        if timestamp.is_none() && tools.is_empty() {
            return None;
        }
        let mut out = vec![
            (
                json::JsStr::from("role"),
                JsValue::String(json::JsStr::from("system")),
            ),
            (
                json::JsStr::from("content"),
                JsValue::String(json::JsStr::from(content.join("\n\n").as_str())),
            ),
        ];
        if !sections.is_empty() {
            out.push((json::JsStr::from("sections"), JsValue::Object(sections)));
        }
        if !tools.is_empty() {
            out.push((
                json::JsStr::from("toolsAdded"),
                JsValue::Array(tools.into_iter().map(|(_, t)| t).collect()),
            ));
        }
        out.push((
            json::JsStr::from("timestamp"),
            timestamp.unwrap_or(JsValue::Number(0.0)),
        ));
        Some(JsValue::Object(out))
    }

    /// The entries whose lines writing the context reads.
    pub(crate) fn entries_read(&self) -> impl Iterator<Item = usize> + '_ {
        let model = match self.model {
            ModelSource::Change(i) | ModelSource::Assistant(i) => Some(i),
            ModelSource::None => None,
        };
        self.messages
            .iter()
            .map(|m| m.entry())
            .chain(self.thinking_level)
            .chain(model)
            .chain(self.mode)
    }
}

impl PiContext {
    /// Builds pi's context for `leaf`, as pi's `buildSessionContext(entries, leafId, byId)`,
    /// whatever `doc`'s dialect ([`super::build_session_context`] picks the rules by the dialect).
    pub fn build(doc: &SessionDoc, leaf: LeafSel<'_>) -> PiContext {
        let mut ctx = PiContext {
            empty: true,
            ..PiContext::default()
        };
        let Some(leaf_idx) = leaf_index(doc, leaf) else {
            return ctx;
        };
        ctx.empty = false;
        let path = doc.index.path(doc, leaf_idx);
        ctx.cycle = path.cycle;
        let path = path.entries;
        let mut compaction: Option<usize> = None;
        let mut default_model: Option<usize> = None;
        let mut saw_edit = false;
        for &i in &path {
            saw_edit |= doc.entries[i].etype == EntryType::ContextEdit;
            apply_entry(&mut ctx, doc, i, &mut compaction, &mut default_model);
        }
        finish_default_model(&mut ctx, doc, default_model);
        // pi 1.5's buildContextEntries: the latest compaction, then the entries it kept (from
        // `firstKeptEntryId`, system messages left out: the compaction's `systemMessage` stands
        // for them), then everything after it. Only the first (the latest compaction) makes
        // messages.
        let kept: Vec<usize>;
        let context_entries: &[usize] = match compaction {
            Some(c) => {
                let ce = &doc.entries[c];
                let cline = doc.line(&ce.line);
                // The first path entry with the compaction's id (1.5 no longer checks its type).
                // (`entry.id === compaction.id`: JS strict equality of any values.)
                let cpos = path
                    .iter()
                    .position(|&i| i == c || doc.entries[i].key.strict_eq(&ce.key))
                    .unwrap_or(0);
                let first_kept =
                    crate::entry::IdKey::from_raw(ce.fields.get(cline, "firstKeptEntryId"));
                let mut found = false;
                let mut v = vec![c];
                for &i in &path[..cpos] {
                    if doc.entries[i].key.strict_eq(&first_kept) {
                        found = true;
                    }
                    if found && doc.entries[i].role != Some(Role::System) {
                        v.push(i);
                    }
                }
                v.extend_from_slice(&path[cpos + 1..]);
                kept = v;
                &kept
            }
            None => &path,
        };
        // The latest edit of each entry among them (looked up only when there is one).
        // Keyed as pi's Map: any `targetId` value (absent: `undefined`, which is the key of
        // every entry without an id).
        let mut edits: HashMap<crate::entry::IdKey, usize> = HashMap::new();
        if saw_edit {
            for &i in context_entries {
                let e = &doc.entries[i];
                if e.etype == EntryType::ContextEdit {
                    let target =
                        crate::entry::IdKey::from_raw(e.fields.get(doc.line(&e.line), "targetId"));
                    if target != crate::entry::IdKey::Object {
                        edits.insert(target, i);
                    }
                }
            }
        }
        ctx.has_edits = !edits.is_empty();
        for (k, &i) in context_entries.iter().enumerate() {
            let from = ctx.messages.len();
            if doc.entries[i].etype == EntryType::Compaction {
                if k == 0 {
                    emit_compaction(&mut ctx, doc, i);
                }
            } else {
                emit_entry(&mut ctx, doc, i);
            }
            if ctx.has_edits {
                let edit = edits.get(&doc.entries[i].key);
                if let Some(&edit) = edit {
                    apply_edit(&mut ctx, doc, from, edit);
                }
            }
        }
        ctx.path = path;
        ctx
    }
}

fn set_model(models: &mut Vec<(String, String)>, role: &str, model: String) {
    if let Some(slot) = models.iter_mut().find(|(r, _)| r == role) {
        slot.1 = model;
    } else {
        models.push((role.to_string(), model));
    }
}

/// Folds path entry `i` into the context's state (thinking level, model, models, TTSR rules,
/// mode, service tier) and notes the latest compaction; messages are emitted separately.
/// The `default` role of the model map is only placed here; its value comes from the last
/// entry that sets it (`default_model`), read once by [`finish_default_model`] (reading the
/// provider and model of every assistant message of a long path cost half of the build).
pub(crate) fn apply_entry(
    ctx: &mut PiContext,
    doc: &SessionDoc,
    i: usize,
    compaction: &mut Option<usize>,
    default_model: &mut Option<usize>,
) {
    let e = &doc.entries[i];
    let line = doc.line(&e.line);
    match e.etype {
        EntryType::ThinkingLevelChange => ctx.thinking_level = Some(i),
        EntryType::ModelChange => {
            if let Some(m) = e.fields.str(line, "model").filter(|m| !m.is_empty()) {
                let role = e
                    .fields
                    .str(line, "role")
                    .map(|r| r.into_owned())
                    .unwrap_or_else(|| "default".into());
                if role == "default" {
                    place_default(ctx);
                    *default_model = Some(i);
                } else {
                    set_model(&mut ctx.models, &role, m.into_owned());
                }
            }
            ctx.model = ModelSource::Change(i);
        }
        EntryType::Message if e.role == Some(Role::Assistant) => {
            ctx.model = ModelSource::Assistant(i);
            place_default(ctx);
            *default_model = Some(i);
        }
        EntryType::Compaction => *compaction = Some(i),
        EntryType::TtsrInjection => {
            if let Some(json::JsValue::Array(rules)) =
                e.fields.value(line, "injectedRules").as_ref()
            {
                for r in rules {
                    if let Some(s) = r.as_str_lossy() {
                        if !ctx.injected_ttsr_rules.iter().any(|x| x == s.as_ref()) {
                            ctx.injected_ttsr_rules.push(s.into_owned());
                        }
                    }
                }
            }
        }
        EntryType::ModeChange => ctx.mode = Some(i),
        _ => {}
    }
}

/// Gives the model map's `default` role its place (first set, first listed), value to come.
fn place_default(ctx: &mut PiContext) {
    if !ctx.models.iter().any(|(r, _)| r == "default") {
        ctx.models.push(("default".to_string(), String::new()));
    }
}

/// Sets the `default` model from the last entry that set it: a `model_change`'s `model`, or
/// an assistant message's `provider/model` (`undefined` for a missing one, as pi's template
/// string writes it).
pub(crate) fn finish_default_model(
    ctx: &mut PiContext,
    doc: &SessionDoc,
    default_model: Option<usize>,
) {
    let Some(e) = default_model.and_then(|i| doc.entries.get(i)) else {
        return;
    };
    let line = doc.line(&e.line);
    let value = if e.etype == EntryType::ModelChange {
        e.fields
            .str(line, "model")
            .map(|m| m.into_owned())
            .unwrap_or_default()
    } else {
        let p = e.message_str(line, "provider");
        let m = e.message_str(line, "model");
        format!(
            "{}/{}",
            p.as_deref().unwrap_or("undefined"),
            m.as_deref().unwrap_or("undefined")
        )
    };
    set_model(&mut ctx.models, "default", value);
}

/// Appends the message path entry `i` contributes, if any.
pub(crate) fn emit_entry(ctx: &mut PiContext, doc: &SessionDoc, i: usize) {
    let e = &doc.entries[i];
    match e.etype {
        EntryType::Message => {
            // A `null` content is read as pi 1.5 reads it when the message is written
            // (`null_content_read`): checking every message here cost a quarter of a build.
            ctx.messages.push(CtxMessage::Message(i));
        }
        EntryType::CustomMessage => ctx.messages.push(CtxMessage::Custom(i)),
        EntryType::BranchSummary => {
            let line = doc.line(&e.line);
            if e.fields
                .value(line, "summary")
                .is_some_and(|v| v.is_truthy())
            {
                ctx.messages.push(CtxMessage::BranchSummary(i));
            }
        }
        _ => {}
    }
}

/// The latest compaction's messages: its `systemMessage` when truthy, then its summary.
fn emit_compaction(ctx: &mut PiContext, doc: &SessionDoc, c: usize) {
    let e = &doc.entries[c];
    if crate::js::truthy_raw(e.fields.get(doc.line(&e.line), "systemMessage")) {
        ctx.messages.push(CtxMessage::CompactionSystem(c));
    }
    ctx.messages.push(CtxMessage::CompactionSummary(c));
}

/// pi 1.5 reads a `null` or missing `content` of a system message as `""` and of a user,
/// assistant or tool result message as `[]` (`{...message, content}`: in place, or last when
/// missing). The message as it is then, or `None` when it is read as stored.
pub(super) fn null_content_read(doc: &SessionDoc, i: usize) -> Option<JsValue> {
    let e = &doc.entries[i];
    if !matches!(e.content, None | Some(ValueKind::Null)) || e.message.is_none() {
        return None;
    }
    let empty = match e.role {
        Some(Role::System) => JsValue::String(json::JsStr::from("")),
        Some(Role::User | Role::Assistant | Role::ToolResult) => JsValue::Array(Vec::new()),
        _ => return None,
    };
    let mut v = e.fields.value(doc.line(&e.line), "message")?;
    v.set("content", empty);
    Some(v)
}

/// Applies context edit `edit` to the messages its target made (`ctx.messages[from..]`), as
/// pi 1.5's `projectContextEntry`: a `null` replacement removes them; otherwise the content
/// of a user, assistant, tool result or custom message becomes `replacement.content` (a
/// string as one text block for assistant and tool result messages; `undefined`, from a
/// replacement without content, leaves the key unwritten). An edit without `replacement`
/// makes pi throw; arbor leaves the messages as they are.
fn apply_edit(ctx: &mut PiContext, doc: &SessionDoc, from: usize, edit: usize) {
    let e = &doc.entries[edit];
    let line = doc.line(&e.line);
    let Some((raw, kind)) = e.fields.get(line, "replacement") else {
        return;
    };
    if kind == ValueKind::Null {
        for m in ctx.messages.drain(from..) {
            if let CtxMessage::Message(i) | CtxMessage::Custom(i) = m {
                ctx.rewritten.remove(&i);
            }
        }
        return;
    }
    let content = match JsValue::parse(raw) {
        Ok(v @ JsValue::Object(_)) => v.get("content").cloned(),
        _ => None,
    };
    for k in from..ctx.messages.len() {
        let m = ctx.messages[k];
        let i = match m {
            CtxMessage::Message(i) | CtxMessage::Custom(i) => i,
            _ => continue,
        };
        let mut current = Vec::new();
        ctx.write_message(doc, m, &mut current);
        let Ok(mut v) = JsValue::parse(&current) else {
            continue;
        };
        let role = match v.get("role").and_then(JsValue::as_str_lossy) {
            Some(r) => Role::from_name(&r),
            None => continue,
        };
        if !matches!(
            role,
            Role::User | Role::Assistant | Role::ToolResult | Role::Custom
        ) {
            continue;
        }
        match edited_content(&role, content.as_ref()) {
            Some(c) => v.set("content", c),
            None => {
                // `{...message, content: undefined}`: the key keeps its place, unwritten.
                v.remove("content");
            }
        }
        ctx.rewritten.insert(i, v.to_json());
        ctx.edited.insert(i, edit);
    }
}

/// pi 1.5's content of a message a context edit replaced, from the replacement's `content`:
/// a string becomes one text block for an assistant message or a tool result
/// (`projectContextEntry`, and `appendContextEdit` stores it so); anything else is kept.
pub fn edited_content(role: &Role, content: Option<&JsValue>) -> Option<JsValue> {
    match (role, content) {
        (Role::Assistant | Role::ToolResult, Some(JsValue::String(s))) => {
            Some(JsValue::Array(vec![JsValue::Object(vec![
                (
                    json::JsStr::from("type"),
                    JsValue::String(json::JsStr::from("text")),
                ),
                (json::JsStr::from("text"), JsValue::String(s.clone())),
            ])]))
        }
        (_, c) => c.cloned(),
    }
}

/// A `message` entry's payload as pi stringifies it: written to `out`, or returned when its
/// stored bytes are already that (see [`json::canonical_or_keep`]); `null` when the entry has
/// none.
fn message_payload<'d>(doc: &'d SessionDoc, i: usize, out: &mut Vec<u8>) -> Option<&'d [u8]> {
    let e = &doc.entries[i];
    match e.fields.get(doc.line(&e.line), "message") {
        Some((raw, _)) => json::canonical_or_keep(raw, out),
        None => {
            out.extend_from_slice(b"null");
            None
        }
    }
}

/// Writes `,"timestamp":<new Date(entry.timestamp).getTime()>}`, the end of every message pi
/// makes from an entry.
fn write_time_and_close(doc: &SessionDoc, i: usize, out: &mut Vec<u8>) {
    let e = &doc.entries[i];
    out.extend_from_slice(br#","timestamp":"#);
    json::write_js_number(e.date_ms(doc.line(&e.line)), out);
    out.push(b'}');
}

/// The writer of a context's `messages` array, for substituting a conversion of them.
pub(crate) type MessagesWriter<'a> = &'a dyn Fn(&PiContext, &SessionDoc, &mut Vec<u8>);

impl PiContext {
    /// [`PiContext::write_message`], except that a message whose stored bytes are already
    /// what is to be written (a `message` entry's payload as `JSON.stringify` wrote it: nearly
    /// all of them) is not copied: those bytes, a slice of the session's line, are returned
    /// instead and nothing is written to `out`. A payload that is not valid JSON is also
    /// returned as it is, as `write_message` copies it.
    pub(crate) fn write_message_or_keep<'d>(
        &self,
        doc: &'d SessionDoc,
        m: CtxMessage,
        out: &mut Vec<u8>,
    ) -> Option<&'d [u8]> {
        match m {
            CtxMessage::Message(i)
                if self.rewritten.is_empty() || !self.rewritten.contains_key(&i) =>
            {
                match null_content_read(doc, i) {
                    Some(v) => {
                        out.extend_from_slice(&v.to_json());
                        None
                    }
                    None => message_payload(doc, i, out),
                }
            }
            _ => {
                self.write_message(doc, m, out);
                None
            }
        }
    }

    /// Writes one context message as pi's object would be stringified.
    pub fn write_message(&self, doc: &SessionDoc, m: CtxMessage, out: &mut Vec<u8>) {
        if let Some(r) = self.rewritten(m) {
            out.extend_from_slice(r);
            return;
        }
        let e = &doc.entries[m.entry()];
        match m {
            CtxMessage::CompactionSystem(_) => {
                match e.fields.get(doc.line(&e.line), "systemMessage") {
                    Some((raw, _)) => write_canonical(raw, out),
                    None => out.extend_from_slice(b"null"),
                }
            }
            CtxMessage::Message(i) => match null_content_read(doc, i) {
                Some(v) => out.extend_from_slice(&v.to_json()),
                None => {
                    if let Some(kept) = message_payload(doc, i, out) {
                        out.extend_from_slice(kept);
                    }
                }
            },
            CtxMessage::Custom(i) => {
                out.extend_from_slice(br#"{"role":"custom""#);
                write_member(doc, e, "customType", "customType", out);
                // pi 1.5: `entry.content ?? []`.
                match e.fields.get(doc.line(&e.line), "content") {
                    None | Some((_, ValueKind::Null)) => out.extend_from_slice(br#","content":[]"#),
                    Some(_) => write_member(doc, e, "content", "content", out),
                }
                write_member(doc, e, "display", "display", out);
                write_member(doc, e, "details", "details", out);
                write_time_and_close(doc, i, out);
            }
            CtxMessage::BranchSummary(i) => {
                out.extend_from_slice(br#"{"role":"branchSummary""#);
                write_member(doc, e, "summary", "summary", out);
                write_member(doc, e, "fromId", "fromId", out);
                write_time_and_close(doc, i, out);
            }
            CtxMessage::CompactionSummary(i) => {
                out.extend_from_slice(br#"{"role":"compactionSummary""#);
                write_member(doc, e, "summary", "summary", out);
                write_member(doc, e, "tokensBefore", "tokensBefore", out);
                write_time_and_close(doc, i, out);
            }
        }
    }

    /// Writes the context as one JSON object: `messages, thinkingLevel, model, models,
    /// injectedTtsrRules, mode` and `modeData` (when set). `messages` is written by
    /// `write_messages`, so callers can substitute a conversion.
    pub(crate) fn write_json_with(
        &self,
        doc: &SessionDoc,
        out: &mut Vec<u8>,
        write_messages: MessagesWriter<'_>,
    ) {
        out.extend_from_slice(br#"{"messages":"#);
        write_messages(self, doc, out);
        // thinkingLevel: pi copies the entry's value as is (absent: key omitted).
        match self.thinking_level {
            None => out.extend_from_slice(br#","thinkingLevel":"off""#),
            Some(i) => {
                let e = &doc.entries[i];
                if let Some((raw, _)) = e.fields.get(doc.line(&e.line), "thinkingLevel") {
                    out.extend_from_slice(br#","thinkingLevel":"#);
                    write_canonical(raw, out);
                }
            }
        }
        out.extend_from_slice(br#","model":"#);
        write_model(doc, self.model, false, out);
        out.extend_from_slice(br#","models":{"#);
        for (k, (role, model)) in self.models.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            write_str_escaped(role, out);
            out.push(b':');
            write_str_escaped(model, out);
        }
        out.extend_from_slice(br#"},"injectedTtsrRules":["#);
        for (k, r) in self.injected_ttsr_rules.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            write_str_escaped(r, out);
        }
        out.extend_from_slice(br#"],"mode":"#);
        match self.mode {
            Some(i) => {
                let e = &doc.entries[i];
                match e.fields.get(doc.line(&e.line), "mode") {
                    Some((raw, _)) => write_canonical(raw, out),
                    None => out.extend_from_slice(b"null"),
                }
                write_member(doc, e, "data", "modeData", out);
            }
            None => out.extend_from_slice(br#""none""#),
        }
        out.push(b'}');
    }

    /// Writes the context as JSON with the messages as stored.
    pub fn write_json(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        self.write_json_with(doc, out, &|ctx, doc, out| {
            ctx.write_messages_from(doc, 0, out)
        });
    }

    /// Writes the messages from the `from`-th on as a JSON array.
    pub fn write_messages_from(&self, doc: &SessionDoc, from: usize, out: &mut Vec<u8>) {
        out.push(b'[');
        for (k, m) in self.messages.iter().skip(from).enumerate() {
            if k > 0 {
                out.push(b',');
            }
            self.write_message(doc, *m, out);
        }
        out.push(b']');
    }

    /// Writes [`PiContext::write_json`]'s bytes and a newline to `w` in bounded memory
    /// ([`super::stream`]).
    pub(crate) fn write_streaming(
        &self,
        doc: &SessionDoc,
        w: &mut dyn io::Write,
    ) -> io::Result<()> {
        super::stream::write_context_streaming(self, doc, w)
    }
}
