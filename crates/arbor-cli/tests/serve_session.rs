//! `arbor serve`'s session page, through the real binary over raw HTTP: the branch shown, a
//! branch switched, a deep link into another branch, a part loaded, the context at an entry,
//! tool calls, a session named by its id only, hostile text inert and secrets redacted, a
//! growing session's entries sent live; and the writes (rename, label, fork): refused
//! without `--allow-writes`, without the CSRF token or from another origin, and when allowed
//! leaving the file as the CLI's command leaves it.
mod serve_common;
use arbor_testkit::served::Served;
use serve_common::{claude_reply, claude_session, claude_user, path_to, CLAUDE_ID};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DEMO: &str = "2026-11-22T11-55-38-569Z_01a2031c-a4c8-72e3-9ce7-b742438e02ad.jsonl";
const SID: &str = "01a2031c-a4c8-72e3-9ce7-b742438e02ad";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_arbor"))
}

/// An agent directory holding the demo's branched session (and `extra` files), and a
/// catalog of its own.
struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path().join("agent/sessions/--work-project--");
        std::fs::create_dir_all(&d).expect("dirs");
        std::fs::copy(root().join("demo/sessions").join(DEMO), d.join(DEMO)).expect("copy");
        Home { tmp }
    }
    fn agent(&self) -> PathBuf {
        self.tmp.path().join("agent")
    }
    fn session_dir(&self) -> PathBuf {
        self.agent().join("sessions/--work-project--")
    }
    fn serve(&self, extra: &[&str]) -> Served {
        let agent = self.agent();
        let mut args = vec!["--agent-dir", agent.to_str().expect("utf-8"), "--all"];
        args.extend_from_slice(extra);
        let home = self.tmp.path().to_str().expect("utf-8").to_string();
        let cat = self.tmp.path().join("catalog.db");
        Served::start(
            bin(),
            &args,
            &[
                ("HOME", &home),
                ("ARBOR_CATALOG", cat.to_str().expect("utf-8")),
            ],
        )
    }
    fn arbor(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin())
            .arg("--agent-dir")
            .arg(self.agent())
            .args(args)
            .env("HOME", self.tmp.path())
            .env("ARBOR_CATALOG", self.tmp.path().join("catalog.db"))
            .output()
            .expect("run arbor")
    }
}

fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn body(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}

/// The ids of the `<section>`s of a page, in order.
fn sections(html: &str) -> Vec<String> {
    html.split("<section id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(String::from))
        .collect()
}

/// A `data-NAME="…"` attribute of `<body>`.
fn body_attr(html: &str, name: &str) -> String {
    let key = format!("data-{name}=\"");
    html.split_once("<body")
        .and_then(|(_, b)| b.split_once('>'))
        .and_then(|(attrs, _)| attrs.split_once(&key))
        .and_then(|(_, v)| v.split('"').next())
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_session_page_shows_branches_deep_links_parts_and_context() {
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    let s = h.serve(&[]);
    let a = s.get(&format!("/session/{SID}"));
    assert_eq!(status(&a), 200, "{a}");
    let page = body(&a);
    // The current branch, in order: the path from the root to the session's leaf.
    let leaf = body_attr(page, "leaf");
    let path = path_to(&file, &leaf);
    assert_eq!(
        sections(page),
        path,
        "the current branch's entries, in order"
    );
    // Every entry in the outline, the shown branch marked; each leaf but the shown one a
    // branch to switch to.
    assert!(page.contains("<nav class=\"outline\""));
    let switches: Vec<String> = page
        .split(&format!("class=\"switch\" href=\"/session/{SID}/leaf/"))
        .skip(1)
        .filter_map(|x| x.split('"').next().map(String::from))
        .collect();
    assert!(!switches.is_empty(), "other leaves to switch to");
    // Switching branch: the path to that leaf.
    let other = &switches[0];
    let b = s.get(&format!("/session/{SID}/leaf/{other}"));
    assert_eq!(status(&b), 200);
    assert_eq!(sections(body(&b)), path_to(&file, other));
    assert_ne!(path_to(&file, other), path);
    // A deep link to an inner entry of another branch: that branch, the entry named.
    let other_path = path_to(&file, other);
    let inner = other_path
        .iter()
        .rev()
        .find(|e| !path.contains(e) && *e != other)
        .unwrap_or(other)
        .clone();
    let c = s.get(&format!("/session/{SID}/entry/{inner}"));
    assert_eq!(status(&c), 200);
    let shown = sections(body(&c));
    assert!(shown.contains(&inner), "{inner} in {shown:?}");
    assert_eq!(body_attr(body(&c), "target"), inner);
    // A part: the entries before `at` of a branch's path, and nothing else.
    let p = s.get(&format!("/session/{SID}/part?leaf={leaf}&at=3"));
    assert_eq!(status(&p), 200);
    assert_eq!(sections(body(&p)), path[..3].to_vec());
    // The context at an entry: what `arbor context` computes there.
    let at = &path[path.len() / 2];
    let ctx = s.get(&format!("/session/{SID}/context/{at}"));
    assert_eq!(status(&ctx), 200, "{ctx}");
    let o = h.arbor(&["context", "--all", "--leaf", at, SID]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want: serde_json::Value = serde_json::from_slice(&o.stdout).expect("context json");
    let n = want["messages"].as_array().map_or(0, Vec::len);
    assert!(
        body(&ctx).contains(&format!("{n} messages")),
        "{n} messages: {}",
        body(&ctx)
    );
    assert_eq!(body(&ctx).matches("<li class=\"r-").count(), n);
    // Tool calls and file edits.
    assert_eq!(status(&s.get(&format!("/session/{SID}/calls"))), 200);
    assert_eq!(status(&s.get(&format!("/session/{SID}/edits"))), 200);
    // Ids only: no path, no unknown id, no unknown entry.
    assert_eq!(status(&s.get("/session/..%2F..%2Fetc%2Fpasswd")), 400);
    assert_eq!(status(&s.get("/session/%2Fetc%2Fpasswd")), 400);
    assert_eq!(status(&s.get("/session/nosuchsession")), 404);
    assert_eq!(status(&s.get(&format!("/session/{SID}/entry/nosuch"))), 404);
}

#[test]
fn a_planted_symlink_to_a_session_outside_is_not_served() {
    let h = Home::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let id = "01a2031c-0000-7000-8000-00000000beef";
    let secret = outside.path().join("x.jsonl");
    std::fs::write(
        &secret,
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"outside text\",\"timestamp\":1}}}}\n"),
    )
    .expect("write");
    std::os::unix::fs::symlink(&secret, h.session_dir().join(format!("2026_{id}.jsonl")))
        .expect("symlink");
    let s = h.serve(&[]);
    let a = s.get(&format!("/session/{id}"));
    assert_eq!(status(&a), 404, "{a}");
    assert!(!a.contains("outside text"));
}

/// A session whose every string is hostile: HTML, attribute breakers, a script, a
/// `javascript:` link, and a secret.
fn hostile(dir: &Path) -> (String, String) {
    let id = "01a2031c-bad0-7000-8000-000000000bad".to_string();
    let x = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)> [a](javascript:alert(4)) ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
    let j = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let lines = [
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":{}}}", j(x)),
        format!("{{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":{},\"timestamp\":1}}}}", j(x)),
        format!("{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":{x}}},{{\"type\":\"text\",\"text\":{x}}},{{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":{x},\"arguments\":{{\"path\":{x}}}}}],\"model\":{x},\"usage\":{{\"input\":10,\"output\":5,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{{\"total\":0.25}}}},\"timestamp\":2}}}}", x = j(x)),
        format!("{{\"type\":\"message\",\"id\":\"r1\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c1\",\"toolName\":{x},\"content\":[{{\"type\":\"text\",\"text\":{x}}}],\"timestamp\":3}}}}", x = j(x)),
        format!("{{\"type\":\"label\",\"id\":\"l1\",\"parentId\":\"r1\",\"timestamp\":\"2026-01-01T00:00:04.000Z\",\"targetId\":\"a1\",\"label\":{}}}", j(x)),
        format!("{{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"l1\",\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"name\":{}}}", j(x)),
    ];
    let f = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    (id, x.to_string())
}

#[test]
fn hostile_text_is_inert_and_secrets_are_redacted() {
    let h = Home::new();
    let (id, _) = hostile(&h.session_dir());
    let s = h.serve(&[]);
    for p in [
        format!("/session/{id}"),
        format!("/session/{id}/entry/a1"),
        format!("/session/{id}/context/r1"),
        format!("/session/{id}/calls"),
        format!("/session/{id}/edits"),
        format!("/session/{id}/part?leaf=n1&at=2"),
    ] {
        let a = s.get(&p);
        assert_eq!(status(&a), 200, "{p}: {a}");
        let b = body(&a);
        for bad in ["<script>alert", "<img src=x", "<svg", "href=\"javascript"] {
            assert!(!b.contains(bad), "{p}: {bad} is live");
        }
        // No tag of the page carries a handler: the session's text is outside every tag.
        for tag in b.split('<').skip(1).filter_map(|t| t.split('>').next()) {
            assert!(
                !tag.contains("onerror") && !tag.contains("onload"),
                "{p}: <{tag}>"
            );
        }
        assert!(!b.contains("ghp_aB3dE5fG7"), "{p}: the secret is served");
        // The page's own script only, from the server.
        assert_eq!(
            b.matches("<script").count(),
            b.matches("<script src=\"/assets/session.js\" defer></script>")
                .count(),
            "{p}"
        );
    }
    let page = s.get(&format!("/session/{id}"));
    assert!(body(&page).contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(body(&page).contains("[REDACTED:"));
    // The turn's cost, as its usage says.
    assert!(body(&page).contains("10 in · 5 out"), "cost per turn");
    assert!(body(&page).contains("$0.2500"));
    // --no-redact serves the secret (still escaped).
    drop(s);
    let s = h.serve(&["--no-redact"]);
    assert!(body(&s.get(&format!("/session/{id}"))).contains("ghp_aB3dE5fG7"));
}

#[test]
fn a_growing_session_sends_its_new_entries() {
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    let s = h.serve(&[]);
    let page = s.get(&format!("/session/{SID}"));
    let leaf = body_attr(body(&page), "leaf");
    let got = events_on_append(&s, &file, SID, &leaf, "live0001", "appended while open");
    assert!(got.contains("id=\\\"live0001\\\""), "{got}");
    assert!(got.contains("appended while open"), "{got}");
    // The tree beside it, drawn again: the new entry in it, at the shown branch's end.
    let ev = sse_events(&got)
        .into_iter()
        .find(|(n, _)| n == "entries")
        .map(|(_, v)| v)
        .expect("an entries event");
    let outline = ev["outline"].as_str().expect("the outline");
    let new_line = outline
        .split("<li ")
        .find(|li| li.contains("/entry/live0001#live0001"))
        .unwrap_or_else(|| panic!("the new entry in the outline: {outline}"));
    assert!(new_line.contains("aria-current=\"true\""), "{new_line}");
    assert!(new_line.contains("◂ shown"), "{new_line}");
    let was = page
        .split("<li ")
        .find(|li| li.contains(&format!("/entry/{leaf}#{leaf}")))
        .expect("the old leaf in the page's outline");
    assert!(was.contains("◂ shown"), "{was}");
    let now = outline
        .split("<li ")
        .find(|li| li.contains(&format!("/entry/{leaf}#{leaf}")))
        .expect("the old leaf in the new outline");
    assert!(!now.contains("◂ shown"), "no longer the shown end: {now}");
    // The header, drawn again: one entry more.
    let count = |head: &str| -> usize {
        head.split(" entries</p>")
            .next()
            .and_then(|h| h.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("an entry count in {head}"))
    };
    let head = ev["head"].as_str().expect("the header");
    assert_eq!(count(head), count(body(&page)) + 1, "{head}");
    // Renamed while open (pi's /name appends a session_info entry): the header says the name.
    let (_, mut r) = live_at_end(&s, SID);
    append(
        &file,
        "{\"type\":\"session_info\",\"id\":\"name0001\",\"parentId\":\"live0001\",\"timestamp\":\"2026-11-22T12:00:01.000Z\",\"name\":\"Renamed while open\"}\n",
    );
    let ev = entries_saying(&mut r, "Renamed while open");
    let head = ev["head"].as_str().expect("the header");
    assert!(head.contains("<h1>Renamed while open</h1>"), "{head}");
}

/// The events of session `id`'s page showing `leaf`, open before the file grows by a user
/// message `new_id` (a child of `leaf`) saying `text`, until the event that sends it.
fn events_on_append(
    s: &Served,
    file: &Path,
    id: &str,
    leaf: &str,
    new_id: &str,
    text: &str,
) -> String {
    let page = s.get(&format!("/session/{id}"));
    let len = body_attr(body(&page), "len");
    // The stream is open before the file grows.
    let mut r = open_events(s, &format!("/session/{id}/events?leaf={leaf}&len={len}"));
    append(
        file,
        &format!(
            "{{\"type\":\"message\",\"id\":\"{new_id}\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-11-22T12:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":{},\"timestamp\":1}}}}\n",
            serde_json::Value::String(text.to_string())
        ),
    );
    let events = read_events(&mut r, |evs| {
        evs.iter()
            .any(|(n, v)| n == "entries" && v.to_string().contains(new_id))
    });
    let got: String = events
        .iter()
        .map(|(n, v)| format!("event: {n}\ndata: {v}\n\n"))
        .collect();
    assert!(got.contains("event: entries"), "{got}");
    assert!(got.contains(new_id), "{got}");
    got
}

/// The CSRF token of a page's write forms.
fn csrf(page: &str) -> String {
    page.split_once("name=\"csrf\" value=\"")
        .and_then(|(_, v)| v.split('"').next())
        .unwrap_or("")
        .to_string()
}

fn post(s: &Served, path: &str, form: &str, extra: &[(&str, &str)]) -> String {
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    headers.extend_from_slice(extra);
    s.request("POST", path, &headers, form.as_bytes())
}

/// The last line of a session file as JSON.
fn last_line(file: &Path) -> serde_json::Value {
    let t = std::fs::read_to_string(file).expect("read");
    serde_json::from_str(t.lines().last().expect("a line")).expect("json")
}

#[test]
fn writes_are_refused_without_the_flag_the_token_or_the_origin() {
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    let before = std::fs::read(&file).expect("read");
    let s = h.serve(&[]);
    let page = s.get(&format!("/session/{SID}"));
    assert!(
        !body(&page).contains("<form"),
        "no forms without --allow-writes"
    );
    let a = post(&s, &format!("/session/{SID}/rename"), "csrf=x&name=n", &[]);
    assert_eq!(status(&a), 403, "{a}");
    drop(s);
    let s = h.serve(&["--allow-writes"]);
    let page = s.get(&format!("/session/{SID}"));
    let token = csrf(body(&page));
    assert_eq!(token.len(), 32, "the forms carry the token");
    for (form, hdr) in [
        ("name=n".to_string(), vec![]),
        ("csrf=0123&name=n".to_string(), vec![]),
        (
            format!("csrf={token}&name=n"),
            vec![("Origin", "http://evil.example")],
        ),
        (
            format!("csrf={token}&name=n"),
            vec![("Sec-Fetch-Site", "cross-site")],
        ),
    ] {
        for w in ["rename", "label", "fork", "trash"] {
            let a = post(&s, &format!("/session/{SID}/{w}"), &form, &hdr);
            assert_eq!(status(&a), 403, "{w} {form} {hdr:?}: {a}");
        }
    }
    assert_eq!(
        std::fs::read(&file).expect("read"),
        before,
        "nothing written"
    );
    let n = std::fs::read_dir(h.session_dir()).expect("dir").count();
    assert_eq!(n, 1, "no fork made");
}

#[test]
fn writes_leave_the_file_as_the_cli_does() {
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    // The CLI's rename, on a copy elsewhere.
    let copy_dir = tempfile::tempdir().expect("tempdir");
    let copy = copy_dir.path().join(DEMO);
    std::fs::copy(&file, &copy).expect("copy");
    let o = h.arbor(&[
        "name",
        copy.to_str().expect("utf-8"),
        "Renamed in the browser",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = h.serve(&["--allow-writes"]);
    let page = s.get(&format!("/session/{SID}"));
    let token = csrf(body(&page));
    let origin = format!("http://{}", s.addr);
    let same = [
        ("Origin", origin.as_str()),
        ("Sec-Fetch-Site", "same-origin"),
    ];
    let a = post(
        &s,
        &format!("/session/{SID}/rename"),
        &format!("csrf={token}&name=Renamed+in+the+browser"),
        &same,
    );
    assert_eq!(status(&a), 200, "{a}");
    let (mine, cli) = (last_line(&file), last_line(&copy));
    for k in ["type", "name", "parentId"] {
        assert_eq!(mine[k], cli[k], "{k}");
    }
    assert_eq!(mine["type"], "session_info");
    // The page shows the new name.
    assert!(body(&s.get(&format!("/session/{SID}"))).contains("<h1>Renamed in the browser</h1>"));
    // A label on an entry: pi's label entry, which the tree shows.
    let leaf = body_attr(body(&page), "leaf");
    let target = path_to(&file, &leaf)[1].clone();
    let a = post(
        &s,
        &format!("/session/{SID}/label"),
        &format!("csrf={token}&entry={target}&label=checkpoint"),
        &same,
    );
    assert_eq!(status(&a), 200, "{a}");
    let l = last_line(&file);
    assert_eq!(
        (
            l["type"].as_str(),
            l["targetId"].as_str(),
            l["label"].as_str()
        ),
        (Some("label"), Some(target.as_str()), Some("checkpoint"))
    );
    assert!(body(&s.get(&format!("/session/{SID}")))
        .contains("<span class=\"label\">checkpoint</span>"));
    // A fork at an entry: a new session, as `arbor fork --at` makes it.
    let a = post(
        &s,
        &format!("/session/{SID}/fork"),
        &format!("csrf={token}&entry={target}"),
        &same,
    );
    assert_eq!(status(&a), 200, "{a}");
    assert!(body(&a).contains("--session"), "the resume command: {a}");
    let forks: Vec<PathBuf> = std::fs::read_dir(h.session_dir())
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| *p != file)
        .collect();
    assert_eq!(forks.len(), 1);
    let o = h.arbor(&[
        "fork",
        "--json",
        "--at",
        &target,
        file.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cli: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let cli_file = PathBuf::from(cli["path"].as_str().expect("path"));
    // Each entry as it is, but a label's own id (a fork writes its labels anew).
    let strip = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p)
            .expect("read")
            .lines()
            .skip(1)
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
                if v["type"] == "label" {
                    v["id"] = serde_json::Value::Null;
                }
                v
            })
            .collect()
    };
    assert_eq!(
        strip(&forks[0]),
        strip(&cli_file),
        "the fork's entries are the CLI's"
    );
    let new_id = body(&a)
        .split_once("<a href=\"/session/")
        .and_then(|(_, r)| r.split('"').next())
        .unwrap_or("")
        .to_string();
    assert_eq!(
        status(&s.get(&format!("/session/{new_id}"))),
        200,
        "the new session opens"
    );
}

#[test]
fn another_agents_session_opens_read_only_with_its_import_hint() {
    let h = Home::new();
    let id = "0b7c3f0e-1111-4222-8333-444455556666";
    let to = h.tmp.path().join(".claude/projects/-work-app");
    std::fs::create_dir_all(&to).expect("dirs");
    let from = root().join("goldens/agents/claude/projects/-work-app");
    std::fs::copy(
        from.join(format!("{id}.jsonl")),
        to.join(format!("{id}.jsonl")),
    )
    .expect("copy");
    let before = std::fs::read(to.join(format!("{id}.jsonl"))).expect("read");
    let s = h.serve(&["--allow-writes"]);
    let a = s.get(&format!("/session/{id}"));
    assert_eq!(status(&a), 200, "{a}");
    let b = body(&a);
    assert!(b.contains("read only"), "{b}");
    assert!(b.contains("arbor import"), "the import hint");
    assert!(!sections(b).is_empty(), "its entries");
    assert!(
        !b.contains("<form"),
        "no write forms for another agent's session"
    );
    // A write is refused with the hint, and the source is untouched.
    let page = s.get(&format!("/session/{SID}"));
    let token = csrf(body(&page));
    let a = post(
        &s,
        &format!("/session/{id}/rename"),
        &format!("csrf={token}&name=x"),
        &[],
    );
    assert_eq!(status(&a), 403, "{a}");
    assert!(body(&a).contains("arbor import"), "{a}");
    assert_eq!(
        std::fs::read(to.join(format!("{id}.jsonl"))).expect("read"),
        before
    );
}

/// A distinct GitHub token per place a secret hides (`tag` tells them apart in a failure).
fn token(tag: char) -> String {
    format!("ghp_{tag}B3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5")
}

/// What every token shares: none of it may reach a redacted answer.
const TOKEN_TAIL: &str = "hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

/// Whether `text` holds any part of a token: its tail, or its start (a token cut short by
/// a one-line summary, which the scanner would no longer know for a secret).
fn leaks(text: &str) -> bool {
    text.contains(TOKEN_TAIL) || text.contains("ghp_")
}

/// The tokens' starts in `text` (which secrets leaked, for a failure's message).
fn leaked(text: &str) -> Vec<String> {
    text.match_indices("ghp_")
        .map(|(i, _)| text[i..].chars().take(6).collect())
        .collect()
}

/// A long session whose secrets lie outside the first screen's window (the last
/// [`WINDOW`](arbor_serve) entries of the current branch): in the first question, the
/// session's name, an edit's path and arguments and a tool result, a label (straddling the
/// outline's 200 characters) and a branch summary (read by the outline), a compaction summary, a side branch. Returns its id, its file and
/// its leaf.
fn secretive(dir: &Path) -> (String, PathBuf, String) {
    let id = "01a2031c-5ec7-7000-8000-0000005ec7e7".to_string();
    let j = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let ts = |n: usize| format!("2026-01-01T00:{:02}:{:02}.000Z", n / 60 % 60, n % 60);
    let mut n = 0;
    let mut next = || {
        n += 1;
        ts(n)
    };
    let mut lines = vec![format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{}\",\"cwd\":\"/w\"}}",
        ts(0)
    )];
    let user = |id: &str, parent: &str, text: &str, t: String| {
        format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"{t}\",\"message\":{{\"role\":\"user\",\"content\":{},\"timestamp\":1}}}}", j(text))
    };
    let said = |id: &str, parent: &str, text: &str, t: String| {
        format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"{t}\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"model\":\"m\",\"usage\":{{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{{\"total\":0.001}}}},\"timestamp\":2}}}}", j(text))
    };
    lines.push(user(
        "u0",
        "null",
        &format!("first question {}", token('A')),
        next(),
    ));
    lines.push(format!(
        "{{\"type\":\"session_info\",\"id\":\"n0\",\"parentId\":\"u0\",\"timestamp\":\"{}\",\"name\":{}}}",
        next(),
        j(&format!("named {}", token('B')))
    ));
    lines.push(format!("{{\"type\":\"message\",\"id\":\"a0\",\"parentId\":\"n0\",\"timestamp\":\"{}\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c0\",\"name\":\"edit\",\"arguments\":{{\"path\":{},\"oldText\":\"old\",\"newText\":{}}}}}],\"model\":\"m\",\"usage\":{{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{{\"total\":0.001}}}},\"timestamp\":2}}}}", next(), j(&format!("cfg/{}.env", token('P'))), j(&format!("let key = \"{}\";", token('C')))));
    lines.push(format!("{{\"type\":\"message\",\"id\":\"r0\",\"parentId\":\"a0\",\"timestamp\":\"{}\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c0\",\"toolName\":\"edit\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"timestamp\":3}}}}", next(), j(&format!("edited {}", token('D')))));
    lines.push(format!(
        "{{\"type\":\"label\",\"id\":\"l0\",\"parentId\":\"r0\",\"timestamp\":\"{}\",\"targetId\":\"u0\",\"label\":{}}}",
        next(),
        j(&format!("mark {}{}", "pad ".repeat(43), token('E')))
    ));
    // A side branch off r0, and its summary.
    lines.push(user(
        "s0",
        "\"r0\"",
        &format!("side {}", token('F')),
        next(),
    ));
    lines.push(format!(
        "{{\"type\":\"branch_summary\",\"id\":\"b0\",\"parentId\":\"r0\",\"timestamp\":\"{}\",\"fromId\":\"s0\",\"summary\":{}}}",
        next(),
        j(&format!("we tried {}", token('G')))
    ));
    lines.push(format!(
        "{{\"type\":\"compaction\",\"id\":\"k0\",\"parentId\":\"l0\",\"timestamp\":\"{}\",\"summary\":{},\"firstKeptEntryId\":\"r0\",\"tokensBefore\":1000}}",
        next(),
        j(&format!("so far {}", token('H')))
    ));
    let mut parent = "k0".to_string();
    for i in 0..60 {
        let (u, a) = (format!("u{}", i + 1), format!("a{}", i + 1));
        lines.push(user(
            &u,
            &format!("\"{parent}\""),
            &format!("question {i}"),
            next(),
        ));
        lines.push(said(&a, &u, &format!("answer {i}"), next()));
        parent = a;
    }
    let f = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    (id, f, parent)
}

/// The answers of `s` to every reader of session `id` (the first page and each other
/// request), each with what it must show: the answer carries the place the secret was.
fn secret_answers(s: &Served, id: &str, leaf: &str) -> Vec<(String, String)> {
    [
        format!("/session/{id}"),
        format!("/session/{id}/part?leaf={leaf}&at=12"),
        format!("/session/{id}/entry/r0"),
        format!("/session/{id}/leaf/s0"),
        format!("/session/{id}/leaf/b0"),
        format!("/session/{id}/context/r0"),
        format!("/session/{id}/context/{leaf}"),
        format!("/session/{id}/calls"),
        format!("/session/{id}/edits"),
    ]
    .into_iter()
    .map(|p| {
        let a = s.get(&p);
        assert_eq!(status(&a), 200, "{p}: {a}");
        (p, body(&a).to_string())
    })
    .collect()
}

/// Every reader of a long session gets its secrets redacted, wherever they lie: outside the
/// first screen's window (a part, a deep link, another branch), in the outline of the first
/// page (a label, a branch summary, the first question), in its title and name, in the
/// context at an entry, in the tool calls and file edits, and in a line appended while the
/// page is open; whichever request comes first to a fresh server. With `--no-redact` the same
/// answers carry the secrets: each reader does read the place its secret is in.
#[test]
fn secrets_outside_the_first_screen_are_redacted_for_every_reader() {
    let h = Home::new();
    let (id, file, leaf) = secretive(&h.session_dir());
    // Unredacted: where each secret shows (the test's own check that it reads them).
    let s = h.serve(&["--no-redact"]);
    let open = secret_answers(&s, &id, &leaf);
    let shows = |p: &str, tag: char| {
        open.iter()
            .find(|(q, _)| q == p)
            .is_some_and(|(_, b)| b.contains(&token(tag)))
    };
    let first = format!("/session/{id}");
    for tag in ['A', 'B'] {
        assert!(shows(&first, tag), "the first page reads secret {tag}");
    }
    // The label's secret straddles the outline's 200 characters: cut, its start is shown.
    assert!(
        open[0].1.contains("ghp_E"),
        "the outline reads the label's secret"
    );
    let title = |b: &str| {
        b.split_once("<title>")
            .and_then(|(_, t)| t.split_once("</title>"))
            .map_or(String::new(), |(t, _)| t.to_string())
    };
    let (_, page) = &open[0];
    assert!(
        title(page).contains(&token('B')) || title(page).contains(&token('A')),
        "the title reads a secret: {}",
        title(page)
    );
    assert!(shows(&format!("/session/{id}/part?leaf={leaf}&at=12"), 'D'));
    assert!(shows(&format!("/session/{id}/entry/r0"), 'C'));
    assert!(shows(&format!("/session/{id}/leaf/s0"), 'F'));
    assert!(shows(&format!("/session/{id}/leaf/b0"), 'G'));
    assert!(shows(&format!("/session/{id}/context/r0"), 'D'));
    assert!(shows(&format!("/session/{id}/context/{leaf}"), 'H'));
    assert!(shows(&format!("/session/{id}/calls"), 'C'));
    assert!(shows(&format!("/session/{id}/edits"), 'P'));
    drop(s);
    // Redacted: nothing of any secret, whichever request a fresh server answers first.
    let paths: Vec<String> = open.iter().map(|(p, _)| p.clone()).collect();
    for first in &paths {
        let s = h.serve(&[]);
        let a = s.get(first);
        assert_eq!(status(&a), 200, "{first}: {a}");
        assert!(
            !leaks(&a),
            "{first} (asked first): a secret is served: {:?}",
            leaked(&a)
        );
        for (p, b) in secret_answers(&s, &id, &leaf) {
            assert!(
                !leaks(&b),
                "{p} (after {first}): a secret is served: {:?}",
                leaked(&b)
            );
            assert!(!title(&b).contains("ghp_"), "{p}: the title holds a secret");
        }
    }
    // The page shows the redaction marks where the secrets were.
    let s = h.serve(&[]);
    let (_, page) = &secret_answers(&s, &id, &leaf)[0];
    assert!(page.contains("[REDACTED:"), "{page}");
    // A line appended while the page is open, with a secret: sent redacted; unredacted it is
    // sent as it is.
    let got = events_on_append(
        &s,
        &file,
        &id,
        &leaf,
        "live0002",
        &format!("appended {}", token('L')),
    );
    assert!(!leaks(&got), "an event sends a secret: {got}");
    drop(s);
    let leaf2 = "live0002";
    let s = h.serve(&["--no-redact"]);
    // The appended line is the leaf now: grow the file again from it.
    let got = events_on_append(
        &s,
        &file,
        &id,
        leaf2,
        "live0003",
        &format!("appended {}", token('L')),
    );
    assert!(
        got.contains(&token('L')),
        "unredacted events carry it: {got}"
    );
}

/// The server-sent events in `raw` (an event stream's text): each event's name and data.
fn sse_events(raw: &str) -> Vec<(String, serde_json::Value)> {
    raw.split("\n\n")
        .filter_map(|block| {
            let mut name = String::new();
            let mut data = String::new();
            for l in block.lines() {
                if let Some(n) = l.strip_prefix("event: ") {
                    name = n.to_string();
                } else if let Some(d) = l.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            let v = serde_json::from_str(&data).ok()?;
            (!name.is_empty()).then_some((name, v))
        })
        .collect()
}

/// An event stream of `s` opened at `path`: its reader, past the answer's head.
fn open_events(s: &Served, path: &str) -> BufReader<std::net::TcpStream> {
    let mut conn = std::net::TcpStream::connect(&s.addr).expect("connect");
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr).expect("send");
    conn.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut r = BufReader::new(conn);
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).expect("head");
        assert!(
            !line.is_empty(),
            "the stream {path} closed before its head ended"
        );
        if line == "\r\n" {
            break;
        }
        if line.starts_with("HTTP/1.1 ") {
            assert!(line.contains(" 200 "), "{path}: {line}");
        }
    }
    r
}

/// Reads events from `r` until `done` holds of those read (60 s at most); all of them.
fn read_events(
    r: &mut BufReader<std::net::TcpStream>,
    done: impl Fn(&[(String, serde_json::Value)]) -> bool,
) -> Vec<(String, serde_json::Value)> {
    let start = Instant::now();
    let mut raw = String::new();
    let mut line = String::new();
    while start.elapsed() < Duration::from_secs(60) {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        // Chunked transfer: the chunk sizes are lines of their own, left out.
        if line.trim_end().chars().all(|c| c.is_ascii_hexdigit()) && !line.trim().is_empty() {
            continue;
        }
        raw.push_str(line.trim_end_matches('\r').trim_end_matches("\r\n"));
        if !raw.ends_with('\n') {
            raw.push('\n');
        }
        if line.trim().is_empty() && done(&sse_events(&raw)) {
            break;
        }
    }
    sse_events(&raw)
}

fn append(file: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .expect("open")
        .write_all(text.as_bytes())
        .expect("append");
}

#[test]
fn another_agents_growing_session_sends_its_new_entries_redacted() {
    let h = Home::new();
    let file = claude_session(h.tmp.path());
    let written = std::fs::read_to_string(&file).expect("read");
    let s = h.serve(&[]);
    let a = s.get(&format!("/session/{CLAUDE_ID}"));
    assert_eq!(status(&a), 200, "{a}");
    let page = body(&a).to_string();
    let before = sections(&page);
    // The end of its branch: live. The title (the conversion's last entry) is shown last; the
    // updates go on after the reply before it.
    assert_eq!(body_attr(&page, "at-end"), "true", "{page}");
    let after = body_attr(&page, "after");
    let title = body_attr(&page, "leaf");
    assert_eq!(
        before[before.len() - 2..],
        [after.clone(), title.clone()],
        "the reply, then the title"
    );
    let version = body_attr(&page, "version");
    assert!(!version.is_empty());
    let mut r = open_events(
        &s,
        &format!(
            "/session/{CLAUDE_ID}/events?leaf={after}&len={}&version={version}",
            body_attr(&page, "len")
        ),
    );
    // Claude writes the rest of its reply (a line of the same message) and the user answers
    // with a token in the text.
    let mut grown = claude_reply(
        "a2",
        "a1",
        serde_json::json!([{"type": "text", "text": "There are three files."}]),
        3,
    );
    grown.push_str(&claude_user(
        "u2",
        "a2",
        &format!("Thanks, here is my key {}", token('W')),
        4,
    ));
    append(&file, &grown);
    let got = read_events(&mut r, |evs| {
        evs.iter().any(|(n, v)| {
            n == "entries" && v["html"].as_str().unwrap_or("").contains("here is my key")
        })
    });
    let raw = format!("{got:?}");
    assert!(!leaks(&raw), "an event sends a secret: {:?}", leaked(&raw));
    let (_, ev) = got
        .iter()
        .find(|(n, v)| {
            n == "entries" && v["html"].as_str().unwrap_or("").contains("here is my key")
        })
        .unwrap_or_else(|| panic!("no entries event with the new message: {got:?}"));
    let html = ev["html"].as_str().unwrap_or("");
    assert!(html.contains("[REDACTED:"), "{html}");
    // The reply grew in place: sent again whole (its thinking and its text), then the new
    // message, then the title again.
    assert_eq!(ev["from"], after.as_str());
    assert_eq!(ev["replace"], true, "{ev}");
    assert!(html.contains("Look at the tree first."), "{html}");
    assert!(html.contains("There are three files."), "{html}");
    let sent = sections(html);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[0], after, "the reply, by its id");
    assert_eq!(sent[2], title, "the title, the same entry");
    assert_eq!(
        ev["after"],
        sent[1].as_str(),
        "goes on after the new message"
    );
    // The ids are the source's: the page read again shows the same entries, the new one
    // among them.
    let page2 = body(&s.get(&format!("/session/{CLAUDE_ID}"))).to_string();
    let mut expect = before[..before.len() - 1].to_vec();
    expect.push(sent[1].clone());
    expect.push(title.clone());
    assert_eq!(sections(&page2), expect, "the same ids read again");
    assert_eq!(
        body_attr(&page2, "version"),
        ev["version"].as_str().unwrap_or("")
    );
    // Read only: the source is as Claude wrote it.
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        format!("{written}{grown}")
    );
}

#[test]
fn a_page_of_an_earlier_part_is_told_its_branch_grew() {
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    let s = h.serve(&[]);
    let leaf = body_attr(body(&s.get(&format!("/session/{SID}"))), "leaf");
    let path = path_to(&file, &leaf);
    assert!(path.len() > 3, "{path:?}");
    // The branch's first entries: not its end.
    let a = s.get(&format!("/session/{SID}/leaf/{leaf}?at=2"));
    let page = body(&a).to_string();
    assert_eq!(body_attr(&page, "at-end"), "false", "{page}");
    assert_eq!(body_attr(&page, "after"), leaf, "the branch's end");
    let mut r = open_events(
        &s,
        &format!(
            "/session/{SID}/events?leaf={leaf}&len={}&version={}&count=1",
            body_attr(&page, "len"),
            body_attr(&page, "version")
        ),
    );
    let user = |id: &str, parent: &str| {
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-11-22T12:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"more\",\"timestamp\":1}}}}\n"
        )
    };
    append(&file, &user("grow0001", &leaf));
    let got = read_events(&mut r, |evs| evs.iter().any(|(n, _)| n == "grew"));
    let grew: Vec<_> = got.iter().filter(|(n, _)| n == "grew").collect();
    assert_eq!(grew.len(), 1, "{got:?}");
    assert_eq!(grew[0].1["count"], 1);
    assert_eq!(grew[0].1["text"], "1 new entry");
    assert_eq!(
        grew[0].1["href"],
        format!("/session/{SID}/leaf/grow0001").as_str()
    );
    assert!(
        !got.iter().any(|(n, _)| n == "entries"),
        "an earlier part gets no entries: {got:?}"
    );
    // Again: the count since the page was read.
    append(&file, &user("grow0002", "grow0001"));
    let got = read_events(&mut r, |evs| evs.iter().any(|(n, _)| n == "grew"));
    assert_eq!(got[0].1["count"], 2, "{got:?}");
    assert_eq!(
        got[0].1["href"],
        format!("/session/{SID}/leaf/grow0002").as_str()
    );
    // The session goes on elsewhere (a new branch from the branch's first entry): said, with
    // the link to where it went.
    append(&file, &user("else0001", &path[0]));
    let got = read_events(&mut r, |evs| evs.iter().any(|(n, _)| n == "notice"));
    assert_eq!(got[0].0, "notice", "{got:?}");
    assert_eq!(got[0].1["text"], "The session went on in another branch.");
    assert_eq!(
        got[0].1["href"],
        format!("/session/{SID}/leaf/else0001").as_str()
    );
}

#[test]
fn the_server_stops_while_live_pages_are_open() {
    let h = Home::new();
    let _ = claude_session(h.tmp.path());
    let mut s = h.serve(&[]);
    let page = s.get(&format!("/session/{SID}"));
    let (leaf, len) = (
        body_attr(body(&page), "after"),
        body_attr(body(&page), "len"),
    );
    // A pi session's page, another agent's, and the sessions page: each holds a stream.
    let mut streams = vec![
        open_events(&s, &format!("/session/{SID}/events?leaf={leaf}&len={len}")),
        open_events(&s, &format!("/session/{CLAUDE_ID}/events?leaf=x&len=0")),
        open_events(&s, "/events/sessions"),
    ];
    let st = s.signal(libc::SIGTERM);
    assert!(
        st.is_some_and(|st| st.success()),
        "the server did not stop while event streams were open: {st:?}"
    );
    // Each stream was ended by the server.
    for r in &mut streams {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(r, &mut rest);
        assert!(!rest.contains("HTTP/1.1"), "{rest}");
    }
}

/// Session `id`'s page, read at the end of its branch (checked), and its event stream, opened.
fn live_at_end(s: &Served, id: &str) -> (String, BufReader<std::net::TcpStream>) {
    let a = s.get(&format!("/session/{id}"));
    assert_eq!(status(&a), 200, "{a}");
    let page = body(&a).to_string();
    assert_eq!(body_attr(&page, "at-end"), "true", "{page}");
    let r = open_events(
        s,
        &format!(
            "/session/{id}/events?leaf={}&len={}&version={}",
            body_attr(&page, "after"),
            body_attr(&page, "len"),
            body_attr(&page, "version")
        ),
    );
    (page, r)
}

/// The first `entries` event whose entries say `text` (read from `r` until one does).
fn entries_saying(r: &mut BufReader<std::net::TcpStream>, text: &str) -> serde_json::Value {
    let has = |n: &str, v: &serde_json::Value| {
        n == "entries" && v["html"].as_str().unwrap_or("").contains(text)
    };
    let got = read_events(r, |evs| evs.iter().any(|(n, v)| has(n, v)));
    got.iter()
        .find(|(n, v)| has(n, v))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no entries event saying {text:?}: {got:?}"))
}

#[test]
fn a_codex_session_grows_live() {
    // A Codex rollout (the recorded golden) where `arbor serve --all` finds it.
    let h = Home::new();
    let golden = root().join(
        "goldens/agents/codex/sessions/2026/11/02/rollout-2026-11-02T09-00-00-019a4c1e-0000-7000-8000-00000000c0de.jsonl",
    );
    let dir = h.tmp.path().join(".codex/sessions/2026/11/02");
    std::fs::create_dir_all(&dir).expect("dirs");
    let file = dir.join(golden.file_name().expect("name"));
    std::fs::copy(&golden, &file).expect("copy");
    let id = "019a4c1e-0000-7000-8000-00000000c0de";
    let s = h.serve(&[]);
    let (page, mut r) = live_at_end(&s, id);
    let before = sections(&page);
    // The user asks again and Codex answers, as Codex appends them.
    let line = |t: &str, role: &str, kind: &str, text: &str| {
        format!(
            "{}\n",
            serde_json::json!({"timestamp": format!("2026-11-02T09:05:{t}.000Z"), "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
        )
    };
    let mut grown = line("00", "user", "input_text", "And the tests, do they pass?");
    grown.push_str(&line(
        "02",
        "assistant",
        "output_text",
        "All 12 tests pass after the fix.",
    ));
    append(&file, &grown);
    let ev = entries_saying(&mut r, "All 12 tests pass");
    let html = ev["html"].as_str().unwrap_or("");
    assert!(html.contains("And the tests, do they pass?"), "{html}");
    // The page read again shows what the event added, after what it showed.
    let page2 = body(&s.get(&format!("/session/{id}"))).to_string();
    let now = sections(&page2);
    assert!(now.len() >= before.len() + 2, "{before:?} then {now:?}");
    for sent in sections(html) {
        assert!(now.contains(&sent), "{sent} not on the page read again");
    }
    // The outline drawn again holds the new entries.
    let outline = ev["outline"].as_str().unwrap_or("");
    assert!(outline.contains("All 12 tests pass"), "{outline}");
}

#[test]
fn an_opencode_session_grows_live() {
    // opencode's database (the generated golden) where `arbor serve --all` finds it.
    let h = Home::new();
    let dir = h.tmp.path().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).expect("dirs");
    let db = dir.join("opencode.db");
    std::fs::copy(root().join("goldens/agents/opencode/opencode.db"), &db).expect("copy");
    let id = "ses_01main";
    let s = h.serve(&[]);
    let (_, mut r) = live_at_end(&s, id);
    // The user asks again, as opencode records it: a message row and its text part.
    let c = rusqlite::Connection::open(&db).expect("open the database");
    c.execute_batch(
        "INSERT INTO message VALUES ('msg_900', 'ses_01main', 1793700900000, 1793700900000,
           '{\"role\": \"user\", \"time\": {\"created\": 1793700900000}}');
         INSERT INTO part VALUES ('prt_900_00', 'msg_900', 'ses_01main', 1793700900000, 1793700900000,
           '{\"type\": \"text\", \"text\": \"Now the README, please.\"}');",
    )
    .expect("insert");
    drop(c);
    let ev = entries_saying(&mut r, "Now the README");
    let page2 = body(&s.get(&format!("/session/{id}"))).to_string();
    for sent in sections(ev["html"].as_str().unwrap_or("")) {
        assert!(
            sections(&page2).contains(&sent),
            "{sent} not on the page read again"
        );
    }
}

#[test]
fn a_line_rewritten_in_place_before_the_session_grew_is_redacted() {
    // The server keeps what its redaction cleared, to spare those lines when the session only
    // grew; a line changed in place (same length, same file) must be looked at again.
    use std::os::unix::fs::FileExt;
    let h = Home::new();
    let file = h.session_dir().join(DEMO);
    let s = h.serve(&[]);
    let leaf = body_attr(body(&s.get(&format!("/session/{SID}"))), "leaf");
    // As long as a token and " secret".
    let clean = format!("a harmless line{}", ".".repeat(token('P').len() + 7 - 15));
    append(
        &file,
        &format!(
            "{{\"type\":\"message\",\"id\":\"calm0001\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-11-22T12:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{clean}\",\"timestamp\":1}}}}\n"
        ),
    );
    // Read and redacted with that line in it (the server keeps what it found).
    let page = s.get(&format!("/session/{SID}"));
    assert!(body(&page).contains(&clean), "{page}");
    let ino = std::fs::metadata(&file).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    // The line rewritten in place with a token, then the session grows.
    let text = std::fs::read_to_string(&file).expect("read");
    let at = text.find(&clean).expect("the line") as u64;
    let planted = format!("{} secret", token('P'));
    assert_eq!(planted.len(), clean.len());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .expect("open")
        .write_all_at(planted.as_bytes(), at)
        .expect("rewrite");
    append(
        &file,
        "{\"type\":\"message\",\"id\":\"calm0002\",\"parentId\":\"calm0001\",\"timestamp\":\"2026-11-22T12:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"and more\",\"timestamp\":2}}\n",
    );
    assert_eq!(
        ino.ok(),
        std::fs::metadata(&file)
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
            .ok(),
        "the same file"
    );
    let page = s.get(&format!("/session/{SID}"));
    let b = body(&page);
    assert!(b.contains("and more"), "the grown session: {b}");
    assert!(!leaks(b), "the planted token is served: {:?}", leaked(b));
    assert!(b.contains("[REDACTED:"), "{b}");
}
