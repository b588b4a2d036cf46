//! Operational endpoints: liveness, readiness, metrics. No key needed.

use axum::{
    Json, Router,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
    routing::get,
};
use serde_json::json;

use crate::{cache::CacheStats, db::events, server::AppState};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

/// The process is up.
async fn healthz() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

/// The database answers and every migration is applied.
async fn readyz(State(app): State<AppState>) -> impl IntoResponse {
    if app.db.ready().await {
        (StatusCode::OK, Json(json!({ "status": "ready" })))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable" })),
        )
    }
}

/// Prometheus text format.
async fn metrics(State(app): State<AppState>) -> impl IntoResponse {
    let pending = events::pending_count(&app.db)
        .await
        .map(|n| n as f64)
        .unwrap_or(f64::NAN);
    let body = app.metrics.render(&[(
        "jobboard_outbox_pending_events",
        "Events written to the outbox and not yet fanned out to webhook deliveries.",
        pending,
    )]);
    let deliveries = crate::domain::webhooks::pending_count(&app.db)
        .await
        .map(|n| n as f64)
        .unwrap_or(f64::NAN);
    let body = body
        + &format!(
            "# HELP jobboard_webhook_deliveries_pending Webhook deliveries waiting for an attempt (the delivery queue depth).\n# TYPE jobboard_webhook_deliveries_pending gauge\njobboard_webhook_deliveries_pending {deliveries}\n"
        );
    let mut body = body;
    let caches = [
        ("jobs", app.jobs_cache.stats()),
        ("cms", app.cms_cache.stats()),
    ];
    type Series = (
        &'static str,
        &'static str,
        &'static str,
        fn(&CacheStats) -> u64,
    );
    let series: [Series; 5] = [
        (
            "jobboard_cache_hits_total",
            "counter",
            "Reads answered from a read cache.",
            |s| s.hits,
        ),
        (
            "jobboard_cache_misses_total",
            "counter",
            "Reads a read cache could not answer.",
            |s| s.misses,
        ),
        (
            "jobboard_cache_stores_total",
            "counter",
            "Renderings stored in a read cache.",
            |s| s.stores,
        ),
        (
            "jobboard_cache_entries",
            "gauge",
            "Entries held by a read cache.",
            |s| s.entries as u64,
        ),
        (
            "jobboard_cache_bytes",
            "gauge",
            "Bytes of rendered bodies held by a read cache.",
            |s| s.bytes as u64,
        ),
    ];
    for (name, kind, help, value) in series {
        body.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        for (cache, stats) in &caches {
            body.push_str(&format!("{name}{{cache=\"{cache}\"}} {}\n", value(stats)));
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}
