//! The dashboard's cookies: the session's, the sign-in pages', and a pending second
//! sign-in step's, each `__Host-` prefixed, `Secure`, `HttpOnly` and `SameSite=Lax` when
//! the service is reached over HTTPS; how they are set and read.

use axum::{
    http::{HeaderMap, HeaderValue, header},
    response::Response,
};

use jobboard_app::app::App;

/// The session cookie's name without its prefix.
const SESSION: &str = "jobboard_session";
/// The sign-in pages' cookie (binds their forms to this browser).
pub(super) const LOGIN: &str = "jobboard_login";
/// The cookie of a sign-in waiting for its second step.
const PENDING: &str = "jobboard_2fa";

fn secure(app: &App) -> bool {
    app.config.public_url.starts_with("https://")
}

/// The cookie's name: `__Host-` prefixed when cookies are `Secure`.
pub(crate) fn cookie_name(app: &App, base: &str) -> String {
    if secure(app) {
        format!("__Host-{base}")
    } else {
        base.to_string()
    }
}

/// A `Set-Cookie` value: `value` for the browser session, or removal when `None`.
pub(crate) fn set_cookie(app: &App, base: &str, value: Option<&str>) -> HeaderValue {
    let name = cookie_name(app, base);
    let secure = if secure(app) { "; Secure" } else { "" };
    let v = match value {
        Some(v) => format!("{name}={v}; Path=/; HttpOnly; SameSite=Lax{secure}"),
        None => format!("{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax{secure}"),
    };
    HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The value of cookie `name` in the request.
pub(crate) fn read_cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty() && v.len() <= 128)
}

/// Adds `Set-Cookie` for the session (a new one, or its removal) to `res`.
pub fn with_session_cookie(app: &App, res: Response, id: Option<&str>) -> Response {
    with_cookie(app, res, SESSION, id)
}

/// Adds `Set-Cookie` for cookie `base` (a new value, or its removal) to `res`.
pub(crate) fn with_cookie(
    app: &App,
    mut res: Response,
    base: &str,
    value: Option<&str>,
) -> Response {
    res.headers_mut()
        .append(header::SET_COOKIE, set_cookie(app, base, value));
    res
}

/// The name of the session cookie (with its prefix, when cookies are `Secure`).
pub fn session_cookie_name(app: &App) -> String {
    cookie_name(app, SESSION)
}

/// The session id the request's cookie carries, if any (live or not).
pub fn session_cookie(app: &App, headers: &HeaderMap) -> Option<String> {
    read_cookie(headers, &cookie_name(app, SESSION))
}

/// Adds `Set-Cookie` for a pending sign-in (a new one, or its removal) to `res`.
pub fn with_pending_cookie(app: &App, res: Response, id: Option<&str>) -> Response {
    with_cookie(app, res, PENDING, id)
}

/// The pending sign-in id the request's cookie carries, if any.
pub fn pending_cookie(app: &App, headers: &HeaderMap) -> Option<String> {
    read_cookie(headers, &cookie_name(app, PENDING))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_exact_name() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; jobboard_session_x=2; jobboard_session=abc"),
        );
        assert_eq!(read_cookie(&h, "jobboard_session").as_deref(), Some("abc"));
        assert_eq!(read_cookie(&h, "missing"), None);
    }
}
