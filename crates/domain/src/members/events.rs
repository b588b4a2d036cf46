//! The events of members, access records and payments, and their payloads (field order is
//! the delivered JSON's order).

use serde::Serialize;
use uuid::Uuid;

use super::model::{Access, AccessStatus, Member, Payment, PaymentProvider, Role};
use crate::{JobId, MemberId, Money, Ts, events::Event};

/// `user.created`: a sync created the member.
#[derive(Debug, Serialize)]
pub struct UserCreated {
    pub user_id: MemberId,
    pub email: String,
    pub name: String,
    pub role: Role,
}

impl Event for UserCreated {
    fn event_type(&self) -> &'static str {
        "user.created"
    }
}

/// `subscription.created` (a record created, also as canceled) and
/// `subscription.canceled` (an existing record moved to canceled).
#[derive(Debug, Serialize)]
pub struct SubscriptionChanged {
    #[serde(skip)]
    event: &'static str,
    pub access_id: Uuid,
    pub user_id: MemberId,
    pub plan_id: Uuid,
    pub status: AccessStatus,
}

impl Event for SubscriptionChanged {
    fn event_type(&self) -> &'static str {
        self.event
    }
}

/// `subscription.updated`: an access action changed a record other than by creating or
/// canceling it (a status change, a scheduled or undone cancellation, a period's end).
#[derive(Debug, Serialize)]
pub struct SubscriptionUpdated {
    pub access_id: Uuid,
    pub user_id: MemberId,
    pub plan_id: Uuid,
    pub previous_status: AccessStatus,
    pub status: AccessStatus,
    pub cancel_at: Option<Ts>,
    pub current_period_end: Option<Ts>,
}

impl Event for SubscriptionUpdated {
    fn event_type(&self) -> &'static str {
        "subscription.updated"
    }
}

/// `user.deleted`: `delete_member` removed the member and its access records.
#[derive(Debug, Serialize)]
pub struct UserDeleted {
    pub user_id: MemberId,
    pub email: String,
}

impl Event for UserDeleted {
    fn event_type(&self) -> &'static str {
        "user.deleted"
    }
}

/// `payment.received`: a payment created as, or moved to, succeeded.
#[derive(Debug, Serialize)]
pub struct PaymentReceived {
    pub payment_id: Uuid,
    pub user_id: Option<MemberId>,
    /// Null for a pack of posts (then `plan_id` names it).
    pub job_id: Option<JobId>,
    pub plan_id: Option<Uuid>,
    pub amount: Money,
    pub currency: String,
    pub payment_provider: PaymentProvider,
}

impl Event for PaymentReceived {
    fn event_type(&self) -> &'static str {
        "payment.received"
    }
}

pub fn user_created(m: &Member) -> UserCreated {
    UserCreated {
        user_id: m.id,
        email: m.email.clone(),
        name: m.name.clone(),
        role: m.role,
    }
}

fn subscription(event: &'static str, a: &Access) -> SubscriptionChanged {
    SubscriptionChanged {
        event,
        access_id: a.id,
        user_id: a.user_id,
        plan_id: a.plan_id,
        status: a.status,
    }
}

pub fn subscription_created(a: &Access) -> SubscriptionChanged {
    subscription("subscription.created", a)
}

pub fn subscription_canceled(a: &Access) -> SubscriptionChanged {
    subscription("subscription.canceled", a)
}

pub fn payment_received(p: &Payment) -> PaymentReceived {
    PaymentReceived {
        payment_id: p.id,
        user_id: p.user_id,
        job_id: p.job_id,
        plan_id: p.plan_id,
        amount: p.amount,
        currency: p.currency.clone(),
        payment_provider: p.payment_provider,
    }
}

pub fn subscription_updated(before: &Access, a: &Access) -> SubscriptionUpdated {
    SubscriptionUpdated {
        access_id: a.id,
        user_id: a.user_id,
        plan_id: a.plan_id,
        previous_status: before.status,
        status: a.status,
        cancel_at: a.cancel_at,
        current_period_end: a.current_period_end,
    }
}

pub fn user_deleted(m: &Member) -> UserDeleted {
    UserDeleted {
        user_id: m.id,
        email: m.email.clone(),
    }
}
