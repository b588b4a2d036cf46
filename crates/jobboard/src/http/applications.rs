//! Applications: `POST /jobs/{id}/applications`, `GET /applications`,
//! `GET /applications/{id}`, `PATCH /applications/{id}`.

use crate::http::input::Getters;
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, docs::Pagination, extract::path_id};
use crate::{
    app::AppState,
    db::applications::{self, Application, Filter, NewApplication, STATUSES},
    error::{ApiError, ApiResult},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_application))
        .routes(routes!(list_applications))
        .routes(routes!(get_application, update_application))
}

/// Body of `POST /jobs/{id}/applications`.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct ApplicationIn {
    /// 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    name: String,
    #[schema(format = Email)]
    email: String,
    /// Absolute http(s) URL of the résumé.
    resume_url: Option<String>,
    /// At most 20,000 characters.
    #[schema(max_length = 20000)]
    cover_letter: Option<String>,
    /// Answers to the job's questions, free-form.
    #[schema(value_type = Option<Object>)]
    answers: Option<Value>,
}

/// Body of `PATCH /applications/{id}`.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct ApplicationPatch {
    #[schema(example = "reviewing")]
    status: ApplicationStatus,
}

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ApplicationStatus {
    New,
    Reviewing,
    Interviewing,
    Offered,
    Hired,
    Rejected,
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

#[derive(Serialize, ToSchema)]
pub struct ApplicationFilters {
    pub job_id: Option<uuid::Uuid>,
    pub status: Vec<String>,
}

/// Submit an application to a job of the organization. Emits `application.received`.
#[utoipa::path(post, path = "/jobs/{id}/applications", tag = "applications",
    params(("id" = uuid::Uuid, Path, description = "Job id")),
    request_body = ApplicationIn,
    responses((status = 201, description = "Received; status `new`.", body = ApplicationOut)))]
async fn create_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require("jobs:write")?;
    let job_id = path_id(&id, "job")?;
    let name = input.string("name", true, 1, 200).opt();
    let email = input.email("email", true).opt();
    let resume_url = input.url("resume_url", false).opt();
    let cover_letter = input.string("cover_letter", false, 0, 20_000).opt();
    let answers = input.object("answers", false).opt();
    if matches!(&name, Some(n) if n.trim().is_empty()) {
        input.error("name", "too_short", "Must not be blank.");
    }
    input.finish()?;
    let new = NewApplication {
        name: name.unwrap_or_default().trim().to_string(),
        email: email.unwrap_or_default(),
        resume_url,
        cover_letter,
        answers,
    };
    match applications::create(&app.db, auth.org_id, job_id, new).await? {
        Some(a) => Ok((StatusCode::CREATED, Json(json!({ "data": a })))),
        None => Err(ApiError::not_found("job")),
    }
}

/// List applications, newest first, optionally of one job and of some statuses.
#[utoipa::path(get, path = "/applications", tag = "applications",
    params(
        ("job_id" = Option<uuid::Uuid>, Query, description = "Only applications to this job."),
        ("status" = Option<String>, Query, description = "Comma-separated statuses: new, reviewing, interviewing, offered, hired, rejected."),
        ("page" = Option<i64>, Query, minimum = 1, description = "Page, from 1 (default 1)."),
        ("per_page" = Option<i64>, Query, minimum = 1, maximum = 100, description = "Items per page, 1 to 100 (default 20)."),
    ),
    responses((status = 200, description = "One page.", body = ApplicationListOut)))]
async fn list_applications(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("jobs:read")?;
    let job_id = match q.take("job_id") {
        Some(raw) => match super::input::parse_uuid(&raw) {
            Some(id) => Some(id),
            None => {
                q.error("job_id", "invalid_format", "Must be a UUID.");
                None
            }
        },
        None => None,
    };
    let statuses = q.list("status");
    for s in &statuses {
        if !STATUSES.contains(&s.as_str()) {
            q.error(
                "status",
                "invalid_value",
                format!("Must be among: {}.", STATUSES.join(", ")),
            );
            break;
        }
    }
    let page = q.integer("page", 1, 1, 1_000_000);
    let per_page = q.integer("per_page", 20, 1, 100);
    q.finish()?;
    let filter = Filter { job_id, statuses };
    let (items, total) = applications::list(
        &app.db,
        auth.org_id,
        &filter,
        per_page,
        (page - 1) * per_page,
    )
    .await?;
    let total_pages = (total + per_page - 1) / per_page;
    Ok(Json(json!({
        "data": items,
        "meta": {
            "pagination": {
                "current_page": page,
                "per_page": per_page,
                "total_items": total,
                "total_pages": total_pages,
                "has_more": page < total_pages,
            },
            "filters": { "job_id": filter.job_id, "status": filter.statuses },
        }
    })))
}

/// Read one application.
#[utoipa::path(get, path = "/applications/{id}", tag = "applications",
    params(("id" = uuid::Uuid, Path, description = "Application id")),
    responses((status = 200, description = "The application.", body = ApplicationOut)))]
async fn get_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    auth.require("jobs:read")?;
    let id = path_id(&id, "application")?;
    let a = applications::get(&app.db, auth.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("application"))?;
    Ok(Json(json!({ "data": a })))
}

/// Move an application to another status. Emits `application.status_changed` when the
/// status changes.
#[utoipa::path(patch, path = "/applications/{id}", tag = "applications",
    params(("id" = uuid::Uuid, Path, description = "Application id")),
    request_body = ApplicationPatch,
    responses((status = 200, description = "Updated.", body = ApplicationOut)))]
async fn update_application(
    State(app): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<Json<Value>> {
    auth.require("jobs:write")?;
    let id = path_id(&id, "application")?;
    let status = input.one_of("status", true, STATUSES).opt();
    input.finish()?;
    let status = status.unwrap_or_default();
    let a = applications::set_status(&app.db, auth.org_id, id, &status)
        .await?
        .ok_or_else(|| ApiError::not_found("application"))?;
    Ok(Json(json!({ "data": a })))
}
