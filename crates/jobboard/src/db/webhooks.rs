//! Webhook subscriptions, deliveries and their attempt log.
//!
//! A delivery is one event for one subscription. It is `pending` until an attempt succeeds
//! (`succeeded`) or the retry schedule is exhausted or the subscription is disabled by the
//! service (`failed`). A worker claims due deliveries by writing a lease (`lease_owner`,
//! `lease_until`); an expired lease makes the delivery claimable again, so a crashed worker
//! loses nothing (delivery is at least once).

use serde::Serialize;
use serde_json::{Value, json};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Backend, Db, DbResult, Ts};
use crate::{dispatch, dispatch_tx};

/// A subscription as stored (the secret never leaves the storage and worker layers).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Subscription {
    pub id: Uuid,
    pub org_id: i64,
    pub event: String,
    pub target_type: String,
    pub target_url: String,
    pub secret: Option<String>,
    pub is_enabled: bool,
    pub failing_since: Option<Ts>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

const SUB_COLS: &str = "id, org_id, event, target_type, target_url, secret, is_enabled, failing_since, created_at, updated_at";

/// Creates the subscription, or finds the one with the same organization, event, target
/// type and URL (replacing its secret when `secret` is given). `true` when created.
pub async fn upsert(
    db: &Db,
    org_id: i64,
    event: &str,
    target_type: &str,
    target_url: &str,
    secret: Option<&str>,
) -> DbResult<(Subscription, bool)> {
    let now = Ts::now();
    let mut tx = db.begin().await?;
    let inserted: Option<Subscription> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "INSERT INTO webhook_subscriptions (id, org_id, event, target_type, target_url, secret, is_enabled, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7, $7)
             ON CONFLICT (org_id, event, target_type, target_url) DO NOTHING
             RETURNING {SUB_COLS}"
        )))
        .bind(Uuid::now_v7())
        .bind(org_id)
        .bind(event)
        .bind(target_type)
        .bind(target_url)
        .bind(secret)
        .bind(now)
        .fetch_optional(&mut **t)
        .await?
    });
    let result = match inserted {
        Some(s) => (s, true),
        None => {
            let found: Subscription = dispatch_tx!(&mut tx, t => {
                let q = if secret.is_some() {
                    format!("UPDATE webhook_subscriptions SET secret = $5, updated_at = $6
                             WHERE org_id = $1 AND event = $2 AND target_type = $3 AND target_url = $4
                             RETURNING {SUB_COLS}")
                } else {
                    format!("SELECT {SUB_COLS} FROM webhook_subscriptions
                             WHERE org_id = $1 AND event = $2 AND target_type = $3 AND target_url = $4")
                };
                let q = sqlx::query_as(sqlx::AssertSqlSafe(q))
                    .bind(org_id)
                    .bind(event)
                    .bind(target_type)
                    .bind(target_url);
                let q = if secret.is_some() { q.bind(secret).bind(now) } else { q };
                q.fetch_one(&mut **t).await?
            });
            (found, false)
        }
    };
    tx.commit().await?;
    Ok(result)
}

pub async fn get(db: &Db, org_id: i64, id: Uuid) -> DbResult<Option<Subscription>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// The organization's subscriptions, newest first.
pub async fn list(db: &Db, org_id: i64) -> DbResult<Vec<Subscription>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE org_id = $1 ORDER BY created_at DESC, id DESC"
        )))
        .bind(org_id)
        .fetch_all(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// Changes to a subscription; `None` leaves a field as it is.
#[derive(Debug, Default)]
pub struct SubscriptionPatch {
    pub event: Option<String>,
    pub target_url: Option<String>,
    pub is_enabled: Option<bool>,
    /// `Some(None)` clears the secret.
    pub secret: Option<Option<String>>,
}

/// Applies `patch`; `Ok(None)` when there is no such subscription. Re-enabling a
/// subscription ends its failure streak. A unique violation (the result would equal
/// another subscription) is returned as the database error.
pub async fn update(
    db: &Db,
    org_id: i64,
    id: Uuid,
    patch: &SubscriptionPatch,
) -> DbResult<Option<Subscription>> {
    let (set_secret, secret) = match &patch.secret {
        Some(s) => (true, s.clone()),
        None => (false, None),
    };
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_subscriptions SET
                 event = COALESCE($3, event),
                 target_url = COALESCE($4, target_url),
                 is_enabled = COALESCE($5, is_enabled),
                 failing_since = CASE WHEN $5 = TRUE THEN NULL ELSE failing_since END,
                 secret = CASE WHEN $6 AND target_type = 'webhook' THEN $7 ELSE secret END,
                 updated_at = $8
             WHERE org_id = $1 AND id = $2
             RETURNING {SUB_COLS}"
        )))
        .bind(org_id)
        .bind(id)
        .bind(patch.event.as_deref())
        .bind(patch.target_url.as_deref())
        .bind(patch.is_enabled)
        .bind(set_secret)
        .bind(secret)
        .bind(Ts::now())
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// Deletes the subscription with its deliveries and their attempts. `false` when missing.
pub async fn delete(db: &Db, org_id: i64, id: Uuid) -> DbResult<bool> {
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = $1 AND org_id = $2)")
            .bind(id)
            .bind(org_id)
            .execute(&mut **t)
            .await?;
        sqlx::query("DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND org_id = $2")
            .bind(id)
            .bind(org_id)
            .execute(&mut **t)
            .await?;
    });
    let n = dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM webhook_subscriptions WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .execute(&mut **t)
            .await?
            .rows_affected()
    });
    tx.commit().await?;
    Ok(n > 0)
}

/// One delivery, as listed by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Delivery {
    /// Stable id, sent as `X-Service-Delivery` on every attempt.
    pub id: Uuid,
    pub subscription_id: Uuid,
    /// The event name (`ping` for test deliveries).
    pub event: String,
    /// `pending` (waiting for its next attempt), `succeeded` or `failed` (retries exhausted,
    /// or the subscription was disabled by the service).
    #[schema(value_type = String, pattern = "^(pending|succeeded|failed)$")]
    pub status: String,
    /// Attempts made so far.
    pub attempts: i64,
    /// When the next attempt is due; null unless pending.
    pub next_attempt_at: Option<Ts>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

const DELIVERY_COLS: &str = "id, subscription_id, event_type AS event, status, attempts, next_attempt_at, created_at, updated_at";

/// One attempt of a delivery.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Attempt {
    #[serde(skip)]
    pub delivery_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: i64,
    /// The HTTP status answered; null when no response arrived.
    pub status_code: Option<i64>,
    /// Why the attempt failed (connection, time-out, refused address, non-2xx status).
    pub error: Option<String>,
    pub duration_ms: i64,
    /// The start of the response body, at most 2 KiB.
    pub response_excerpt: Option<String>,
    pub attempted_at: Ts,
}

/// The newest `limit` deliveries of a subscription, each with its attempts (oldest first).
pub async fn list_deliveries(
    db: &Db,
    org_id: i64,
    subscription_id: Uuid,
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
pub async fn retry_delivery(
    db: &Db,
    org_id: i64,
    subscription_id: Uuid,
    delivery_id: Uuid,
) -> DbResult<Option<Delivery>> {
    let now = Ts::now();
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $4, retry_step = 0, updated_at = $4
             WHERE org_id = $1 AND subscription_id = $2 AND id = $3
             RETURNING {DELIVERY_COLS}"
        )))
        .bind(org_id)
        .bind(subscription_id)
        .bind(delivery_id)
        .bind(now)
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// The JSON body of a delivery: `{event, organization_id, timestamp, data}`.
pub fn payload(event: &str, org_id: i64, at: Ts, data: &Value) -> String {
    json!({
        "event": event,
        "organization_id": org_id,
        "timestamp": at,
        "data": data,
    })
    .to_string()
}

/// Queues a `ping` delivery for the subscription, due now.
pub async fn create_ping(db: &Db, sub: &Subscription) -> DbResult<Delivery> {
    let now = Ts::now();
    let body = payload(
        "ping",
        sub.org_id,
        now,
        &json!({ "subscription_id": sub.id }),
    );
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "INSERT INTO webhook_deliveries (id, subscription_id, org_id, event_id, event_type, payload, status, attempts, retry_step, next_attempt_at, created_at, updated_at)
             VALUES ($1, $2, $3, NULL, 'ping', $4, 'pending', 0, 0, $5, $5, $5)
             RETURNING {DELIVERY_COLS}"
        )))
        .bind(Uuid::now_v7())
        .bind(sub.id)
        .bind(sub.org_id)
        .bind(body)
        .bind(now)
        .fetch_one(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

#[derive(sqlx::FromRow)]
struct PendingEvent {
    id: Uuid,
    org_id: i64,
    event_type: String,
    data: Json<Value>,
    occurred_at: Ts,
}

#[derive(sqlx::FromRow)]
struct Target {
    id: Uuid,
    event: String,
}

/// Fans out up to `batch` undispatched events into one delivery per enabled subscription
/// of their organization whose event matches (or is `*`), and marks them dispatched, in
/// one transaction. Returns (events, deliveries) written.
pub async fn fan_out(db: &Db, batch: i64) -> DbResult<(usize, usize)> {
    let now = Ts::now();
    let lock = match db.backend() {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let mut tx = db.begin().await?;
    let events: Vec<PendingEvent> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT id, org_id, event_type, data, occurred_at FROM events WHERE dispatched_at IS NULL
             ORDER BY occurred_at, id LIMIT $1{lock}"
        )))
        .bind(batch)
        .fetch_all(&mut **t)
        .await?
    });
    if events.is_empty() {
        return Ok((0, 0));
    }
    let mut targets: std::collections::HashMap<i64, Vec<Target>> = Default::default();
    let mut written = 0;
    for ev in &events {
        if let std::collections::hash_map::Entry::Vacant(slot) = targets.entry(ev.org_id) {
            let subs: Vec<Target> = dispatch_tx!(&mut tx, t => {
                sqlx::query_as("SELECT id, event FROM webhook_subscriptions WHERE org_id = $1 AND is_enabled = TRUE")
                    .bind(ev.org_id)
                    .fetch_all(&mut **t)
                    .await?
            });
            slot.insert(subs);
        }
        let body = payload(&ev.event_type, ev.org_id, ev.occurred_at, &ev.data.0);
        let subs: Vec<Uuid> = targets[&ev.org_id]
            .iter()
            .filter(|s| s.event == "*" || s.event == ev.event_type)
            .map(|s| s.id)
            .collect();
        // One multi-row INSERT per event (in chunks, within the bind-parameter limits).
        for chunk in subs.chunks(500) {
            dispatch_tx!(&mut tx, t => {
                let mut qb = sqlx::QueryBuilder::new(
                    "INSERT INTO webhook_deliveries (id, subscription_id, org_id, event_id, event_type, payload, status, attempts, retry_step, next_attempt_at, created_at, updated_at) ",
                );
                qb.push_values(chunk, |mut b, sub_id| {
                    b.push_bind(Uuid::now_v7())
                        .push_bind(*sub_id)
                        .push_bind(ev.org_id)
                        .push_bind(ev.id)
                        .push_bind(&ev.event_type)
                        .push_bind(&body)
                        .push_bind("pending")
                        .push_bind(0_i64)
                        .push_bind(0_i64)
                        .push_bind(now)
                        .push_bind(now)
                        .push_bind(now);
                });
                qb.build().execute(&mut **t).await?;
            });
            written += chunk.len();
        }
        dispatch_tx!(&mut tx, t => {
            sqlx::query("UPDATE events SET dispatched_at = $2 WHERE id = $1")
                .bind(ev.id)
                .bind(now)
                .execute(&mut **t)
                .await?;
        });
    }
    if written > 0
        && let super::Tx::Postgres(t) = &mut tx
    {
        // Wake the workers of every node.
        sqlx::query("SELECT pg_notify($1, '')")
            .bind(super::events::OUTBOX_CHANNEL)
            .execute(&mut **t)
            .await?;
    }
    tx.commit().await?;
    Ok((events.len(), written))
}

/// A claimed delivery with what is needed to send it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    pub id: Uuid,
    pub subscription_id: Uuid,
    pub org_id: i64,
    pub event_type: String,
    pub payload: String,
    pub attempts: i64,
    pub retry_step: i64,
}

/// Claims up to `limit` due deliveries of enabled subscriptions for `owner` until
/// `lease_until`, skipping subscriptions that already have `per_target` leased
/// deliveries. On PostgreSQL rows locked by another claimer are skipped, so two workers
/// never claim the same delivery.
pub async fn claim(
    db: &Db,
    owner: Uuid,
    now: Ts,
    lease_until: Ts,
    limit: i64,
    per_target: i64,
) -> DbResult<Vec<Claimed>> {
    let lock = match db.backend() {
        Backend::Postgres => " FOR UPDATE OF d SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $3
         WHERE id IN (
             SELECT d.id FROM webhook_deliveries d
             JOIN webhook_subscriptions s ON s.id = d.subscription_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= $2
               AND (d.lease_until IS NULL OR d.lease_until <= $2)
               AND s.is_enabled = TRUE
               AND d.subscription_id NOT IN (
                   SELECT x.subscription_id FROM webhook_deliveries x WHERE x.lease_until > $2
                   GROUP BY x.subscription_id HAVING COUNT(*) >= $5)
             ORDER BY d.next_attempt_at, d.id
             LIMIT $4{lock})
         RETURNING id, subscription_id, org_id, event_type, payload, attempts, retry_step"
    );
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(owner)
            .bind(now)
            .bind(lease_until)
            .bind(limit)
            .bind(per_target)
            .fetch_all(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// Hands leases of `owner` back (all of them when `ids` is empty... never: pass the ids).
pub async fn release(db: &Db, owner: Uuid, ids: &[Uuid]) -> DbResult<()> {
    for id in ids {
        dispatch!(db.writer(), p => {
            sqlx::query("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2")
                .bind(id)
                .bind(owner)
                .execute(p)
                .await?;
        });
    }
    Ok(())
}

/// Drops every lease (at start-up of a single-node SQLite service, whose previous process
/// is gone).
pub async fn release_all(db: &Db) -> DbResult<u64> {
    dispatch!(db.writer(), p => {
        Ok(sqlx::query("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_until IS NOT NULL")
            .execute(p)
            .await?
            .rows_affected())
    })
}

/// The subscription a claimed delivery goes to (`None` once deleted).
pub async fn target(db: &Db, id: Uuid) -> DbResult<Option<Subscription>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// The subscriptions with these ids (for a claimed batch), by id.
pub async fn targets(
    db: &Db,
    ids: &[Uuid],
) -> DbResult<std::collections::HashMap<Uuid, Subscription>> {
    let mut out = std::collections::HashMap::new();
    for chunk in ids.chunks(500) {
        let found: Vec<Subscription> = dispatch!(db.reader(), p => {
            let mut qb = sqlx::QueryBuilder::new(format!(
                "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE id IN ("
            ));
            let mut sep = qb.separated(", ");
            for id in chunk {
                sep.push_bind(*id);
            }
            qb.push(")");
            qb.build_query_as().fetch_all(p).await?
        });
        out.extend(found.into_iter().map(|s| (s.id, s)));
    }
    Ok(out)
}

/// What an attempt produced, to be recorded.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status_code: Option<i64>,
    pub error: Option<String>,
    pub duration_ms: i64,
    pub response_excerpt: Option<String>,
    pub attempted_at: Ts,
}

/// What happens to the delivery after the attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    Succeeded,
    /// Retry at this time (the retry step advances).
    RetryAt(Ts),
    /// No more attempts.
    Failed,
    /// The target answered `410 Gone`: the delivery fails and the subscription is disabled.
    Gone,
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
    let (status, next_at, step) = match next {
        Next::Succeeded => ("succeeded", None, d.retry_step),
        Next::RetryAt(at) => ("pending", Some(at), d.retry_step + 1),
        Next::Failed | Next::Gone => ("failed", None, d.retry_step),
    };
    if next == Next::Succeeded
        && let Some(pool) = db.pg()
    {
        // The common case in one statement (one round trip, atomic on its own).
        let n: i64 = sqlx::query_scalar(
            "WITH upd AS (
                 UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, attempts = attempts + 1,
                     lease_owner = NULL, lease_until = NULL, updated_at = $3
                 WHERE id = $1 AND lease_owner = $2
                 RETURNING id, subscription_id
             ), att AS (
                 INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, error, duration_ms, response_excerpt, attempted_at)
                 SELECT $4, id, $5, $6, $7, $8, $9, $10 FROM upd
             ), sub AS (
                 UPDATE webhook_subscriptions SET failing_since = NULL
                 WHERE id IN (SELECT subscription_id FROM upd) AND failing_since IS NOT NULL
             )
             SELECT COUNT(*) FROM upd",
        )
        .bind(d.id)
        .bind(owner)
        .bind(now)
        .bind(Uuid::now_v7())
        .bind(d.attempts + 1)
        .bind(outcome.status_code)
        .bind(outcome.error.as_deref())
        .bind(outcome.duration_ms)
        .bind(outcome.response_excerpt.as_deref())
        .bind(outcome.attempted_at)
        .fetch_one(pool)
        .await?;
        return Ok(n > 0);
    }
    let mut tx = db.begin().await?;
    let n = dispatch_tx!(&mut tx, t => {
        sqlx::query(
            "UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, retry_step = $5, attempts = attempts + 1,
                 lease_owner = NULL, lease_until = NULL, updated_at = $6
             WHERE id = $1 AND lease_owner = $2",
        )
        .bind(d.id)
        .bind(owner)
        .bind(status)
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
    dispatch_tx!(&mut tx, t => {
        sqlx::query(
            "INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, error, duration_ms, response_excerpt, attempted_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(Uuid::now_v7())
        .bind(d.id)
        .bind(d.attempts + 1)
        .bind(outcome.status_code)
        .bind(outcome.error.as_deref())
        .bind(outcome.duration_ms)
        .bind(outcome.response_excerpt.as_deref())
        .bind(outcome.attempted_at)
        .execute(&mut **t)
        .await?;
    });
    let disable = if next == Next::Succeeded {
        dispatch_tx!(&mut tx, t => {
            sqlx::query("UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
                .bind(d.subscription_id)
                .execute(&mut **t)
                .await?;
        });
        false
    } else {
        let since: Option<Option<Ts>> = dispatch_tx!(&mut tx, t => {
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
        dispatch_tx!(&mut tx, t => {
            sqlx::query("UPDATE webhook_subscriptions SET is_enabled = FALSE, updated_at = $2 WHERE id = $1")
                .bind(d.subscription_id)
                .bind(now)
                .execute(&mut **t)
                .await?;
            sqlx::query(
                "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = $2
                 WHERE subscription_id = $1 AND status = 'pending'",
            )
            .bind(d.subscription_id)
            .bind(now)
            .execute(&mut **t)
            .await?;
        });
    }
    tx.commit().await?;
    Ok(true)
}

/// Deliveries waiting for an attempt (the delivery queue depth).
pub async fn pending_count(db: &Db) -> DbResult<i64> {
    dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").fetch_one(p).await.map_err(crate::db::StoreError::from)
    })
}

/// When the earliest pending delivery is due, if any.
pub async fn next_due(db: &Db) -> DbResult<Option<Ts>> {
    dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'").fetch_one(p).await.map_err(crate::db::StoreError::from)
    })
}
