//! Analytics as stored: daily roll-ups written at ingestion, so reads touch one row per
//! day.
//!
//! `analytics_daily` holds counters per organization, job and UTC day; the row of the nil
//! job id holds the site totals (every event counts there, job events also in their job's
//! row). `analytics_visitors` holds the distinct visitor hashes per job and day, and per
//! day for the whole site (nil job id). Each daily row also keeps its number of distinct
//! visitors and a HyperLogLog sketch of them ([`super::hll`]), so distinct visitors over a
//! long range merge one sketch per day instead of reading every visitor row. Days are
//! stored as `YYYY-MM-DD` text.

mod figures;
mod ingest;
mod upgrade;

use chrono::NaiveDate;

pub(super) use figures::*;
pub(super) use ingest::{daily_salt, ingest};
pub(super) use upgrade::*;

use crate::{
    JobId, OrgId,
    db::{DbResult, Pool},
    dispatch,
};

/// The job id the site's rows are stored under (the nil id).
pub const SITE: JobId = JobId(uuid::Uuid::nil());

/// A daily row of one organization: job ([`SITE`] for the site) and day.
pub type Key = (JobId, String);

/// A sketch to store: its daily row, its bytes, and the row's distinct visitors it was
/// built from.
pub type Built = (Key, Vec<u8>, i64);

/// A day as stored.
pub(super) fn day_text(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// Sets the sketches of existing daily rows, each given with the row's distinct visitors
/// it was built from. With `only_missing`, only where no sketch is set yet and the row
/// still has that many visitors (none was added by an ingestion meanwhile).
async fn write_sketches<'c, E, DB>(
    ex: E,
    org_id: OrgId,
    sketches: &[Built],
    only_missing: bool,
) -> DbResult<()>
where
    E: sqlx::Executor<'c, Database = DB>,
    DB: sqlx::Database + sqlx::database::HasStatementCache,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> JobId: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
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
    qb.build().persistent(false).execute(ex).await?;
    Ok(())
}

/// The visitor rows (day, visitor hash) of one job (or the site) over the days `from` to
/// `to`, inclusive: an equality and a range on the key, which every planner reads from
/// the index.
async fn visitor_rows(
    pool: &Pool,
    org_id: OrgId,
    job: JobId,
    from: &str,
    to: &str,
) -> DbResult<Vec<(String, Vec<u8>)>> {
    Ok(dispatch!(pool, p => {
        sqlx::query_as(
            "SELECT day, visitor FROM analytics_visitors WHERE org_id = $1 AND job_id = $2 AND day >= $3 AND day <= $4",
        )
        .bind(org_id).bind(job).bind(from).bind(to)
        .fetch_all(p).await?
    }))
}
