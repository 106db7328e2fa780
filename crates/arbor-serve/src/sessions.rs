//! The sessions page (`/`): this project / all projects / all agents, newest first, filters,
//! search, paging; live: new sessions appear.
use crate::layout::{esc, simple, Nav};
use crate::{App, ServeError};
use axum::extract::State;
use axum::response::Html;
use axum::routing::get;
use std::sync::Arc;

/// The sessions page's routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new().route("/", get(index))
}

async fn index(State(app): State<Arc<App>>) -> Result<Html<String>, ServeError> {
    tokio::task::spawn_blocking(move || render(&app))
        .await
        .map_err(|e| ServeError::Other(e.to_string()))?
}

fn render(app: &App) -> Result<Html<String>, ServeError> {
    let dirs = app
        .loc
        .project_dirs(app.opts.scope())
        .map_err(|e| ServeError::Other(format!("session directories: {e}")))?;
    let listed = {
        let mut cat = app.catalog()?;
        arbor_index::fresh::listing(
            &mut cat,
            &dirs,
            arbor_index::RefreshOptions::default(),
            &mut arbor_index::fresh::Quiet,
        )?
        .0
    };
    let mut rows = String::new();
    for l in listed.iter().take(50) {
        rows.push_str(&format!(
            "<tr><td><a href=\"/session/{}\">{}</a></td><td class=\"muted\">{}</td></tr>\n",
            esc(l.session_id.as_deref().unwrap_or("")),
            esc(&app.redact(&l.display_title())),
            esc(&l.info.cwd),
        ));
    }
    Ok(simple(
        "Sessions",
        Nav::Sessions,
        &format!("<main><h1>Sessions</h1><table>{rows}</table></main>"),
    ))
}
