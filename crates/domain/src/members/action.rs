//! The rules of `POST /members/access`: what each action does to an access record's
//! `status`, `cancelAt`, `canceledAt` and `currentPeriodEnd`, and which moves are refused.
//!
//! Repeating an action is harmless (the record is returned unchanged, with no event); a
//! move that makes no sense for the record's state is `409 conflict`.

use serde_json::json;

use super::model::{Access, AccessAction, AccessStatus};
use crate::{Error, Result, Ts};

/// How far ahead of the server's clock an `effectiveAt` of `expire_now` or `cancel_now`
/// may be (clock skew between the caller and the server).
const SKEW: std::time::Duration = std::time::Duration::from_secs(60);

/// The record with `action` applied at `at` (the request's `effectiveAt`, when sent).
pub(super) fn act(
    stored: &Access,
    action: AccessAction,
    at: Option<Ts>,
    now: Ts,
) -> Result<Access> {
    use AccessStatus::*;
    let when = at.unwrap_or(now);
    let mut r = stored.clone();
    match action {
        AccessAction::Activate => {
            r.status = Active;
            r.cancel_at = None;
            r.canceled_at = None;
            if let Some(t) = at {
                r.current_period_start = Some(t);
            }
            // A period that has ended (or ends before the new start) no longer bounds it.
            if r.current_period_end
                .is_some_and(|end| end <= now || end < when)
            {
                r.current_period_end = None;
            }
        }
        AccessAction::ExpireNow => {
            not_ahead(at, now)?;
            r.status = Expired;
            r.cancel_at = None;
            end_period(&mut r, when)?;
        }
        AccessAction::CancelNow => {
            not_ahead(at, now)?;
            if stored.status == Expired {
                return Err(refused(stored, "An expired record cannot be canceled."));
            }
            if stored.status != Canceled {
                r.status = Canceled;
                r.canceled_at = Some(when);
            }
            r.cancel_at = None;
            end_period(&mut r, when)?;
        }
        AccessAction::CancelAtPeriodEnd => {
            if matches!(stored.status, Canceled | Expired) {
                return Err(refused(
                    stored,
                    "Only an active, trialing or past-due record can be canceled at its period's end.",
                ));
            }
            let end = at.or(stored.current_period_end).ok_or_else(|| {
                Error::field(
                    "effectiveAt",
                    "required",
                    "The record has no currentPeriodEnd; give effectiveAt, the time to cancel at.",
                )
            })?;
            r.cancel_at = Some(end);
        }
        AccessAction::Reactivate => match stored.status {
            Expired => {
                return Err(refused(
                    stored,
                    "An expired record cannot be reactivated; use activate to start it again.",
                ));
            }
            Canceled => {
                if stored.current_period_end.is_none_or(|end| end <= now) {
                    return Err(refused(
                        stored,
                        "The canceled record's period has ended; use activate to start it again.",
                    ));
                }
                r.status = Active;
                r.canceled_at = None;
                r.cancel_at = None;
            }
            Active | Trialing | PastDue => r.cancel_at = None,
        },
        AccessAction::MarkPastDue => match stored.status {
            Active | Trialing => r.status = PastDue,
            PastDue => {}
            Canceled | Expired => {
                return Err(refused(
                    stored,
                    "Only an active or trialing record can become past due.",
                ));
            }
        },
        AccessAction::DeleteMember => unreachable!("delete_member acts on the member"),
    }
    Ok(r)
}

/// `expire_now` and `cancel_now` happen now: an `effectiveAt` in the future is refused.
fn not_ahead(at: Option<Ts>, now: Ts) -> Result<()> {
    match at {
        Some(t) if t > now.later_by(SKEW) => Err(Error::field(
            "effectiveAt",
            "out_of_range",
            "Must not be in the future for this action; use cancel_at_period_end to cancel later.",
        )),
        _ => Ok(()),
    }
}

/// The period ends at `when` unless it ended before; it may not end before it started.
fn end_period(r: &mut Access, when: Ts) -> Result<()> {
    if r.current_period_end.is_none_or(|end| end > when) {
        r.current_period_end = Some(when);
    }
    if r.current_period_start.is_some_and(|start| start > when) {
        return Err(Error::field(
            "effectiveAt",
            "out_of_range",
            "Must not be before the record's currentPeriodStart.",
        ));
    }
    Ok(())
}

/// `planId` names no plan of the organization.
pub(super) fn no_plan() -> Error {
    Error::field(
        "planId",
        "not_found",
        "No plan with this id exists in the organization.",
    )
}

/// The record of `processorSubscriptionId` is of another plan than `planId`.
pub(super) fn other_plan() -> Error {
    Error::conflict(
        "The record of this processorSubscriptionId is of another plan than planId.",
        json!({ "field": "planId" }),
    )
}

/// `userId` and `email` name two different members.
pub(super) fn member_mismatch() -> Error {
    Error::conflict(
        "userId and email name different members.",
        json!({ "field": "email" }),
    )
}

fn refused(stored: &Access, message: &str) -> Error {
    Error::conflict(
        message,
        json!({ "field": "action", "status": stored.status }),
    )
}
