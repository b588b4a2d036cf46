//! Alerts and the live-jobs log as stored.

use uuid::Uuid;

use super::model::{Alert, AlertListQuery, Frequency};
use crate::{
    JobId, OrgId, Ts,
    db::{Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx, links,
};

const COLUMNS: &str = "id, email, frequency, query, status, created_at, confirmed_at, last_sent_at, \
     last_error, last_error_at, org_id, cursor, last_run_at";

/// Stores a new alert.
pub(super) async fn insert(tx: &mut Tx, a: &Alert) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO job_alerts (id, org_id, email, email_lower, frequency, query, status, cursor, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8)",
        )
        .bind(a.id)
        .bind(a.org_id)
        .bind(&a.email)
        .bind(a.email.to_ascii_lowercase())
        .bind(a.frequency)
        .bind(&a.query)
        .bind(a.status)
        .bind(a.created_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

/// The alert of this address, filters and frequency that is not unsubscribed.
pub(super) async fn same(
    tx: &mut Tx,
    org_id: OrgId,
    email: &str,
    query: &str,
    frequency: Frequency,
) -> DbResult<Option<Alert>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM job_alerts WHERE org_id = $1 AND email_lower = $2 AND query = $3
         AND frequency = $4 AND status <> 'unsubscribed'"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id).bind(email.to_ascii_lowercase()).bind(query).bind(frequency)
            .fetch_optional(&mut **t).await.map_err(StoreError::from)
    })
}

/// The alert with this id (of any organization: its link was verified).
pub(super) async fn by_id(db: &Db, id: Uuid) -> DbResult<Option<Alert>> {
    let sql = format!("SELECT {COLUMNS} FROM job_alerts WHERE id = $1");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(p).await.map_err(StoreError::from)
    })
}

/// Confirms a pending alert: from now on it matches jobs that go live after `cursor`.
pub(super) async fn confirm(db: &Db, id: Uuid, cursor: i64, now: Ts) -> DbResult<bool> {
    let n = dispatch!(db.writer(), p => {
        sqlx::query(
            "UPDATE job_alerts SET status = 'active', confirmed_at = $3, cursor = $2, last_run_at = $3
             WHERE id = $1 AND status = 'pending'",
        )
        .bind(id).bind(cursor).bind(now).execute(p).await?.rows_affected()
    });
    Ok(n > 0)
}

/// Unsubscribes the alert; false when there is none.
pub(super) async fn unsubscribe(db: &Db, id: Uuid) -> DbResult<bool> {
    let n = dispatch!(db.writer(), p => {
        sqlx::query("UPDATE job_alerts SET status = 'unsubscribed' WHERE id = $1")
            .bind(id).execute(p).await?.rows_affected()
    });
    Ok(n > 0)
}

/// A page of the organization's alerts, newest first (all of them when `page` is None).
pub(super) async fn list(
    db: &Db,
    org_id: OrgId,
    q: &AlertListQuery,
    paged: bool,
) -> DbResult<(Vec<Alert>, i64)> {
    let email = q.email.as_deref().map(str::to_ascii_lowercase);
    Ok(dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM job_alerts WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {COLUMNS} FROM job_alerts WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(e) = &email {
                qb.push(" AND email_lower = ").push_bind(e.clone());
            }
            if let Some(s) = q.status {
                qb.push(" AND status = ").push_bind(s);
            }
        }
        page.push(" ORDER BY created_at DESC, id DESC");
        if paged {
            page.push(" LIMIT ").push_bind(q.per_page).push(" OFFSET ").push_bind((q.page - 1) * q.per_page);
        }
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let rows: Vec<Alert> = page.build_query_as().fetch_all(p).await?;
        (rows, total)
    }))
}

/// Deletes an alert of the organization; false when there is none.
pub(super) async fn delete(db: &Db, org_id: OrgId, id: Uuid) -> DbResult<bool> {
    let n = dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM job_alerts WHERE org_id = $1 AND id = $2")
            .bind(org_id).bind(id).execute(p).await?.rows_affected()
    });
    Ok(n > 0)
}

/// Deletes the pending alerts created before `before` (a read first: the scheduler asks
/// every second, and a write would take SQLite's writer each time).
pub(crate) async fn expire_pending(db: &Db, before: Ts, limit: i64) -> DbResult<u64> {
    let any: Option<Uuid> = dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT id FROM job_alerts WHERE status = 'pending' AND created_at < $1 LIMIT 1")
            .bind(before).fetch_optional(p).await?
    });
    if any.is_none() {
        return Ok(0);
    }
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "DELETE FROM job_alerts WHERE id IN (SELECT id FROM job_alerts \
             WHERE status = 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)",
        )
        .bind(before)
        .bind(limit)
        .execute(p)
        .await?
        .rows_affected()
    }))
}

/// The newest entry of the organization's live-jobs log written before `settled` (0
/// when none): entries of transactions still open then may commit later with lower
/// numbers on PostgreSQL, so the newest seconds are left to the next pass.
pub(super) async fn newest(db: &Db, org_id: OrgId, settled: Ts) -> DbResult<i64> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(seq) FROM job_live_log WHERE org_id = $1 AND live_at <= $2")
            .bind(org_id).bind(settled).fetch_one(p).await?.unwrap_or(0)
    }))
}

/// The newest entry of the whole log written before `settled` (0 when none; see
/// [`newest`]).
pub(super) async fn newest_overall(db: &Db, settled: Ts) -> DbResult<i64> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(seq) FROM job_live_log WHERE live_at <= $1")
            .bind(settled).fetch_one(p).await?.unwrap_or(0)
    }))
}

/// The organizations with active alerts of `frequency`.
pub(super) async fn orgs_with_alerts(db: &Db, frequency: Frequency) -> DbResult<Vec<OrgId>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT DISTINCT org_id FROM job_alerts WHERE status = 'active' AND frequency = $1 ORDER BY org_id")
            .bind(frequency).fetch_all(p).await?
    }))
}

/// The organizations with log entries after `after`.
pub(super) async fn orgs_with_entries_after(db: &Db, after: i64) -> DbResult<Vec<OrgId>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT DISTINCT org_id FROM job_live_log WHERE seq > $1 ORDER BY org_id")
            .bind(after).fetch_all(p).await?
    }))
}

/// The organization's log entries after `after` (at most `limit`, the newest), oldest first.
pub(super) async fn entries_after(
    db: &Db,
    org_id: OrgId,
    after: i64,
    limit: i64,
) -> DbResult<Vec<(i64, JobId)>> {
    let mut rows: Vec<(i64, JobId)> = dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT seq, job_id FROM job_live_log WHERE org_id = $1 AND seq > $2 ORDER BY seq DESC LIMIT $3")
            .bind(org_id).bind(after).bind(limit).fetch_all(p).await?
    });
    rows.reverse();
    Ok(rows)
}

/// Up to `limit` active alerts of the organization of `frequency`, after `after_id`, not
/// run since `boundary` and behind `newest`.
pub(super) async fn due(
    db: &Db,
    org_id: OrgId,
    frequency: Frequency,
    boundary: Ts,
    newest: i64,
    after_id: Option<Uuid>,
    limit: i64,
) -> DbResult<Vec<Alert>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM job_alerts WHERE status = 'active' AND frequency = $1 AND org_id = $2
         AND cursor < $3 AND (last_run_at IS NULL OR last_run_at < $4) AND ($5 IS NULL OR id > $5)
         ORDER BY id LIMIT $6"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(frequency).bind(org_id).bind(newest).bind(boundary).bind(after_id).bind(limit)
            .fetch_all(p).await.map_err(StoreError::from)
    })
}

/// Moves an alert's cursor from `from` to `to` (guarded: another pass that moved it first
/// wins, and this one then sends nothing). True when this pass moved it.
pub(super) async fn advance(
    tx: &mut Tx,
    id: Uuid,
    from: i64,
    to: i64,
    now: Ts,
    sent: bool,
) -> DbResult<bool> {
    let n = dispatch_tx!(tx, t => {
        sqlx::query(
            "UPDATE job_alerts SET cursor = $3, last_run_at = $4,
                 last_sent_at = CASE WHEN $5 THEN $4 ELSE last_sent_at END,
                 last_error = CASE WHEN $5 THEN NULL ELSE last_error END,
                 last_error_at = CASE WHEN $5 THEN NULL ELSE last_error_at END
             WHERE id = $1 AND cursor = $2 AND status = 'active'",
        )
        .bind(id).bind(from).bind(to).bind(now).bind(sent)
        .execute(&mut **t).await?.rows_affected()
    });
    Ok(n > 0)
}

/// Records why the mail of an alert's pass could not be queued.
pub(super) async fn record_failure(tx: &mut Tx, id: Uuid, why: &str, now: Ts) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("UPDATE job_alerts SET last_error = $2, last_error_at = $3 WHERE id = $1")
            .bind(id).bind(why).bind(now).execute(&mut **t).await?;
    });
    Ok(())
}

/// How far passes of `frequency` have got: the last period finished and the last log
/// entry handled.
pub(super) async fn run_mark(db: &Db, frequency: Frequency) -> DbResult<(Option<Ts>, i64)> {
    let row: Option<(Option<Ts>, i64)> = dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT done_until, seq FROM alert_runs WHERE frequency = $1")
            .bind(frequency).fetch_optional(p).await?
    });
    Ok(row.unwrap_or((None, 0)))
}

/// Records that passes of `frequency` have finished the period of `done_until` and
/// handled the log up to `seq`.
pub(super) async fn set_run_mark(
    db: &Db,
    frequency: Frequency,
    done_until: Ts,
    seq: i64,
) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO alert_runs (frequency, done_until, seq) VALUES ($1, $2, $3)
             ON CONFLICT (frequency) DO UPDATE SET done_until = excluded.done_until, seq = excluded.seq",
        )
        .bind(frequency).bind(done_until).bind(seq).execute(p).await?;
    });
    Ok(())
}

/// The job alerts of `email` on `org_id`'s board, oldest first.
pub(crate) async fn of_address(db: &Db, org_id: OrgId, email: &str) -> DbResult<Vec<Alert>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM job_alerts WHERE org_id = $1 AND email_lower = $2 \
         ORDER BY created_at, id"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(links::email_identity(email))
            .fetch_all(p)
            .await?
    }))
}

/// Deletes the job alerts of `email` on `org_id`'s board in `tx` (a member erased); how
/// many.
pub(crate) async fn delete_of_address(tx: &mut Tx, org_id: OrgId, email: &str) -> DbResult<u64> {
    dispatch_tx!(tx, t => {
        Ok(sqlx::query("DELETE FROM job_alerts WHERE org_id = $1 AND email_lower = $2")
            .bind(org_id)
            .bind(links::email_identity(email))
            .execute(&mut **t)
            .await?
            .rows_affected())
    })
}
