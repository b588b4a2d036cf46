//! Operational endpoints: liveness, readiness, metrics. No API key; `/metrics` takes a
//! bearer token when `metrics_token` is set, and is served on the main listener only
//! then (else only on the `metrics_listen` listener, or not at all).

use axum::{
    Json, Router,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use jobboard_core::cache::CacheStats;

use jobboard_store::events;

use jobboard_app::app::AppState;

use jobboard_app::config::Secret;

use jobboard_app::error::ApiError;

/// `/healthz` and `/readyz`, and `/metrics` when `with_metrics`.
pub fn routes(with_metrics: bool) -> Router<AppState> {
    let routes = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz));
    if with_metrics {
        routes.route("/metrics", get(metrics))
    } else {
        routes
    }
}

/// True when `Authorization` is `Bearer <token>`. The SHA-256 digests are compared in
/// constant time, so neither the token's bytes nor its length can be learnt from timing.
fn bearer_matches(headers: &HeaderMap, token: &Secret) -> bool {
    let Some((scheme, given)) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
    else {
        return false;
    };
    let given = Sha256::digest(given.trim().as_bytes());
    let expected = Sha256::digest(token.0.as_bytes());
    scheme.eq_ignore_ascii_case("bearer") && bool::from(given.ct_eq(&expected))
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
async fn metrics(State(app): State<AppState>, req: Request) -> Response {
    if let Some(token) = &app.config.metrics_token
        && !bearer_matches(req.headers(), token)
    {
        let ip = super::auth::client_key(&app, &req);
        return super::auth::refuse_credentials(&app, &ip, ApiError::invalid_token()).await;
    }
    let indexes = jobboard_domain::jobs::indexes::Indexes::of(&app.db);
    let (index_bytes, indexed) = indexes.usage();
    let wear = indexes.wear();
    let pending = events::pending_count(&app.db)
        .await
        .map(|n| n as f64)
        .unwrap_or(f64::NAN);
    let deliveries = jobboard_domain::webhooks::pending_count(&app.db)
        .await
        .map(|n| n as f64)
        .unwrap_or(f64::NAN);
    let (queued, failed) = jobboard_domain::mail::store::counts(&app.db)
        .await
        .map(|(q, f)| (q as f64, f as f64))
        .unwrap_or((f64::NAN, f64::NAN));
    let allocator = jobboard_app::metrics::allocator_stats();
    let mut body = app.metrics.render(&[
        (
            "jobboard_outbox_pending_events",
            "Events written to the outbox and not yet fanned out to webhook deliveries.",
            pending,
        ),
        (
            "jobboard_webhook_deliveries_pending",
            "Webhook deliveries waiting for an attempt (the delivery queue depth).",
            deliveries,
        ),
        (
            "jobboard_mail_queued",
            "Mails waiting to be handed to the SMTP server (the mail queue depth).",
            queued,
        ),
        (
            "jobboard_mail_failed",
            "Mails refused for good or out of retries, kept in the outbox.",
            failed,
        ),
        (
            "jobboard_db_page_cache_budget_bytes",
            "Bytes all SQLite page caches of this node may hold together (db_page_cache_mb; 0 on PostgreSQL).",
            app.db.page_cache_budget() as f64,
        ),
        (
            "jobboard_render_cache_budget_bytes",
            "Bytes all rendered caches of this node may hold together (render_cache_mb); jobboard_cache_bytes is what each holds.",
            app.config.render_cache as f64,
        ),
        (
            "jobboard_search_index_budget_bytes",
            "Bytes all in-memory search indexes of this node may hold together (search_index_mb).",
            indexes.budget() as f64,
        ),
        (
            "jobboard_search_index_bytes",
            "Bytes the in-memory search indexes of this node hold.",
            index_bytes as f64,
        ),
        (
            "jobboard_search_indexes",
            "Organizations whose jobs this node holds in an in-memory search index.",
            indexed as f64,
        ),
        (
            "jobboard_search_index_misplaced_jobs",
            "Jobs the search indexes of this node hold out of list order (they arrived too late, or were indexed again); a page that matches them sorts them.",
            wear.misplaced as f64,
        ),
        (
            "jobboard_search_index_forgotten_jobs",
            "Places the search indexes of this node hold for jobs removed or indexed again, until their organization's index is built again.",
            wear.forgotten as f64,
        ),
        (
            "jobboard_search_index_displacement",
            "The most places a job may be from its place in list order in any search index of this node (late arrivals within reach).",
            wear.displacement as f64,
        ),
        (
            "jobboard_retention_applications_deleted",
            "Applications this node deleted since it started because their organization keeps them for a limited time (keep_applications_days, keep_applications_after_job_days); also jobboard_retention_deleted_total{records=\"applications\"}.",
            app.metrics.retention.get("applications") as f64,
        ),
        (
            "jobboard_resident_memory_bytes",
            "Resident memory of this process.",
            resident_bytes().map_or(f64::NAN, |b| b as f64),
        ),
        (
            "jobboard_allocator_allocated_bytes",
            "Bytes the process has allocated and not freed, as its memory allocator counts them (NaN when the allocator does not say).",
            allocator.map_or(f64::NAN, |a| a.allocated as f64),
        ),
        (
            "jobboard_allocator_resident_bytes",
            "Bytes of memory the allocator keeps resident, its free pages not yet given back included (NaN when the allocator does not say).",
            allocator.map_or(f64::NAN, |a| a.resident as f64),
        ),
    ]);
    let caches = [
        ("jobs", app.jobs_cache.stats()),
        ("cms", app.cms_cache.stats()),
        ("pages", app.pages_cache.stats()),
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
    body.push_str(
        "# HELP jobboard_retention_deleted_total Rows this node deleted since it started because they had served their time (docs/operating.md, Retention), by what they were.\n# TYPE jobboard_retention_deleted_total counter\n",
    );
    for records in jobboard_app::metrics::RETAINED {
        body.push_str(&format!(
            "jobboard_retention_deleted_total{{records=\"{records}\"}} {}\n",
            app.metrics.retention.get(records)
        ));
    }
    for (name, kind, help, value) in series {
        body.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        for (cache, stats) in &caches {
            body.push_str(&format!("{name}{{cache=\"{cache}\"}} {}\n", value(stats)));
        }
    }
    let name = "jobboard_search_index_builds_total";
    body.push_str(&format!(
        "# HELP {name} Search indexes this node built since it started, by cause: first (none on this node yet), again (dropped for room, not kept up, or built for one list and not kept, needed again), worn (many jobs indexed again or removed).\n# TYPE {name} counter\n"
    ));
    for (cause, n) in indexes.builds() {
        body.push_str(&format!("{name}{{cause=\"{}\"}} {n}\n", cause.name()));
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// This process's resident memory, from `/proc` (Linux; `None` elsewhere).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}
