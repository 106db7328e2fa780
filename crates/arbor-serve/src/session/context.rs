//! The context the model saw at an entry (`/session/ID/context/ENTRY`): exactly what pi (or
//! omp) would send from there, as `arbor context` computes it
//! ([`arbor_view::agent::session_context`], [`arbor_view::agent::context_page`]), its newest
//! messages within a token budget, older ones a link away.
use super::{blocking, load, page};
use crate::layout::{esc, page as shell, Nav, Page};
use crate::{App, ServeError};
use axum::extract::{Path, Query, State};
use axum::response::Html;
use std::fmt::Write as _;
use std::sync::Arc;

/// The tokens of context one page shows.
const BUDGET: u64 = 30_000;

#[derive(Debug, serde::Deserialize)]
pub(super) struct Before {
    before: Option<usize>,
}

pub(super) async fn context(
    State(app): State<Arc<App>>,
    Path((id, entry)): Path<(String, String)>,
    Query(q): Query<Before>,
) -> Result<Html<String>, ServeError> {
    blocking(move || render(&app, &id, &entry, q.before)).await
}

fn render(
    app: &App,
    sid: &str,
    entry: &str,
    before: Option<usize>,
) -> Result<Html<String>, ServeError> {
    use arbor_core::context::{LeafSel, OmpVersion};
    let l = load::load(app, sid)?;
    let _released = load::Releaser::new(&l);
    let doc = &l.doc;
    let at = load::entry(doc, entry)?;
    let ctx = arbor_view::agent::session_context(
        doc,
        LeafSel::Id(entry),
        &l.path,
        app.loc.agent_override(),
        OmpVersion::default(),
    );
    let p = arbor_view::agent::context_page(
        doc,
        &ctx,
        &arbor_view::agent::ContextOpts {
            budget_tokens: BUDGET,
            images: false,
            before,
        },
    );
    let shown = page::Shown::new(
        &l,
        Some(arbor_view::agent::leaf_through(doc, at)),
        None,
        Some(at),
    );
    let mut body = format!(
        "<main class=\"session\">{}<section class=\"context\"><h2>Context at <a href=\"/session/{s}/entry/{e}#{e}\">{eid}</a></h2>\
<p class=\"muted\">What {rules} would send to the model from this entry (<code>arbor context</code>): {total} messages; {kept} estimated tokens shown; {om} older messages ({omt} tokens about) {older}.</p>",
        page::head_html(app, sid, &l, &shown, ""),
        s = page::seg(sid),
        e = page::seg(entry),
        eid = esc(entry),
        rules = esc(&p.rules),
        total = p.total_messages,
        kept = p.kept_tokens,
        om = p.omitted_messages,
        omt = p.omitted_tokens_about,
        older = if p.omitted_messages > 0 {
            format!(
                "<a href=\"/session/{}/context/{}?before={}\">shown on the page before</a>",
                page::seg(sid),
                page::seg(entry),
                p.omitted_messages
            )
        } else {
            "left out".to_string()
        }
    );
    // The context's settings (model, thinking level, ...), then each message as JSON.
    let mut settings = p.context.clone();
    let messages = settings
        .as_object_mut()
        .and_then(|o| o.remove("messages"))
        .and_then(|m| match m {
            serde_json::Value::Array(a) => Some(a),
            _ => None,
        })
        .unwrap_or_default();
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let _ = write!(
        body,
        "<details><summary>Settings</summary><pre>{}</pre></details><ol class=\"ctx\" start=\"{}\">",
        esc(&app.redact(&pretty(&settings))),
        p.omitted_messages + 1
    );
    for m in &messages {
        let role = m.get("role").and_then(|r| r.as_str()).unwrap_or("message");
        let _ = write!(
            body,
            "<li class=\"r-{r}\"><b>{r}</b><pre>{}</pre></li>",
            esc(&app.redact(&pretty(m))),
            r = esc(role)
        );
    }
    body.push_str("</ol></section></main>");
    load::done(&l);
    Ok(shell(
        Page {
            title: &format!("context at {entry}"),
            nav: Nav::Session,
            assets: &["conversation.css", "session.css"],
            body_attrs: "",
        },
        &body,
    ))
}
