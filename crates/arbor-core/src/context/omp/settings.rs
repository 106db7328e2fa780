//! The settings half of omp's `buildSessionContext`: one pass over the path that folds thinking
//! level, model map, service tier, TTSR rules and mode into the context, and finds the latest
//! compaction.
use super::jsv::{self, from_units, raw_is_str, Prim};
use super::{canon_bytes, OmpContext};
use crate::context::ModelSource;
use crate::doc::SessionDoc;
use crate::entry::EntryType;
use crate::js;
use crate::json::{write_js_str, JsStr, JsValue, ValueKind};
use std::collections::HashSet;

/// Folds the settings of every entry on `path` into `o` and returns the latest compaction.
pub(super) fn fold(doc: &SessionDoc, path: &[usize], o: &mut OmpContext) -> Option<usize> {
    let mut explicit_default = false;
    let mut compaction: Option<usize> = None;
    let mut rules_seen: HashSet<Prim> = HashSet::new();
    for &i in path {
        let e = &doc.entries[i];
        let line = doc.line(&e.line);
        let non_null = |k: &str| {
            e.fields
                .get(line, k)
                .filter(|(_, kind)| *kind != ValueKind::Null)
        };
        match e.etype {
            EntryType::ThinkingLevelChange => {
                let level = non_null("thinkingLevel");
                o.thinking_level =
                    level.map_or_else(|| br#""off""#.to_vec(), |(r, _)| canon_bytes(r));
                o.configured_thinking_level = non_null("configured")
                    .or(level)
                    .map(|(r, _)| canon_bytes(r));
            }
            EntryType::ModelChange => {
                o.model = ModelSource::Change(i);
                let model = e.fields.get(line, "model");
                if js::truthy_raw(model) {
                    let role = non_null("role").and_then(|(r, _)| JsValue::parse(r).ok());
                    let key = role
                        .as_ref()
                        .map_or_else(|| JsStr::from("default"), |r| js::to_js_str(Some(r)));
                    if is_none_or_default(role.as_ref()) {
                        explicit_default = true;
                    }
                    let value = model.map(|(r, _)| canon_bytes(r)).unwrap_or_default();
                    set_model(o, key, value);
                }
            }
            EntryType::ServiceTierChange => {
                o.service_tier = coerce_service_tier(e.fields.value(line, "serviceTier").as_ref());
            }
            EntryType::Message => {
                let Some(f) = &e.message else { continue };
                if !raw_is_str(f.get(line, "role"), "assistant") {
                    continue;
                }
                o.model = ModelSource::Assistant(i);
                if !explicit_default {
                    let part = |k: &str| {
                        js::to_js_str(
                            f.get(line, k)
                                .and_then(|(r, _)| JsValue::parse(r).ok())
                                .as_ref(),
                        )
                    };
                    let mut s = part("provider").0;
                    s.push(b'/');
                    s.extend_from_slice(&part("model").0);
                    let mut value = Vec::new();
                    write_js_str(&JsStr(s), &mut value);
                    set_model(o, JsStr::from("default"), value);
                }
            }
            EntryType::Compaction => compaction = Some(i),
            EntryType::TtsrInjection => match e.fields.value(line, "injectedRules").as_ref() {
                Some(JsValue::Array(rules)) => {
                    for r in rules {
                        push_rule(o, &mut rules_seen, r);
                    }
                }
                Some(JsValue::String(s)) => {
                    // A string iterates by code point.
                    let u = jsv::units(s);
                    let mut k = 0;
                    while k < u.len() {
                        let pair = (0xD800..0xDC00).contains(&u[k])
                            && u.get(k + 1).is_some_and(|l| (0xDC00..0xE000).contains(l));
                        let n = if pair { 2 } else { 1 };
                        push_rule(
                            o,
                            &mut rules_seen,
                            &JsValue::String(from_units(&u[k..k + n])),
                        );
                        k += n;
                    }
                }
                _ => {}
            },
            EntryType::ModeChange => {
                o.mode = e.fields.get(line, "mode").map(|(r, _)| canon_bytes(r));
                o.mode_data = e.fields.get(line, "data").map(|(r, _)| canon_bytes(r));
            }
            _ => {}
        }
    }
    compaction
}

/// `(role ?? "default") === "default"`: a missing role, or exactly `"default"`.
fn is_none_or_default(role: Option<&JsValue>) -> bool {
    match role {
        None => true,
        Some(JsValue::String(v)) => v.0 == b"default",
        Some(_) => false,
    }
}

/// `models[key] = value` (a `__proto__` key creates no own property).
fn set_model(o: &mut OmpContext, key: JsStr, value: Vec<u8>) {
    if key.0 == b"__proto__" {
        return;
    }
    match o.models.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => o.models.push((key, value)),
    }
}

/// Adds a TTSR rule unless a primitive equal to it (`SameValueZero`) was added before.
fn push_rule(o: &mut OmpContext, seen: &mut HashSet<Prim>, r: &JsValue) {
    if let Some(p) = Prim::of_value(r) {
        if !seen.insert(p) {
            return;
        }
    }
    o.injected_ttsr_rules.push(r.to_json());
}

/// `coerceServiceTierByFamily`: a persisted service tier as a per-family map, as JSON.
fn coerce_service_tier(v: Option<&JsValue>) -> Option<Vec<u8>> {
    let tier = |t: &str| JsValue::String(JsStr::from(t));
    let families = ["openai", "anthropic", "google"];
    let out: Vec<(JsStr, JsValue)> = match v? {
        JsValue::Null => return None,
        obj @ (JsValue::Object(_) | JsValue::Array(_)) => families
            .iter()
            .filter_map(|fam| {
                let t = obj.get(fam)?.as_js_str()?.as_str()?;
                matches!(t, "auto" | "default" | "flex" | "scale" | "priority")
                    .then(|| (JsStr::from(*fam), tier(t)))
            })
            .collect(),
        JsValue::String(s) => match s.as_str()? {
            "priority" => families
                .iter()
                .map(|f| (JsStr::from(*f), tier("priority")))
                .collect(),
            "openai-only" => vec![(JsStr::from("openai"), tier("priority"))],
            "claude-only" => vec![(JsStr::from("anthropic"), tier("priority"))],
            t @ ("auto" | "default" | "flex" | "scale") => vec![(JsStr::from("openai"), tier(t))],
            _ => return None,
        },
        _ => return None,
    };
    (!out.is_empty()).then(|| JsValue::Object(out).to_json())
}
