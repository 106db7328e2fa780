//! arbor against the answers of the real pi 0.73.1 (goldens/pi, goldens/README.md): for every
//! `goldens/pi/NAME.jsonl` (and the real v1 session `../shared/fixtures/…`, goldens
//! `fixture-v1-large.*`), loaded as arbor loads it (`SessionDoc::parse`: v1/v2 files migrated
//! in memory), every key of
//!
//! * `NAME.context.json`: `build_session_context` written by arbor's JSON writer (what
//!   `arbor context --leaf ID` prints; `__open__` is the default leaf),
//! * `NAME.llm.json`: the same through `convert_to_llm` (`arbor context --llm`),
//! * `NAME.tree.json`: `Tree::write_json` (`arbor tree --json`),
//! * `NAME.meta.json`: the header, `getSessionName()` and the leaf,
//!
//! compared as JSON values printed by `JSON.stringify` (key order included). The ids pi made
//! up when it migrated a v1 file are mapped onto arbor's by entry position.
//!
//! Where pi's answer is a bug arbor deliberately does not copy, [`DEVIATIONS`] says so and
//! arbor's own documented answer is asserted instead. Each test prints a one-line summary and
//! fails when a count does not add up (so a comparison that silently did not run fails too).

use arbor_core::context::{build_session_context, LeafSel, SessionContext};
use arbor_core::json::JsValue;
use arbor_core::{NotASession, SessionDoc};
use arbor_testkit::goldens::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The golden kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Context,
    Llm,
    Tree,
    Meta,
}

/// A place where pi's answer is a bug arbor deliberately does not copy.
struct Deviation {
    /// The input (`NAME` of `NAME.jsonl`).
    file: &'static str,
    /// Golden kinds whose answers are replaced by arbor's own.
    kinds: &'static [Kind],
    /// For context/llm: the golden keys replaced (`*`: all of them); tree and meta are whole.
    keys: &'static [&'static str],
    /// Why, and what arbor does instead (asserted by [`check_own`]).
    reason: &'static str,
}

const ALL: &[Kind] = &[Kind::Context, Kind::Llm, Kind::Tree, Kind::Meta];

/// pi's bugs that arbor does not copy. Every other difference is an arbor bug.
const DEVIATIONS: &[Deviation] = &[
    Deviation {
        file: "edge-message-not-object",
        kinds: &[],
        keys: &[],
        reason: "pi's buildSessionContext throws on a message entry whose message is null \
                 (n0000006: for it, n0000007 and __open__, left out of the goldens); arbor \
                 answers with null in its place (convertToLlm leaves it out), and `arbor \
                 context` warns naming the file, line and entry. [], a string and a number \
                 are passed through by both",
    },
    Deviation {
        file: "edge-self-parent",
        kinds: &[],
        keys: &[],
        reason: "pi hangs in buildSessionContext on an entry that is its own parent (h0000002, \
                 left out of the goldens); arbor cuts the path where it repeats and reports \
                 the cycle (SessionContext::cycle)",
    },
    Deviation {
        file: "edge-cycle2",
        kinds: &[],
        keys: &[],
        reason: "pi hangs on a 2-cycle (i0000002, i0000003 and __open__, left out of the \
                 goldens); arbor cuts the path where it repeats and reports the cycle",
    },
    Deviation {
        file: "edge-empty",
        kinds: ALL,
        keys: &["*"],
        reason: "pi truncates a file without a valid header to a fresh header of its own; \
                 arbor refuses it (NotASession) and leaves the bytes as they are",
    },
    Deviation {
        file: "edge-whitespace-only",
        kinds: ALL,
        keys: &["*"],
        reason: "as edge-empty",
    },
    Deviation {
        file: "edge-no-header",
        kinds: ALL,
        keys: &["*"],
        reason: "pi truncates a file whose first line is an entry (every entry lost); arbor \
                 refuses it and leaves the bytes as they are",
    },
    Deviation {
        file: "edge-header-id-number",
        kinds: ALL,
        keys: &["*"],
        reason: "pi truncates a file whose header id is a number; arbor refuses it and \
                 leaves the bytes as they are",
    },
    Deviation {
        file: "edge-duplicate-ids",
        kinds: &[Kind::Tree],
        keys: &[],
        reason: "pi's getTree() lists the entry with the reused id twice (f0000001 gets two \
                 children f0000002, the subtree is walked twice: 9 nodes for 6 entries); \
                 arbor lists the later entry once (the one pi's byId keeps) and reports the \
                 hidden earlier one (Tree::unreachable)",
    },
    Deviation {
        file: "edge-non-object-lines",
        kinds: &[Kind::Tree],
        keys: &[],
        reason: "pi keeps the lines 42, [1], \"s\", true as entries without id, and so does \
                 arbor (leaf undefined, an empty __open__ context: the goldens); all four \
                 share pi's `undefined` id, so getTree() lists the last of them (true) once per \
                 line, the duplicate-id tree: arbor lists it once and reports the hidden ones",
    },
    Deviation {
        file: "edge-null-line",
        kinds: &[],
        keys: &[],
        reason: "pi throws on open (null.type) and has no answers; arbor skips the line as \
                 malformed and reads the session",
    },
    // Issue 22's inputs (goldens/pi/exact-*, the same bytes as goldens/pi15/exact-*): where
    // 0.73.1 answers differently from 1.5.2, arbor follows 1.5.2 (asserted against
    // goldens/pi15 by `own_answers`, which also checks that 0.73.1's answer still differs).
    Deviation {
        file: "exact-hex-session-id",
        kinds: &[Kind::Llm],
        keys: &[
            "e0000001", "e0000002", "e0000003", "e0000004", "e0000005", "__open__",
        ],
        reason: "pi 1.5.2: 0.73.1's convertToLlm drops a system message (a pi 1.5 entry); \
                 1.5.2 passes it through, and so does arbor",
    },
    Deviation {
        file: "exact-non-object-falsy",
        kinds: ALL,
        keys: &["__open__"],
        reason: "pi 1.5.2: 0.73.1 keeps the JSON lines 0, false and \"\" as entries without \
                 id (leaf null, an empty context, three null roots); 1.5.2 skips them, and so \
                 does arbor (check reports them)",
    },
    Deviation {
        file: "exact-summary-roles",
        kinds: &[Kind::Context, Kind::Llm],
        keys: &["m0000010", "m0000011", "__open__"],
        reason: "pi 1.5.2: 0.73.1 ignores a compaction's systemMessage (a pi 1.5 field); 1.5.2 \
                 puts it before the summary, and so does arbor",
    },
];

fn deviation(file: &str) -> Option<&'static Deviation> {
    DEVIATIONS.iter().find(|d| d.file == file)
}

fn deviates(file: &str, kind: Kind, key: Option<&str>) -> bool {
    deviation(file).is_some_and(|d| {
        d.kinds.contains(&kind)
            && match key {
                None => true,
                Some(k) => d.keys.iter().any(|x| *x == "*" || *x == k),
            }
    })
}

/// Every input with its goldens: `goldens/pi/*.jsonl`, and the shared real v1 fixture.
fn cases() -> Vec<(String, PathBuf)> {
    let mut v = inputs(&dir());
    match shared_fixture() {
        Some(p) => v.push(("fixture-v1-large".into(), p)),
        None => println!(
            "note: ../shared/fixtures/pi-real-v1-large-session.jsonl is absent: fixture-v1-large.* skipped"
        ),
    }
    v
}

fn dir() -> PathBuf {
    goldens_root().join("pi")
}

fn load(path: &Path) -> Result<SessionDoc, NotASession> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    SessionDoc::parse(Arc::new(bytes))
}

fn golden(name: &str, ext: &str) -> Option<JsValue> {
    read_json_opt(&dir().join(format!("{name}.{ext}")))
}

/// What arbor prints for a context (`arbor context [--leaf ID] [--llm]`), parsed back.
fn context_json(doc: &SessionDoc, ctx: &SessionContext, llm: bool) -> JsValue {
    let mut out = Vec::new();
    if llm {
        ctx.write_llm_json(doc, &mut out);
    } else {
        ctx.write_json(doc, &mut out);
    }
    parse_printed(&out)
}

/// Parses what arbor printed, which must already be exactly what `JSON.stringify` prints for
/// that value (integer-like keys first, JS number spelling): parsing alone would hide a key
/// order that only `JSON.stringify` itself fixes.
fn parse_printed(out: &[u8]) -> JsValue {
    let v = JsValue::parse(out).unwrap_or_else(|e| panic!("arbor wrote invalid JSON: {e}"));
    if let Err(d) = same_bytes(&v.to_json(), out) {
        panic!("arbor's output is not what JSON.stringify prints: {d}");
    }
    v
}

/// The keys arbor documents printing after pi's (README: `context` prints `messages,
/// thinkingLevel, model`, then omp's `models, injectedTtsrRules, mode`).
const PI_CONTEXT_EXTRA: &[&str] = &["models", "injectedTtsrRules", "mode"];

fn leaf_sel(key: &str) -> LeafSel<'_> {
    match key {
        "__open__" => LeafSel::Current,
        id => LeafSel::Id(id),
    }
}

/// The context and llm goldens.
fn check_contexts(kind: Kind) -> Tally {
    let ext = if kind == Kind::Llm {
        "llm.json"
    } else {
        "context.json"
    };
    let mut t = Tally::default();
    for (name, path) in cases() {
        let Some(want) = golden(&name, ext) else {
            continue;
        };
        t.files += 1;
        let answers = members(&want);
        t.golden += answers.len();
        let doc = match load(&path) {
            Ok(doc) => doc,
            Err(e) => {
                assert!(
                    deviates(&name, kind, Some("*")),
                    "{name}: arbor refused it: {e}"
                );
                t.deviated += answers.len();
                continue;
            }
        };
        let map = id_map(&doc, &peer_entries(&dir(), &name, &path))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let raw_keys: Vec<arbor_core::entry::IdKey> = match &want {
            JsValue::Object(m) => m
                .iter()
                .map(|(k, _)| arbor_core::entry::IdKey::Str(k.0.clone().into()))
                .collect(),
            _ => Vec::new(),
        };
        for (n, (key, want)) in answers.into_iter().enumerate() {
            if deviates(&name, kind, Some(&key)) {
                t.deviated += 1;
                continue;
            }
            let arbor_key = map.id(&key);
            // A key with a lone surrogate (exact-surrogate-ids) is asked as pi asked it, not as
            // its lossy decoding (as pi15_goldens.rs does).
            let sel = if key.contains('\u{fffd}') {
                LeafSel::Key(&raw_keys[n])
            } else {
                if key != "__open__" && doc.index().get(&arbor_key).is_none() {
                    t.bad.push(format!(
                        "{name} {key}: no entry {arbor_key} in arbor's view"
                    ));
                    continue;
                }
                leaf_sel(&arbor_key)
            };
            let ctx = build_session_context(&doc, sel);
            let have = context_json(&doc, &ctx, kind == Kind::Llm);
            t.compared += 1;
            if let Err(d) = same_object(&map.value(want), &have, PI_CONTEXT_EXTRA) {
                t.bad.push(format!("{name} {key}: {d}"));
            }
        }
        // Keys pi threw on (a `message: null` on the path): arbor answers, with the null in
        // its place, and says which entries pi cannot read.
        for key in thrown_keys(&dir(), &name) {
            assert!(
                deviation(&name).is_some_and(|d| d.reason.contains("throws")),
                "{name}: pi threw on {key} but no deviation says so"
            );
            let ctx = build_session_context(&doc, leaf_sel(&key));
            let nulls: Vec<_> = ctx
                .unreadable_messages(&doc)
                .into_iter()
                .filter(|u| u.kind == arbor_core::json::ValueKind::Null)
                .collect();
            assert!(
                !nulls.is_empty(),
                "{name} {key}: the null message is not reported"
            );
            let have = context_json(&doc, &ctx, kind == Kind::Llm);
            let msgs = match have.get("messages") {
                Some(JsValue::Array(m)) => m,
                other => panic!("{name} {key}: messages {other:?}"),
            };
            if kind == Kind::Llm {
                assert!(
                    msgs.iter().all(|m| matches!(m, JsValue::Object(_))),
                    "{name} {key}"
                );
            } else {
                assert!(
                    msgs.contains(&JsValue::Null),
                    "{name} {key}: no null in {msgs:?}"
                );
            }
            t.own += 1;
        }
        // Keys pi hung on: arbor answers, cut at the cycle.
        for key in hung_keys(&dir(), &name) {
            assert!(
                deviation(&name).is_some_and(|d| d.reason.contains("hangs")),
                "{name}: pi hung on {key} but no deviation says so"
            );
            let ctx = build_session_context(&doc, leaf_sel(&key));
            assert!(ctx.cycle(), "{name} {key}: the cycle is not reported");
            let mut seen = std::collections::HashSet::new();
            assert!(
                ctx.path().iter().all(|i| seen.insert(*i)),
                "{name} {key}: the cut path repeats an entry"
            );
            let leaf = match key.as_str() {
                "__open__" => doc.index().leaf.expect("leaf"),
                id => doc.index().get(id).expect("entry"),
            };
            assert_eq!(
                ctx.path().last(),
                Some(&leaf),
                "{name} {key}: path must end at the leaf"
            );
            let have = context_json(&doc, &ctx, kind == Kind::Llm);
            assert!(have.get("messages").is_some(), "{name} {key}: no messages");
            t.own += 1;
        }
    }
    t
}

#[test]
fn pi_context_goldens() {
    let mut t = check_contexts(Kind::Context);
    own_answers(Kind::Context, &mut t);
    t.finish("pi context.json");
}

#[test]
fn pi_llm_goldens() {
    let mut t = check_contexts(Kind::Llm);
    own_answers(Kind::Llm, &mut t);
    t.finish("pi llm.json");
}

#[test]
fn pi_tree_goldens() {
    let mut t = Tally::default();
    for (name, path) in cases() {
        let Some(want) = golden(&name, "tree.json") else {
            continue;
        };
        t.files += 1;
        t.golden += 1;
        if deviates(&name, Kind::Tree, None) {
            t.deviated += 1;
            continue;
        }
        let doc = load(&path).unwrap_or_else(|e| panic!("{name}: arbor refused it: {e}"));
        let map = id_map(&doc, &peer_entries(&dir(), &name, &path))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut out = Vec::new();
        doc.index().tree(&doc).write_json(&doc, &mut out);
        let have = parse_printed(&out);
        t.compared += 1;
        if let Err(d) = same(&map.value(&want), &have) {
            t.bad.push(format!("{name}: {d}"));
        }
    }
    own_answers(Kind::Tree, &mut t);
    t.finish("pi tree.json");
}

/// pi's `getHeader()`, `getSessionName()`, `getLeafId()` as arbor answers them.
fn meta_of(doc: &SessionDoc) -> JsValue {
    let header = JsValue::parse(doc.header_line()).expect("header JSON");
    let opt = |s: Option<&str>| s.map_or(JsValue::Null, |s| JsValue::String(s.into()));
    JsValue::Object(vec![
        ("header".into(), header),
        ("sessionName".into(), opt(doc.session_name().as_deref())),
        (
            "leaf".into(),
            opt(doc
                .index()
                .leaf
                .and_then(|i| doc.entries()[i].id.as_deref())),
        ),
    ])
}

#[test]
fn pi_meta_goldens() {
    let mut t = Tally::default();
    for (name, path) in cases() {
        let Some(want) = golden(&name, "meta.json") else {
            continue;
        };
        t.files += 1;
        t.golden += 1;
        if deviates(&name, Kind::Meta, None) {
            t.deviated += 1;
            continue;
        }
        let doc = load(&path).unwrap_or_else(|e| panic!("{name}: arbor refused it: {e}"));
        let map = id_map(&doc, &peer_entries(&dir(), &name, &path))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        t.compared += 1;
        if let Err(d) = same(&map.value(&want), &meta_of(&doc)) {
            t.bad.push(format!("{name}: {d}"));
        }
    }
    own_answers(Kind::Meta, &mut t);
    t.finish("pi meta.json");
}

/// What arbor must say about a file without a valid header (pi truncates these).
fn expected_refusal(file: &str) -> NotASession {
    match file {
        "edge-empty" | "edge-whitespace-only" => NotASession::Empty,
        "edge-no-header" => NotASession::NoHeader {
            line_no: 1,
            found: "a \"message\" entry".into(),
        },
        "edge-header-id-number" => NotASession::NoHeader {
            line_no: 1,
            found: "a session line without a string id".into(),
        },
        other => panic!("{other}: no refusal expected"),
    }
}

/// Asserts arbor's own answer wherever [`DEVIATIONS`] replaces pi's for `kind`.
fn own_answers(kind: Kind, t: &mut Tally) {
    for d in DEVIATIONS {
        assert!(!d.reason.is_empty());
        let path = dir().join(format!("{}.jsonl", d.file));
        let bytes = std::fs::read(&path).expect("input");
        let loaded = SessionDoc::parse(Arc::new(bytes.clone()));
        match (d.file, kind) {
            (_, _) if d.keys.contains(&"*") && d.kinds.contains(&kind) => {
                // Refused with the reason, and reading changed nothing.
                let err = loaded.expect_err(d.file);
                assert_eq!(err, expected_refusal(d.file), "{}", d.file);
                assert_eq!(std::fs::read(&path).expect("input"), bytes, "{}", d.file);
                t.own += 1;
            }
            ("edge-non-object-lines", Kind::Tree) => {
                let doc = loaded.expect(d.file);
                // Still reported (`check` names them), and entries as pi keeps them.
                let reported: Vec<usize> = doc
                    .report()
                    .malformed
                    .iter()
                    .filter(|b| b.error == "not a JSON object")
                    .map(|b| b.line_no)
                    .collect();
                assert_eq!(reported, [3, 4, 5, 7], "{}: lines reported", d.file);
                assert_eq!(doc.entries().iter().filter(|e| e.non_object).count(), 4);
                // pi's tree with the repeated node listed once.
                let mut want = golden(d.file, "tree.json").expect("golden");
                if let Some(JsValue::Array(r)) = want.get_mut("roots") {
                    let mut seen = false;
                    r.retain(|x| *x != JsValue::Null || !std::mem::replace(&mut seen, true));
                }
                if let Some(JsValue::Array(n)) = want.get_mut("nodes") {
                    let mut seen = false;
                    n.retain(|x| x.get("raw").is_none() || !std::mem::replace(&mut seen, true));
                }
                let tree = doc.index().tree(&doc);
                let mut out = Vec::new();
                tree.write_json(&doc, &mut out);
                same(&want, &JsValue::parse(&out).expect("tree"))
                    .unwrap_or_else(|e| panic!("{} tree: {e}", d.file));
                assert_eq!(tree.unreachable.len(), 3, "{}", d.file);
                t.own += 1;
            }
            ("edge-duplicate-ids", Kind::Tree) => {
                let doc = loaded.expect(d.file);
                let tree = doc.index().tree(&doc);
                let mut out = Vec::new();
                tree.write_json(&doc, &mut out);
                let want = JsValue::parse(DUPLICATE_IDS_TREE.as_bytes()).expect("literal");
                same(&want, &JsValue::parse(&out).expect("tree"))
                    .unwrap_or_else(|e| panic!("{} tree: {e}", d.file));
                // The earlier entry with the reused id is reported, not lost.
                assert_eq!(tree.unreachable, [1], "{}", d.file);
                t.own += 1;
            }
            ("edge-null-line", Kind::Context) => {
                assert!(
                    std::fs::read_to_string(dir().join("edge-null-line.error.txt"))
                        .expect("error.txt")
                        .contains("SessionManager.open(copy): throw"),
                    "pi's recorded throw"
                );
                let doc = loaded.expect(d.file);
                assert!(
                    doc.report()
                        .malformed
                        .iter()
                        .any(|b| b.error == "not a JSON object"),
                    "{}: the null line is reported",
                    d.file
                );
                let ctx = build_session_context(&doc, LeafSel::Current);
                assert!(ctx.message_count() > 0, "{}: the session is read", d.file);
                t.own += 1;
            }
            (f, _) if f.starts_with("exact-") && d.kinds.contains(&kind) => {
                t.own += exact_follows_pi15(d, kind);
            }
            _ => {}
        }
    }
}

/// arbor's answer on an issue-22 input where 0.73.1 and 1.5.2 differ: 1.5.2's
/// (`goldens/pi15`), and 0.73.1's recorded answer does differ from it (else the deviation is
/// stale). Returns the number of answers checked.
fn exact_follows_pi15(d: &Deviation, kind: Kind) -> usize {
    let pi15 = goldens_root().join("pi15");
    let ext = match kind {
        Kind::Context => "context.json",
        Kind::Llm => "llm.json",
        Kind::Tree => "tree.json",
        Kind::Meta => "meta.json",
    };
    let want15 = read_json_opt(&pi15.join(format!("{}.{ext}", d.file))).expect("pi15 golden");
    let want073 = golden(d.file, ext).expect("0.73.1 golden");
    let doc = load(&dir().join(format!("{}.jsonl", d.file))).expect(d.file);
    match kind {
        Kind::Context | Kind::Llm => {
            for key in d.keys {
                let (w15, w073) = (want15.get(key), want073.get(key));
                let (Some(w15), Some(w073)) = (w15, w073) else {
                    panic!("{} {key}: missing in a golden", d.file);
                };
                assert!(
                    same(w073, w15).is_err(),
                    "{} {key} {ext}: 0.73.1 now answers as 1.5.2",
                    d.file
                );
                let ctx = build_session_context(&doc, leaf_sel(key));
                let have = context_json(&doc, &ctx, kind == Kind::Llm);
                same_object(w15, &have, PI_CONTEXT_EXTRA)
                    .unwrap_or_else(|e| panic!("{} {key} {ext}: {e}", d.file));
            }
            d.keys.len()
        }
        Kind::Tree | Kind::Meta => {
            assert!(
                same(&want073, &want15).is_err(),
                "{} {ext}: 0.73.1 now answers as 1.5.2",
                d.file
            );
            let have = if kind == Kind::Tree {
                let mut out = Vec::new();
                doc.index().tree(&doc).write_json(&doc, &mut out);
                parse_printed(&out)
            } else {
                meta_of(&doc)
            };
            same(&want15, &have).unwrap_or_else(|e| panic!("{} {ext}: {e}", d.file));
            1
        }
    }
}
