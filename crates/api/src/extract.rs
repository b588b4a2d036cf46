//! Extractors: the authenticated caller, the JSON body, the query string, path ids.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request},
    http::{header, request::Parts},
};
use serde_json::Value;
use uuid::Uuid;

use jobboard_app::error::{ApiError, ApiResult};
use jobboard_domain::keys::secret as auth;
use jobboard_domain::{Input, OrgId, QueryInput, kind::parse_uuid};

/// The largest accepted request body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

tokio::task_local! {
    /// The time a request body may take to arrive (`body_read_timeout`), set for each
    /// request by the outermost middleware.
    pub static BODY_READ_TIMEOUT: std::time::Duration;
}

/// The body-read time-out outside a request (tests of extractors): the default setting.
const DEFAULT_BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The organization and key a request was authenticated as (set by the auth middleware).
#[derive(Debug, Clone)]
pub struct Auth {
    pub org_id: OrgId,
    pub key_id: Uuid,
    pub scopes: std::sync::Arc<str>,
    /// The organization's job list version when the key was read (before anything else
    /// of the request), for the job list cache.
    pub job_list_version: i64,
}

impl Auth {
    /// Fails with `403 insufficient_scope` unless the key holds `scope`.
    pub fn require(&self, scope: &str) -> ApiResult<()> {
        if auth::grants(&self.scopes, scope) {
            Ok(())
        } else {
            Err(ApiError::insufficient_scope(scope))
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Auth>()
            .cloned()
            .ok_or_else(ApiError::missing_api_key)
    }
}

/// A JSON object body: `415` without a JSON content type, `413` over 1 MiB, `400
/// invalid_json` (with line and column) when it does not parse or is not an object.
pub struct JsonBody(pub Input);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(JsonBody(read_object(req, MAX_BODY_BYTES).await?))
    }
}

/// A JSON object body of at most [`FORM_BODY_BYTES`]: the body of a keyless submission,
/// held to the size of a board form.
pub struct FormSizedJsonBody(pub Input);

/// The largest keyless submission: the size limit of the board's forms.
pub const FORM_BODY_BYTES: usize = jobboard_app::MAX_FORM_BYTES;

impl<S: Send + Sync> FromRequest<S> for FormSizedJsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(FormSizedJsonBody(read_object(req, FORM_BODY_BYTES).await?))
    }
}

/// The body as a JSON object of at most `limit` bytes.
async fn read_object(req: Request, limit: usize) -> ApiResult<Input> {
    if !is_json(req.headers().get(header::CONTENT_TYPE)) {
        return Err(ApiError::unsupported_media_type());
    }
    let bytes = read_limited(req.into_body(), limit).await?;
    match parse_json(&bytes)? {
        Value::Object(map) => Ok(Input::new(map)),
        _ => Err(ApiError::invalid_json(
            "The request body must be a JSON object.",
            None,
            None,
        )),
    }
}

/// Bodies past the limit are still read (and dropped) up to this size, so that the client,
/// which is usually still sending, receives the 413 instead of a reset connection.
const DRAIN_BYTES: usize = 16 * MAX_BODY_BYTES;

/// Reads the body up to `limit` bytes; `413 payload_too_large` beyond. The whole
/// body must arrive within the body-read time-out, else `408 request_timeout`: a client
/// that sends less than its `Content-Length` (or trickles) is answered then, and its
/// connection closed, rather than holding it until the request time-out.
async fn read_limited(body: axum::body::Body, limit: usize) -> ApiResult<Bytes> {
    use http_body_util::BodyExt;
    let timeout = BODY_READ_TIMEOUT
        .try_with(|t| *t)
        .unwrap_or(DEFAULT_BODY_READ_TIMEOUT);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut body = body;
    let mut buf: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            // Already too large: the 413 says more than the time-out.
            Err(_) if seen > limit => break,
            Err(_) => return Err(ApiError::request_timeout(timeout)),
        };
        let frame = frame.map_err(|_| {
            ApiError::invalid_json("The request body could not be read.", None, None)
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen > limit {
            buf = Vec::new();
            if seen > DRAIN_BYTES {
                break;
            }
            continue;
        }
        buf.extend_from_slice(&data);
    }
    if seen > limit {
        return Err(ApiError::payload_too_large(limit));
    }
    Ok(Bytes::from(buf))
}

/// Parses a body; `400 invalid_json` (with line and column) when it is not JSON or has an
/// object with a repeated key.
pub fn parse_json(bytes: &[u8]) -> ApiResult<Value> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid_json(
            "The request body is empty; a JSON object is required.",
            None,
            None,
        ));
    }
    super::strict_json::from_slice(bytes).map_err(|e| {
        ApiError::invalid_json(
            format!("The request body is not valid JSON: {e}"),
            Some(e.line()),
            Some(e.column()),
        )
    })
}

fn is_json(ct: Option<&header::HeaderValue>) -> bool {
    let Some(ct) = ct.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// The raw query string, validated by the handler.
pub struct Query(pub QueryInput);

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Query(QueryInput::parse(parts.uri.query())))
    }
}

/// Parses a path id; a malformed one is answered like an unknown one (`404 not_found`).
pub fn path_id<T: From<Uuid>>(raw: &str, resource: &str) -> ApiResult<T> {
    parse_uuid(raw)
        .map(T::from)
        .ok_or_else(|| ApiError::not_found(resource))
}

/// The client's address (see [`jobboard_app::net::client_ip`]).
pub struct ClientAddr(pub Option<std::net::IpAddr>);

impl FromRequestParts<jobboard_app::app::AppState> for ClientAddr {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &jobboard_app::app::AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(jobboard_app::net::client_ip(
            &parts.extensions,
            &parts.headers,
            &app.config.trusted_proxies,
        )))
    }
}
