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

async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    if !app.remote && !loopback_host(&req) {
        return (
            http::StatusCode::FORBIDDEN,
            "403 Forbidden: this arbor server answers only requests addressed to a loopback host\n",
        )
            .into_response();
    }
    let mut res = next.run(req).await;
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
    if !same_token(token.as_bytes(), app.csrf.as_bytes()) {
        return Err(Forbidden(
            "the form's CSRF token is missing or stale (reload the page)".into(),
        ));
    }
    Ok(())
}

/// Whether `given` is `want`, in time that does not depend on where they differ.
fn same_token(given: &[u8], want: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != want.len());
    for (k, w) in want.iter().enumerate() {
        let g = given.get(k).copied().unwrap_or(!*w);
        diff |= g ^ w;
    }
    std::hint::black_box(diff) == 0
}
