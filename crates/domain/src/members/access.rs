//! The access (subscription) record's rules: which plan a block names, the record a new
//! subscription starts as, and what a block changes.

use serde_json::json;
use uuid::Uuid;

use super::model::{Access, AccessIn, AccessStatus};
use crate::{
    Error, JsonDoc, MemberId, OrgId, Result, Ts,
    plans::{Plan, PlanRef},
};

/// The plan identifiers the block sent.
pub(super) fn plan_ref(a: &AccessIn) -> PlanRef {
    PlanRef {
        id: a.plan_id,
        processor_price_id: a.processor_price_id.clone(),
        alt_processor_plan_id: a.alt_processor_plan_id.clone(),
        name: a.plan_name.clone(),
    }
}

/// No plan of the organization matches every identifier sent.
pub(super) fn no_plan() -> Error {
    Error::field(
        "access",
        "not_found",
        "No plan of this organization matches the given planId, processorPriceId, altProcessorPlanId or planName.",
    )
}

/// The subscription id is another member's.
pub(super) fn subscription_taken() -> Error {
    Error::conflict(
        "This subscription belongs to another member.",
        json!({ "field": "access.processorSubscriptionId" }),
    )
}

/// A new record of `plan` for the member: active, with the plan's allowance.
pub(super) fn fresh(org_id: OrgId, user_id: MemberId, plan: &Plan, now: Ts) -> Access {
    Access {
        id: Uuid::now_v7(),
        organization_id: org_id,
        user_id,
        plan_id: plan.id,
        status: AccessStatus::Active,
        processor_subscription_id: None,
        current_period_start: None,
        current_period_end: None,
        cancel_at: None,
        canceled_at: None,
        jobs_remaining: plan.jobs_included,
        metadata: JsonDoc(json!({})),
        created_at: now,
        updated_at: now,
    }
}

/// A record with a block applied.
pub(super) struct Applied {
    pub record: Access,
    /// The record moved to canceled now (or was created canceled).
    pub newly_canceled: bool,
}

/// The record with the block applied: sent fields replace, `null` clears the dates and
/// resets `metadata` to `{}`. A move to another plan starts from that plan's allowance
/// unless `jobsRemaining` is sent; a move to canceled stamps `canceledAt` (now) unless it
/// is sent or already set. A period may not end before it starts.
pub(super) fn apply(
    stored: &Access,
    created: bool,
    plan: &Plan,
    a: &AccessIn,
    now: Ts,
) -> Result<Applied> {
    let mut r = stored.clone();
    if r.plan_id != plan.id {
        r.plan_id = plan.id;
        r.jobs_remaining = plan.jobs_included;
    }
    if let Some(v) = a.status {
        r.status = v;
    }
    if let Some(v) = &a.processor_subscription_id {
        r.processor_subscription_id = Some(v.clone());
    }
    if let Some(v) = a.current_period_start.clone().patch() {
        r.current_period_start = v;
    }
    if let Some(v) = a.current_period_end.clone().patch() {
        r.current_period_end = v;
    }
    if let Some(v) = a.cancel_at.clone().patch() {
        r.cancel_at = v;
    }
    if let Some(v) = a.canceled_at.clone().patch() {
        r.canceled_at = v;
    }
    if let Some(v) = a.jobs_remaining {
        r.jobs_remaining = v;
    }
    if let Some(v) = a.metadata.clone().patch() {
        r.metadata = JsonDoc::object(v.unwrap_or_default());
    }
    let newly_canceled =
        r.status == AccessStatus::Canceled && (created || stored.status != AccessStatus::Canceled);
    if newly_canceled && r.canceled_at.is_none() {
        r.canceled_at = Some(now);
    }
    if let (Some(start), Some(end)) = (r.current_period_start, r.current_period_end)
        && end < start
    {
        return Err(Error::field(
            "access.currentPeriodEnd",
            "out_of_range",
            "Must not be before currentPeriodStart.",
        ));
    }
    Ok(Applied {
        record: r,
        newly_canceled,
    })
}
