//! Streamable HTTP (rmcp's `StreamableHttpService` under hyper): loopback only unless
//! `--allow-remote`, which needs a bearer token from a file readable by its owner alone;
//! every request must then carry `Authorization: Bearer TOKEN`, compared in constant time,
//! else it is answered 401 before it reaches the MCP service.
use crate::{ArborServer, McpError, Options};
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The shortest token accepted, in bytes (the one rule: [`arbor_store::listen`]).
pub use arbor_store::listen::MIN_TOKEN;

/// How `arbor mcp --http` was asked to listen.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `--http ADDR`.
    pub addr: SocketAddr,
    /// `--allow-remote`: listen on a non-loopback address (needs `token_file`).
    pub allow_remote: bool,
    /// `--token-file F`: every request must carry `Authorization: Bearer TOKEN`.
    pub token_file: Option<PathBuf>,
}

/// HTTP options checked, the token read ([`arbor_store::listen::Checked`]).
pub type Checked = arbor_store::listen::Checked;

impl HttpOptions {
    /// Refuses what must not run: a non-loopback address without `--allow-remote`,
    /// `--allow-remote` without a token, a token file others may read (as ssh refuses such a
    /// key), an empty or short token.
    ///
    /// ```
    /// use arbor_mcp::http::HttpOptions;
    /// let o = HttpOptions { addr: "0.0.0.0:8765".parse().unwrap(), allow_remote: false, token_file: None };
    /// assert!(o.check().unwrap_err().to_string().contains("not a loopback address"));
    /// let o = HttpOptions { addr: "127.0.0.1:8765".parse().unwrap(), allow_remote: false, token_file: None };
    /// assert!(o.check().is_ok());
    /// ```
    pub fn check(&self) -> Result<Checked, McpError> {
        arbor_store::listen::check(
            "--http",
            self.addr,
            self.allow_remote,
            self.token_file.as_deref(),
        )
        .map_err(|e| McpError::Refused(e.0))
    }
}

/// Whether `given` is `want`, in time that does not depend on where they differ
/// ([`arbor_store::listen::same_token`]).
///
/// ```
/// assert!(arbor_mcp::http::same_token(b"0123456789abcdef", b"0123456789abcdef"));
/// assert!(!arbor_mcp::http::same_token(b"0123456789abcdeX", b"0123456789abcdef"));
/// ```
pub use arbor_store::listen::same_token;

/// Whether a request carries the token (`Authorization: Bearer TOKEN`).
fn authorized<B>(req: &http::Request<B>, token: &[u8]) -> bool {
    arbor_store::listen::bearer(
        req.headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes()),
        token,
    )
}

/// The 401 answer.
fn unauthorized() -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut r = http::Response::new(
        Full::new(Bytes::from_static(
            b"401 Unauthorized: this arbor mcp server needs Authorization: Bearer TOKEN\n",
        ))
        .boxed(),
    );
    *r.status_mut() = http::StatusCode::UNAUTHORIZED;
    r.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    r
}

/// Serves until `stop` resolves.
pub(crate) async fn serve(
    opts: Options,
    c: Checked,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), McpError> {
    let listener = tokio::net::TcpListener::bind(c.addr).await?;
    serve_listener(opts, c, listener, stop).await
}

/// Serves on `listener` (bound to the checked address, or another for tests) until `stop`
/// resolves.
pub async fn serve_listener(
    opts: Options,
    c: Checked,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), McpError> {
    let proto = ArborServer::new(opts)?;
    let state = proto.state.clone();
    let ct = tokio_util::sync::CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(ct.clone());
    if c.remote {
        // Any Host: the bearer token, not the Host header, keeps others out.
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<ArborServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(ArborServer::with_state(state.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let local = listener.local_addr()?;
    let mut stop = Box::pin(stop);
    if arbor_store::listen::armed(&mut stop).await {
        return Ok(());
    }
    eprintln!(
        "arbor mcp: listening on http://{local}/ (streamable HTTP{})",
        if c.token.is_some() {
            "; requests need the bearer token"
        } else {
            ""
        }
    );
    let token: Option<Arc<Vec<u8>>> = c.token.map(Arc::new);
    loop {
        let (stream, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("arbor mcp: accept: {e}");
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let service = service.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let mut service = service.clone();
                    let token = token.clone();
                    async move {
                        if let Some(t) = &token {
                            if !authorized(&req, t) {
                                return Ok::<_, Infallible>(unauthorized());
                            }
                        }
                        tower_service::Service::call(&mut service, req).await
                    }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
    ct.cancel();
    Ok(())
}
