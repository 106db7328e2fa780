//! Writes (`--allow-writes` only): rename, label an entry, delete to the trash, fork at an
//! entry.
use super::{load::Loaded, page::Shown};
use crate::{App, ServeError};
use axum::extract::{Form, Path, State};
use axum::response::Html;
use std::collections::HashMap;
use std::sync::Arc;

/// The write forms of a session page (none without `--allow-writes`).
pub fn forms(app: &App, _sid: &str, _l: &Loaded, _shown: &Shown) -> String {
    if !app.opts.allow_writes {
        return String::new();
    }
    String::new()
}

type Fields = HashMap<String, String>;

async fn refuse(
    app: &App,
    headers: &http::HeaderMap,
    f: &Fields,
) -> Result<Html<String>, ServeError> {
    crate::security::check_write(app, headers, f.get("csrf").map_or("", String::as_str))?;
    Err(ServeError::Other("not implemented yet".into()))
}

pub(super) async fn rename(
    State(app): State<Arc<App>>,
    Path(_id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    refuse(&app, &headers, &f).await
}
pub(super) async fn label(
    State(app): State<Arc<App>>,
    Path(_id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    refuse(&app, &headers, &f).await
}
pub(super) async fn trash(
    State(app): State<Arc<App>>,
    Path(_id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    refuse(&app, &headers, &f).await
}
pub(super) async fn fork(
    State(app): State<Arc<App>>,
    Path(_id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    refuse(&app, &headers, &f).await
}
