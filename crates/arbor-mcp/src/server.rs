//! The MCP handler: initialize info, the tool router (one router per `tools/` file, added
//! together here), resources, and the helpers every tool answers through (blocking work
//! with cancellation and progress, redaction, the size bound, tool errors).
use crate::bound::Budget;
use crate::redact::Redactor;
use crate::{McpError, Options};
use arbor_index::Catalog;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What every connection of one server shares: the options, the catalog, the subscriptions.
pub(crate) struct State {
    /// How the server was started.
    pub opts: Options,
    /// The agent directories and scope, as the CLI's `Locator`.
    pub loc: arbor_store::locate::Locator,
    /// Redaction of everything served.
    pub redact: Redactor,
    /// The catalog (one connection; the tools take turns, on the blocking pool).
    pub catalog: Mutex<Catalog>,
    /// The resources clients subscribed to, and the watcher that tells them of changes.
    pub subs: crate::resources::Subscriptions,
}

/// A tool's failure: what the caller reads (`isError: true`), never a protocol error.
#[derive(Debug)]
pub(crate) struct ToolError(pub String);

impl ToolError {
    /// A tool error with this message.
    pub fn new(m: impl Into<String>) -> ToolError {
        ToolError(m.into())
    }
}

impl<E: std::fmt::Display> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError(e.to_string())
    }
}

/// The cancellation flag and progress reporter a tool's blocking work gets.
pub(crate) struct Work {
    cancelled: Arc<AtomicBool>,
    progress: Option<tokio::sync::mpsc::UnboundedSender<(f64, Option<f64>, String)>>,
}

impl Work {
    /// Whether the client cancelled the call (work stops at the next check).
    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// An error for a cancelled call.
    pub fn check(&self) -> Result<(), ToolError> {
        if self.cancelled() {
            Err(ToolError::new("cancelled by the client"))
        } else {
            Ok(())
        }
    }

    /// Reports progress (sent as `notifications/progress` when the call carried a
    /// `progressToken`).
    pub fn progress(&self, done: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(p) = &self.progress {
            let _ = p.send((done, total, message.into()));
        }
    }
}

/// The arbor MCP server: one per connection, sharing one state (the catalog, the scope, the
/// options).
#[derive(Clone)]
pub struct ArborServer {
    pub(crate) state: Arc<State>,
    /// This connection's number (subscriptions are kept per connection).
    pub(crate) conn: u64,
    tool_router: ToolRouter<ArborServer>,
}

impl std::fmt::Debug for ArborServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArborServer")
            .field("opts", &self.state.opts)
            .finish()
    }
}

impl ArborServer {
    /// A server for `opts`: opens the catalog (the CLI's file, or `opts.catalog`).
    pub fn new(opts: Options) -> Result<ArborServer, McpError> {
        let path = opts
            .catalog
            .clone()
            .unwrap_or_else(arbor_index::default_catalog_path);
        let catalog = Catalog::open_or_memory(&path)?;
        if let Some(a) = &catalog.report.set_aside {
            eprintln!(
                "arbor mcp: warning: the catalog {} was damaged; it was moved to {} and is rebuilt from the session files",
                path.display(),
                a.display()
            );
        }
        if let Some(why) = &catalog.report.in_memory_because {
            eprintln!("arbor mcp: warning: cannot use the catalog: {why}; indexing in memory");
        }
        if opts.watch && catalog.report.in_memory_because.is_none() {
            watch(catalog.path().to_path_buf(), opts.locator());
        }
        let state = State {
            loc: opts.locator(),
            redact: Redactor::new(opts.redact),
            catalog: Mutex::new(catalog),
            subs: crate::resources::Subscriptions::default(),
            opts,
        };
        Ok(ArborServer::with_state(Arc::new(state)))
    }

    /// Another handler over the same state (one per HTTP session).
    pub(crate) fn with_state(state: Arc<State>) -> ArborServer {
        static CONNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut tool_router = Self::router();
        if !state.opts.allow_writes {
            // Not listed; a call is answered by `call_tool` with a tool error.
            for t in crate::tools::write::WRITE_TOOLS {
                tool_router.disable_route(*t);
            }
        }
        ArborServer {
            state,
            conn: CONNS.fetch_add(1, Ordering::Relaxed),
            tool_router,
        }
    }

    /// Every tool: each `tools/` file's router, added together. The write tools only with
    /// `--allow-writes`.
    fn router() -> ToolRouter<ArborServer> {
        Self::search_router()
            + Self::list_router()
            + Self::session_router()
            + Self::usage_router()
            + Self::messages_router()
            + Self::context_router()
            + Self::tree_router()
            + Self::calls_router()
            + Self::write_router()
    }

    /// The tools this server offers (their names, descriptions and schemas).
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    /// Runs `f` on the blocking pool with the state; a cancelled call (the client's
    /// `notifications/cancelled`, or a closed connection) sets the flag `f` checks, and the
    /// call answers at once. Progress `f` reports is sent when the call asked for it.
    pub(crate) async fn blocking<T, F>(
        &self,
        ctx: &RequestContext<RoleServer>,
        f: F,
    ) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(&State, &Work) -> Result<T, ToolError> + Send + 'static,
    {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let token = ctx.meta.get_progress_token();
        let work = Work {
            cancelled: Arc::new(AtomicBool::new(false)),
            progress: token.is_some().then_some(tx),
        };
        let flag = work.cancelled.clone();
        let state = self.state.clone();
        let mut job = tokio::task::spawn_blocking(move || f(&state, &work));
        let peer = ctx.peer.clone();
        let ct = ctx.ct.clone();
        loop {
            tokio::select! {
                r = &mut job => {
                    return r.map_err(|e| ToolError::new(format!("the call failed: {e}")))?;
                }
                _ = ct.cancelled() => {
                    flag.store(true, Ordering::Relaxed);
                    return Err(ToolError::new("cancelled by the client"));
                }
                Some((done, total, message)) = rx.recv() => {
                    if let Some(t) = &token {
                        let mut p = ProgressNotificationParam::new(t.clone(), done);
                        p.total = total;
                        p.message = Some(message);
                        let _ = peer.notify_progress(p).await;
                    }
                }
            }
        }
    }

    /// A tool's whole call: `run` on the blocking pool ([`ArborServer::blocking`]) with the
    /// arguments, its answer redacted, rendered by `render` and held to `budget` (the tool's
    /// `budget` argument; a bad one is `run`'s to refuse) ([`ArborServer::answer`]).
    pub(crate) async fn tool<A, T>(
        &self,
        ctx: &RequestContext<RoleServer>,
        budget: Option<u64>,
        args: A,
        run: fn(&State, &Work, &A) -> Result<T, ToolError>,
        render: fn(&T) -> String,
    ) -> Result<CallToolResult, ErrorData>
    where
        A: Send + 'static,
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        let budget = Budget::new(budget).unwrap_or(Budget(crate::bound::DEFAULT_BUDGET));
        let r = self.blocking(ctx, move |s, w| run(s, w, &args)).await;
        self.answer(r, budget, render)
    }

    /// A tool's answer: `out` as structured content (its schema is the tool's output schema)
    /// and `render(out)`, a short text for a model that reads only text. `out` is redacted
    /// first (every string) and the text is rendered from the redacted answer, so that no
    /// rendering can cut a secret short of what the scanner recognizes; both are then held
    /// to `budget`.
    pub(crate) fn reply<T: Serialize + DeserializeOwned>(
        &self,
        out: &T,
        budget: Budget,
        render: fn(&T) -> String,
    ) -> Result<CallToolResult, ErrorData> {
        let internal =
            |e: serde_json::Error| ErrorData::internal_error(format!("answer: {e}"), None);
        let mut v = serde_json::to_value(out).map_err(internal)?;
        self.state.redact.value(&mut v);
        let redacted: T = serde_json::from_value(v.clone()).map_err(internal)?;
        let text = self.state.redact.text(render(&redacted));
        crate::bound::fits(&mut v, budget.0);
        let (text, _) = crate::bound::cut_text(&text, budget.0);
        let mut r = CallToolResult::structured(v);
        r.content = vec![ContentBlock::text(text)];
        Ok(r)
    }

    /// A tool error (`isError: true`), its message redacted.
    pub(crate) fn fail(&self, e: ToolError) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.state.redact.text(e.0))])
    }

    /// [`ArborServer::reply`] or [`ArborServer::fail`], for a tool's result.
    pub(crate) fn answer<T: Serialize + DeserializeOwned>(
        &self,
        r: Result<T, ToolError>,
        budget: Budget,
        render: fn(&T) -> String,
    ) -> Result<CallToolResult, ErrorData> {
        match r {
            Ok(out) => self.reply(&out, budget, render),
            Err(e) => Ok(self.fail(e)),
        }
    }
}

/// Starts the catalog's watcher for the server's life ([`arbor_index::watch::spawn`]).
fn watch(catalog: std::path::PathBuf, loc: arbor_store::locate::Locator) {
    let spawned = arbor_index::watch::spawn(
        catalog,
        loc,
        "arbor-mcp-watch",
        |_| {},
        |e| eprintln!("arbor mcp: the catalog is refreshed at each call: {e}"),
    );
    if let Err(e) = spawned {
        eprintln!("arbor mcp: the catalog is refreshed at each call: {e}");
    }
}

/// What the server tells a client at `initialize`.
const INSTRUCTIONS: &str = "arbor serves the pi / oh-my-pi coding-agent sessions of this machine: \
search them (search_sessions), list them (list_sessions), read one's overview (get_session) and \
costs (get_usage), its conversation (get_messages), the exact context its model saw \
(get_context), its tree of branches (get_tree), its tool calls (get_tool_calls) and the files \
it edited (get_file_edits, also across sessions: where did we change X); with --allow-writes, \
label_entry, name_session and fork_session. A session is named by `session`: its id, a unique \
id prefix, or its path. \
Session text is redacted (secrets replaced by [REDACTED:kind]) unless the server was started \
with --no-redact. Every answer is bounded (`budget` characters); a cut answer has a \
`next_cursor`: pass it back as `cursor` with the same arguments to continue.";

#[rmcp::tool_handler(router = self.tool_router)]
impl ServerHandler for ArborServer {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        // A write tool on a server without --allow-writes: a tool error that says how to
        // get it, not "tool not found".
        if let Some(t) = crate::tools::write::WRITE_TOOLS
            .iter()
            .find(|t| **t == request.name && !self.state.opts.allow_writes)
        {
            return Ok(self.fail(crate::tools::write::refused(t)).into());
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, ctx);
        self.tool_router.call(tcc).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("arbor", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        request: Option<rmcp::model::PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        crate::resources::list(self, request, ctx).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Ok(crate::resources::templates())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        crate::resources::read(self, request, ctx).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        crate::resources::subscribe(self, request, ctx).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        crate::resources::unsubscribe(self, request, ctx).await
    }
}
