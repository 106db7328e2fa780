//! The embedded stylesheets and scripts (one binary, no build step), served under
//! `/assets/NAME`. Each page names the ones it uses ([`crate::layout::Page`]); pages work
//! without their scripts (links and forms), which only add (live updates, the outline, search
//! as you type).
use crate::App;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

/// Every asset: its name (served at `/assets/NAME`) and its text. A page's own stylesheet
/// and script are named after the page.
pub const FILES: &[(&str, &str)] = &[
    ("base.css", include_str!("../assets/base.css")),
    ("usage.css", include_str!("../assets/usage.css")),
    ("usage.js", include_str!("../assets/usage.js")),
    ("session.css", include_str!("../assets/session.css")),
    ("session.js", include_str!("../assets/session.js")),
    ("sessions.css", include_str!("../assets/sessions.css")),
    ("sessions.js", include_str!("../assets/sessions.js")),
];

/// The assets' route.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new().route("/assets/{name}", get(asset))
}

async fn asset(Path(name): Path<String>) -> Response {
    let Some((_, body)) = FILES.iter().find(|(n, _)| *n == name) else {
        return (http::StatusCode::NOT_FOUND, "no such asset\n").into_response();
    };
    let kind = if name.ends_with(".css") {
        "text/css; charset=utf-8"
    } else if name.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else if name.ends_with(".svg") {
        "image/svg+xml"
    } else {
        "text/plain; charset=utf-8"
    };
    (
        [
            (http::header::CONTENT_TYPE, kind),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        *body,
    )
        .into_response()
}
