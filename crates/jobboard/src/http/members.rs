//! `POST /members/sync`: create or update a member, with an optional access (subscription)
//! block and an optional payment block, all in one transaction.

use axum::{Json, extract::State, http::StatusCode};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody};
use crate::{
    app::AppState,
    domain::members::{self, Access, Member, MemberSyncIn, Payment},
    error::ApiResult,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sync_member))
}

#[derive(Serialize, ToSchema)]
pub struct MemberSyncOut {
    pub data: MemberSyncData,
}

#[derive(Serialize, ToSchema)]
pub struct MemberSyncData {
    pub member: Member,
    /// True when this request created the member.
    pub created: bool,
    /// The access record written, or null when no `access` block was sent.
    #[schema(required = true)]
    pub access: Option<Access>,
    /// The payment written, or null when no `payment` block was sent.
    #[schema(required = true)]
    pub payment: Option<Payment>,
}

/// Create or update a member, optionally with an access (subscription) and a payment.
///
/// The member is found by `userId` when given and known (its email may then change; an
/// email already owned by another member is `409 conflict`), else by email (ignoring the
/// case of ASCII letters only; found with a different `userId` is `409 conflict`), else
/// created (`201`, with `userId` as its id when given). Member, access, payment and their
/// events (`user.created`, `subscription.created`, `subscription.canceled`,
/// `payment.received`) are written together or not at all. Needs the `members:write` scope.
#[utoipa::path(post, path = "/members/sync", tag = "members", request_body = MemberSyncIn,
    responses(
        (status = 200, description = "An existing member was updated.", body = MemberSyncOut),
        (status = 201, description = "The member was created.", body = MemberSyncOut),
    ))]
async fn sync_member(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<MemberSyncOut>)> {
    auth.require("members:write")?;
    let out = members::sync(&app.db, auth.org_id, input).await?;
    let status = if out.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(MemberSyncOut {
            data: MemberSyncData {
                member: out.member,
                created: out.created,
                access: out.access,
                payment: out.payment,
            },
        }),
    ))
}
