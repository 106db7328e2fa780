//! Streamable HTTP: loopback only unless --allow-remote, the bearer token checked on every
//! request (none or a wrong one: 401, before the MCP service sees it), the token file's
//! permissions.
mod common;
use arbor_mcp::http::HttpOptions;
use common::Corpus;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// One POST of `body` with `auth` (an Authorization header value); the status line and body.
fn post(addr: std::net::SocketAddr, auth: Option<&str>, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    let mut req = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        addr.port(),
        body.len()
    );
    if let Some(a) = auth {
        req.push_str(&format!("Authorization: {a}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

fn token_file(dir: &std::path::Path, token: &str, mode: u32) -> std::path::PathBuf {
    let f = dir.join(format!("token-{mode:o}"));
    std::fs::write(&f, format!("{token}\n")).expect("write token");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).expect("chmod");
    f
}

#[test]
fn a_non_loopback_address_is_refused_without_allow_remote_and_a_token() {
    let corpus = Corpus::new();
    let o = HttpOptions {
        addr: "0.0.0.0:0".parse().expect("addr"),
        allow_remote: false,
        token_file: None,
    };
    let e = o.check().expect_err("refused").to_string();
    assert!(
        e.contains("not a loopback address") && e.contains("--allow-remote"),
        "{e}"
    );
    let o = HttpOptions {
        allow_remote: true,
        ..o
    };
    let e = o.check().expect_err("refused without a token").to_string();
    assert!(e.contains("--token-file"), "{e}");
    // A token file others can read is refused, as ssh refuses such a key.
    let open = token_file(corpus.tmp.path(), "0123456789abcdef0123456789abcdef", 0o644);
    let e = HttpOptions {
        token_file: Some(open),
        ..o.clone()
    }
    .check()
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("readable by others") && e.contains("chmod 600"),
        "{e}"
    );
    let short = token_file(corpus.tmp.path(), "short", 0o600);
    let e = HttpOptions {
        token_file: Some(short),
        ..o.clone()
    }
    .check()
    .expect_err("refused")
    .to_string();
    assert!(e.contains("at least"), "{e}");
    let good = token_file(corpus.tmp.path(), "0123456789abcdef0123456789abcdef", 0o600);
    assert!(HttpOptions {
        token_file: Some(good),
        ..o
    }
    .check()
    .is_ok());
}

#[test]
fn every_request_needs_the_bearer_token() {
    let corpus = Corpus::new();
    let token = "0123456789abcdef0123456789abcdef";
    let f = token_file(corpus.tmp.path(), token, 0o600);
    let checked = HttpOptions {
        addr: "127.0.0.1:0".parse().expect("addr"),
        allow_remote: false,
        token_file: Some(f),
    }
    .check()
    .expect("checked");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let opts = corpus.opts();
    let server = rt.spawn(async move {
        arbor_mcp::http::serve_listener(opts, checked, listener, async {
            let _ = stop_rx.await;
        })
        .await
    });
    let (code, body) = post(addr, None, INIT);
    assert_eq!(code, 401, "no token: {body}");
    assert!(
        body.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{body}"
    );
    let (code, body) = post(addr, Some("Bearer 0123456789abcdef0123456789abcdeX"), INIT);
    assert_eq!(code, 401, "a wrong token: {body}");
    let (code, body) = post(addr, Some("Bearer 0123456789abcdef"), INIT);
    assert_eq!(code, 401, "a prefix of the token: {body}");
    let (code, body) = post(addr, Some(&format!("Basic {token}")), INIT);
    assert_eq!(code, 401, "not a bearer token: {body}");
    let (code, body) = post(addr, Some(&format!("Bearer {token}")), INIT);
    assert_eq!(code, 200, "the token: {body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    let _ = stop_tx.send(());
    rt.block_on(server).expect("join").expect("served");
}

#[test]
fn loopback_without_a_token_serves() {
    let corpus = Corpus::new();
    let checked = HttpOptions {
        addr: "127.0.0.1:0".parse().expect("addr"),
        allow_remote: false,
        token_file: None,
    }
    .check()
    .expect("checked");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let opts = corpus.opts();
    let server = rt.spawn(async move {
        arbor_mcp::http::serve_listener(opts, checked, listener, async {
            let _ = stop_rx.await;
        })
        .await
    });
    let (code, body) = post(addr, None, INIT);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"name\":\"arbor\""), "{body}");
    let _ = stop_tx.send(());
    rt.block_on(server).expect("join").expect("served");
}
