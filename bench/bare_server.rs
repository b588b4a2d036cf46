//! The floor the request path is measured against (run by bench/request_path.sh): an axum
//! server with nothing of ours, built with the same profile, runtime and dependencies as
//! the service.
//!
//! Modes:
//!
//! - `bare`: `axum::serve` and one route answering `{"status":"ok"}` as JSON.
//! - `loop`: the same route served by the service's own connection loop
//!   (`jobboard_api::serve::serve`: its parser settings and the envelope of the parser's
//!   refusals), so the loop's cost is seen apart from the middleware's.
//!
//! Usage: bare_server <bare|loop> <address>   (prints the bound address, then serves)

use axum::{Json, Router, routing::get};
use serde_json::{Value, json};

async fn ok() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "bare".into());
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
        println!("{}", listener.local_addr().expect("address"));
        let app = Router::new().route("/healthz", get(ok));
        match mode.as_str() {
            "bare" => axum::serve(listener, app).await.expect("serve"),
            "loop" => jobboard_api::serve::serve(listener, app, std::future::pending()).await,
            other => panic!("unknown mode {other} (bare or loop)"),
        }
    });
}
