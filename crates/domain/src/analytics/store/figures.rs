//! Reading the figures of a window: the daily counters of jobs and of the site, distinct
//! visitors counted from the visitor rows or merged from the daily sketches, and the
//! applications, jobs and members created in the window.

use std::collections::{HashMap, HashSet};

use super::SITE;
use super::{day_text, visitor_rows};
use crate::{
    JobId, OrgId,
    analytics::{hll::Sketch, model::Window, visitors::DailyVisitors},
    db::{Backend, Db, DbResult, push_in_list},
    dispatch,
};

/// The counters of one job over a window.
#[derive(Debug, Default, Clone, Copy)]
pub struct JobCounters {
    pub views: i64,
    pub apply_clicks: i64,
    pub visitors: DailyVisitors,
}

/// The counters of each of `jobs` that has any over `w`.
pub async fn job_counters(
    db: &Db,
    org_id: OrgId,
    jobs: &[JobId],
    w: &Window,
) -> DbResult<HashMap<JobId, JobCounters>> {
    if jobs.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<(JobId, i64, i64, i64, i64, i64)> = dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new(
            "SELECT job_id, CAST(SUM(job_views) AS BIGINT), CAST(SUM(apply_clicks) AS BIGINT), CAST(SUM(visitors) AS BIGINT), MAX(visitors), COUNT(*) FROM analytics_daily WHERE org_id = ",
        );
        qb.push_bind(org_id).push(" AND day >= ").push_bind(day_text(w.from)).push(" AND day <= ").push_bind(day_text(w.to));
        qb.push(" AND job_id");
        push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        qb.build_query_as().persistent(false).fetch_all(p).await?
    });
    Ok(rows
        .into_iter()
        .map(|(job, views, apply_clicks, rows, max, days)| {
            let visitors = DailyVisitors { rows, max, days };
            (
                job,
                JobCounters {
                    views,
                    apply_clicks,
                    visitors,
                },
            )
        })
        .collect())
}

/// Distinct visitors per job (or the site, nil id) over `w`, counted from the visitor
/// rows.
pub async fn exact_visitors(
    db: &Db,
    org_id: OrgId,
    jobs: &[JobId],
    w: &Window,
) -> DbResult<HashMap<JobId, i64>> {
    let rows: Vec<(JobId, i64)> = dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, COUNT(DISTINCT visitor) FROM analytics_visitors WHERE org_id = ");
        qb.push_bind(org_id).push(" AND day >= ").push_bind(day_text(w.from)).push(" AND day <= ").push_bind(day_text(w.to));
        qb.push(" AND job_id");
        push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        qb.build_query_as().persistent(false).fetch_all(p).await?
    });
    Ok(rows.into_iter().collect())
}

/// The union of the daily sketches of each job over `w`, each started from `empty()`.
/// Days whose sketch is missing (rows from before sketches, not rebuilt yet) are read
/// from the visitor rows.
pub async fn merged_sketches(
    db: &Db,
    org_id: OrgId,
    jobs: &[JobId],
    w: &Window,
    empty: fn() -> Sketch,
) -> DbResult<HashMap<JobId, Sketch>> {
    let mut out: HashMap<JobId, Sketch> = HashMap::new();
    if jobs.is_empty() {
        return Ok(out);
    }
    let (from, to) = (day_text(w.from), day_text(w.to));
    let mut missing: HashMap<JobId, HashSet<String>> = HashMap::new();
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, day, sketch FROM analytics_daily WHERE org_id = ");
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.clone()).push(" AND day <= ").push_bind(to.clone());
        qb.push(" AND visitors > 0 AND job_id");
        push_in_list(&mut qb, jobs);
        let rows: Vec<(JobId, String, Option<Vec<u8>>)> = qb.build_query_as().persistent(false).fetch_all(p).await?;
        for (job, day, bytes) in rows {
            let sketch = out.entry(job).or_insert_with(empty);
            if !bytes.is_some_and(|b| sketch.merge_bytes(&b)) {
                missing.entry(job).or_default().insert(day);
            }
        }
    });
    for (job, days) in missing {
        let rows = visitor_rows(db.reader(), org_id, job, &from, &to).await?;
        let sketch = out.entry(job).or_insert_with(empty);
        for (day, v) in rows {
            if let (true, Ok(v)) = (days.contains(&day), <[u8; 16]>::try_from(v.as_slice())) {
                sketch.insert(&v);
            }
        }
    }
    Ok(out)
}

/// The site's counters of one day.
#[derive(Debug, Default, Clone, Copy)]
pub struct SiteCounters {
    pub page_views: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub visitors: i64,
}

/// The site's counters of each day of `w` that has any, by day.
pub async fn site_counters(
    db: &Db,
    org_id: OrgId,
    w: &Window,
) -> DbResult<HashMap<String, SiteCounters>> {
    let rows: Vec<(String, i64, i64, i64, i64)> = dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT day, page_views, job_views, apply_clicks, visitors FROM analytics_daily WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
        )
        .bind(org_id).bind(SITE).bind(day_text(w.from)).bind(day_text(w.to))
        .fetch_all(p).await?
    });
    Ok(rows
        .into_iter()
        .map(|(day, page_views, job_views, apply_clicks, visitors)| {
            let c = SiteCounters {
                page_views,
                job_views,
                apply_clicks,
                visitors,
            };
            (day, c)
        })
        .collect())
}

/// Applications received in `w`, per UTC day.
pub async fn applications_by_day(
    db: &Db,
    org_id: OrgId,
    w: &Window,
) -> DbResult<HashMap<String, i64>> {
    let (start, end) = w.bounds();
    let day_expr = match db.backend() {
        Backend::Sqlite => "strftime('%Y-%m-%d', created_at / 1000000, 'unixepoch')",
        Backend::Postgres => "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
    };
    let sql = format!(
        "SELECT {day_expr} AS day, COUNT(*) FROM applications WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1"
    );
    let rows: Vec<(String, i64)> = dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(start).bind(end).fetch_all(p).await?
    });
    Ok(rows.into_iter().collect())
}

/// Applications received in `w`, per job, for the given jobs.
pub async fn applications_by_job(
    db: &Db,
    org_id: OrgId,
    jobs: &[JobId],
    w: &Window,
) -> DbResult<HashMap<JobId, i64>> {
    if jobs.is_empty() {
        return Ok(HashMap::new());
    }
    let (start, end) = w.bounds();
    let rows: Vec<(JobId, i64)> = dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, COUNT(*) FROM applications WHERE org_id = ");
        qb.push_bind(org_id).push(" AND created_at >= ").push_bind(start).push(" AND created_at < ").push_bind(end);
        qb.push(" AND job_id");
        push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        qb.build_query_as().persistent(false).fetch_all(p).await?
    });
    Ok(rows.into_iter().collect())
}

/// Records counted by their creation.
#[derive(Debug, Clone, Copy)]
pub enum Created {
    Jobs,
    Members,
}

/// Records of one kind created in `w`.
pub async fn created_in(db: &Db, org_id: OrgId, what: Created, w: &Window) -> DbResult<i64> {
    let (start, end) = w.bounds();
    let sql = match what {
        Created::Jobs => {
            "SELECT COUNT(*) FROM jobs WHERE org_id = $1 AND created_at >= $2 AND created_at < $3"
        }
        Created::Members => {
            "SELECT COUNT(*) FROM members WHERE org_id = $1 AND created_at >= $2 AND created_at < $3"
        }
    };
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar(sql).bind(org_id).bind(start).bind(end).fetch_one(p).await?
    }))
}

/// The `limit` jobs with the most job views in `w` (then by id), with their views.
///
/// One pass over the organization's rows in primary-key order (job, then day), which
/// groups without sorting; on SQLite the day index is kept out (`+day`): reaching each row
/// of a long window through it costs one lookup per row, ten times the pass.
pub async fn top_viewed(
    db: &Db,
    org_id: OrgId,
    w: &Window,
    limit: i64,
) -> DbResult<Vec<(JobId, i64)>> {
    let day = match db.backend() {
        crate::db::Backend::Sqlite => "+day",
        crate::db::Backend::Postgres => "day",
    };
    let sql = format!(
        "SELECT job_id, CAST(SUM(job_views) AS BIGINT) AS views FROM analytics_daily
         WHERE org_id = $1 AND {day} >= $2 AND {day} <= $3 AND job_id <> $4
         GROUP BY job_id HAVING SUM(job_views) > 0 ORDER BY views DESC, job_id LIMIT $5"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(org_id).bind(day_text(w.from)).bind(day_text(w.to)).bind(SITE).bind(limit)
        .fetch_all(p).await?
    }))
}

/// The `limit` jobs with the most applications received in `w` (then by id), with
/// their counts.
pub async fn top_applied(
    db: &Db,
    org_id: OrgId,
    w: &Window,
    limit: i64,
) -> DbResult<Vec<(JobId, i64)>> {
    let (start, end) = w.bounds();
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT job_id, COUNT(*) AS n FROM applications
             WHERE org_id = $1 AND created_at >= $2 AND created_at < $3
             GROUP BY job_id ORDER BY n DESC, job_id LIMIT $4",
        )
        .bind(org_id).bind(start).bind(end).bind(limit)
        .fetch_all(p).await?
    }))
}
