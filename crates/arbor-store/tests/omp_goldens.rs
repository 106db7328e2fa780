//! arbor against the answers of the real omp 18.2.3 (goldens/omp, goldens/README.md): for
//! every `goldens/omp/NAME.jsonl`, loaded as `arbor context` loads it (`load_doc`, blob
//! references resolved from `goldens/omp/agent/blobs`), every key of
//!
//! * `NAME.tree.json`: `Tree::write_json` (`arbor tree --json`),
//! * `NAME.meta.json`: the header as omp's `getHeader()` shows it (title slot folded in),
//!   the session name and the leaf,
//! * `NAME.context.json` / `NAME.llm.json`: arbor's omp context builder (what `arbor context`
//!   runs for omp files) with the blob store attached, written by arbor's JSON writer,
//!
//! and `goldens/omp/list.json` against arbor's listing (`discover::list_dir`, what
//! `arbor ls --json --dir` prints) after the mtimes of `list/mtimes.json` are applied.
//! (goldens/omp-context/ is compared by arbor-core's `omp_context_goldens.rs`; these are
//! the other omp recordings.)
//!
//! Where omp's answer is a bug, or where arbor documents a different answer, [`DEVIATIONS`]
//! says so and arbor's own answer is asserted. Each test prints a one-line summary and fails
//! when a count does not add up.

use arbor_core::context::{build_session_context, LeafSel, SessionContext};
use arbor_core::context::{FrameBlobs, OmpContext, OmpVersion};
use arbor_core::json::JsValue;
use arbor_core::{Dialect, SessionDoc};
use arbor_store::blobs::{resolve_doc_blobs, BlobStore};
use arbor_testkit::goldens::*;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    goldens_root().join("omp")
}

fn blob_dir() -> PathBuf {
    dir().join("agent/blobs")
}

/// The golden kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Context,
    Llm,
    Tree,
    Meta,
}

/// A place where arbor deliberately answers differently from omp.
struct Deviation {
    file: &'static str,
    kinds: &'static [Kind],
    /// For context/llm: the keys replaced (`*`: all).
    keys: &'static [&'static str],
    reason: &'static str,
}

/// omp's answers arbor does not copy. Every other difference is an arbor bug.
const DEVIATIONS: &[Deviation] = &[
    Deviation {
        file: "edge-non-object-lines",
        kinds: &[Kind::Tree],
        keys: &[],
        reason: "omp keeps the lines 42, [1], \"s\", true as entries without id, and so does \
                 arbor (leaf undefined, an empty __open__ context: the goldens); the four share \
                 the `undefined` id, so getTree() lists the last of them once per line (the \
                 duplicate-id tree): arbor lists it once",
    },
    Deviation {
        file: "edge-duplicate-ids",
        kinds: &[Kind::Tree],
        keys: &[],
        reason: "omp's getTree() (as pi's) walks the subtree of a reused id twice; arbor lists \
                 the later entry once",
    },
    Deviation {
        file: "edge-empty",
        kinds: &[Kind::Context, Kind::Llm, Kind::Tree, Kind::Meta],
        keys: &["*"],
        reason: "omp rewrites an empty file to a title slot and a fresh header; arbor refuses \
                 it and leaves it empty",
    },
    Deviation {
        file: "edge-unknown-types",
        kinds: &[Kind::Meta],
        keys: &[],
        reason: "a file without omp's title slot is a pi file to arbor (README, dialect \
                 detection): its name is pi's (session_info, trimmed: \"spaced name\"), not \
                 omp's (header title: none)",
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

/// Loads a session as `arbor context` does (blob references resolved, strictly).
fn load(path: &Path) -> Result<SessionDoc, String> {
    let mut doc = arbor_store::load_doc(path).map_err(|e| e.to_string())?;
    resolve_doc_blobs(&mut doc, &BlobStore::new(blob_dir()), false).map_err(|e| e.to_string())?;
    Ok(doc)
}

fn golden(name: &str, ext: &str) -> Option<JsValue> {
    read_json_opt(&dir().join(format!("{name}.{ext}")))
}

/// Parses what arbor printed, which must already be exactly what `JSON.stringify` prints.
fn parse_printed(out: &[u8]) -> JsValue {
    let v = JsValue::parse(out).unwrap_or_else(|e| panic!("arbor wrote invalid JSON: {e}"));
    if let Err(d) = same_bytes(&v.to_json(), out) {
        panic!("arbor's output is not what JSON.stringify prints: {d}");
    }
    v
}

fn context_json(doc: &SessionDoc, ctx: &SessionContext, llm: bool) -> JsValue {
    let mut out = Vec::new();
    if llm {
        ctx.write_llm_json(doc, &mut out);
    } else {
        ctx.write_json(doc, &mut out);
    }
    parse_printed(&out)
}

/// arbor adds pi's `model` to omp's context object (docs/design-notes.md).
const OMP_CONTEXT_EXTRA: &[&str] = &["model"];

fn leaf_sel(key: &str) -> LeafSel<'_> {
    match key {
        "__open__" => LeafSel::Current,
        id => LeafSel::Id(id),
    }
}

fn check_contexts(kind: Kind) -> Tally {
    let ext = if kind == Kind::Llm {
        "llm.json"
    } else {
        "context.json"
    };
    let frames = BlobStore::new(blob_dir());
    let mut t = Tally::default();
    for (name, path) in inputs(&dir()) {
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
        for (key, want) in answers {
            if deviates(&name, kind, Some(&key)) {
                t.deviated += 1;
                continue;
            }
            let arbor_key = map.id(&key);
            if key != "__open__" && doc.index().get(&arbor_key).is_none() {
                t.bad.push(format!(
                    "{name} {key}: no entry {arbor_key} in arbor's view"
                ));
                continue;
            }
            // omp's rules (what arbor runs for omp files), with the blob store attached as
            // omp's SessionManager has it. Files without a title slot are pi files to arbor,
            // whose CLI answer is pi's (compared in pi_goldens.rs on the same bytes).
            let ctx =
                SessionContext::Omp(OmpContext::build(&doc, leaf_sel(&arbor_key), Some(&frames)));
            if doc.dialect() == Dialect::Omp {
                let cli = build_session_context(&doc, leaf_sel(&arbor_key));
                assert!(
                    matches!(cli, SessionContext::Omp(_)),
                    "{name}: an omp file built by pi's rules"
                );
            }
            let have = context_json(&doc, &ctx, kind == Kind::Llm);
            t.compared += 1;
            if let Err(d) = same_object(&map.value(want), &have, OMP_CONTEXT_EXTRA) {
                t.bad.push(format!("{name} {key}: {d}"));
            }
        }
    }
    t
}

#[test]
fn omp_context_goldens() {
    let mut t = check_contexts(Kind::Context);
    own_answers(Kind::Context, &mut t);
    t.finish("omp context.json");
}

#[test]
fn omp_llm_goldens() {
    let mut t = check_contexts(Kind::Llm);
    own_answers(Kind::Llm, &mut t);
    t.finish("omp llm.json");
}

#[test]
fn omp_tree_goldens() {
    let mut t = Tally::default();
    for (name, path) in inputs(&dir()) {
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
        t.compared += 1;
        if let Err(d) = same(&map.value(&want), &parse_printed(&out)) {
            t.bad.push(format!("{name}: {d}"));
        }
    }
    own_answers(Kind::Tree, &mut t);
    t.finish("omp tree.json");
}

/// omp's `getHeader()`, `getSessionName()`, `getLeafId()` as arbor answers them.
fn meta_of(doc: &SessionDoc) -> JsValue {
    let header = JsValue::parse(&arbor_core::title::header_view(doc)).expect("header JSON");
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
fn omp_meta_goldens() {
    let mut t = Tally::default();
    for (name, path) in inputs(&dir()) {
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
    t.finish("omp meta.json");
}

/// Asserts arbor's own answer wherever [`DEVIATIONS`] replaces omp's for `kind`, and where
/// omp gave no answer (it refuses or throws).
fn own_answers(kind: Kind, t: &mut Tally) {
    for d in DEVIATIONS {
        assert!(!d.reason.is_empty());
        if !d.kinds.contains(&kind) {
            continue;
        }
        let path = dir().join(format!("{}.jsonl", d.file));
        let bytes = std::fs::read(&path).expect("input");
        match d.file {
            "edge-empty" => {
                let err = load(&path).expect_err(d.file);
                assert!(err.contains("not a session"), "{}: {err}", d.file);
                assert_eq!(std::fs::read(&path).expect("input"), bytes, "{}", d.file);
            }
            "edge-non-object-lines" => {
                let doc = load(&path).expect(d.file);
                let skipped = doc
                    .report()
                    .malformed
                    .iter()
                    .filter(|b| b.error == "not a JSON object")
                    .count();
                assert_eq!(skipped, 4, "{}: lines reported", d.file);
                assert_eq!(doc.entries().iter().filter(|e| e.non_object).count(), 4);
                if kind == Kind::Tree {
                    // The golden tree with the repeated node listed once.
                    let mut want = golden(d.file, "tree.json").expect("golden");
                    if let Some(JsValue::Array(r)) = want.get_mut("roots") {
                        let mut seen = false;
                        r.retain(|x| *x != JsValue::Null || !std::mem::replace(&mut seen, true));
                    }
                    if let Some(JsValue::Array(n)) = want.get_mut("nodes") {
                        let mut seen = false;
                        n.retain(|x| x.get("raw").is_none() || !std::mem::replace(&mut seen, true));
                    }
                    let mut out = Vec::new();
                    doc.index().tree(&doc).write_json(&doc, &mut out);
                    same(&want, &parse_printed(&out))
                        .unwrap_or_else(|e| panic!("{} tree: {e}", d.file));
                }
            }
            "edge-duplicate-ids" => {
                let doc = load(&path).expect(d.file);
                let mut out = Vec::new();
                doc.index().tree(&doc).write_json(&doc, &mut out);
                let want = JsValue::parse(DUPLICATE_IDS_TREE.as_bytes()).expect("literal");
                same(&want, &parse_printed(&out))
                    .unwrap_or_else(|e| panic!("{} tree: {e}", d.file));
            }
            "edge-unknown-types" => {
                // A pi file to arbor: its meta is pi's recorded answer for the same bytes.
                let pi_dir = goldens_root().join("pi");
                assert_eq!(
                    std::fs::read(pi_dir.join("edge-unknown-types.jsonl")).expect("pi input"),
                    bytes
                );
                let doc = load(&path).expect(d.file);
                assert_eq!(doc.dialect(), Dialect::Pi);
                let want = read_json(&pi_dir.join("edge-unknown-types.meta.json"));
                same(&want, &meta_of(&doc)).unwrap_or_else(|e| panic!("{} meta: {e}", d.file));
            }
            other => panic!("{other}: no check of arbor's own answer"),
        }
        t.own += 1;
    }
    if kind == Kind::Context {
        // omp refuses a file whose first line is an entry (arbor too) and throws on a `null`
        // line (arbor skips it as malformed): no answers recorded, arbor's own asserted.
        let no_header = dir().join("edge-no-header.jsonl");
        assert!(
            std::fs::read_to_string(dir().join("edge-no-header.error.txt"))
                .expect("error.txt")
                .contains("header is missing or malformed")
        );
        let err = load(&no_header).expect_err("edge-no-header");
        assert!(err.contains("not a session"), "edge-no-header: {err}");
        let doc = load(&dir().join("edge-null-line.jsonl")).expect("edge-null-line");
        assert!(doc
            .report()
            .malformed
            .iter()
            .any(|b| b.error == "not a JSON object"));
        assert_eq!(doc.entries().len(), 2, "edge-null-line");
        t.own += 2;
    }
}

fn set_mtime(path: &Path, iso: &str) {
    let ms = arbor_core::time::parse_iso_ms(iso).expect("ISO time");
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(t))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// omp 18.2.3's `SessionManager.list` of goldens/omp/list (real omp). 18.3 added one key,
/// `assistantTurns`, which is left out of arbor's objects for this comparison; the next test
/// compares it.
#[test]
fn omp_list_golden() {
    let compared = check_list(
        &[dir().join("list")],
        &dir().join("list.json"),
        &["assistantTurns"],
    );
    assert!(compared >= 187, "every field of the 18 listed sessions");
}

/// omp 18.3.4's `SessionManager.list` of goldens/omp/list and goldens/omp183/list-extra
/// (tools/goldens/omp183/make.sh: omp 18.2.3 running 18.3.4's session-listing.ts), every key;
/// and `isEmptySession` on them, from the rule in 18.3.4's source.
#[test]
fn omp_183_list_golden() {
    let extra = goldens_root().join("omp183/list-extra");
    let want = goldens_root().join("omp183/list.json");
    let compared = check_list(&[dir().join("list"), extra.clone()], &want, &[]);
    assert!(
        compared >= 339,
        "every field of the 30 listed sessions ({compared})"
    );

    let tmp = tempfile::tempdir().expect("tempdir");
    copy_with_mtimes(&extra, tmp.path());
    copy_with_mtimes(&dir().join("list"), tmp.path());
    let empty: Vec<String> = arbor_store::omp_info::list_dir_omp(tmp.path(), &[])
        .into_iter()
        .filter(|i| i.is_empty_session())
        .filter_map(|i| i.path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    // No assistant turn, and no title or first prompt left after omp's sanitizeSessionName
    // (first line, control characters removed, trimmed): omp's own isEmptySession answers.
    let want: Vec<String> = match read_json(&goldens_root().join("omp183/empty.json")) {
        JsValue::Array(ref v) => v
            .iter()
            .filter_map(|s| s.as_str_lossy().map(|s| s.into_owned()))
            .collect(),
        _ => panic!("empty.json is not an array"),
    };
    assert_eq!(want.len(), 4, "empty.json");
    assert_eq!(empty, want);
}

/// Copies the files `src/mtimes.json` names into `to`, with those mtimes; returns how many.
fn copy_with_mtimes(src: &Path, to: &Path) -> usize {
    let mtimes = read_json(&src.join("mtimes.json"));
    let mut copied = 0;
    for (name, mtime) in members(&mtimes) {
        let dst = to.join(&name);
        std::fs::copy(src.join(&name), &dst).expect("copy");
        set_mtime(&dst, &mtime.as_str_lossy().expect("mtime string"));
        copied += 1;
    }
    copied
}

/// Lists the files of `srcs` (each with its mtimes.json) in one directory and compares arbor's
/// objects, without the keys `drop`, with `want`'s: same sessions, same order, same keys in the
/// same order, same values. Returns the number of fields compared.
fn check_list(srcs: &[PathBuf], want: &Path, drop: &[&str]) -> usize {
    let want = read_json(want);
    let tmp = tempfile::tempdir().expect("tempdir");
    let copied: usize = srcs.iter().map(|s| copy_with_mtimes(s, tmp.path())).sum();
    let JsValue::Array(ref want) = want else {
        panic!("the list golden is not an array")
    };
    assert!(copied >= want.len(), "mtimes.json names every input");

    let listed = arbor_store::omp_info::list_dir_omp(tmp.path(), &[]);
    let have: Vec<JsValue> = listed
        .iter()
        .map(|info| {
            let mut out = Vec::new();
            info.write_json(&mut out);
            let mut v = JsValue::parse(&out).expect("arbor's omp SessionInfo JSON");
            if let JsValue::Object(m) = &mut v {
                m.retain(|(k, _)| !drop.iter().any(|d| k.0 == d.as_bytes()));
            }
            let rel = info
                .path
                .strip_prefix(tmp.path())
                .expect("listed under the directory");
            v.set(
                "path",
                JsValue::String(rel.to_string_lossy().as_ref().into()),
            );
            v
        })
        .collect();
    // Same sessions in the same order, every field of every object compared, keys in omp's
    // order (nothing is excused).
    let path_of = |v: &JsValue| {
        v.get("path")
            .and_then(JsValue::as_str_lossy)
            .map(|p| p.into_owned())
    };
    assert_eq!(
        have.iter().filter_map(path_of).collect::<Vec<_>>(),
        want.iter().filter_map(path_of).collect::<Vec<_>>(),
        "the sessions listed, in omp's order"
    );
    let (mut compared, mut bad) = (0, Vec::new());
    for (w, h) in want.iter().zip(&have) {
        let path = path_of(w).expect("path");
        assert_eq!(keys(h), keys(w), "{path}: keys and their order");
        for (key, wv) in members(w) {
            compared += 1;
            if let Err(d) = same(wv, h.get(&key).expect("same keys")) {
                bad.push(format!("{path} {key}: {d}"));
            }
        }
    }
    println!(
        "omp list: {} sessions, {compared} fields compared, {} mismatches",
        want.len(),
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    compared
}

/// omp's `convertToLlm` on every context of goldens/omp-context (NAME.llm.json, made by
/// tools/goldens/omp-context-llm.sh; the contexts themselves are compared by arbor-core's
/// omp_context_goldens.rs): `<id>` without a blob store, `store:<id>` with it, `__open__`
/// the session's own context (store attached), `__null__` the empty one. Keys where omp throws
/// (`{"throws": …}`: messages that are not objects) are arbor's best effort (design notes) and
/// only checked to be an array.
/// The same for omp 18.3.4's answers (goldens/omp183/context/, made by
/// tools/goldens/omp183/make.sh) with arbor's default rules, and 18.2.3's with `V18_2`.
#[test]
fn omp_context_llm_goldens() {
    let dir = goldens_root().join("omp-context");
    check_llm(&dir, OmpVersion::V18_2, "omp-context llm.json (18.2.3)");
    let answers = goldens_root().join("omp183/context");
    check_llm(&answers, OmpVersion::V18_3, "omp183 llm.json (18.3.4)");
}

fn check_llm(answers: &Path, version: OmpVersion, what: &str) {
    let dir = goldens_root().join("omp-context");
    let frames = BlobStore::new(dir.join("agent/blobs"));
    let mut t = Tally::default();
    for (name, path) in inputs(&dir) {
        let Some(want) = read_json_opt(&answers.join(format!("{name}.llm.json"))) else {
            continue;
        };
        t.files += 1;
        let mut doc = arbor_store::load_doc(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        resolve_doc_blobs(&mut doc, &BlobStore::new(dir.join("agent/blobs")), false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.dialect(), Dialect::Omp, "{name}");
        for (key, want) in members(&want) {
            t.golden += 1;
            let (leaf, store): (LeafSel<'_>, Option<&dyn FrameBlobs>) = match key.as_str() {
                "__open__" => (LeafSel::Current, Some(&frames)),
                "__null__" => (LeafSel::Null, None),
                k => match k.strip_prefix("store:") {
                    Some(id) => (LeafSel::Id(id), Some(&frames)),
                    None => (LeafSel::Id(k), None),
                },
            };
            if let LeafSel::Id(id) = leaf {
                assert!(doc.index().get(id).is_some(), "{name}: no entry {id}");
            }
            let ctx = SessionContext::Omp(OmpContext::build_for(&doc, leaf, store, version));
            let have = context_json(&doc, &ctx, true);
            let have = have.get("messages").expect("messages");
            if want.get("throws").is_some() {
                assert!(matches!(have, JsValue::Array(_)), "{name} {key}");
                t.deviated += 1;
                t.own += 1;
                continue;
            }
            t.compared += 1;
            if let Err(d) = same(want, have) {
                t.bad.push(format!("{name} {key}: {d}"));
            }
        }
    }
    assert!(t.files >= 9, "{what}: {} files", t.files);
    t.finish(what);
}

/// goldens/fuzz-omp cases whose tree arbor does not match yet: omp runs under bun, whose
/// JavaScriptCore sorts children with an inconsistent comparator (a sibling with an
/// unparseable timestamp: `NaN`) in another order than V8, whose sort arbor follows
/// (`js_sort`). Everything but the sibling order is compared (docs/pi-versions.md).
const JSC_SIBLING_ORDER: &[&str] = &["fuzz-5c02d183f8"];

/// A tree JSON with its nodes ordered by id and every `children` list sorted: what stays when
/// sibling order is set aside.
fn sorted_siblings(tree: &JsValue) -> JsValue {
    let key = |v: &JsValue| v.to_json();
    let mut t = tree.clone();
    if let Some(JsValue::Array(nodes)) = t.get_mut("nodes") {
        for n in nodes.iter_mut() {
            if let Some(JsValue::Array(c)) = n.get_mut("children") {
                c.sort_by_key(key);
            }
        }
        nodes.sort_by_key(key);
    }
    if let Some(JsValue::Array(r)) = t.get_mut("roots") {
        r.sort_by_key(key);
    }
    t
}

/// The omp side of the differential fuzzer (tools/fuzz-pi, `--oracle omp`): its minimised
/// disagreements in goldens/fuzz-omp, each with omp 18.2.3's answers (`omp-oracle.ts expect
/// --sample 1000 --store`: every context with the blob store attached, as `arbor context`
/// has it; the blobs a case refers to are in goldens/fuzz-omp/agent/blobs). Every key of
/// context.json and llm.json (arbor's omp builder with 18.2's rules, what `arbor context
/// --omp-version 18.2` runs), tree.json and meta.json. The keys omp threw on or could not
/// convert (`error.txt`) are answered by arbor and checked to be an object.
#[test]
fn fuzz_omp_goldens() {
    let dir = goldens_root().join("fuzz-omp");
    let blobs = BlobStore::new(dir.join("agent/blobs"));
    let mut ctx_t = Tally::default();
    let mut llm_t = Tally::default();
    let mut tree_t = Tally::default();
    let mut meta_t = Tally::default();
    for (name, path) in inputs(&dir) {
        let mut doc = arbor_store::load_doc(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        resolve_doc_blobs(&mut doc, &blobs, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(doc.dialect(), Dialect::Omp, "{name}");
        let map = id_map(&doc, &peer_entries(&dir, &name, &path))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (t, llm) in [(&mut ctx_t, false), (&mut llm_t, true)] {
            let ext = if llm { "llm.json" } else { "context.json" };
            let Some(want) = read_json_opt(&dir.join(format!("{name}.{ext}"))) else {
                continue;
            };
            t.files += 1;
            for (key, want) in members(&want) {
                t.golden += 1;
                let arbor_key = map.id(&key);
                let ctx = SessionContext::Omp(OmpContext::build_for(
                    &doc,
                    leaf_sel(&arbor_key),
                    Some(&blobs),
                    OmpVersion::V18_2,
                ));
                t.compared += 1;
                if let Err(d) = same_object(
                    &map.value(want),
                    &context_json(&doc, &ctx, llm),
                    OMP_CONTEXT_EXTRA,
                ) {
                    t.bad.push(format!("{name} {key}: {d}"));
                }
            }
        }
        if let Some(want) = read_json_opt(&dir.join(format!("{name}.tree.json"))) {
            tree_t.files += 1;
            tree_t.golden += 1;
            let mut out = Vec::new();
            doc.index().tree(&doc).write_json(&doc, &mut out);
            let have = parse_printed(&out);
            if JSC_SIBLING_ORDER.contains(&name.as_str()) {
                // Not yet followed (docs/pi-versions.md): the same tree, siblings in another
                // order. Fails once arbor follows JavaScriptCore's sort here: then drop the name.
                assert!(
                    same(&want, &have).is_err(),
                    "{name}: now equal to omp's tree"
                );
                same(&sorted_siblings(&want), &sorted_siblings(&have))
                    .unwrap_or_else(|d| panic!("{name}: more than the sibling order differs: {d}"));
                tree_t.deviated += 1;
                tree_t.own += 1;
                continue;
            }
            tree_t.compared += 1;
            if let Err(d) = same(&map.value(&want), &have) {
                tree_t.bad.push(format!("{name}: {d}"));
            }
        }
        if let Some(want) = read_json_opt(&dir.join(format!("{name}.meta.json"))) {
            meta_t.files += 1;
            meta_t.golden += 1;
            meta_t.compared += 1;
            if let Err(d) = same(&map.value(&want), &meta_of(&doc)) {
                meta_t.bad.push(format!("{name}: {d}"));
            }
        }
    }
    assert!(tree_t.files >= 1, "goldens/fuzz-omp holds no case");
    ctx_t.finish("fuzz-omp context.json");
    llm_t.finish("fuzz-omp llm.json");
    tree_t.finish("fuzz-omp tree.json");
    meta_t.finish("fuzz-omp meta.json");
}
