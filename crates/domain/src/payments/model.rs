//! Prices, orders and the card processor's checkout sessions as the board sees them.

use serde::Serialize;
use uuid::Uuid;

use crate::{
    JobId, MemberId, OrgId, Ts,
    kind::{Currency, Int, Trimmed},
    members::Member,
    members::PaymentStatus,
    plans::Plan,
    query,
    query::{QDate, QEnum, QId, QInt, QText},
    request,
};

mod sets {
    use crate::text_enum;

    text_enum!(
        /// Where an order is: `draft` (the job saved, no checkout yet), `awaiting_payment`
        /// (a checkout session is open), `paid` (the processor says so, not yet applied),
        /// `fulfilled` (the payment recorded and the job published, once), `expired` (the
        /// session ended unpaid; the draft stays and can be resumed), `refunded`.
        OrderStatus {
            Draft = "draft",
            AwaitingPayment = "awaiting_payment",
            Paid = "paid",
            Fulfilled = "fulfilled",
            Expired = "expired",
            Refunded = "refunded",
        }
    );
}

pub use crate::orgs::PaidPosts;
pub use sets::OrderStatus;

/// A price of a post.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Price {
    pub id: Uuid,
    pub org_id: OrgId,
    pub name: String,
    /// In minor units of `currency` (cents for EUR and USD).
    pub amount: i64,
    /// ISO 4217, upper case.
    pub currency: String,
    /// How many days a job bought at this price is listed.
    pub days: i64,
    /// How many days a job bought (or upgraded) at this price is featured; none: not.
    pub featured_days: Option<i64>,
    pub archived_at: Option<Ts>,
    pub created_at: Ts,
}

impl Price {
    /// How a post form offers it: `Standard: 49.00 EUR, listed for 30 days`.
    pub fn label(&self) -> String {
        format!(
            "{}: {}, listed for {} days",
            self.name,
            self.display(),
            self.days
        )
    }

    /// The amount as people read it: `49.00 EUR`.
    pub fn display(&self) -> String {
        amount_text(self.amount, &self.currency)
    }
}

request! {
    /// A new price (the command line and the dashboard).
    pub struct PriceIn {
        pub name: required Trimmed<1, 100>,
        /// In minor units of the currency (4900 is 49.00 EUR).
        pub amount: required Int<1, 100000000>,
        pub currency: required Currency,
        /// How many days a job bought at this price is listed.
        pub days: required Int<1, 365>,
        /// How many days a job bought or upgraded at this price is featured (listed
        /// first); a price with it is offered as the featured upgrade of a live job.
        pub featured_days: optional Int<1, 365>,
    }
}

query! {
    /// Query of `GET /payments`.
    pub struct PaymentListQuery {
        /// Only payments with this status.
        pub status: QEnum<PaymentStatus> = optional,
        /// Only the payments of this member: its id or its email address.
        pub member: QText<320> = optional,
        /// Only the payments for this job.
        pub job_id: QId<JobId> = optional,
        /// Only payments made on or after this day (UTC).
        pub since: QDate = optional,
        /// Page number, from 1.
        pub page: QInt<1, 1_000_000> = default(1),
        /// Payments per page, 1 to 100.
        pub per_page: QInt<1, 100> = default(20),
    }
}

/// An order: of a job at a price (a post, or a featured upgrade), or of a pack of posts
/// (a plan).
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Order {
    pub id: Uuid,
    pub org_id: OrgId,
    /// The job paid for (a post or a featured upgrade); none for a pack.
    pub job_id: Option<JobId>,
    /// The price of a post or an upgrade; none for a pack.
    pub price_id: Option<Uuid>,
    /// The plan of a pack; none otherwise.
    pub plan_id: Option<Uuid>,
    /// The access record a fulfilled pack created.
    pub access_id: Option<Uuid>,
    /// `post`, `feature` ([`KIND_FEATURE`]) or `pack` ([`KIND_PACK`]).
    pub kind: String,
    pub member_id: Option<MemberId>,
    /// Where the resume link goes when the checkout expires (the job's contact address).
    pub email: Option<String>,
    pub status: OrderStatus,
    pub amount: i64,
    pub currency: String,
    pub session_id: Option<String>,
    pub session_url: Option<String>,
    pub created_at: Ts,
    pub updated_at: Ts,
    pub fulfilled_at: Option<Ts>,
}

impl Order {
    /// A new order (`draft`) of job `job_id` at `price`, of `kind` (`post` or `feature`).
    pub fn new(
        price: &Price,
        job_id: JobId,
        kind: &str,
        member_id: Option<MemberId>,
        email: Option<String>,
        now: Ts,
    ) -> Order {
        Order {
            job_id: Some(job_id),
            price_id: Some(price.id),
            ..Order::draft(
                price.org_id,
                kind,
                price.amount,
                &price.currency,
                member_id,
                email,
                now,
            )
        }
    }

    /// A new order (`draft`) of a pack of posts: `plan` for `member`. Its amount is the
    /// plan's until the processor's session says what its price costs.
    pub fn pack(plan: &Plan, member: &Member, now: Ts) -> Order {
        Order {
            plan_id: Some(plan.id),
            ..Order::draft(
                plan.organization_id,
                KIND_PACK,
                plan.price.minor_units(minor_exponent(&plan.currency)),
                &plan.currency,
                Some(member.id),
                Some(member.email.clone()),
                now,
            )
        }
    }

    /// A new order (`draft`) of nothing yet: what [`Order::new`] and [`Order::pack`]
    /// share.
    fn draft(
        org_id: OrgId,
        kind: &str,
        amount: i64,
        currency: &str,
        member_id: Option<MemberId>,
        email: Option<String>,
        now: Ts,
    ) -> Order {
        Order {
            id: Uuid::now_v7(),
            org_id,
            job_id: None,
            price_id: None,
            plan_id: None,
            access_id: None,
            kind: kind.into(),
            member_id,
            email,
            status: OrderStatus::Draft,
            amount,
            currency: currency.to_string(),
            session_id: None,
            session_url: None,
            created_at: now,
            updated_at: now,
            fulfilled_at: None,
        }
    }

    /// The amount as people read it: `49.00 EUR`.
    pub fn display(&self) -> String {
        amount_text(self.amount, &self.currency)
    }
}

/// The kind of an order that features a live job.
pub const KIND_FEATURE: &str = "feature";

/// The kind of an order of a pack of posts.
pub const KIND_PACK: &str = "pack";

/// A checkout session as the processor describes it (the subset the board reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    /// `open`, `complete` or `expired`.
    pub status: String,
    /// `paid`, `unpaid` or `no_payment_required`.
    pub payment_status: String,
    pub amount_total: i64,
    /// Lower case, as the processor writes it.
    pub currency: String,
    /// The order's id.
    pub client_reference_id: Option<String>,
    pub payment_intent: Option<String>,
    /// `metadata[organization_id]`.
    pub organization_id: Option<String>,
    pub url: Option<String>,
}

impl Session {
    /// Reads a session object of the processor's API (or of an event's `data.object`).
    pub fn from_json(v: &serde_json::Value) -> Option<Session> {
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        Some(Session {
            id: s("id")?,
            status: s("status").unwrap_or_default(),
            payment_status: s("payment_status").unwrap_or_default(),
            amount_total: v.get("amount_total").and_then(|x| x.as_i64()).unwrap_or(0),
            currency: s("currency").unwrap_or_default(),
            client_reference_id: s("client_reference_id"),
            // Either the id, or the expanded object.
            payment_intent: s("payment_intent").or_else(|| {
                v.get("payment_intent")
                    .and_then(|p| p.get("id"))
                    .and_then(|x| x.as_str())
                    .map(str::to_string)
            }),
            organization_id: v
                .get("metadata")
                .and_then(|m| m.get("organization_id"))
                .and_then(|x| x.as_str())
                .map(str::to_string),
            url: s("url"),
        })
    }

    pub fn is_paid(&self) -> bool {
        self.payment_status == "paid"
    }
}

/// An amount in minor units of `currency` as people read it: `49.00 EUR`.
pub fn amount_text(minor: i64, currency: &str) -> String {
    format!("{} {currency}", decimal_text(minor, currency))
}

/// An amount in minor units written in the currency's major units: 4900 EUR is
/// `49.00`, 5000 JPY is `5000`, 12345 KWD is `12.345`.
pub fn decimal_text(minor: i64, currency: &str) -> String {
    let exp = minor_exponent(currency);
    if exp == 0 {
        return minor.to_string();
    }
    let unit = 10_i64.pow(exp);
    format!("{}.{:0w$}", minor / unit, minor % unit, w = exp as usize)
}

/// Digits after the decimal point of a currency's amounts (ISO 4217): 0 for currencies
/// without minor units, 3 for the dinars, 2 otherwise.
pub fn minor_exponent(currency: &str) -> u32 {
    match currency.to_ascii_uppercase().as_str() {
        "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX"
        | "UYI" | "VND" | "VUV" | "XAF" | "XOF" | "XPF" => 0,
        "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_their_currency() {
        let mut p = Price {
            id: Uuid::nil(),
            org_id: OrgId(1),
            name: "Standard".into(),
            amount: 4900,
            currency: "EUR".into(),
            days: 30,
            featured_days: None,
            archived_at: None,
            created_at: Ts::from_micros(0),
        };
        assert_eq!(p.display(), "49.00 EUR");
        p.amount = 5;
        assert_eq!(p.display(), "0.05 EUR");
        p.currency = "JPY".into();
        p.amount = 5000;
        assert_eq!(p.display(), "5000 JPY");
        p.currency = "KWD".into();
        p.amount = 12_345;
        assert_eq!(p.display(), "12.345 KWD");
    }
}
