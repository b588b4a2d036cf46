//! Analytics: daily roll-ups written at ingestion, so reads touch one row per day.
//!
//! `analytics_daily` holds counters per organization, job and UTC day; the row of the nil
//! job id holds the site totals (every event counts there, job events also in their job's
//! row). `analytics_visitors` holds the distinct visitor hashes per job and day, and per
//! day for the whole site (nil job id). Each daily row also keeps its number of distinct
//! visitors and a HyperLogLog sketch of them ([`crate::hll`]): distinct visitors over a
//! range are counted exactly from the visitor rows while those are at most
//! [`EXACT_VISITOR_ROWS`], and estimated from the merged daily sketches beyond.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    sync::Mutex,
};

use rand::RngCore;
use uuid::Uuid;

use super::{Backend, Db, DbResult, Ts};
use crate::{dispatch, dispatch_tx, hll::Sketch};

/// Above this many (day, visitor) rows in a range, distinct visitors are estimated from
/// the daily sketches instead of counted from the rows (if [`SKETCH_WORTHWHILE`] holds).
/// Counting this many rows exactly costs about as much as merging a year of daily sketches.
pub const EXACT_VISITOR_ROWS: i64 = 20_000;

/// Sketches are merged only where the daily rows hold at least this many visitors on
/// average: with fewer, reading and decoding one sketch per day costs more than counting
/// the few visitor rows it stands for.
pub const SKETCH_WORTHWHILE: i64 = 8;

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
    /// Visitors new to the row in this batch.
    visitors: i64,
}

type Key = (Uuid, String);

/// Adds `hits` to the roll-ups in one transaction.
///
/// Visitor rows go first; the ones new to their (job, day) raise that daily row's
/// `visitors` and are added to its sketch (read back from the counter upsert, which on
/// PostgreSQL also locks the row until commit, so concurrent batches cannot lose each
/// other's registers). Rows are written in key order, so concurrent batches lock them in
/// the same order.
pub async fn ingest(db: &Db, org_id: i64, hits: &[Hit]) -> DbResult<()> {
    let mut counts: BTreeMap<Key, Counts> = BTreeMap::new();
    let mut visitors: BTreeSet<(Uuid, &str, [u8; 16])> = BTreeSet::new();
    for h in hits {
        let mut rows = vec![Uuid::nil()];
        rows.extend(h.job_id);
        for job in rows {
            let c = counts.entry((job, h.day.clone())).or_default();
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
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO analytics_visitors (org_id, job_id, day, visitor) ");
        qb.push_values(visitors.iter(), |mut row, (job, day, v)| {
            row.push_bind(org_id).push_bind(*job).push_bind(day.to_string()).push_bind(v.to_vec());
        });
        qb.push(" ON CONFLICT DO NOTHING RETURNING job_id, day, visitor");
        let fresh: Vec<(Uuid, String, Vec<u8>)> = qb.build_query_as().fetch_all(&mut **t).await?;
        let mut new_visitors: BTreeMap<Key, Vec<[u8; 16]>> = BTreeMap::new();
        for (job, day, v) in fresh {
            let Ok(v) = <[u8; 16]>::try_from(v.as_slice()) else { continue };
            let key = (job, day);
            if let Some(c) = counts.get_mut(&key) {
                c.visitors += 1;
            }
            new_visitors.entry(key).or_default().push(v);
        }
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO analytics_daily (org_id, job_id, day, page_views, job_views, apply_clicks, visitors) ",
        );
        qb.push_values(counts.iter(), |mut row, ((job, day), c)| {
            row.push_bind(org_id)
                .push_bind(*job)
                .push_bind(day.clone())
                .push_bind(c.page_views)
                .push_bind(c.job_views)
                .push_bind(c.apply_clicks)
                .push_bind(c.visitors);
        });
        qb.push(
            " ON CONFLICT (org_id, job_id, day) DO UPDATE SET
               page_views = analytics_daily.page_views + excluded.page_views,
               job_views = analytics_daily.job_views + excluded.job_views,
               apply_clicks = analytics_daily.apply_clicks + excluded.apply_clicks,
               visitors = analytics_daily.visitors + excluded.visitors
             RETURNING job_id, day, visitors, sketch",
        );
        let rows: Vec<(Uuid, String, i64, Option<Vec<u8>>)> = qb.build_query_as().fetch_all(&mut **t).await?;
        let mut sketches: Vec<(Key, Vec<u8>, i64)> = Vec::new();
        for (job, day, total, stored) in rows {
            let key = (job, day);
            let Some(added) = new_visitors.get(&key) else { continue };
            let sketch = match stored {
                Some(bytes) => match Sketch::from_bytes(&bytes) {
                    Some(s) => s,
                    // Unreadable: left alone, reads fall back to the visitor rows.
                    None => continue,
                },
                None if total > added.len() as i64 => {
                    // A row from before sketches whose sketch is not built yet: a sketch of
                    // the new visitors only would undercount; it is built from all the rows
                    // by `rebuild_sketches`, and until then reads count the rows.
                    continue;
                }
                None => Sketch::new(),
            };
            let mut sketch = sketch;
            for v in added {
                sketch.insert(v);
            }
            sketches.push((key, sketch.to_bytes(), total));
        }
        sketches.sort_by(|a, b| a.0.cmp(&b.0));
        if !sketches.is_empty() {
            write_sketches(&mut **t, org_id, &sketches, false).await?;
        }
    });
    tx.commit().await
}

/// Sets the sketches of existing daily rows, each given with the row's distinct visitors it
/// was built from. With `only_missing`, only where no sketch is set yet and the row still
/// has that many visitors (none was added by an ingestion meanwhile).
async fn write_sketches<'c, E, DB>(
    ex: E,
    org_id: i64,
    sketches: &[(Key, Vec<u8>, i64)],
    only_missing: bool,
) -> DbResult<()>
where
    E: sqlx::Executor<'c, Database = DB>,
    DB: sqlx::Database,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Uuid: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    let mut qb = sqlx::QueryBuilder::<DB>::new(
        "INSERT INTO analytics_daily (org_id, job_id, day, sketch, visitors) ",
    );
    qb.push_values(sketches.iter(), |mut row, ((job, day), bytes, visitors)| {
        row.push_bind(org_id)
            .push_bind(*job)
            .push_bind(day.clone())
            .push_bind(bytes.clone())
            .push_bind(*visitors);
    });
    qb.push(" ON CONFLICT (org_id, job_id, day) DO UPDATE SET sketch = excluded.sketch");
    if only_missing {
        qb.push(
            " WHERE analytics_daily.sketch IS NULL AND analytics_daily.visitors = excluded.visitors",
        );
    }
    qb.build().execute(ex).await?;
    Ok(())
}

/// Builds the sketches left to build by migration 7 (see [`rebuild_sketches`]), if any,
/// and records that it is done.
pub async fn finish_upgrade(db: &Db) -> DbResult<()> {
    const TASK: &str = "analytics_sketches";
    let pending: Option<String> = dispatch!(db.writer(), p => {
        sqlx::query_scalar("SELECT name FROM maintenance_tasks WHERE name = $1").bind(TASK).fetch_optional(p).await?
    });
    if pending.is_none() {
        return Ok(());
    }
    let built = rebuild_sketches(db).await?;
    tracing::info!(built, "analytics sketches of earlier days built");
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM maintenance_tasks WHERE name = $1").bind(TASK).execute(p).await?;
    });
    Ok(())
}

/// Builds the missing sketches of daily rows written before sketches existed (schema
/// version 7), from their visitor rows, in batches of rows in key order; returns how many
/// were built. A row that gains visitors meanwhile is left without one (reads then count
/// its visitor rows), so no sketch misses a visitor.
pub async fn rebuild_sketches(db: &Db) -> DbResult<u64> {
    const BATCH: i64 = 1000;
    /// Visitor rows held in memory at once (at least one daily row's).
    const BATCH_VISITORS: i64 = 100_000;
    type Row = (i64, Uuid, String);
    let mut after: Option<Row> = None;
    let mut built = 0u64;
    loop {
        let keys: Vec<(i64, Uuid, String, i64)> = dispatch!(db.writer(), p => {
            match &after {
                None => sqlx::query_as(
                    "SELECT org_id, job_id, day, visitors FROM analytics_daily WHERE sketch IS NULL AND visitors > 0 ORDER BY org_id, job_id, day LIMIT $1",
                )
                .bind(BATCH)
                .fetch_all(p).await?,
                Some((o, j, d)) => sqlx::query_as(
                    "SELECT org_id, job_id, day, visitors FROM analytics_daily WHERE (org_id, job_id, day) > ($1, $2, $3) AND sketch IS NULL AND visitors > 0 ORDER BY org_id, job_id, day LIMIT $4",
                )
                .bind(*o).bind(*j).bind(d.clone()).bind(BATCH)
                .fetch_all(p).await?,
            }
        });
        let mut held = 0;
        let keys: Vec<Row> = keys
            .into_iter()
            .take_while(|k| {
                let first = held == 0;
                held += k.3;
                first || held <= BATCH_VISITORS
            })
            .map(|(o, j, d, _)| (o, j, d))
            .collect();
        let Some(last) = keys.last().cloned() else {
            return Ok(built);
        };
        // The visitor rows of each (organization, job) of the batch over its days: an
        // equality and a range on the key, which every planner reads from the index.
        let mut spans: BTreeMap<(i64, Uuid), (String, String)> = BTreeMap::new();
        for (org, job, day) in &keys {
            let span = spans
                .entry((*org, *job))
                .or_insert_with(|| (day.clone(), day.clone()));
            span.1 = day.clone();
        }
        let mut rows: Vec<(i64, Uuid, String, Vec<u8>)> = Vec::new();
        for ((org, job), (from, to)) in &spans {
            let part: Vec<(String, Vec<u8>)> = dispatch!(db.writer(), p => {
                sqlx::query_as(
                    "SELECT day, visitor FROM analytics_visitors WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
                )
                .bind(*org).bind(*job).bind(from.clone()).bind(to.clone())
                .fetch_all(p).await?
            });
            rows.extend(part.into_iter().map(|(day, v)| (*org, *job, day, v)));
        }
        let wanted: HashSet<&Row> = keys.iter().collect();
        let mut sketches: BTreeMap<Row, (Sketch, i64)> = BTreeMap::new();
        for (org, job, day, v) in rows {
            let key = (org, job, day);
            if !wanted.contains(&key) {
                continue;
            }
            let entry = sketches.entry(key).or_default();
            entry.1 += 1;
            if let Ok(v) = <[u8; 16]>::try_from(v.as_slice()) {
                entry.0.insert(&v);
            }
        }
        let mut by_org: BTreeMap<i64, Vec<(Key, Vec<u8>, i64)>> = BTreeMap::new();
        for ((org, job, day), (sketch, n)) in &sketches {
            by_org
                .entry(*org)
                .or_default()
                .push(((*job, day.clone()), sketch.to_bytes(), *n));
        }
        let mut tx = db.begin().await?;
        dispatch_tx!(&mut tx, t => {
            for (org, list) in &by_org {
                write_sketches(&mut **t, *org, list, true).await?;
            }
        });
        tx.commit().await?;
        built += sketches.len() as u64;
        after = Some(last);
    }
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

/// Distinct visitors over a range: counted, or estimated from the daily sketches.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Visitors {
    pub count: i64,
    /// False when `count` is an estimate.
    pub exact: bool,
}

/// Per-job figures over `[from, to]` (days, inclusive).
#[derive(Debug, Default, Clone)]
pub struct JobFigures {
    pub visitors: HashMap<Uuid, i64>,
    pub views: HashMap<Uuid, i64>,
    pub apply_clicks: HashMap<Uuid, i64>,
    /// False when the visitor figures are estimates (more than [`EXACT_VISITOR_ROWS`]
    /// visitor rows over all the jobs asked for).
    pub visitors_exact: bool,
}

/// Sum and largest of the daily distinct visitors of one job (or the site) over a range:
/// the number of (day, visitor) rows, and a lower bound of the distinct visitors; and the
/// number of daily rows.
#[derive(Debug, Default, Clone, Copy)]
struct DailyVisitors {
    rows: i64,
    max: i64,
    days: i64,
}

/// True when distinct visitors over `rows` (day, visitor) rows in `days` daily rows are
/// estimated rather than counted.
fn estimate(rows: i64, days: i64) -> bool {
    rows > EXACT_VISITOR_ROWS && rows >= SKETCH_WORTHWHILE * days
}

impl DailyVisitors {
    /// The estimate of `sketch`, kept within what the daily counts prove: at least the
    /// busiest day, at most every day's visitors added up.
    fn clamp(self, sketch: &Sketch) -> i64 {
        (sketch.estimate().round() as i64).clamp(self.max, self.rows.max(self.max))
    }
}

pub async fn job_figures(
    db: &Db,
    org_id: i64,
    jobs: &[Uuid],
    from: &str,
    to: &str,
) -> DbResult<JobFigures> {
    let mut out = JobFigures {
        visitors_exact: true,
        ..JobFigures::default()
    };
    if jobs.is_empty() {
        return Ok(out);
    }
    let mut daily: HashMap<Uuid, DailyVisitors> = HashMap::new();
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new(
            "SELECT job_id, CAST(SUM(job_views) AS BIGINT), CAST(SUM(apply_clicks) AS BIGINT), CAST(SUM(visitors) AS BIGINT), MAX(visitors), COUNT(*) FROM analytics_daily WHERE org_id = ",
        );
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.to_string()).push(" AND day <= ").push_bind(to.to_string());
        qb.push(" AND job_id");
        super::push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        let rows: Vec<(Uuid, i64, i64, i64, i64, i64)> = qb.build_query_as().fetch_all(p).await?;
        for (job, views, clicks, rows, max, days) in rows {
            out.views.insert(job, views);
            out.apply_clicks.insert(job, clicks);
            daily.insert(job, DailyVisitors { rows, max, days });
        }
    });
    let rows: i64 = daily.values().map(|d| d.rows).sum();
    let days: i64 = daily.values().map(|d| d.days).sum();
    if !estimate(rows, days) {
        if rows > 0 {
            out.visitors = exact_visitors(db, org_id, jobs, from, to).await?;
        }
        return Ok(out);
    }
    out.visitors_exact = false;
    let busy: Vec<Uuid> = daily
        .iter()
        .filter(|(_, d)| d.rows > 0)
        .map(|(j, _)| *j)
        .collect();
    let sketches = merged_sketches(db, org_id, &busy, from, to, Sketch::new).await?;
    for (job, sketch) in sketches {
        let d = daily.get(&job).copied().unwrap_or_default();
        out.visitors.insert(job, d.clamp(&sketch));
    }
    Ok(out)
}

/// Distinct visitors per job over `[from, to]`, counted from the visitor rows.
async fn exact_visitors(
    db: &Db,
    org_id: i64,
    jobs: &[Uuid],
    from: &str,
    to: &str,
) -> DbResult<HashMap<Uuid, i64>> {
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, COUNT(DISTINCT visitor) FROM analytics_visitors WHERE org_id = ");
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.to_string()).push(" AND day <= ").push_bind(to.to_string());
        qb.push(" AND job_id");
        super::push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        let rows: Vec<(Uuid, i64)> = qb.build_query_as().fetch_all(p).await?;
        Ok(rows.into_iter().collect())
    })
}

/// The union of the daily sketches of each job over `[from, to]`. Days whose sketch is
/// missing (rows from before sketches, not rebuilt yet) are read from the visitor rows.
async fn merged_sketches(
    db: &Db,
    org_id: i64,
    jobs: &[Uuid],
    from: &str,
    to: &str,
    empty: fn() -> Sketch,
) -> DbResult<HashMap<Uuid, Sketch>> {
    let mut out: HashMap<Uuid, Sketch> = HashMap::new();
    if jobs.is_empty() {
        return Ok(out);
    }
    let mut missing: HashMap<Uuid, HashSet<String>> = HashMap::new();
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, day, sketch FROM analytics_daily WHERE org_id = ");
        qb.push_bind(org_id).push(" AND day >= ").push_bind(from.to_string()).push(" AND day <= ").push_bind(to.to_string());
        qb.push(" AND visitors > 0 AND job_id");
        super::push_in_list(&mut qb, jobs);
        let rows: Vec<(Uuid, String, Option<Vec<u8>>)> = qb.build_query_as().fetch_all(p).await?;
        for (job, day, bytes) in rows {
            let sketch = out.entry(job).or_insert_with(empty);
            if !bytes.is_some_and(|b| sketch.merge_bytes(&b)) {
                missing.entry(job).or_default().insert(day);
            }
        }
    });
    for (job, days) in missing {
        let rows: Vec<(String, Vec<u8>)> = dispatch!(db.reader(), p => {
            sqlx::query_as("SELECT day, visitor FROM analytics_visitors WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4")
                .bind(org_id).bind(job).bind(from).bind(to)
                .fetch_all(p).await?
        });
        let sketch = out.entry(job).or_insert_with(empty);
        for (day, v) in rows {
            if let (true, Ok(v)) = (days.contains(&day), <[u8; 16]>::try_from(v.as_slice())) {
                sketch.insert(&v);
            }
        }
    }
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

/// Site figures per day over `[from, to]`, and distinct visitors over the whole range.
pub async fn site_figures(
    db: &Db,
    org_id: i64,
    from: &str,
    to: &str,
) -> DbResult<(HashMap<String, Day>, Visitors)> {
    let mut days: HashMap<String, Day> = HashMap::new();
    let nil = Uuid::nil();
    let totals: Vec<(String, i64, i64, i64, i64)> = dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT day, page_views, job_views, apply_clicks, visitors FROM analytics_daily WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
        )
        .bind(org_id).bind(nil).bind(from).bind(to)
        .fetch_all(p).await?
    });
    let mut daily = DailyVisitors::default();
    for (day, pv, jv, ac, visitors) in totals {
        let d = days.entry(day).or_default();
        d.page_views = pv;
        d.job_views = jv;
        d.apply_clicks = ac;
        d.visitors = visitors;
        daily.rows += visitors;
        daily.max = daily.max.max(visitors);
        daily.days += 1;
    }
    let visitors = if !estimate(daily.rows, daily.days) {
        let count = if daily.rows == 0 {
            0
        } else {
            exact_visitors(db, org_id, &[nil], from, to)
                .await?
                .get(&nil)
                .copied()
                .unwrap_or(0)
        };
        Visitors { count, exact: true }
    } else {
        let sketch = merged_sketches(db, org_id, &[nil], from, to, Sketch::dense)
            .await?
            .remove(&nil)
            .unwrap_or_default();
        Visitors {
            count: daily.clamp(&sketch),
            exact: false,
        }
    };
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
        sqlx::query_scalar(sql).bind(org_id).bind(start).bind(end).fetch_one(p).await.map_err(crate::db::StoreError::from)
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
