//! Analytics: `POST /analytics/events` (ingestion), `GET /analytics/jobs`, `GET /analytics`.

use crate::http::input::Getters;
use std::collections::HashSet;

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, header},
};
use chrono::{Datelike, Months, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Auth, JsonBody, Query,
    extract::ClientAddr,
    input::{Input, check_timestamp, parse_uuid},
};
use crate::{
    app::AppState,
    db::{
        Ts,
        analytics::{self, Hit, Kind, Table},
        applications,
    },
    error::ApiResult,
};

/// Events accepted in one request.
pub const MAX_EVENTS: usize = 1000;
/// Days of history a period or range may reach back.
const MAX_RANGE_DAYS: i64 = 400;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ingest_events))
        .routes(routes!(job_analytics))
        .routes(routes!(site_analytics))
}

/// Body of `POST /analytics/events`.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct EventsIn {
    /// 1 to 1,000 events.
    #[schema(min_items = 1, max_items = 1000)]
    events: Vec<EventIn>,
}

#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct EventIn {
    #[serde(rename = "type")]
    kind: EventType,
    /// Required for `job_view` and `apply_click`: a job of the organization.
    job_id: Option<Uuid>,
    /// The page viewed (at most 2,048 characters). Accepted; this version keeps daily counts only.
    #[schema(max_length = 2048)]
    path: Option<String>,
    /// A stable id of the visitor chosen by the caller (1 to 200 characters). Without it the
    /// visitor is a daily-salted hash of the client address and user agent; addresses are
    /// never stored.
    #[schema(min_length = 1, max_length = 200)]
    visitor_id: Option<String>,
    /// Accepted; this version keeps daily counts only.
    #[schema(max_length = 2048)]
    referrer: Option<String>,
    /// When it happened (default: now); at most 5 minutes ahead and 400 days back.
    occurred_at: Option<Ts>,
}

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum EventType {
    JobView,
    ApplyClick,
    PageView,
}

#[derive(Serialize, ToSchema)]
pub struct EventsOut {
    pub data: Accepted,
}

#[derive(Serialize, ToSchema)]
pub struct Accepted {
    /// Events recorded.
    pub accepted: i64,
}

/// Record up to 1,000 analytics events (job views, apply clicks, page views) at once.
/// All or nothing: one invalid event rejects the request, naming every bad field.
#[utoipa::path(post, path = "/analytics/events", tag = "analytics", request_body = EventsIn,
    responses((status = 200, description = "Recorded.", body = EventsOut)))]
async fn ingest_events(
    State(app): State<AppState>,
    auth: Auth,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    JsonBody(mut input): JsonBody,
) -> ApiResult<Json<Value>> {
    auth.require("analytics:write")?;
    let events = input.field_with("events", true, |v| match v.as_array() {
        Some(a) if a.is_empty() => {
            Err(("too_short", "At least one event is required.".to_string()))
        }
        Some(a) if a.len() > MAX_EVENTS => Err((
            "too_long",
            format!("At most {MAX_EVENTS} events per request."),
        )),
        Some(a) => Ok(a.clone()),
        None => Err(("invalid_type", "Must be an array of events.".to_string())),
    });
    let events = events.opt().unwrap_or_default();
    let now = Ts::now();
    let mut parsed: Vec<Parsed> = Vec::with_capacity(events.len());
    for (i, ev) in events.into_iter().enumerate() {
        let field = format!("events[{i}]");
        let Value::Object(map) = ev else {
            input.error(&field, "invalid_type", "Must be an object.");
            continue;
        };
        let mut e = Input::nested_at(&format!("{field}."), map);
        let kind = e
            .one_of("type", true, &["job_view", "apply_click", "page_view"])
            .opt();
        let job_id = e.uuid("job_id", false).opt();
        let _ = e.string("path", false, 0, 2048);
        let _ = e.string("referrer", false, 0, 2048);
        let visitor_id = e.string("visitor_id", false, 1, 200).opt();
        let at = e.field_with("occurred_at", false, |v| {
            let t = check_timestamp(v)?;
            if t > now.plus(chrono::Duration::minutes(5)) {
                Err(("out_of_range", "Must not be in the future.".to_string()))
            } else if t < now.plus(chrono::Duration::days(-MAX_RANGE_DAYS)) {
                Err((
                    "out_of_range",
                    format!("Must be within the last {MAX_RANGE_DAYS} days."),
                ))
            } else {
                Ok(t)
            }
        });
        let kind = match kind.as_deref() {
            Some("job_view") => Some(Kind::JobView),
            Some("apply_click") => Some(Kind::ApplyClick),
            Some("page_view") => Some(Kind::PageView),
            _ => None,
        };
        if matches!(kind, Some(Kind::JobView | Kind::ApplyClick))
            && job_id.is_none()
            && !e.has_errors()
        {
            e.error(
                "job_id",
                "required",
                "Required for job_view and apply_click events.",
            );
        }
        let ok = !e.has_errors();
        input.absorb(e);
        if ok && let Some(kind) = kind {
            parsed.push(Parsed {
                index: i,
                kind,
                job_id,
                at: at.opt().unwrap_or(now),
                visitor_id,
            });
        }
    }
    // Every referenced job must be a job of the organization.
    let ids: Vec<Uuid> = parsed
        .iter()
        .filter_map(|p| p.job_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let known: HashSet<Uuid> = analytics::known_jobs(&app.db, auth.org_id, &ids)
        .await?
        .into_iter()
        .collect();
    for p in &parsed {
        if let Some(j) = p.job_id
            && !known.contains(&j)
        {
            let i = p.index;
            input.error(
                &format!("events[{i}].job_id"),
                "not_found",
                "No job with this id exists.",
            );
        }
    }
    input.finish()?;
    let ip = client.map(|c| c.to_string()).unwrap_or_default();
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut hits = Vec::with_capacity(parsed.len());
    let mut salts: Vec<(String, Vec<u8>)> = Vec::new();
    for Parsed {
        kind,
        job_id,
        at,
        visitor_id,
        ..
    } in parsed
    {
        let day = day_of(at);
        let visitor = match visitor_id {
            Some(v) => hash16(&[b"id", &auth.org_id.to_be_bytes(), v.as_bytes()]),
            None => {
                let salt = match salts.iter().find(|(d, _)| *d == day) {
                    Some((_, s)) => s.clone(),
                    None => {
                        let s = analytics::daily_salt(&app.db, &day).await?;
                        salts.push((day.clone(), s.clone()));
                        s
                    }
                };
                hash16(&[
                    b"addr",
                    &salt,
                    &auth.org_id.to_be_bytes(),
                    ip.as_bytes(),
                    b"\0",
                    ua.as_bytes(),
                ])
            }
        };
        hits.push(Hit {
            kind,
            job_id,
            day,
            visitor,
        });
    }
    analytics::ingest(&app.db, auth.org_id, &hits).await?;
    Ok(Json(json!({ "data": { "accepted": hits.len() } })))
}

/// A valid event, with its position in the request.
struct Parsed {
    index: usize,
    kind: Kind,
    job_id: Option<Uuid>,
    at: Ts,
    visitor_id: Option<String>,
}

fn hash16(parts: &[&[u8]]) -> [u8; 16] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    let d = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

fn day_of(t: Ts) -> String {
    t.0.format("%Y-%m-%d").to_string()
}

/// A resolved reporting window: inclusive UTC days.
struct Window {
    period: String,
    from: NaiveDate,
    to: NaiveDate,
}

const PERIODS: &[&str] = &["7d", "30d", "6mo", "12mo"];

fn window_for(period: &str, today: NaiveDate) -> NaiveDate {
    match period {
        "7d" => today - chrono::Duration::days(6),
        "6mo" => today
            .checked_sub_months(Months::new(6))
            .map(|d| d.succ_opt().unwrap_or(d))
            .unwrap_or(today),
        "12mo" => today
            .checked_sub_months(Months::new(12))
            .map(|d| d.succ_opt().unwrap_or(d))
            .unwrap_or(today),
        _ => today - chrono::Duration::days(29),
    }
}

/// Reads `period`, or (`allow_range`) `from` and `to`.
fn read_window(q: &mut super::input::QueryInput, allow_range: bool) -> Window {
    let today = Utc::now().date_naive();
    let period = q.one_of("period", PERIODS);
    let (from, to) = if allow_range {
        (q.take("from"), q.take("to"))
    } else {
        (None, None)
    };
    if from.is_none() && to.is_none() {
        let period = period.unwrap_or_else(|| "30d".into());
        return Window {
            from: window_for(&period, today),
            to: today,
            period,
        };
    }
    let parse =
        |q: &mut super::input::QueryInput, name: &str, v: Option<String>| -> Option<NaiveDate> {
            match v {
                None => {
                    q.error(name, "required", "from and to go together.");
                    None
                }
                Some(s) => NaiveDate::parse_from_str(&s, "%Y-%m-%d").ok().or_else(|| {
                    q.error(name, "invalid_format", "Must be a date, YYYY-MM-DD.");
                    None
                }),
            }
        };
    let from = parse(q, "from", from);
    let to = parse(q, "to", to);
    if period.is_some() {
        q.error(
            "period",
            "invalid_value",
            "Give either period or from and to.",
        );
    }
    match (from, to) {
        (Some(f), Some(t)) if t < f => {
            q.error("to", "out_of_range", "Must not be before from.");
            Window {
                period: "custom".into(),
                from: today,
                to: today,
            }
        }
        (Some(f), Some(t)) if (t - f).num_days() >= MAX_RANGE_DAYS => {
            q.error(
                "to",
                "out_of_range",
                format!("The range may span at most {MAX_RANGE_DAYS} days."),
            );
            Window {
                period: "custom".into(),
                from: today,
                to: today,
            }
        }
        (Some(f), Some(t)) if f.year() < 2000 || t.year() > 9000 => {
            q.error(
                "from",
                "out_of_range",
                "Must be a date between the years 2000 and 9000.",
            );
            Window {
                period: "custom".into(),
                from: today,
                to: today,
            }
        }
        (Some(from), Some(to)) => Window {
            period: "custom".into(),
            from,
            to,
        },
        _ => Window {
            period: "custom".into(),
            from: today,
            to: today,
        },
    }
}

fn fmt_day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsOut {
    pub data: JobAnalyticsData,
    pub meta: JobAnalyticsMeta,
}

/// Each map has one entry per requested job id.
#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsData {
    #[schema(value_type = Object, additional_properties = true)]
    pub visitors: Map<String, Value>,
    #[schema(value_type = Object, additional_properties = true)]
    pub views: Map<String, Value>,
    #[schema(value_type = Object, additional_properties = true)]
    pub apply_clicks: Map<String, Value>,
    #[schema(value_type = Object, additional_properties = true)]
    pub applications: Map<String, Value>,
}

#[derive(Serialize, ToSchema)]
pub struct JobAnalyticsMeta {
    pub period: String,
    pub total_jobs: i64,
    /// (extension) Present, and `false`, only when the `visitors` figures are estimates:
    /// when the jobs asked for had more than 20,000 distinct visitors per day added up over
    /// the period (and at least 8 per job and day on average), distinct visitors are
    /// estimated from daily HyperLogLog sketches (standard error 0.81%; never below the
    /// busiest day's count nor above the daily counts added up). Absent means exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visitors_exact: Option<bool>,
}

/// Visitors, views, apply clicks and applications of specific jobs over a period.
#[utoipa::path(get, path = "/analytics/jobs", tag = "analytics",
    params(
        ("jobIds" = String, Query, description = "Comma-separated job ids, 1 to 100, each a job of the organization."),
        ("period" = Option<String>, Query, description = "7d, 30d (default), 6mo or 12mo, ending today (UTC)."),
    ),
    responses((status = 200, description = "Figures per job id.", body = JobAnalyticsOut)))]
async fn job_analytics(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("analytics:read")?;
    let raw = q.list("jobIds");
    let mut ids: Vec<Uuid> = Vec::new();
    if raw.is_empty() {
        q.error(
            "jobIds",
            "required",
            "Give 1 to 100 comma-separated job ids.",
        );
    } else if raw.len() > 100 {
        q.error("jobIds", "too_long", "At most 100 job ids.");
    } else {
        for r in &raw {
            match parse_uuid(r) {
                Some(id) if !ids.contains(&id) => ids.push(id),
                Some(_) => {}
                None => {
                    q.error("jobIds", "invalid_format", format!("{r:?} is not a UUID."));
                    break;
                }
            }
        }
    }
    let w = read_window(&mut q, false);
    let known: HashSet<Uuid> = analytics::known_jobs(&app.db, auth.org_id, &ids)
        .await?
        .into_iter()
        .collect();
    if let Some(missing) = ids.iter().find(|id| !known.contains(id)) {
        q.error(
            "jobIds",
            "not_found",
            format!("{missing} is not a job of this organization."),
        );
    }
    q.finish()?;
    let (from, to) = (fmt_day(w.from), fmt_day(w.to));
    let figures = analytics::job_figures(&app.db, auth.org_id, &ids, &from, &to).await?;
    let (start, end) = analytics::day_bounds(&from, &to);
    let apps: std::collections::HashMap<Uuid, i64> =
        applications::count_by_job(&app.db, auth.org_id, &ids, start, end)
            .await?
            .into_iter()
            .collect();
    let per = |m: &std::collections::HashMap<Uuid, i64>| -> Value {
        Value::Object(
            ids.iter()
                .map(|id| (id.to_string(), json!(m.get(id).copied().unwrap_or(0))))
                .collect(),
        )
    };
    let mut meta = json!({ "period": w.period, "total_jobs": ids.len() });
    if !figures.visitors_exact {
        meta["visitors_exact"] = json!(false);
    }
    Ok(Json(json!({
        "data": {
            "visitors": per(&figures.visitors),
            "views": per(&figures.views),
            "apply_clicks": per(&figures.apply_clicks),
            "applications": per(&apps),
        },
        "meta": meta,
    })))
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
pub struct SiteDay {
    #[schema(format = Date)]
    pub date: String,
    pub visitors: i64,
    pub pageviews: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
}

#[derive(Serialize, ToSchema)]
pub struct SiteAnalyticsMeta {
    /// The period asked for, or `custom` for from/to.
    pub period: String,
    #[schema(format = Date)]
    pub from: String,
    #[schema(format = Date)]
    pub to: String,
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
#[utoipa::path(get, path = "/analytics", tag = "analytics",
    params(
        ("period" = Option<String>, Query, description = "7d, 30d (default), 6mo or 12mo, ending today (UTC)."),
        ("from" = Option<String>, Query, description = "First day, YYYY-MM-DD (with `to`, instead of `period`)."),
        ("to" = Option<String>, Query, description = "Last day, YYYY-MM-DD, inclusive; at most 400 days after `from`."),
    ),
    responses((status = 200, description = "Totals and time series.", body = SiteAnalyticsOut)))]
async fn site_analytics(
    State(app): State<AppState>,
    auth: Auth,
    Query(mut q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("analytics:read")?;
    let w = read_window(&mut q, true);
    q.finish()?;
    let (from, to) = (fmt_day(w.from), fmt_day(w.to));
    let (days, visitors) = analytics::site_figures(&app.db, auth.org_id, &from, &to).await?;
    let jobs_posted =
        analytics::created_between(&app.db, auth.org_id, Table::Jobs, &from, &to).await?;
    let members_joined =
        analytics::created_between(&app.db, auth.org_id, Table::Members, &from, &to).await?;
    let mut series = Vec::new();
    let (mut pv, mut jv, mut ac, mut apps) = (0, 0, 0, 0);
    let mut d = w.from;
    while d <= w.to {
        let key = fmt_day(d);
        let f = days.get(&key).copied().unwrap_or_default();
        pv += f.page_views;
        jv += f.job_views;
        ac += f.apply_clicks;
        apps += f.applications;
        series.push(json!({
            "date": key,
            "visitors": f.visitors,
            "pageviews": f.page_views,
            "job_views": f.job_views,
            "apply_clicks": f.apply_clicks,
            "applications": f.applications,
        }));
        let Some(next) = d.succ_opt() else { break };
        d = next;
    }
    let mut meta = json!({ "period": w.period, "from": from, "to": to });
    if !visitors.exact {
        meta["visitors_exact"] = json!(false);
    }
    Ok(Json(json!({
        "data": {
            "visitors": visitors.count,
            "pageviews": pv,
            "job_views": jv,
            "apply_clicks": ac,
            "applications": apps,
            "jobs_posted": jobs_posted,
            "members_joined": members_joined,
            "timeseries": series,
        },
        "meta": meta,
    })))
}
