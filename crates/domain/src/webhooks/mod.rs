//! Webhook subscriptions and their deliveries: the operations the API, the board and the
//! dashboard call to subscribe a target to events, read, change and delete subscriptions,
//! read the delivery log, make a delivery due again and send a test. The delivery worker
//! (`crate::webhooks`) claims, sends and records deliveries through the storage functions
//! re-exported here.
//!
//! Where a subscription may send is decided by the worker's address policy, which the
//! caller passes as a [`TargetPolicy`]: this layer knows no network.

pub mod events;
pub mod model;
pub(crate) mod store;

use std::future::Future;

use serde_json::json;
use uuid::Uuid;

pub use model::*;
pub use store::subscriptions::upsert;
pub use store::{
    claims::{claim, fan_out, release, release_all},
    deliveries::{Succeeded, next_due, pending_count, record, record_succeeded},
    subscriptions::targets,
};

use crate::{
    Error, FieldError, Input, OrgId, Result, WebhookId,
    db::{Db, events::OUTBOX_WAKE},
    input::Field,
    kind::{Kind, Link},
};

/// Which target URLs subscriptions may name: the address policy of the delivery worker.
pub trait TargetPolicy {
    /// Checks a URL at registration; the error is a message for the user.
    fn check_url(&self, url: &str) -> impl Future<Output = std::result::Result<(), String>> + Send;
}

/// Subscribes a target from a create body, or finds the subscription with the same
/// event, target type and URL (its secret replaced when one is sent). A secret is kept
/// for `webhook` targets only. `true` when created.
pub async fn create(
    db: &Db,
    org_id: OrgId,
    policy: &impl TargetPolicy,
    mut body: Input,
) -> Result<(Subscription, bool)> {
    let url = sent_url(&body);
    let read = WebhookIn::read(&mut body);
    let errors = check_target(policy, url, body.into_errors(), WebhookIn::FIELDS).await;
    let Some(sub) = read.filter(|_| errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    let secret = sub
        .secret
        .filter(|_| sub.target_type == TargetType::Webhook);
    Ok(upsert(
        db,
        org_id,
        sub.event,
        sub.target_type,
        &sub.target_url,
        secret.as_deref(),
    )
    .await?)
}

/// The organization's subscriptions, newest first.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<Subscription>> {
    Ok(store::subscriptions::list(db, org_id).await?)
}

/// One subscription of the organization.
pub async fn get(db: &Db, org_id: OrgId, id: WebhookId) -> Result<Subscription> {
    store::subscriptions::get(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("webhook"))
}

/// Changes a subscription from a patch body (at least one field). Re-enabling it ends its
/// failure streak and lets its pending deliveries go; a change that makes it equal to
/// another subscription is a conflict.
pub async fn update(
    db: &Db,
    org_id: OrgId,
    id: WebhookId,
    policy: &impl TargetPolicy,
    mut body: Input,
) -> Result<Subscription> {
    if body.is_empty() {
        return Err(Error::field(
            "body",
            "required",
            "Send at least one of event, target_url, secret, is_enabled.",
        ));
    }
    let url = sent_url(&body);
    let read = WebhookPatch::read(&mut body);
    let errors = check_target(policy, url, body.into_errors(), WebhookPatch::FIELDS).await;
    let Some(patch) = read.filter(|_| errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    if patch.secret_grace_seconds.is_some() && !matches!(patch.secret, Field::Value(_)) {
        return Err(Error::field(
            "secret_grace_seconds",
            "invalid",
            "Only with a new secret: it is how long the replaced secret stays valid.",
        ));
    }
    match store::subscriptions::update(db, org_id, id, &patch).await {
        Ok(Some(sub)) => {
            if sub.is_enabled {
                OUTBOX_WAKE.notify_waiters();
            }
            Ok(sub)
        }
        Ok(None) => Err(Error::NotFound("webhook")),
        Err(e) if e.is_unique() => Err(Error::conflict(
            "Another subscription has the same event, target type and target URL.",
            json!({ "fields": ["event", "target_url"] }),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Queues again every failed delivery of `sub` created at or after `since` (each due now,
/// with a fresh retry schedule), from a `POST /webhooks/{id}/recover` body. Answers how
/// many. A disabled subscription must be enabled first.
pub async fn recover(db: &Db, sub: &Subscription, body: Input) -> Result<u64> {
    let req = RecoverIn::parse(body)?;
    check_enabled(sub)?;
    let n = store::deliveries::recover(db, sub.org_id, sub.id, req.since).await?;
    if n > 0 {
        OUTBOX_WAKE.notify_waiters();
    }
    Ok(n)
}

/// Deletes a subscription permanently, with its deliveries (pending ones are discarded).
pub async fn delete(db: &Db, org_id: OrgId, id: WebhookId) -> Result<()> {
    if store::subscriptions::delete(db, org_id, id).await? {
        Ok(())
    } else {
        Err(Error::NotFound("webhook"))
    }
}

/// The newest `limit` deliveries of a subscription of the organization, each with its
/// attempts (oldest first).
pub async fn list_deliveries(
    db: &Db,
    org_id: OrgId,
    id: WebhookId,
    limit: i64,
) -> Result<Vec<(Delivery, Vec<Attempt>)>> {
    let sub = get(db, org_id, id).await?;
    Ok(store::deliveries::list(db, org_id, sub.id, limit).await?)
}

/// Makes a delivery of `sub` due now with a fresh retry schedule (whatever its status).
/// A disabled subscription must be enabled first.
pub async fn retry_delivery(db: &Db, sub: &Subscription, delivery_id: Uuid) -> Result<Delivery> {
    check_enabled(sub)?;
    let delivery = store::deliveries::retry(db, sub.org_id, sub.id, delivery_id)
        .await?
        .ok_or(Error::NotFound("delivery"))?;
    OUTBOX_WAKE.notify_waiters();
    Ok(delivery)
}

/// Queues a `ping` delivery (data `{subscription_id}`) to `sub`, due now. A disabled
/// subscription must be enabled first.
pub async fn test(db: &Db, sub: &Subscription) -> Result<Delivery> {
    check_enabled(sub)?;
    let delivery = store::deliveries::create_ping(db, sub).await?;
    OUTBOX_WAKE.notify_waiters();
    Ok(delivery)
}

fn check_enabled(sub: &Subscription) -> Result<()> {
    if sub.is_enabled {
        Ok(())
    } else {
        Err(Error::conflict(
            "The subscription is disabled; enable it with PATCH first.",
            json!({ "is_enabled": false }),
        ))
    }
}

/// The `target_url` of a body when it is a well-formed URL (its other problems are the
/// body reader's to report).
fn sent_url(body: &Input) -> Option<String> {
    body.peek("target_url").and_then(|v| Link::parse(v).ok())
}

/// Adds a refusal of the policy for `url` to the errors of a body, where a problem of
/// `target_url` is listed: in the order of the body's `fields`, unknown fields last.
async fn check_target(
    policy: &impl TargetPolicy,
    url: Option<String>,
    mut errors: Vec<FieldError>,
    fields: &[&str],
) -> Vec<FieldError> {
    let Some(url) = url else { return errors };
    let Err(message) = policy.check_url(&url).await else {
        return errors;
    };
    // Unknown fields rank last.
    let rank = |field: &str| {
        fields
            .iter()
            .position(|f| *f == field)
            .unwrap_or(usize::MAX)
    };
    let at = rank("target_url");
    let index = errors
        .iter()
        .position(|e| rank(&e.field) > at)
        .unwrap_or(errors.len());
    errors.insert(
        index,
        FieldError::new("target_url", "forbidden_target", message),
    );
    errors
}
