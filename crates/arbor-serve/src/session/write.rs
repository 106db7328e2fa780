//! Writes (`--allow-writes` only): rename the session, label an entry, fork at an entry,
//! delete to the trash.
//! Each is a form `POST` with this run's CSRF token, checked by
//! [`crate::security::check_write`] (writes on, same origin, the token) before anything is
//! read; each writes through [`arbor_store::SessionManager`], the writer and lock of the
//! CLI's `arbor name`, the browser's label and `arbor fork` (and `arbor mcp`'s write tools);
//! the trash is `arbor rm`'s ([`arbor_store::trash`]: the session with what belongs to it,
//! after the writer lock is free and the volume's trash checked).
//! The session is named by its id, resolved and checked as the readers resolve it.
use super::{blocking, load, page};
use crate::layout::{esc, page as shell, Nav, Page};
use crate::{App, ServeError};
use arbor_store::{ManagerOptions, SessionManager};
use axum::extract::{Form, Path, State};
use axum::response::Html;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// The longest name or label accepted, in characters (`arbor mcp`'s limit).
const MAX_TEXT: usize = 1000;

/// The write forms of a session page: none without `--allow-writes`.
pub fn forms(app: &App, sid: &str, l: &load::Loaded, shown: &page::Shown) -> String {
    if !app.opts.allow_writes || l.foreign.is_some() {
        return String::new();
    }
    let s = page::seg(sid);
    let csrf = esc(&app.csrf);
    let leaf = shown.leaf.map(|x| page::id_of(l, x)).unwrap_or_default();
    let name = l.doc.session_name().unwrap_or_default();
    let mut out = format!(
        "<div class=\"writes\">\
<form method=\"post\" action=\"/session/{s}/rename\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><label>Name <input name=\"name\" maxlength=\"{MAX_TEXT}\" value=\"{}\" required></label><button>Rename</button></form>\
<form method=\"post\" action=\"/session/{s}/label\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><label>Label entry <input name=\"entry\" size=\"10\" value=\"{}\" required></label><label>as <input name=\"label\" maxlength=\"{MAX_TEXT}\"></label><button>Label</button></form>\
<form method=\"post\" action=\"/session/{s}/fork\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><label>Fork at entry <input name=\"entry\" size=\"10\" value=\"{}\"></label><button>Fork</button></form>\
<form method=\"post\" action=\"/session/{s}/trash\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><button>Move to the trash</button></form>",
        esc(&app.redact(&name)),
        esc(&leaf),
        esc(&leaf),
    );
    out.push_str("</div>");
    out
}

type Fields = HashMap<String, String>;

/// A write itself: on the app, for the session of that id at that file, with the form's fields.
type WriteNow = fn(&App, &str, &std::path::Path, &Fields) -> Result<Html<String>, ServeError>;

/// A write: the checks every write passes first ([`crate::security::check_write`]), then
/// `now` on the session's file, on the blocking pool.
async fn write(
    app: Arc<App>,
    id: String,
    headers: http::HeaderMap,
    f: Fields,
    now: WriteNow,
) -> Result<Html<String>, ServeError> {
    crate::security::check_write(&app, &headers, f.get("csrf").map_or("", String::as_str))?;
    blocking(move || {
        let path = match load::find(&app, &id)? {
            load::Source::File(p) => p,
            // Another agent's session: arbor only reads it.
            load::Source::Foreign(r) => {
                return Err(ServeError::Forbidden(format!(
                    "session {} is {}'s, another agent's: arbor only reads it and never writes into it. To write to it, import it as a pi session first: {}",
                    r.summary.id,
                    r.agent,
                    r.import_command()
                )))
            }
        };
        now(&app, &id, &path, &f)
    })
    .await
}

fn field<'a>(f: &'a Fields, k: &str) -> Result<&'a str, ServeError> {
    let v = f.get(k).map_or("", String::as_str);
    if v.chars().count() > MAX_TEXT {
        return Err(ServeError::BadRequest(format!(
            "{k}: longer than {MAX_TEXT} characters"
        )));
    }
    Ok(v)
}

/// The writer's options: the CLI's defaults, omp blobs in the agent directory's store when
/// the server was given one (as `arbor append`, `arbor mcp`).
fn options(app: &App) -> ManagerOptions {
    ManagerOptions::default().with_blob_dir(app.loc.agent_override().map(|a| a.join("blobs")))
}

fn done_page(app: &App, title: &str, body: String) -> Html<String> {
    let _ = app;
    shell(
        Page {
            title,
            nav: Nav::Session,
            assets: &["session.css"],
            body_attrs: "",
        },
        &format!("<main class=\"session written\">{body}</main>"),
    )
}

fn err(e: impl std::fmt::Display) -> ServeError {
    ServeError::Other(e.to_string())
}

pub(super) async fn rename(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    write(app, id, headers, f, rename_now).await
}

fn rename_now(
    app: &App,
    id: &str,
    path: &std::path::Path,
    f: &Fields,
) -> Result<Html<String>, ServeError> {
    let name = field(f, "name")?;
    if arbor_store::is_blank_name(name) {
        return Err(ServeError::BadRequest(
            "name: empty (give the session a name with at least one visible character)".into(),
        ));
    }
    let mut sm = SessionManager::open(path, options(app)).map_err(err)?;
    let written = sm.set_session_name(name);
    let closed = sm.close();
    written.map_err(err)?;
    closed.map_err(err)?;
    Ok(done_page(
            app,
            "renamed",
            format!(
                "<h1>Renamed</h1><p>The session is named “{}”.</p><p><a href=\"/session/{}\">Back to the session</a></p>",
                esc(&app.redact(name.trim())),
                page::seg(id)
            ),
        ))
}

pub(super) async fn label(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    write(app, id, headers, f, label_now).await
}

fn label_now(
    app: &App,
    id: &str,
    path: &std::path::Path,
    f: &Fields,
) -> Result<Html<String>, ServeError> {
    let entry = field(f, "entry")?.trim();
    let label = Some(field(f, "label")?).filter(|l| !l.is_empty());
    let mut sm = SessionManager::open(path, options(app)).map_err(err)?;
    if sm.doc().index().get(entry).is_none() {
        let _ = sm.close();
        return Err(ServeError::NotFound(format!(
            "no entry with id {entry:?} in session {id}"
        )));
    }
    let written = sm.append_label_change(entry, label);
    let closed = sm.close();
    written.map_err(err)?;
    closed.map_err(err)?;
    Ok(done_page(
        app,
        "labelled",
        format!(
            "<h1>{}</h1><p><a href=\"/session/{s}/entry/{e}#{e}\">Back to the entry</a></p>",
            match label {
                Some(l) => format!("Entry {} labelled “{}”", esc(entry), esc(&app.redact(l))),
                None => format!("Entry {}'s label cleared", esc(entry)),
            },
            s = page::seg(id),
            e = page::seg(entry)
        ),
    ))
}

pub(super) async fn fork(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    write(app, id, headers, f, fork_now).await
}

fn fork_now(
    app: &App,
    id: &str,
    path: &std::path::Path,
    f: &Fields,
) -> Result<Html<String>, ServeError> {
    let at = Some(field(f, "entry")?.trim()).filter(|e| !e.is_empty());
    if let Some(e) = at {
        let doc = arbor_store::load_doc(path).map_err(err)?;
        if doc.index().get(e).is_none() {
            return Err(ServeError::NotFound(format!(
                "no entry with id {e:?} in session {id}"
            )));
        }
    }
    let sm = SessionManager::fork(path, at, None, options(app)).map_err(err)?;
    let new_path = sm
        .session_file()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let new_id = sm.session_id();
    let tool = sm.dialect();
    sm.close().map_err(err)?;
    let resume =
        arbor_store::locate::shell_line(&arbor_store::locate::resume_command(tool, &new_path));
    let mut body = String::from("<h1>Forked</h1>");
    let _ = write!(
            body,
            "<p>The new session: <a href=\"/session/{}\">{}</a></p><p>Resume it: <code>{}</code></p><p><a href=\"/session/{}\">Back to the session forked</a></p>",
            page::seg(&new_id),
            esc(&new_id),
            esc(&resume),
            page::seg(id)
        );
    Ok(done_page(app, "forked", body))
}

pub(super) async fn trash(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: http::HeaderMap,
    Form(f): Form<Fields>,
) -> Result<Html<String>, ServeError> {
    write(app, id, headers, f, trash_now).await
}

fn trash_now(
    app: &App,
    id: &str,
    path: &std::path::Path,
    _: &Fields,
) -> Result<Html<String>, ServeError> {
    // No arbor writer may be appending while the file goes (as `arbor rm`).
    let lock = arbor_store::lock::WriterLock::acquire(path, None).map_err(err)?;
    drop(lock);
    let (items, note) = arbor_store::trash::with_belongings(path);
    arbor_store::trash::to_trash(&items)
        .map_err(|e| ServeError::Other(format!("cannot move the session to the trash: {e}")))?;
    Ok(done_page(
            app,
            "moved to the trash",
            format!(
                "<h1>Moved to the trash</h1><p>Session {}{}. <code>arbor trash restore {}</code> brings it back.</p>{}<p><a href=\"/\">All sessions</a></p>",
                esc(id),
                match items.len() {
                    1 => String::new(),
                    n => format!(" (and {} beside it)", arbor_view::count(n as u64 - 1, "file", "files")),
                },
                esc(id),
                note.map(|n| format!("<p class=\"muted\">{}</p>", esc(&n)))
                    .unwrap_or_default()
            ),
        ))
}
