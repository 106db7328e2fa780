//! `arbor export --format html` in a real headless Chromium (installed by `.ci/run`): the page
//! needs nothing from the network, shows the current path with its script and follows a deep
//! link to an entry of another branch; without the script every message is in the HTML.
use std::path::Path;
use std::process::Command;

fn chromium_dom(url: &str, profile: &Path) -> String {
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .output()
        .expect("chromium is needed (.ci/run installs it: apt-get install chromium)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The `<section ...>` opening tags of a page, in order.
fn sections(dom: &str) -> Vec<String> {
    dom.match_indices("<section ")
        .map(|(i, _)| dom[i..].split('>').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn the_html_export_opens_in_chromium_with_and_without_scripts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../demo/sessions/2026-11-22T11-55-38-569Z_01a2031c-a4c8-72e3-9ce7-b742438e02ad.jsonl",
    );
    let out = tmp.path().join("s.html");
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["export", "--format", "html", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run arbor");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).expect("html");
    // Nothing from the network: a policy that allows no request, and no URL but data: and #.
    assert!(html.contains("default-src 'none'"));
    for bad in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(bad), "{bad}");
    }
    // Without scripts: every entry is a section with its text in the HTML itself; the current
    // path's are not marked `off`.
    let static_sections = sections(&html);
    assert_eq!(static_sections.len(), 59, "every entry of the tree");
    assert!(html.contains(
        "quote&quot;s emoji😀 fix beta refactor session beta new\nline gamma manager tests"
    ));
    let on_path = static_sections
        .iter()
        .filter(|s| !s.contains(" off"))
        .count();
    assert!(on_path > 3 && on_path < 59, "{on_path}");
    // With scripts (Chromium): the other branches are hidden, the path shown in order.
    let url = format!("file://{}", out.display());
    let dom = chromium_dom(&url, &tmp.path().join("p1"));
    let body = dom
        .split("<body")
        .nth(1)
        .and_then(|b| b.split('>').next())
        .unwrap_or("");
    assert!(
        body.contains("class=\"js\""),
        "the script ran: <body{body}>"
    );
    let live = sections(&dom);
    assert_eq!(live.len(), 59);
    let shown: Vec<&String> = live.iter().filter(|s| !s.contains("hidden")).collect();
    assert_eq!(shown.len(), on_path, "the current path, and only it");
    // A deep link to an entry of another branch shows that branch.
    let off_id = static_sections
        .iter()
        .find(|s| s.contains(" off"))
        .and_then(|s| s.split("id=\"").nth(1))
        .and_then(|s| s.split('"').next())
        .expect("an entry off the path")
        .to_string();
    let dom = chromium_dom(&format!("{url}#{off_id}"), &tmp.path().join("p2"));
    let target = sections(&dom)
        .into_iter()
        .find(|s| s.contains(&format!("id=\"{off_id}\"")))
        .expect("the linked section");
    assert!(!target.contains("hidden"), "{target}");
}
