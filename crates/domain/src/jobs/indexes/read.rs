//! Reading an organization's jobs into a new index, in list order, from one snapshot.

use futures_util::TryStreamExt;
use jobboard_search::index::{Build, Doc, OrgIndex};
use sqlx::Connection;

use uuid::Uuid;

use super::changes::Mark;
use crate::{
    Countries, OrgId, Ts,
    db::{Db, DbResult, Pool},
    jobs::index::{self, DocRow},
};
use jobboard_store::StoreError;

/// The organization's job count, from the counters.
pub(super) async fn count_jobs(db: &Db, org_id: OrgId) -> DbResult<i64> {
    let sql = "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM job_counts WHERE org_id = $1";
    Ok(crate::dispatch!(db.reader(), p => {
        sqlx::query_scalar(sql).bind(org_id).fetch_one(p).await?
    }))
}

/// Reads every job of the organization in list order into a new index, with the mark
/// its change reads start from (one snapshot). `None` when the jobs cannot be indexed.
pub(super) async fn build(db: &Db, org_id: OrgId) -> DbResult<Option<(OrgIndex, Mark)>> {
    // PostgreSQL sends rows in batches: one statement reads them all.
    let rows = format!(
        "SELECT {} FROM jobs j WHERE j.org_id = $1 ORDER BY j.created_at, j.id",
        DocRow::COLUMNS
    );
    let mut index = index::new_index();
    // Room for the jobs counted now and a few written while the build reads.
    let expected = count_jobs(db, org_id).await?.max(0) as usize;
    index.reserve(expected + expected / 64);
    let mut b = Build::default();
    let mut ok = true;
    let mark = match db.reader() {
        Pool::Sqlite(pool) => {
            let mut conn = pool.acquire().await?;
            let mut tx = conn.begin().await?;
            let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM job_changes")
                .fetch_one(&mut *tx)
                .await?;
            ok = read_sqlite_pages(&mut tx, org_id, &mut index, &mut b).await?;
            tx.commit().await?;
            Mark::Sqlite(last)
        }
        Pool::Postgres(pool) => {
            let mut tx = pool.begin().await?;
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut *tx)
                .await?;
            let xmin: String =
                sqlx::query_scalar("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
                    .fetch_one(&mut *tx)
                    .await?;
            let mut stream = sqlx::query_as::<_, DocRow>(sqlx::AssertSqlSafe(rows))
                .bind(org_id)
                .fetch(&mut *tx);
            while let Some(row) = stream.try_next().await? {
                if ok && index.add_built(&Doc::from(row), &mut b).is_err() {
                    ok = false;
                }
            }
            drop(stream);
            // The changes from `xmin` on that this snapshot sees are in the rows read:
            // the first read of changes must not apply them again (a job indexed again
            // is misplaced).
            let seen: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, xid::text FROM job_changes WHERE org_id = $1 AND xid >= $2::text::xid8",
            )
            .bind(org_id)
            .bind(&xmin)
            .fetch_all(&mut *tx)
            .await?;
            tx.commit().await?;
            Mark::Postgres {
                xmin: xmin.parse().unwrap_or(0),
                applied: seen
                    .into_iter()
                    .map(|(id, xid)| (id, xid.parse().unwrap_or(0)))
                    .collect(),
            }
        }
    };
    if !ok {
        return Ok(None);
    }
    index.finish_build(b);
    Ok(Some((index, mark)))
}

/// Jobs a build reads per statement on SQLite. A page's text and rows are the build's
/// largest passing allocations, made on whichever connection's thread read it; the
/// allocator keeps what a thread freed for that thread, so a larger page left a few
/// megabytes more behind at every rebuild (5,000: resident memory rising 55 -> 142 MB
/// over 20 rebuilds for wear; 500: 44 -> 70 MB, flat after ten, builds no slower;
/// bench/rebuilds.sh).
const PAGE: i64 = 500;

/// One page of an organization's jobs on SQLite, after a key in list order: every job a
/// JSON array of [`DocRow`]'s columns (ids in hex), all in one value. SQLite's rows cross
/// from the connection's thread one at a time, each with a wake-up of the reading task; a
/// page crosses once.
const SQLITE_PAGE: &str = "SELECT json_group_array(json_array(hex(j.id), j.created_at, \
    j.status, j.is_sticky, j.is_remote, j.job_type, nullif(hex(j.category_id), ''), \
    j.location, j.country, j.remote_countries, j.salary_min, j.salary_max, j.expires_at, \
    j.title, j.company_name, j.description_text) ORDER BY j.created_at, j.id) \
    FROM (SELECT id, created_at, status, is_sticky, is_remote, job_type, category_id, \
    location, country, remote_countries, salary_min, salary_max, expires_at, title, \
    company_name, description_text FROM jobs \
    WHERE org_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4) j";

/// A job of [`SQLITE_PAGE`], column by column.
#[derive(serde::Deserialize)]
struct PageRow(
    String,
    i64,
    String,
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<f64>,
    Option<f64>,
    Option<i64>,
    String,
    String,
    String,
);

impl PageRow {
    /// The row, or `None` when an id is not one.
    fn row(self) -> Option<DocRow> {
        Some(DocRow {
            id: Uuid::parse_str(&self.0).ok()?,
            created_at: Ts::from_micros(self.1),
            status: self.2,
            is_sticky: self.3 != 0,
            is_remote: self.4 != 0,
            job_type: self.5,
            category_id: match self.6 {
                Some(hex) => Some(Uuid::parse_str(&hex).ok()?),
                None => None,
            },
            location: self.7,
            country: self.8,
            remote_countries: self.9.as_deref().map(Countries::from_text),
            salary_min: self.10,
            salary_max: self.11,
            expires_at: self.12.map(Ts::from_micros),
            title: self.13,
            company_name: self.14,
            description_text: self.15,
        })
    }
}

/// Reads the organization's jobs on SQLite into `index`, a page at a time, in the
/// transaction `tx` (one snapshot); false when they cannot be indexed.
async fn read_sqlite_pages(
    tx: &mut sqlx::SqliteConnection,
    org_id: OrgId,
    index: &mut OrgIndex,
    b: &mut Build,
) -> DbResult<bool> {
    let mut after = (Ts::from_micros(i64::MIN), Uuid::nil());
    loop {
        let page: String = sqlx::query_scalar(SQLITE_PAGE)
            .bind(org_id)
            .bind(after.0)
            .bind(after.1)
            .bind(PAGE)
            .fetch_one(&mut *tx)
            .await?;
        let rows: Vec<PageRow> = serde_json::from_str(&page)
            .map_err(|e| StoreError::Other(sqlx::Error::Decode(Box::new(e))))?;
        let n = rows.len();
        for r in rows {
            let Some(row) = r.row() else {
                return Ok(false);
            };
            after = (row.created_at, row.id);
            if index.add_built(&Doc::from(row), b).is_err() {
                return Ok(false);
            }
        }
        if n < PAGE as usize {
            return Ok(true);
        }
    }
}
