//! `POST /members/sync`: create or update a member, with an optional access (subscription)
//! block and an optional payment block, all in one transaction.

use crate::http::input::Getters;
use axum::{Json, extract::State, http::StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Auth, JsonBody,
    input::{Field, Input},
};
use crate::{
    app::AppState,
    db::{
        Ts,
        access::{Access, AccessSync},
        billing::{AccessStatus, ApprovalStatus, Money, PaymentProvider, PaymentStatus, Role},
        members::{self, Member, MemberSync, SyncError},
        payments::{Payment, PaymentSync},
        plans::PlanRef,
    },
    error::{ApiError, ApiResult},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sync_member))
}

/// Body of `POST /members/sync`. Fields sent replace stored values; fields omitted keep them.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberSyncIn {
    /// Matched case-insensitively within the organization.
    #[schema(format = Email, max_length = 254)]
    pub email: String,
    /// The member's id. When it names a member of the organization, that member is
    /// updated (its email may change); otherwise a new member gets this id.
    #[schema(nullable = false)]
    pub user_id: Option<Uuid>,
    /// 1 to 255 characters; default: the part of the email before the at-sign.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub name: Option<String>,
    /// Default `jobseeker`.
    #[schema(nullable = false)]
    pub role: Option<Role>,
    /// Default `approved`.
    #[schema(nullable = false)]
    pub approval_status: Option<ApprovalStatus>,
    /// Absolute http(s) URL; null clears it.
    #[schema(max_length = 2048)]
    pub profile_picture: Option<String>,
    /// At most 10,000 characters; null clears it.
    #[schema(max_length = 10000)]
    pub description: Option<String>,
    /// Free-form object; null clears it.
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<Map<String, Value>>,
    /// Creates or updates the member's access record (subscription). Null or absent:
    /// access is left unchanged and `data.access` is null.
    pub access: Option<AccessIn>,
    /// Records a payment (or updates the one with the same processor intent or session
    /// id). Null or absent: `data.payment` is null.
    pub payment: Option<PaymentIn>,
}

/// The `access` block. Name the plan with at least one of `planId`, `processorPriceId`,
/// `altProcessorPlanId`, `planName`; every one given must match the same plan. The member's
/// record for `processorSubscriptionId` (else for that plan) is updated, else one is created.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessIn {
    #[schema(nullable = false)]
    pub plan_id: Option<Uuid>,
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub processor_price_id: Option<String>,
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub alt_processor_plan_id: Option<String>,
    /// The plan's exact name.
    #[schema(nullable = false, min_length = 1, max_length = 100)]
    pub plan_name: Option<String>,
    /// Default `active` for a new record. Moving to `canceled` sets `canceledAt` (now)
    /// unless it is sent or already set.
    #[schema(nullable = false)]
    pub status: Option<AccessStatus>,
    /// The subscription id at the card processor; unique within the organization.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub processor_subscription_id: Option<String>,
    pub current_period_start: Option<Ts>,
    /// Not before `currentPeriodStart`.
    pub current_period_end: Option<Ts>,
    pub cancel_at: Option<Ts>,
    pub canceled_at: Option<Ts>,
    /// Default: the plan's `jobsIncluded` (also when the record moves to another plan).
    #[schema(nullable = false, minimum = 0, maximum = 1000000000)]
    pub jobs_remaining: Option<i64>,
    /// Free-form object; null stores `{}`.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
}

/// The `payment` block.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PaymentIn {
    /// A job of the organization.
    pub job_id: Uuid,
    /// A plan of the organization; default: the plan of the `access` block.
    #[schema(nullable = false)]
    pub plan_id: Option<Uuid>,
    /// Exact decimal, 0 or more, at most 4 digits after the point.
    pub amount: Money,
    /// Three letters (ISO 4217); stored and returned upper-case.
    #[schema(pattern = "^[A-Za-z]{3}$")]
    pub currency: String,
    /// Default `succeeded` for a new payment.
    #[schema(nullable = false)]
    pub status: Option<PaymentStatus>,
    /// Default `processor` for a new payment.
    #[schema(nullable = false)]
    pub payment_provider: Option<PaymentProvider>,
    /// A retried sync with the same value updates the payment instead of adding one.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub processor_session_id: Option<String>,
    /// A retried sync with the same value updates the payment instead of adding one.
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub processor_payment_intent_id: Option<String>,
    /// Free-form object; null stores `{}`.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
}

#[derive(Serialize, ToSchema)]
pub struct MemberSyncOut {
    pub data: MemberSyncData,
}

#[derive(Serialize, ToSchema)]
pub struct MemberSyncData {
    pub member: Member,
    /// True when this request created the member.
    pub created: bool,
    /// The access record written, or null when no `access` block was sent.
    #[schema(required = true)]
    pub access: Option<Access>,
    /// The payment written, or null when no `payment` block was sent.
    #[schema(required = true)]
    pub payment: Option<Payment>,
}

/// Create or update a member, optionally with an access (subscription) and a payment.
///
/// The member is found by `userId` when given and known (its email may then change; an
/// email already owned by another member is `409 conflict`), else by email
/// (case-insensitive; found with a different `userId` is `409 conflict`), else created
/// (`201`, with `userId` as its id when given). Member, access, payment and their events
/// (`user.created`, `subscription.created`, `subscription.canceled`, `payment.received`)
/// are written together or not at all.
#[utoipa::path(post, path = "/members/sync", tag = "members", request_body = MemberSyncIn,
    responses(
        (status = 200, description = "An existing member was updated.", body = MemberSyncOut),
        (status = 201, description = "The member was created.", body = MemberSyncOut),
    ))]
async fn sync_member(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<MemberSyncOut>)> {
    auth.require("members:write")?;
    let req = parse_sync(&mut input);
    input.finish()?;
    let Some(req) = req else {
        return Err(ApiError::internal(&"sync input incomplete without errors"));
    };
    let out = members::sync(&app.db, auth.org_id, &req)
        .await
        .map_err(sync_error)?;
    let status = if out.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(MemberSyncOut {
            data: MemberSyncData {
                member: out.member,
                created: out.created,
                access: out.access,
                payment: out.payment,
            },
        }),
    ))
}

fn sync_error(e: SyncError) -> ApiError {
    match e {
        SyncError::Conflict { message, field } => {
            ApiError::conflict(message, json!({ "field": field }))
        }
        SyncError::Invalid {
            field,
            code,
            message,
        } => ApiError::field(field, code, message),
        SyncError::Db(e) => e.into(),
    }
}

/// A field that may be omitted but not sent as null.
fn not_null<T>(input: &mut Input, name: &str, f: Field<T>) -> Option<T> {
    match f {
        Field::Null => {
            input.error(
                name,
                "invalid_type",
                "Must not be null; omit the field instead.",
            );
            None
        }
        f => f.opt(),
    }
}

/// A string that may be omitted or null (treated alike).
fn optional_string(input: &mut Input, name: &str, max: usize) -> Option<String> {
    input.string(name, false, 1, max).opt()
}

/// Reads a sync body; `None` when a required part is missing (the errors are recorded).
fn parse_sync(input: &mut Input) -> Option<MemberSync> {
    let email = input.email("email", true).opt();
    let user_id = input.uuid("userId", false).opt();
    let name = input.string("name", false, 1, 255);
    let name = not_null(input, "name", name).map(|s| s.trim().to_string());
    if name.as_deref() == Some("") {
        input.error("name", "too_short", "Must not be blank.");
    }
    let role = input.one_of("role", false, Role::ALL);
    let role = not_null(input, "role", role).and_then(|s| Role::parse(&s));
    let approval = input.one_of("approvalStatus", false, ApprovalStatus::ALL);
    let approval_status =
        not_null(input, "approvalStatus", approval).and_then(|s| ApprovalStatus::parse(&s));
    let profile_picture = input.url("profilePicture", false).patch();
    let description = input.string("description", false, 0, 10_000).patch();
    let custom_fields = input
        .object("customFields", false)
        .patch()
        .map(|o| o.map(Value::Object));
    let access = match input.nested_input("access", false) {
        Field::Value(mut a) => {
            let sent = a.keys();
            let names_plan = PLAN_KEYS.iter().any(|k| sent.iter().any(|s| s == k));
            let parsed = parse_access(&mut a);
            if !names_plan {
                input.error(
                    "access",
                    "required",
                    "Name the plan with planId, processorPriceId, altProcessorPlanId or planName.",
                );
            }
            input.absorb(a);
            Some(parsed)
        }
        _ => None,
    };
    let payment = match input.nested_input("payment", false) {
        Field::Value(mut p) => {
            let parsed = parse_payment(&mut p);
            input.absorb(p);
            parsed
        }
        _ => None,
    };
    Some(MemberSync {
        email: email?,
        user_id,
        name,
        role,
        approval_status,
        profile_picture,
        description,
        custom_fields,
        access,
        payment,
    })
}

/// The fields of an `access` block that name its plan.
const PLAN_KEYS: [&str; 4] = [
    "planId",
    "processorPriceId",
    "altProcessorPlanId",
    "planName",
];

fn parse_access(a: &mut Input) -> AccessSync {
    let plan = PlanRef {
        id: a.uuid("planId", false).opt(),
        processor_price_id: optional_string(a, "processorPriceId", 255),
        alt_processor_plan_id: optional_string(a, "altProcessorPlanId", 255),
        name: optional_string(a, "planName", 100),
    };
    let status = a.one_of("status", false, AccessStatus::ALL);
    let status = not_null(a, "status", status).and_then(|s| AccessStatus::parse(&s));
    let jobs_remaining = a.integer("jobsRemaining", false, 0, 1_000_000_000);
    let jobs_remaining = not_null(a, "jobsRemaining", jobs_remaining);
    AccessSync {
        plan,
        status,
        processor_subscription_id: optional_string(a, "processorSubscriptionId", 255),
        current_period_start: a.timestamp("currentPeriodStart", false).patch(),
        current_period_end: a.timestamp("currentPeriodEnd", false).patch(),
        cancel_at: a.timestamp("cancelAt", false).patch(),
        canceled_at: a.timestamp("canceledAt", false).patch(),
        jobs_remaining,
        metadata: a
            .object("metadata", false)
            .patch()
            .map(Option::unwrap_or_default),
    }
}

/// An exact decimal amount from a JSON number (its digits as sent, never a float).
pub fn money_field(input: &mut Input, name: &str) -> Option<Money> {
    input
        .field_with(name, true, |v| match v {
            Value::Number(n) => Money::parse(&n.to_string()).map_err(|(c, m)| (c, m.to_string())),
            _ => Err(("invalid_type", "Must be a number.".to_string())),
        })
        .opt()
}

/// Three letters, returned upper-case.
pub fn currency_field(input: &mut Input, name: &str) -> Option<String> {
    input
        .field_with(name, true, |v| match v.as_str() {
            Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_alphabetic()) => {
                Ok(s.to_ascii_uppercase())
            }
            Some(_) => Err((
                "invalid_format",
                "Must be a three-letter currency code (ISO 4217).".to_string(),
            )),
            None => Err(("invalid_type", "Must be a string.".to_string())),
        })
        .opt()
}

fn parse_payment(p: &mut Input) -> Option<PaymentSync> {
    let job_id = p.uuid("jobId", true).opt();
    let plan_id = p.uuid("planId", false).opt();
    let amount = money_field(p, "amount");
    let currency = currency_field(p, "currency");
    let status = p.one_of("status", false, PaymentStatus::ALL);
    let status = not_null(p, "status", status).and_then(|s| PaymentStatus::parse(&s));
    let provider = p.one_of("paymentProvider", false, PaymentProvider::ALL);
    let payment_provider =
        not_null(p, "paymentProvider", provider).and_then(|s| PaymentProvider::parse(&s));
    let processor_session_id = optional_string(p, "processorSessionId", 255);
    let processor_payment_intent_id = optional_string(p, "processorPaymentIntentId", 255);
    let metadata = p
        .object("metadata", false)
        .patch()
        .map(Option::unwrap_or_default);
    Some(PaymentSync {
        job_id: job_id?,
        plan_id,
        amount: amount?,
        currency: currency?,
        status,
        payment_provider,
        processor_session_id,
        processor_payment_intent_id,
        metadata,
    })
}
