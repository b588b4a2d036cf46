//! The one error type of the API and its envelope
//! `{"error": {"message", "code", "details", "url"}}`.

use std::sync::OnceLock;

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

/// Base of the documentation links in errors (`{public_url}/api/docs/errors`).
static DOCS_BASE: OnceLock<String> = OnceLock::new();

/// Sets the absolute base URL of error links; without it links are relative.
pub fn set_public_url(public_url: &str) {
    let _ = DOCS_BASE.set(format!("{public_url}/api/docs/errors"));
}

pub fn docs_url(code: &str) -> String {
    let base = DOCS_BASE
        .get()
        .map(String::as_str)
        .unwrap_or("/api/docs/errors");
    format!("{base}#{code}")
}

tokio::task_local! {
    /// The id of the request being served, for error bodies and logs.
    pub static REQUEST_ID: String;
}

pub fn current_request_id() -> String {
    REQUEST_ID.try_with(Clone::clone).unwrap_or_default()
}

pub use jobboard_domain::FieldError;

/// Every error code the API answers with, its status and its documentation.
/// The `/api/docs/errors` page and the OpenAPI document are generated from this table.
pub const CODES: &[(&str, u16, &str)] = &[
    (
        "missing_api_key",
        401,
        "The request has no `x-api-key` header. Send the key of your organization in it.",
    ),
    (
        "invalid_api_key",
        401,
        "The `x-api-key` is not a key of this service, or it was revoked.",
    ),
    (
        "insufficient_scope",
        403,
        "The key is valid but lacks the scope this operation needs; `details.required` names it.",
    ),
    (
        "invalid_token",
        401,
        "`/metrics` needs `Authorization: Bearer <token>` when `metrics_token` is set; the header is missing or the token is wrong. Failures count against the failed-authentication limit of the client address.",
    ),
    (
        "bad_request",
        400,
        "The request is malformed in a way no more specific code describes: the server's HTTP layer refused it before any endpoint ran.",
    ),
    (
        "invalid_json",
        400,
        "The body is not valid JSON, not a JSON object, or has an object with the same key twice (at any depth). `details.line` and `details.column` locate the fault when known.",
    ),
    (
        "unsupported_media_type",
        415,
        "A request with a body must send `Content-Type: application/json`.",
    ),
    (
        "validation_failed",
        422,
        "One or more fields or query parameters are missing, of the wrong type, out of range, unknown, or refer to a record that does not exist. `details.fields` lists every one: `{field, code, message}`.",
    ),
    (
        "schema_validation_failed",
        422,
        "A CMS item's `data` does not match its collection's schema. `details.fields` lists every failing field.",
    ),
    (
        "not_found",
        404,
        "No record with this id or slug exists in your organization (records of other organizations are never visible). `details.resource` names the kind. A malformed id or slug in the path is answered the same way, including one whose percent-encoding is not valid UTF-8 (decoded with U+FFFD replacement characters, like query parameters, it can name no record).",
    ),
    (
        "route_not_found",
        404,
        "No endpoint has this path. See the API reference at /api/docs.",
    ),
    (
        "method_not_allowed",
        405,
        "The path exists but not with this method; `details.allowed` lists the methods it takes.",
    ),
    (
        "conflict",
        409,
        "The request conflicts with stored state, for example a member email already owned by another user id.",
    ),
    (
        "request_timeout",
        408,
        "The body did not arrive within the body-read time-out (`body_read_timeout`, 10 s by default; `details.timeout_seconds`): the client sent less than its `Content-Length`, or sent too slowly. Nothing was applied; the connection is closed.",
    ),
    (
        "payload_too_large",
        413,
        "The body is larger than the limit (`details.limit_bytes`, 1 MiB).",
    ),
    (
        "uri_too_long",
        414,
        "The request target (path and query) is longer than `details.limit_bytes` (8,192 bytes). Send long lists in several requests.",
    ),
    (
        "headers_too_large",
        431,
        "The header fields are larger than `details.limit_bytes` (32 KiB, counting each field's name, value and 4 bytes of separators) or more than `details.limit_count` (100).",
    ),
    (
        "rate_limited",
        429,
        "Too many requests for this key (or, for failed authentication, this address) in the window. Wait `Retry-After` seconds. `details`: `{limit, window_seconds, retry_after_seconds}`.",
    ),
    (
        "timeout",
        503,
        "The request took longer than the server's request time-out. It may or may not have been applied; retry reads freely and writes with care.",
    ),
    (
        "internal_error",
        500,
        "An unexpected error. Nothing about it is exposed; `details.request_id` identifies it in the server's logs.",
    ),
];

/// An API error: rendered as the envelope with its status code. Boxed, so results that
/// carry it stay small on the success path.
#[derive(Debug)]
pub struct ApiError(Box<ErrorParts>);

#[derive(Debug)]
pub struct ErrorParts {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Value,
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl std::ops::Deref for ApiError {
    type Target = ErrorParts;
    fn deref(&self) -> &ErrorParts {
        &self.0
    }
}

impl std::ops::DerefMut for ApiError {
    fn deref_mut(&mut self) -> &mut ErrorParts {
        &mut self.0
    }
}

impl ApiError {
    pub fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
        details: Value,
    ) -> Self {
        ApiError(Box::new(ErrorParts {
            status,
            code,
            message: message.into(),
            details,
            headers: Vec::new(),
        }))
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn missing_api_key() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "missing_api_key",
            "The x-api-key header is required.",
            Value::Null,
        )
    }

    pub fn invalid_api_key() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "invalid_api_key",
            "The API key is invalid or has been revoked.",
            Value::Null,
        )
    }

    pub fn insufficient_scope(required: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            format!("This API key lacks the scope {required}."),
            json!({ "required": required }),
        )
    }

    pub fn invalid_json(
        message: impl Into<String>,
        line: Option<usize>,
        column: Option<usize>,
    ) -> Self {
        let details = match (line, column) {
            (Some(l), Some(c)) => json!({ "line": l, "column": c }),
            _ => Value::Null,
        };
        Self::new(StatusCode::BAD_REQUEST, "invalid_json", message, details)
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Request bodies must be JSON, sent with Content-Type: application/json.",
            Value::Null,
        )
    }

    pub fn validation(fields: Vec<FieldError>) -> Self {
        let message = summary("Validation failed", &fields);
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
            message,
            json!({ "fields": fields }),
        )
    }

    pub fn field(field: &str, code: &'static str, message: impl Into<String>) -> Self {
        Self::validation(vec![FieldError::new(field, code, message)])
    }

    pub fn schema_validation(fields: Vec<FieldError>) -> Self {
        let message = summary(
            "The item data does not match the collection schema",
            &fields,
        );
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "schema_validation_failed",
            message,
            json!({ "fields": fields }),
        )
    }

    pub fn not_found(resource: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("No {resource} with this identifier exists."),
            json!({ "resource": resource }),
        )
    }

    pub fn route_not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "route_not_found",
            "No endpoint matches this path.",
            Value::Null,
        )
    }

    pub fn method_not_allowed(allowed: Vec<String>) -> Self {
        let message = format!("This endpoint accepts {}.", allowed.join(", "));
        let allow =
            HeaderValue::from_str(&allowed.join(", ")).unwrap_or(HeaderValue::from_static(""));
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            message,
            json!({ "allowed": allowed }),
        )
        .with_header(header::ALLOW, allow)
    }

    pub fn conflict(message: impl Into<String>, details: Value) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message, details)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("The request body is larger than {limit} bytes."),
            json!({ "limit_bytes": limit }),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message, Value::Null)
    }

    pub fn invalid_token() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "This endpoint needs Authorization: Bearer with the configured metrics token.",
            Value::Null,
        )
        .with_header(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"metrics\""),
        )
    }

    /// The body did not arrive in time. The connection is closed after the answer: the
    /// rest of the body may still be on its way and cannot be told from a next request.
    pub fn request_timeout(timeout: std::time::Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "The request body did not arrive within {} seconds.",
                timeout.as_secs_f64()
            ),
            json!({ "timeout_seconds": timeout.as_secs_f64() }),
        )
        .with_header(header::CONNECTION, HeaderValue::from_static("close"))
    }

    pub fn uri_too_long(limit: usize) -> Self {
        Self::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("The request URI is longer than {limit} bytes."),
            json!({ "limit_bytes": limit }),
        )
    }

    pub fn headers_too_large(limit_bytes: usize, limit_count: usize) -> Self {
        Self::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!(
                "The request header fields are larger than {limit_bytes} bytes or more than {limit_count}."
            ),
            json!({ "limit_bytes": limit_bytes, "limit_count": limit_count }),
        )
    }

    pub fn timeout() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "The request took too long and was stopped.",
            Value::Null,
        )
    }

    /// An unexpected failure. Its cause is logged here, with the request id, and never sent.
    pub fn internal(cause: &dyn std::fmt::Debug) -> Self {
        let request_id = current_request_id();
        tracing::error!(request_id = %request_id, error = ?cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "An unexpected error occurred. It has been logged.",
            json!({ "request_id": request_id }),
        )
    }

    /// The envelope body.
    pub fn body(&self) -> Value {
        json!({ "error": {
            "message": self.message,
            "code": self.code,
            "details": self.details,
            "url": docs_url(self.code),
        }})
    }
}

fn summary(prefix: &str, fields: &[FieldError]) -> String {
    match fields {
        [one] => format!("{prefix}: {}: {}", one.field, one.message),
        many => format!("{prefix} for {} fields.", many.len()),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(self.body())).into_response();
        for (k, v) in self.0.headers {
            res.headers_mut().insert(k, v);
        }
        res
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        ApiError::internal(&e)
    }
}

impl From<jobboard_store::StoreError> for ApiError {
    fn from(e: jobboard_store::StoreError) -> Self {
        ApiError::internal(&e)
    }
}

impl From<jobboard_domain::Error> for ApiError {
    fn from(e: jobboard_domain::Error) -> Self {
        use jobboard_domain::Error as E;
        match e {
            E::Invalid(fields) => ApiError::validation(fields),
            E::Schema(fields) => ApiError::schema_validation(fields),
            E::NotFound(resource) => ApiError::not_found(resource),
            E::Conflict { message, details } => ApiError::conflict(message, details),
            E::Unavailable { code, message } => {
                ApiError::new(StatusCode::CONFLICT, code, message, Value::Null)
            }
            E::Store(e) => ApiError::internal(&e),
            E::Internal(what) => ApiError::internal(&what),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        ApiError::internal(&e)
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// What an unknown path answers: the `page` for a browser (it asks for `text/html`)
/// outside `/api`, the error envelope otherwise.
pub fn unknown_path(
    path: &str,
    headers: &axum::http::HeaderMap,
    page: impl FnOnce() -> axum::response::Response,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let api = path == "/api" || path.starts_with("/api/");
    let wants_html = headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"));
    if !api && wants_html {
        page()
    } else {
        ApiError::route_not_found().into_response()
    }
}
