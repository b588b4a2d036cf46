//! The audit log of staff actions: `GET /audit` (scope `admin`).

use axum::{Json, extract::State};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, Query, docs::Pagination};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::audit::{self, AuditEntry, AuditQuery};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit))
}

#[derive(Serialize, ToSchema)]
pub struct AuditListOut {
    pub data: Vec<AuditEntry>,
    pub meta: AuditListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct AuditListMeta {
    pub pagination: Pagination,
}

/// List what the organization's staff did in the dashboard, newest first.
///
/// One entry per sign-in, sign-out and change made in the dashboard (who, what, which
/// record, when, from which address). Filter by `action` and `actor` (a staff user's
/// email address); pages as `GET /jobs` pages. Entries are kept `audit_keep_days` (365
/// by default). Needs the `admin` scope.
#[utoipa::path(get, path = "/audit", tag = "audit", params(AuditQuery),
    responses(
        (status = 200, description = "One page.", body = AuditListOut),
    ))]
async fn list_audit(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<AuditListOut>> {
    auth.require("admin")?;
    let aq = AuditQuery::read(&mut q);
    q.finish()?;
    let page = audit::list(&app.db, auth.org_id, &aq).await?;
    Ok(Json(AuditListOut {
        meta: AuditListMeta {
            pagination: Pagination::of(aq.page, aq.per_page, page.total),
        },
        data: page.rows,
    }))
}
