//! A growing session, live (`GET /session/ID/events?leaf=AFTER&len=N[&version=V][&count=1]`):
//! server-sent events, one implementation for a pi or omp session file and for another
//! agent's session (Claude Code, Codex, opencode) alike. The session's source is watched as
//! `arbor mcp`'s resource subscriptions watch theirs, looked at a few times a second: a
//! file's [`arbor_store::FileStamp`], another agent's source's fingerprint
//! ([`arbor_index::foreign_fingerprint`]: every file it is read from, as the catalog's
//! refresh takes it). When it changed, the session is read again as the pages read it
//! ([`load::load_source`]: redacted as they are) and:
//! - a page showing the end of its branch gets the entries after `AFTER` (the entry it went
//!   on after: [`page::anchor`]) rendered as the page renders them (`entries`), and `AFTER`
//!   itself again when it changed in place (`version`, [`version`]: another agent's reply
//!   written over several lines is one entry that grows after it was shown), with the page's
//!   header (title, entry count) and the tree's outline drawn again (the new entries in it,
//!   the branch's end marked shown);
//! - a page showing an earlier part or a deep link (`count=1`) is told how many entries its
//!   branch grew by, with a link to the branch's end (`grew`);
//! - a new branch elsewhere or a rewrite (the file shorter, `AFTER` gone) is a `notice` with
//!   the page to go to.
use super::load::{self, Loaded, SourceStamp};
use super::{blocking, page};
use crate::{App, ServeError};
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use std::convert::Infallible;
use std::sync::Arc;

/// How often the source is looked at.
const POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// How often opencode's data directory is looked at: its fingerprint may be every file of
/// its older `storage/` (one `stat` each), not a file or two.
const POLL_OPENCODE: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Debug, serde::Deserialize)]
pub(super) struct Since {
    /// The entry the page goes on after (its `data-after`).
    leaf: String,
    /// The file's length the page read (0 for another agent's session).
    len: u64,
    /// That entry's version as the page shows it ([`version`]).
    version: Option<String>,
    /// `1`: the page shows an earlier part; only count what the branch grew by.
    count: Option<String>,
}

/// What a watcher of one page knows.
struct Watch {
    app: Arc<App>,
    sid: String,
    source: Arc<load::Source>,
    /// How often it is looked at.
    poll: std::time::Duration,
    /// How long the last look that read the session again took: the next look waits twice
    /// that at least ([`rest`]).
    last_read: std::time::Duration,
    seen: Option<SourceStamp>,
    /// The entry the page goes on after, and its version as the page shows it.
    after: String,
    version: Option<String>,
    len: u64,
    /// Only counting (a page not at the end of its branch), and how many were told.
    count: bool,
    counted: usize,
    /// A notice was sent: the page is to be reloaded, nothing more is sent.
    done: bool,
    /// Raised when the server stops.
    stopping: tokio::sync::watch::Receiver<bool>,
}

/// How long a watcher waits before its next look: `poll`, and at least twice what its last
/// look took to read the session again (`last_read`). A change of a 100 MB session is read
/// again and redacted whole (~350 ms of CPU), a 1 GB one's in seconds: a session written to
/// without pause would otherwise keep a core busy for as long as its page is open. So a live
/// page reads at most a third of the time (the redaction's looks use two threads), and its
/// new entries come later the larger the session is.
fn rest(poll: std::time::Duration, last_read: std::time::Duration) -> std::time::Duration {
    poll.max(last_read.saturating_mul(2))
}

/// One look at the session: what it says (if anything), the stamp read and the length.
struct Look {
    said: Option<Said>,
    stamp: SourceStamp,
    len: u64,
}

/// The version of entry `i` as shown: a keyed hash of its line (the key made once per run,
/// so that the page learns nothing of a line's text from it). Another agent's entries change
/// in place as their source grows (a reply written over several lines); pi's never do.
pub(super) fn version(l: &Loaded, i: usize) -> String {
    use std::hash::BuildHasher;
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let h = KEY
        .get_or_init(std::collections::hash_map::RandomState::new)
        .hash_one(l.doc.entry_line(i));
    format!("{h:016x}")
}

pub(super) async fn events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<Since>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>>, ServeError> {
    let (source, stamp) = {
        let app = app.clone();
        let id = id.clone();
        blocking(move || {
            let source = load::find(&app, &id)?;
            let stamp = source.stamp();
            Ok((source, stamp))
        })
        .await?
    };
    // A file already longer than the page read is looked at on the first tick; another
    // agent's source always is (its fingerprint does not say what the page read; the
    // document read is kept, so an unchanged source is not read again).
    let seen = match stamp {
        Some(SourceStamp::File(s)) if s.len == q.len => Some(SourceStamp::File(s)),
        _ => None,
    };
    let poll = match &source {
        load::Source::Foreign(r) if r.agent == arbor_agents::Agent::Opencode => POLL_OPENCODE,
        _ => POLL,
    };
    let w = Watch {
        stopping: app.stopping.subscribe(),
        app,
        sid: id,
        source: Arc::new(source),
        poll,
        last_read: std::time::Duration::ZERO,
        seen,
        after: q.leaf,
        version: q.version.filter(|v| !v.is_empty()),
        len: q.len,
        count: q.count.as_deref() == Some("1"),
        counted: 0,
        done: false,
    };
    let stream = futures_util::stream::unfold(w, |mut w| async move {
        loop {
            // The server stopping ends the stream (else it would hold the shutdown).
            tokio::select! {
                _ = tokio::time::sleep(rest(w.poll, w.last_read)) => {}
                _ = w.stopping.wait_for(|s| *s) => return None,
            }
            if w.done {
                continue;
            }
            if w.seen.is_some() {
                // A `stat` of each file of the source (opencode's `storage/`: many).
                let source = w.source.clone();
                let now = blocking(move || Ok(source.stamp())).await.ok().flatten();
                if now == w.seen {
                    w.last_read = std::time::Duration::ZERO;
                    continue;
                }
            }
            let (app, sid, source, after, version, len, count, counted) = (
                w.app.clone(),
                w.sid.clone(),
                w.source.clone(),
                w.after.clone(),
                w.version.clone(),
                w.len,
                w.count,
                w.counted,
            );
            let began = std::time::Instant::now();
            let got = blocking(move || {
                Ok(look(
                    &app,
                    &sid,
                    &source,
                    &after,
                    version.as_deref(),
                    len,
                    count,
                    counted,
                ))
            })
            .await;
            w.last_read = began.elapsed();
            let Ok(Some(look)) = got else {
                // Unreadable now (a line being written): looked at again on the next tick.
                continue;
            };
            w.seen = Some(look.stamp);
            w.len = look.len;
            let ev = match look.said {
                None => continue,
                Some(Said::Entries {
                    value,
                    after,
                    version,
                }) => {
                    w.after = after;
                    w.version = Some(version);
                    Event::default().event("entries").json_data(value)
                }
                Some(Said::Grew(n, v)) => {
                    w.counted = n;
                    Event::default().event("grew").json_data(v)
                }
                Some(Said::Notice(v)) => {
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

/// What changed in the session since the page's entry `after` (its version `version`) and
/// file length `len`; `count`: only how many entries the branch grew by (`counted` told
/// already). `None`: not readable now.
#[allow(clippy::too_many_arguments)]
fn look(
    app: &App,
    sid: &str,
    source: &load::Source,
    after: &str,
    version: Option<&str>,
    len: u64,
    count: bool,
    counted: usize,
) -> Option<Look> {
    let stamp = source.stamp()?;
    let l = load::load_source(app, source).ok()?;
    let _released = load::Releaser::new(&l);
    // What was read is what the stamp says (else looked at again). Another agent's source
    // changed while it was read is looked at again on the next tick (its stamp is older).
    if matches!(&stamp, SourceStamp::File(s) if s.len != l.len) {
        return None;
    }
    let said = what_changed(app, sid, &l, after, version, len, count, counted);
    load::done(&l);
    Some(Look {
        said,
        stamp,
        len: l.len,
    })
}

/// What a look says: the event to send.
enum Said {
    /// Entries to show, and the entry (with its version) the page goes on after then.
    Entries {
        value: serde_json::Value,
        after: String,
        version: String,
    },
    /// The branch grew by this many entries.
    Grew(usize, serde_json::Value),
    /// The page is to go elsewhere (reloaded, another branch): nothing more is sent.
    Notice(serde_json::Value),
}

/// What changed in `l` (the session read again) for a page going on after `after` (shown
/// at version `shown_version`), having read `len` bytes; `count`: only how many entries its
/// branch grew by (`counted` told already).
#[allow(clippy::too_many_arguments)]
fn what_changed(
    app: &App,
    sid: &str,
    l: &Loaded,
    after: &str,
    shown_version: Option<&str>,
    len: u64,
    count: bool,
    counted: usize,
) -> Option<Said> {
    let doc = &l.doc;
    let notice = |text: &str, href: String| {
        Some(Said::Notice(
            serde_json::json!({ "text": text, "href": href }),
        ))
    };
    let base = format!("/session/{}", page::seg(sid));
    if l.len < len {
        return notice("The session was rewritten.", base);
    }
    let Some(ai) = doc.index().get(after) else {
        return notice("The shown branch is gone from the session.", base);
    };
    let cur = doc.index().leaf?;
    let path_now = l.path_to(cur);
    let to_end = format!("{base}/leaf/{}", page::seg(&page::id_of(l, cur)));
    let Some(pos) = path_now.iter().position(|&i| i == ai) else {
        return notice("The session went on in another branch.", to_end);
    };
    // The new entries: up to the branch's anchor (another agent's title comes after it).
    let end = page::anchor(l, &path_now).unwrap_or(pos).max(pos);
    let new = end - pos;
    if count {
        return (new != counted).then(|| {
            Said::Grew(
                new,
                serde_json::json!({
                    "count": new,
                    "text": format!("{new} new {}", if new == 1 { "entry" } else { "entries" }),
                    "href": to_end,
                }),
            )
        });
    }
    let changed = shown_version.is_some_and(|v| v != version(l, ai));
    if new == 0 && !changed {
        return None;
    }
    // From the anchor itself when it changed in place; to the branch's end (a title after
    // the anchor is sent again: the page drops what it showed after its anchor).
    let from = if changed { pos } else { pos + 1 };
    let html = page::entries_html(app, sid, l, &path_now[from..]);
    // The header (title, entry count) and the tree beside it, drawn again: the new entries in
    // the tree, the branch's end marked shown.
    let now_shown = page::Shown::new(l, Some(cur), None, None);
    let head = page::head_html(app, sid, l, &now_shown, "conv");
    let outline = page::outline_html(app, sid, l, &now_shown);
    let anchor = path_now[end];
    let after_now = page::id_of(l, anchor);
    let version_now = version(l, anchor);
    Some(Said::Entries {
        value: serde_json::json!({
            "html": html,
            "head": head,
            "outline": outline,
            "from": after,
            "replace": changed,
            "after": after_now,
            "version": version_now,
            "leaf": page::id_of(l, cur),
            "len": l.len,
        }),
        after: after_now,
        version: version_now,
    })
}

#[cfg(test)]
mod tests {
    use super::rest;
    use std::time::Duration;

    #[test]
    fn a_watcher_rests_twice_what_reading_the_session_again_took() {
        let poll = Duration::from_millis(250);
        assert_eq!(rest(poll, Duration::ZERO), poll, "nothing read: the poll");
        assert_eq!(
            rest(poll, Duration::from_millis(50)),
            poll,
            "a small session"
        );
        assert_eq!(
            rest(poll, Duration::from_millis(400)),
            Duration::from_millis(800),
            "a 100 MB session read again"
        );
        assert_eq!(rest(poll, Duration::from_secs(3)), Duration::from_secs(6));
    }
}
