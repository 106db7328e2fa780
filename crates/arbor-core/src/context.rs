//! `buildSessionContext`: the messages an agent sends to the model for a leaf, exactly as pi
//! computes them (plus omp's `models`, `injectedTtsrRules`, `mode`, `modeData`).
//!
//! The result refers to entries by index; [`SessionContext::write_json`] splices the raw
//! message payloads into the output through [`crate::json::canonicalize`], so the bytes are
//! what `JSON.stringify` prints for pi's object, without a DOM of the messages.
use crate::doc::{Dialect, SessionDoc};
use crate::entry::{Entry, EntryType, Role};
use crate::json::{self, write_js_number, write_str_escaped, ValueKind};

/// Which leaf to build the context for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafSel<'a> {
    /// The session's current leaf (after load: the last entry, as pi picks on open).
    Current,
    /// pi's explicit `null` leaf (before the first entry): an empty context.
    Null,
    /// The entry with this id; an unknown id falls back to the last entry, as pi does.
    Id(&'a str),
}

/// One message of a context, by the entry it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtxMessage {
    /// A `message` entry's payload, as stored.
    Message(usize),
    /// A `custom_message` entry turned into a `custom` role message.
    Custom(usize),
    /// A `branch_summary` entry turned into a `branchSummary` message.
    BranchSummary(usize),
    /// The latest compaction on the path, as a `compactionSummary` message.
    CompactionSummary(usize),
}

impl CtxMessage {
    /// The entry the message comes from.
    pub fn entry(&self) -> usize {
        match *self {
            CtxMessage::Message(i)
            | CtxMessage::Custom(i)
            | CtxMessage::BranchSummary(i)
            | CtxMessage::CompactionSummary(i) => i,
        }
    }
}

/// Where the context's `model` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// No model on the path: `null`.
    None,
    /// A `model_change` entry.
    Change(usize),
    /// An assistant message's `provider` / `model`.
    Assistant(usize),
}

/// The result of [`build_session_context`].
#[derive(Debug, Clone)]
pub struct SessionContext {
    /// The dialect the output follows.
    pub dialect: Dialect,
    /// Messages in order.
    pub messages: Vec<CtxMessage>,
    /// The last `thinking_level_change` on the path (`None`: `"off"`).
    pub thinking_level: Option<usize>,
    /// Where the model comes from.
    pub model: ModelSource,
    /// omp's model map (role → `provider/modelId`), in first-set order.
    pub models: Vec<(String, String)>,
    /// omp's injected TTSR rules, first-seen order, de-duplicated.
    pub injected_ttsr_rules: Vec<String>,
    /// The last `mode_change` on the path.
    pub mode: Option<usize>,
    /// The last `service_tier_change` on the path (omp).
    pub service_tier: Option<usize>,
    /// The path from the root to the leaf (entry indices).
    pub path: Vec<usize>,
    /// The path walk met a `parentId` cycle and was cut (pi would hang).
    pub cycle: bool,
    /// The context is the explicit empty one (`null` leaf or no entries).
    pub empty: bool,
    /// omp's exact result for omp files (built by [`crate::context_omp`]); when set, it is
    /// what the writers print, and `messages` above is only its entry-level outline.
    pub omp: Option<Box<crate::context_omp::OmpContext>>,
}

fn set_model(models: &mut Vec<(String, String)>, role: &str, model: String) {
    if let Some(slot) = models.iter_mut().find(|(r, _)| r == role) {
        slot.1 = model;
    } else {
        models.push((role.to_string(), model));
    }
}

/// Builds the context for `leaf`, as pi's `buildSessionContext(entries, leafId, byId)`.
pub fn build_session_context(doc: &SessionDoc, leaf: LeafSel<'_>) -> SessionContext {
    let dialect = doc.dialect();
    if dialect == Dialect::Omp {
        return crate::context_omp::build_omp_context(doc, leaf, None);
    }
    let mut ctx = SessionContext {
        dialect,
        messages: Vec::new(),
        thinking_level: None,
        model: ModelSource::None,
        models: Vec::new(),
        injected_ttsr_rules: Vec::new(),
        mode: None,
        service_tier: None,
        path: Vec::new(),
        cycle: false,
        empty: true,
        omp: None,
    };
    let leaf_idx = match leaf {
        LeafSel::Null => return ctx,
        LeafSel::Current => match doc.index.leaf {
            Some(i) => Some(i),
            None if doc.entries.is_empty() => None,
            None => return ctx,
        },
        LeafSel::Id(id) => doc
            .index
            .get(id)
            .or_else(|| doc.entries.len().checked_sub(1)),
    };
    let Some(leaf_idx) = leaf_idx else {
        return ctx;
    };
    ctx.empty = false;
    let path = doc.index.path(doc, leaf_idx);
    ctx.cycle = path.cycle;
    let path = path.entries;
    let mut compaction: Option<usize> = None;
    let mut default_model: Option<usize> = None;
    for &i in &path {
        apply_entry(&mut ctx, doc, i, &mut compaction, &mut default_model);
    }
    finish_default_model(&mut ctx, doc, default_model);
    let emit = |ctx: &mut SessionContext, i: usize| emit_entry(ctx, doc, i);
    match compaction {
        Some(c) => {
            ctx.messages.push(CtxMessage::CompactionSummary(c));
            let ce = &doc.entries[c];
            let cline = doc.line(&ce.line);
            // pi: the first path entry of type compaction with the latest compaction's id.
            let cpos = path
                .iter()
                .position(|&i| {
                    doc.entries[i].etype == EntryType::Compaction && doc.entries[i].id == ce.id
                })
                .unwrap_or(0);
            let first_kept = ce.fields.str(cline, "firstKeptEntryId");
            let replay = dialect == Dialect::Omp && omp_provider_payload(doc, ce).is_some();
            if !replay {
                let mut found = false;
                for &i in &path[..cpos] {
                    if let (Some(fk), Some(id)) =
                        (first_kept.as_deref(), doc.entries[i].id.as_deref())
                    {
                        if fk == id {
                            found = true;
                        }
                    }
                    if found {
                        emit(&mut ctx, i);
                    }
                }
            }
            for &i in &path[cpos + 1..] {
                emit(&mut ctx, i);
            }
        }
        None => {
            for &i in &path {
                emit(&mut ctx, i);
            }
        }
    }
    ctx.path = path;
    ctx
}

/// Folds path entry `i` into the context's state (thinking level, model, models, TTSR rules,
/// mode, service tier) and notes the latest compaction; messages are emitted separately.
/// The `default` role of the model map is only placed here; its value comes from the last
/// entry that sets it (`default_model`), read once by [`finish_default_model`] (reading the
/// provider and model of every assistant message of a long path cost half of the build).
pub(crate) fn apply_entry(
    ctx: &mut SessionContext,
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
        EntryType::ServiceTierChange => ctx.service_tier = Some(i),
        _ => {}
    }
}

/// Gives the model map's `default` role its place (first set, first listed), value to come.
fn place_default(ctx: &mut SessionContext) {
    if !ctx.models.iter().any(|(r, _)| r == "default") {
        ctx.models.push(("default".to_string(), String::new()));
    }
}

/// Sets the `default` model from the last entry that set it: a `model_change`'s `model`, or
/// an assistant message's `provider/model` (`undefined` for a missing one, as pi's template
/// string writes it).
pub(crate) fn finish_default_model(
    ctx: &mut SessionContext,
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
pub(crate) fn emit_entry(ctx: &mut SessionContext, doc: &SessionDoc, i: usize) {
    let e = &doc.entries[i];
    match e.etype {
        EntryType::Message => ctx.messages.push(CtxMessage::Message(i)),
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

/// omp's `providerPayload` of a compaction: `preserveData.openaiRemoteCompaction` with a
/// non-empty string `provider` and an array `replacementHistory`, as raw JSON pieces.
fn omp_provider_payload(doc: &SessionDoc, e: &Entry) -> Option<(Vec<u8>, Vec<u8>)> {
    let line = doc.line(&e.line);
    let pd = e.fields.value(line, "preserveData")?;
    let orc = pd.get("openaiRemoteCompaction")?;
    let provider = orc.get("provider")?.as_js_str()?;
    if provider.0.is_empty() {
        return None;
    }
    let hist = orc.get("replacementHistory")?;
    if !matches!(hist, json::JsValue::Array(_)) {
        return None;
    }
    Some((
        json::JsValue::String(provider.clone()).to_json(),
        hist.to_json(),
    ))
}

/// `new Date(entry.timestamp).getTime()` written as JSON (`null` for NaN).
pub(crate) fn write_entry_time(doc: &SessionDoc, e: &Entry, out: &mut Vec<u8>) {
    write_js_number(entry_time_ms(doc, e), out);
}

/// `new Date(entry.timestamp).getTime()` (NaN for an Invalid Date): an ISO string parsed,
/// a number time-clipped, `null` and `false` 0, `true` 1, anything else (absent included) NaN.
pub(crate) fn entry_time_ms(doc: &SessionDoc, e: &Entry) -> f64 {
    let line = doc.line(&e.line);
    match e.fields.get(line, "timestamp") {
        Some((raw, ValueKind::String)) => crate::entry::raw_str(raw, ValueKind::String)
            .and_then(|s| crate::time::parse_iso_ms(&s))
            .unwrap_or(f64::NAN),
        Some((raw, ValueKind::Number)) => std::str::from_utf8(raw)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|v| v.abs() <= 8.64e15)
            .map(|v| v.trunc() + 0.0)
            .unwrap_or(f64::NAN),
        Some((_, ValueKind::Null)) => 0.0,
        Some((raw, ValueKind::Bool)) => f64::from(u8::from(raw == b"true")),
        _ => f64::NAN,
    }
}

/// Writes `"key":<canonical value>` for a member of `e`, preceded by a comma; nothing when
/// the member is absent (JS `undefined` is omitted).
pub(crate) fn write_member(
    doc: &SessionDoc,
    e: &Entry,
    key: &str,
    as_key: &str,
    out: &mut Vec<u8>,
) {
    let line = doc.line(&e.line);
    if let Some((raw, _)) = e.fields.get(line, key) {
        out.push(b',');
        write_str_escaped(as_key, out);
        out.push(b':');
        canon(raw, out);
    }
}

/// Canonicalizes a raw value that was already validated by the scanner.
pub(crate) fn canon(raw: &[u8], out: &mut Vec<u8>) {
    if let Some(kept) = canon_or_keep(raw, out) {
        out.extend_from_slice(kept);
    }
}

/// [`canon`], except that a value whose bytes are already its output (or that is not valid
/// JSON, which is written as it is) is returned instead of copied to `out`.
fn canon_or_keep<'r>(raw: &'r [u8], out: &mut Vec<u8>) -> Option<&'r [u8]> {
    let mark = out.len();
    match json::canonicalize_or_keep(raw, out) {
        Ok(json::Canonical::AsIs) => Some(raw),
        Ok(json::Canonical::Written) => None,
        Err(_) => {
            out.truncate(mark);
            Some(raw)
        }
    }
}

/// A `message` entry's payload as pi stringifies it: written to `out`, or returned when its
/// stored bytes are already that (see [`canon_or_keep`]); `null` when the entry has none.
fn message_payload<'d>(doc: &'d SessionDoc, i: usize, out: &mut Vec<u8>) -> Option<&'d [u8]> {
    let e = &doc.entries[i];
    match e.fields.get(doc.line(&e.line), "message") {
        Some((raw, _)) => canon_or_keep(raw, out),
        None => {
            out.extend_from_slice(b"null");
            None
        }
    }
}

/// The JSON kind of entry `i`'s `message` when it is a message entry whose `message` is not
/// an object (`None` for an object, or when the entry is no message entry).
fn message_kind(doc: &SessionDoc, i: usize) -> Option<ValueKind> {
    let e = &doc.entries[i];
    if e.etype != EntryType::Message || e.message.is_some() {
        return None;
    }
    match e.fields.get(doc.line(&e.line), "message") {
        Some((_, ValueKind::Object)) | None => None,
        Some((_, kind)) => Some(kind),
    }
}

/// A message entry the tool that owns the session cannot read, though arbor reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnreadableMessage {
    /// Index of the entry in `doc.entries`.
    pub entry: usize,
    /// The JSON kind of its `message` (`null`, a string, a number, `true`/`false`).
    pub kind: ValueKind,
    /// What the peer does with it, in a few words (pi 0.73.1 and omp 18.2.3, goldens
    /// `edge-message-not-object*`).
    pub peer: &'static str,
}

impl UnreadableMessage {
    /// How the `message` is spelled in a warning: `null`, `a string`, `a number`, `a boolean`.
    pub fn what(&self) -> &'static str {
        match self.kind {
            ValueKind::Null => "null",
            ValueKind::String => "a string",
            ValueKind::Number => "a number",
            ValueKind::Bool => "a boolean",
            ValueKind::Array => "an array",
            ValueKind::Object => "an object",
        }
    }
}

/// Whether the real pi or omp (by `doc`'s dialect) throws on entry `i`'s `message`:
/// `null` makes pi's `buildSessionContext` throw on every leaf below the entry and omp's
/// `SessionManager.open` throw; a string, number or boolean makes omp's `convertToLlm` throw
/// (pi passes them through and leaves them out of `convertToLlm`, as arbor does). `[]` and
/// objects are read by both.
pub fn unreadable_message(doc: &SessionDoc, i: usize) -> Option<UnreadableMessage> {
    let kind = message_kind(doc, i)?;
    let peer = match (doc.dialect(), kind) {
        (Dialect::Pi, ValueKind::Null) => "pi cannot build a context through it (it throws)",
        (Dialect::Omp, ValueKind::Null) => "omp cannot open the session (it throws)",
        (Dialect::Omp, ValueKind::String | ValueKind::Number | ValueKind::Bool) => {
            "omp cannot convert a context through it for the model (convertToLlm throws)"
        }
        _ => return None,
    };
    Some(UnreadableMessage {
        entry: i,
        kind,
        peer,
    })
}

impl SessionContext {
    /// The message entries of this context that pi or omp cannot read
    /// ([`unreadable_message`]): arbor keeps them in their place (`--llm` leaves them out)
    /// and callers should say so (`arbor context` warns on stderr).
    pub fn unreadable_messages(&self, doc: &SessionDoc) -> Vec<UnreadableMessage> {
        self.message_entries()
            .filter_map(|i| unreadable_message(doc, i))
            .collect()
    }

    fn message_entries(&self) -> impl Iterator<Item = usize> + '_ {
        self.messages.iter().filter_map(|m| match m {
            CtxMessage::Message(i) => Some(*i),
            _ => None,
        })
    }

    /// [`SessionContext::write_message`], except that a message whose stored bytes are
    /// already what is to be written (a `message` entry's payload as `JSON.stringify` wrote
    /// it: nearly all of them) is not copied: those bytes, a slice of the session's line, are
    /// returned instead and nothing is written to `out`. A payload that is not valid JSON is
    /// also returned as it is, as `write_message` copies it.
    pub fn write_message_or_keep<'d>(
        &self,
        doc: &'d SessionDoc,
        m: CtxMessage,
        out: &mut Vec<u8>,
    ) -> Option<&'d [u8]> {
        match m {
            CtxMessage::Message(i) => message_payload(doc, i, out),
            _ => {
                self.write_message(doc, m, out);
                None
            }
        }
    }

    /// Writes one context message as pi's object would be stringified.
    pub fn write_message(&self, doc: &SessionDoc, m: CtxMessage, out: &mut Vec<u8>) {
        let omp = self.dialect == Dialect::Omp;
        let e = &doc.entries[m.entry()];
        match m {
            CtxMessage::Message(i) => {
                if let Some(kept) = message_payload(doc, i, out) {
                    out.extend_from_slice(kept);
                }
            }
            CtxMessage::Custom(_) => {
                out.extend_from_slice(br#"{"role":"custom""#);
                write_member(doc, e, "customType", "customType", out);
                write_member(doc, e, "content", "content", out);
                write_member(doc, e, "display", "display", out);
                write_member(doc, e, "details", "details", out);
                if omp {
                    write_member(doc, e, "attribution", "attribution", out);
                }
                out.extend_from_slice(br#","timestamp":"#);
                write_entry_time(doc, e, out);
                out.push(b'}');
            }
            CtxMessage::BranchSummary(_) => {
                out.extend_from_slice(br#"{"role":"branchSummary""#);
                write_member(doc, e, "summary", "summary", out);
                write_member(doc, e, "fromId", "fromId", out);
                out.extend_from_slice(br#","timestamp":"#);
                write_entry_time(doc, e, out);
                out.push(b'}');
            }
            CtxMessage::CompactionSummary(_) => {
                out.extend_from_slice(br#"{"role":"compactionSummary""#);
                write_member(doc, e, "summary", "summary", out);
                if omp {
                    write_member(doc, e, "shortSummary", "shortSummary", out);
                }
                write_member(doc, e, "tokensBefore", "tokensBefore", out);
                if omp {
                    if let Some((provider, items)) = omp_provider_payload(doc, e) {
                        out.extend_from_slice(
                            br#","providerPayload":{"type":"openaiResponsesHistory","provider":"#,
                        );
                        out.extend_from_slice(&provider);
                        out.extend_from_slice(br#","items":"#);
                        out.extend_from_slice(&items);
                        out.push(b'}');
                    }
                }
                out.extend_from_slice(br#","timestamp":"#);
                write_entry_time(doc, e, out);
                out.push(b'}');
            }
        }
    }

    /// Writes the context as one JSON object: `messages, thinkingLevel, model` (pi), then
    /// `serviceTier` (omp, when set), `models, injectedTtsrRules, mode` and `modeData` (when set).
    /// `messages` is written by `write_messages`, so callers can substitute a conversion.
    pub fn write_json_with(
        &self,
        doc: &SessionDoc,
        out: &mut Vec<u8>,
        write_messages: &dyn Fn(&SessionContext, &SessionDoc, &mut Vec<u8>),
    ) {
        if let Some(o) = &self.omp {
            return o.write_json(self, doc, out, Some(write_messages));
        }
        let omp = self.dialect == Dialect::Omp;
        out.extend_from_slice(br#"{"messages":"#);
        write_messages(self, doc, out);
        // thinkingLevel: pi copies the entry's value as is (absent: key omitted);
        // omp uses `?? "off"`.
        match self.thinking_level {
            None => out.extend_from_slice(br#","thinkingLevel":"off""#),
            Some(i) => {
                let e = &doc.entries[i];
                let line = doc.line(&e.line);
                match e.fields.get(line, "thinkingLevel") {
                    Some((_, ValueKind::Null)) | None if omp => {
                        out.extend_from_slice(br#","thinkingLevel":"off""#)
                    }
                    Some((raw, _)) => {
                        out.extend_from_slice(br#","thinkingLevel":"#);
                        canon(raw, out);
                    }
                    None => {}
                }
            }
        }
        out.extend_from_slice(br#","model":"#);
        self.write_model(doc, out);
        if omp {
            if let Some(i) = self.service_tier {
                let e = &doc.entries[i];
                let line = doc.line(&e.line);
                if let Some((raw, kind)) = e.fields.get(line, "serviceTier") {
                    if kind != ValueKind::Null {
                        out.extend_from_slice(br#","serviceTier":"#);
                        canon(raw, out);
                    }
                }
            }
        }
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
                let line = doc.line(&e.line);
                match e.fields.get(line, "mode") {
                    Some((raw, _)) => canon(raw, out),
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
        if let Some(o) = &self.omp {
            return o.write_json(self, doc, out, None);
        }
        self.write_json_with(doc, out, &|ctx, doc, out| ctx.write_messages(doc, out));
    }

    /// Writes the `messages` array (omp's, for an omp context: the same array as
    /// [`SessionContext::write_json`] writes).
    pub fn write_messages(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        if let Some(o) = &self.omp {
            return o.write_messages(doc, out);
        }
        out.push(b'[');
        for (k, m) in self.messages.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            self.write_message(doc, *m, out);
        }
        out.push(b']');
    }

    pub(crate) fn write_model(&self, doc: &SessionDoc, out: &mut Vec<u8>) {
        let (i, pkey, mkey, from_message) = match self.model {
            ModelSource::None => {
                out.extend_from_slice(b"null");
                return;
            }
            ModelSource::Change(i) => (i, "provider", "modelId", false),
            ModelSource::Assistant(i) => (i, "provider", "model", true),
        };
        let e = &doc.entries[i];
        let line = doc.line(&e.line);
        let fields = if from_message {
            e.message.as_ref()
        } else {
            Some(&e.fields)
        };
        out.push(b'{');
        let mut first = true;
        if let Some(f) = fields {
            // An omp-shaped model_change (`model: "provider/id"`, no `provider`/`modelId`) in
            // an omp file is split into pi's fields; pi itself copies the two absent fields,
            // so a pi file gets `{}` (goldens/pi/edge-omp-model-change).
            let omp_shape = self.dialect == Dialect::Omp
                && !from_message
                && !f.has(line, "provider")
                && !f.has(line, "modelId");
            if omp_shape {
                if let Some(m) = f.str(line, "model") {
                    let (p, id) = m.split_once('/').unwrap_or(("", &m));
                    out.extend_from_slice(br#""provider":"#);
                    write_str_escaped(p, out);
                    out.extend_from_slice(br#","modelId":"#);
                    write_str_escaped(id, out);
                }
            } else {
                for (key, as_key) in [(pkey, "provider"), (mkey, "modelId")] {
                    if let Some((raw, _)) = f.get(line, key) {
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        write_str_escaped(as_key, out);
                        out.push(b':');
                        canon(raw, out);
                    }
                }
            }
        }
        out.push(b'}');
    }
}
