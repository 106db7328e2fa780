//! What keeps others out and pages inert: the Host check (against DNS rebinding), the bearer
//! token of `--allow-remote`, and the headers on every answer (a strict Content-Security-Policy:
//! no inline script or style, no request to anything but this server; no framing; no sniffing;
//! no referrer).
use crate::App;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The Content-Security-Policy of every page.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// `pages` behind the security layers.
pub fn wrap(pages: axum::Router<Arc<App>>, app: Arc<App>) -> axum::Router<Arc<App>> {
    pages.layer(axum::middleware::from_fn_with_state(app, guard))
}

/// The cookie that carries the token of `--token-file` for a browser (set by visiting
/// `/?token=TOKEN` once).
pub const TOKEN_COOKIE: &str = "arbor_token";

async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut res = if !app.remote && !loopback_host(&req) {
        (
            http::StatusCode::FORBIDDEN,
            "403 Forbidden: this arbor server answers only requests addressed to a loopback host\n",
        )
            .into_response()
    } else {
        match &app.token {
            None => next.run(req).await,
            Some(token) => match token_of(&req, token) {
                Given::Header | Given::Cookie => next.run(req).await,
                Given::Query => let_in(&req, token),
                Given::None => unauthorized(),
            },
        }
    };
    let h = res.headers_mut();
    let set = |h: &mut http::HeaderMap, k: http::HeaderName, v: &'static str| {
        h.insert(k, http::HeaderValue::from_static(v));
    };
    set(h, http::header::CONTENT_SECURITY_POLICY, CSP);
    set(h, http::header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, http::header::X_FRAME_OPTIONS, "DENY");
    set(h, http::header::REFERRER_POLICY, "no-referrer");
    res
}

/// How a request carries the token of `--token-file`.
#[derive(Debug, PartialEq, Eq)]
enum Given {
    /// `Authorization: Bearer TOKEN`.
    Header,
    /// The cookie [`TOKEN_COOKIE`].
    Cookie,
    /// `?token=TOKEN` (a person's first visit, from the link they were given).
    Query,
    /// Not at all, or a wrong one.
    None,
}

/// How `req` carries `token` (each candidate compared in constant time).
fn token_of(req: &Request, token: &[u8]) -> Given {
    let headers = req.headers();
    if arbor_store::listen::bearer(
        headers
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes()),
        token,
    ) {
        return Given::Header;
    }
    let want = cookie_value(token);
    for v in headers.get_all(http::header::COOKIE) {
        for part in v.as_bytes().split(|b| *b == b';') {
            let part = part.trim_ascii();
            if let Some(given) = part
                .strip_prefix(TOKEN_COOKIE.as_bytes())
                .and_then(|r| r.strip_prefix(b"="))
            {
                if arbor_store::listen::same_token(given, want.as_bytes()) {
                    return Given::Cookie;
                }
            }
        }
    }
    let query = req.uri().query().unwrap_or("");
    for pair in query.split('&') {
        if let Some(given) = pair.strip_prefix("token=") {
            if arbor_store::listen::same_token(given.as_bytes(), token) {
                return Given::Query;
            }
        }
    }
    Given::None
}

/// The cookie's value for `token`: its bytes in hex (any token is then a valid cookie
/// value).
fn cookie_value(token: &[u8]) -> String {
    token.iter().map(|b| format!("{b:02x}")).collect()
}

/// The answer to `?token=TOKEN`: the cookie set (`HttpOnly`: no script reads it;
/// `SameSite=Strict`: no other site's page sends it), and the same address without the
/// token (so that it stays out of the history and the address bar).
fn let_in(req: &Request, token: &[u8]) -> Response {
    let path = req.uri().path();
    let rest: Vec<&str> = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("token="))
        .collect();
    let to = if rest.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", rest.join("&"))
    };
    let cookie = format!(
        "{TOKEN_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
        cookie_value(token)
    );
    let mut res = (http::StatusCode::SEE_OTHER, "303 See Other: signed in\n").into_response();
    let h = res.headers_mut();
    if let Ok(v) = http::HeaderValue::from_str(&to) {
        h.insert(http::header::LOCATION, v);
    }
    if let Ok(v) = http::HeaderValue::from_str(&cookie) {
        h.insert(http::header::SET_COOKIE, v);
    }
    h.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    res
}

/// The 401 answer.
fn unauthorized() -> Response {
    let mut res = (
        http::StatusCode::UNAUTHORIZED,
        "401 Unauthorized: this arbor server needs its token: open the link with ?token=TOKEN once, or send Authorization: Bearer TOKEN\n",
    )
        .into_response();
    res.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    res
}

/// Whether the request's Host is a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any
/// port): a page of another site that rebinds its name to 127.0.0.1 sends its own name.
fn loopback_host(req: &Request) -> bool {
    let Some(host) = req
        .headers()
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
    else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Checks a write request (a form `POST`): writes are allowed (`--allow-writes`), the
/// request comes from this app's own pages (`Sec-Fetch-Site: same-origin` when the browser
/// sends it, and an `Origin`, when sent, naming the request's own Host), and `token` (the
/// form's `csrf` field) is this run's CSRF token.
pub fn check_write(
    app: &App,
    headers: &http::HeaderMap,
    token: &str,
) -> Result<(), crate::ServeError> {
    use crate::ServeError::Forbidden;
    if !app.opts.allow_writes {
        return Err(Forbidden(
            "writes are off: start the server with --allow-writes to rename, label, delete or fork"
                .into(),
        ));
    }
    let header = |k: &str| headers.get(k).and_then(|v| v.to_str().ok());
    if let Some(site) = header("sec-fetch-site") {
        if site != "same-origin" {
            return Err(Forbidden(format!(
                "a write from another site ({site}) is refused"
            )));
        }
    }
    if let Some(origin) = header("origin") {
        let host = header("host").unwrap_or("");
        let bare = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .unwrap_or("");
        if bare != host {
            return Err(Forbidden(format!(
                "a write from another origin ({origin}) is refused"
            )));
        }
    }
    if !arbor_store::listen::same_token(token.as_bytes(), app.csrf.as_bytes()) {
        return Err(Forbidden(
            "the form's CSRF token is missing or stale (reload the page)".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(allow_writes: bool) -> (tempfile::TempDir, App) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let opts = crate::Options {
            catalog: Some(tmp.path().join("cat.db")),
            agent_dir: Some(tmp.path().join("agent")),
            allow_writes,
            watch: false,
            ..crate::Options::default()
        };
        let checked = crate::Listen::default().check().expect("loopback");
        let app = App::new(opts, &checked).expect("app");
        (tmp, app)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, http::HeaderValue::from_str(v).expect("value"));
        }
        h
    }

    #[test]
    fn a_write_needs_writes_on_this_runs_token_and_the_same_origin() {
        let (_t, app) = app(true);
        let csrf = app.csrf.clone();
        assert_eq!(csrf.len(), 32, "16 random bytes in hex");
        let own = headers(&[
            ("host", "127.0.0.1:8777"),
            ("origin", "http://127.0.0.1:8777"),
            ("sec-fetch-site", "same-origin"),
        ]);
        assert!(check_write(&app, &own, &csrf).is_ok());
        // No token, a wrong one, one a byte short.
        for bad in ["", "0", &csrf[..31], &format!("{csrf}0")] {
            let e = check_write(&app, &own, bad).expect_err("refused");
            assert!(matches!(e, crate::ServeError::Forbidden(_)), "{e}");
        }
        // Another origin, another site, even with the right token.
        for h in [
            headers(&[
                ("host", "127.0.0.1:8777"),
                ("origin", "http://evil.example"),
            ]),
            headers(&[
                ("host", "127.0.0.1:8777"),
                ("origin", "http://127.0.0.1:9999"),
            ]),
            headers(&[("host", "127.0.0.1:8777"), ("origin", "null")]),
            headers(&[("host", "127.0.0.1:8777"), ("sec-fetch-site", "cross-site")]),
            headers(&[("host", "127.0.0.1:8777"), ("sec-fetch-site", "same-site")]),
        ] {
            let e = check_write(&app, &h, &csrf).expect_err("refused");
            assert!(e.to_string().contains("is refused"), "{e}");
            assert_eq!(
                axum::response::IntoResponse::into_response(e).status(),
                http::StatusCode::FORBIDDEN
            );
        }
    }

    #[test]
    fn writes_are_off_unless_allowed() {
        let (_t, app) = app(false);
        let csrf = app.csrf.clone();
        let e =
            check_write(&app, &headers(&[("host", "127.0.0.1:8777")]), &csrf).expect_err("refused");
        assert!(e.to_string().contains("--allow-writes"), "{e}");
    }

    #[test]
    fn each_run_has_its_own_csrf_token() {
        let (_a, a) = app(true);
        let (_b, b) = app(true);
        assert_ne!(a.csrf, b.csrf);
    }
}
