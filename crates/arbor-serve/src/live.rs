//! Live updates of the lists: `GET /events/sessions?FILTERS` (server-sent events). The
//! server's own watcher (`arbor_index::watch`, started in [`crate::App::new`] unless
//! `--no-watch`) keeps the catalog fresh and says when a refresh changed something; each
//! stream then lists its view again (from the catalog, which the watcher vouches for: no file
//! is looked at) and sends the rows that are new or changed. Without a watcher of its own (or
//! while another process's watcher serves the catalog) a stream lists its view every
//! [`POLL`], as the page would on a reload.
//!
//! Events: `ready` once the stream has taken its first look (a page that shows rows from
//! then on misses nothing); `session` with `{"key": ID, "modified": MS, "html": ROW}` for
//! a new or changed row (the row as the page renders it, redacted and escaped); `problem` with
//! a message when the view could not be listed.
use crate::sessions::{row_html, rows, Filters};
use crate::App;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How often a stream looks again when no watcher of the server's own tells it of changes.
pub const POLL: Duration = Duration::from_secs(2);

/// The most rows one look sends (a larger change: the first ones, newest first).
const MAX_SENT: usize = 200;

/// The event streams' routes.
pub fn routes() -> axum::Router<Arc<App>> {
    axum::Router::new().route("/events/sessions", get(sessions))
}

/// Starts the server's watcher of `catalog` ([`arbor_index::watch::spawn`], the one `arbor
/// mcp` starts): `watching` is set once it vouches; `changes` goes up at each refresh that
/// changed a file.
pub(crate) fn watch(
    catalog: std::path::PathBuf,
    loc: arbor_store::locate::Locator,
    changes: tokio::sync::watch::Sender<u64>,
    watching: Arc<std::sync::atomic::AtomicBool>,
) {
    let off = watching.clone();
    let spawned = arbor_index::watch::spawn(
        catalog,
        loc,
        "arbor-serve-watch",
        move |ev| match ev {
            arbor_index::watch::WatchEvent::Ready(_) => {
                watching.store(true, Ordering::SeqCst);
                changes.send_modify(|n| *n += 1);
            }
            arbor_index::watch::WatchEvent::Refreshed(s) => {
                if s.unchanged != s.files || s.removed > 0 {
                    changes.send_modify(|n| *n += 1);
                }
            }
            arbor_index::watch::WatchEvent::NotVouched(_) => {
                watching.store(false, Ordering::SeqCst);
            }
        },
        move |e| {
            off.store(false, Ordering::SeqCst);
            eprintln!("arbor serve: the lists look for changes every few seconds: {e}");
        },
    );
    if let Err(e) = spawned {
        eprintln!("arbor serve: the lists look for changes every few seconds: {e}");
    }
}

/// What a row shows that may change (a change is sent).
type Seen = (i64, u64, Option<u64>, u64, String);

fn seen_of(r: &crate::sessions::Row) -> Seen {
    (
        if r.modified.is_finite() {
            r.modified as i64
        } else {
            0
        },
        r.messages,
        r.branches,
        r.cost.to_bits(),
        r.title.clone(),
    )
}

/// The view's rows now: those with an id, by id.
fn look(app: &App, f: &Filters) -> Result<Vec<crate::sessions::Row>, crate::ServeError> {
    Ok(rows(app, f)?
        .0
        .into_iter()
        .filter(|r| r.id.is_some())
        .collect())
}

struct Stream {
    app: Arc<App>,
    f: Arc<Filters>,
    seen: Option<HashMap<String, Seen>>,
    rx: tokio::sync::watch::Receiver<u64>,
    queue: std::collections::VecDeque<Event>,
}

async fn sessions(
    State(app): State<Arc<App>>,
    Query(f): Query<Filters>,
) -> Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rx = app.changes.subscribe();
    let st = Stream {
        app,
        f: Arc::new(f),
        seen: None,
        rx,
        queue: Default::default(),
    };
    let stream = futures_util::stream::unfold(st, |mut st| async move {
        loop {
            if let Some(ev) = st.queue.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.seen.is_some() {
                // Wait for the watcher's word, or look again after a while.
                let wait = if st.app.watching.load(Ordering::SeqCst) {
                    Duration::from_secs(3600)
                } else {
                    POLL
                };
                // The sender gone, or the server stopping: the stream ends (else it would
                // hold the shutdown).
                let mut stopping = st.app.stopping.subscribe();
                tokio::select! {
                    r = tokio::time::timeout(wait, st.rx.changed()) => {
                        if let Ok(Err(_)) = r {
                            return None;
                        }
                    }
                    _ = stopping.wait_for(|s| *s) => return None,
                }
                st.rx.borrow_and_update();
            }
            let (app, f) = (st.app.clone(), st.f.clone());
            let now = match tokio::task::spawn_blocking(move || look(&app, &f)).await {
                Ok(Ok(rows)) => rows,
                Ok(Err(e)) => {
                    st.queue
                        .push_back(Event::default().event("problem").data(e.to_string()));
                    continue;
                }
                Err(_) => return None,
            };
            let first = st.seen.is_none();
            let seen = st.seen.get_or_insert_with(HashMap::new);
            let mut sent = 0;
            for r in &now {
                let Some(id) = &r.id else { continue };
                let s = seen_of(r);
                if seen.get(id) == Some(&s) {
                    continue;
                }
                seen.insert(id.clone(), s.clone());
                if first || sent >= MAX_SENT {
                    continue;
                }
                sent += 1;
                let data = serde_json::json!({
                    "key": id,
                    "modified": s.0,
                    "html": row_html(&st.app, r),
                });
                st.queue
                    .push_back(Event::default().event("session").data(data.to_string()));
            }
            if first {
                st.queue
                    .push_back(Event::default().event("ready").data("ok"));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(20)))
}
