//! Shared by the golden harnesses (`arbor-core/tests/pi_goldens.rs`,
//! `arbor-store/tests/omp_goldens.rs`): reading the answers of the real pi / omp
//! (goldens/README.md), mapping the ids pi made up when it migrated a v1 file onto arbor's
//! deterministic ones, and comparing JSON values **with their key order** (two values are the
//! same when `JSON.stringify` prints them byte for byte alike: member order as inserted,
//! integer-like keys first, as JS does).

use arbor_core::json::{JsStr, JsValue};
use arbor_core::SessionDoc;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `goldens/` of the checkout (both crates sit two levels below it).
pub fn goldens_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens")
}

/// Copies the directory tree `from` to `to` (created), files and directories (a HOME laid out
/// with the goldens of other agents, `goldens/agents/…`, where each agent keeps them).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for e in entries {
        let e = e.unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let t = to.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap_or_else(|e| panic!("{}: {e}", t.display()));
        }
    }
}

/// The real v1 session the `fixture-v1-large.*` goldens were made from (`../shared/fixtures`
/// beside the checkout), if present.
pub fn shared_fixture() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/pi-real-v1-large-session.jsonl");
    p.exists().then_some(p)
}

/// Parses a golden JSON file with JS semantics.
pub fn read_json(path: &Path) -> JsValue {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    JsValue::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `read_json` of a file that may be absent.
pub fn read_json_opt(path: &Path) -> Option<JsValue> {
    path.exists().then(|| read_json(path))
}

/// The members of an object (panics on anything else), keys as text.
pub fn members(v: &JsValue) -> Vec<(String, &JsValue)> {
    match v {
        JsValue::Object(m) => m
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v))
            .collect(),
        other => panic!("expected an object, got {other:?}"),
    }
}

/// The keys of an object, in order.
pub fn keys(v: &JsValue) -> Vec<String> {
    members(v).into_iter().map(|(k, _)| k).collect()
}

/// Where two JSON texts first differ, with some context on both sides.
pub fn first_diff(want: &[u8], have: &[u8]) -> String {
    let at = want
        .iter()
        .zip(have)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(have.len()));
    let from = at.saturating_sub(120);
    let cut = |b: &[u8]| {
        let to = (at + 200).min(b.len());
        String::from_utf8_lossy(&b[from.min(to)..to]).into_owned()
    };
    format!(
        "at byte {at} (lengths {} / {}):\n      golden: …{}…\n      arbor:  …{}…",
        want.len(),
        have.len(),
        cut(want),
        cut(have)
    )
}

/// `Ok` when two byte strings are equal.
pub fn same_bytes(want: &[u8], have: &[u8]) -> Result<(), String> {
    if want == have {
        Ok(())
    } else {
        Err(first_diff(want, have))
    }
}

/// `Ok` when `have` prints exactly as `want` (values, key order, number spelling).
pub fn same(want: &JsValue, have: &JsValue) -> Result<(), String> {
    same_bytes(&want.to_json(), &have.to_json())
}

/// Compares an object arbor printed with the golden one: arbor's keys, minus `extra` (keys
/// arbor documents adding), must be the golden's keys in the golden's order, each value the
/// same; every key of `extra` must be present.
pub fn same_object(want: &JsValue, have: &JsValue, extra: &[&str]) -> Result<(), String> {
    let wk = keys(want);
    let hk: Vec<String> = keys(have)
        .into_iter()
        .filter(|k| !extra.contains(&k.as_str()))
        .collect();
    if wk != hk {
        return Err(format!("keys: golden {wk:?}, arbor {hk:?}"));
    }
    for x in extra {
        if have.get(x).is_none() {
            return Err(format!("arbor's documented key {x:?} is missing"));
        }
    }
    for (k, w) in members(want) {
        let h = have.get(&k).expect("same keys");
        same(w, h).map_err(|d| format!("key {k:?} {d}"))?;
    }
    Ok(())
}

/// Peer ids → arbor ids, for files whose ids the peer made up (v1 migrations).
#[derive(Default, Debug)]
pub struct IdMap(pub HashMap<String, String>);

impl IdMap {
    /// The arbor id for a peer id (itself when not mapped).
    pub fn id(&self, s: &str) -> String {
        self.0.get(s).cloned().unwrap_or_else(|| s.to_string())
    }
    /// A copy of `v` with every string that is a mapped peer id replaced by arbor's id.
    pub fn value(&self, v: &JsValue) -> JsValue {
        if self.0.is_empty() {
            return v.clone();
        }
        match v {
            JsValue::String(s) => match self.0.get(s.to_string_lossy().as_ref()) {
                Some(a) => JsValue::String(JsStr::from(a.as_str())),
                None => v.clone(),
            },
            JsValue::Array(items) => JsValue::Array(items.iter().map(|i| self.value(i)).collect()),
            JsValue::Object(m) => {
                JsValue::Object(m.iter().map(|(k, v)| (k.clone(), self.value(v))).collect())
            }
            other => other.clone(),
        }
    }
}

/// The peer's `getEntries()`: `NAME.entries.json` when written, else every non-empty line of
/// `NAME.open.jsonl` (else of the input), JSON-parsed, minus omp's title slot (line 1) and
/// the first header (goldens/README.md). Lines that do not parse are left out.
pub fn peer_entries(dir: &Path, name: &str, input: &Path) -> Vec<JsValue> {
    if let Some(JsValue::Array(v)) = read_json_opt(&dir.join(format!("{name}.entries.json")))
        .as_mut()
        .map(|j| std::mem::replace(j, JsValue::Null))
        .as_mut()
    {
        return std::mem::take(v);
    }
    let open = dir.join(format!("{name}.open.jsonl"));
    let bytes = std::fs::read(if open.exists() { &open } else { input })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut out = Vec::new();
    let mut header_seen = false;
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(v) = JsValue::parse(line) else {
            continue;
        };
        let t = v.get("type").and_then(JsValue::as_str_lossy);
        if n == 0 && t.as_deref() == Some("title") {
            continue;
        }
        if !header_seen && t.as_deref() == Some("session") {
            header_seen = true;
            continue;
        }
        out.push(v);
    }
    out
}

/// Maps the peer's ids onto arbor's: the identity, except for a migrated v1/v2 file, where
/// the k-th entry of the peer's migrated entries is the k-th entry of arbor's view.
pub fn id_map(doc: &SessionDoc, peer: &[JsValue]) -> Result<IdMap, String> {
    let mut map = IdMap::default();
    if doc.migration().is_none() {
        return Ok(map);
    }
    if peer.len() != doc.entries().len() {
        return Err(format!(
            "migrated entries: the peer has {}, arbor {}",
            peer.len(),
            doc.entries().len()
        ));
    }
    for (k, (p, e)) in peer.iter().zip(doc.entries()).enumerate() {
        let pid = p.get("id").and_then(JsValue::as_str_lossy);
        match (pid, e.id.as_deref()) {
            (Some(p), Some(a)) => {
                if p != a {
                    map.0.insert(p.into_owned(), a.to_string());
                }
            }
            (None, None) => {}
            (p, a) => return Err(format!("entry {k}: peer id {p:?}, arbor id {a:?}")),
        }
    }
    Ok(map)
}

/// The keys the peer hung on (`NAME.error.txt`: "context keys left out of …: a, b").
pub fn hung_keys(dir: &Path, name: &str) -> Vec<String> {
    failed_keys(dir, name, "hang")
}

/// The context keys pi threw on (`error.txt` lines `buildSessionContext(entries, "ID"): throw`,
/// `__open__` for `sm.buildSessionContext()`).
pub fn thrown_keys(dir: &Path, name: &str) -> Vec<String> {
    failed_keys(dir, name, "throw")
}

fn failed_keys(dir: &Path, name: &str, how: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join(format!("{name}.error.txt"))) else {
        return Vec::new();
    };
    let left_out: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("context keys left out of context.json/llm.json: "))
        .flat_map(|l| l.split(", ").map(str::to_string))
        .collect();
    left_out
        .into_iter()
        .filter(|key| {
            let call = if key == "__open__" {
                "via sm.buildSessionContext()): ".to_string()
            } else {
                format!("buildSessionContext(entries, \"{key}\"): ")
            };
            text.lines()
                .find_map(|l| {
                    l.split_once(call.as_str())
                        .map(|(_, rest)| rest.starts_with(how))
                })
                .unwrap_or(how == "hang")
        })
        .collect()
}

/// The `*.jsonl` inputs of a golden directory (not the `NAME.open.jsonl` outputs), sorted.
pub fn inputs(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let n = p.file_name()?.to_str()?.to_string();
            let stem = n.strip_suffix(".jsonl")?;
            (!stem.ends_with(".open")).then(|| (stem.to_string(), p.clone()))
        })
        .collect();
    v.sort();
    v
}

/// arbor's own tree for edge-duplicate-ids: pi's (and omp's) tree with the duplicated child listed once.
pub const DUPLICATE_IDS_TREE: &str = concat!(
    r#"{"leaf":"f0000005","roots":["f0000001"],"nodes":["#,
    r#"{"id":"f0000001","parentId":null,"type":"message","timestamp":"2025-01-01T00:00:01.000Z","children":["f0000002"]},"#,
    r#"{"id":"f0000002","parentId":"f0000001","type":"message","timestamp":"2025-01-01T00:00:04.000Z","children":["f0000003","f0000004"]},"#,
    r#"{"id":"f0000003","parentId":"f0000002","type":"message","timestamp":"2025-01-01T00:00:03.000Z","children":[]},"#,
    r#"{"id":"f0000004","parentId":"f0000002","type":"message","timestamp":"2025-01-01T00:00:05.000Z","children":["f0000005"]},"#,
    r#"{"id":"f0000005","parentId":"f0000004","type":"message","timestamp":"2025-01-01T00:00:06.000Z","children":[]}]}"#,
);

/// Counts of one golden kind: keys (or files) compared with the peer's answer, keys where
/// arbor's own documented answer was asserted instead, and the mismatches.
#[derive(Default)]
pub struct Tally {
    /// Golden answers compared and equal or not.
    pub compared: usize,
    /// Golden answers in the files (what `compared` must reach, minus deviations).
    pub golden: usize,
    /// Golden answers replaced by arbor's own documented answer (the deviation table).
    pub deviated: usize,
    /// Extra checks of arbor's own answer where the peer gave none (hangs, throws).
    pub own: usize,
    /// Files the kind was read from.
    pub files: usize,
    /// What differed.
    pub bad: Vec<String>,
}

impl Tally {
    /// Prints the one-line summary and fails the test on a mismatch or a count that does not
    /// add up (a comparison that silently did not run).
    pub fn finish(&self, what: &str) {
        println!(
            "{what}: {} golden answers in {} files: {} compared, {} replaced by arbor's documented answer, {} extra checks of arbor's own answer, {} mismatches",
            self.golden,
            self.files,
            self.compared,
            self.deviated,
            self.own,
            self.bad.len()
        );
        assert!(
            self.bad.is_empty(),
            "{what}: {} mismatches:\n{}",
            self.bad.len(),
            self.bad[..self.bad.len().min(
                std::env::var("GOLDEN_SHOW")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(12)
            )]
                .join("\n")
        );
        assert!(self.compared > 0, "{what}: nothing compared");
        assert_eq!(
            self.compared + self.deviated,
            self.golden,
            "{what}: compared + deviations must cover every golden answer"
        );
    }
}
