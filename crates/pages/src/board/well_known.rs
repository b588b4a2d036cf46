//! Files that prove something to others: `/.well-known/jobboard-domain/<token>`, the
//! token of a pending domain claim, on any host, so that the check of a claimed domain
//! (`jobboard_app::domain_check`) finds it when the domain reaches this installation (the
//! token is no secret; it only names the claim); and `/<key>.txt`, the board's IndexNow
//! key, which search engines fetch to check that URLs submitted with it are the site's.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, Method, header},
    response::{IntoResponse, Response},
};

use jobboard_domain::{indexing, orgs::domains};

use jobboard_app::app::AppState;

use crate::{error::PageError, site::Site};

/// `GET /.well-known/jobboard-domain/{token}`: the token as plain text, or `404`.
pub async fn domain_token(
    State(app): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PageError> {
    match domains::claim_with_token(&app.db, &token).await? {
        Some(claim) => Ok((
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            claim.token,
        )
            .into_response()),
        None => Err(PageError::not_found()),
    }
}

/// `GET /{file}`: the board's IndexNow key as plain text when `file` is `<key>.txt`;
/// any other single-segment path, or method, answers as every unknown path does.
pub async fn indexnow_key(
    State(app): State<AppState>,
    site: Site,
    method: Method,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Result<Response, PageError> {
    let key = if method == Method::GET || method == Method::HEAD {
        indexing::key_file(&app.db, site.org.id, &file).await?
    } else {
        None
    };
    match key {
        Some(key) => Ok((
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            key,
        )
            .into_response()),
        None => Ok(jobboard_app::error::unknown_path(
            &format!("/{file}"),
            &headers,
            || PageError::not_found().into_response(),
        )),
    }
}
