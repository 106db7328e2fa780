//! Sessions written only through `arbor new` / `arbor append`, read back by the real pi 0.73.1
//! and omp 18.2.3 (goldens/readback/, made by tools/readback/make.sh; no node or bun needed here):
//!
//! * arbor's `context --leaf ID`, `context --llm --leaf ID` and `tree --json` of each committed
//!   arbor-written file equal the peer's recorded answers for every entry id (and for the leaf the
//!   peer opens on), key order included;
//! * replaying the same op sequence (goldens/readback/ops.json, omp-ops.json) through the built
//!   binary now writes lines whose entry types, parent structure and JSON key sequences (values
//!   aside) equal the lines pi's / omp's own `SessionManager` wrote (`*-writer.jsonl`).
use arbor_core::json::{JsStr, JsValue};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn goldens() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/readback")
}

fn arbor(args: &[&[u8]], stdin: Option<&[u8]>, home: &Path) -> Vec<u8> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .env("HOME", home)
        .env("ARBOR_CATALOG", home.join("catalog.db"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn arbor");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin.unwrap_or_default())
        .expect("write stdin");
    drop(pipe);
    let out = child.wait_with_output().expect("arbor output");
    assert!(
        out.status.success(),
        "arbor {:?}: {}",
        args.iter()
            .map(|a| String::from_utf8_lossy(a))
            .collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn parse(bytes: &[u8]) -> JsValue {
    JsValue::parse(bytes).expect("JSON")
}

fn read(name: &str) -> JsValue {
    parse(&std::fs::read(goldens().join(name)).expect(name))
}

fn members(v: &JsValue) -> &[(JsStr, JsValue)] {
    match v {
        JsValue::Object(m) => m,
        _ => panic!("not an object"),
    }
}

/// The value's key sequences, recursively (values themselves left out).
fn shape(v: &JsValue) -> String {
    match v {
        JsValue::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", k.to_string_lossy(), shape(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        JsValue::Array(a) => format!("[{}]", a.iter().map(shape).collect::<Vec<_>>().join(",")),
        _ => String::new(),
    }
}

fn lines(bytes: &[u8]) -> Vec<JsValue> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(parse)
        .collect()
}

fn str_of<'a>(v: &'a JsValue, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    v.get(key).and_then(|x| x.as_str_lossy())
}

/// (name, keys arbor adds to the peer's context, documented in the README)
const CASES: &[(&str, &[&str])] = &[
    ("pi-arbor", &["models", "injectedTtsrRules", "mode"]),
    ("omp-arbor", &["model"]),
];

#[test]
fn arbor_answers_on_arbor_written_files_equal_the_peers_answers() {
    let home = tempfile::tempdir().expect("tempdir");
    for (name, extra) in CASES {
        let jsonl = goldens().join(format!("{name}.jsonl"));
        for suffix in ["open.jsonl", "error.txt"] {
            assert!(
                !goldens().join(format!("{name}.{suffix}")).exists(),
                "{name}: the peer rewrote or refused the arbor-written file"
            );
        }
        let file = home.path().join(format!("{name}.jsonl"));
        std::fs::copy(&jsonl, &file).expect("copy");
        let f = file.as_os_str().as_bytes();
        let entries = lines(&std::fs::read(&file).expect("read"))
            .iter()
            .filter(|e| e.get("id").is_some() && str_of(e, "type").as_deref() != Some("session"))
            .count();
        let mut compared = 0;
        for (kind, flag) in [("context", None), ("llm", Some(&b"--llm"[..]))] {
            let golden = read(&format!("{name}.{kind}.json"));
            for (key, want) in members(&golden) {
                let mut args: Vec<&[u8]> = vec![b"context", f];
                args.extend(flag);
                if key.0 != b"__open__" {
                    args.extend([&b"--leaf"[..], &key.0[..]]);
                }
                let mut got = parse(&arbor(&args, None, home.path()));
                for k in *extra {
                    assert!(
                        got.remove(k).is_some(),
                        "{name} {key:?}: arbor's {k} missing"
                    );
                }
                assert_eq!(&got, want, "{name}: {kind} of {key:?}");
                assert_eq!(
                    shape(&got),
                    shape(want),
                    "{name}: key order of {kind} {key:?}"
                );
                compared += 1;
            }
        }
        // every entry and the open leaf, context and llm
        assert_eq!(compared, 2 * (entries + 1), "{name}: answers compared");
        let tree = parse(&arbor(&[b"tree", f, b"--json"], None, home.path()));
        let want = read(&format!("{name}.tree.json"));
        assert_eq!(tree, want, "{name}: tree");
        assert_eq!(shape(&tree), shape(&want), "{name}: tree key order");
        match tree.get("nodes") {
            Some(JsValue::Array(n)) => assert_eq!(n.len(), entries, "{name}: tree nodes"),
            _ => panic!("{name}: no nodes"),
        }
        let meta = read(&format!("{name}.meta.json"));
        let header = lines(&std::fs::read(&file).expect("read"))
            .into_iter()
            .find(|e| str_of(e, "type").as_deref() == Some("session"))
            .expect("header");
        assert_eq!(meta.get("header"), Some(&header), "{name}: header");
        assert_eq!(
            std::fs::read(&file).expect("read"),
            std::fs::read(&jsonl).expect("read"),
            "{name}: reading changed the file"
        );
        assert!(compared > 0 && entries > 20, "{name}: nothing compared");
    }
}

/// Writes the ops through `arbor new` / `arbor append` (argv, and stdin `-` for runs of
/// `"stdin": true` ops) as tools/readback/make.py does; returns the file's bytes.
fn replay(ops_file: &str, omp: bool, home: &Path) -> Vec<u8> {
    let dir = home.join(ops_file);
    let d = dir.as_os_str().as_bytes();
    let mut args: Vec<&[u8]> = vec![b"new", b"--dir", d, b"--cwd", b"/work/project"];
    if omp {
        args.push(b"--omp");
    }
    let out = arbor(&args, None, home);
    let path = String::from_utf8(out).expect("path").trim().to_string();
    let p = path.as_bytes();
    let mut ops_value = read(ops_file);
    let ops = match &mut ops_value {
        JsValue::Array(a) => std::mem::take(a),
        _ => panic!("ops"),
    };
    let mut ids: Vec<String> = Vec::new();
    let body_of = |op: &JsValue, ids: &[String]| -> Vec<u8> {
        let mut b = op.get("body").expect("body").clone();
        for k in ["firstKeptEntryId", "targetId"] {
            let r = str_of(&b, k).map(|s| s.into_owned());
            if let Some(r) = r.and_then(|r| r.strip_prefix('@').map(str::to_string)) {
                let id = ids[r.parse::<usize>().expect("@N")].clone();
                b.set(k, JsValue::String(JsStr(id.into_bytes())));
            }
        }
        b.to_json()
    };
    let mut i = 0;
    while i < ops.len() {
        let op = &ops[i];
        let parent = match op.get("parent") {
            Some(JsValue::Number(n)) => Some(ids[*n as usize].clone()),
            _ => None,
        };
        let mut args: Vec<&[u8]> = vec![b"append", b"--raw", p];
        match (op.get("parent"), &parent) {
            (Some(JsValue::String(_)), _) => args.push(b"--root"),
            (_, Some(id)) => args.extend([&b"--parent"[..], id.as_bytes()]),
            _ => {}
        }
        if op.get("stdin") == Some(&JsValue::Bool(true)) {
            let mut j = i;
            let mut input = Vec::new();
            while j < ops.len()
                && ops[j].get("stdin") == Some(&JsValue::Bool(true))
                && (j == i || ops[j].get("parent").is_none())
            {
                input.extend(body_of(&ops[j], &ids));
                input.push(b'\n');
                j += 1;
            }
            args.push(b"-");
            let out = arbor(&args, Some(&input), home);
            let got: Vec<String> = String::from_utf8(out)
                .expect("ids")
                .split_whitespace()
                .map(str::to_string)
                .collect();
            assert_eq!(got.len(), j - i, "stdin ids");
            ids.extend(got);
            i = j;
        } else {
            let body = body_of(op, &ids);
            args.push(&body);
            let out = arbor(&args, None, home);
            ids.push(String::from_utf8(out).expect("id").trim().to_string());
            i += 1;
        }
    }
    assert_eq!(ids.len(), ops.len());
    std::fs::read(&path).expect("session")
}

#[test]
fn arbor_append_writes_the_lines_the_peers_own_writers_write() {
    let home = tempfile::tempdir().expect("tempdir");
    for (ops, writer, omp) in [
        ("ops.json", "pi-writer.jsonl", false),
        ("omp-ops.json", "omp-writer.jsonl", true),
    ] {
        let ours = lines(&replay(ops, omp, home.path()));
        let theirs = lines(&std::fs::read(goldens().join(writer)).expect(writer));
        assert_eq!(ours.len(), theirs.len(), "{writer}: line count");
        let pos = |all: &[JsValue], id: Option<std::borrow::Cow<'_, str>>| {
            id.and_then(|id| {
                all.iter()
                    .position(|e| str_of(e, "id").as_deref() == Some(&*id))
            })
        };
        let mut compared = 0;
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(
                str_of(a, "type"),
                str_of(b, "type"),
                "{writer} line {}",
                k + 1
            );
            assert_eq!(shape(a), shape(b), "{writer} line {}: key order", k + 1);
            for key in ["parentId", "firstKeptEntryId", "targetId", "fromId"] {
                assert_eq!(
                    pos(&ours, str_of(a, key)),
                    pos(&theirs, str_of(b, key)),
                    "{writer} line {}: {key} by position",
                    k + 1
                );
            }
            compared += 1;
        }
        assert!(compared > 20, "{writer}: {compared} lines compared");
    }
}
