//! `GET /plans`, `POST /plans`.

use axum::{Json, extract::State, http::StatusCode};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::plans::{self, Plan, PlanIn};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_plans, create_plan))
}

#[derive(Serialize, ToSchema)]
pub struct PlanOut {
    pub data: Plan,
}

#[derive(Serialize, ToSchema)]
pub struct PlanListOut {
    pub data: Vec<Plan>,
    pub meta: PlanListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct PlanListMeta {
    pub total: i64,
}

/// List the organization's plans, by name.
///
/// Needs the `members:read` scope.
#[utoipa::path(get, path = "/plans", tag = "plans",
    responses((status = 200, description = "All plans, by name.", body = PlanListOut)))]
async fn list_plans(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<PlanListOut>> {
    auth.require("members:read")?;
    q.finish()?;
    let data = plans::list(&app.db, auth.org_id).await?;
    Ok(Json(PlanListOut {
        meta: PlanListMeta {
            total: data.len() as i64,
        },
        data,
    }))
}

/// Create a plan.
///
/// A name, `processorPriceId` or `altProcessorPlanId` already used in the organization is
/// `409 conflict` (`details.field` names it). Needs the `members:write` scope.
#[utoipa::path(post, path = "/plans", tag = "plans", request_body = PlanIn,
    responses((status = 201, description = "Created.", body = PlanOut)))]
async fn create_plan(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<PlanOut>)> {
    auth.require("members:write")?;
    let plan = plans::create(&app.db, auth.org_id, input).await?;
    Ok((StatusCode::CREATED, Json(PlanOut { data: plan })))
}
