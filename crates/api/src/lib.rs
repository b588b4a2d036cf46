//! The JSON API: routes, middleware and the OpenAPI document. It knows nothing of SQL;
//! handlers call the operations of `jobboard_domain`. The pages (`jobboard_pages`) are
//! mounted beside it by the server, behind the same middleware ([`router`]).

#![forbid(unsafe_code)]

mod auth;
mod cached;
pub mod docs;
pub mod edge;
pub mod extract;
mod links;

mod ops;
mod parser_refusals;
pub mod serve;
pub mod strict_json;

pub mod alerts;
pub mod analytics;
pub mod applications;
pub mod audit;
pub mod categories;
pub mod cms;
pub mod jobs;
pub mod members;
pub mod payments;
pub mod plans;
pub mod webhooks;

use std::{collections::HashMap, sync::Arc, time::Instant};

use axum::{
    Router,
    body::Body,
    extract::{DefaultBodyLimit, MatchedPath, Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

use jobboard_app::app::AppState;

use jobboard_app::error::{ApiError, REQUEST_ID};

pub use extract::{Auth, JsonBody, MAX_BODY_BYTES, Query};

/// Every keyed API route, with its OpenAPI description. Paths are relative to `/api`.
/// Each resource module contributes its routes here.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(docs::base_document())
        .merge(categories::routes())
        .merge(members::routes())
        .merge(payments::routes())
        .merge(plans::routes())
        .merge(applications::routes())
        .merge(analytics::routes())
        .merge(alerts::routes())
        .merge(audit::routes())
        .merge(cms::routes())
        .merge(webhooks::routes())
        .merge(jobs::routes())
}

/// The OpenAPI document, exactly as served at `/api/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    docs::finish(api_routes().split_for_parts().1)
}

/// What the board and the dashboard add to the router: their routes (at the root, outside
/// `/api`) and the page a browser is shown for an unknown address.
pub struct Pages {
    pub routes: Router<AppState>,
    pub not_found: fn() -> Response,
}

impl Pages {
    /// No pages: unknown addresses answer with the error envelope.
    pub fn none() -> Pages {
        Pages {
            routes: Router::new(),
            not_found: || ApiError::route_not_found().into_response(),
        }
    }
}

/// The whole application router: the API, its document, the operations routes and
/// `pages`, behind the same middleware.
pub fn router(state: AppState, pages: Pages) -> Router {
    let (api, doc) = api_routes().split_for_parts();
    let doc = docs::finish(doc);
    let allowed = Arc::new(allowed_methods(&doc));
    let api = api.route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::authenticate,
    ));
    // With a separate operations listener, /metrics is served there only; on this
    // listener, which the public reaches, only behind a token.
    let metrics_here =
        state.config.metrics_listen.is_none() && state.config.metrics_token.is_some();
    let routes = Router::new()
        .nest("/api", api)
        .merge(docs::routes(doc))
        .merge(ops::routes(metrics_here))
        .merge(pages.routes);
    finish(state, routes, allowed, pages.not_found)
}

/// The router of the separate operations listener (`metrics_listen`): `/metrics`,
/// `/healthz` and `/readyz`, behind the same middleware.
pub fn ops_router(state: AppState) -> Router {
    finish(
        state,
        ops::routes(true),
        Arc::default(),
        Pages::none().not_found,
    )
}

/// `routes` behind the middleware every request passes: path decoding (before routing),
/// then `observe`, panics caught, the fallback (`page` for a browser outside `/api`).
fn finish(
    state: AppState,
    routes: Router<AppState>,
    allowed: Arc<Allowed>,
    page: fn() -> Response,
) -> Router {
    let inner = routes
        .fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap| async move {
                not_found(&uri, &headers, page)
            },
        )
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn_with_state(
            (state.clone(), allowed),
            observe,
        ))
        .with_state(state);
    // A layer of a router runs after its routing: the inner router is this one's
    // fallback so that the path is decoded before the inner router routes it.
    Router::new()
        .fallback_service(inner)
        .layer(tower::util::MapRequestLayer::new(
            edge::decode_path as fn(Request) -> Request,
        ))
}

/// An unknown path: see [`jobboard_app::error::unknown_path`].
fn not_found(
    uri: &axum::http::Uri,
    headers: &axum::http::HeaderMap,
    page: fn() -> Response,
) -> Response {
    jobboard_app::error::unknown_path(uri.path(), headers, page)
}

/// Outermost middleware: request id (accepted from `X-Request-Id` when sane), limits of the
/// request head, request and body-read time-outs, error-envelope normalisation, security
/// headers, metrics and the access log.
async fn observe(
    State((app, allowed)): State<(AppState, Arc<Allowed>)>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|s| {
            !s.is_empty()
                && s.len() <= 64
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(String::from)
        .unwrap_or_else(|| Uuid::now_v7().to_string());
    // The matched path is shared (reference counted), not copied.
    let route = req.extensions().get::<MatchedPath>().cloned();
    let method = req.method().clone();
    let route_for_405 = route.clone();
    let timeout = app.config.request_timeout;
    let body_timeout = app.config.body_read_timeout;
    let head = edge::check_head(&req);
    let mut res = REQUEST_ID
        .scope(id.clone(), async move {
            if let Err(e) = head {
                return e.into_response();
            }
            let run = extract::BODY_READ_TIMEOUT.scope(body_timeout, next.run(req));
            match tokio::time::timeout(timeout, run).await {
                Ok(res) => normalize(
                    res,
                    route_for_405.as_ref().and_then(|r| allowed.get(r.as_str())),
                ),
                Err(_) => ApiError::timeout().into_response(),
            }
        })
        .await;
    edge::secure(&mut res);
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert("x-request-id", v);
    }
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    let status = res.status().as_u16();
    let elapsed = start.elapsed();
    app.metrics.observe(route, method.as_str(), status, elapsed);
    if status >= 500 {
        tracing::warn!(request_id = %id, %method, route, status, latency_ms = elapsed.as_secs_f64() * 1e3, "request failed");
    } else {
        tracing::debug!(request_id = %id, %method, route, status, latency_ms = elapsed.as_secs_f64() * 1e3, "request");
    }
    res
}

/// Methods of each documented path, keyed by the router's path pattern (`/api/jobs/{id}`).
type Allowed = HashMap<String, Vec<String>>;

fn allowed_methods(doc: &utoipa::openapi::OpenApi) -> Allowed {
    doc.paths
        .paths
        .iter()
        .map(|(path, item)| {
            let mut methods = Vec::new();
            for (m, op) in [
                ("GET", &item.get),
                ("POST", &item.post),
                ("PUT", &item.put),
                ("PATCH", &item.patch),
                ("DELETE", &item.delete),
            ] {
                if op.is_some() {
                    methods.push(m.to_string());
                }
            }
            if item.get.is_some() {
                methods.insert(1, "HEAD".to_string());
            }
            (format!("/api{path}"), methods)
        })
        .collect()
}

/// Puts framework-generated errors (405 from the router, any other error answered without
/// a JSON body) into the error envelope.
fn normalize(res: Response, allowed: Option<&Vec<String>>) -> Response {
    if res.status() == StatusCode::METHOD_NOT_ALLOWED
        && !res.headers().contains_key(header::CONTENT_TYPE)
    {
        let from_header: Vec<String> = res
            .headers()
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
            .map(|s| {
                s.split(',')
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let allowed = if from_header.is_empty() {
            allowed.cloned().unwrap_or_default()
        } else {
            from_header
        };
        return ApiError::method_not_allowed(allowed).into_response();
    }
    edge::envelope(res)
}

/// A panic in a handler is answered `500 internal_error` with the request id; the panic
/// message is logged, never sent.
fn panic_response(err: Box<dyn std::any::Any + Send + 'static>) -> Response<Body> {
    let msg = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("panic");
    ApiError::internal(&format_args!("handler panicked: {msg}")).into_response()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::{body::Body, http::Request, routing::get};
    use tower::ServiceExt;

    use super::*;
    use jobboard_app::app::App;
    use jobboard_app::config::Config;

    async fn app_with(extra: Router<AppState>, timeout: Duration) -> Router {
        let mut config = Config::with_database("sqlite::memory:");
        config.request_timeout = timeout;
        let app = App::start(config).await.unwrap();
        router(
            app,
            Pages {
                routes: extra,
                ..Pages::none()
            },
        )
    }

    async fn call(router: Router, path: &str) -> (StatusCode, serde_json::Value, Option<String>) {
        let res = router
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let id = res
            .headers()
            .get("x-request-id")
            .map(|v| v.to_str().unwrap().to_string());
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap(), id)
    }

    #[tokio::test]
    async fn a_panic_is_answered_500_with_the_request_id() {
        async fn boom() -> &'static str {
            panic!("secret internals")
        }
        let extra = Router::new().route("/boom", get(boom));
        let (status, body, id) = call(app_with(extra, Duration::from_secs(5)).await, "/boom").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"]["code"], "internal_error");
        assert_eq!(
            body["error"]["details"]["request_id"].as_str(),
            id.as_deref()
        );
        assert!(!body.to_string().contains("secret"));
    }

    #[tokio::test]
    async fn framework_rejections_are_answered_with_the_envelope() {
        // A typed path parameter the framework cannot parse: its plain-text 400.
        async fn typed(axum::extract::Path(n): axum::extract::Path<u32>) -> String {
            n.to_string()
        }
        let extra = Router::new().route("/typed/{n}", get(typed));
        let router = app_with(extra, Duration::from_secs(5)).await;
        let (status, body, _) = call(router.clone(), "/typed/abc").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], "bad_request");
        assert!(!body.to_string().contains("Cannot parse"), "{body}");
        // Undecodable UTF-8 reaches the extractor decoded with replacement characters.
        let (status, body, _) = call(router, "/typed/%FF").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], "bad_request");
    }

    #[tokio::test]
    async fn a_slow_request_is_answered_503_timeout() {
        let extra = Router::new().route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        );
        // The handler never finishes; the time-out answers for it.
        let (status, body, _) =
            call(app_with(extra, Duration::from_millis(50)).await, "/slow").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["error"]["code"], "timeout");
    }
}
