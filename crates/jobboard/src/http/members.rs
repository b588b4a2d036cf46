//! `POST /members/sync`: create or update a member, with an optional access (subscription)
//! block and an optional payment block, all in one transaction; `GET /members` and
//! `GET /members/{lookup}` to read them back.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, docs::Pagination};
use crate::{
    app::AppState,
    domain::members::{
        self, Access, ApprovalStatus, Member, MemberListQuery, MemberRecord, MemberSyncIn, Payment,
        Role,
    },
    error::ApiResult,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sync_member))
        .routes(routes!(list_members))
        .routes(routes!(get_member))
}

#[derive(Serialize, ToSchema)]
pub struct MemberListOut {
    pub data: Vec<Member>,
    pub meta: MemberListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct MemberListMeta {
    pub pagination: Pagination,
    pub filters: MemberFilters,
}

/// The filters applied (null when not given).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberFilters {
    #[schema(required = true)]
    pub search: Option<String>,
    #[schema(required = true)]
    pub role: Option<Role>,
    #[schema(required = true)]
    pub approval_status: Option<ApprovalStatus>,
}

#[derive(Serialize, ToSchema)]
pub struct MemberRecordOut {
    pub data: MemberRecord,
}

/// List the organization's members, newest first.
///
/// `search` matches email addresses and names containing it, ignoring case; `role` and
/// `approvalStatus` filter; pages as `GET /jobs` pages. Needs the `members:read` scope.
#[utoipa::path(get, path = "/members", tag = "members", params(MemberListQuery),
    responses((status = 200, description = "One page.", body = MemberListOut)))]
async fn list_members(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<MemberListOut>> {
    auth.require("members:read")?;
    let lq = MemberListQuery::read(&mut q);
    q.finish()?;
    let page = members::page(&app.db, auth.org_id, &lq).await?;
    Ok(Json(MemberListOut {
        meta: MemberListMeta {
            pagination: Pagination::of(lq.page, lq.per_page, page.total),
            filters: MemberFilters {
                search: lq.search,
                role: lq.role,
                approval_status: lq.approval_status,
            },
        },
        data: page.rows,
    }))
}

/// Read one member with its access records and payments.
///
/// `lookup` is the member's id or its email address (compared ignoring the case of ASCII
/// letters, as sync matches them). `hasValidPaywallSubscription` is true while any access
/// record is `active` or `trialing`, or `canceled` with `currentPeriodEnd` in the future.
/// Needs the `members:read` scope.
#[utoipa::path(get, path = "/members/{lookup}", tag = "members",
    params(("lookup" = String, Path, description = "The member's id or email address.")),
    responses((status = 200, description = "The member.", body = MemberRecordOut)))]
async fn get_member(
    State(app): State<AppState>,
    auth: Auth,
    Path(lookup): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<MemberRecordOut>> {
    auth.require("members:read")?;
    q.finish()?;
    let data = members::lookup(&app.db, auth.org_id, &lookup).await?;
    Ok(Json(MemberRecordOut { data }))
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
