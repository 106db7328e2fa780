//! A WebDriver client for the browser tests: a few lines of HTTP/1.1 over a loopback
//! `TcpStream` to `chromedriver` (`chromium` and `chromium-driver`, installed by the test
//! command). Test code only; the project's libraries need no HTTP client.
//!
//! ```no_run
//! let d = arbor_testkit::webdriver::Driver::start();
//! let profile = tempfile::tempdir().unwrap();
//! let s = d.session(true, profile.path());
//! s.go("http://127.0.0.1:8777/");
//! assert!(s.log("browser").is_empty());
//! ```
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running chromedriver (stopped when dropped).
pub struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    pub fn start() -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "chromedriver is needed (.ci/run installs it: apt-get install chromium-driver)",
            );
        let d = Driver { child, port };
        let t0 = Instant::now();
        while d.try_req("GET", "/status", None).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        d
    }

    pub fn try_req(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> std::io::Result<Value> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )?;
        // chromedriver may keep the connection open: read the head, then Content-Length
        // bytes (or chunks up to the last one).
        let mut raw = Vec::new();
        let mut buf = [0u8; 65536];
        let head_end = loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::Error::other("connection closed before the head"));
            }
            raw.extend_from_slice(&buf[..n]);
            if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let chunked = head.contains("transfer-encoding: chunked");
        loop {
            let have = raw.len() - head_end;
            let done = match length {
                Some(n) => have >= n,
                None if chunked => raw.ends_with(b"0\r\n\r\n"),
                None => false,
            };
            if done {
                break;
            }
            let n = s.read(&mut buf)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        let rest = String::from_utf8_lossy(&raw[head_end..]).into_owned();
        let body = if chunked { dechunk(&rest) } else { rest };
        serde_json::from_str(&body).map_err(std::io::Error::other)
    }

    pub fn req(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self
            .try_req(method, path, body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert!(
            v["value"].get("error").is_none(),
            "{method} {path}: {}",
            v["value"]
        );
        v["value"].clone()
    }

    pub fn session(&self, js: bool, profile: &Path) -> Session<'_> {
        let mut opts = json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                     format!("--user-data-dir={}", profile.display())],
        });
        if !js {
            opts["prefs"] = json!({"profile.managed_default_content_settings.javascript": 2});
        }
        let v = self.req(
            "POST",
            "/session",
            Some(json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": opts,
                "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
            }}})),
        );
        Session {
            d: self,
            id: v["sessionId"].as_str().expect("session id").to_string(),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dechunk(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some((len, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// A browser session of a [`Driver`] (closed when dropped).
pub struct Session<'a> {
    d: &'a Driver,
    id: String,
}

impl Session<'_> {
    pub fn go(&self, url: &str) {
        self.d.req(
            "POST",
            &format!("/session/{}/url", self.id),
            Some(json!({ "url": url })),
        );
    }

    pub fn js(&self, script: &str) -> Value {
        self.d.req(
            "POST",
            &format!("/session/{}/execute/sync", self.id),
            Some(json!({"script": script, "args": []})),
        )
    }

    pub fn log(&self, kind: &str) -> Vec<Value> {
        let v = self.d.req(
            "POST",
            &format!("/session/{}/se/log", self.id),
            Some(json!({ "type": kind })),
        );
        v.as_array().cloned().unwrap_or_default()
    }

    pub fn element(&self, css: &str) -> String {
        let v = self.d.req(
            "POST",
            &format!("/session/{}/element", self.id),
            Some(json!({"using": "css selector", "value": css})),
        );
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(|x| x.as_str())
            .expect("element id")
            .to_string()
    }

    pub fn elements(&self, css: &str) -> Vec<String> {
        let v = self.d.req(
            "POST",
            &format!("/session/{}/elements", self.id),
            Some(json!({"using": "css selector", "value": css})),
        );
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_object()?.values().next()?.as_str().map(String::from))
            .collect()
    }

    pub fn click(&self, element: &str) {
        self.d.req(
            "POST",
            &format!("/session/{}/element/{element}/click", self.id),
            Some(json!({})),
        );
    }

    pub fn element_get(&self, element: &str, what: &str) -> Value {
        self.d.req(
            "GET",
            &format!("/session/{}/element/{element}/{what}", self.id),
            None,
        )
    }

    /// The ids of the sections a person sees, in page order.
    pub fn shown(&self) -> Vec<String> {
        let v = self.js(
            "return Array.from(document.querySelectorAll('main section')).filter(function(s){return s.getClientRects().length>0}).map(function(s){return s.id})",
        );
        serde_json::from_value(v).expect("ids")
    }

    /// The console's errors and warnings so far (a CSP violation, a failed load, a script
    /// error).
    pub fn console_problems(&self) -> Vec<Value> {
        self.log("browser")
            .into_iter()
            .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
            .collect()
    }

    /// The URLs the page asked the network for, from the request of `from` on (the browser's
    /// own start page loads before it), leaving out what the browser asks for itself
    /// ([`browser_internal`]).
    pub fn page_requests(&self, from: &str) -> Vec<String> {
        self.log("performance")
            .into_iter()
            .filter_map(|e| serde_json::from_str::<Value>(e["message"].as_str()?).ok())
            .filter(|m| m["message"]["method"] == "Network.requestWillBeSent")
            .filter_map(|m| {
                m["message"]["params"]["request"]["url"]
                    .as_str()
                    .map(String::from)
            })
            .skip_while(|u| u != from)
            .filter(|u| !browser_internal(u))
            .collect()
    }

    /// A Chrome DevTools Protocol command (chromedriver's `goog/cdp/execute`): e.g.
    /// `Emulation.setEmulatedMedia` to show the page in the dark scheme.
    pub fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.d.req(
            "POST",
            &format!("/session/{}/goog/cdp/execute", self.id),
            Some(json!({ "cmd": cmd, "params": params })),
        )
    }

    pub fn screenshot(&self, to: &Path) {
        let v = self
            .d
            .req("GET", &format!("/session/{}/screenshot", self.id), None);
        let png = decode_base64(v.as_str().expect("base64"));
        std::fs::write(to, png).expect("screenshot");
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .d
            .try_req("DELETE", &format!("/session/{}", self.id), None);
    }
}

/// Standard base64 decoded (WebDriver screenshots).
pub fn decode_base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let bits: Vec<u8> = s.bytes().filter_map(val).collect();
    bits.chunks(4)
        .flat_map(|c| {
            let n = c.iter().fold(0u32, |a, &v| (a << 6) | u32::from(v)) << (6 * (4 - c.len()));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes[..c.len().saturating_sub(1)].to_vec()
        })
        .collect()
}

/// A request the browser makes for itself or that never leaves the page, not one the page
/// asks the network for: Chromium's own pages (`chrome://`, `chrome-untrusted://new-tab-page/…`,
/// which Chromium 148 and later load while the test's page loads), extensions, devtools,
/// `about:` and inline `data:` URLs. Everything else (`http`, `https`, `ws`, `ftp`, `file`,
/// any scheme not known here) counts as a request of the page.
pub fn browser_internal(url: &str) -> bool {
    let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
    scheme == "data"
        || scheme == "about"
        || scheme == "devtools"
        || scheme == "chrome"
        || scheme.starts_with("chrome-")
        || scheme == "edge"
}
