//! One session (`/session/ID`): the conversation as the HTML export renders it, the tree
//! beside it, branches, deep links, the context at an entry, tool calls, file edits, cost per
//! turn.
use crate::App;
use std::sync::Arc;

/// The session page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new()
}
