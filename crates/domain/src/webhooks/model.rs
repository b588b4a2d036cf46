//! Webhook subscriptions and deliveries: their closed sets, their stored rows, the bodies
//! and query that change or read them, and what the delivery worker claims and records.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    OrgId, Ts, WebhookId,
    kind::{Enum, Flag, Instant, Int, Link, Text},
    query,
    query::QInt,
    request, text_enum,
};

text_enum!(
    /// One event name of the Events table, or `*` for all.
    EventName {
        JobCreated = "job.created",
        JobUpdated = "job.updated",
        JobApproved = "job.approved",
        JobExpired = "job.expired",
        JobDeleted = "job.deleted",
        JobStatusChanged = "job.status_changed",
        ApplicationReceived = "application.received",
        ApplicationStatusChanged = "application.status_changed",
        UserCreated = "user.created",
        SubscriptionCreated = "subscription.created",
        SubscriptionCanceled = "subscription.canceled",
        SubscriptionUpdated = "subscription.updated",
        UserDeleted = "user.deleted",
        PaymentReceived = "payment.received",
        All = "*",
    }
);

impl EventName {
    /// True when a subscription to this name receives events of type `event_type`.
    pub fn matches(self, event_type: &str) -> bool {
        self == EventName::All || self.as_str() == event_type
    }
}

text_enum!(
    /// `webhook` (signed JSON), `chat_a` (Discord-style embeds), `chat_b` (Slack-style blocks).
    TargetType { Webhook = "webhook", ChatA = "chat_a", ChatB = "chat_b" }
);

text_enum!(
    /// Where a delivery is: `pending` (waiting for its next attempt), `succeeded`, or
    /// `failed` (retries exhausted, or the subscription was disabled by the service).
    DeliveryStatus { Pending = "pending", Succeeded = "succeeded", Failed = "failed" }
);

/// Lets a status be compared with its text (`status == "pending"`).
impl PartialEq<&str> for DeliveryStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A subscription as stored. It holds the signing secret, so it is never serialised:
/// front doors render their own view of it, and `Debug` leaves the secret out.
#[derive(Clone, sqlx::FromRow)]
pub struct Subscription {
    pub id: WebhookId,
    pub org_id: OrgId,
    pub event: EventName,
    pub target_type: TargetType,
    pub target_url: String,
    /// Signs `webhook` deliveries; never stored for chat targets.
    pub secret: Option<String>,
    /// The secret replaced by the last rotation: it signs deliveries beside `secret` until
    /// `previous_secret_until`.
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<Ts>,
    /// False once disabled, by a change or by the service.
    pub is_enabled: bool,
    /// Start of the current failure streak; `None` after a success.
    pub failing_since: Option<Ts>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

impl Subscription {
    /// The secrets that sign a delivery attempted at `at`: the current one, then the
    /// previous one while its grace period lasts. Empty for unsigned targets.
    pub fn signing_secrets(&self, at: Ts) -> Vec<&str> {
        let mut out: Vec<&str> = self.secret.as_deref().into_iter().collect();
        if let (Some(prev), Some(until)) = (&self.previous_secret, self.previous_secret_until)
            && until > at
            && !out.is_empty()
        {
            out.push(prev);
        }
        out
    }

    /// When the previous secret stops signing, while it still does at `now`.
    pub fn rotation_ends_at(&self, now: Ts) -> Option<Ts> {
        self.previous_secret_until
            .filter(|until| *until > now && self.previous_secret.is_some() && self.secret.is_some())
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("org_id", &self.org_id)
            .field("event", &self.event)
            .field("target_type", &self.target_type)
            .field("target_url", &self.target_url)
            .field("secret", &self.secret.as_ref().map(|_| "***"))
            .field(
                "previous_secret",
                &self.previous_secret.as_ref().map(|_| "***"),
            )
            .field("previous_secret_until", &self.previous_secret_until)
            .field("is_enabled", &self.is_enabled)
            .field("failing_since", &self.failing_since)
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .finish()
    }
}

request! {
    /// Body of `POST /webhooks`.
    pub struct WebhookIn {
        pub event: required Enum<EventName>,
        pub target_type: required Enum<TargetType>,
        /// Absolute http(s) URL receiving the POST deliveries. Hosts resolving to loopback,
        /// private, link-local, multicast or other non-public addresses are refused unless the
        /// server allows them.
        pub target_url: required Link,
        /// At least 16 characters; signs deliveries (`X-Service-Signature`). Ignored for chat
        /// targets. Never returned.
        pub secret: optional Text<16, 1024>,
    }
}

request! {
    /// Body of `PATCH /webhooks/{id}`: at least one field.
    #[min_properties = 1]
    pub struct WebhookPatch {
        pub event: optional Enum<EventName>,
        pub target_url: optional Link,
        /// Re-enabling ends the failure streak.
        pub is_enabled: optional Flag,
        /// A new secret; null removes it (and any previous one at once). Ignored for chat
        /// targets. A secret other than the current one starts a rotation: the current
        /// secret keeps signing deliveries, beside the new one, for
        /// `secret_grace_seconds`.
        pub secret: nullable Text<16, 1024>,
        /// How long the replaced secret stays valid, in seconds: 0 (at once) to 604,800
        /// (7 days); default 86,400 (24 hours). Only with a new `secret`.
        pub secret_grace_seconds: optional Int<0, 604800>,
    }
}

request! {
    /// Body of `POST /webhooks/{id}/recover`.
    pub struct RecoverIn {
        /// Failed deliveries created at or after this time are queued again.
        pub since: required Instant,
    }
}

query! {
    /// Query of `GET /webhooks/{id}/deliveries`.
    pub struct DeliveryListQuery {
        /// How many deliveries, newest first (default 20).
        pub limit: QInt<1, 100> = default(20),
    }
}

/// One delivery, as listed by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Delivery {
    /// Stable id, sent as `X-Service-Delivery` on every attempt.
    pub id: Uuid,
    #[schema(value_type = Uuid)]
    pub subscription_id: WebhookId,
    /// The event name (`ping` for test deliveries).
    pub event: String,
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempts: i64,
    /// When the next attempt is due; null unless pending.
    pub next_attempt_at: Option<Ts>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

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

/// A delivery claimed by a worker, with what is needed to send it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    pub id: Uuid,
    pub subscription_id: WebhookId,
    pub org_id: OrgId,
    pub event_type: String,
    /// The exact body of `webhook` targets (the same bytes on every attempt).
    pub payload: String,
    pub attempts: i64,
    pub retry_step: i64,
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

impl Next {
    /// The status the delivery takes.
    pub fn status(self) -> DeliveryStatus {
        match self {
            Next::Succeeded => DeliveryStatus::Succeeded,
            Next::RetryAt(_) => DeliveryStatus::Pending,
            Next::Failed | Next::Gone => DeliveryStatus::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_previous_secret_signs_until_its_grace_period_ends() {
        let now = Ts::now();
        let until = now.later_by(std::time::Duration::from_secs(60));
        let sub = Subscription {
            id: WebhookId(Uuid::now_v7()),
            org_id: OrgId(1),
            event: EventName::All,
            target_type: TargetType::Webhook,
            target_url: "https://example.com/".into(),
            secret: Some("new-secret-0123456789".into()),
            previous_secret: Some("old-secret-0123456789".into()),
            previous_secret_until: Some(until),
            is_enabled: true,
            failing_since: None,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(
            sub.signing_secrets(now),
            ["new-secret-0123456789", "old-secret-0123456789"]
        );
        assert_eq!(sub.rotation_ends_at(now), Some(until));
        assert_eq!(sub.signing_secrets(until), ["new-secret-0123456789"]);
        assert_eq!(sub.rotation_ends_at(until), None);
        let unsigned = Subscription {
            secret: None,
            ..sub.clone()
        };
        assert!(unsigned.signing_secrets(now).is_empty());
        assert_eq!(unsigned.rotation_ends_at(now), None);
        assert!(!format!("{sub:?}").contains("secret-0123456789"));
    }
}
