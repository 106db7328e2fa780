//! Sessions as resources: `arbor://session/ID`, each session's readable Markdown
//! (`arbor_view::export`, Format::Md, as `arbor export --format md`), redacted and bounded;
//! `resources/list` with cursors, `resources/read`, and `resources/subscribe`: a subscribed
//! session's file is looked at every [`POLL`] and each subscriber is sent
//! `notifications/resources/updated` when it changed (grew, or was rewritten).
use crate::bound;
use crate::server::{ArborServer, State, ToolError, Work};
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The scheme and kind of a session's URI.
pub const PREFIX: &str = "arbor://session/";
/// Resources per `resources/list` page.
const PAGE: usize = 100;
/// The most a resource's Markdown holds, in characters (then a line says where to read on).
pub const RESOURCE_BUDGET: usize = bound::MAX_BUDGET;
/// How often subscribed files are looked at.
pub const POLL: Duration = Duration::from_millis(250);

/// Subscribers: a connection's number and its peer.
type Subscribers = Vec<(u64, Peer<RoleServer>)>;

/// One subscribed session: its file, what it looked like, who wants to hear of it.
struct Sub {
    file: PathBuf,
    seen: Option<arbor_store::FileStamp>,
    /// The subscribers: their connection (see `ArborServer::conn`) and peer.
    peers: Subscribers,
}

/// The resources clients subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {
    subs: Mutex<HashMap<String, Sub>>,
    /// Whether the poller runs.
    polling: std::sync::atomic::AtomicBool,
}

/// The state of a file (`None`: gone): [`arbor_store::FileStamp`].
fn look(file: &std::path::Path) -> Option<arbor_store::FileStamp> {
    arbor_store::FileStamp::of(file)
}

/// A session's URI: its id, else its file's stem.
pub(crate) fn uri_of(l: &arbor_index::Listed) -> String {
    let id = l.session_id.clone().unwrap_or_else(|| {
        l.file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    format!("{PREFIX}{id}")
}

/// The session file a URI names (resolved as a tool's `session`, inside the served roots).
fn file_of(state: &State, uri: &str) -> Result<PathBuf, ErrorData> {
    let Some(id) = uri.strip_prefix(PREFIX).filter(|i| !i.is_empty()) else {
        return Err(ErrorData::resource_not_found(
            format!("{uri}: not an arbor resource (arbor://session/ID)"),
            None,
        ));
    };
    crate::resolve::session(state, id).map_err(|e| {
        ErrorData::resource_not_found(format!("{uri}: {}", state.redact.text(e.0)), None)
    })
}

/// `resources/list`: the served sessions, newest first, a page at a time.
pub(crate) async fn list(
    server: &ArborServer,
    request: Option<PaginatedRequestParams>,
    ctx: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    let cursor = request.and_then(|r| r.cursor);
    let r = server
        .blocking(&ctx, move |state, work| {
            let start = bound::offset(cursor.as_deref(), "resources/list", "")?;
            let listed = crate::tools::list::listed(state, work, None)?;
            let page: Vec<Resource> = listed
                .iter()
                .skip(start)
                .take(PAGE)
                .map(|l| {
                    let title = state.redact.text(l.display_title().into_owned());
                    Resource::new(uri_of(l), arbor_view::one_line(&title, 120))
                        .with_mime_type("text/markdown")
                        .with_description(state.redact.text(format!(
                            "{} session in {}, last active {}",
                            if crate::tools::Agent::of(l) == crate::tools::Agent::Omp {
                                "omp"
                            } else {
                                "pi"
                            },
                            l.info.cwd,
                            crate::tools::iso(l.info.modified_ms).unwrap_or_default()
                        )))
                        .with_size(l.size)
                })
                .collect();
            let next = (start + PAGE < listed.len())
                .then(|| bound::cursor("resources/list", "", start + PAGE));
            Ok::<_, ToolError>((page, next))
        })
        .await;
    match r {
        Ok((resources, next)) => {
            let mut out = ListResourcesResult::with_all_items(resources);
            out.next_cursor = next;
            Ok(out)
        }
        Err(e) => Err(ErrorData::invalid_params(
            server.state.redact.text(e.0),
            None,
        )),
    }
}

/// `resources/templates/list`: the one template, `arbor://session/{id}`.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new(
        format!("{PREFIX}{{id}}"),
        "session",
    )
    .with_description(
        "A pi / omp session as readable Markdown (its current branch), redacted unless the server runs with --no-redact; id: a session id or unique id prefix",
    )
    .with_mime_type("text/markdown")])
}

/// A writer that keeps the first `cap` bytes and then refuses more (the export stops there).
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    full: bool,
}

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let room = self.cap - self.buf.len();
        if b.len() > room {
            self.buf.extend_from_slice(&b[..room]);
            self.full = true;
            return Err(std::io::Error::other("the resource's bound was reached"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A session's Markdown, redacted (unless `--no-redact`) and cut at `budget` characters with
/// a last line that says so.
pub(crate) fn markdown(
    state: &State,
    work: &Work,
    file: &std::path::Path,
    uri: &str,
    budget: usize,
) -> Result<String, ToolError> {
    let doc = arbor_store::load_doc(file).map_err(|e| ToolError::new(format!("{uri}: {e}")))?;
    markdown_of(state, work, doc, file, uri, budget)
}

/// [`markdown`] of a session already read (another agent's, read in memory).
fn markdown_of(
    state: &State,
    work: &Work,
    mut doc: arbor_core::SessionDoc,
    file: &std::path::Path,
    uri: &str,
    budget: usize,
) -> Result<String, ToolError> {
    work.check()?;
    let redactions = if state.redact.is_on() {
        Some(
            arbor_view::redact(&mut doc)
                .map_err(|e| ToolError::new(format!("{uri}: cannot be redacted: {e}")))?
                .1,
        )
    } else {
        None
    };
    work.check()?;
    let opts = match &redactions {
        Some(r) => arbor_view::Options::default().redacted(r),
        None => arbor_view::Options::default(),
    };
    let paths = arbor_view::paths_of(&doc, None, false);
    // Characters are at most 4 bytes: 4 × budget bytes hold `budget` characters.
    let mut out = Capped {
        buf: Vec::new(),
        cap: budget.saturating_mul(4),
        full: false,
    };
    let r = arbor_view::export(&doc, file, arbor_view::Format::Md, &paths, &opts, &mut out);
    if let Err(e) = r {
        if !out.full {
            return Err(ToolError::new(format!("{uri}: {e}")));
        }
    }
    let text = String::from_utf8_lossy(&out.buf).into_owned();
    let (mut text, cut) = bound::cut_text(&state.redact.text(text), budget);
    if cut.is_some() || out.full {
        text.push_str(&format!(
            "\n\n[cut: this resource is bounded at {budget} characters; read the rest with the get_messages tool (session: {})]\n",
            uri.strip_prefix(PREFIX).unwrap_or(uri)
        ));
    }
    Ok(text)
}

/// `resources/read`.
pub(crate) async fn read(
    server: &ArborServer,
    request: ReadResourceRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, ErrorData> {
    let uri = request.uri.clone();
    let file = {
        let state = server.state.clone();
        let uri = uri.clone();
        tokio::task::spawn_blocking(move || file_of(&state, &uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    };
    let u = uri.clone();
    let text = match file {
        Ok(file) => server
            .blocking(&ctx, move |state, work| {
                markdown(state, work, &file, &u, RESOURCE_BUDGET)
            })
            .await
            .map_err(|e| ErrorData::internal_error(server.state.redact.text(e.0), None))?,
        // Another agent's session (its id as `list_sessions` gives it): read in memory as
        // `arbor import` would make it.
        Err(not_found) => {
            let id = uri.strip_prefix(PREFIX).unwrap_or_default().to_string();
            server
                .blocking(&ctx, move |state, work| match crate::resolve::open_foreign(
                    state, work, &id,
                )? {
                    Some(f) => {
                        markdown_of(state, work, f.doc, &f.path, &u, RESOURCE_BUDGET).map(Some)
                    }
                    None => Ok(None),
                })
                .await
                .map_err(|e| ErrorData::internal_error(server.state.redact.text(e.0), None))?
                .ok_or(not_found)?
        }
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/markdown")
    ])
    .into())
}

/// `resources/subscribe`: the session's file is looked at every [`POLL`]; a change is told
/// to the subscriber as `notifications/resources/updated`.
pub(crate) async fn subscribe(
    server: &ArborServer,
    request: SubscribeRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let state = server.state.clone();
    let uri = request.uri.clone();
    let file = {
        let state = state.clone();
        let uri = uri.clone();
        tokio::task::spawn_blocking(move || file_of(&state, &uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))??
    };
    {
        let mut subs = state
            .subs
            .subs
            .lock()
            .map_err(|_| ErrorData::internal_error("subscriptions unusable", None))?;
        let seen = look(&file);
        let sub = subs.entry(uri).or_insert_with(|| Sub {
            file,
            seen,
            peers: Vec::new(),
        });
        if !sub.peers.iter().any(|(c, _)| *c == server.conn) {
            sub.peers.push((server.conn, ctx.peer.clone()));
        }
    }
    if !state
        .subs
        .polling
        .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        let weak = std::sync::Arc::downgrade(&state);
        tokio::spawn(async move { poll(weak).await });
    }
    Ok(())
}

/// Looks at the subscribed files until the server's state is gone.
async fn poll(state: std::sync::Weak<State>) {
    let mut tick = tokio::time::interval(POLL);
    loop {
        tick.tick().await;
        let Some(state) = state.upgrade() else { return };
        let changed: Vec<(String, Subscribers)> = {
            let Ok(mut subs) = state.subs.subs.lock() else {
                return;
            };
            subs.iter_mut()
                .filter_map(|(uri, s)| {
                    let now = look(&s.file);
                    (now != s.seen).then(|| {
                        s.seen = now;
                        (uri.clone(), s.peers.clone())
                    })
                })
                .collect()
        };
        for (uri, peers) in changed {
            let mut dead = Vec::new();
            for (c, p) in &peers {
                if p.is_transport_closed() {
                    dead.push(*c);
                    continue;
                }
                let _ = p
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                    .await;
            }
            if !dead.is_empty() {
                if let Ok(mut subs) = state.subs.subs.lock() {
                    if let Some(s) = subs.get_mut(&uri) {
                        s.peers.retain(|(c, _)| !dead.contains(c));
                    }
                }
            }
        }
    }
}

/// `resources/unsubscribe`: this client hears no more of the session.
pub(crate) async fn unsubscribe(
    server: &ArborServer,
    request: UnsubscribeRequestParams,
    _ctx: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    if let Ok(mut subs) = server.state.subs.subs.lock() {
        if let Some(s) = subs.get_mut(&request.uri) {
            s.peers.retain(|(c, _)| *c != server.conn);
            if s.peers.is_empty() {
                subs.remove(&request.uri);
            }
        }
    }
    Ok(())
}
