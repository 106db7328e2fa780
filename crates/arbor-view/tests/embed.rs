//! arbor-view as another tool embeds it: each demo session (`demo/sessions`) exported in every
//! format and its statistics computed through the public API only, and the bytes compared with
//! what the `arbor` binary prints for the same session. The binary is built first (`cargo
//! build -p arbor-cli --bin arbor`, the cargo running this test), so a library and a binary that
//! diverge fail here. Without the feature `highlight` the HTML pages differ by design (the
//! binary highlights code): then the library's page is checked to have no highlighting.
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `arbor` binary of this workspace, built now so that it is the current code's.
fn arbor_bin() -> PathBuf {
    let o = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "build",
            "-p",
            "arbor-cli",
            "--bin",
            "arbor",
            "--message-format",
            "json",
        ])
        .output()
        .expect("run cargo build");
    assert!(
        o.status.success(),
        "cargo build -p arbor-cli: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The executable cargo reports (the target directory may be anywhere).
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("\"executable\":\"") && l.contains("\"name\":\"arbor\""))
        .find_map(|l| {
            let at = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = l[at..].find('"')?;
            Some(PathBuf::from(&l[at..at + end]))
        })
        .expect("cargo names the arbor executable")
}

fn demo_sessions() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("demo/sessions"))
        .expect("demo/sessions")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    assert!(v.len() >= 4, "demo sessions: {v:?}");
    v
}

fn run(bin: &Path, home: &Path, args: &[&str]) -> Vec<u8> {
    let o = Command::new(bin)
        .args(args)
        .env("HOME", home)
        .env_remove("PI_CODING_AGENT_DIR")
        .env("NO_COLOR", "1")
        .output()
        .expect("run arbor");
    assert!(
        o.status.success(),
        "arbor {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// What an embedder writes: the session loaded, redacted (as `arbor export` does unless
/// `--no-redact`), exported.
fn library_export(file: &Path, format: arbor_view::Format, tree: bool) -> Vec<u8> {
    let mut doc = arbor_store::load_doc(file).expect("load");
    let (_, redactions) = arbor_view::redact(&mut doc).expect("redact");
    let opts = arbor_view::Options::default().redacted(&redactions);
    let paths = arbor_view::paths_of(&doc, None, tree);
    let mut out = Vec::new();
    arbor_view::export(&doc, file, format, &paths, &opts, &mut out).expect("export");
    out
}

#[test]
fn the_library_writes_what_the_binary_prints() {
    let bin = arbor_bin();
    let home = tempfile::tempdir().expect("tempdir");
    let sessions = demo_sessions();
    for file in &sessions {
        let f = file.to_str().expect("utf-8 path");
        for (format, name, tree) in [
            (arbor_view::Format::Md, "md", false),
            (arbor_view::Format::Md, "md", true),
            (arbor_view::Format::Html, "html", false),
            (arbor_view::Format::Json, "json", false),
            (arbor_view::Format::Json, "json", true),
        ] {
            let mut args = vec!["export", f, "--format", name];
            if tree {
                args.push("--tree");
            }
            let printed = run(&bin, home.path(), &args);
            let made = library_export(file, format, tree);
            assert!(!made.is_empty());
            if format == arbor_view::Format::Html && !cfg!(feature = "highlight") {
                // The binary highlights code (arbor-cli enables the feature); this build of
                // the library escapes it plainly: no highlighter's spans in its page.
                assert!(!String::from_utf8_lossy(&made).contains("class=\"h-"));
                continue;
            }
            assert!(
                made == printed,
                "{f}: arbor {args:?} ({} bytes) and the library ({} bytes) differ",
                printed.len(),
                made.len()
            );
        }
    }
    // Statistics of all of them, per model and per day.
    let (counted, unreadable) = arbor_view::stats_from_files(&sessions);
    assert!(unreadable.is_empty());
    for (by, name) in [
        (arbor_view::StatsBy::Model, "model"),
        (arbor_view::StatsBy::Day, "day"),
        (arbor_view::StatsBy::Project, "project"),
    ] {
        let stats = arbor_view::aggregate_stats(&counted, by, None);
        assert!(stats.total.turns > 0);
        let mut made = Vec::new();
        stats.write_json(&mut made).expect("json");
        let mut args = vec!["stats", "--json", "--no-catalog", "--by", name];
        args.extend(sessions.iter().map(|p| p.to_str().expect("utf-8 path")));
        let printed = run(&bin, home.path(), &args);
        assert_eq!(
            String::from_utf8_lossy(&made),
            String::from_utf8_lossy(&printed),
            "arbor {args:?}"
        );
    }
}
