//! omp files: arbor's context equals what oh-my-pi's `buildSessionContext` answered:
//! 18.2.3's (goldens/omp-context/, made by tools/goldens/omp-context.sh with the real omp under
//! bun) with [`OmpVersion::V18_2`], and 18.3.4's for the same sessions (goldens/omp183/context/,
//! made by tools/goldens/omp183/make.sh from omp 18.2.3 carrying 18.3.4's changed session
//! code, since 18.3.4 cannot run here) with the default rules.
//!
//! Answer keys: `<id>` is `buildSessionContext(entries, id)` (no blob store: snapcompact frames
//! kept as blob references are unavailable), `store:<id>` the same with frames resolved from
//! the goldens' blob store (only where that differs), `__open__` the session manager's own
//! `buildSessionContext()` (store attached) and `__null__` the context of a `null` leaf.
//! Every key omp's object has is compared as canonical JSON.
use arbor_core::context::{build_session_context, LeafSel};
use arbor_core::context::{FrameBlobs, OmpContext, OmpVersion, SessionContext};
use arbor_core::json::{JsStr, JsValue};
use arbor_core::persist::{resolve_blob_refs, ResolveAs};
use arbor_core::{Dialect, SessionDoc, SharedBytes};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/omp-context")
}

/// The goldens' blob directory, read the way omp's store reads it.
struct Dir(PathBuf);

impl FrameBlobs for Dir {
    fn size(&self, hash: &str) -> Option<u64> {
        std::fs::metadata(self.0.join(hash)).ok().map(|m| m.len())
    }
    fn base64(&self, hash: &str) -> Option<String> {
        std::fs::read(self.0.join(hash))
            .ok()
            .map(|b| arbor_core::blobref::encode_base64(&b))
    }
}

/// Loads a session as omp does: blob references in message positions resolved from `blobs`
/// (snapcompact frames stay references; the context builder prices and reads those).
fn load(path: &Path, blobs: &Path) -> Result<SessionDoc, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let shared: SharedBytes = Arc::new(bytes);
    let mut doc = SessionDoc::parse(shared).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut replaced = Vec::new();
    for i in 0..doc.entries().len() {
        let line = doc.entry_line(i);
        if !line.windows(12).any(|w| w == b"blob:sha256:") {
            continue;
        }
        let Ok(mut v) = JsValue::parse(line) else {
            continue;
        };
        let mut resolve = |r: &JsStr, how: ResolveAs| -> Result<Option<JsStr>, String> {
            let Ok(Some(hash)) = arbor_core::blobref::parse_blob_ref(&r.0) else {
                return Ok(None);
            };
            let bytes = std::fs::read(blobs.join(hash)).map_err(|e| format!("blob {hash}: {e}"))?;
            Ok(Some(match how {
                ResolveAs::Base64 => JsStr::from(arbor_core::blobref::encode_base64(&bytes)),
                ResolveAs::DataUrl => JsStr::from(String::from_utf8_lossy(&bytes).into_owned()),
            }))
        };
        if resolve_blob_refs(&mut v, &mut resolve)? {
            replaced.push((i, v.to_json()));
        }
    }
    doc.replace_entry_lines(replaced)
        .map_err(|e| e.to_string())?;
    Ok(doc)
}

fn members(mut v: JsValue) -> Vec<(String, JsValue)> {
    match &mut v {
        JsValue::Object(m) => std::mem::take(m)
            .into_iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v))
            .collect(),
        other => panic!("expected an object, got {other:?}"),
    }
}

/// Compares every session under `dir` with its answers under `answers` (`NAME.context.json`),
/// built by `version`'s rules; returns (contexts compared, mismatches described).
fn check_dir(
    dir: &Path,
    answers: &Path,
    blob_dir: &Path,
    force_omp: bool,
    version: OmpVersion,
) -> (usize, Vec<String>) {
    let store = Dir(blob_dir.to_path_buf());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && answers_of(answers, p).is_some_and(|a| a.exists())
        })
        .collect();
    files.sort();
    let (mut compared, mut bad) = (0, Vec::new());
    for file in files {
        let doc = match load(&file, blob_dir) {
            Ok(doc) => doc,
            // Other recordings include files omp refuses or rewrites; those are not contexts.
            Err(_) if force_omp => continue,
            Err(e) => panic!("{e}"),
        };
        // JSON lines that are not objects (`42`, `true`) are entries to omp (they can even be
        // its leaf) but not to arbor's loader; that difference is the loader's, not the context's.
        if force_omp
            && doc
                .report()
                .malformed
                .iter()
                .any(|b| b.error.contains("not a JSON object"))
        {
            continue;
        }
        if !force_omp {
            assert_eq!(
                doc.dialect(),
                Dialect::Omp,
                "{}: not read as an omp file",
                file.display()
            );
        }
        let answer_file = answers_of(answers, &file).expect("answers file");
        let answer_bytes = std::fs::read(answer_file).expect("answers");
        let answer_set = members(JsValue::parse(&answer_bytes).expect("answers parse"));
        for (key, expected) in answer_set {
            let (leaf, blobs): (LeafSel<'_>, Option<&dyn FrameBlobs>) = match key.as_str() {
                "__open__" => (LeafSel::Current, Some(&store)),
                "__null__" => (LeafSel::Null, None),
                k => match k.strip_prefix("store:") {
                    Some(id) => (LeafSel::Id(id), Some(&store)),
                    None => (LeafSel::Id(k), None),
                },
            };
            // Other recordings of migrated v1 files carry ids omp made up on load.
            if let LeafSel::Id(id) = leaf {
                if force_omp && doc.index().get(id).is_none() {
                    continue;
                }
            }
            let ctx = if blobs.is_none() && !force_omp && version == OmpVersion::default() {
                build_session_context(&doc, leaf)
            } else {
                SessionContext::Omp(OmpContext::build_for(&doc, leaf, blobs, version))
            };
            let mut out = Vec::new();
            ctx.write_json(&doc, &mut out);
            let got = JsValue::parse(&out).unwrap_or_else(|e| {
                panic!("{} {key}: arbor wrote invalid JSON: {e}", file.display())
            });
            compared += 1;
            for (k, want) in members(expected) {
                let have = got.get(&k).map(JsValue::to_json);
                if have.as_deref() != Some(want.to_json().as_slice()) {
                    let show =
                        |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(400)]).into_owned();
                    bad.push(format!(
                        "{} leaf {key} key {k}:\n  omp:   {}\n  arbor: {}",
                        file.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        show(&want.to_json()),
                        have.map_or_else(|| "(absent)".into(), |h| show(&h)),
                    ));
                }
            }
            // pi's `model` key stays in every answer.
            assert!(
                got.get("model").is_some(),
                "{} {key}: no model key",
                file.display()
            );
        }
    }
    (compared, bad)
}

/// `answers/NAME.context.json` for `answers/../NAME.jsonl` style pairs.
fn answers_of(answers: &Path, session: &Path) -> Option<PathBuf> {
    let stem = session.file_stem()?.to_str()?;
    Some(answers.join(format!("{stem}.context.json")))
}

fn check_version(answers: &Path, version: OmpVersion) {
    let dir = goldens();
    let (compared, bad) = check_dir(&dir, answers, &dir.join("agent/blobs"), false, version);
    assert!(
        compared > 700,
        "only {compared} contexts found under {}",
        answers.display()
    );
    assert!(
        bad.is_empty(),
        "{version:?}: {} mismatches of {compared} contexts:\n{}",
        bad.len(),
        bad[..bad.len().min(8)].join("\n")
    );
}

#[test]
fn omp_contexts_match_omp_18_2() {
    check_version(&goldens(), OmpVersion::V18_2);
}

#[test]
fn omp_contexts_match_omp_18_3() {
    check_version(&goldens().join("../omp183/context"), OmpVersion::V18_3);
}

/// The two versions' answers differ exactly where the rules changed: Anthropic replay
/// compactions. Each set of goldens is what its own version answered, so a rule applied to the
/// wrong version fails one of the two tests above; this one shows the sets do differ.
#[test]
fn omp_versions_differ_on_anthropic_replay() {
    let a = goldens().join("raw-replay-snapshots.context.json");
    let b = goldens().join("../omp183/context/raw-replay-snapshots.context.json");
    let (a, b) = (
        std::fs::read(a).expect("18.2"),
        std::fs::read(b).expect("18.3"),
    );
    assert_ne!(a, b);
    assert!(
        b.windows(18).any(|w| w == b"\"historyRewriteAt\"")
            && !a.windows(18).any(|w| w == b"\"historyRewriteAt\"")
    );
}

/// Extra check against other recorded omp answers: `OMP_CONTEXT_DIR=DIR` (with `DIR/agent/blobs`)
/// runs the omp builder on every `NAME.jsonl` there, whatever its dialect.
#[test]
fn omp_contexts_match_other_recordings() {
    let Some(dir) = std::env::var_os("OMP_CONTEXT_DIR").map(PathBuf::from) else {
        return;
    };
    let (compared, bad) = check_dir(
        &dir,
        &dir,
        &dir.join("agent/blobs"),
        true,
        OmpVersion::V18_2,
    );
    assert!(
        bad.is_empty(),
        "{} mismatches of {compared} contexts:\n{}",
        bad.len(),
        bad[..bad.len().min(8)].join("\n")
    );
}

#[test]
fn pi_files_keep_pi_contexts() {
    // A pi file (no title slot, UUID session id) is built by pi's rules: no omp result, and
    // pi's key set (no configuredThinkingLevel, `thinkingLevel` copied as stored).
    let text = concat!(
        r#"{"type":"session","version":3,"id":"01a2037c-bbf0-770f-8989-326368e5c3bc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"thinking_level_change","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high","configured":"auto"}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"x","arguments":{}}],"provider":"p","model":"m","stopReason":"error","timestamp":1}}"#,
        "\n",
    );
    let shared: SharedBytes = Arc::new(text.as_bytes().to_vec());
    let doc = SessionDoc::parse(shared).expect("parse");
    assert_eq!(doc.dialect(), Dialect::Pi);
    let ctx = build_session_context(&doc, LeafSel::Current);
    assert!(matches!(ctx, SessionContext::Pi(_)));
    let mut out = Vec::new();
    ctx.write_json(&doc, &mut out);
    let got = JsValue::parse(&out).expect("json");
    // pi keeps the errored turn and its dangling call; omp would drop it.
    assert_eq!(
        got.get("messages")
            .map(JsValue::to_json)
            .map(|m| m.len() > 2),
        Some(true)
    );
    assert!(got.get("configuredThinkingLevel").is_none());
    assert_eq!(
        got.get("thinkingLevel").map(JsValue::to_json),
        Some(br#""high""#.to_vec())
    );
}
