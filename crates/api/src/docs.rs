//! The API description: the OpenAPI 3.1 document built from the handlers, the bundled
//! Swagger UI at `/api/docs` (no internet needed), and the error code reference.

use axum::{
    Router,
    http::{HeaderValue, header},
    response::Html,
    routing::get,
};
use serde::Serialize;
use serde_json::Value;
use utoipa::{
    OpenApi as _, ToSchema,
    openapi::{
        ContentBuilder, OpenApi, Ref, ResponseBuilder,
        path::Operation,
        security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme},
    },
};
use utoipa_swagger_ui::{Config, SwaggerUi};

use jobboard_app::app::AppState;

use jobboard_app::error::CODES;

/// The error envelope every failure is answered with.
#[derive(Serialize, ToSchema)]
pub struct Error {
    pub error: ErrorObject,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorObject {
    /// Human-readable text.
    pub message: String,
    /// Machine-readable code; see /api/docs/errors.
    #[schema(example = "validation_failed")]
    pub code: String,
    /// Additional detail: an object (for `validation_failed`: `{fields: [{field, code, message}]}`) or null.
    #[schema(value_type = Option<Object>)]
    pub details: Value,
    /// Link to the documentation of this code.
    pub url: String,
}

/// Paging metadata of list endpoints.
#[derive(Serialize, ToSchema)]
pub struct Pagination {
    pub current_page: i64,
    pub per_page: i64,
    pub total_items: i64,
    pub total_pages: i64,
    pub has_more: bool,
}

impl Pagination {
    /// Page `page` of `per_page` items out of `total`.
    pub fn of(page: i64, per_page: i64, total: i64) -> Pagination {
        let total_pages = (total + per_page - 1) / per_page;
        Pagination {
            current_page: page,
            per_page,
            total_items: total,
            total_pages,
            has_more: page < total_pages,
        }
    }
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Job Board Service API",
        description = "REST API of one organization's job board: jobs, members with subscriptions and payments, \
CMS collections and items, webhook subscriptions and analytics. Every call needs the `x-api-key` header. \
Failures use the envelope `{error: {message, code, details, url}}`; the codes are listed at /api/docs/errors. \
Rate limits per key: 100 reads (GET) and 30 writes (POST, PATCH, DELETE) per minute, reported in \
`X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a `429` carries `Retry-After`. \
Request bodies are JSON objects of at most 1 MiB; unknown fields are rejected.",
        version = env!("CARGO_PKG_VERSION"),
        contact(name = "The operator of this job board"),
    ),
    servers((url = "/api", description = "This server")),
    tags(
        (name = "jobs", description = "Job posts: list and search the live ones, create, change, approve, expire and delete."),
        (name = "categories", description = "The organization's job categories."),
        (name = "members", description = "Members of the board, synced from a membership platform, with their access records (subscriptions) and payments."),
        (name = "plans", description = "What members subscribe to."),
        (name = "applications", description = "Applications to jobs and their review status."),
        (name = "cms", description = "CMS collections with a schema, and their items, published in time windows."),
        (name = "webhooks", description = "Subscriptions to events, delivered signed and retried, with their delivery log."),
        (name = "analytics", description = "Page views, job views and apply clicks of the board, and the figures read from them."),
        (name = "alerts", description = "Job alerts visitors subscribed to on the board (confirmed by mail): list, export, delete."),
        (name = "audit", description = "What the organization's staff did in the dashboard: sign-ins, sign-outs and every change, with who, when and from which address."),
    ),
    components(schemas(Error, ErrorObject, Pagination)),
)]
struct ApiDoc;

pub fn base_document() -> OpenApi {
    ApiDoc::openapi()
}

/// Adds what every operation shares: the key requirement and the error responses.
pub fn finish(mut doc: OpenApi) -> OpenApi {
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "api_key",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "x-api-key",
            "Your organization's API key (`jb_...`).",
        ))),
    );
    doc.security = Some(vec![SecurityRequirement::new(
        "api_key",
        Vec::<String>::new(),
    )]);
    super::links::each_operation(&mut doc, add_error_responses);
    super::links::add(&mut doc);
    doc
}

fn add_error_responses(op: &mut Operation) {
    let has_body = op.request_body.is_some();
    let mut statuses: Vec<(u16, &str)> = vec![
        (401, "Missing or invalid API key."),
        (403, "The key lacks the scope this operation needs."),
        (
            404,
            "Not found: unknown id or slug, or a record of another organization.",
        ),
        (
            422,
            "Validation failed; every bad field or query parameter is listed.",
        ),
        (414, "The URI is longer than 8 KiB."),
        (429, "Rate limit exceeded; see Retry-After."),
        (
            431,
            "The header fields are larger than 32 KiB or more than 100.",
        ),
        (500, "Unexpected error; details carry the request id."),
        (503, "The request timed out."),
    ];
    if has_body {
        statuses.extend([
            (400, "The body is not valid JSON or not an object."),
            (
                408,
                "The body did not arrive within the body-read time-out.",
            ),
            (409, "The request conflicts with stored state."),
            (413, "The body is larger than 1 MiB."),
            (415, "The body is not sent as application/json."),
        ]);
    }
    for (status, text) in statuses {
        op.responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| {
                ResponseBuilder::new()
                    .description(text)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Error")))
                            .build(),
                    )
                    .build()
                    .into()
            });
    }
}

pub fn routes(doc: OpenApi) -> Router<AppState> {
    // No online validator: Swagger UI would otherwise send the document's address to a
    // remote host (and the page's Content-Security-Policy would block the badge anyway).
    let ui = SwaggerUi::new("/api/docs")
        .url("/api/openapi.json", doc)
        .config(Config::default().validator_url("none"));
    let ui = Router::<AppState>::new()
        .merge(ui)
        .layer(axum::middleware::map_response(docs_policy));
    Router::new()
        .merge(ui)
        .route("/api/docs/errors", get(errors_page))
        .route("/api/docs/errors.css", get(errors_css))
}

/// The one inline style Swagger UI needs: the `<style>` element of its logo (in
/// swagger-ui-standalone-preset.js). `scripts/docs-check.sh` fails on any policy
/// violation, so a new Swagger UI version with other inline styles is noticed.
const SWAGGER_LOGO_STYLE: &str = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/// The Swagger UI page's Content-Security-Policy: the pages' policy
/// ([`super::edge::HTML_CSP`]) with the logo's style allowed by its hash.
fn docs_csp() -> &'static HeaderValue {
    static CSP: std::sync::OnceLock<HeaderValue> = std::sync::OnceLock::new();
    CSP.get_or_init(|| {
        let policy = super::edge::HTML_CSP.replacen(
            "style-src 'self'",
            &format!("style-src 'self' {SWAGGER_LOGO_STYLE}"),
            1,
        );
        HeaderValue::from_str(&policy).expect("a valid header value")
    })
}

async fn docs_policy(mut res: axum::response::Response) -> axum::response::Response {
    let html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/html"));
    if html {
        res.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, docs_csp().clone());
    }
    res
}

/// The style of the errors page, served as a file: the pages' Content-Security-Policy
/// allows no inline style.
const ERRORS_CSS: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.4rem .6rem;text-align:left;vertical-align:top}\
tr:target{background:#fff4c2}code{background:#f3f3f3;padding:0 .2rem}\n";

async fn errors_css() -> impl axum::response::IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        ERRORS_CSS,
    )
}

/// Every error code with its status and meaning; each has an anchor (`#code`).
async fn errors_page() -> Html<String> {
    let mut rows = String::new();
    for (code, status, text) in CODES {
        rows.push_str(&format!(
            "<tr id=\"{code}\"><td><a href=\"#{code}\"><code>{code}</code></a></td><td>{status}</td><td>{}</td></tr>\n",
            markdown_code(text)
        ));
    }
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Errors - Job Board Service API</title>\
<link rel=\"stylesheet\" href=\"/api/docs/errors.css\"></head><body>\
<h1>Error codes</h1><p>Every failed request is answered with <code>{{\"error\": {{\"message\", \"code\", \"details\", \"url\"}}}}</code>. \
The <code>url</code> points to the row of its code on this page. Full API reference: <a href=\"/api/docs/\">/api/docs</a>.</p>\
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>\n{rows}</tbody></table></body></html>"
    ))
}

/// Renders `backticks` as <code> (the texts are ours; no user input reaches this page).
fn markdown_code(text: &str) -> String {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}
