//! `GET /jobs`, `POST /jobs`, `GET/PATCH/DELETE /jobs/{id}`.

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::Response,
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, cached, extract};
use jobboard_app::app::AppState;
use jobboard_app::error::{ApiError, ApiResult};
use jobboard_core::cache::{MAX_AGE_MICROS, Rendered};
use jobboard_domain::{
    CategoryId, JobId, OrgId, Ts,
    jobs::{self, Job, JobIn, JobListItem, JobListQuery, JobPatch, JobStatus, JobType, ListQuery},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_jobs, create_job))
        .routes(routes!(get_job, update_job, delete_job))
}

#[derive(Serialize, ToSchema)]
pub struct JobListOut {
    pub data: Vec<JobListItem>,
    pub meta: JobListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct JobListMeta {
    pub pagination: JobPagination,
    pub filters: JobFilters,
}

#[derive(Serialize, ToSchema)]
pub struct JobPagination {
    pub current_page: i64,
    pub per_page: i64,
    /// The number of matching jobs (exact).
    pub total_items: i64,
    /// 0 when there are no items.
    pub total_pages: i64,
    pub has_more: bool,
}

/// The filters applied.
#[derive(Serialize, ToSchema)]
pub struct JobFilters {
    pub search: Option<String>,
    #[schema(value_type = Vec<Uuid>)]
    pub categories: Vec<CategoryId>,
    pub job_types: Vec<JobType>,
    pub locations: Vec<String>,
    pub is_remote: Option<bool>,
    pub salary_min: Option<f64>,
    /// Upper-case.
    pub country: Option<String>,
    /// The statuses listed (all four for `status=all`).
    pub status: Vec<JobStatus>,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreatedOut {
    pub data: JobCreated,
    pub meta: JobCreatedMeta,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreated {
    #[schema(value_type = Uuid)]
    pub id: JobId,
    pub title: String,
    pub slug: String,
    pub status: JobStatus,
    pub created_at: Ts,
    pub company_logo_url: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreatedMeta {
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    /// Relative URL of the job: `/jobs/<slug>`.
    pub url: String,
}

#[derive(Serialize, ToSchema)]
pub struct JobUpdatedOut {
    pub data: JobUpdated,
}

#[derive(Serialize, ToSchema)]
pub struct JobUpdated {
    #[schema(value_type = Uuid)]
    pub id: JobId,
    pub updated_at: Ts,
    pub title: String,
    pub company_name: String,
    pub status: JobStatus,
    pub location: Option<String>,
    pub is_remote: bool,
}

#[derive(Serialize, ToSchema)]
pub struct JobOut {
    pub data: Job,
}

#[derive(Serialize, ToSchema)]
pub struct JobDeletedOut {
    pub data: JobDeleted,
}

#[derive(Serialize, ToSchema)]
pub struct JobDeleted {
    #[schema(value_type = Uuid)]
    pub id: JobId,
    /// Always true.
    pub deleted: bool,
}

/// List jobs. By default only live `active` jobs (not past `expires_at`), sticky jobs
/// first, then newest first (then by id).
///
/// `total_items` is exact, for searches and filtered lists too.
///
/// Lists are served from a per-node cache while nothing they are rendered from has changed
/// (any write to the organization's jobs or categories, on any node, is seen by the next
/// request) and no job's `expires_at` has passed since. Responses carry a strong `ETag`;
/// `If-None-Match` with it answers `304`. `Cache-Control: no-cache` in the request renders
/// the list afresh. Needs the `jobs:read` scope.
#[utoipa::path(get, path = "/jobs", tag = "jobs", params(JobListQuery,
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier response."),
        ("Cache-Control" = Option<String>, Header, description = "`no-cache` renders the list afresh.")),
    responses(
        (status = 200, description = "A page of jobs.", body = JobListOut,
            headers(("ETag" = String, description = "Strong entity tag."), ("Cache-Control" = String))),
        (status = 304, description = "Not modified: the ETag sent is current.")))]
async fn list_jobs(
    State(app): State<AppState>,
    auth: Auth,
    headers: HeaderMap,
    Query(mut q): Query,
) -> ApiResult<Response> {
    auth.require("jobs:read")?;
    let lq = ListQuery::read(&mut q);
    q.finish()?;
    // The key holds everything the body depends on: the validated filters, the text
    // echoed in meta.filters, and the page.
    let key = (auth.org_id, format!("{lq:?}"));
    let rendered = app
        .jobs_cache
        .read_through(
            key,
            auth.job_list_version,
            || app.clock.now().micros(),
            cached::bypass(&headers),
            || render_list(&app, auth.org_id, auth.job_list_version, lq),
        )
        .await?;
    Ok(cached::respond(
        rendered,
        &headers,
        HeaderValue::from_static("private, no-cache"),
    ))
}

/// Renders a page of jobs, valid until the next live job reaches its `expires_at` (and
/// at most [`MAX_AGE_MICROS`]).
async fn render_list(
    app: &AppState,
    org_id: OrgId,
    seen: i64,
    lq: ListQuery,
) -> ApiResult<(Rendered, i64)> {
    let now = app.clock.now();
    let page = jobs::list_seen(&app.db, org_id, &lq, now, Some(seen)).await?;
    let total_pages = page.total_pages(lq.per_page);
    let status = lq.statuses();
    let out = JobListOut {
        meta: JobListMeta {
            pagination: JobPagination {
                current_page: lq.page,
                per_page: lq.per_page,
                total_items: page.total.items,
                total_pages,
                has_more: lq.page < total_pages,
            },
            filters: JobFilters {
                search: lq.search,
                categories: lq.filter.categories,
                job_types: lq.filter.job_types,
                locations: lq.locations,
                is_remote: lq.filter.is_remote,
                salary_min: lq.filter.salary_min,
                country: lq.filter.country,
                status,
            },
        },
        data: page.rows,
    };
    let rendered = Rendered::new(serde_json::to_vec(&out).map_err(|e| ApiError::internal(&e))?);
    let deadline = jobs::next_expiry(&app.db, org_id, now)
        .await?
        .map_or(i64::MAX, |t| t.micros())
        .min(now.micros() + MAX_AGE_MICROS);
    Ok((rendered, deadline))
}

/// Create a job.
///
/// The slug is made from the title and company name, unique in the organization (a short
/// random suffix is added on collision). Emits `job.created`. Needs the `jobs:write` scope.
#[utoipa::path(post, path = "/jobs", tag = "jobs", request_body = JobIn,
    responses((status = 201, description = "Created.", body = JobCreatedOut)))]
async fn create_job(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<JobCreatedOut>)> {
    auth.require("jobs:write")?;
    let job = jobs::create(&app.db, auth.org_id, input).await?;
    Ok((
        StatusCode::CREATED,
        Json(JobCreatedOut {
            meta: JobCreatedMeta {
                organization_id: auth.org_id,
                url: jobs::url_of(&job.slug),
            },
            data: JobCreated {
                id: job.id,
                title: job.title,
                slug: job.slug,
                status: job.status,
                created_at: job.created_at,
                company_logo_url: job.company_logo_url,
            },
        }),
    ))
}

/// Read one job with every stored field.
///
/// Needs the `jobs:read` scope.
#[utoipa::path(get, path = "/jobs/{id}", tag = "jobs",
    params(("id" = Uuid, Path, description = "The job id.")),
    responses((status = 200, description = "The job.", body = JobOut)))]
async fn get_job(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<JobOut>> {
    auth.require("jobs:read")?;
    q.finish()?;
    let id = extract::path_id(&raw, "job")?;
    let job = jobs::get(&app.db, auth.org_id, id).await?;
    Ok(Json(JobOut { data: job }))
}

/// Update a job: any field of `POST /jobs`, at least one.
///
/// Setting `status` moves the job (to `active` approves it). Emits `job.updated` (with
/// `changed`), and on a status move `job.status_changed` plus `job.approved` (to active) or
/// `job.expired` (to expired). A body that changes nothing is answered with the job as
/// stored and emits nothing. Needs the `jobs:write` scope.
#[utoipa::path(patch, path = "/jobs/{id}", tag = "jobs", request_body = JobPatch,
    params(("id" = Uuid, Path, description = "The job id.")),
    responses((status = 200, description = "Updated.", body = JobUpdatedOut)))]
async fn update_job(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<JobUpdatedOut>> {
    auth.require("jobs:write")?;
    let id = extract::path_id(&raw, "job")?;
    let job = jobs::update(&app.db, auth.org_id, id, input).await?;
    Ok(Json(JobUpdatedOut {
        data: JobUpdated {
            id: job.id,
            updated_at: job.updated_at,
            title: job.title,
            company_name: job.company_name,
            status: job.status,
            location: job.location,
            is_remote: job.is_remote,
        },
    }))
}

/// Delete a job permanently.
///
/// Emits `job.deleted`. A job that other records (payments, applications) still refer to is
/// `409 conflict`. Needs the `jobs:write` scope.
#[utoipa::path(delete, path = "/jobs/{id}", tag = "jobs",
    params(("id" = Uuid, Path, description = "The job id.")),
    responses((status = 200, description = "Deleted.", body = JobDeletedOut)))]
async fn delete_job(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<JobDeletedOut>> {
    auth.require("jobs:write")?;
    q.finish()?;
    let id = extract::path_id(&raw, "job")?;
    let job = jobs::delete(&app.db, auth.org_id, id).await?;
    Ok(Json(JobDeletedOut {
        data: JobDeleted {
            id: job.id,
            deleted: true,
        },
    }))
}
