//! Payments: `GET /payments`, every payment of the organization (synced by the membership
//! platform, or taken by the board's own checkout), newest first.

use axum::{Json, extract::State};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, Query, docs::Pagination};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::{
    members::Payment,
    payments::{self, PaymentListQuery},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_payments))
}

#[derive(Serialize, ToSchema)]
pub struct PaymentListOut {
    pub data: Vec<Payment>,
    pub meta: PaymentListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct PaymentListMeta {
    pub pagination: Pagination,
}

/// List the organization's payments, newest first.
///
/// Filter by `status`, `member` (a member's id), `job_id` and `since` (a UTC day); pages
/// as `GET /jobs` pages. Payments of the board's own checkout have `paymentProvider`
/// `processor` and their session and payment intent ids. Needs the `members:read` scope.
#[utoipa::path(get, path = "/payments", tag = "members", params(PaymentListQuery),
    responses((status = 200, description = "One page.", body = PaymentListOut)))]
async fn list_payments(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<PaymentListOut>> {
    auth.require("members:read")?;
    let lq = PaymentListQuery::read(&mut q);
    q.finish()?;
    let (rows, total) = payments::list(&app.db, auth.org_id, &lq).await?;
    Ok(Json(PaymentListOut {
        meta: PaymentListMeta {
            pagination: Pagination::of(lq.page, lq.per_page, total),
        },
        data: rows,
    }))
}
