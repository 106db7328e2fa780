//! Live updates: server-sent events for a growing session and for new sessions in the lists.
use crate::App;
use std::sync::Arc;

/// The event streams' routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new()
}
