//! `arbor serve`'s session page in a real headless Chromium (WebDriver: `chromium` and
//! `chromium-driver`, installed by `.ci/run`): a branched pi session and an omp one open with
//! no console error and no request outside the server; the outline switches branch; a deep
//! link opens another branch with its entry in view; the context at an entry opens; tool
//! calls are listed; a long branch loads its earlier part in place; lines appended to the file
//! while the page is open appear (waiting for the element); hostile text stays inert. Another
//! agent's session (Claude Code) grows while its page is open: the reply it was writing and
//! the next message appear; a page of an earlier part says how many entries came.
mod serve_common;
use arbor_testkit::served::Served;
use arbor_testkit::webdriver::{Driver, Session};
use serde_json::Value;
use serve_common::{claude_reply, claude_session, claude_user, path_to, CLAUDE_ID};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DEMO: &str = "2026-11-22T11-55-38-569Z_01a2031c-a4c8-72e3-9ce7-b742438e02ad.jsonl";
const SID: &str = "01a2031c-a4c8-72e3-9ce7-b742438e02ad";
const REAL: &str = "2025-11-20T23-33-01-550Z_pi-real-v1-fixture.jsonl";
const REAL_ID: &str = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617";
const OMP: &str = "gen-seed25-n150.jsonl";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Waits (up to 30 s) until `script` returns true in the page.
fn wait_for(s: &Session<'_>, script: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if s.js(script) == Value::Bool(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("never true: {script}");
}

fn body_data(s: &Session<'_>, k: &str) -> String {
    s.js(&format!("return document.body.dataset.{k}"))
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Checks that the page asked for nothing outside the server at `url` from `first` on.
fn no_request_outside(s: &Session<'_>, url: &str, first: &str) {
    let requests = s.page_requests(first);
    // The page's own requests are there (else the check below could not fail).
    assert!(requests.iter().any(|r| r == first), "{requests:?}");
    let outside: Vec<&String> = requests
        .iter()
        .filter(|u| !u.starts_with(&format!("{url}/")))
        .collect();
    assert!(
        outside.is_empty(),
        "requests outside the server: {outside:?}"
    );
}

/// `arbor serve --all` with the home directory `home` (its `agent/` as pi's, its catalog).
fn serve(home: &Path) -> Served {
    let agent = home.join("agent");
    let cat = home.join("catalog.db");
    Served::start(
        Path::new(env!("CARGO_BIN_EXE_arbor")),
        &["--agent-dir", agent.to_str().expect("utf-8"), "--all"],
        &[
            ("HOME", home.to_str().expect("utf-8")),
            ("ARBOR_CATALOG", cat.to_str().expect("utf-8")),
        ],
    )
}

#[test]
fn the_session_page_in_chromium() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("agent/sessions/--work-project--");
    std::fs::create_dir_all(&dir).expect("dirs");
    for f in [DEMO, REAL] {
        std::fs::copy(root().join("demo/sessions").join(f), dir.join(f)).expect("copy");
    }
    std::fs::copy(root().join("goldens/omp").join(OMP), dir.join(OMP)).expect("copy");
    let hostile_id = "01a2031c-bad0-7000-8000-000000000bad";
    let x = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"><svg onload=\"window.pwned=3\"></svg>\"'><a href=\"javascript:window.pwned=4\">link</a>";
    let j = |s: &str| Value::String(s.to_string()).to_string();
    std::fs::write(
        dir.join(format!("2026-01-01T00-00-00-000Z_{hostile_id}.jsonl")),
        [
            format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{hostile_id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":{}}}", j(x)),
            format!("{{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":{},\"timestamp\":1}}}}", j(x)),
            format!("{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{x}}},{{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":{x},\"arguments\":{{\"path\":{x}}}}}],\"model\":{x},\"timestamp\":2}}}}", x = j(x)),
            format!("{{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"name\":{}}}", j(x)),
        ]
        .join("\n")
            + "\n",
    )
    .expect("write");
    let served = serve(tmp.path());
    let url = served.url.clone();
    let file = dir.join(DEMO);

    let driver = Driver::start();
    let s = driver.session(true, &tmp.path().join("p1"));
    s.go(&format!("{url}/session/{SID}"));
    // The current branch, in order.
    let leaf = body_data(&s, "leaf");
    let path = path_to(&file, &leaf);
    assert_eq!(s.shown(), path);
    let c = s.console_problems();
    assert!(c.is_empty(), "console: {c:?}");
    // Another branch, from the outline.
    let switches = s.elements("nav.outline a.switch");
    assert!(!switches.is_empty());
    let href = s.element_get(&switches[0], "attribute/href");
    let other = href
        .as_str()
        .and_then(|h| h.rsplit('/').next())
        .expect("a leaf")
        .to_string();
    s.click(&switches[0]);
    wait_for(
        &s,
        &format!("return document.body.dataset.leaf === '{other}'"),
    );
    let want = path_to(&file, &other);
    assert_eq!(s.shown(), want, "after switching to {other}");
    assert_ne!(want, path);
    let marked: Vec<String> = serde_json::from_value(s.js(
        "return Array.from(document.querySelectorAll('nav.outline li.on > a')).map(function(a){return a.getAttribute('href').split('#')[1]})",
    ))
    .expect("ids");
    assert!(marked.iter().all(|m| want.contains(m)), "{marked:?}");
    // A deep link to an inner entry of another branch: that branch, the entry in view.
    let inner = want
        .iter()
        .rev()
        .find(|e| !path.contains(e) && **e != other)
        .unwrap_or(&other)
        .clone();
    s.go(&format!("{url}/session/{SID}/entry/{inner}"));
    let shown = s.shown();
    assert!(shown.contains(&inner), "{inner}: {shown:?}");
    let top = s
        .js(&format!(
            "return document.getElementById('{inner}').getBoundingClientRect().top"
        ))
        .as_f64()
        .expect("top");
    assert!(
        (0.0..900.0).contains(&top),
        "the linked entry is in view: {top}"
    );
    // The context at an entry, from its link.
    let at = path[path.len() / 2].clone();
    s.go(&format!("{url}/session/{SID}"));
    let link = s.element(&format!("a[href=\"/session/{SID}/context/{at}\"]"));
    s.click(&link);
    wait_for(&s, "return !!document.querySelector('ol.ctx')");
    assert!(s.elements("ol.ctx > li").len() > 1);
    // Tool calls, in the real session.
    s.go(&format!("{url}/session/{REAL_ID}/calls"));
    assert!(
        s.elements("section.calls tr").len() > 100,
        "the real session's tool calls"
    );
    // A long branch: its last part, the earlier one loaded in place by the script.
    s.go(&format!("{url}/session/{REAL_ID}"));
    let first = s.shown().len();
    assert_eq!(first, 40, "one part");
    // Opened at the branch's end (where the conversation goes on), the tree beside it scrolled
    // to the same entry.
    assert_eq!(
        s.js("var d = document.documentElement; return [window.scrollY > 0, window.scrollY + window.innerHeight >= d.scrollHeight - 2]"),
        serde_json::json!([true, true]),
        "the page at its end"
    );
    assert_eq!(
        s.js("var nav = document.querySelector('nav.outline'); var li = nav.querySelector('li .shown').closest('li'); var r = li.getBoundingClientRect(), n = nav.getBoundingClientRect(); return [nav.scrollTop > 0, r.top >= n.top && r.bottom <= n.bottom]"),
        serde_json::json!([true, true]),
        "the outline at the shown end"
    );
    // At the top (where the script would load it by itself: not at scroll 0), clicked.
    s.js("window.scrollTo(0, 0); return 0");
    let more = s.element("p.earlier a");
    s.click(&more);
    wait_for(
        &s,
        "return document.querySelectorAll('main section').length === 80",
    );
    assert_eq!(
        s.js("return new Set(Array.from(document.querySelectorAll('main section')).map(function(s){return s.id})).size"),
        Value::from(80),
        "no entry twice"
    );
    // Scrolled up to the top: the part before that loads by itself.
    s.js("window.scrollTo(0, 1); return 0");
    wait_for(
        &s,
        "return document.querySelectorAll('main section').length === 120",
    );
    if std::env::var_os("ARBOR_UPDATE_SCREENSHOTS").is_some() {
        s.go(&format!("{url}/session/{SID}"));
        s.screenshot(&root().join("docs/img/serve-session.png"));
        s.go(&format!("{url}/session/{REAL_ID}/entry/afe9cbb6"));
        s.screenshot(&root().join("docs/img/serve-session-code.png"));
    }
    // The omp session opens, its branch shown.
    let omp_id = std::fs::read_to_string(dir.join(OMP))
        .expect("omp")
        .lines()
        .find(|l| l.contains("\"type\":\"session\""))
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v["id"].as_str().map(String::from))
        .expect("omp id");
    s.go(&format!("{url}/session/{omp_id}"));
    let omp_leaf = body_data(&s, "leaf");
    assert_eq!(
        s.shown().len(),
        path_to(&dir.join(OMP), &omp_leaf).len().min(40)
    );
    assert!(s.elements("nav.outline li").len() > 1);
    // Live: a line appended while the page is open appears.
    s.go(&format!("{url}/session/{SID}"));
    let leaf = body_data(&s, "leaf");
    let entries = "return parseInt(document.querySelector('header.s-head p.muted').textContent.split(' · ').pop(), 10)";
    let before = s.js(entries).as_i64().expect("the header's entry count");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open")
        .write_all(format!("{{\"type\":\"message\",\"id\":\"live0001\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-11-22T12:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"appended while open\",\"timestamp\":1}}}}\n").as_bytes())
        .expect("append");
    wait_for(&s, "return !!document.getElementById('live0001')");
    // The page was at its end: it stays there, the new entry in view.
    assert_eq!(
        s.js("return document.getElementById('live0001').getBoundingClientRect().bottom <= window.innerHeight"),
        Value::Bool(true),
        "the new entry in view"
    );
    assert!(s
        .js("return document.getElementById('live0001').textContent")
        .as_str()
        .is_some_and(|t| t.contains("appended while open")));
    // The header counts it.
    wait_for(&s, &format!("{entries} === {}", before + 1));
    // The tree beside it follows: the new entry is in it, marked as the shown branch's end.
    wait_for(
        &s,
        "var a = document.querySelector('nav.outline a[href$=\"#live0001\"]'); return !!a && a.getAttribute('aria-current') === 'true' && a.parentNode.textContent.indexOf('shown') >= 0",
    );
    // Hostile text: shown as text, nothing runs.
    s.go(&format!("{url}/session/{hostile_id}"));
    assert_eq!(s.js("return window.pwned === undefined"), Value::Bool(true));
    assert_eq!(
        s.js("return document.querySelectorAll('script').length"),
        Value::from(1)
    );
    assert_eq!(s.js("return document.querySelectorAll('main img, main svg, main a[href^=\"javascript\"]').length"), Value::from(0));
    assert!(s
        .js("return document.body.textContent")
        .as_str()
        .is_some_and(|t| t.contains("<script>window.pwned=1</script>")));
    // No console error, no request outside the server, all along.
    let c = s.console_problems();
    assert!(c.is_empty(), "console: {c:?}");
    no_request_outside(&s, &url, &format!("{url}/session/{SID}"));
    drop(s);
    // Without JavaScript: the same branch, and the earlier part is a link to a page.
    let s = driver.session(false, &tmp.path().join("p2"));
    s.go(&format!("{url}/session/{SID}/leaf/{other}"));
    assert_eq!(s.shown(), want);
    s.go(&format!("{url}/session/{REAL_ID}"));
    let more = s.element("p.earlier a");
    s.click(&more);
    assert_eq!(s.shown().len(), 40, "the part before, as a page");
}

#[test]
fn another_agents_session_grows_live_in_chromium() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("agent/sessions")).expect("dirs");
    let file = claude_session(tmp.path());
    let served = serve(tmp.path());
    let url = served.url.clone();
    let driver = Driver::start();
    let s = driver.session(true, &tmp.path().join("p1"));
    s.go(&format!("{url}/session/{CLAUDE_ID}"));
    let before = s.shown();
    let title = body_data(&s, "leaf");
    assert_eq!(before.last(), Some(&title), "the title last");
    let reply = body_data(&s, "after");
    // Claude goes on: the rest of its reply, then the user's next message.
    let append = |text: &str| {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("open")
            .write_all(text.as_bytes())
            .expect("append");
    };
    // The stream is open before the file grows (what grows before it opens is sent too: its
    // first look compares the source with what the page showed).
    wait_for(&s, "return document.body.dataset.live === 'on'");
    let mut grown = claude_reply(
        "a2",
        "a1",
        serde_json::json!([{"type": "text", "text": "There are three files: a.rs, b.rs and c.rs."}]),
        3,
    );
    grown.push_str(&claude_user("u2", "a2", "Open b.rs, please.", 4));
    append(&grown);
    wait_for(
        &s,
        "return document.querySelector('main').textContent.indexOf('Open b.rs, please.') >= 0",
    );
    let shown = s.shown();
    assert_eq!(shown.len(), before.len() + 1, "{before:?} then {shown:?}");
    assert_eq!(shown[..before.len() - 1], before[..before.len() - 1]);
    assert_eq!(shown.last(), Some(&title), "the title last again");
    let reply_text = s
        .js(&format!(
            "return document.getElementById('{reply}').textContent"
        ))
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        reply_text.contains("Look at the tree first.") && reply_text.contains("three files"),
        "the reply whole, once: {reply_text}"
    );
    assert_eq!(
        s.js("return document.querySelectorAll('main p.etools').length"),
        Value::from(shown.len() as u64),
        "one tools line per entry"
    );
    // The page read again is the page grown.
    let new_entry = shown[shown.len() - 2].clone();
    if std::env::var_os("ARBOR_UPDATE_SCREENSHOTS").is_some() {
        s.js(&format!(
            "document.getElementById('{new_entry}').scrollIntoView(); return true"
        ));
        s.screenshot(&root().join("docs/img/serve-live-foreign.png"));
    }
    let c = s.console_problems();
    assert!(c.is_empty(), "console: {c:?}");
    s.go(&format!("{url}/session/{CLAUDE_ID}"));
    assert_eq!(s.shown(), shown, "read again: the same entries");
    // A page of the branch's first entries is told what came after, with the way there.
    s.go(&format!("{url}/session/{CLAUDE_ID}/leaf/{title}?at=2"));
    assert_eq!(body_data(&s, "atEnd"), "false");
    assert!(s.js("return document.getElementById('live-note').hidden") == Value::Bool(true));
    wait_for(&s, "return document.body.dataset.live === 'on'");
    append(&claude_user("u3", "u2", "And c.rs?", 5));
    wait_for(
        &s,
        "var n = document.getElementById('live-note'); return !n.hidden && n.textContent.indexOf('1 new entry') >= 0",
    );
    let link = s.element("#live-note a");
    s.click(&link);
    wait_for(
        &s,
        "return document.querySelector('main').textContent.indexOf('And c.rs?') >= 0",
    );
    assert_eq!(body_data(&s, "atEnd"), "true");
    let c = s.console_problems();
    assert!(c.is_empty(), "console: {c:?}");
    no_request_outside(&s, &url, &format!("{url}/session/{CLAUDE_ID}"));
}
