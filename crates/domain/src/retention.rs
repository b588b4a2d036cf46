//! What is deleted when it has served its time: the periodic purges the scheduler runs,
//! each in short statements. Applications go after the days their organization keeps
//! them (`keep_applications_days`, 0 by default: kept) or the days after their job
//! ended (`keep_applications_after_job_days`, 0 by default: kept); finished webhook
//! deliveries after the node's `delivery_log_days`; job alerts never confirmed after 7
//! days; search engine notices 30 days after they were delivered or failed; the sign-in
//! records after their own lifetimes.

use std::time::Duration;

use crate::{
    Result, Ts, accounts, alerts, applications, db::Db, sessions, two_factor, users, webhooks,
};

/// Deletes the sign-in records past their time: ended sessions (staff's and members')
/// and finished attempt windows, spent or expired setup links, pending second steps,
/// password reset links and members' sign-in links. Returns how many rows went.
pub async fn purge_sign_in(db: &Db, now: Ts, policy: &sessions::Policy) -> Result<u64> {
    Ok(sessions::purge(db, now, policy).await?
        + users::setup::purge(db, now).await?
        + two_factor::purge(db, now).await?
        + users::reset::purge(db, now).await?
        + accounts::purge(db, now, policy).await?)
}

/// Rows deleted by one statement of a purge: small, so that no purge holds the write
/// lock for long.
const BATCH: i64 = 500;

/// Runs `delete` (which deletes at most [`BATCH`] rows and says how many) until a run
/// deletes fewer: how many went in all.
async fn in_batches<F, Fut>(mut delete: F) -> Result<u64>
where
    F: FnMut(i64) -> Fut,
    Fut: Future<Output = crate::db::DbResult<u64>>,
{
    let mut deleted = 0;
    loop {
        let n = delete(BATCH).await?;
        deleted += n;
        if n < BATCH.unsigned_abs() {
            return Ok(deleted);
        }
    }
}

/// `days` days before `now`.
fn days_before(now: Ts, days: u64) -> Ts {
    now.earlier_by(Duration::from_secs(days * 86_400))
}

/// Deletes the applications of each organization that keeps them for a limited time:
/// made longer ago than `keep_applications_days`, or to a job that ended longer ago
/// than `keep_applications_after_job_days` (an expired job, or one no longer stored), a
/// batch at a time. Returns how many went.
pub async fn purge_applications(db: &Db, now: Ts) -> Result<u64> {
    use applications::store::{delete_after_job, delete_older, kept_for_days};
    let mut deleted = 0;
    for (org_id, days, after_job) in kept_for_days(db).await? {
        if days > 0 {
            let before = days_before(now, days.unsigned_abs());
            deleted += in_batches(|limit| delete_older(db, org_id, before, limit)).await?;
        }
        if after_job > 0 {
            let before = days_before(now, after_job.unsigned_abs());
            deleted += in_batches(|limit| delete_after_job(db, org_id, before, limit)).await?;
        }
    }
    Ok(deleted)
}

/// Deletes the webhook deliveries finished more than `days` days ago (0: none), with their
/// attempts, a batch at a time. Returns how many went.
pub async fn purge_delivery_log(db: &Db, now: Ts, days: u32) -> Result<u64> {
    if days == 0 {
        return Ok(0);
    }
    let before = days_before(now, u64::from(days));
    in_batches(|limit| webhooks::store::deliveries::delete_finished_before(db, before, limit)).await
}

/// Deletes the job alerts never confirmed within [`alerts::PENDING_LIFETIME`], a batch at
/// a time. Returns how many went.
pub async fn purge_unconfirmed_alerts(db: &Db, now: Ts) -> Result<u64> {
    let before = now.earlier_by(alerts::PENDING_LIFETIME);
    in_batches(|limit| alerts::store::expire_pending(db, before, limit)).await
}

/// Days a delivered or failed search engine notice is kept (what the log shows).
pub const INDEX_NOTICE_DAYS: u64 = 30;

/// Deletes the search engine notices delivered or failed more than
/// [`INDEX_NOTICE_DAYS`] ago, a batch at a time. Returns how many went.
pub async fn purge_index_notices(db: &Db, now: Ts) -> Result<u64> {
    let before = days_before(now, INDEX_NOTICE_DAYS);
    in_batches(|limit| crate::indexing::store::delete_finished_before(db, before, limit)).await
}
