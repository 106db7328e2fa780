//! One session (`/session/ID`): the conversation as the HTML export renders it, the tree
//! beside it, branches, deep links, the context at an entry, tool calls, file edits, cost per
//! turn; a long branch in parts loaded on demand; a growing session live.
//!
//! Routes (a session is named by its id only, never by a path):
//! - `GET /session/ID`: the current branch (the session's leaf), its last entries;
//! - `GET /session/ID/entry/ENTRY`: the branch through ENTRY, around it (deep links);
//! - `GET /session/ID/leaf/LEAF[?at=K]`: the branch to LEAF (switching branch), the part
//!   ending before entry K of its path;
//! - `GET /session/ID/part?leaf=LEAF&at=K`: that part as a fragment (for `session.js`);
//! - `GET /session/ID/context/ENTRY[?before=K]`: the context the model saw at ENTRY;
//! - `GET /session/ID/calls[?offset=K]`, `GET /session/ID/edits`: tool calls, file edits;
//! - `GET /session/ID/events?leaf=AFTER&len=N[&version=V][&count=1]`: server-sent events of
//!   entries appended (or, `count=1`, how many), for pi's and other agents' sessions alike;
//! - `POST /session/ID/{rename,label,fork,trash}`: writes, with `--allow-writes` only.
mod context;
mod events;
mod load;
mod page;
mod tools;
mod write;

use crate::layout::{page as shell, Nav, Page};
use crate::{App, ServeError};
use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;

/// The session page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new()
        .route("/assets/conversation.css", get(conversation_css))
        .route("/session/{id}", get(current))
        .route("/session/{id}/entry/{entry}", get(at_entry))
        .route("/session/{id}/leaf/{leaf}", get(at_leaf))
        .route("/session/{id}/part", get(part))
        .route("/session/{id}/context/{entry}", get(context::context))
        .route("/session/{id}/calls", get(tools::calls))
        .route("/session/{id}/edits", get(tools::edits))
        .route("/session/{id}/events", get(events::events))
        .route("/session/{id}/rename", post(write::rename))
        .route("/session/{id}/label", post(write::label))
        .route("/session/{id}/fork", post(write::fork))
        .route("/session/{id}/trash", post(write::trash))
}

/// Runs `f` on the blocking pool (every handler that touches the catalog or a file).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServeError> + Send + 'static,
) -> Result<T, ServeError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServeError::Other(e.to_string()))?
}

/// The stylesheet of the conversation's entries: the HTML export's ([`arbor_view::entries_css`]).
async fn conversation_css() -> Response {
    static CSS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let css = CSS.get_or_init(arbor_view::entries_css).clone();
    (
        [
            (http::header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        css,
    )
        .into_response()
}

/// A part asked for: the index in the branch's path it ends before.
#[derive(Debug, serde::Deserialize)]
struct At {
    at: Option<usize>,
    leaf: Option<String>,
}

async fn current(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Html<String>, ServeError> {
    blocking(move || conversation(&app, &id, None, None, None)).await
}

async fn at_entry(
    State(app): State<Arc<App>>,
    Path((id, entry)): Path<(String, String)>,
) -> Result<Html<String>, ServeError> {
    blocking(move || conversation(&app, &id, None, Some(&entry), None)).await
}

async fn at_leaf(
    State(app): State<Arc<App>>,
    Path((id, leaf)): Path<(String, String)>,
    Query(q): Query<At>,
) -> Result<Html<String>, ServeError> {
    blocking(move || conversation(&app, &id, Some(&leaf), None, q.at)).await
}

/// The conversation page of session `sid`: the branch to `leaf`, or through `entry`, or the
/// current one; the part ending at `at`.
fn conversation(
    app: &App,
    sid: &str,
    leaf: Option<&str>,
    entry: Option<&str>,
    at: Option<usize>,
) -> Result<Html<String>, ServeError> {
    let l = load::load(app, sid)?;
    let _released = load::Releaser::new(&l);
    let doc = &l.doc;
    let target = entry.map(|e| load::entry(doc, e)).transpose()?;
    let leaf = match (leaf, target) {
        (Some(x), _) => Some(load::entry(doc, x)?),
        (None, Some(t)) => Some(arbor_view::agent::leaf_through(doc, t)),
        (None, None) => None,
    };
    let shown = page::Shown::new(&l, leaf, at, target);
    let writes = write::forms(app, sid, &l, &shown);
    let body = page::conversation(app, sid, &l, &shown, &writes);
    let attrs = page::body_attrs(sid, &l, &shown);
    let title = page::title(app, sid, &l, &shown);
    load::done(&l);
    Ok(shell(
        Page {
            title: &title,
            nav: Nav::Session,
            assets: &["conversation.css", "session.css", "session.js"],
            body_attrs: &attrs,
        },
        &body,
    ))
}

/// A part of a branch as a fragment: its entries and the link to the part before it.
async fn part(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<At>,
) -> Result<Html<String>, ServeError> {
    blocking(move || {
        let l = load::load(&app, &id)?;
        let _released = load::Releaser::new(&l);
        let leaf = q
            .leaf
            .as_deref()
            .map(|x| load::entry(&l.doc, x))
            .transpose()?;
        let shown = page::Shown::new(&l, leaf, q.at, None);
        let html = format!(
            "{}{}",
            page::earlier_link(&id, &l, &shown),
            page::entries_html(&app, &id, &l, &shown.path[shown.start..shown.end])
        );
        load::done(&l);
        Ok(Html(html))
    })
    .await
}
