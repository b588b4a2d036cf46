//! Reads the public board needs beyond the list: the full rows of a listed page (dates,
//! salary, logo for the page and the feeds), and the live jobs in list order, batch by
//! batch, for sitemaps of any size.

use std::sync::LazyLock;

use super::model::Job;
use crate::{JobId, OrgId, Result, Ts, db::Db, dispatch};

static COLUMNS: LazyLock<String> = LazyLock::new(|| Job::COLUMNS.join(", "));

/// The jobs of the organization with these ids, in the order of `ids` (ids that are not
/// the organization's are left out).
pub async fn get_many(db: &Db, org_id: OrgId, ids: &[JobId]) -> Result<Vec<Job>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 2)).collect();
    // `org_id + 0` keeps the planner off the organization's indexes (SQLite without
    // statistics would scan every job of the organization); the ids' unique index finds
    // the rows, and the organization is checked on each.
    let sql = format!(
        "SELECT {} FROM jobs WHERE org_id + 0 = $1 AND id IN ({})",
        *COLUMNS,
        marks.join(", ")
    );
    let mut rows: Vec<Job> = dispatch!(db.reader(), p => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id);
        for id in ids {
            q = q.bind(*id);
        }
        q.fetch_all(p).await.map_err(crate::db::StoreError::from)?
    });
    rows.sort_by_key(|j| ids.iter().position(|i| *i == j.id));
    Ok(rows)
}

/// A live job as a sitemap lists it, with its place in the list order.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LiveJob {
    pub slug: String,
    pub updated_at: Ts,
    is_sticky: bool,
    created_at: Ts,
    id: JobId,
}

/// A job's place in the list order (sticky first, newest first).
#[derive(Debug, Clone, Copy)]
pub struct ListKey {
    is_sticky: bool,
    created_at: Ts,
    id: JobId,
}

impl LiveJob {
    pub fn key(&self) -> ListKey {
        ListKey {
            is_sticky: self.is_sticky,
            created_at: self.created_at,
            id: self.id,
        }
    }
}

impl Job {
    /// The job's place in the list order.
    pub fn list_key(&self) -> ListKey {
        ListKey {
            is_sticky: self.is_sticky,
            created_at: self.created_at,
            id: self.id,
        }
    }
}

/// Where a batch of [`live_batch`] or [`live_jobs`] starts.
#[derive(Debug, Clone, Copy)]
pub enum Start {
    /// After skipping this many live jobs (the first batch of a sitemap part or a feed).
    Skip(i64),
    /// Right after the job at this place (every later batch: a seek in the list index,
    /// not a scan).
    After(ListKey),
}

/// Up to `limit` live jobs of the organization at `now`, in list order (sticky first,
/// newest first), from `from`. Each batch is one short statement, so a long sitemap
/// holds no read transaction open while a slow client reads it.
pub async fn live_batch(
    db: &Db,
    org_id: OrgId,
    now: Ts,
    from: Start,
    limit: i64,
) -> Result<Vec<LiveJob>> {
    live_rows(
        db,
        org_id,
        now,
        from,
        limit,
        "slug, updated_at, is_sticky, created_at, id",
    )
    .await
}

/// [`live_batch`] with every column of each job (the feeds for aggregators).
pub async fn live_jobs(
    db: &Db,
    org_id: OrgId,
    now: Ts,
    from: Start,
    limit: i64,
) -> Result<Vec<Job>> {
    live_rows(db, org_id, now, from, limit, &COLUMNS).await
}

async fn live_rows<T>(
    db: &Db,
    org_id: OrgId,
    now: Ts,
    from: Start,
    limit: i64,
    columns: &str,
) -> Result<Vec<T>>
where
    T: Send
        + Unpin
        + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
{
    const LIVE: &str =
        "org_id = $1 AND status = 'active' AND (expires_at IS NULL OR expires_at > $2)";
    const ORDER: &str = "ORDER BY is_sticky DESC, created_at DESC, id DESC";
    let rows: Vec<T> = match from {
        Start::Skip(skip) => {
            let sql = format!("SELECT {columns} FROM jobs WHERE {LIVE} {ORDER} LIMIT $3 OFFSET $4");
            dispatch!(db.reader(), p => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(now)
                    .bind(limit)
                    .bind(skip)
                    .fetch_all(p)
                    .await
                    .map_err(crate::db::StoreError::from)?
            })
        }
        Start::After(last) => {
            // The list order is descending in every column, so "after" is a smaller row
            // value; both engines seek the list index with it.
            let sql = format!(
                "SELECT {columns} FROM jobs WHERE {LIVE} AND (is_sticky, created_at, id) < ($3, $4, $5) {ORDER} LIMIT $6"
            );
            dispatch!(db.reader(), p => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(now)
                    .bind(last.is_sticky)
                    .bind(last.created_at)
                    .bind(last.id)
                    .bind(limit)
                    .fetch_all(p)
                    .await
                    .map_err(crate::db::StoreError::from)?
            })
        }
    };
    Ok(rows)
}

/// The number of live jobs of the organization at `now` (from the per-organization
/// counters, as the unfiltered list counts them).
pub async fn count_live(db: &Db, org_id: OrgId, now: Ts) -> Result<i64> {
    let q = super::ListQuery {
        filter: super::ListFilter {
            statuses: Some(vec![super::JobStatus::Active]),
            ..Default::default()
        },
        search: None,
        locations: Vec::new(),
        page: 1,
        per_page: 1,
    };
    Ok(super::list(db, org_id, &q, now).await?.total.items)
}
