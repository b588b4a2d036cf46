//! Authentication and rate limiting of keyed routes.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::json;

use super::extract::Auth;
use jobboard_app::app::AppState;
use jobboard_app::error::ApiError;
use jobboard_domain::keys::secret::{hash_key, looks_like_key};
use jobboard_domain::keys::store as keys;
use jobboard_store::ratelimit::{self, Decision, WINDOW};

/// The API routes anyone may call without a key (each applies its own per-address limit).
const KEYLESS: &[&str] = &["/api/cms/{slug}/submit"];

/// Authenticates `x-api-key`, applies the key's read or write bucket, and adds the
/// `X-RateLimit-*` headers to the response. Failed authentications are limited per client
/// address.
pub async fn authenticate(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let keyless = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .is_some_and(|p| KEYLESS.contains(&p.as_str()));
    if keyless {
        return next.run(req).await;
    }
    let Some(raw) = req.headers().get("x-api-key") else {
        return ApiError::missing_api_key().into_response();
    };
    let key = raw.to_str().unwrap_or("").trim();
    if key.is_empty() {
        return ApiError::missing_api_key().into_response();
    }
    let write = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let found = if looks_like_key(key) {
        let hash = hash_key(key);
        match keys::reused(&app.db, &hash) {
            // SQLite: the key as read lately, while nothing was written since (see
            // `keys::authenticate`).
            Some(k) => Some((k, None, 0)),
            None => match lookup(&app, hash, write).await {
                Ok(found) => found,
                Err(res) => return res,
            },
        }
    } else {
        None
    };
    let Some((found, taken, place)) = found else {
        let ip = client_key(&app, &req);
        return refuse_credentials(&app, &ip, ApiError::invalid_api_key()).await;
    };
    let (suffix, limit) = if write {
        ("w", found.write_limit)
    } else {
        ("r", found.read_limit)
    };
    let limit = u32::try_from(limit).unwrap_or(u32::MAX).max(1);
    let decision = match taken {
        Some(t) => ratelimit::share(t.tat, t.taken, t.now, limit, place),
        None => match app
            .limiter
            .check(&format!("{}:{suffix}", found.id), limit)
            .await
        {
            Ok(d) => d,
            Err(e) => return ApiError::from(e).into_response(),
        },
    };
    app.record_key_use(found.id, app.clock.now());
    let mut res = if decision.allowed {
        req.extensions_mut().insert(Auth {
            org_id: found.org_id,
            key_id: found.id,
            scopes: found.scopes.into(),
            job_list_version: found.job_list_version,
        });
        next.run(req).await
    } else {
        rate_limited(decision).into_response()
    };
    set_limit_headers(res.headers_mut(), &decision);
    res
}

/// Answers a failed authentication with `error`, or `429` once the client address has
/// failed `auth_failure_limit` times in the window (against guessing).
/// `ip` is the client address as [`client_key`] gives it.
pub(super) async fn refuse_credentials(app: &AppState, ip: &str, error: ApiError) -> Response {
    match app
        .limiter
        .check(&format!("auth:{ip}"), app.config.auth_failure_limit)
        .await
    {
        Ok(d) if !d.allowed => rate_limited(d).into_response(),
        Ok(_) => error.into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// The client address that failed authentications are counted against.
pub(super) fn client_key(app: &AppState, req: &Request) -> String {
    jobboard_app::net::client_ip(req.extensions(), req.headers(), &app.config.trusted_proxies)
        .map_or_else(|| "unknown".into(), |ip| ip.to_string())
}

pub(super) fn rate_limited(d: Decision) -> ApiError {
    let mut e = ApiError::new(
        axum::http::StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        format!(
            "Rate limit of {} requests per {} seconds exceeded. Retry in {} seconds.",
            d.limit,
            WINDOW.as_secs(),
            d.retry_after_secs
        ),
        json!({ "limit": d.limit, "window_seconds": WINDOW.as_secs(), "retry_after_seconds": d.retry_after_secs }),
    );
    e.headers.push((
        axum::http::header::RETRY_AFTER,
        HeaderValue::from(d.retry_after_secs),
    ));
    let mut h = HeaderMap::new();
    set_limit_headers(&mut h, &d);
    e.headers
        .extend(h.into_iter().filter_map(|(k, v)| k.map(|k| (k, v))));
    e
}

fn set_limit_headers(h: &mut HeaderMap, d: &Decision) {
    h.insert("x-ratelimit-limit", HeaderValue::from(d.limit));
    h.insert("x-ratelimit-remaining", HeaderValue::from(d.remaining));
    h.insert("x-ratelimit-reset", HeaderValue::from(d.reset_unix));
}

/// The key with hash `hash`, looked up in the database: its row, what its rate limit gave
/// (PostgreSQL) and the caller's place in its round; or the error response.
async fn lookup(
    app: &AppState,
    hash: Vec<u8>,
    write: bool,
) -> Result<Option<(keys::KeyAuth, Option<keys::Taken>, usize)>, Response> {
    // Concurrent requests with one key share a lookup that starts after they arrived (see
    // `coalesce`), so a revocation is still seen by every later request. On PostgreSQL
    // the same statement takes the requests from the key's rate limit: one round trip for
    // a group of requests, the limit exact across nodes.
    let db = app.db.clone();
    let lookup = app
        .key_lookups
        .get((hash, write), move |(hash, write), n| {
            let db = db.clone();
            async move {
                match db.pg() {
                    Some(pool) => keys::authenticate_and_take(pool, &hash, write, n)
                        .await
                        .map(|found| found.map(|(k, taken)| (k, Some(taken)))),
                    None => keys::authenticate(&db, &hash)
                        .await
                        .map(|found| found.map(|k| (k, None))),
                }
                .map_err(Arc::new)
            }
        })
        .await;
    match lookup {
        Some((Ok(found), place)) => Ok(found.map(|(k, taken)| (k, taken, place))),
        Some((Err(e), _)) => Err(ApiError::internal(&e).into_response()),
        None => Err(ApiError::internal(&"key lookup failed").into_response()),
    }
}
