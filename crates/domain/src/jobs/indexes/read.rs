//! Reading an organization's jobs into a new index, in list order, from one snapshot.

use futures_util::TryStreamExt;
use jobboard_search::index::{Build, Doc, OrgIndex};
use sqlx::Connection;

use super::changes::Mark;
use crate::{
    OrgId,
    db::{Db, DbResult, Pool},
    jobs::index::{self, DocRow},
};

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
    // The rows, read through either backend's transaction into the index.
    macro_rules! read_rows {
        ($tx:ident) => {{
            let mut stream = sqlx::query_as::<_, DocRow>(sqlx::AssertSqlSafe(rows))
                .bind(org_id)
                .fetch(&mut *$tx);
            while let Some(row) = stream.try_next().await? {
                if ok && index.add_built(&Doc::from(row), &mut b).is_err() {
                    ok = false;
                }
            }
        }};
    }
    let mark = match db.reader() {
        Pool::Sqlite(pool) => {
            let mut conn = pool.acquire().await?;
            let mut tx = conn.begin().await?;
            let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM job_changes")
                .fetch_one(&mut *tx)
                .await?;
            read_rows!(tx);
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
            read_rows!(tx);
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
