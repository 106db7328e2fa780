//! `arbor stats` on goldens/stats/sessions (a session with a branch left and a usage entry, its
//! fork, and a fork of the fork; the arithmetic is in goldens/stats/README.md): the JSON and the
//! table match goldens/stats/, from the catalog and from the files alike.
//! `ARBOR_UPDATE_GOLDENS=1` rewrites goldens/stats/ after a deliberate change.
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The golden sessions in a pi sessions directory under `home`, `@SESSIONS@` (the forks'
/// `parentSession`) replaced by that directory.
fn install(home: &Path) -> PathBuf {
    let dir = home.join(".pi/agent/sessions/--work-demo--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let src = root().join("goldens/stats/sessions");
    for e in std::fs::read_dir(&src)
        .expect("goldens/stats/sessions")
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).expect("read session");
        let text = text.replace("@SESSIONS@", &dir.to_string_lossy());
        std::fs::write(dir.join(e.file_name()), text).expect("write session");
    }
    dir
}

#[test]
fn stats_of_forks_and_branches_match_the_goldens() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = install(tmp.path());
    let dir_s = dir.to_string_lossy().into_owned();
    let fork_b = dir.join("2026-03-04T09-00-00-000Z_0195a000-0000-7000-8000-00000000000b.jsonl");
    let fork_b = fork_b.to_string_lossy().into_owned();
    let goldens = root().join("goldens/stats");
    let update = std::env::var_os("ARBOR_UPDATE_GOLDENS").is_some();
    let run = |args: &[&str]| -> String {
        let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
            .args(args)
            .env("HOME", tmp.path())
            .env("ARBOR_CATALOG", tmp.path().join("catalog.db"))
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .expect("run arbor");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .expect("utf-8")
            .replace(&dir_s, "@SESSIONS@")
    };
    let cases: [(&str, Vec<&str>); 8] = [
        ("by-session.json", vec!["--dir", &dir_s, "--json"]),
        (
            "by-day.json",
            vec!["--dir", &dir_s, "--by", "day", "--json"],
        ),
        ("by-model.json", vec!["--all", "--by", "model", "--json"]),
        (
            "since-2026-03-03.json",
            vec![
                "--dir",
                &dir_s,
                "--by",
                "day",
                "--since",
                "2026-03-03",
                "--json",
            ],
        ),
        ("fork-alone.json", vec![&fork_b, "--json"]),
        ("by-day.txt", vec!["--dir", &dir_s, "--by", "day"]),
        ("by-model.txt", vec!["--all", "--by", "model"]),
        ("by-project.txt", vec!["--all", "--by", "project"]),
    ];
    for (name, args) in &cases {
        let mut args: Vec<&str> = std::iter::once("stats")
            .chain(args.iter().copied())
            .collect();
        let got = run(&args);
        args.push("--no-catalog");
        assert_eq!(
            run(&args),
            got,
            "{name}: the catalog's answer is the files'"
        );
        let g = goldens.join(name);
        if update {
            std::fs::write(&g, &got).expect("write golden");
        }
        let want = std::fs::read_to_string(&g).unwrap_or_else(|e| panic!("{}: {e}", g.display()));
        assert!(got == want, "{} differs:\n{got}", g.display());
    }
}
