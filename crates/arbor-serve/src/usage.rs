//! The usage page (`/usage`): tokens and cost charts (server-made SVG), tables, CSV/JSON.
use crate::App;
use std::sync::Arc;

/// The usage page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new()
}
