//! The delivery worker's storage: fan-out of outbox events into deliveries, and the
//! leases by which workers (of one node or many) claim due deliveries without ever
//! sending one attempt twice at once.

use std::collections::{HashMap, hash_map::Entry};

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use crate::{
    OrgId, Ts, WebhookId,
    db::{Backend, Db, DbResult, StoreError, events::OUTBOX_CHANNEL},
    dispatch, dispatch_tx,
    webhooks::{
        events::Body,
        model::{Claimed, DeliveryStatus, EventName},
    },
};

/// An outbox event not yet fanned out.
#[derive(sqlx::FromRow)]
struct PendingEvent {
    id: Uuid,
    org_id: OrgId,
    event_type: String,
    data: Json<Value>,
    occurred_at: Ts,
}

/// An enabled subscription and the events it takes.
#[derive(sqlx::FromRow)]
struct Target {
    id: WebhookId,
    event: EventName,
    created_at: Ts,
}

/// Fans out up to `batch` undispatched events into one delivery per enabled subscription
/// of their organization whose event matches (or is `*`) and that existed when the event
/// occurred, and marks them dispatched (one statement), in one transaction. Returns
/// (events, deliveries) written.
pub async fn fan_out(db: &Db, batch: i64) -> DbResult<(usize, usize)> {
    let now = db.now();
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
    let mut targets: HashMap<OrgId, Vec<Target>> = HashMap::new();
    let mut written = 0;
    for ev in &events {
        if let Entry::Vacant(slot) = targets.entry(ev.org_id) {
            let subs: Vec<Target> = dispatch_tx!(&mut tx, t => {
                sqlx::query_as("SELECT id, event, created_at FROM webhook_subscriptions WHERE org_id = $1 AND is_enabled = TRUE")
                    .bind(ev.org_id)
                    .fetch_all(&mut **t)
                    .await?
            });
            slot.insert(subs);
        }
        let body = Body {
            event: &ev.event_type,
            organization_id: ev.org_id,
            timestamp: ev.occurred_at,
            data: &ev.data.0,
        }
        .to_json();
        let subs: Vec<WebhookId> = targets[&ev.org_id]
            .iter()
            .filter(|s| s.event.matches(&ev.event_type) && s.created_at <= ev.occurred_at)
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
                        .push_bind(DeliveryStatus::Pending)
                        .push_bind(0_i64)
                        .push_bind(0_i64)
                        .push_bind(now)
                        .push_bind(now)
                        .push_bind(now);
                });
                qb.build().persistent(false).execute(&mut **t).await?;
            });
            written += chunk.len();
        }
    }
    // The batch's events marked with one statement.
    let ids: Vec<Uuid> = events.iter().map(|ev| ev.id).collect();
    dispatch_tx!(&mut tx, t => {
        let mut qb = sqlx::QueryBuilder::new("UPDATE events SET dispatched_at = ");
        qb.push_bind(now).push(" WHERE id");
        crate::db::push_in_list(&mut qb, &ids);
        qb.build().persistent(false).execute(&mut **t).await?;
    });
    if written > 0 {
        // Wake the workers of every node.
        tx.notify_after_commit(OUTBOX_CHANNEL);
    }
    tx.commit().await?;
    Ok((events.len(), written))
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
            .await.map_err(StoreError::from)
    })
}

/// Hands the leases of `owner` on these deliveries back.
pub async fn release(db: &Db, owner: Uuid, ids: &[Uuid]) -> DbResult<()> {
    crate::db::outbox::release(db, super::OUTBOX, owner, ids).await
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
