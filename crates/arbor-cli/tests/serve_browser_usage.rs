//! The usage page of `arbor serve` in Chromium (WebDriver): the numbers a person sees on the
//! chart's bars (their `data-` attributes) are `arbor stats --json`'s for the same range and
//! grouping; switching the grouping (a list: the script shows the new view) and the range
//! (the form) shows the new numbers; no console error, no request outside the server; the
//! page in the dark scheme is painted from the dark colours. Screenshots in docs/img.
use arbor_testkit::served::Served;
use arbor_testkit::webdriver::{Driver, Session};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

#[path = "serve_usage/home.rs"]
mod home;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The time chart's bars as (group, series, value), in page order.
fn bars(s: &Session<'_>) -> Vec<(String, String, f64)> {
    let v = s.js(
        "return Array.from(document.querySelectorAll('#time svg rect.bar')).map(function(r){return [r.dataset.group, r.dataset.series, Number(r.dataset.value)]})",
    );
    serde_json::from_value(v).expect("bars")
}

/// The time chart's bars of the groups `stats` has (the days, weeks or months between them,
/// without turns, are drawn empty: checked here).
fn drawn(s: &Session<'_>, stats: &Value) -> Vec<(String, String, f64)> {
    let groups: Vec<&str> = stats["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["group"].as_str())
        .collect();
    let (kept, empty): (Vec<_>, Vec<_>) = bars(s)
        .into_iter()
        .partition(|b| groups.contains(&b.0.as_str()));
    assert!(empty.iter().all(|b| b.2 == 0.0), "{empty:?}");
    kept
}

/// The bars `arbor stats --json` says there should be.
fn want(stats: &Value) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for r in stats["rows"].as_array().expect("rows") {
        for (series, part) in [
            ("current path", "currentPath"),
            ("branches left", "otherBranches"),
            ("summaries", "summaries"),
        ] {
            out.push((
                r["group"].as_str().expect("group").to_string(),
                series.to_string(),
                r[part]["cost"].as_f64().expect("cost"),
            ));
        }
    }
    out
}

/// Waits for the page at `url` to be loaded (after a click or a submit).
fn wait_for(s: &Session<'_>, what: &str, ok: impl Fn(&Session<'_>) -> bool) {
    let t0 = std::time::Instant::now();
    while !ok(s) {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(30),
            "waited for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn url_now(s: &Session<'_>) -> String {
    s.js("return document.readyState === 'complete' ? location.href : ''")
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_usage_page_shows_arbor_stats_numbers_in_a_browser() {
    let h = home::usage_home();
    let envs = h.envs();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let served = Served::start(Path::new(env!("CARGO_BIN_EXE_arbor")), &["--all"], &envs);
    let base = served.url.clone();
    let driver = Driver::start();
    let profile = tempfile::tempdir().expect("profile");
    let s = driver.session(true, profile.path());
    let first = format!("{base}/usage?by=month");
    s.go(&first);
    // The bars are arbor stats' numbers.
    let st = h.stats(&["--all", "--by", "month"]);
    assert_eq!(drawn(&s, &st), want(&st), "by month");
    assert!(!bars(&s).is_empty());
    // The grouping switched from its list (the script submits the form).
    s.js("var b=document.querySelector('select[name=by]'); b.value='week'; b.dispatchEvent(new Event('change'))");
    wait_for(&s, "the weekly view", |s| url_now(s).contains("by=week"));
    let st = h.stats(&["--all", "--by", "week"]);
    assert_eq!(drawn(&s, &st), want(&st), "by week");
    // The range, typed in the form and shown.
    s.js("document.querySelector('input[name=since]').value = '2026-01-06'");
    let show = s.element("form.filters button[type=submit]");
    s.click(&show);
    wait_for(&s, "the range", |s| url_now(s).contains("since=2026-01-06"));
    let st = h.stats(&["--all", "--by", "week", "--since", "2026-01-06"]);
    let got = drawn(&s, &st);
    assert_eq!(got, want(&st), "since 2026-01-06");
    assert_ne!(
        got,
        want(&h.stats(&["--all", "--by", "week"])),
        "the range changed the numbers"
    );
    // A quick range is a link: all time again.
    let all = s.element("nav.ranges a[data-range=all]");
    s.click(&all);
    wait_for(&s, "all time", |s| {
        let u = url_now(s);
        !u.is_empty() && !u.contains("since=")
    });
    let st = h.stats(&["--all", "--by", "week"]);
    assert_eq!(drawn(&s, &st), want(&st));
    // The weeks between, without turns, drawn empty: the axis is time.
    assert!(bars(&s).len() > want(&st).len(), "{:?}", bars(&s));
    // What a person sees: the headings of every chart and the totals.
    let text = s
        .js("return document.querySelector('main').innerText")
        .as_str()
        .unwrap_or("")
        .to_string();
    for heading in [
        "Cost by week",
        "Cost by model",
        "Cost by project",
        "Cost by agent",
        "When (UTC)",
        "in branches left",
    ] {
        assert!(text.contains(heading), "{heading} in {text}");
    }
    // No console error, no request but to the server.
    let errors = s.console_problems();
    assert!(errors.is_empty(), "console: {errors:?}");
    let requests = s.page_requests(&first);
    assert!(requests.len() >= 4, "{requests:?}");
    assert!(
        requests.iter().all(|u| u.starts_with(&format!("{base}/"))),
        "requests outside the server: {requests:?}"
    );
    s.js("document.querySelectorAll('details').forEach(function(d){d.open=false})");
    s.screenshot(&root().join("docs/img/serve-usage.png"));
    s.js("document.getElementById('agent').scrollIntoView()");
    s.screenshot(&root().join("docs/img/serve-usage-heatmap.png"));
    s.js("window.scrollTo(0, 0)");
    // Light, then dark: the page's background and the bars' colour change with the scheme.
    let paint = |s: &Session<'_>| -> (String, String) {
        let v = s.js("return [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector('#time rect.bar.s-path')).fill]");
        serde_json::from_value(v).expect("colours")
    };
    let light = paint(&s);
    s.cdp(
        "Emulation.setEmulatedMedia",
        json!({"features": [{"name": "prefers-color-scheme", "value": "dark"}]}),
    );
    let dark = paint(&s);
    assert_eq!(light.0, "rgb(255, 255, 255)");
    assert_eq!(dark.0, "rgb(15, 18, 22)", "the dark background");
    assert_ne!(light.1, dark.1, "the bars' colour follows the scheme");
    // Text on the dark background is light (readable).
    let tick = s.js("return getComputedStyle(document.querySelector('#time text.legend')).fill");
    assert_eq!(tick, "rgb(230, 237, 243)");
    s.screenshot(&root().join("docs/img/serve-usage-dark.png"));
    // In print: black on white whatever the scheme, the form and the links to other views
    // left out, the bars in the print colours.
    s.cdp(
        "Emulation.setEmulatedMedia",
        json!({"media": "print", "features": [{"name": "prefers-color-scheme", "value": "dark"}]}),
    );
    let printed = s.js("return [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector('form.filters')).display, getComputedStyle(document.querySelector('nav.ranges')).display, getComputedStyle(document.querySelector('#time rect.bar.s-path')).fill, getComputedStyle(document.querySelector('#time text.legend')).fill]");
    assert_eq!(
        printed,
        json!([
            "rgb(255, 255, 255)",
            "none",
            "none",
            "rgb(31, 78, 140)",
            "rgb(0, 0, 0)"
        ]),
        "print"
    );
}
