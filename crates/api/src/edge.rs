//! What every request and response passes through at the edge of the service, before
//! and after any handler: path decoding, size limits of the request head, the error
//! envelope for answers the framework makes itself, and the security headers.

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderMap, HeaderValue, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use jobboard_app::error::ApiError;

/// The longest request target (path and query) we answer. Far below the HTTP parser's own
/// limit (64 KiB, answered by it with an empty 414), so oversized URIs get the envelope.
/// The longest URI of the API (100 ids in `jobIds`) is under 4 KiB.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// The largest header section we answer, counting each field's name, value and 4 bytes of
/// separators. Far below the HTTP parser's buffer (about 400 KiB, answered by it with an
/// empty 431).
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// The most header fields we answer. The HTTP parser is configured to accept up to
/// [`super::serve::PARSER_MAX_HEADERS`], so that up to there the envelope is ours.
pub const MAX_HEADER_COUNT: usize = 100;

/// The policy of HTML pages: only our own scripts, styles, images (and the `data:` images
/// of Swagger UI's style sheet) and API calls; no inline script or style, no framing, no
/// forms, no `<base>`.
pub const HTML_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
form-action 'none'; frame-ancestors 'none'";

/// The policy of everything else (JSON, text, scripts and style sheets served as files):
/// nothing may load or frame it as a document.
pub const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Replaces each path segment whose percent-decoding is not UTF-8 by its decoding with
/// U+FFFD replacement characters (re-encoded), the way query strings are decoded. Runs
/// before routing, so a parameter the framework could not decode reaches the handler like
/// any other malformed id or slug (which names no record: `404 not_found`, after the key
/// and scope checks) instead of being refused by the framework in plain text. Other
/// segments keep their exact bytes.
pub fn decode_path(mut req: Request) -> Request {
    if let Some(uri) = lossy_uri(req.uri()) {
        *req.uri_mut() = uri;
    }
    req
}

fn lossy_uri(uri: &Uri) -> Option<Uri> {
    let path = uri.path();
    if !path.contains('%') {
        return None;
    }
    let mut out = String::with_capacity(path.len() + 8);
    let mut changed = false;
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let decoded = percent_decode_str(segment);
        if decoded.clone().decode_utf8().is_ok() {
            out.push_str(segment);
        } else {
            changed = true;
            out.extend(utf8_percent_encode(
                &decoded.decode_utf8_lossy(),
                NON_ALPHANUMERIC,
            ));
        }
    }
    if !changed {
        return None;
    }
    if let Some(q) = uri.query() {
        out.push('?');
        out.push_str(q);
    }
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(out.parse().ok()?);
    Uri::from_parts(parts).ok()
}

/// `414 uri_too_long` or `431 headers_too_large` for a request head past our limits.
pub fn check_head(req: &Request) -> Result<(), ApiError> {
    let uri = req.uri();
    let target = uri.path_and_query().map_or(0, |p| p.as_str().len())
        + uri.authority().map_or(0, |a| a.as_str().len());
    if target > MAX_URI_BYTES {
        return Err(ApiError::uri_too_long(MAX_URI_BYTES));
    }
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if headers.len() > MAX_HEADER_COUNT || bytes > MAX_HEADER_BYTES {
        return Err(ApiError::headers_too_large(
            MAX_HEADER_BYTES,
            MAX_HEADER_COUNT,
        ));
    }
    Ok(())
}

/// Puts an error the framework answered itself (not JSON: a plain-text rejection, an
/// empty 404 of the bundled docs) into the envelope. `405` is handled by the caller, which
/// knows the allowed methods.
pub fn envelope(res: Response) -> Response {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error())
        || is_json(res.headers())
        || is_html(res.headers())
    {
        return res;
    }
    let error = match status {
        StatusCode::NOT_FOUND => ApiError::route_not_found(),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::payload_too_large(super::MAX_BODY_BYTES),
        StatusCode::URI_TOO_LONG => ApiError::uri_too_long(MAX_URI_BYTES),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::unsupported_media_type(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => {
            ApiError::headers_too_large(MAX_HEADER_BYTES, MAX_HEADER_COUNT)
        }
        s if s.is_server_error() => ApiError::internal(&format_args!(
            "the framework answered {s} without an error body"
        )),
        s => {
            // Every other client error of the framework is about the request's form (an
            // undecodable path parameter, say); its plain text is not passed on.
            tracing::debug!(
                status = s.as_u16(),
                "framework rejection answered as bad_request"
            );
            ApiError::bad_request("The request is malformed.")
        }
    };
    error.into_response()
}

/// An HTML page (the board and the dashboard answer their errors as pages).
fn is_html(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .trim_ascii_start()
            .get(..9)
            .is_some_and(|t| t.eq_ignore_ascii_case(b"text/html"))
    })
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("application/json")
        })
}

/// Adds the security headers every response carries; a handler's own
/// `Content-Security-Policy` or `Referrer-Policy` is kept.
pub fn secure(res: &mut Response<Body>) {
    let html = is_html(res.headers());
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.entry(header::REFERRER_POLICY)
        .or_insert(HeaderValue::from_static("no-referrer"));
    h.entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(if html {
            HTML_CSP
        } else {
            DEFAULT_CSP
        }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(path: &str) -> Option<String> {
        lossy_uri(&path.parse().unwrap()).map(|u| u.to_string())
    }

    #[test]
    fn only_undecodable_segments_are_rewritten() {
        assert_eq!(rewrite("/api/jobs/abc"), None);
        assert_eq!(rewrite("/api/cms/caf%C3%A9/x%2Fy"), None);
        assert_eq!(
            rewrite("/api/jobs/%FF").as_deref(),
            Some("/api/jobs/%EF%BF%BD")
        );
        // The other segments and the query keep their bytes.
        assert_eq!(
            rewrite("/api/cms/a%2Fb/%C3%28x?q=%FF&r=1").as_deref(),
            Some("/api/cms/a%2Fb/%EF%BF%BD%28x?q=%FF&r=1")
        );
        // A truncated sequence is undecodable too; a malformed escape is left alone.
        assert_eq!(rewrite("/x/%E2%82").as_deref(), Some("/x/%EF%BF%BD"));
        assert_eq!(rewrite("/x/%G1"), None);
    }
}
