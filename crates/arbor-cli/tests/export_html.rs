//! `arbor export --format html` in a real headless Chromium driven through WebDriver
//! (`chromium` and `chromium-driver`, installed by `.ci/run`): the page loads with no console
//! error and no request but its own file, shows the current path's messages in order, switches
//! branch from the sidebar, follows a deep link into another branch, and still shows the whole
//! conversation with JavaScript turned off.
//!
//! The WebDriver client is `arbor_testkit::webdriver`.
use arbor_testkit::webdriver::{browser_internal, Driver};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the static HTML says: each section's id and parent, in page order, and which are on
/// the current path.
struct Page {
    sections: Vec<(String, String, bool)>,
}

impl Page {
    fn read(html: &str) -> Page {
        let attr = |tag: &str, name: &str| {
            tag.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        let sections = html
            .match_indices("<section ")
            .map(|(i, _)| html[i..].split('>').next().unwrap_or(""))
            .map(|tag| {
                let class = attr(tag, "class");
                (
                    attr(tag, "id"),
                    attr(tag, "data-parent"),
                    !class.split(' ').any(|c| c == "off"),
                )
            })
            .collect();
        Page { sections }
    }

    fn on_path(&self) -> Vec<String> {
        self.sections
            .iter()
            .filter(|s| s.2)
            .map(|s| s.0.clone())
            .collect()
    }

    /// The root-to-`leaf` ids, in order.
    fn path_to(&self, leaf: &str) -> Vec<String> {
        let mut out = vec![leaf.to_string()];
        let mut cur = leaf.to_string();
        while let Some(p) = self
            .sections
            .iter()
            .find(|s| s.0 == cur)
            .map(|s| s.1.clone())
            .filter(|p| !p.is_empty())
        {
            out.push(p.clone());
            cur = p;
        }
        out.reverse();
        out
    }

    fn is_leaf(&self, id: &str) -> bool {
        !self.sections.iter().any(|s| s.1 == id)
    }
}

#[test]
fn the_browsers_own_requests_are_not_the_pages() {
    for own in [
        "chrome-untrusted://new-tab-page/one-google-bar?paramsencoded=",
        "chrome://new-tab-page/",
        "chrome-search://local-ntp/",
        "chrome-extension://abc/x.js",
        "devtools://devtools/x",
        "about:blank",
        "data:image/png;base64,AA==",
    ] {
        assert!(browser_internal(own), "{own}");
    }
    for page in [
        "http://example.com/x.png",
        "https://example.com/",
        "HTTPS://example.com/",
        "file:///etc/passwd",
        "ws://127.0.0.1:1/",
        "ftp://example.com/",
        "blob:null/1234",
        "chromex://x",
    ] {
        assert!(!browser_internal(page), "{page}");
    }
}

/// Highlighting is bounded per session: a code line of 60 KB (minified code) is written
/// escaped but without spans (the highlighter's time grows with the square of a line's
/// length: 1 MB of such lines took 7.7 s), and the short lines around it are highlighted.
#[test]
fn a_long_code_line_is_escaped_not_highlighted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let long = format!("const s = '{}<b>';", "x".repeat(60_000));
    let text = format!("Here:\n```js\nlet a = 1;\n{long}\nlet b = 2;\n```\n");
    let lines = [
        json!({"type":"session","version":3,"id":"01a2031c-a4c8-72e3-9ce7-b742438e0001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"go","timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":text}],"stopReason":"stop","timestamp":2}}),
    ];
    let src = tmp.path().join("s.jsonl");
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&src, body).expect("write");
    let out = tmp.path().join("s.html");
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["export", "--format", "html", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run arbor");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).expect("html");
    let at = html
        .find(&"x".repeat(60_000))
        .expect("the long line is there");
    let line_start = html[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = at + html[at..].find('\n').expect("its end");
    let line = &html[line_start..line_end];
    assert!(!line.contains("<span"), "the long line was highlighted");
    assert!(
        line.contains("&lt;b&gt;") && !line.contains("<b>"),
        "escaped"
    );
    let before = &html[..line_start];
    assert!(
        before
            .rsplit("<pre class=\"code\">")
            .next()
            .is_some_and(|l| l.contains("<span class=\"h-")),
        "the short line before it is highlighted"
    );
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_html_export_in_chromium() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = root()
        .join("demo/sessions/2026-11-22T11-55-38-569Z_01a2031c-a4c8-72e3-9ce7-b742438e02ad.jsonl");
    let out = tmp.path().join("s.html");
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["export", "--format", "html", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run arbor");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).expect("html");
    // Nothing from the network: a policy that allows no request, and no URL to fetch.
    assert!(html.contains("default-src 'none'"));
    for bad in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(bad), "{bad}");
    }
    let page = Page::read(&html);
    assert_eq!(page.sections.len(), 59, "every entry of the tree");
    let path = page.on_path();
    assert!(path.len() > 3 && path.len() < 59, "{}", path.len());
    let leaf = path.last().expect("a leaf").clone();
    assert_eq!(
        page.path_to(&leaf),
        path,
        "the marked sections are the path, in order"
    );

    let driver = Driver::start();
    let url = format!("file://{}", out.display());
    {
        let s = driver.session(true, &tmp.path().join("p1"));
        s.go(&url);
        // No console error, no request but the page itself.
        let errors = s.console_problems();
        assert!(errors.is_empty(), "console: {errors:?}");
        // The browser's own start page loads before the navigation: from the page on.
        let requests = s.page_requests(&url);
        assert_eq!(requests, std::slice::from_ref(&url), "requests");
        // The current path, in order, and nothing else.
        assert_eq!(s.shown(), path);
        // Another branch, from the sidebar's button on its leaf.
        let other = page
            .sections
            .iter()
            .find(|x| !x.2 && page.is_leaf(&x.0))
            .map(|x| x.0.clone())
            .expect("a leaf off the path");
        let button = s.element(&format!("nav button.leaf[data-leaf=\"{other}\"]"));
        s.click(&button);
        let want = page.path_to(&other);
        assert_eq!(s.shown(), want, "after choosing the branch of {other}");
        assert_ne!(want, path);
        // The sidebar marks the branch shown.
        let marked: Vec<String> = serde_json::from_value(s.js(
            "return Array.from(document.querySelectorAll('nav a.cur')).map(function(a){return a.getAttribute('href').slice(1)})",
        ))
        .expect("ids");
        assert!(
            marked.iter().all(|m| want.contains(m)) && marked.contains(&other),
            "{marked:?}"
        );
        // A deep link to an entry inside another branch (not its leaf) shows that branch,
        // with the entry in view.
        let mid = page
            .sections
            .iter()
            .find(|x| !x.2 && !page.is_leaf(&x.0))
            .map(|x| x.0.clone())
            .expect("an inner entry off the path");
        s.go(&format!("{url}#{mid}"));
        let shown = s.shown();
        assert!(shown.contains(&mid), "{mid} not shown: {shown:?}");
        assert!(shown.starts_with(&page.path_to(&mid)), "{shown:?}");
        let top = s.js(&format!(
            "return document.getElementById('{mid}').getBoundingClientRect().top"
        ));
        let top = top.as_f64().expect("top");
        assert!(
            (0.0..900.0).contains(&top),
            "the linked entry is in view: top {top}"
        );
        if std::env::var_os("ARBOR_UPDATE_SCREENSHOTS").is_some() {
            s.go(&url);
            s.screenshot(&root().join("docs/img/export-html.png"));
            // And the recorded session's highlighted code, through a deep link.
            let real = tmp.path().join("real.html");
            let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
                .args(["export", "--format", "html", "-o"])
                .arg(&real)
                .arg(root().join("demo/sessions/2025-11-20T23-33-01-550Z_pi-real-v1-fixture.jsonl"))
                .output()
                .expect("run arbor");
            assert!(o.status.success());
            s.go(&format!("file://{}#afe9cbb6", real.display()));
            s.js("window.scrollBy(0, 520)");
            s.screenshot(&root().join("docs/img/export-html-code.png"));
        }
    }
    {
        // Scripts off: every entry is there to read.
        let s = driver.session(false, &tmp.path().join("p2"));
        s.go(&url);
        assert_eq!(
            s.js("return document.body.className"),
            "",
            "the page's script did not run"
        );
        let sections = s.elements("main section");
        assert_eq!(sections.len(), 59);
        for e in &sections {
            assert_eq!(s.element_get(e, "displayed"), true);
        }
        let texts: Vec<String> = sections
            .iter()
            .map(|e| s.element_get(e, "text").as_str().unwrap_or("").to_string())
            .collect();
        let all = texts.join("\n");
        // Off-path entries say so (the style sheet's `::after`, no script needed).
        let marks = s.js(
            "return Array.from(document.querySelectorAll('main section h3')).filter(function(h){return getComputedStyle(h,'::after').content.indexOf('other branch')>=0}).length",
        );
        assert_eq!(marks, json!(59 - path.len()), "branches are marked");
        assert!(
            all.contains("quote\"s emoji😀 fix beta"),
            "{}",
            &all[..all.len().min(500)]
        );
    }
}
