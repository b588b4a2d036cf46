//! Subscriptions as stored: create or find, read, list, change and delete (with their
//! deliveries), and the batch lookup of the worker. Every query of the API names the
//! organization.

use std::collections::HashMap;

use uuid::Uuid;

use super::SUB_COLS;
use crate::{
    OrgId, WebhookId,
    db::{Db, DbResult, StoreError, push_in_list},
    dispatch, dispatch_tx,
    input::Field,
    webhooks::model::{EventName, Subscription, TargetType, WebhookPatch},
};

/// Creates the subscription, or finds the one with the same organization, event, target
/// type and URL (replacing its secret when `secret` is given). `true` when created.
pub async fn upsert(
    db: &Db,
    org_id: OrgId,
    event: EventName,
    target_type: TargetType,
    target_url: &str,
    secret: Option<&str>,
) -> DbResult<(Subscription, bool)> {
    let now = db.now();
    let mut tx = db.begin().await?;
    let inserted: Option<Subscription> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "INSERT INTO webhook_subscriptions (id, org_id, event, target_type, target_url, secret, is_enabled, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7, $7)
             ON CONFLICT (org_id, event, target_type, target_url) DO NOTHING
             RETURNING {SUB_COLS}"
        )))
        .bind(WebhookId(Uuid::now_v7()))
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

/// One subscription of the organization.
pub async fn get(db: &Db, org_id: OrgId, id: WebhookId) -> DbResult<Option<Subscription>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(p)
        .await.map_err(StoreError::from)
    })
}

/// The organization's subscriptions, newest first.
pub async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<Subscription>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE org_id = $1 ORDER BY created_at DESC, id DESC"
        )))
        .bind(org_id)
        .fetch_all(p)
        .await.map_err(StoreError::from)
    })
}

/// How long a replaced secret keeps signing when the patch does not say.
pub const DEFAULT_GRACE_SECS: i64 = 24 * 60 * 60;

/// Applies `patch` (a field not sent stays as it is; a secret sent as `null` is removed,
/// with any previous one; a new secret keeps the replaced one signing for the grace
/// period);
/// `Ok(None)` when there is no such subscription. Re-enabling a subscription ends its
/// failure streak. A secret is only ever stored for `webhook` targets. A result equal to
/// another subscription is refused by the unique index.
pub async fn update(
    db: &Db,
    org_id: OrgId,
    id: WebhookId,
    patch: &WebhookPatch,
) -> DbResult<Option<Subscription>> {
    let (set_secret, secret) = match &patch.secret {
        Field::Absent => (false, None),
        Field::Null => (true, None),
        Field::Value(s) => (true, Some(s.as_str())),
    };
    let now = db.now();
    let grace = patch.secret_grace_seconds.unwrap_or(DEFAULT_GRACE_SECS);
    let keep_previous = grace > 0;
    let previous_until = now.later_by(std::time::Duration::from_secs(
        u64::try_from(grace).unwrap_or(0),
    ));
    dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_subscriptions SET
                 event = COALESCE($3, event),
                 target_url = COALESCE($4, target_url),
                 is_enabled = COALESCE($5, is_enabled),
                 failing_since = CASE WHEN $5 = TRUE THEN NULL ELSE failing_since END,
                 secret = CASE WHEN $6 AND target_type = 'webhook' THEN $7 ELSE secret END,
                 previous_secret = CASE
                     WHEN NOT $6 OR target_type <> 'webhook' OR secret = $7 THEN previous_secret
                     WHEN $7 IS NOT NULL AND $9 THEN secret
                     ELSE NULL END,
                 previous_secret_until = CASE
                     WHEN NOT $6 OR target_type <> 'webhook' OR secret = $7 THEN previous_secret_until
                     WHEN $7 IS NOT NULL AND $9 AND secret IS NOT NULL THEN $10
                     ELSE NULL END,
                 updated_at = $8
             WHERE org_id = $1 AND id = $2
             RETURNING {SUB_COLS}"
        )))
        .bind(org_id)
        .bind(id)
        .bind(patch.event)
        .bind(patch.target_url.as_deref())
        .bind(patch.is_enabled)
        .bind(set_secret)
        .bind(secret)
        .bind(now)
        .bind(keep_previous)
        .bind(previous_until)
        .fetch_optional(p)
        .await.map_err(StoreError::from)
    })
}

/// Deletes the subscription with its deliveries and their attempts. `false` when missing.
pub async fn delete(db: &Db, org_id: OrgId, id: WebhookId) -> DbResult<bool> {
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

/// The subscriptions with these ids (the targets of a claimed batch, of any
/// organization), by id.
pub async fn targets(db: &Db, ids: &[WebhookId]) -> DbResult<HashMap<WebhookId, Subscription>> {
    let mut out = HashMap::new();
    for chunk in ids.chunks(500) {
        let found: Vec<Subscription> = dispatch!(db.reader(), p => {
            let mut qb = sqlx::QueryBuilder::new(format!(
                "SELECT {SUB_COLS} FROM webhook_subscriptions WHERE id"
            ));
            push_in_list(&mut qb, chunk);
            qb.build_query_as().persistent(false).fetch_all(p).await?
        });
        out.extend(found.into_iter().map(|s| (s.id, s)));
    }
    Ok(out)
}
