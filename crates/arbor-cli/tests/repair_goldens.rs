//! `arbor check --repair` on every damaged fixture of the golden corpus (`goldens/pi/edge-*.jsonl`)
//! leaves a session the real pi opens: pi's verdict on each repaired file was recorded by
//! `tools/safety/make-repair-verdicts.sh` in `goldens/safety/repair-verdicts.json`, with the
//! sha256 of the bytes it judged. This test repeats every repair and checks that it produces
//! exactly those bytes, so the recorded verdict applies (no node needed).
use arbor_store::blobs::sha256_hex;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const REGEN: &str = "regenerate with tools/safety/make-repair-verdicts.sh";

#[test]
fn repaired_fixtures_open_in_pi() {
    let verdicts_path = root().join("goldens/safety/repair-verdicts.json");
    let verdicts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&verdicts_path).expect("verdicts"))
            .expect("verdicts JSON");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(root().join("goldens/pi"))
        .expect("goldens/pi")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            n.starts_with("edge-") && n.ends_with(".jsonl") && !n.ends_with(".open.jsonl")
        })
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mut repaired, mut refused) = (0, 0);
    for f in &fixtures {
        let name = f.file_stem().expect("stem").to_string_lossy().into_owned();
        let v = &verdicts[&name];
        assert!(v.is_object(), "no pi verdict for {name}: {REGEN}");
        let input = std::fs::read(f).expect("fixture");
        assert_eq!(
            v["inputSha256"],
            sha256_hex(&input),
            "{name} changed since its verdict: {REGEN}"
        );
        let copy = tmp.path().join(format!("{name}.jsonl"));
        std::fs::write(&copy, &input).expect("copy");
        let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args([
                "check",
                "--repair",
                "--no-blobs",
                copy.to_str().expect("utf8"),
            ])
            .output()
            .expect("arbor check --repair");
        let after = std::fs::read(&copy).expect("repaired");
        assert_eq!(
            Some(i64::from(o.status.code().unwrap_or(-1))),
            v["arborExit"].as_i64(),
            "{name}: exit status"
        );
        assert_eq!(
            v["repairedSha256"],
            sha256_hex(&after),
            "{name}: the repair no longer gives the bytes pi judged: {REGEN}"
        );
        let doc = match arbor_store::load_doc(&copy) {
            Ok(d) => d,
            Err(_) => {
                // Not a session: arbor must leave it exactly as it was (pi would overwrite it).
                assert_eq!(
                    after, input,
                    "{name}: a file that is not a session must stay untouched"
                );
                refused += 1;
                continue;
            }
        };
        let pi = &v["pi"];
        if pi["opens"] == false {
            // Only where arbor said a problem it does not guess at remains (exit 1), and the
            // problem is one pi cannot read past (`message: null`).
            let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
                .args(["check", "--json", copy.to_str().expect("utf8")])
                .output()
                .expect("arbor check");
            assert_eq!(o.status.code(), Some(1), "{name}: pi cannot open it: {pi}");
            let report = String::from_utf8_lossy(&o.stdout);
            assert!(
                report.contains("\"message_null\""),
                "{name}: {pi}: {report}"
            );
            refused += 1;
            continue;
        }
        let ids: Vec<serde_json::Value> = doc
            .entries()
            .iter()
            .map(|e| {
                e.id.as_deref()
                    .map_or(serde_json::Value::Null, |s| s.into())
            })
            .collect();
        if doc.report().version < 3 {
            // pi migrates (and rewrites) older files itself, assigning fresh ids to v1 entries.
            assert_eq!(
                pi["ids"].as_array().map(Vec::len),
                Some(ids.len()),
                "{name}"
            );
        } else {
            assert_eq!(pi["rewrote"], false, "{name}: pi rewrote the repaired file");
            assert_eq!(
                pi["ids"],
                serde_json::Value::Array(ids),
                "{name}: pi sees other entries than arbor"
            );
            let leaf = doc
                .index()
                .leaf
                .and_then(|i| doc.entries()[i].id.as_deref());
            assert_eq!(
                pi["leaf"],
                leaf.map_or(serde_json::Value::Null, |s| s.into()),
                "{name}: leaf"
            );
        }
        // What remains after a repair is only what needs a person (the exit status says so).
        let left = arbor_store::check::check(&copy, &Default::default()).expect("check");
        assert_eq!(
            left.repairable(),
            0,
            "{name}: repairable problems left: {:?}",
            left.findings
        );
        repaired += 1;
    }
    eprintln!(
        "{repaired} fixtures repaired and opened by pi, {refused} non-sessions left untouched"
    );
}
