//! Members, their access (subscription) records and payments: the closed sets, the rows
//! as stored and returned, the body of `POST /members/sync`, and what a sync wrote.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    Input, JobId, JsonDoc, MemberId, Money, OrgId, Ts,
    kind::{Cash, Currency, Email, Enum, Id, Instant, Int, Link, Object, Text, Trimmed},
    query,
    query::{QEnum, QInt, QText},
    request, text_enum,
};

text_enum!(
    /// What a member does on the board.
    Role { Employee = "employee", Business = "business", Both = "both", Jobseeker = "jobseeker", Employer = "employer" }
);

impl Role {
    /// Members of this role post jobs (employers, businesses, both).
    pub fn posts_jobs(self) -> bool {
        matches!(self, Role::Employer | Role::Business | Role::Both)
    }
}

text_enum!(
    /// Whether a member is admitted to the board.
    ApprovalStatus { Approved = "approved", Pending = "pending", Rejected = "rejected" }
);

text_enum!(
    /// State of an access (subscription) record.
    AccessStatus { Active = "active", Trialing = "trialing", PastDue = "past_due", Canceled = "canceled", Expired = "expired" }
);

text_enum!(
    /// State of a payment.
    PaymentStatus { Pending = "pending", Succeeded = "succeeded", Failed = "failed", Refunded = "refunded" }
);

text_enum!(
    /// Who took a payment: the card processor, the second provider, or recorded by hand.
    PaymentProvider { Processor = "processor", AltProcessor = "alt_processor", Manual = "manual" }
);

/// A member as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    #[schema(value_type = Uuid)]
    pub id: MemberId,
    /// The organization that scopes the member.
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    /// As last synced. Matched ignoring the case of ASCII letters only: `Kate@Example.com`
    /// is `kate@example.com`, but no other character is folded.
    pub email: String,
    pub name: String,
    pub role: Role,
    pub approval_status: ApprovalStatus,
    pub profile_picture: Option<String>,
    pub description: Option<String>,
    /// Free-form extra profile answers.
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<JsonDoc>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// An access record as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Access {
    pub id: Uuid,
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    /// The member holding the access.
    #[schema(value_type = Uuid)]
    pub user_id: MemberId,
    pub plan_id: Uuid,
    pub status: AccessStatus,
    /// The subscription id at the card processor.
    pub processor_subscription_id: Option<String>,
    pub current_period_start: Option<Ts>,
    pub current_period_end: Option<Ts>,
    pub cancel_at: Option<Ts>,
    pub canceled_at: Option<Ts>,
    /// Job posts left; starts at the plan's `jobsIncluded`.
    pub jobs_remaining: i64,
    #[schema(value_type = Object)]
    pub metadata: JsonDoc,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// A payment as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub id: Uuid,
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    /// The member who paid; null once that member was deleted (the payment stays).
    #[schema(value_type = Option<Uuid>)]
    pub user_id: Option<MemberId>,
    /// The job paid for; null for a pack of posts bought on the board (`planId` names it).
    #[schema(value_type = Option<Uuid>)]
    pub job_id: Option<JobId>,
    /// The plan paid for: the one sent, else the plan of the sync's `access` block.
    pub plan_id: Option<Uuid>,
    pub amount: Money,
    /// ISO 4217 code, upper case.
    #[schema(pattern = "^[A-Z]{3}$")]
    pub currency: String,
    pub status: PaymentStatus,
    pub payment_provider: PaymentProvider,
    pub processor_session_id: Option<String>,
    pub processor_payment_intent_id: Option<String>,
    #[schema(value_type = Object)]
    pub metadata: JsonDoc,
    pub created_at: Ts,
    pub updated_at: Ts,
}

request! {
    /// Body of `POST /members/sync`. Fields sent replace stored values; fields omitted keep
    /// them.
    pub struct MemberSyncIn {
        /// Matched within the organization ignoring the case of ASCII letters only (no
        /// other character is folded, so two different addresses never name one member).
        pub email: required Email,
        /// The member's id. When it names a member of the organization, that member is
        /// updated (its email may change); otherwise a new member gets this id. `null`
        /// counts as absent.
        #[json = "userId"]
        pub user_id: optional Id<MemberId>,
        /// 1 to 255 characters, stored without surrounding white space; default: the part
        /// of the email before the at-sign.
        pub name: not_null Trimmed<1, 255>,
        /// Default `jobseeker`.
        pub role: not_null Enum<Role>,
        /// Default `approved`.
        #[json = "approvalStatus"]
        pub approval_status: not_null Enum<ApprovalStatus>,
        /// Absolute http(s) URL; null clears it.
        #[json = "profilePicture"]
        pub profile_picture: nullable Link,
        /// At most 10,000 characters; null clears it.
        pub description: nullable Text<0, 10000>,
        /// Free-form object; null clears it.
        #[json = "customFields"]
        pub custom_fields: nullable Object,
        /// Creates or updates the member's access record (subscription). Null or absent:
        /// access is left unchanged and `data.access` is null.
        pub access: block AccessIn,
        /// Records a payment (or updates the one with the same processor intent or session
        /// id). Null or absent: `data.payment` is null.
        pub payment: block PaymentIn,
    }
}

/// The fields of an `access` block that name its plan.
const PLAN_KEYS: [&str; 4] = [
    "planId",
    "processorPriceId",
    "altProcessorPlanId",
    "planName",
];

/// An `access` block must name its plan (sending any of the identifiers, even as `null`,
/// counts; a plan named by none is refused when it is looked up).
fn names_a_plan(input: &mut Input) {
    if !PLAN_KEYS.iter().any(|k| input.has(k)) {
        input.refuse(
            "required",
            "Name the plan with planId, processorPriceId, altProcessorPlanId or planName.",
        );
    }
}

request! {
    /// The `access` block. Name the plan with at least one of `planId`, `processorPriceId`,
    /// `altProcessorPlanId`, `planName`; every one given must match the same plan. The
    /// member's record for `processorSubscriptionId` (else for that plan) is updated, else
    /// one is created.
    #[check = names_a_plan]
    pub struct AccessIn {
        #[json = "planId"]
        pub plan_id: optional Id,
        #[json = "processorPriceId"]
        pub processor_price_id: optional Text<1, 255>,
        #[json = "altProcessorPlanId"]
        pub alt_processor_plan_id: optional Text<1, 255>,
        /// The plan's exact name.
        #[json = "planName"]
        pub plan_name: optional Text<1, 100>,
        /// Default `active` for a new record. Moving to `canceled` sets `canceledAt` (now)
        /// unless it is sent or already set.
        pub status: not_null Enum<AccessStatus>,
        /// Default: the plan's `jobsIncluded` (also when the record moves to another plan).
        #[json = "jobsRemaining"]
        pub jobs_remaining: not_null Int<0, 1_000_000_000>,
        /// The subscription id at the card processor; unique within the organization.
        #[json = "processorSubscriptionId"]
        pub processor_subscription_id: optional Text<1, 255>,
        /// Null clears it.
        #[json = "currentPeriodStart"]
        pub current_period_start: nullable Instant,
        /// Not before `currentPeriodStart`; null clears it.
        #[json = "currentPeriodEnd"]
        pub current_period_end: nullable Instant,
        /// Null clears it.
        #[json = "cancelAt"]
        pub cancel_at: nullable Instant,
        /// Null clears it.
        #[json = "canceledAt"]
        pub canceled_at: nullable Instant,
        /// Free-form object; null stores `{}`.
        pub metadata: nullable Object,
    }
}

request! {
    /// The `payment` block.
    pub struct PaymentIn {
        /// A job of the organization.
        #[json = "jobId"]
        pub job_id: required Id<JobId>,
        /// A plan of the organization; default: the plan of the `access` block.
        #[json = "planId"]
        pub plan_id: optional Id,
        /// Exact decimal, 0 or more, at most 4 digits after the point.
        pub amount: required Cash,
        /// Three letters (ISO 4217); stored and returned upper-case.
        pub currency: required Currency,
        /// Default `succeeded` for a new payment.
        pub status: not_null Enum<PaymentStatus>,
        /// Default `processor` for a new payment.
        #[json = "paymentProvider"]
        pub payment_provider: not_null Enum<PaymentProvider>,
        /// A retried sync with the same value updates the payment instead of adding one.
        #[json = "processorSessionId"]
        pub processor_session_id: optional Text<1, 255>,
        /// A retried sync with the same value updates the payment instead of adding one.
        #[json = "processorPaymentIntentId"]
        pub processor_payment_intent_id: optional Text<1, 255>,
        /// Free-form object; null stores `{}`.
        pub metadata: nullable Object,
    }
}

text_enum!(
    /// What `POST /members/access` does to a member's access record (or, for
    /// `delete_member`, to the member).
    AccessAction {
        Activate = "activate",
        ExpireNow = "expire_now",
        CancelNow = "cancel_now",
        CancelAtPeriodEnd = "cancel_at_period_end",
        Reactivate = "reactivate",
        MarkPastDue = "mark_past_due",
        DeleteMember = "delete_member",
    }
);

/// An access action names its member by `email` or `userId` (or both, naming one member).
fn names_a_member(input: &mut Input) {
    if !input.has("email") && !input.has("userId") {
        input.refuse("required", "Name the member with email or userId.");
    }
}

request! {
    /// Body of `POST /members/access`. The member is named by `userId` or `email` (both:
    /// they must name the same member). The record acted on is the member's record for
    /// `processorSubscriptionId` when sent, else its latest record of `planId` when sent,
    /// else its latest record.
    #[check = names_a_member]
    pub struct AccessActionIn {
        /// The member's address, matched as sync matches it.
        pub email: optional Email,
        /// The member's id.
        #[json = "userId"]
        pub user_id: optional Id<MemberId>,
        pub action: required Enum<AccessAction>,
        /// Selects the record with this subscription id; `activate` creates a record bound
        /// to it when none exists and `planId` is sent.
        #[json = "processorSubscriptionId"]
        pub processor_subscription_id: optional Text<1, 255>,
        /// Selects the member's latest record of this plan; `activate` creates one when the
        /// member has none.
        #[json = "planId"]
        pub plan_id: optional Id,
        /// When the change took effect (default: now). `expire_now` and `cancel_now` end the
        /// period then and refuse a time more than a minute ahead; `cancel_at_period_end`
        /// cancels then instead of at `currentPeriodEnd`; `activate` starts the period then.
        #[json = "effectiveAt"]
        pub effective_at: optional Instant,
    }
}

/// What an access action wrote.
#[derive(Debug, Clone)]
pub struct Acted {
    /// The member as it is (for `delete_member`: as it was).
    pub member: Member,
    /// The record as it is now; `None` after `delete_member`.
    pub access: Option<Access>,
    /// True when `activate` created the record.
    pub created: bool,
}

/// What a sync wrote.
#[derive(Debug, Clone)]
pub struct Synced {
    pub member: Member,
    /// True when the sync created the member.
    pub created: bool,
    /// The access record written, when an `access` block was sent.
    pub access: Option<Access>,
    /// The payment written, when a `payment` block was sent.
    pub payment: Option<Payment>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip() {
        for v in AccessStatus::ALL {
            let parsed = AccessStatus::parse(v).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), *v);
        }
        for v in PaymentProvider::ALL {
            assert!(serde_json::to_string(v).unwrap().contains(v));
        }
        assert_eq!(AccessStatus::parse("past_due"), Some(AccessStatus::PastDue));
        assert_eq!(AccessStatus::PastDue.as_str(), "past_due");
        assert_eq!(
            serde_json::to_string(&PaymentProvider::AltProcessor).unwrap(),
            "\"alt_processor\""
        );
    }
}

query! {
    /// Query of `GET /members`.
    pub struct MemberListQuery {
        /// Members whose email address or name contains these characters, ignoring case
        /// (of ASCII letters on SQLite, of every letter on PostgreSQL).
        pub search: QText<200> = optional,
        /// Only members of this role.
        pub role: QEnum<Role> = optional,
        /// Only members with this approval status.
        #[param = "approvalStatus"]
        pub approval_status: QEnum<ApprovalStatus> = optional,
        /// Page number, from 1.
        pub page: QInt<1, 1_000_000> = default(1),
        /// Members per page, 1 to 100.
        pub per_page: QInt<1, 100> = default(20),
    }
}

/// A page of members, newest first, and how many the list matches.
#[derive(Debug, Clone)]
pub struct MemberPage {
    pub rows: Vec<Member>,
    pub total: i64,
}

/// A member with its access records and payments.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberRecord {
    pub member: Member,
    /// The member's access (subscription) records, oldest first.
    pub subscriptions: Vec<Access>,
    /// The member's payments, oldest first.
    pub payments: Vec<Payment>,
    /// True while any access record is `active` or `trialing`, or `canceled` with
    /// `currentPeriodEnd` still in the future.
    pub has_valid_paywall_subscription: bool,
}

/// Whether `access` still opens the paywall at `now`.
pub fn opens_paywall(access: &Access, now: Ts) -> bool {
    match access.status {
        AccessStatus::Active | AccessStatus::Trialing => true,
        AccessStatus::Canceled => access.current_period_end.is_some_and(|end| end > now),
        AccessStatus::PastDue | AccessStatus::Expired => false,
    }
}
