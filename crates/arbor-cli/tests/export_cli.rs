//! `arbor export`: Markdown snapshots of the demo sessions (the path, and every branch), the
//! same bytes on every run, secrets redacted, images written once, the JSON schema.
//! `ARBOR_UPDATE_GOLDENS=1` rewrites goldens/export/ after a deliberate change.
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn export(args: &[&str]) -> (Vec<u8>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["export"])
        .args(args)
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .expect("run arbor");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (o.stdout, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn markdown_of_the_demo_sessions_is_stable_and_matches_its_goldens() {
    let goldens = root().join("goldens/export");
    let update = std::env::var_os("ARBOR_UPDATE_GOLDENS").is_some();
    let mut demo: Vec<PathBuf> = std::fs::read_dir(root().join("demo/sessions"))
        .expect("demo")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    demo.sort();
    assert_eq!(demo.len(), 4);
    let mut compared = 0;
    for (n, s) in demo.iter().enumerate() {
        for (mode, extra) in [("path", None), ("tree", Some("--tree"))] {
            let mut args = vec![s.to_str().expect("utf-8")];
            args.extend(extra);
            let (a, _) = export(&args);
            let (b, _) = export(&args);
            assert_eq!(a, b, "the same session gives the same bytes");
            let g = goldens.join(format!("demo{n}-{mode}.md"));
            if update {
                std::fs::create_dir_all(&goldens).expect("mkdir");
                std::fs::write(&g, &a).expect("write golden");
            }
            let want = std::fs::read(&g).unwrap_or_else(|e| panic!("{}: {e}", g.display()));
            assert!(a == want, "{} differs from the export", g.display());
            compared += 1;
        }
    }
    assert_eq!(compared, 8);
}

#[test]
fn secrets_are_redacted_images_written_once_and_json_follows_its_schema() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"deploy with AKIAQWERTYUIOPASDFGH please </details><script>x</script>","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"t1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"screenshot","content":[{{"type":"image","data":"{png}","mimeType":"image/png"}},{{"type":"image","data":"{png}","mimeType":"image/png"}}],"isError":false,"timestamp":2}}}}"#),
        r#"{"type":"message","id":"a1","parentId":"t1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"token ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 used"},{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"curl -H 'Authorization: Bearer sk-proj-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9'"}}],"model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"stopReason":"stop","timestamp":3}}"#.to_string(),
    ];
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    let before = std::fs::read(&f).expect("read");
    let out = tmp.path().join("out.md");
    let (_, err) = export(&[
        f.to_str().expect("utf-8"),
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert!(
        err.contains("secrets redacted") && err.contains("1 image"),
        "{err}"
    );
    let md = std::fs::read_to_string(&out).expect("md");
    for secret in ["AKIAQWERTYUIOPASDFGH", "ghp_aB3d", "sk-proj-aB3d"] {
        assert!(!md.contains(secret), "{secret} in the export");
    }
    assert!(md.contains("[REDACTED:aws-access-key]") && md.contains("[REDACTED:github-token]"));
    assert!(
        md.contains("&lt;/details>&lt;script>"),
        "session HTML stays text: {md}"
    );
    assert!(md.contains("- Tokens: 10 in, 5 out, 0 cache read, 0 cache write; cost $0.2500"));
    let assets: Vec<_> = std::fs::read_dir(tmp.path().join("out.md.assets"))
        .expect("assets")
        .flatten()
        .collect();
    assert_eq!(assets.len(), 1, "the same image is written once");
    assert_eq!(
        md.matches("](out.md.assets/").count(),
        2,
        "and linked twice"
    );
    assert_eq!(
        std::fs::read(&f).expect("read"),
        before,
        "the session is never changed"
    );
    // --no-redact keeps them.
    let (raw, _) = export(&[f.to_str().expect("utf-8"), "--no-redact"]);
    assert!(String::from_utf8_lossy(&raw).contains("AKIAQWERTYUIOPASDFGH"));
    // JSON.
    let (j, _) = export(&[f.to_str().expect("utf-8"), "--format", "json"]);
    let v: Value = serde_json::from_slice(&j).expect("json");
    assert_eq!(v["format"], "arbor-export/1");
    assert_eq!(v["redacted"], true);
    let e = v["entries"].as_array().expect("entries");
    assert_eq!(e.len(), 3);
    assert_eq!(e[2]["role"], "assistant");
    assert_eq!(e[2]["usage"]["input"], 10);
    assert_eq!(e[2]["toolCalls"][0]["name"], "bash");
    assert!(e[2]["text"]
        .as_str()
        .expect("text")
        .contains("[REDACTED:github-token]"));
    assert!(!String::from_utf8_lossy(&j).contains("sk-proj-aB3d"));
}

#[test]
fn a_symlink_planted_at_the_temporary_name_is_not_followed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    let out = tmp.path().join("out.md");
    std::os::unix::fs::symlink(&victim, tmp.path().join(".out.md.arbor-tmp")).expect("plant");
    let demo = first_demo();
    for format in ["md", "html", "json"] {
        let (_, _) = export(&[
            "--format",
            format,
            "-o",
            out.to_str().expect("utf-8"),
            demo.to_str().expect("utf-8"),
        ]);
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
        let written = std::fs::read_to_string(&out).expect("out");
        assert!(written.len() > 1000, "{format}");
        assert!(!std::fs::symlink_metadata(&out)
            .expect("out")
            .file_type()
            .is_symlink());
    }
}

fn first_demo() -> PathBuf {
    let mut demo: Vec<PathBuf> = std::fs::read_dir(root().join("demo/sessions"))
        .expect("demo")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    demo.sort();
    demo.remove(0)
}

#[test]
fn images_are_not_written_through_a_planted_symlink() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("dir");
    let src = root()
        .join("demo/sessions/2026-11-22T11-55-39-946Z_01a2031c-aa28-755e-9ecf-bfbc78024ba4.jsonl");
    // The assets directory itself is a link: refused, nothing written there.
    let out = tmp.path().join("a.md");
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("a.md.assets")).expect("plant");
    let o = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["export", "--tree", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run arbor");
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("symlink"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_dir(&elsewhere).expect("dir").count(), 0);
    assert!(!out.exists(), "no half export");
    // A link planted at an image's name is replaced, not followed.
    let out = tmp.path().join("b.md");
    let (_, err) = export(&[
        "--tree",
        "-o",
        out.to_str().expect("utf-8"),
        src.to_str().expect("utf-8"),
    ]);
    assert!(err.contains("image"), "{err}");
    let assets = tmp.path().join("b.md.assets");
    let names: Vec<PathBuf> = std::fs::read_dir(&assets)
        .expect("assets")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!names.is_empty());
    let victim = elsewhere.join("victim.png");
    std::fs::write(&victim, "keep").expect("victim");
    for n in &names {
        std::fs::remove_file(n).expect("rm");
        std::os::unix::fs::symlink(&victim, n).expect("plant");
    }
    export(&[
        "--tree",
        "-o",
        out.to_str().expect("utf-8"),
        src.to_str().expect("utf-8"),
    ]);
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
    for n in &names {
        assert!(
            std::fs::symlink_metadata(n).expect("image").is_file(),
            "{}",
            n.display()
        );
    }
}

/// The Markdown export rendered by a CommonMark renderer (pulldown-cmark, as a viewer would):
/// nothing from the session becomes HTML, a script, a remote image or a `javascript:` link,
/// in any field (text, errorMessage, model, tool names, customType, mimeType, entry ids,
/// the header's cwd, the session name).
#[test]
fn markdown_from_a_hostile_session_renders_inert() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("s.jsonl");
    let evil = r#"<img src=x onerror=alert(1)><script>alert(2)</script> ![i](https://evil.example/p.png) [c](javascript:alert(3)) <javascript:alert(4)> [r]: javascript:alert(5) \<b>x\</b> &lt;script&gt; ![j][r] `code</span>` \`<svg onload=alert(6)>`"#;
    let e = serde_json::to_string(evil).expect("json");
    let id = serde_json::to_string(r#"x" onmouseover="alert(7)"#).expect("json");
    let lines = [
        format!(
            r#"{{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":{e}}}"#
        ),
        format!(
            r#"{{"type":"message","id":{id},"parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{e},"timestamp":1}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"a1","parentId":{id},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":{e}}},{{"type":"thinking","thinking":{e}}},{{"type":"toolCall","id":"c","name":{e},"arguments":{{"x":{e}}}}}],"model":{e},"stopReason":"error","errorMessage":{e},"timestamp":2}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":{e},"content":[{{"type":"text","text":{e}}},{{"type":"image","data":"iVBORw0KGgo=","mimeType":{e}}}],"isError":true,"timestamp":3}}}}"#
        ),
        format!(
            r#"{{"type":"custom_message","id":"m1","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z","customType":{e},"content":{e},"display":true}}"#
        ),
        format!(
            r#"{{"type":"session_info","id":"n1","parentId":"m1","timestamp":"2026-01-01T00:00:05.000Z","name":{e}}}"#
        ),
    ];
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    let out = tmp.path().join("out.md");
    for extra in [None, Some("--tree")] {
        let mut args = vec![
            f.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
        ];
        args.extend(extra);
        let (_, err) = export(&args);
        let md = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{err}: {e}"));
        // The one comment is arbor's own, first: the mark of a file an export made (`-o`).
        let md = md
            .strip_prefix("<!-- arbor-export/1: written by arbor export -->\n")
            .unwrap_or_else(|| panic!("no export marker first: {md}"));
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new(md));
        let lower = html.to_ascii_lowercase();
        assert!(md.len() > 1000, "{md}");
        // Images: only arbor's own copies in the assets directory.
        for (k, _) in html.match_indices("<img ") {
            assert!(
                html[k..].starts_with("<img src=\"out.md.assets/"),
                "{}",
                &html[k..]
            );
        }
        assert!(
            !lower.contains("href=\"javascript") && !lower.contains("src=\"javascript"),
            "a javascript: link: {html}"
        );
        assert!(
            !lower.contains("https://evil.example/p.png\""),
            "a remote image or link: {html}"
        );
        // The only tags are arbor's own.
        let allowed = [
            "p",
            "h1",
            "h2",
            "h3",
            "a",
            "code",
            "pre",
            "ul",
            "li",
            "strong",
            "em",
            "details",
            "summary",
            "blockquote",
            "hr",
            "br",
            "img",
        ];
        let mut rest = html.as_str();
        while let Some(i) = rest.find('<') {
            let tag: String = rest[i + 1..]
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            assert!(
                allowed.contains(&tag.as_str()),
                "<{tag}> from the session: {html}"
            );
            // No attribute but arbor's: anchors and images are checked below, a fence's
            // language is a plain name.
            let whole = &rest[i..i + rest[i..].find('>').unwrap_or(0) + 1];
            let bare = whole == format!("<{tag}>") || whole == format!("</{tag}>");
            let language = whole.starts_with("<code class=\"language-")
                && whole["<code class=\"language-".len()..whole.len() - 2]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+#._-".contains(c));
            assert!(
                bare || language || matches!(tag.as_str(), "a" | "img" | "hr" | "br"),
                "{whole}"
            );
            rest = &rest[i + 1..];
        }
        // Links are arbor's anchors: `id` attributes and `#` fragments only.
        for (k, _) in html.match_indices("<a ") {
            let attr = &html[k + 3..];
            assert!(
                attr.starts_with("id=\"") || attr.starts_with("href=\"#"),
                "{}",
                &html[k..(k + 80).min(html.len())]
            );
        }
    }
}

/// An omp image whose blob is not here (a session pulled before its blob arrived) is marked
/// missing in every format: never decoded as if the reference were base64 and written out as
/// an image file.
#[test]
fn an_image_whose_blob_is_missing_is_marked_missing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let hash = "ab".repeat(32);
    let f = tmp.path().join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"look","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"t1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"screenshot","content":[{{"type":"image","data":"blob:sha256:{hash}","mimeType":"image/png"}}],"isError":false,"timestamp":2}}}}"#),
    ];
    std::fs::write(&f, lines.join("\n") + "\n").expect("write");
    let marked = format!("[image missing: blob {hash}]");
    for format in ["md", "html"] {
        let out = tmp.path().join(format!("out.{format}"));
        let (_, err) = export(&[
            "--format",
            format,
            f.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
        ]);
        let text = std::fs::read_to_string(&out).expect("export");
        assert!(text.contains(&marked), "{format}: {err}");
        assert!(
            !tmp.path().join(format!("out.{format}.assets")).exists(),
            "{format}: no image file is written for a missing blob"
        );
    }
}
