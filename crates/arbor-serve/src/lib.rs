//! `arbor serve`: the session store in a web browser.
//!
//! A local web app over the same catalog as `arbor ls` and `arbor search` (or, with
//! [`Options::from`], a shared PostgreSQL store, read-only): the sessions (this project, every
//! project, every agent; filters; search), one session (the conversation as the HTML export
//! renders it, its tree beside it, branches, deep links, the context at an entry, tool calls,
//! file edits, cost per turn; large sessions rendered incrementally), usage charts made on the
//! server as SVG, and live updates by server-sent events. One binary: the stylesheet and the
//! one small script are embedded ([`assets`]). Writes only with [`Options::allow_writes`],
//! through the CLI's writers and locks, with CSRF protection.
//!
//! It is a face over the libraries, as the CLI, the terminal browser and `arbor mcp` are: it
//! computes nothing of its own about sessions.
//!
//! ```no_run
//! # fn main() -> Result<(), arbor_serve::ServeError> {
//! let opts = arbor_serve::Options::default();
//! let listen = arbor_serve::Listen::default(); // 127.0.0.1:8777
//! // Served until the future resolves (the CLI waits for Ctrl-C or SIGTERM).
//! let stop = std::future::pending::<()>();
//! arbor_serve::serve(opts, listen, |url| eprintln!("arbor serve: {url}"), stop)?;
//! # Ok(()) }
//! ```
pub mod app;
pub mod assets;
mod error;
pub mod layout;
pub(crate) mod live;
pub mod security;
mod session;
mod sessions;
pub mod team;
mod usage;

pub use app::{App, Listen, Options};
pub use error::ServeError;

use std::sync::Arc;

/// A query parameter's value, trimmed; `None` when absent or blank (an empty form field is no
/// filter). Every page reads its query through it.
pub(crate) fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// A `since` or `until` of a page's query (the parameter `name`), in ms: a date (its start),
/// a date-time, or a span back from `now` (`30m`, `12h`, `7d`, `2w`), read as `arbor stats
/// --since/--until` and `arbor mcp` read them ([`arbor_core::time::since`]); a 400 naming it
/// otherwise.
pub(crate) fn time_given(
    name: &str,
    v: &Option<String>,
    now: f64,
) -> Result<Option<f64>, ServeError> {
    given(v)
        .map(|s| {
            arbor_core::time::since(s)
                .map(|t| t.at(now))
                .map_err(|e| ServeError::BadRequest(format!("{name}: {e}")))
        })
        .transpose()
}

/// The whole app's routes over `app`, with the security layers (Host check, token, headers).
pub fn router(app: Arc<App>) -> axum::Router {
    let pages = axum::Router::new()
        .merge(assets::routes())
        .merge(sessions::routes())
        .merge(session::routes())
        .merge(usage::routes())
        .merge(live::routes())
        // Any other address: the error page, not an empty answer.
        .fallback(|uri: http::Uri| async move { ServeError::NoPage(uri.path().to_string()) });
    security::wrap(pages, app.clone()).with_state(app)
}

/// Serves on `listener` until `stop` resolves.
pub async fn serve_listener(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let stopping = app.stopping.clone();
    let stop = async move {
        stop.await;
        // The event streams end, so that the open pages do not hold the shutdown.
        stopping.send_replace(true);
    };
    axum::serve(listener, router(app))
        .with_graceful_shutdown(stop)
        .await?;
    Ok(())
}

/// Opens the catalog (or the shared store), listens on `listen`'s address, calls `ready`
/// with the app's URL, and serves until `stop` resolves (the CLI's: Ctrl-C or SIGTERM).
pub fn serve(
    opts: Options,
    listen: Listen,
    ready: impl FnOnce(&str),
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let checked = listen.check()?;
    // The secret scanner compiled while the catalog opens, not on the first session page.
    let scanner = opts
        .redact
        .then(|| std::thread::spawn(arbor_view::secrets::prepare));
    let app = Arc::new(App::new(opts, &checked)?);
    if let Some(s) = scanner {
        let _ = s.join();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(checked.addr).await?;
        let local = listener.local_addr()?;
        let mut stop = Box::pin(stop);
        if arbor_store::listen::armed(&mut stop).await {
            return Ok(());
        }
        ready(&format!("http://{local}/"));
        serve_listener(app, listener, stop).await
    })
}
