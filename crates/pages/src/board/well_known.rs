//! `/.well-known/jobboard-domain/<token>`: the token of a pending domain claim, on any
//! host, so that the check of a claimed domain (`jobboard_app::domain_check`) finds it when the
//! domain reaches this installation. The token is no secret; it only names the claim.

use axum::{
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};

use jobboard_domain::orgs::domains;

use jobboard_app::app::AppState;

use crate::error::PageError;

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
