//! Applications: `POST /jobs/{id}/applications`, `GET /applications`,
//! `GET /applications/{id}`, `PATCH /applications/{id}`.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, docs::Pagination, extract::path_id};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::{
    JobId,
    applications::{
        self, Application, ApplicationIn, ApplicationListQuery, ApplicationPatch, ApplicationStatus,
    },
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_application))
        .routes(routes!(list_applications))
        .routes(routes!(get_application, update_application))
}

#[derive(Serialize, ToSchema)]
pub struct ApplicationOut {
    pub data: Application,
}

#[derive(Serialize, ToSchema)]
pub struct ApplicationListOut {
    pub data: Vec<Application>,
    pub meta: ApplicationListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct ApplicationListMeta {
    pub pagination: Pagination,
    pub filters: ApplicationFilters,
}

/// The filters applied.
#[derive(Serialize, ToSchema)]
pub struct ApplicationFilters {
    #[schema(value_type = Option<Uuid>)]
    pub job_id: Option<JobId>,
    /// The statuses asked for, as sent (none: every status).
    pub status: Vec<ApplicationStatus>,
}

/// Submit an application to a job of the organization.
///
/// Emits `application.received`. Needs the `jobs:write` scope.
#[utoipa::path(post, path = "/jobs/{id}/applications", tag = "applications",
    params(("id" = Uuid, Path, description = "Job id")),
    request_body = ApplicationIn,
    responses((status = 201, description = "Received; status `new`.", body = ApplicationOut)))]
async fn create_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<ApplicationOut>)> {
    auth.require("jobs:write")?;
    let job_id = path_id(&id, "job")?;
    let a = applications::create(&app.db, auth.org_id, job_id, input).await?;
    Ok((StatusCode::CREATED, Json(ApplicationOut { data: a })))
}

/// List applications, newest first, optionally of one job and of some statuses.
///
/// Needs the `jobs:read` scope.
#[utoipa::path(get, path = "/applications", tag = "applications", params(ApplicationListQuery),
    responses((status = 200, description = "One page.", body = ApplicationListOut)))]
async fn list_applications(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<ApplicationListOut>> {
    auth.require("jobs:read")?;
    let lq = ApplicationListQuery::read(&mut q);
    q.finish()?;
    let page = applications::list(&app.db, auth.org_id, &lq).await?;
    Ok(Json(ApplicationListOut {
        meta: ApplicationListMeta {
            pagination: Pagination::of(lq.page, lq.per_page, page.total),
            filters: ApplicationFilters {
                job_id: lq.job_id,
                status: lq.status,
            },
        },
        data: page.rows,
    }))
}

/// Read one application.
///
/// Needs the `jobs:read` scope.
#[utoipa::path(get, path = "/applications/{id}", tag = "applications",
    params(("id" = Uuid, Path, description = "Application id")),
    responses((status = 200, description = "The application.", body = ApplicationOut)))]
async fn get_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<ApplicationOut>> {
    auth.require("jobs:read")?;
    let id = path_id(&id, "application")?;
    let a = applications::get(&app.db, auth.org_id, id).await?;
    Ok(Json(ApplicationOut { data: a }))
}

/// Move an application to another status.
///
/// Emits `application.status_changed` when the status changes. Needs the `jobs:write`
/// scope.
#[utoipa::path(patch, path = "/applications/{id}", tag = "applications",
    params(("id" = Uuid, Path, description = "Application id")),
    request_body = ApplicationPatch,
    responses((status = 200, description = "Updated.", body = ApplicationOut)))]
async fn update_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<ApplicationOut>> {
    auth.require("jobs:write")?;
    let id = path_id(&id, "application")?;
    let a = applications::update(&app.db, auth.org_id, id, input).await?;
    Ok(Json(ApplicationOut { data: a }))
}
