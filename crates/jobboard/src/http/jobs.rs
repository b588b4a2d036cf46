//! `GET /jobs`, `POST /jobs`, `GET/PATCH/DELETE /jobs/{id}`.

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::Response,
};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Auth, JsonBody, Query, cached, extract,
    job_input::{self, read_job, read_list_query},
};
use crate::{
    cache::{MAX_AGE_MICROS, Rendered},
    db::{
        Ts, categories,
        jobs::{self, Job, JobListItem, JobStatus, JobType, Updated},
    },
    error::{ApiError, ApiResult},
    server::AppState,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_jobs, create_job))
        .routes(routes!(get_job, update_job, delete_job))
}

/// Query of `GET /jobs`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct JobListQuery {
    /// Words matched, case-insensitively and each as a word prefix, against the title,
    /// the description's text and the company name; every word must match.
    #[param(max_length = 200)]
    search: Option<String>,
    /// Comma-separated job types (any of): full-time, part-time, contract, internship,
    /// temporary, casual.
    job_types: Option<String>,
    /// Comma-separated locations; a job matches when its location contains any of them
    /// (case-insensitive).
    locations: Option<String>,
    /// Comma-separated category UUIDs of the organization (any of).
    categories: Option<String>,
    /// `true`: only remote jobs; `false`: only jobs that are not remote.
    is_remote: Option<bool>,
    /// Comma-separated statuses (pending, active, expired, draft), or `all`. Default
    /// `active`. Active jobs past `expires_at` are never listed.
    status: Option<String>,
    /// Page number, from 1.
    #[param(minimum = 1, maximum = 10000000)]
    page: Option<i64>,
    /// Jobs per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<i64>,
}

/// Body of `POST /jobs`. `title`, `description` and `company_name` are required; `null`
/// counts as absent.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct JobIn {
    #[schema(min_length = 1, max_length = 255)]
    title: String,
    /// HTML; sanitised with an allow-list (scripts, event handlers and `javascript:` URLs
    /// are removed) and stored sanitised.
    #[schema(min_length = 1, max_length = 100000)]
    description: String,
    #[schema(min_length = 1, max_length = 255)]
    company_name: String,
    job_type: Option<JobType>,
    #[schema(max_length = 255)]
    location: Option<String>,
    /// Default false.
    location_restricted: Option<bool>,
    /// Default false.
    is_remote: Option<bool>,
    /// Default false.
    is_highlighted: Option<bool>,
    /// Default false. Sticky jobs are listed first.
    is_sticky: Option<bool>,
    /// External apply URL or instructions.
    #[schema(min_length = 1, max_length = 10000)]
    how_to_apply: Option<String>,
    how_to_apply_method: Option<jobs::ApplyMethod>,
    /// A category of the organization.
    category_id: Option<Uuid>,
    /// Absolute http(s) URL.
    #[schema(max_length = 2048)]
    company_website: Option<String>,
    /// Absolute http(s) URL.
    #[schema(max_length = 2048)]
    company_logo_url: Option<String>,
    /// At least 0, at most `salary_max`.
    #[schema(minimum = 0, maximum = 1000000000000.0)]
    salary_min: Option<f64>,
    #[schema(minimum = 0, maximum = 1000000000000.0)]
    salary_max: Option<f64>,
    /// Three upper-case letters (ISO 4217).
    #[schema(pattern = "^[A-Z]{3}$")]
    salary_currency: Option<String>,
    salary_period: Option<jobs::SalaryPeriod>,
    #[schema(format = Email)]
    contact_email: Option<String>,
    /// When the job stops being listed; it then moves to `expired` by itself.
    expires_at: Option<Ts>,
    /// Default pending.
    status: Option<JobStatus>,
}

/// Body of `PATCH /jobs/{id}`: at least one field. Every field of `POST /jobs` is
/// accepted; `null` clears an optional field (and is refused for the others). Setting `status` to `active` approves a job.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct JobPatch {
    #[schema(nullable = false)]
    status: Option<JobStatus>,
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    title: Option<String>,
    #[schema(nullable = false, min_length = 1, max_length = 100000)]
    description: Option<String>,
    #[schema(max_length = 255)]
    location: Option<String>,
    #[schema(nullable = false)]
    is_remote: Option<bool>,
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    company_name: Option<String>,
    job_type: Option<JobType>,
    #[schema(nullable = false)]
    location_restricted: Option<bool>,
    #[schema(nullable = false)]
    is_highlighted: Option<bool>,
    #[schema(nullable = false)]
    is_sticky: Option<bool>,
    #[schema(min_length = 1, max_length = 10000)]
    how_to_apply: Option<String>,
    how_to_apply_method: Option<jobs::ApplyMethod>,
    category_id: Option<Uuid>,
    #[schema(max_length = 2048)]
    company_website: Option<String>,
    #[schema(max_length = 2048)]
    company_logo_url: Option<String>,
    #[schema(minimum = 0, maximum = 1000000000000.0)]
    salary_min: Option<f64>,
    #[schema(minimum = 0, maximum = 1000000000000.0)]
    salary_max: Option<f64>,
    #[schema(pattern = "^[A-Z]{3}$")]
    salary_currency: Option<String>,
    salary_period: Option<jobs::SalaryPeriod>,
    #[schema(format = Email)]
    contact_email: Option<String>,
    expires_at: Option<Ts>,
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
    /// The number of matching jobs; a lower bound when `total_items_exact` is false.
    pub total_items: i64,
    /// 0 when there are no items.
    pub total_pages: i64,
    pub has_more: bool,
    /// (extension) Present, and false, only when `total_items` is a lower bound: a filtered
    /// list or a search counts its matches among at most 10,000 candidate jobs (the jobs
    /// of the listed statuses, or the newest jobs matching the search words). `has_more`
    /// is always exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_items_exact: Option<bool>,
}

/// The filters applied.
#[derive(Serialize, ToSchema)]
pub struct JobFilters {
    pub search: Option<String>,
    pub categories: Vec<Uuid>,
    pub job_types: Vec<String>,
    pub locations: Vec<String>,
    pub is_remote: Option<bool>,
    /// The statuses listed (all four for `status=all`).
    pub status: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreatedOut {
    pub data: JobCreated,
    pub meta: JobCreatedMeta,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreated {
    pub id: Uuid,
    pub title: String,
    pub slug: String,
    #[schema(value_type = JobStatus)]
    pub status: String,
    pub created_at: Ts,
    pub company_logo_url: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct JobCreatedMeta {
    pub organization_id: i64,
    /// Relative URL of the job: `/jobs/<slug>`.
    pub url: String,
}

#[derive(Serialize, ToSchema)]
pub struct JobUpdatedOut {
    pub data: JobUpdated,
}

#[derive(Serialize, ToSchema)]
pub struct JobUpdated {
    pub id: Uuid,
    pub updated_at: Ts,
    pub title: String,
    pub company_name: String,
    #[schema(value_type = JobStatus)]
    pub status: String,
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
    pub id: Uuid,
    /// Always true.
    pub deleted: bool,
}

/// List jobs. By default only live `active` jobs (not past `expires_at`), sticky jobs
/// first, then newest first (then by id).
///
/// `total_items` is exact for unfiltered lists. A filtered list or a search counts its
/// matches among at most 10,000 candidate jobs; when there are more candidates,
/// `total_items` is a lower bound and `meta.pagination.total_items_exact` is `false`.
/// `has_more` is always exact.
///
/// Lists are served from a per-node cache while nothing they are rendered from has
/// changed (any write to the organization's jobs or categories, on any node, is seen by
/// the next request) and no job's `expires_at` has passed since. Responses carry a strong
/// `ETag`; `If-None-Match` with it answers `304`. `Cache-Control: no-cache` in the request
/// renders the list afresh.
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
    let lq = read_list_query(&mut q);
    q.finish()?;
    // The key holds everything the body depends on: the validated filters, the text
    // echoed in meta.filters, and the page.
    let key = (auth.org_id, format!("{lq:?}"));
    let mut now = Ts::now();
    let cache_control = HeaderValue::from_static("private, no-cache");
    let bypass = cached::bypass(&headers);
    if !bypass
        && let Some(hit) = app
            .jobs_cache
            .get(&key, auth.job_list_version, now.micros())
    {
        return Ok(cached::respond(hit, &headers, cache_control));
    }
    // One rendering per list at a time: requests missing the same list wait for it and
    // are then served from the cache.
    let _rendering = if bypass {
        None
    } else {
        let guard = app.jobs_renders.lock(&key).await;
        now = Ts::now();
        if let Some(hit) = app
            .jobs_cache
            .get(&key, auth.job_list_version, now.micros())
        {
            return Ok(cached::respond(hit, &headers, cache_control));
        }
        Some(guard)
    };
    if !lq.filter.categories.is_empty() {
        let found = categories::existing(&app.db, auth.org_id, &lq.filter.categories).await?;
        if let Some(bad) = lq.filter.categories.iter().find(|c| !found.contains(c)) {
            return Err(ApiError::field(
                "categories",
                "not_found",
                format!("{bad} is not a category of this organization."),
            ));
        }
    }
    let offset = (lq.page - 1) * lq.per_page;
    let (rows, total) =
        jobs::list(&app.db, auth.org_id, &lq.filter, lq.per_page, offset, now).await?;
    let total_pages = (total.items + lq.per_page - 1) / lq.per_page;
    let status = match &lq.filter.statuses {
        Some(s) => s.clone(),
        None => jobs::STATUSES.iter().map(|s| s.to_string()).collect(),
    };
    let out = JobListOut {
        data: rows,
        meta: JobListMeta {
            pagination: JobPagination {
                current_page: lq.page,
                per_page: lq.per_page,
                total_items: total.items,
                total_pages,
                has_more: lq.page < total_pages,
                total_items_exact: (!total.exact).then_some(false),
            },
            filters: JobFilters {
                search: lq.search,
                categories: lq.filter.categories,
                job_types: lq.filter.job_types,
                locations: lq.locations,
                is_remote: lq.filter.is_remote,
                status,
            },
        },
    };
    let rendered = Rendered::new(serde_json::to_vec(&out).map_err(|e| ApiError::internal(&e))?);
    // The list changes by itself when the next live job reaches its `expires_at`.
    let deadline = jobs::next_expiry(&app.db, auth.org_id, now)
        .await?
        .map_or(i64::MAX, |t| t.micros())
        .min(now.micros() + MAX_AGE_MICROS);
    if deadline > now.micros() {
        app.jobs_cache
            .put(key, auth.job_list_version, deadline, rendered.clone());
    }
    Ok(cached::respond(rendered, &headers, cache_control))
}

/// Adds a `category_id` error unless the category is one of the organization's.
async fn check_category(
    app: &AppState,
    org_id: i64,
    input: &mut super::input::Input,
    id: Option<Uuid>,
) -> ApiResult<()> {
    if let Some(id) = id
        && categories::existing(&app.db, org_id, &[id])
            .await?
            .is_empty()
    {
        input.error(
            "category_id",
            "not_found",
            "No category with this id exists in the organization.",
        );
    }
    Ok(())
}

/// Create a job. The slug is made from the title and company name, unique in the
/// organization (a short random suffix is added on collision). Emits `job.created`.
#[utoipa::path(post, path = "/jobs", tag = "jobs", request_body = JobIn,
    responses((status = 201, description = "Created.", body = JobCreatedOut)))]
async fn create_job(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<JobCreatedOut>)> {
    auth.require("jobs:write")?;
    let job_in = read_job(&mut input, true);
    let category = match &job_in.category_id {
        super::input::Field::Value(id) => Some(*id),
        _ => None,
    };
    check_category(&app, auth.org_id, &mut input, category).await?;
    let merged = job_in.apply(job_input::new_job_defaults());
    let fields = match merged {
        Ok(f) => {
            input.finish()?;
            f
        }
        Err(errors) => {
            let mut all = input.into_errors();
            all.extend(errors);
            return Err(ApiError::validation(all));
        }
    };
    let job = jobs::create(&app.db, auth.org_id, &fields).await?;
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
    match jobs::get(&app.db, auth.org_id, id).await? {
        Some(job) => Ok(Json(JobOut { data: job })),
        None => Err(ApiError::not_found("job")),
    }
}

/// Update a job: any field of `POST /jobs`, at least one. Setting `status` moves the job
/// (to `active` approves it). Emits `job.updated` (with `changed`), and on a status move
/// `job.status_changed` plus `job.approved` (to active) or `job.expired` (to expired).
/// A body that changes nothing is answered with the job as stored and emits nothing.
#[utoipa::path(patch, path = "/jobs/{id}", tag = "jobs", request_body = JobPatch,
    params(("id" = Uuid, Path, description = "The job id.")),
    responses((status = 200, description = "Updated.", body = JobUpdatedOut)))]
async fn update_job(
    State(app): State<AppState>,
    auth: Auth,
    Path(raw): Path<String>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<Json<JobUpdatedOut>> {
    auth.require("jobs:write")?;
    let id = extract::path_id(&raw, "job")?;
    if input.is_empty() {
        return Err(ApiError::field(
            "body",
            "required",
            "Send at least one field to change.",
        ));
    }
    let job_in = read_job(&mut input, false);
    let category = match &job_in.category_id {
        super::input::Field::Value(id) => Some(*id),
        _ => None,
    };
    check_category(&app, auth.org_id, &mut input, category).await?;
    input.finish()?;
    match jobs::update(&app.db, auth.org_id, id, |f| job_in.apply(f)).await? {
        Updated::NotFound => Err(ApiError::not_found("job")),
        Updated::Invalid(errors) => Err(ApiError::validation(errors)),
        Updated::Done(job, _) => Ok(Json(JobUpdatedOut {
            data: JobUpdated {
                id: job.id,
                updated_at: job.updated_at,
                title: job.title,
                company_name: job.company_name,
                status: job.status,
                location: job.location,
                is_remote: job.is_remote,
            },
        })),
    }
}

/// Delete a job permanently. Emits `job.deleted`. A job that other records (payments,
/// applications) still refer to is `409 conflict`.
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
    let deleted = match jobs::delete(&app.db, auth.org_id, id).await {
        Err(e) if e.is_referenced() => {
            return Err(ApiError::conflict(
                "The job is referenced by other records (for example payments) and cannot be deleted; set its status to expired or draft instead.",
                serde_json::json!({ "resource": "job" }),
            ));
        }
        other => other?,
    };
    match deleted {
        Some(job) => Ok(Json(JobDeletedOut {
            data: JobDeleted {
                id: job.id,
                deleted: true,
            },
        })),
        None => Err(ApiError::not_found("job")),
    }
}
