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
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::members::{
    self, Access, AccessActionIn, ApprovalStatus, Member, MemberListQuery, MemberRecord,
    MemberSyncIn, Payment, Role,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sync_member))
        .routes(routes!(list_members))
        .routes(routes!(get_member))
        .routes(routes!(member_access))
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

#[derive(Serialize, ToSchema)]
pub struct AccessActionOut {
    pub data: AccessActionData,
}

#[derive(Serialize, ToSchema)]
pub struct AccessActionData {
    /// The member (after `delete_member`: as it was).
    pub member: Member,
    /// The access record as it is now; null after `delete_member`.
    #[schema(required = true)]
    pub access: Option<Access>,
}

/// Act on a member's access record: activate, expire, cancel, reactivate, mark past due,
/// or delete the member.
///
/// The member is named by `userId` or `email`; the record by `processorSubscriptionId`,
/// else the latest of `planId`, else the member's latest. `activate` makes the record
/// active (creating it, `201`, when the member has none of `planId`); `expire_now` and
/// `cancel_now` end it at `effectiveAt` (default now); `cancel_at_period_end` sets
/// `cancelAt` to `effectiveAt` or `currentPeriodEnd` (the scheduler cancels it then);
/// `reactivate` undoes a cancellation while the paid period lasts; `mark_past_due` marks
/// an active or trialing record; `delete_member` removes the member and its records (its
/// payments stay, with a null `userId`). A move the record's state forbids is `409
/// conflict`; repeating an action changes nothing. The change and its event
/// (`subscription.created`, `subscription.canceled`, `subscription.updated`,
/// `user.deleted`) are written together. Needs the `members:write` scope.
#[utoipa::path(post, path = "/members/access", tag = "members", request_body = AccessActionIn,
    responses(
        (status = 200, description = "The action was applied (or changed nothing).", body = AccessActionOut),
        (status = 201, description = "`activate` created the access record.", body = AccessActionOut),
    ))]
async fn member_access(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<AccessActionOut>)> {
    auth.require("members:write")?;
    let out = members::act(&app.db, auth.org_id, input).await?;
    let status = if out.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(AccessActionOut {
            data: AccessActionData {
                member: out.member,
                access: out.access,
            },
        }),
    ))
}
