//! `GET /plans`, `POST /plans`.

use crate::http::input::Getters;
use axum::{Json, extract::State, http::StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    Auth, JsonBody, Query,
    members::{currency_field, money_field},
};
use crate::{
    app::AppState,
    db::{
        billing::{Money, PlanInterval},
        plans::{self, CreateError, NewPlan, Plan},
    },
    error::{ApiError, ApiResult},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_plans, create_plan))
}

/// Body of `POST /plans`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanIn {
    /// 1 to 100 characters, unique per organization.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// The price id at the card processor; unique per organization.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub processor_price_id: Option<String>,
    /// The plan id at the second payment provider; unique per organization.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub alt_processor_plan_id: Option<String>,
    /// Exact decimal, 0 or more, at most 4 digits after the point.
    pub price: Money,
    /// Three letters (ISO 4217); stored and returned upper-case.
    #[schema(pattern = "^[A-Za-z]{3}$")]
    pub currency: String,
    pub interval: PlanInterval,
    /// Job posts an access record on this plan starts with.
    #[schema(minimum = 0, maximum = 1000000000)]
    pub jobs_included: i64,
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

/// Create a plan. A name, `processorPriceId` or `altProcessorPlanId` already used in the
/// organization is `409 conflict` (`details.field` names it).
#[utoipa::path(post, path = "/plans", tag = "plans", request_body = PlanIn,
    responses((status = 201, description = "Created.", body = PlanOut)))]
async fn create_plan(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<PlanOut>)> {
    auth.require("members:write")?;
    let name = input
        .string("name", true, 1, 100)
        .opt()
        .map(|s| s.trim().to_string());
    if name.as_deref() == Some("") {
        input.error("name", "too_short", "Must not be blank.");
    }
    let processor_price_id = input.string("processorPriceId", false, 1, 255).opt();
    let alt_processor_plan_id = input.string("altProcessorPlanId", false, 1, 255).opt();
    let price = money_field(&mut input, "price");
    let currency = currency_field(&mut input, "currency");
    let interval = input
        .one_of("interval", true, PlanInterval::ALL)
        .opt()
        .and_then(|s| PlanInterval::parse(&s));
    let jobs_included = input.integer("jobsIncluded", true, 0, 1_000_000_000).opt();
    input.finish()?;
    let (Some(name), Some(price), Some(currency), Some(interval), Some(jobs_included)) =
        (name, price, currency, interval, jobs_included)
    else {
        return Err(ApiError::internal(&"plan input incomplete without errors"));
    };
    let new = NewPlan {
        name,
        processor_price_id,
        alt_processor_plan_id,
        price,
        currency,
        interval,
        jobs_included,
    };
    match plans::create(&app.db, auth.org_id, &new).await {
        Ok(plan) => Ok((StatusCode::CREATED, Json(PlanOut { data: plan }))),
        Err(CreateError::Taken(field)) => Err(ApiError::conflict(
            format!("A plan with this {field} already exists in the organization."),
            json!({ "field": field }),
        )),
        Err(CreateError::Db(e)) => Err(e.into()),
    }
}
