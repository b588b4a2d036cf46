//! Answering reads from a [`jobboard_core::cache`]: conditional requests and the cache bypass.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use jobboard_core::cache::{self, Rendered};

/// True when the client asked not to be served a stored response (`Cache-Control: no-cache`).
pub fn bypass(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|d| d.trim().eq_ignore_ascii_case("no-cache"))
        })
}

/// The response of a rendered read: its JSON body with a strong `ETag` and
/// `cache_control`, or `304 Not Modified` when `If-None-Match` names that ETag.
pub fn respond(rendered: Rendered, headers: &HeaderMap, cache_control: HeaderValue) -> Response {
    let not_modified = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| cache::none_match(v, &rendered.etag));
    let etag = HeaderValue::from_str(&rendered.etag);
    let mut res = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(Body::from(rendered.body));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    };
    if let Ok(etag) = etag {
        res.headers_mut().insert(header::ETAG, etag);
    }
    res.headers_mut()
        .insert(header::CACHE_CONTROL, cache_control);
    res
}
