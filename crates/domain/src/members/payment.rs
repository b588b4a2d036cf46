//! The payment's rules: which stored payment a block names, the payment a block creates,
//! what it changes, and when the payment counts as received.

use serde_json::json;
use uuid::Uuid;

use super::model::{Payment, PaymentIn, PaymentProvider, PaymentStatus};
use crate::{Error, JsonDoc, MemberId, OrgId, Result, Ts};

/// The job paid for is no job of the organization.
pub(super) fn job_not_found() -> Error {
    Error::field(
        "payment.jobId",
        "not_found",
        "No job with this id exists in the organization.",
    )
}

/// The plan sent is no plan of the organization.
pub(super) fn plan_not_found() -> Error {
    Error::field(
        "payment.planId",
        "not_found",
        "No plan with this id exists in the organization.",
    )
}

/// The stored payment the block names by its processor intent or session id, if any. The
/// two ids naming different payments, or a payment of another member, is a conflict.
pub(super) fn matching(
    by_intent: Option<Payment>,
    by_session: Option<Payment>,
    user_id: MemberId,
) -> Result<Option<Payment>> {
    let found = match (by_intent, by_session) {
        (Some(a), Some(b)) if a.id != b.id => {
            return Err(Error::conflict(
                "processorPaymentIntentId and processorSessionId name two different payments.",
                json!({ "field": "payment" }),
            ));
        }
        (a, b) => a.or(b),
    };
    if found.as_ref().is_some_and(|p| p.user_id != Some(user_id)) {
        return Err(Error::conflict(
            "A payment with this processor id belongs to another (or a deleted) member.",
            json!({ "field": "payment" }),
        ));
    }
    Ok(found)
}

/// A new payment of the member: succeeded, through the card processor, until the block
/// says otherwise.
pub(super) fn fresh(org_id: OrgId, user_id: MemberId, p: &PaymentIn, now: Ts) -> Payment {
    Payment {
        id: Uuid::now_v7(),
        organization_id: org_id,
        user_id: Some(user_id),
        job_id: Some(p.job_id),
        plan_id: None,
        amount: p.amount,
        currency: p.currency.clone(),
        status: PaymentStatus::Succeeded,
        payment_provider: PaymentProvider::Processor,
        processor_session_id: None,
        processor_payment_intent_id: None,
        metadata: JsonDoc(json!({})),
        created_at: now,
        updated_at: now,
    }
}

/// The payment with the block applied: job, amount and currency always; the plan sent,
/// else the access block's; other fields when sent (`null` metadata stores `{}`).
pub(super) fn apply(stored: &Payment, p: &PaymentIn, access_plan: Option<Uuid>) -> Payment {
    let mut r = stored.clone();
    r.job_id = Some(p.job_id);
    r.amount = p.amount;
    r.currency = p.currency.clone();
    if let Some(v) = p.plan_id.or(access_plan) {
        r.plan_id = Some(v);
    }
    if let Some(v) = p.status {
        r.status = v;
    }
    if let Some(v) = p.payment_provider {
        r.payment_provider = v;
    }
    if let Some(v) = &p.processor_session_id {
        r.processor_session_id = Some(v.clone());
    }
    if let Some(v) = &p.processor_payment_intent_id {
        r.processor_payment_intent_id = Some(v.clone());
    }
    if let Some(v) = p.metadata.clone().patch() {
        r.metadata = JsonDoc::object(v.unwrap_or_default());
    }
    r
}

/// True when the payment was created as, or has just moved to, succeeded.
pub(super) fn received(created: bool, before: &Payment, after: &Payment) -> bool {
    after.status == PaymentStatus::Succeeded
        && (created || before.status != PaymentStatus::Succeeded)
}
