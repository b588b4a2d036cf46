//! Analytics: daily roll-ups written at ingestion, so reads touch one row per day.
//!
//! `analytics_daily` holds counters per organization, job and UTC day; the row of the nil
//! job id holds the site totals (every event counts there, job events also in their job's
//! row). `analytics_visitors` holds the distinct visitor hashes per job and day, and per
//! day for the whole site (nil job id).

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
};

use rand::RngCore;
use uuid::Uuid;

use super::{Backend, Db, DbResult, Ts};
use crate::{dispatch, dispatch_tx};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    PageView,
    JobView,
    ApplyClick,
}

/// One event, already validated and reduced to what is kept.
#[derive(Debug, Clone)]
pub struct Hit {
    pub kind: Kind,
    pub job_id: Option<Uuid>,
    /// UTC day, `YYYY-MM-DD`.
    pub day: String,
    pub visitor: [u8; 16],
}

#[derive(Default, Clone, Copy)]
struct Counts {
    page_views: i64,
    job_views: i64,
    apply_clicks: i64,
}

/// Adds `hits` to the roll-ups in one transaction.
pub async fn ingest(db: &Db, org_id: i64, hits: &[Hit]) -> DbResult<()> {
    let mut counts: HashMap<(Uuid, &str), Counts> = HashMap::new();
    let mut visitors: HashSet<(Uuid, &str, [u8; 16])> = HashSet::new();
    for h in hits {
        let mut rows = vec![Uuid::nil()];
        rows.extend(h.job_id);
        for job in rows {
            let c = counts.entry((job, h.day.as_str())).or_default();
            match h.kind {
                Kind::PageView => c.page_views += 1,
                Kind::JobView => c.job_views += 1,
                Kind::ApplyClick => c.apply_clicks += 1,
            }
            visitors.insert((job, h.day.as_str(), h.visitor));
        }
    }
    if counts.is_empty() {
        return Ok(());
    }
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO analytics_daily (org_id, job_id, day, page_views, job_views, apply_clicks) ",
        );
        qb.push_values(counts.iter(), |mut row, ((job, day), c)| {
            row.push_bind(org_id)
                .push_bind(*job)
                .push_bind(day.to_string())
                .push_bind(c.page_views)
                .push_bind(c.job_views)
                .push_bind(c.apply_clicks);
        });
        qb.push(
            " ON CONFLICT (org_id, job_id, day) DO UPDATE SET
               page_views = analytics_daily.page_views + excluded.page_views,
               job_views = analytics_daily.job_views + excluded.job_views,
               apply_clicks = analytics_daily.apply_clicks + excluded.apply_clicks",
        );
        qb.build().execute(&mut **t).await?;
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO analytics_visitors (org_id, job_id, day, visitor) ");
        qb.push_values(visitors.iter(), |mut row, (job, day, v)| {
            row.push_bind(org_id).push_bind(*job).push_bind(day.to_string()).push_bind(v.to_vec());
        });
        qb.push(" ON CONFLICT DO NOTHING");
        qb.build().execute(&mut **t).await?;
    });
    tx.commit().await
}

/// The salt of `day` for hashing addresses, created on first use and shared by every
/// node; salts of days before yesterday are deleted.
pub async fn daily_salt(db: &Db, day: &str) -> DbResult<Vec<u8>> {
    static CACHE: Mutex<Option<(String, Vec<u8>)>> = Mutex::new(None);
    if let Some((d, s)) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).as_ref()
        && d == day
    {
        return Ok(s.clone());
    }
    let mut fresh = vec![0u8; 32];
    rand::rng().fill_bytes(&mut fresh);
    let salt: Vec<u8> = dispatch!(db.writer(), p => {
        sqlx::query("INSERT INTO analytics_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING")
            .bind(day)
            .bind(&fresh)
            .execute(p)
            .await?;
        sqlx::query("DELETE FROM analytics_salts WHERE day < $1")
            .bind(previous_day(day))
            .execute(p)
            .await?;
        sqlx::query_scalar("SELECT salt FROM analytics_salts WHERE day = $1").bind(day).fetch_one(p).await?
    });
    *CACHE.lock().unwrap_or_else(|e| e.into_inner()) = Some((day.to_string(), salt.clone()));
    Ok(salt)
}

fn previous_day(day: &str) -> String {
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.pred_opt())
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

/// Per-job figures over `[from, to]` (days, inclusive).
#[derive(Debug, Default, Clone)]
pub struct JobFigures {
    pub visitors: HashMap<Uuid, i64>,
    pub views: HashMap<Uuid, i64>,
    pub apply_clicks: HashMap<Uuid, i64>,
}

pub async fn job_figures(
    db: &Db,
    org_id: i64,
    jobs: &[Uuid],
    from: &str,
    to: &str,
) -> DbResult<JobFigures> {
    let mut out = JobFigures::default();
    if jobs.is_empty() {
        return Ok(out);
    }
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new(
            "SELECT job_id, CAST(SUM(job_views) AS BIGINT), CAST(SUM(apply_clicks) AS BIGINT) FROM analytics_daily WHERE org_id = ",
        );
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.to_string()).push(" AND day <= ").push_bind(to.to_string());
        qb.push(" AND job_id");
        super::push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        let rows: Vec<(Uuid, i64, i64)> = qb.build_query_as().fetch_all(p).await?;
        for (job, views, clicks) in rows {
            out.views.insert(job, views);
            out.apply_clicks.insert(job, clicks);
        }
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, COUNT(DISTINCT visitor) FROM analytics_visitors WHERE org_id = ");
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.to_string()).push(" AND day <= ").push_bind(to.to_string());
        qb.push(" AND job_id");
        super::push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        let rows: Vec<(Uuid, i64)> = qb.build_query_as().fetch_all(p).await?;
        out.visitors.extend(rows);
    });
    Ok(out)
}

/// Site figures of one day.
#[derive(Debug, Default, Clone, Copy)]
pub struct Day {
    pub visitors: i64,
    pub page_views: i64,
    pub job_views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
}

type SiteRows = (Vec<(String, i64, i64, i64)>, Vec<(String, i64)>, i64);

/// Site figures per day over `[from, to]`, and distinct visitors over the whole range.
pub async fn site_figures(
    db: &Db,
    org_id: i64,
    from: &str,
    to: &str,
) -> DbResult<(HashMap<String, Day>, i64)> {
    let mut days: HashMap<String, Day> = HashMap::new();
    let nil = Uuid::nil();
    let (totals, visitors_per_day, visitors): SiteRows = dispatch!(db.reader(), p => {
        let totals = sqlx::query_as(
            "SELECT day, page_views, job_views, apply_clicks FROM analytics_daily WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
        )
        .bind(org_id).bind(nil).bind(from).bind(to)
        .fetch_all(p).await?;
        let per_day = sqlx::query_as(
            "SELECT day, COUNT(*) FROM analytics_visitors WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4 GROUP BY day",
        )
        .bind(org_id).bind(nil).bind(from).bind(to)
        .fetch_all(p).await?;
        let distinct: i64 = sqlx::query_scalar(
            "SELECT COUNT(DISTINCT visitor) FROM analytics_visitors WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
        )
        .bind(org_id).bind(nil).bind(from).bind(to)
        .fetch_one(p).await?;
        (totals, per_day, distinct)
    });
    for (day, pv, jv, ac) in totals {
        let d = days.entry(day).or_default();
        d.page_views = pv;
        d.job_views = jv;
        d.apply_clicks = ac;
    }
    for (day, n) in visitors_per_day {
        days.entry(day).or_default().visitors = n;
    }
    let (start, end) = day_bounds(from, to);
    let day_expr = match db.backend() {
        Backend::Sqlite => "strftime('%Y-%m-%d', created_at / 1000000, 'unixepoch')",
        Backend::Postgres => "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
    };
    let sql = format!(
        "SELECT {day_expr} AS day, COUNT(*) FROM applications WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1"
    );
    let apps: Vec<(String, i64)> = dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(start).bind(end).fetch_all(p).await?
    });
    for (day, n) in apps {
        days.entry(day).or_default().applications = n;
    }
    Ok((days, visitors))
}

/// Records of `table` (jobs, members) created in `[from, to]` (days, inclusive).
pub async fn created_between(
    db: &Db,
    org_id: i64,
    table: Table,
    from: &str,
    to: &str,
) -> DbResult<i64> {
    let (start, end) = day_bounds(from, to);
    let sql = match table {
        Table::Jobs => {
            "SELECT COUNT(*) FROM jobs WHERE org_id = $1 AND created_at >= $2 AND created_at < $3"
        }
        Table::Members => {
            "SELECT COUNT(*) FROM members WHERE org_id = $1 AND created_at >= $2 AND created_at < $3"
        }
    };
    dispatch!(db.reader(), p => {
        sqlx::query_scalar(sql).bind(org_id).bind(start).bind(end).fetch_one(p).await
    })
}

/// Tables whose creations are counted.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    Jobs,
    Members,
}

/// The ids among `ids` that are jobs of this organization.
pub async fn known_jobs(db: &Db, org_id: i64, ids: &[Uuid]) -> DbResult<Vec<Uuid>> {
    super::owned_ids(db, super::Owned::Jobs, org_id, ids).await
}

/// The instants that bound the days `[from, to]`: start of `from`, start of the day after `to`.
pub fn day_bounds(from: &str, to: &str) -> (Ts, Ts) {
    let start = |d: &str| {
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|dt| Ts::from_datetime(dt.and_utc()))
            .unwrap_or_else(Ts::now)
    };
    (start(from), start(to).plus(chrono::Duration::days(1)))
}
