//! A growing session, live (`GET /session/ID/events?leaf=LEAF&len=N`): server-sent events.
//! The session's file is watched as `arbor mcp`'s resource subscriptions watch theirs (its
//! length and modification time, looked at a few times a second); when it changed, the
//! entries appended to the shown branch are sent rendered as the page renders them
//! (`entries`); a new branch elsewhere or a rewrite (the file shorter, the shown leaf gone)
//! is a `notice` with the page to reload.
use super::{blocking, load, page};
use crate::{App, ServeError};
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;

/// How often the file is looked at.
const POLL: std::time::Duration = std::time::Duration::from_millis(250);

#[derive(Debug, serde::Deserialize)]
pub(super) struct Since {
    leaf: String,
    len: u64,
}

/// What a watcher of one page knows.
struct Watch {
    app: Arc<App>,
    sid: String,
    path: PathBuf,
    seen: Option<arbor_store::FileStamp>,
    leaf: String,
    len: u64,
    /// A notice was sent: the page is to be reloaded, nothing more is sent.
    done: bool,
}

/// What changed, as the event to send.
enum Change {
    Entries(serde_json::Value),
    Notice(serde_json::Value),
}

pub(super) async fn events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<Since>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>>, ServeError> {
    let path = {
        let app = app.clone();
        let id = id.clone();
        blocking(move || load::resolve(&app, &id)).await?
    };
    let w = Watch {
        seen: arbor_store::FileStamp::of(&path),
        app,
        sid: id,
        path,
        leaf: q.leaf,
        len: q.len,
        done: false,
    };
    // A file already longer than the page read: looked at on the first tick.
    let w = Watch {
        seen: w.seen.filter(|s| s.len == w.len),
        ..w
    };
    let stream = futures_util::stream::unfold(w, |mut w| async move {
        loop {
            tokio::time::sleep(POLL).await;
            if w.done {
                continue;
            }
            let now = arbor_store::FileStamp::of(&w.path);
            if now == w.seen {
                continue;
            }
            let (app, sid, path, leaf, len) = (
                w.app.clone(),
                w.sid.clone(),
                w.path.clone(),
                w.leaf.clone(),
                w.len,
            );
            let got = blocking(move || Ok(change(&app, &sid, &path, &leaf, len))).await;
            let Ok(Some((c, stamp, new_leaf, new_len))) = got else {
                // Unreadable now (a line being written): looked at again on the next tick.
                continue;
            };
            w.seen = Some(stamp);
            w.leaf = new_leaf;
            w.len = new_len;
            let ev = match c {
                None => continue,
                Some(Change::Entries(v)) => Event::default().event("entries").json_data(v),
                Some(Change::Notice(v)) => {
                    w.done = true;
                    Event::default().event("notice").json_data(v)
                }
            };
            if let Ok(ev) = ev {
                return Some((Ok(ev), w));
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// What changed in the file since the page's leaf `leaf` and length `len`: the change (if
/// any), the file's stamp read, the leaf and length now shown. `None`: not readable now.
#[allow(clippy::type_complexity)]
fn change(
    app: &App,
    sid: &str,
    path: &std::path::Path,
    leaf: &str,
    len: u64,
) -> Option<(Option<Change>, arbor_store::FileStamp, String, u64)> {
    let stamp = arbor_store::FileStamp::of(path)?;
    let l = load::load_path(app, path).ok()?;
    let _released = load::Releaser::new(&l);
    // What was read is what the stamp says (else looked at again).
    if l.len != stamp.len {
        return None;
    }
    let doc = &l.doc;
    let reload = |text: &str, href: String| {
        Some(Change::Notice(
            serde_json::json!({ "text": text, "href": href }),
        ))
    };
    let base = format!("/session/{}", page::seg(sid));
    let out = match doc.index().get(leaf) {
        _ if l.len < len => reload("The session was rewritten.", base),
        None => reload("The shown branch is gone from the session.", base),
        Some(li) => {
            let cur = doc.index().leaf;
            let path_now = cur
                .map(|c| doc.index().path(doc, c).entries)
                .unwrap_or_default();
            match path_now.iter().position(|&i| i == li) {
                Some(pos) if pos + 1 < path_now.len() => {
                    let new = &path_now[pos + 1..];
                    let html = page::entries_html(app, sid, &l, new);
                    let last = page::id_of(&l, new[new.len() - 1]);
                    load::done(&l);
                    return Some((
                        Some(Change::Entries(
                            serde_json::json!({ "html": html, "leaf": last, "len": l.len }),
                        )),
                        stamp,
                        last,
                        l.len,
                    ));
                }
                Some(_) => None,
                None => match cur {
                    Some(c) => reload(
                        "The session went on in another branch.",
                        format!("{base}/leaf/{}", page::seg(&page::id_of(&l, c))),
                    ),
                    None => None,
                },
            }
        }
    };
    load::done(&l);
    Some((out, stamp, leaf.to_string(), l.len))
}
