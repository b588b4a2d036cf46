//! Deliveries and their attempt log as stored: the log a subscription shows, a delivery
//! made due again, a queued `ping`, and the record of each attempt with what follows it
//! (the next try, success, failure, the failure streak that disables a subscription).

use uuid::Uuid;

use super::DELIVERY_COLS;
use crate::{
    OrgId, Ts, WebhookId,
    db::{Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx,
    events::Event,
    webhooks::{
        events::{Body, Ping},
        model::{Attempt, Claimed, Delivery, DeliveryStatus, Next, Outcome, Subscription},
    },
};

/// Deletes at most `limit` finished deliveries (succeeded, or failed for good) last
/// changed before `before`, with their attempts: how many went.
pub async fn delete_finished_before(db: &Db, before: Ts, limit: i64) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries \
             WHERE status <> 'pending' AND updated_at < $1 ORDER BY updated_at LIMIT $2)",
        )
        .bind(before)
        .bind(limit)
        .execute(p)
        .await?
        .rows_affected()
    }))
}

/// The newest `limit` deliveries of a subscription, each with its attempts (oldest first).
pub async fn list(
    db: &Db,
    org_id: OrgId,
    subscription_id: WebhookId,
    limit: i64,
) -> DbResult<Vec<(Delivery, Vec<Attempt>)>> {
    let deliveries: Vec<Delivery> = dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLS} FROM webhook_deliveries WHERE org_id = $1 AND subscription_id = $2
             ORDER BY created_at DESC, id DESC LIMIT $3"
        )))
        .bind(org_id)
        .bind(subscription_id)
        .bind(limit)
        .fetch_all(p)
        .await?
    });
    let attempts: Vec<Attempt> = dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT a.delivery_id, a.attempt, a.status_code, a.error, a.duration_ms, a.response_excerpt, a.attempted_at
             FROM webhook_attempts a
             WHERE a.delivery_id IN (SELECT id FROM webhook_deliveries WHERE org_id = $1 AND subscription_id = $2
                                     ORDER BY created_at DESC, id DESC LIMIT $3)
             ORDER BY a.attempt",
        )
        .bind(org_id)
        .bind(subscription_id)
        .bind(limit)
        .fetch_all(p)
        .await?
    });
    Ok(deliveries
        .into_iter()
        .map(|d| {
            let mine = attempts
                .iter()
                .filter(|a| a.delivery_id == d.id)
                .cloned()
                .collect();
            (d, mine)
        })
        .collect())
}

/// Makes a delivery due now with a fresh retry schedule; `None` when it is not a delivery
/// of this subscription.
pub async fn retry(
    db: &Db,
    org_id: OrgId,
    subscription_id: WebhookId,
    delivery_id: Uuid,
) -> DbResult<Option<Delivery>> {
    let now = db.now();
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_deliveries SET status = $5, next_attempt_at = $4, retry_step = 0, updated_at = $4
             WHERE org_id = $1 AND subscription_id = $2 AND id = $3
             RETURNING {DELIVERY_COLS}"
        )))
        .bind(org_id)
        .bind(subscription_id)
        .bind(delivery_id)
        .bind(now)
        .bind(DeliveryStatus::Pending)
        .fetch_optional(p)
        .await.map_err(StoreError::from)
    })
}

/// Makes every failed delivery of the subscription created at or after `since` due now,
/// with a fresh retry schedule. Answers how many.
pub async fn recover(
    db: &Db,
    org_id: OrgId,
    subscription_id: WebhookId,
    since: Ts,
) -> DbResult<u64> {
    let now = db.now();
    dispatch!(db.writer(), p => {
        sqlx::query(
            "UPDATE webhook_deliveries SET status = $5, next_attempt_at = $4, retry_step = 0, updated_at = $4
             WHERE org_id = $1 AND subscription_id = $2 AND status = $6 AND created_at >= $3",
        )
        .bind(org_id)
        .bind(subscription_id)
        .bind(since)
        .bind(now)
        .bind(DeliveryStatus::Pending)
        .bind(DeliveryStatus::Failed)
        .execute(p)
        .await
        .map(|r| r.rows_affected())
        .map_err(StoreError::from)
    })
}

/// Queues a `ping` delivery for the subscription, due now.
pub async fn create_ping(db: &Db, sub: &Subscription) -> DbResult<Delivery> {
    let now = db.now();
    let ping = Ping {
        subscription_id: sub.id,
    };
    let body = Body {
        event: ping.event_type(),
        organization_id: sub.org_id,
        timestamp: now,
        data: &ping,
    }
    .to_json();
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "INSERT INTO webhook_deliveries (id, subscription_id, org_id, event_id, event_type, payload, status, attempts, retry_step, next_attempt_at, created_at, updated_at)
             VALUES ($1, $2, $3, NULL, $4, $5, $6, 0, 0, $7, $7, $7)
             RETURNING {DELIVERY_COLS}"
        )))
        .bind(Uuid::now_v7())
        .bind(sub.id)
        .bind(sub.org_id)
        .bind(ping.event_type())
        .bind(body)
        .bind(DeliveryStatus::Pending)
        .bind(now)
        .fetch_one(p)
        .await.map_err(StoreError::from)
    })
}

/// Binds the values of an attempt of delivery `$d` with outcome `$o`, in this order: a new
/// id, the attempt number, status code, error, duration, response excerpt and time (one
/// order for both ways `record` writes an attempt).
macro_rules! bind_attempt {
    ($q:expr, $d:expr, $o:expr) => {
        $q.bind(Uuid::now_v7())
            .bind($d.attempts + 1)
            .bind($o.status_code)
            .bind($o.error.as_deref())
            .bind($o.duration_ms)
            .bind($o.response_excerpt.as_deref())
            .bind($o.attempted_at)
    };
}

/// Records an attempt of a delivery leased by `owner` and moves the delivery on; keeps the
/// subscription's failure streak and disables it when the streak is `disable_after_us`
/// long (or on `Gone`). Returns false when the lease was lost (nothing recorded).
pub async fn record(
    db: &Db,
    owner: Uuid,
    d: &Claimed,
    outcome: &Outcome,
    next: Next,
    now: Ts,
    disable_after_us: i64,
) -> DbResult<bool> {
    if next == Next::Succeeded {
        let one = Succeeded {
            owner,
            delivery: d,
            outcome,
            now,
        };
        return Ok(record_succeeded(db, &[one]).await?[0]);
    }
    let mut tx = db.begin().await?;
    let recorded = record_in(&mut tx, owner, d, outcome, next, now, disable_after_us).await?;
    if recorded {
        tx.commit().await?;
    }
    Ok(recorded)
}

/// [`record`] inside `tx`: false (and nothing written) when the lease was lost.
async fn record_in(
    tx: &mut Tx,
    owner: Uuid,
    d: &Claimed,
    outcome: &Outcome,
    next: Next,
    now: Ts,
    disable_after_us: i64,
) -> DbResult<bool> {
    let (next_at, step) = match next {
        Next::RetryAt(at) => (Some(at), d.retry_step + 1),
        Next::Succeeded | Next::Failed | Next::Gone => (None, d.retry_step),
    };
    let n = dispatch_tx!(&mut *tx, t => {
        sqlx::query(
            "UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, retry_step = $5, attempts = attempts + 1,
                 lease_owner = NULL, lease_until = NULL, updated_at = $6
             WHERE id = $1 AND lease_owner = $2",
        )
        .bind(d.id)
        .bind(owner)
        .bind(next.status())
        .bind(next_at)
        .bind(step)
        .bind(now)
        .execute(&mut **t)
        .await?
        .rows_affected()
    });
    if n == 0 {
        return Ok(false);
    }
    dispatch_tx!(&mut *tx, t => {
        let q = sqlx::query(
            "INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, error, duration_ms, response_excerpt, attempted_at)
             VALUES ($2, $1, $3, $4, $5, $6, $7, $8)",
        )
        .bind(d.id);
        bind_attempt!(q, d, outcome)
        .execute(&mut **t)
        .await?;
    });
    let disable = if next == Next::Succeeded {
        dispatch_tx!(&mut *tx, t => {
            sqlx::query("UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
                .bind(d.subscription_id)
                .execute(&mut **t)
                .await?;
        });
        false
    } else {
        let since: Option<Option<Ts>> = dispatch_tx!(&mut *tx, t => {
            sqlx::query_scalar(
                "UPDATE webhook_subscriptions SET failing_since = COALESCE(failing_since, $2)
                 WHERE id = $1 RETURNING failing_since",
            )
            .bind(d.subscription_id)
            .bind(now)
            .fetch_optional(&mut **t)
            .await?
        });
        let streak = since
            .flatten()
            .map(|s| now.micros() - s.micros())
            .unwrap_or(0);
        next == Next::Gone || streak >= disable_after_us
    };
    if disable {
        dispatch_tx!(&mut *tx, t => {
            sqlx::query("UPDATE webhook_subscriptions SET is_enabled = FALSE, updated_at = $2 WHERE id = $1")
                .bind(d.subscription_id)
                .bind(now)
                .execute(&mut **t)
                .await?;
            sqlx::query(
                "UPDATE webhook_deliveries SET status = $3, next_attempt_at = NULL, updated_at = $2
                 WHERE subscription_id = $1 AND status = 'pending'",
            )
            .bind(d.subscription_id)
            .bind(now)
            .bind(DeliveryStatus::Failed)
            .execute(&mut **t)
            .await?;
        });
    }
    Ok(true)
}

/// A succeeded attempt to record with others: see [`record_succeeded`].
pub struct Succeeded<'a> {
    /// The lease owner that claimed the delivery.
    pub owner: Uuid,
    pub delivery: &'a Claimed,
    pub outcome: &'a Outcome,
    pub now: Ts,
}

/// Records succeeded attempts of several deliveries at once (one statement on PostgreSQL,
/// one transaction on SQLite), each as [`record`] would with [`Next::Succeeded`]. Answers,
/// in order, whether each was recorded (false: its lease was lost, nothing recorded).
pub async fn record_succeeded(db: &Db, items: &[Succeeded<'_>]) -> DbResult<Vec<bool>> {
    if let Some(pool) = db.pg() {
        let mut delivery_ids = Vec::with_capacity(items.len());
        let mut owners = Vec::with_capacity(items.len());
        let mut attempt_ids = Vec::with_capacity(items.len());
        let mut attempts = Vec::with_capacity(items.len());
        let mut codes = Vec::with_capacity(items.len());
        let mut errors = Vec::with_capacity(items.len());
        let mut durations = Vec::with_capacity(items.len());
        let mut excerpts = Vec::with_capacity(items.len());
        let mut attempted = Vec::with_capacity(items.len());
        let mut nows = Vec::with_capacity(items.len());
        for i in items {
            delivery_ids.push(i.delivery.id);
            owners.push(i.owner);
            attempt_ids.push(Uuid::now_v7());
            attempts.push(i.delivery.attempts + 1);
            codes.push(i.outcome.status_code);
            errors.push(i.outcome.error.clone());
            durations.push(i.outcome.duration_ms);
            excerpts.push(i.outcome.response_excerpt.clone());
            attempted.push(i.outcome.attempted_at.0);
            nows.push(i.now.0);
        }
        let recorded: Vec<Uuid> = sqlx::query_scalar(
            "WITH input AS MATERIALIZED (
                 SELECT * FROM UNNEST($1::UUID[], $2::UUID[], $3::UUID[], $4::BIGINT[], $5::BIGINT[], $6::TEXT[],
                                      $7::BIGINT[], $8::TEXT[], $9::TIMESTAMPTZ[], $10::TIMESTAMPTZ[])
                   AS i(delivery_id, owner, attempt_id, attempt, status_code, error, duration_ms, response_excerpt, attempted_at, now)
             ), upd AS (
                 UPDATE webhook_deliveries d SET status = $11, next_attempt_at = NULL, attempts = d.attempts + 1,
                     lease_owner = NULL, lease_until = NULL, updated_at = i.now
                 FROM input i
                 WHERE d.id = i.delivery_id AND d.lease_owner = i.owner
                 RETURNING d.id, d.subscription_id
             ), att AS (
                 INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, error, duration_ms, response_excerpt, attempted_at)
                 SELECT i.attempt_id, i.delivery_id, i.attempt, i.status_code, i.error, i.duration_ms, i.response_excerpt, i.attempted_at
                 FROM input i JOIN upd ON upd.id = i.delivery_id
             ), sub AS (
                 UPDATE webhook_subscriptions SET failing_since = NULL
                 WHERE id IN (SELECT subscription_id FROM upd) AND failing_since IS NOT NULL
             )
             SELECT id FROM upd",
        )
        .bind(&delivery_ids)
        .bind(&owners)
        .bind(&attempt_ids)
        .bind(&attempts)
        .bind(&codes)
        .bind(&errors)
        .bind(&durations)
        .bind(&excerpts)
        .bind(&attempted)
        .bind(&nows)
        .bind(DeliveryStatus::Succeeded)
        .fetch_all(pool)
        .await?;
        let recorded: std::collections::HashSet<Uuid> = recorded.into_iter().collect();
        return Ok(delivery_ids
            .iter()
            .map(|id| recorded.contains(id))
            .collect());
    }
    let mut tx = db.begin().await?;
    let mut recorded = Vec::with_capacity(items.len());
    for i in items {
        recorded.push(
            record_in(
                &mut tx,
                i.owner,
                i.delivery,
                i.outcome,
                Next::Succeeded,
                i.now,
                0,
            )
            .await?,
        );
    }
    tx.commit().await?;
    Ok(recorded)
}

/// Deliveries waiting for an attempt (the delivery queue depth).
pub async fn pending_count(db: &Db) -> DbResult<i64> {
    dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").fetch_one(p).await.map_err(StoreError::from)
    })
}

/// When the earliest pending delivery is due, if any.
pub async fn next_due(db: &Db) -> DbResult<Option<Ts>> {
    crate::db::outbox::next_due(db, super::OUTBOX).await
}
