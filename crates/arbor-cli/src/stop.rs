//! When a server the CLI runs (`arbor serve`, `arbor mcp --http`) stops: at Ctrl-C or
//! SIGTERM. One wait for both (each library serves until the future it is given resolves).

/// Resolves at Ctrl-C (SIGINT) or SIGTERM; polled inside the server's runtime (the handlers
/// are installed at the first poll).
pub async fn signalled() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            // No SIGTERM handler could be installed: Ctrl-C still stops.
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
