//! Webhooks as stored, by concern: subscriptions, deliveries with their attempt log, and
//! the claims of the delivery worker (fan-out of the outbox, leases).
//!
//! A delivery is one event for one subscription. It is `pending` until an attempt succeeds
//! (`succeeded`) or the retry schedule is exhausted or the subscription is disabled by the
//! service (`failed`). A worker claims due deliveries by writing a lease (`lease_owner`,
//! `lease_until`); an expired lease makes the delivery claimable again, so a crashed worker
//! loses nothing (delivery is at least once).

pub mod claims;
pub mod deliveries;
pub mod subscriptions;

/// The deliveries table, as the shared outbox statements name it.
const OUTBOX: crate::db::outbox::Table = crate::db::outbox::Table {
    name: "webhook_deliveries",
    waiting: "pending",
};

/// The columns of [`super::model::Subscription`].
const SUB_COLS: &str = "id, org_id, event, target_type, target_url, secret, previous_secret, previous_secret_until, is_enabled, failing_since, created_at, updated_at";

/// The columns of [`super::model::Delivery`].
const DELIVERY_COLS: &str = "id, subscription_id, event_type AS event, status, attempts, next_attempt_at, created_at, updated_at";
