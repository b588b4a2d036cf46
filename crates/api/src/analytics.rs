//! Analytics: `POST /analytics/events` (ingestion), `GET /analytics/jobs`, `GET /analytics`.

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, header},
};
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query, extract::ClientAddr};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::analytics::{
    self, Client, EventsIn, JobsQuery, PerJob, Period, ReportPeriod, SiteDay, SiteQuery,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ingest_events))
        .routes(routes!(job_analytics))
        .routes(routes!(site_analytics))
}

#[derive(Serialize, ToSchema)]
pub struct EventsOut {
    pub data: Accepted,
}

#[derive(Serialize, ToSchema)]
pub struct Accepted {
    /// Events recorded.
    pub accepted: usize,
}

/// Record up to 1,000 analytics events (job views, apply clicks, page views) at once.
///
/// All or nothing: one invalid event rejects the request, naming every bad field. Needs the
/// `analytics:write` scope.
#[utoipa::path(post, path = "/analytics/events", tag = "analytics", request_body = EventsIn,
    responses((status = 200, description = "Recorded.", body = EventsOut)))]
async fn ingest_events(
    State(app): State<AppState>,
    auth: Auth,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<EventsOut>> {
    auth.require("analytics:write")?;
    let client = Client {
        address,
        user_agent: headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    };
    let accepted = analytics::ingest(&app.db, auth.org_id, input, &client).await?;
    Ok(Json(EventsOut {
        data: Accepted { accepted },
    }))
}

#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsOut {
    pub data: JobAnalyticsData,
    pub meta: JobAnalyticsMeta,
}

/// Each map has one entry per requested job id.
#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsData {
    pub visitors: PerJob,
    pub views: PerJob,
    pub apply_clicks: PerJob,
    pub applications: PerJob,
}

#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsMeta {
    pub period: Period,
    /// The distinct job ids asked for.
    pub total_jobs: usize,
    /// (extension) Present, and `false`, only when the `visitors` figures are estimates:
    /// when the jobs asked for had more than 20,000 distinct visitors per day added up over
    /// the period (and at least 8 per job and day on average), distinct visitors are
    /// estimated from daily HyperLogLog sketches (standard error 0.81%; never below the
    /// busiest day's count nor above the daily counts added up). Absent means exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visitors_exact: Option<bool>,
}

/// Visitors, views, apply clicks and applications of specific jobs over a period.
///
/// Needs the `analytics:read` scope.
#[utoipa::path(get, path = "/analytics/jobs", tag = "analytics", params(JobsQuery),
    responses((status = 200, description = "Figures per job id.", body = JobAnalyticsOut)))]
async fn job_analytics(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<JobAnalyticsOut>> {
    auth.require("analytics:read")?;
    let report = analytics::jobs(&app.db, auth.org_id, q, today(&app)).await?;
    Ok(Json(JobAnalyticsOut {
        data: JobAnalyticsData {
            visitors: report.visitors,
            views: report.views,
            apply_clicks: report.apply_clicks,
            applications: report.applications,
        },
        meta: JobAnalyticsMeta {
            period: report.period,
            total_jobs: report.total_jobs,
            visitors_exact: (!report.visitors_exact).then_some(false),
        },
    }))
}

#[derive(Serialize, ToSchema)]
pub struct SiteAnalyticsOut {
    pub data: SiteAnalyticsData,
    pub meta: SiteAnalyticsMeta,
}

#[derive(Serialize, ToSchema)]
pub struct SiteAnalyticsData {
    /// Distinct visitors over the whole window; an estimate when `meta.visitors_exact`
    /// is `false`.
    pub visitors: i64,
    pub pageviews: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
    /// Jobs created in the window.
    pub jobs_posted: i64,
    /// Members created in the window.
    pub members_joined: i64,
    /// One entry per day of the window, oldest first.
    pub timeseries: Vec<SiteDay>,
}

#[derive(Serialize, ToSchema)]
pub struct SiteAnalyticsMeta {
    /// The period asked for, or `custom` for from/to.
    pub period: ReportPeriod,
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// (extension) Present, and `false`, only when `data.visitors` is an estimate: when
    /// the daily distinct visitors of the window add up to more than 20,000 (and average
    /// at least 8 a day), distinct visitors are estimated from daily HyperLogLog sketches
    /// (standard error 0.81%; never below the busiest day's count nor above the daily
    /// counts added up). Absent means exact. The daily figures of `timeseries` are always
    /// exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visitors_exact: Option<bool>,
}

/// Site-wide figures over a period (or from/to dates), with a daily time series.
///
/// Needs the `analytics:read` scope.
#[utoipa::path(get, path = "/analytics", tag = "analytics", params(SiteQuery),
    responses((status = 200, description = "Totals and time series.", body = SiteAnalyticsOut)))]
async fn site_analytics(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<SiteAnalyticsOut>> {
    auth.require("analytics:read")?;
    let window = analytics::site_window(&mut q, today(&app));
    q.finish()?;
    let r = analytics::site(&app.db, auth.org_id, &window).await?;
    Ok(Json(SiteAnalyticsOut {
        data: SiteAnalyticsData {
            visitors: r.visitors.count,
            pageviews: r.pageviews,
            job_views: r.job_views,
            apply_clicks: r.apply_clicks,
            applications: r.applications,
            jobs_posted: r.jobs_posted,
            members_joined: r.members_joined,
            timeseries: r.timeseries,
        },
        meta: SiteAnalyticsMeta {
            period: r.window.period,
            from: r.window.from,
            to: r.window.to,
            visitors_exact: (!r.visitors.exact).then_some(false),
        },
    }))
}

/// Today in UTC at the service's clock: periods end on it.
fn today(app: &AppState) -> NaiveDate {
    app.clock.now().0.date_naive()
}
