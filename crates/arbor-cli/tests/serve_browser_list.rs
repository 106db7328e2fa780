//! `arbor serve`'s sessions page in a real headless Chromium through WebDriver (`chromium`
//! and `chromium-driver`, installed by `.ci/run`): a HOME with pi sessions laid out as pi lays
//! them out (the demo sessions, a branched session, enough others for a second page) and a
//! Claude Code session; the page shows the rows of every agent, loads the next page when
//! scrolled to the end, searches a word said only on another branch (the hit has the
//! other-branch mark and links to that entry), filters by agent through its form, and shows a
//! session written while it is open (after the stream's `ready`, without a reload); no console
//! error, no request outside the server. `ARBOR_UPDATE_SCREENSHOTS=1` saves
//! `docs/img/serve-sessions.png`.
use arbor_testkit::served::Served;
use arbor_testkit::webdriver::{Driver, Session};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn pi_dir(home: &Path, cwd: &str) -> PathBuf {
    let d = home
        .join(".pi/agent/sessions")
        .join(arbor_store::paths::encode_cwd_pi(cwd));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

fn write_session(dir: &Path, id: &str, ts: &str, lines: &[Value]) -> PathBuf {
    let mut body = format!(
        "{}\n",
        json!({"type":"session","version":3,"id":id,"timestamp":ts,"cwd":"/work/shop"})
    );
    for l in lines {
        body.push_str(&format!("{l}\n"));
    }
    let f = dir.join(format!("{}_{id}.jsonl", ts.replace([':', '.'], "-")));
    std::fs::write(&f, body).expect("write");
    f
}

fn msg(id: &str, parent: Option<&str>, ts: &str, role: &str, text: &str) -> Value {
    let content = if role == "user" {
        json!(text)
    } else {
        json!([{"type":"text","text":text}])
    };
    let ms = arbor_core::time::parse_iso_ms(ts).expect("a time") as i64;
    json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
           "message":{"role":role,"content":content,"timestamp":ms,"stopReason":"stop",
                      "usage":{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,
                               "cost":{"input":0.01,"output":0.02,"cacheRead":0,"cacheWrite":0,"total":0.03}},
                      "provider":"anthropic","model":"claude-sonnet-4-5"}})
}

const BRANCHED: &str = "0c0c0c0c-0000-4000-8000-00000000b0b0";
const PROMPTS: [&str; 6] = [
    "Add a retry with backoff to the payment client",
    "Why does the cart total round differently in Safari?",
    "Write tests for the coupon parser",
    "Refactor the order service into smaller modules",
    "Explain the flaky checkout test",
    "Make the product search handle accents",
];

/// The HOME: the demo sessions, a branched one, 110 more in another project, and a Claude
/// Code session (the golden fixture).
fn home(h: &Path) {
    let demo = root().join("demo/sessions");
    for e in std::fs::read_dir(&demo).expect("demo") {
        let p = e.expect("entry").path();
        let first = std::fs::read_to_string(&p).expect("read");
        let cwd = serde_json::from_str::<Value>(first.lines().next().expect("header"))
            .expect("json")["cwd"]
            .as_str()
            .expect("cwd")
            .to_string();
        std::fs::copy(&p, pi_dir(h, &cwd).join(p.file_name().expect("name"))).expect("copy");
    }
    let shop = pi_dir(h, "/work/shop");
    // The word "zanzibar" is said on the branch left behind; the current one (the last
    // entry) does not say it.
    write_session(
        &shop,
        BRANCHED,
        "2026-11-20T10:00:00.000Z",
        &[
            msg(
                "u1",
                None,
                "2026-11-20T10:00:01.000Z",
                "user",
                "Plan the shipping zones",
            ),
            msg(
                "a1",
                Some("u1"),
                "2026-11-20T10:00:02.000Z",
                "assistant",
                "Zones by country first.",
            ),
            msg(
                "u2",
                Some("a1"),
                "2026-11-20T10:00:03.000Z",
                "user",
                "Add an island zone for zanzibar",
            ),
            msg(
                "a2",
                Some("u2"),
                "2026-11-20T10:00:04.000Z",
                "assistant",
                "Added the island zone.",
            ),
            msg(
                "u3",
                Some("a1"),
                "2026-11-20T10:00:05.000Z",
                "user",
                "Group zones by continent instead",
            ),
            msg(
                "a3",
                Some("u3"),
                "2026-11-20T10:00:06.000Z",
                "assistant",
                "Grouped by continent.",
            ),
        ],
    );
    for k in 0..110 {
        let ts = format!(
            "2026-10-{:02}T{:02}:{:02}:00.000Z",
            1 + k / 10,
            8 + k % 10,
            k % 60
        );
        let id = format!("0d0d0d0d-0000-4000-8000-{k:012}");
        write_session(
            &shop,
            &id,
            &ts,
            &[
                msg("u1", None, &ts, "user", PROMPTS[k % PROMPTS.len()]),
                msg("a1", Some("u1"), &ts, "assistant", "Done."),
            ],
        );
    }
    let claude = h.join(".claude");
    std::fs::create_dir_all(&claude).expect("mkdir");
    copy_dir(
        &root().join("goldens/agents/claude/projects"),
        &claude.join("projects"),
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let t = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).expect("copy");
        }
    }
}

/// Waits (up to 30 s) until `cond` (a script returning a boolean) holds.
fn wait_for(s: &Session<'_>, what: &str, cond: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        if s.js(&format!("return !!({cond})")) == json!(true) {
            return;
        }
        assert!(Instant::now() < end, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn strings(v: Value) -> Vec<String> {
    serde_json::from_value(v).expect("strings")
}

#[test]
fn the_sessions_page_in_chromium() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let h = tmp.path().join("home");
    home(&h);
    let hs = h.to_str().expect("utf-8");
    let cat = tmp.path().join("cat.db");
    let s = Served::start(
        Path::new(env!("CARGO_BIN_EXE_arbor")),
        &["--all"],
        &[
            ("HOME", hs),
            ("ARBOR_CATALOG", cat.to_str().expect("utf-8")),
            ("XDG_CACHE_HOME", &format!("{hs}/.cache")),
            ("PI_CODING_AGENT_DIR", &format!("{hs}/.pi/agent")),
        ],
    );
    let driver = Driver::start();
    let b = driver.session(true, &tmp.path().join("profile"));
    let home_url = format!("{}/", s.url);
    b.go(&home_url);

    // The first page: 100 rows, newest first, pi's and Claude Code's.
    let rows = || {
        strings(b.js("return Array.from(document.querySelectorAll('#rows tr')).map(function(r){return r.dataset.key})"))
    };
    assert_eq!(rows().len(), 100);
    let agents = strings(b.js("return Array.from(new Set(Array.from(document.querySelectorAll('#rows td.agent')).map(function(t){return t.textContent})))"));
    assert!(
        agents.contains(&"pi".to_string()) && agents.contains(&"claude".to_string()),
        "{agents:?}"
    );
    let modified: Vec<i64> = serde_json::from_value(b.js("return Array.from(document.querySelectorAll('#rows tr')).map(function(r){return Number(r.dataset.modified)})")).expect("times");
    assert!(modified.windows(2).all(|w| w[0] >= w[1]), "newest first");
    // Scrolled to the end: the rest (4 demo + 1 branched + 110 + 2 Claude = 117).
    b.js("window.scrollTo(0, document.body.scrollHeight); return 0");
    wait_for(
        &b,
        "the next page",
        "document.querySelectorAll('#rows tr').length > 100",
    );
    wait_for(&b, "the last page", "!document.querySelector('p.next')");
    let all = rows();
    assert_eq!(all.len(), 117, "{all:?}");
    let unique: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "no row twice");

    // Search through the form: the word said only on the branch left behind.
    b.js("document.querySelector('input[name=q]').value = 'zanzibar'; document.querySelector('form.filters').submit(); return 0");
    wait_for(&b, "the hits", "document.querySelector('li.hit')");
    let hit: Value = b.js("var h = document.querySelector('li.hit'); return {title: h.querySelector('a').textContent, href: h.querySelector('a').getAttribute('href'), other: !!h.querySelector('.other-branch'), mark: h.querySelector('mark') && h.querySelector('mark').textContent, n: document.querySelectorAll('li.hit').length}");
    assert_eq!(hit["n"], 1, "{hit}");
    assert_eq!(
        hit["href"],
        format!("/session/{BRANCHED}/entry/u2#u2"),
        "{hit}"
    );
    assert_eq!(hit["other"], true, "{hit}");
    assert_eq!(
        hit["title"], "Plan the shipping zones",
        "the session's title: {hit}"
    );
    assert_eq!(hit["mark"], "zanzibar", "{hit}");
    // A word of the current branch: no mark.
    b.go(&format!("{home_url}?q=continent"));
    wait_for(&b, "the hits", "document.querySelector('li.hit')");
    assert_eq!(
        b.js("return document.querySelectorAll('li.hit .other-branch').length"),
        json!(0)
    );

    // Filter by agent through the form.
    b.go(&home_url);
    b.js("document.querySelector('select[name=agent]').value = 'claude'; document.querySelector('form.filters').submit(); return 0");
    wait_for(
        &b,
        "the filtered page",
        "location.search.indexOf('agent=claude') >= 0 && document.readyState === 'complete'",
    );
    let agents = strings(b.js("return Array.from(document.querySelectorAll('#rows td.agent')).map(function(t){return t.textContent})"));
    assert!(
        !agents.is_empty() && agents.iter().all(|a| a == "claude"),
        "{agents:?}"
    );

    // Live: a session written while the page is open appears at the top.
    b.go(&home_url);
    wait_for(
        &b,
        "the event stream",
        "document.body.dataset.live === 'on'",
    );
    let new_id = "0e0e0e0e-0000-4000-8000-00000000fe5e";
    write_session(
        &pi_dir(&h, "/work/shop"),
        new_id,
        "2026-11-25T09:00:00.000Z",
        &[msg(
            "u1",
            None,
            "2026-11-25T09:00:01.000Z",
            "user",
            "Ship the new invoice emails",
        )],
    );
    wait_for(
        &b,
        "the new session",
        &format!("document.querySelector('#rows tr') && document.querySelector('#rows tr').dataset.key === '{new_id}'"),
    );
    let first = b.js("return document.querySelector('#rows tr td.title').textContent");
    assert_eq!(first, "Ship the new invoice emails");

    // No console error; no request but to the server.
    let errors = b.console_problems();
    assert!(errors.is_empty(), "console: {errors:?}");
    let outside: Vec<String> = b
        .page_requests(&home_url)
        .into_iter()
        .filter(|u| !u.starts_with(&home_url))
        .collect();
    assert!(
        outside.is_empty(),
        "requests outside the server: {outside:?}"
    );
    if std::env::var_os("ARBOR_UPDATE_SCREENSHOTS").is_some() {
        b.go(&format!("{home_url}?scope=all"));
        wait_for(
            &b,
            "the event stream",
            "document.body.dataset.live === 'on'",
        );
        b.screenshot(&root().join("docs/img/serve-sessions.png"));
        b.go(&format!("{home_url}?q=zanzibar+OR+zones"));
        b.screenshot(&root().join("docs/img/serve-search.png"));
    }
}
