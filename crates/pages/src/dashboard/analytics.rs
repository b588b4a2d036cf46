//! Analytics: the site report `GET /api/analytics` answers, for a period picked from
//! 7 days, 30 days, 6 months and 12 months: the totals, the daily page views and visitors
//! drawn as a chart (an SVG drawn here, with the same figures in a table for screen
//! readers and keyboard users), and the jobs with the most views and applications.

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    response::Response,
};

use super::{Nav, Staff, chrome, params, render};
use crate::{error::PageError, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::analytics::{self, Period, SiteDay, TopJob};

/// Jobs in each top list.
const TOP: i64 = 10;

/// The chart's drawing area, in SVG units.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 200.0;

struct Choice {
    key: &'static str,
    label: &'static str,
    current: bool,
}

/// A bar of the chart: one day's page views.
struct Bar {
    x: String,
    y: String,
    width: String,
    height: String,
}

/// The chart of the window's days.
struct Chart {
    bars: Vec<Bar>,
    /// The visitors line (`x,y x,y ...`).
    line: String,
    /// The largest figure drawn (the top of the scale).
    max: i64,
    first: String,
    last: String,
}

fn chart(days: &[SiteDay]) -> Chart {
    let max = days
        .iter()
        .map(|d| d.pageviews.max(d.visitors))
        .max()
        .unwrap_or(0)
        .max(1);
    let n = days.len().max(1) as f64;
    let step = WIDTH / n;
    let y = |v: i64| HEIGHT - (v as f64 / max as f64) * HEIGHT;
    let bars = days
        .iter()
        .enumerate()
        .map(|(i, d)| Bar {
            x: format!("{:.2}", i as f64 * step),
            y: format!("{:.2}", y(d.pageviews)),
            width: format!("{:.2}", (step * 0.8).max(0.5)),
            height: format!("{:.2}", HEIGHT - y(d.pageviews)),
        })
        .collect();
    let line = days
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{:.2},{:.2}", i as f64 * step + step * 0.4, y(d.visitors)))
        .collect::<Vec<_>>()
        .join(" ");
    Chart {
        bars,
        line,
        max,
        first: days.first().map(|d| d.date.to_string()).unwrap_or_default(),
        last: days.last().map(|d| d.date.to_string()).unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "dashboard/analytics.html")]
struct AnalyticsPage {
    chrome: Chrome,
    nav: Nav,
    periods: Vec<Choice>,
    period_label: &'static str,
    from: String,
    to: String,
    visitors: i64,
    visitors_exact: bool,
    pageviews: i64,
    job_views: i64,
    apply_clicks: i64,
    applications: i64,
    jobs_posted: i64,
    members_joined: i64,
    days: Vec<SiteDay>,
    chart: Chart,
    top_viewed: Vec<TopJob>,
    top_applied: Vec<TopJob>,
}

const PERIODS: &[(&str, &str)] = &[
    ("7d", "7 days"),
    ("30d", "30 days"),
    ("6mo", "6 months"),
    ("12mo", "12 months"),
];

/// `GET /dashboard/analytics?period=`
pub async fn page(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let (key, label) = PERIODS
        .iter()
        .copied()
        .find(|(k, _)| Some(*k) == p.get("period").map(String::as_str))
        .unwrap_or(PERIODS[1]);
    let period = Period::parse(key).unwrap_or(Period::Days30);
    let today = app.clock.now().0.date_naive();
    let window = period.window(today);
    let org = staff.org_id();
    let (report, (top_viewed, top_applied)) = tokio::try_join!(
        analytics::site(&app.db, org, &window),
        analytics::top_jobs(&app.db, org, &window, TOP)
    )?;
    render(&AnalyticsPage {
        chrome: chrome("Analytics"),
        nav: Nav::new(&staff, "analytics"),
        periods: PERIODS
            .iter()
            .map(|(k, l)| Choice {
                key: k,
                label: l,
                current: *k == key,
            })
            .collect(),
        period_label: label,
        from: window.from.to_string(),
        to: window.to.to_string(),
        visitors: report.visitors.count,
        visitors_exact: report.visitors.exact,
        pageviews: report.pageviews,
        job_views: report.job_views,
        apply_clicks: report.apply_clicks,
        applications: report.applications,
        jobs_posted: report.jobs_posted,
        members_joined: report.members_joined,
        chart: chart(&report.timeseries),
        days: report.timeseries.into_iter().rev().collect(),
        top_viewed,
        top_applied,
    })
}
