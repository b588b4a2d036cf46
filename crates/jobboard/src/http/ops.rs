//! Operational endpoints: liveness, readiness, metrics. No key needed.

use axum::{
    Json, Router,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
    routing::get,
};
use serde_json::json;

use crate::{db::events, server::AppState};

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
    let deliveries = crate::db::webhooks::pending_count(&app.db)
        .await
        .map(|n| n as f64)
        .unwrap_or(f64::NAN);
    let body = body
        + &format!(
            "# HELP jobboard_webhook_deliveries_pending Webhook deliveries waiting for an attempt (the delivery queue depth).\n# TYPE jobboard_webhook_deliveries_pending gauge\njobboard_webhook_deliveries_pending {deliveries}\n"
        );
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}
