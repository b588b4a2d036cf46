//! The storage of the sketch upgrade: the recorded task, the daily rows still without a
//! sketch, their visitor rows, and writing the sketches built from them.

use std::collections::BTreeMap;

use super::{Built, visitor_rows, write_sketches};
use crate::{
    JobId, OrgId,
    db::{Db, DbResult},
    dispatch, dispatch_tx,
};

/// A daily row: organization, job (nil for the site) and day.
pub type DailyKey = (OrgId, JobId, String);

/// True while the maintenance task `name` is recorded as left to do.
pub async fn task_pending(db: &Db, name: &str) -> DbResult<bool> {
    let pending: Option<String> = dispatch!(db.writer(), p => {
        sqlx::query_scalar("SELECT name FROM maintenance_tasks WHERE name = $1").bind(name).fetch_optional(p).await?
    });
    Ok(pending.is_some())
}

/// Records the maintenance task `name` as done.
pub async fn task_done(db: &Db, name: &str) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM maintenance_tasks WHERE name = $1").bind(name).execute(p).await?;
    });
    Ok(())
}

/// Up to `limit` daily rows with visitors but no sketch, in key order after `after`, each
/// with its number of distinct visitors.
pub async fn rows_without_sketch(
    db: &Db,
    after: Option<&DailyKey>,
    limit: i64,
) -> DbResult<Vec<(DailyKey, i64)>> {
    let rows: Vec<(OrgId, JobId, String, i64)> = dispatch!(db.writer(), p => {
        match after {
            None => sqlx::query_as(
                "SELECT org_id, job_id, day, visitors FROM analytics_daily WHERE sketch IS NULL AND visitors > 0 ORDER BY org_id, job_id, day LIMIT $1",
            )
            .bind(limit)
            .fetch_all(p).await?,
            Some((o, j, d)) => sqlx::query_as(
                "SELECT org_id, job_id, day, visitors FROM analytics_daily WHERE (org_id, job_id, day) > ($1, $2, $3) AND sketch IS NULL AND visitors > 0 ORDER BY org_id, job_id, day LIMIT $4",
            )
            .bind(*o).bind(*j).bind(d.clone()).bind(limit)
            .fetch_all(p).await?,
        }
    });
    Ok(rows
        .into_iter()
        .map(|(o, j, d, visitors)| ((o, j, d), visitors))
        .collect())
}

/// The visitor rows (day, hash) of one job of one organization over the days `from` to
/// `to`, read from the writer (the rows the upgrade is racing with ingestion for).
pub async fn visitors_between(
    db: &Db,
    org_id: OrgId,
    job: JobId,
    from: &str,
    to: &str,
) -> DbResult<Vec<(String, Vec<u8>)>> {
    visitor_rows(&db.writer(), org_id, job, from, to).await
}

/// Writes built sketches, per organization, in one transaction: each only where the row
/// still has no sketch and still the number of visitors it was built from.
pub async fn write_built(db: &Db, by_org: &BTreeMap<OrgId, Vec<Built>>) -> DbResult<()> {
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        for (org, list) in by_org {
            write_sketches(&mut **t, *org, list, true).await?;
        }
    });
    tx.commit().await
}
