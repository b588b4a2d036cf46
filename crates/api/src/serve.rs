//! The HTTP/1.1 server loop: accepts connections and serves a router on each, with
//! graceful shutdown (in-flight requests complete, idle connections close).
//!
//! We run hyper ourselves rather than through `axum::serve` to configure its parser: it
//! answers a head it refuses with an empty 414 or 431 before any of our code runs, so its
//! limits are set above ours (see `edge`), and requests between the two get the envelope;
//! past the parser's own limits its empty answers are given the envelope on their way out
//! (see `parser_refusals`).

use std::{future::Future, net::SocketAddr, pin::pin, time::Duration};

use axum::{Router, extract::ConnectInfo};
use hyper::body::Incoming;
use hyper_util::{rt::TokioIo, service::TowerToHyperService};
use tokio::{net::TcpListener, sync::watch, task::JoinSet};
use tower::ServiceExt;

/// Header fields the parser accepts. Requests with more than
/// [`super::edge::MAX_HEADER_COUNT`] and at most this many are answered by us (`431`
/// envelope); beyond it, by the parser (empty `431`).
pub const PARSER_MAX_HEADERS: usize = 256;

/// Serves `router` on `listener` until `shutdown` completes, then stops accepting, lets
/// every connection finish its request in flight, and returns when all are closed. The
/// router sees the peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_headers(PARSER_MAX_HEADERS);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Reap finished connections so the set holds only live ones.
        while connections.try_join_next().is_some() {}
        let service = router
            .clone()
            .map_request(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req
            });
        let io = TokioIo::new(super::parser_refusals::Enveloped::new(stream));
        let conn = http.serve_connection(io, TowerToHyperService::new(service));
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let mut conn = pin!(conn);
            tokio::select! {
                result = conn.as_mut() => return log_end(result),
                _ = stop.wait_for(|s| *s) => conn.as_mut().graceful_shutdown(),
            }
            log_end(conn.await);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while connections.join_next().await.is_some() {}
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

/// A failed accept: a connection that went away before we took it is skipped; anything
/// else (out of file descriptors, say) is logged and retried after a pause, since
/// retrying at once would spin.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Binds `addr` now (so its port is known before serving starts).
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    TcpListener::from_std(listener)
}
