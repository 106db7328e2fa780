//! The server's own tools over raw JSON-RPC (in process): each tool's answer against the
//! library's for the same question, hostile arguments, redaction, cursors, resources.
mod common;
use common::{Client, Corpus, SECRET};
use serde_json::{json, Value};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn tools_list_names_the_tools_with_input_and_output_schemas() {
    let corpus = Corpus::new();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let r = c.request("tools/list", json!({})).await;
        let tools = r["result"]["tools"].as_array().expect("tools").clone();
        for name in [
            "search_sessions",
            "list_sessions",
            "get_session",
            "get_usage",
        ] {
            let t = tools
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} listed: {r}"));
            assert_eq!(t["inputSchema"]["type"], "object", "{name}");
            assert_eq!(
                t["outputSchema"]["type"], "object",
                "{name} has an output schema"
            );
            let d = t["description"].as_str().expect("description");
            assert!(
                d.contains("--no-redact"),
                "{name} says text is redacted: {d}"
            );
            // Every argument is described for the model.
            for (arg, s) in t["inputSchema"]["properties"].as_object().expect("props") {
                assert!(
                    s.get("description").is_some(),
                    "{name}.{arg} has a description"
                );
            }
        }
    });
}

#[test]
fn list_sessions_lists_newest_first_and_pages_with_cursors() {
    let corpus = Corpus::new();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let all = c.ok("list_sessions", json!({})).await;
        let files = corpus.files();
        assert_eq!(all["total"], json!(files.len()), "{all}");
        let rows = all["sessions"].as_array().expect("rows");
        assert_eq!(rows.len(), files.len());
        // Newest activity first.
        let times: Vec<&str> = rows
            .iter()
            .map(|r| r["modified"].as_str().unwrap_or(""))
            .collect();
        let mut sorted = times.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(times, sorted);
        // The same rows, two at a time, through the cursors.
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..20 {
            let mut args = json!({"limit": 2});
            if let Some(cur) = &cursor {
                args["cursor"] = json!(cur);
            }
            let p = c.ok("list_sessions", args).await;
            paged.extend(
                p["sessions"]
                    .as_array()
                    .expect("rows")
                    .iter()
                    .map(|r| r["path"].clone()),
            );
            match p.get("next_cursor").and_then(Value::as_str) {
                Some(n) => cursor = Some(n.to_string()),
                None => break,
            }
        }
        let want: Vec<Value> = rows.iter().map(|r| r["path"].clone()).collect();
        assert_eq!(paged, want);
        // A cursor is bound to its question.
        let p = c.ok("list_sessions", json!({"limit": 2})).await;
        let cur = p["next_cursor"].as_str().expect("more").to_string();
        let e = c
            .err(
                "list_sessions",
                json!({"limit": 2, "grep": "x", "cursor": cur}),
            )
            .await;
        assert!(e.contains("cursor"), "{e}");
        // Filters.
        let g = c
            .ok("list_sessions", json!({"grep": "nothing says this"}))
            .await;
        assert_eq!(g["total"], json!(0), "{g}");
        let g = c
            .ok("list_sessions", json!({"grep": "PLEASE deploy"}))
            .await;
        assert_eq!(
            g["total"],
            json!(1),
            "grep looks at the title and first message: {g}"
        );
        let omp = c.ok("list_sessions", json!({"agent": "omp"})).await;
        assert_eq!(omp["total"], json!(0));
        let later = c.ok("list_sessions", json!({"since": "2099-01-01"})).await;
        assert_eq!(later["total"], json!(0));
    });
}

#[test]
fn search_sessions_finds_entries_with_their_branch() {
    let corpus = Corpus::new();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let r = c.ok("search_sessions", json!({"query": "zebrafish"})).await;
        let hits = r["hits"].as_array().expect("hits");
        assert_eq!(hits.len(), 2, "{r}");
        assert!(hits
            .iter()
            .all(|h| h["session"] == "5ec2e7aa-0000-7000-8000-000000000001"));
        assert!(hits.iter().all(|h| h["on_current_branch"] == true));
        let mut ids: Vec<&str> = hits
            .iter()
            .map(|h| h["entry_id"].as_str().unwrap_or(""))
            .collect();
        ids.sort();
        assert_eq!(ids, ["a1", "u1"]);
        let r = c
            .ok(
                "search_sessions",
                json!({"query": "zebrafish", "role": ["assistant"]}),
            )
            .await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(1), "{r}");
        assert_eq!(r["hits"][0]["role"], "assistant");
        let r = c
            .ok(
                "search_sessions",
                json!({"query": "zebrafish", "until": "2026-01-02T00:00:01.500Z"}),
            )
            .await;
        assert_eq!(
            r["hits"].as_array().map(Vec::len),
            Some(1),
            "until keeps the earlier: {r}"
        );
        assert_eq!(r["hits"][0]["entry_id"], "u1");
        let r = c
            .ok(
                "search_sessions",
                json!({"query": "zebrafish", "project": "/elsewhere"}),
            )
            .await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(0));
        // A hit off the current branch: a session with two branches.
        corpus.write_session(
            "2026-01-03T00-00-00-000Z_b4a1c000-0000-7000-8000-000000000002.jsonl",
            "b4a1c000-0000-7000-8000-000000000002",
            &[
                ("r", None, "user", "start"),
                ("x", Some("r"), "assistant", "the quokka branch"),
                ("y", Some("r"), "assistant", "the other branch"),
            ],
        );
        let r = c.ok("search_sessions", json!({"query": "quokka"})).await;
        assert_eq!(r["hits"][0]["on_current_branch"], false, "{r}");
        let r = c
            .ok(
                "search_sessions",
                json!({"query": "quokka", "current_branch_only": true}),
            )
            .await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(0), "{r}");
    });
}

#[test]
fn get_session_and_get_usage_give_the_libraries_numbers() {
    let corpus = Corpus::new();
    let files = corpus.files();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let demo = files
            .iter()
            .find(|f| f.to_string_lossy().contains("01a2031c-a4c8"))
            .expect("demo session");
        let s = c
            .ok("get_session", json!({"session": "01a2031c-a4c8"}))
            .await;
        let doc = arbor_store::load_doc(demo).expect("load");
        assert_eq!(s["entries"], json!(doc.entries().len()));
        assert_eq!(
            s["labels"].as_array().map(Vec::len),
            Some(doc.index().labels.len())
        );
        let leaves = doc
            .index()
            .tree(&doc)
            .children
            .iter()
            .filter(|k| k.is_empty())
            .count();
        assert_eq!(s["branches"], json!(leaves));
        assert!(
            s["branches"].as_u64().unwrap_or(0) > 1,
            "the demo session branches: {s}"
        );
        // Its cost as `arbor stats SESSION` counts it.
        let (counted, _) = arbor_view::stats_from_files(std::slice::from_ref(demo));
        let stats = arbor_view::aggregate_stats(&counted, arbor_view::StatsBy::Session, None);
        assert_eq!(s["usage"]["turns"], json!(stats.total.turns));
        assert_eq!(
            s["usage"]["current_path"]["input"],
            json!(stats.total.path.tokens().input)
        );
        // A fork names its parent; the parent lists it.
        let parent = corpus
            .files()
            .into_iter()
            .find(|f| f.to_string_lossy().contains("5ec2e7aa"))
            .expect("parent");
        let fork = corpus.project.join("2026-01-04T00-00-00-000Z_f0f0f0f0-0000-7000-8000-000000000000.jsonl");
        std::fs::write(
            &fork,
            format!(
                "{}\n",
                json!({"type":"session","version":3,"id":"f0f0f0f0-0000-7000-8000-000000000000","timestamp":"2026-01-04T00:00:00.000Z","cwd":"/work/project","parentSession": parent.to_string_lossy()})
            ),
        )
        .expect("fork");
        let p = c.ok("get_session", json!({"session": "5ec2e7aa"})).await;
        assert_eq!(p["fork_count"], json!(1), "{p}");
        assert_eq!(p["forks"][0]["id"], "f0f0f0f0-0000-7000-8000-000000000000");
        let f = c.ok("get_session", json!({"session": "f0f0f0f0"})).await;
        assert_eq!(f["parent_session"], json!(parent.to_string_lossy()), "{f}");
        // get_usage by model over every session: `arbor stats --by model --all`'s rows.
        let u = c.ok("get_usage", json!({"by": "model"})).await;
        let (counted, _) = arbor_view::stats_from_files(&corpus.files());
        let want = arbor_view::aggregate_stats(&counted, arbor_view::StatsBy::Model, None);
        assert_eq!(u["sessions"], json!(want.sessions));
        let rows = u["rows"].as_array().expect("rows");
        assert_eq!(rows.len(), want.rows.len());
        for (have, want) in rows.iter().zip(&want.rows) {
            assert_eq!(have["group"], json!(want.group));
            assert_eq!(have["turns"], json!(want.turns));
            assert_eq!(have["current_path"]["cost"], json!(want.path.tokens().cost));
            assert_eq!(
                have["other_branches"]["output"],
                json!(want.other.tokens().output)
            );
        }
        assert_eq!(u["total"]["turns"], json!(want.total.turns));
        // One session, and a window of time.
        let one = c
            .ok("get_usage", json!({"session": "5ec2e7aa", "by": "day"}))
            .await;
        assert_eq!(one["total"]["turns"], json!(1), "{one}");
        assert_eq!(one["total"]["current_path"]["cost"], json!(0.5));
        let none = c
            .ok(
                "get_usage",
                json!({"session": "5ec2e7aa", "until": "2020-01-01"}),
            )
            .await;
        assert_eq!(none["total"]["turns"], json!(0), "{none}");
    });
}

#[test]
fn hostile_arguments_are_tool_errors_and_the_server_goes_on() {
    let corpus = Corpus::new();
    // A session file outside the agent directory, and a link to it inside.
    let outside = corpus.tmp.path().join("outside.jsonl");
    std::fs::copy(&corpus.files()[0], &outside).expect("copy");
    let link = corpus.project.join("planted.jsonl");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let e = c
            .err("list_sessions", json!({"limit": 1_000_000_000_000u64}))
            .await;
        assert!(e.contains("limit"), "{e}");
        let e = c
            .err(
                "search_sessions",
                json!({"query": "x", "limit": 1_000_000_000_000u64}),
            )
            .await;
        assert!(e.contains("limit"), "{e}");
        let e = c
            .err("list_sessions", json!({"budget": 1_000_000_000_000u64}))
            .await;
        assert!(e.contains("budget"), "{e}");
        let e = c.err("get_session", json!({"session": "ffffffff"})).await;
        assert!(e.contains("no session found"), "{e}");
        // The two sessions whose ids start with 01a2031c.
        let e = c.err("get_session", json!({"session": "01a2031c"})).await;
        assert!(e.contains("matches"), "ambiguous: {e}");
        for p in [
            "../../etc/passwd",
            "/etc/passwd",
            "../../../../../../etc/shadow",
        ] {
            let e = c.err("get_session", json!({"session": p})).await;
            assert!(
                e.contains("outside") || e.contains("cannot be read"),
                "{p}: {e}"
            );
        }
        let e = c
            .err("get_session", json!({"session": outside.to_string_lossy()}))
            .await;
        assert!(e.contains("outside"), "{e}");
        let e = c
            .err("get_session", json!({"session": link.to_string_lossy()}))
            .await;
        assert!(
            e.contains("outside"),
            "a link out of the agent directory: {e}"
        );
        let e = c
            .err("get_usage", json!({"session": "../../etc/passwd"}))
            .await;
        assert!(e.contains("outside") || e.contains("cannot be read"), "{e}");
        let big = "a".repeat(1 << 20);
        let e = c.err("search_sessions", json!({"query": big})).await;
        assert!(e.contains("too long"), "{e}");
        let e = c.err("search_sessions", json!({"query": "re:("})).await;
        assert!(e.contains("query"), "{e}");
        let e = c
            .err("search_sessions", json!({"query": "x", "role": ["nobody"]}))
            .await;
        assert!(e.contains("unknown role"), "{e}");
        let e = c
            .err(
                "search_sessions",
                json!({"query": "x", "since": "yesterday-ish"}),
            )
            .await;
        assert!(e.contains("since"), "{e}");
        let e = c.err("list_sessions", json!({"cursor": "c1.zz.1"})).await;
        assert!(e.contains("cursor"), "{e}");
        // An FTS5 query arbor reads leniently (as `arbor search`): an answer, not a crash.
        let r = c
            .call("search_sessions", json!({"query": "\"unbalanced AND ("}))
            .await;
        assert!(r.get("isError").is_some(), "{r}");
        // Arguments of the wrong type: an error answer, and the server still serves.
        let r = c
            .request(
                "tools/call",
                json!({"name": "list_sessions", "arguments": {"limit": "many"}}),
            )
            .await;
        assert!(
            r.get("error").is_some() || r["result"]["isError"] == true,
            "{r}"
        );
        let r = c
            .request(
                "tools/call",
                json!({"name": "no_such_tool", "arguments": {}}),
            )
            .await;
        assert!(
            r.get("error").is_some() || r["result"]["isError"] == true,
            "{r}"
        );
        let ok = c.ok("list_sessions", json!({"limit": 1})).await;
        assert_eq!(ok["sessions"].as_array().map(Vec::len), Some(1));
    });
}

#[test]
fn nothing_unredacted_is_served_by_default_and_everything_with_no_redact() {
    let corpus = Corpus::new();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let mut served = String::new();
        for (tool, args) in [
            ("search_sessions", json!({"query": "zebrafish"})),
            ("search_sessions", json!({"query": "deploy"})),
            ("list_sessions", json!({})),
            ("get_session", json!({"session": "5ec2e7aa"})),
            ("get_usage", json!({"session": "5ec2e7aa"})),
        ] {
            let r = c.call(tool, args).await;
            served.push_str(&r.to_string());
        }
        let list = c.request("resources/list", json!({})).await;
        served.push_str(&list.to_string());
        let read = c
            .request(
                "resources/read",
                json!({"uri": "arbor://session/5ec2e7aa-0000-7000-8000-000000000001"}),
            )
            .await;
        served.push_str(&read.to_string());
        assert!(
            read["result"]["contents"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("zebrafish")),
            "{read}"
        );
        assert!(
            !served.contains("aB3dE5fG7hI9jK1lM3nO5"),
            "a secret was served: {served}"
        );
        assert!(served.contains("[REDACTED:anthropic-key]"), "{served}");
        // No filter answers for a secret's text: a query or a grep cannot confirm one a
        // prefix at a time.
        let r = c
            .ok("search_sessions", json!({"query": "aB3dE5fG7*"}))
            .await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(0), "{r}");
        let g = c
            .ok("list_sessions", json!({"grep": "sk-ant-api03-aB3d"}))
            .await;
        assert_eq!(g["total"], json!(0), "{g}");
        // A snippet around a word far from the secret is made from the redacted text.
        let r = c.ok("search_sessions", json!({"query": "please"})).await;
        assert!(r.to_string().contains("**please**"), "{r}");

        let mut opts = corpus.opts();
        opts.redact = false;
        let mut raw = Client::start(opts).await;
        let r = raw
            .call("search_sessions", json!({"query": "deploy"}))
            .await;
        assert!(
            r.to_string().contains(SECRET),
            "--no-redact serves the text: {r}"
        );
        let r = raw
            .ok("search_sessions", json!({"query": "aB3dE5fG7*"}))
            .await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(1), "{r}");
        let read = raw
            .request(
                "resources/read",
                json!({"uri": "arbor://session/5ec2e7aa-0000-7000-8000-000000000001"}),
            )
            .await;
        assert!(read.to_string().contains(SECRET), "{read}");
    });
}

#[test]
fn resources_list_pages_and_a_huge_session_is_cut_at_the_bound() {
    let corpus = Corpus::new();
    for k in 0..105 {
        corpus.write_session(
            &format!("2025-06-01T00-00-00-000Z_aa{k:06}-0000-7000-8000-000000000000.jsonl"),
            &format!("aa{k:06}-0000-7000-8000-000000000000"),
            &[("u", None, "user", "tiny")],
        );
    }
    let huge_text = "lorem ipsum dolor sit amet ".repeat(20_000);
    corpus.write_session(
        "2026-02-01T00-00-00-000Z_b16b16b1-0000-7000-8000-000000000000.jsonl",
        "b16b16b1-0000-7000-8000-000000000000",
        &[
            ("u", None, "user", "a huge one"),
            ("a", Some("u"), "assistant", &huge_text),
        ],
    );
    let n = corpus.files().len();
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let mut uris = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = match &cursor {
                Some(cur) => json!({"cursor": cur}),
                None => json!({}),
            };
            let r = c.request("resources/list", params).await;
            let res = r["result"]["resources"]
                .as_array()
                .expect("resources")
                .clone();
            assert!(res.len() <= 100, "a page is bounded");
            uris.extend(
                res.iter()
                    .map(|x| x["uri"].as_str().unwrap_or("").to_string()),
            );
            pages += 1;
            match r["result"]["nextCursor"].as_str() {
                Some(n) => cursor = Some(n.to_string()),
                None => break,
            }
        }
        assert_eq!(pages, 2);
        assert_eq!(uris.len(), n);
        let mut dedup = uris.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), n, "no resource twice");
        let r = c
            .request("resources/read", json!({"uri": "arbor://session/b16b16b1"}))
            .await;
        let text = r["result"]["contents"][0]["text"].as_str().expect("text");
        assert!(
            text.chars().count() < arbor_mcp::bound::MAX_BUDGET + 500,
            "bounded"
        );
        assert!(
            text.contains("[cut:") && text.contains("get_messages"),
            "says how to read on"
        );
        assert_eq!(r["result"]["contents"][0]["mimeType"], "text/markdown");
        let r = c
            .request(
                "resources/read",
                json!({"uri": "arbor://session/../../etc/passwd"}),
            )
            .await;
        assert!(r.get("error").is_some(), "{r}");
        let r = c
            .request("resources/read", json!({"uri": "file:///etc/passwd"}))
            .await;
        assert!(r.get("error").is_some(), "{r}");
    });
}

#[test]
fn a_subscribed_session_that_grows_is_notified() {
    let corpus = Corpus::new();
    let file = corpus
        .files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("5ec2e7aa"))
        .expect("file");
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let uri = "arbor://session/5ec2e7aa-0000-7000-8000-000000000001";
        let r = c.request("resources/subscribe", json!({"uri": uri})).await;
        assert!(r.get("result").is_some(), "{r}");
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).expect("open");
        std::io::Write::write_all(
            &mut f,
            b"{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-02T00:01:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"more\",\"timestamp\":1767312060000}}\n",
        )
        .expect("append");
        // Waits for the event (the test's timeout is the limit, not a sleep).
        let note = loop {
            let m = c.recv().await;
            if m["method"] == "notifications/resources/updated" {
                break m;
            }
        };
        assert_eq!(note["params"]["uri"], uri);
    });
}

#[test]
fn a_refresh_reports_progress_to_a_call_that_asks() {
    let corpus = Corpus::new();
    for k in 0..300 {
        corpus.write_session(
            &format!("2025-06-01T00-00-00-000Z_cc{k:06}-0000-7000-8000-000000000000.jsonl"),
            &format!("cc{k:06}-0000-7000-8000-000000000000"),
            &[("u", None, "user", "some words to index")],
        );
    }
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        let r = c
            .request(
                "tools/call",
                json!({"name": "list_sessions", "arguments": {"limit": 1}, "_meta": {"progressToken": "p1"}}),
            )
            .await;
        assert_eq!(r["result"]["isError"], false, "{r}");
        let progress: Vec<&Value> = c
            .notes
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .collect();
        assert!(!progress.is_empty(), "a cold refresh of 300 files reports progress");
        assert!(progress.iter().all(|p| p["params"]["progressToken"] == "p1"));
    });
}

#[test]
fn a_cancelled_call_is_dropped_and_the_server_goes_on() {
    let corpus = Corpus::new();
    for k in 0..2000 {
        corpus.write_session(
            &format!("2025-06-01T00-00-00-000Z_dd{k:06}-0000-7000-8000-000000000000.jsonl"),
            &format!("dd{k:06}-0000-7000-8000-000000000000"),
            &[("u", None, "user", "words for the index")],
        );
    }
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        // A call that refreshes 2,000 cold sessions, cancelled as soon as it is sent.
        let id = c.take_id();
        c.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"words"}}}))
            .await;
        c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id,"reason":"test"}}))
            .await;
        let ping = c.take_id();
        c.send(&json!({"jsonrpc":"2.0","id":ping,"method":"ping"})).await;
        // The ping is answered; the cancelled call is not (or, had it finished first, is).
        loop {
            let m = c.recv().await;
            if m["id"] == json!(ping) {
                assert!(m.get("result").is_some(), "{m}");
                break;
            }
            if m["id"] == json!(id) {
                assert!(m.get("result").is_some() || m.get("error").is_some(), "{m}");
            }
        }
        // And the next call is served in full.
        let r = c.ok("search_sessions", json!({"query": "words", "limit": 1})).await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(1), "{r}");
    });
}

#[test]
fn with_its_watcher_the_server_answers_what_was_just_written() {
    let corpus = Corpus::new();
    let mut opts = corpus.opts();
    opts.watch = true;
    let catalog = opts.catalog.clone().expect("catalog");
    let file = corpus
        .files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("5ec2e7aa"))
        .expect("file");
    rt().block_on(async {
        let mut c = Client::start(opts).await;
        // The watcher's first refresh done: it vouches for the project directory.
        let key = arbor_index::dir_key(&corpus.project);
        let t0 = std::time::Instant::now();
        while !arbor_index::watch::vouches(&catalog, std::slice::from_ref(&key)) {
            assert!(t0.elapsed() < common::WAIT, "the watcher never vouched");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let r = c.ok("search_sessions", json!({"query": "zebrafish"})).await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(2), "{r}");
        // A turn appended now is in the next answer.
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).expect("open");
        std::io::Write::write_all(
            &mut f,
            b"{\"type\":\"message\",\"id\":\"u9\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-02T00:02:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"now the narwhal\",\"timestamp\":1767312120000}}\n",
        )
        .expect("append");
        drop(f);
        let r = c.ok("search_sessions", json!({"query": "narwhal"})).await;
        assert_eq!(r["hits"].as_array().map(Vec::len), Some(1), "{r}");
        assert_eq!(r["hits"][0]["entry_id"], "u9");
    });
}

/// The text a model reads names each session by its whole id: two sessions whose ids share
/// their first eight characters are told apart in `list_sessions`' and `search_sessions'` text,
/// and the id read there is a `session` argument that resolves (a shortened id would be the
/// prefix of both: "ambiguous").
#[test]
fn the_text_names_sessions_by_ids_a_session_argument_takes() {
    let corpus = Corpus::new();
    let ids = [
        "0badcafe-0000-7000-8000-00000000000a",
        "0badcafe-0000-7000-8000-00000000000b",
    ];
    for (k, id) in ids.iter().enumerate() {
        corpus.write_session(
            &format!("2026-01-03T00-00-0{k}-000Z_{id}.jsonl"),
            id,
            &[("u1", None, "user", "the quokka question")],
        );
    }
    rt().block_on(async {
        let mut c = Client::start(corpus.opts()).await;
        for (tool, args) in [
            ("list_sessions", json!({"grep": "quokka"})),
            ("search_sessions", json!({"query": "quokka"})),
        ] {
            let r = c.call(tool, args).await;
            let text = r["content"][0]["text"].as_str().expect("text").to_string();
            for id in ids {
                let line = text
                    .lines()
                    .find(|l| l.starts_with(id))
                    .unwrap_or_else(|| panic!("{tool}: a line naming {id}:\n{text}"));
                let named = line.split_whitespace().next().expect("first word");
                let s = c.ok("get_session", json!({"session": named})).await;
                assert_eq!(s["id"], json!(id), "{tool}: {named} resolves to {id}: {s}");
            }
        }
    });
}
