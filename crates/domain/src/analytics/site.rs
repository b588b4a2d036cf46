//! Site figures: the window of `GET /analytics` (a period, or a range of days) and the
//! site's totals and daily series over it.

use chrono::{Datelike, NaiveDate};

use super::{
    hll::Sketch,
    model::{
        MAX_RANGE_DAYS, Period, ReportPeriod, SiteDay, SiteQuery, SiteReport, Visitors, Window,
    },
    store::{self, Created, day_text},
    visitors::DailyVisitors,
};
use crate::{JobId, OrgId, QueryInput, Result, db::Db};

/// Reads the window of a site report from `q`: `period` (default `30d`) ending `today`,
/// or `from` and `to` together (at most [`MAX_RANGE_DAYS`] days, between the years 2000
/// and 9000), never both. Problems are recorded in `q`.
pub fn site_window(q: &mut QueryInput, today: NaiveDate) -> Window {
    let raw = SiteQuery::read(q);
    // A date sent but refused still counts as sent.
    let from_sent = raw.from.is_some() || q.has_error("from");
    let to_sent = raw.to.is_some() || q.has_error("to");
    if !from_sent && !to_sent {
        return raw.period.unwrap_or(Period::Days30).window(today);
    }
    for (name, sent) in [("from", from_sent), ("to", to_sent)] {
        if !sent {
            q.error(name, "required", "from and to go together.");
        }
    }
    if raw.period.is_some() {
        q.error(
            "period",
            "invalid_value",
            "Give either period or from and to.",
        );
    }
    let custom = |from, to| Window {
        period: ReportPeriod::Custom,
        from,
        to,
    };
    match (raw.from, raw.to) {
        (Some(f), Some(t)) if t < f => {
            q.error("to", "out_of_range", "Must not be before from.");
            custom(today, today)
        }
        (Some(f), Some(t)) if (t - f).num_days() >= MAX_RANGE_DAYS => {
            q.error(
                "to",
                "out_of_range",
                format!("The range may span at most {MAX_RANGE_DAYS} days."),
            );
            custom(today, today)
        }
        (Some(f), Some(t)) if f.year() < 2000 || t.year() > 9000 => {
            q.error(
                "from",
                "out_of_range",
                "Must be a date between the years 2000 and 9000.",
            );
            custom(today, today)
        }
        (Some(from), Some(to)) => custom(from, to),
        _ => custom(today, today),
    }
}

/// The site's figures over `w`: totals, distinct visitors over the whole window (counted,
/// or estimated from the daily sketches past the exact bound), jobs posted and members
/// joined, and one entry per day.
pub async fn site(db: &Db, org_id: OrgId, w: &Window) -> Result<SiteReport> {
    let site = store::SITE;
    let counters = store::site_counters(db, org_id, w).await?;
    let mut daily = DailyVisitors::default();
    for c in counters.values() {
        daily.add(DailyVisitors {
            rows: c.visitors,
            max: c.visitors,
            days: 1,
        });
    }
    let visitors = if !daily.estimated() {
        let count = if daily.rows == 0 {
            0
        } else {
            let counted = store::exact_visitors(db, org_id, &[site], w).await?;
            counted.get(&site).copied().unwrap_or(0)
        };
        Visitors { count, exact: true }
    } else {
        let sketch = store::merged_sketches(db, org_id, &[site], w, Sketch::dense)
            .await?
            .remove(&site)
            .unwrap_or_default();
        Visitors {
            count: daily.clamp(&sketch),
            exact: false,
        }
    };
    let applications = store::applications_by_day(db, org_id, w).await?;
    let jobs_posted = store::created_in(db, org_id, Created::Jobs, w).await?;
    let members_joined = store::created_in(db, org_id, Created::Members, w).await?;
    let timeseries: Vec<SiteDay> = w
        .days()
        .map(|date| {
            let key = day_text(date);
            let c = counters.get(&key).copied().unwrap_or_default();
            SiteDay {
                date,
                visitors: c.visitors,
                pageviews: c.page_views,
                job_views: c.job_views,
                apply_clicks: c.apply_clicks,
                applications: applications.get(&key).copied().unwrap_or(0),
            }
        })
        .collect();
    Ok(SiteReport {
        window: *w,
        visitors,
        pageviews: timeseries.iter().map(|d| d.pageviews).sum(),
        job_views: timeseries.iter().map(|d| d.job_views).sum(),
        apply_clicks: timeseries.iter().map(|d| d.apply_clicks).sum(),
        applications: timeseries.iter().map(|d| d.applications).sum(),
        jobs_posted,
        members_joined,
        timeseries,
    })
}

/// A job in a top list of the dashboard: its title (empty once deleted) and its figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopJob {
    pub job_id: JobId,
    pub title: String,
    pub count: i64,
}

/// The `limit` jobs with the most job views and the `limit` with the most applications
/// in `w`, most first.
pub async fn top_jobs(
    db: &Db,
    org_id: OrgId,
    w: &Window,
    limit: i64,
) -> Result<(Vec<TopJob>, Vec<TopJob>)> {
    let (viewed, applied) = tokio::try_join!(
        store::top_viewed(db, org_id, w, limit),
        store::top_applied(db, org_id, w, limit)
    )?;
    let mut ids: Vec<JobId> = viewed.iter().chain(&applied).map(|(id, _)| *id).collect();
    ids.sort();
    ids.dedup();
    let titles: std::collections::HashMap<JobId, String> = crate::jobs::get_many(db, org_id, &ids)
        .await?
        .into_iter()
        .map(|j| (j.id, j.title))
        .collect();
    let named = |rows: Vec<(JobId, i64)>| {
        rows.into_iter()
            .map(|(job_id, count)| TopJob {
                job_id,
                title: titles.get(&job_id).cloned().unwrap_or_default(),
                count,
            })
            .collect()
    };
    Ok((named(viewed), named(applied)))
}
