//! A session's tool calls (`/session/ID/calls`) and the files its tools wrote or edited
//! (`/session/ID/edits`), as `arbor mcp`'s `get_tool_calls` and `get_file_edits` list them
//! ([`arbor_view::agent::tool_calls`], [`arbor_view::agent::file_edits`]).
use super::{blocking, load, page};
use crate::layout::{esc, page as shell, Nav, Page};
use crate::{App, ServeError};
use axum::extract::{Path, Query, State};
use axum::response::Html;
use std::fmt::Write as _;
use std::sync::Arc;

/// Calls per page.
const PER_PAGE: usize = 200;

#[derive(Debug, serde::Deserialize)]
pub(super) struct Offset {
    offset: Option<usize>,
}

fn wrap(
    app: &App,
    sid: &str,
    l: &load::Loaded,
    tab: &str,
    inner: &str,
    title: &str,
) -> Html<String> {
    let shown = page::Shown::new(l, None, None, None);
    shell(
        Page {
            title,
            nav: Nav::Session,
            assets: &["conversation.css", "session.css"],
            body_attrs: "",
        },
        &format!(
            "<main class=\"session\">{}{inner}</main>",
            page::head_html(app, sid, l, &shown, tab)
        ),
    )
}

fn entry_link(sid: &str, id: &str) -> String {
    format!(
        "<a href=\"/session/{s}/entry/{e}#{e}\">{}</a>",
        esc(id),
        s = page::seg(sid),
        e = page::seg(id)
    )
}

fn outcome(error: Option<bool>) -> &'static str {
    match error {
        Some(true) => "<span class=\"err\">error</span>",
        Some(false) => "ok",
        None => "<span class=\"muted\">no result</span>",
    }
}

pub(super) async fn calls(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(q): Query<Offset>,
) -> Result<Html<String>, ServeError> {
    blocking(move || {
        let l = load::load(&app, &id)?;
        let _released = load::Releaser::new(&l);
        let c = arbor_view::agent::tool_calls(
            &l.doc,
            &arbor_view::agent::CallsOpts {
                offset: q.offset.unwrap_or(0),
                limit: PER_PAGE,
                args_max: 300,
                ..Default::default()
            },
        );
        let mut s = format!(
            "<section class=\"calls\"><h2>Tool calls</h2><p class=\"muted\">{} calls</p><table><tr><th>entry</th><th>tool</th><th>arguments</th><th>result</th><th>branch</th></tr>",
            c.total
        );
        for t in &c.calls {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}{}</td><td>{}</td></tr>",
                entry_link(&id, &t.entry_id),
                esc(&app.redact(&t.name)),
                esc(&app.redact(&t.arguments)),
                outcome(t.error),
                t.result_entry_id
                    .as_deref()
                    .map(|r| format!(" · {}", entry_link(&id, r)))
                    .unwrap_or_default(),
                if t.on_current_path { "current" } else { "other" }
            );
        }
        s.push_str("</table>");
        if let Some(n) = c.next_offset {
            let _ = write!(
                s,
                "<p class=\"more\"><a href=\"/session/{}/calls?offset={n}\">More calls</a></p>",
                page::seg(&id)
            );
        }
        s.push_str("</section>");
        let h = wrap(&app, &id, &l, "calls", &s, &format!("tool calls · {id}"));
        load::done(&l);
        Ok(h)
    })
    .await
}

pub(super) async fn edits(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Html<String>, ServeError> {
    blocking(move || {
        let l = load::load(&app, &id)?;
        let _released = load::Releaser::new(&l);
        let edits = arbor_view::agent::file_edits(&l.doc, None);
        let mut s = format!(
            "<section class=\"edits\"><h2>File edits</h2><p class=\"muted\">{} edits</p><table><tr><th>file</th><th>tool</th><th>entry</th><th>result</th><th>branch</th></tr>",
            edits.len()
        );
        for e in &edits {
            let _ = write!(
                s,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&app.redact(&e.path)),
                esc(&e.tool),
                entry_link(&id, &e.entry_id),
                outcome(e.error),
                if e.on_current_path { "current" } else { "other" }
            );
        }
        s.push_str("</table></section>");
        let h = wrap(&app, &id, &l, "edits", &s, &format!("file edits · {id}"));
        load::done(&l);
        Ok(h)
    })
    .await
}
