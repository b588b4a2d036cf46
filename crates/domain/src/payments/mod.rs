//! Paid postings (docs/payments.md): the organization's account at the card processor,
//! the prices of a post, and orders, whose state can never drift apart from their job's:
//!
//! - A post at a price stores the job as a `draft` and an order (`draft`); opening the
//!   processor's checkout session moves the order to `awaiting_payment`.
//! - The processor's word that the session is paid ([`fulfil`]: its event, re-read from
//!   its API, or the reconciler's question) fulfils the order **once per session**: in one
//!   transaction the order becomes `fulfilled`, the payment is recorded with
//!   `payment.received`, and the job moves to `pending` or `active` (the organization's
//!   `paid_posts`) listed for the price's days. Duplicate, late and out-of-order events
//!   find the order fulfilled and change nothing.
//! - A session that expires unpaid ([`expired`]) keeps the draft and mails the poster a
//!   signed link that opens a new session for the same order.
//! - A refund ([`refunded`]) marks the payment and the order `refunded` and, where the
//!   organization says so, expires the job.
//!
//! - A pack of posts (a plan with `jobsIncluded` and the processor's price) is an order
//!   of the plan and the member, through the same checkout; fulfilled, it gives the member
//!   an access record with the plan's posts, which a refund takes back.
//!
//! No card data reaches the server: the processor's hosted page takes it.

pub mod credits;
pub mod model;
mod settle;
pub mod signature;
mod store;

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use uuid::Uuid;

pub use model::{
    KIND_FEATURE, KIND_PACK, Order, OrderStatus, PaidPosts, PaymentListQuery, Price, PriceIn,
    Session, minor_exponent,
};
pub use settle::{Settled, expired, fulfil, refunded};

use crate::{
    Error, Input, Money, OrgId, Result, Ts,
    db::{Db, secrets},
    jobs::{self, Job, JobStatus},
    members::{self, Member, Payment},
    orgs::Org,
    plans::{self, Plan, PlanInterval},
};

/// The processor's own API base, when an account names none.
pub const DEFAULT_API_URL: &str = "https://api.stripe.com";

/// An organization's account at the processor. Its secrets are never shown or logged.
#[derive(Clone)]
pub struct Account {
    pub api_url: String,
    pub secret_key: String,
    pub webhook_secret: String,
}

impl Account {
    /// The origin of the processor's hosted checkout pages, where payers are sent: the
    /// processor's own for its own API, else the API's origin (a stand-in serves both).
    pub fn checkout_origin(&self) -> String {
        if self.api_url == DEFAULT_API_URL {
            return "https://checkout.stripe.com".into();
        }
        match url::Url::parse(&self.api_url) {
            Ok(u) => u.origin().ascii_serialization(),
            Err(_) => String::new(),
        }
    }
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("api_url", &self.api_url)
            .finish_non_exhaustive()
    }
}

/// The account of `org_id`, if it has one (without one the board is free).
pub async fn account(db: &Db, org_id: OrgId) -> Result<Option<Account>> {
    Ok(store::account(db, org_id)
        .await?
        .map(|(api_url, secret_key, webhook_secret)| Account {
            api_url,
            secret_key,
            webhook_secret,
        }))
}

/// Sets the account of `org_id` (the command line).
pub async fn set_account(db: &Db, org_id: OrgId, account: &Account) -> Result<()> {
    let url = account.api_url.trim().trim_end_matches('/');
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(Error::field(
            "payments_api_url",
            "invalid_format",
            "Must be an http(s) URL, such as https://api.stripe.com.",
        ));
    }
    for (field, v) in [
        ("payments_secret_key", &account.secret_key),
        ("payments_webhook_secret", &account.webhook_secret),
    ] {
        if v.trim().is_empty() || v.len() > 500 {
            return Err(Error::field(
                field,
                "required",
                "Must be 1 to 500 characters.",
            ));
        }
    }
    store::set_account(
        db,
        org_id,
        url,
        account.secret_key.trim(),
        account.webhook_secret.trim(),
        db.now(),
    )
    .await?;
    tracing::info!(org_id = org_id.0, "payment account set");
    Ok(())
}

/// Creates a price of a post from `body` ([`PriceIn`]).
pub async fn create_price(db: &Db, org_id: OrgId, body: Input) -> Result<Price> {
    let p = PriceIn::parse(body)?;
    let price = Price {
        id: Uuid::now_v7(),
        org_id,
        name: p.name,
        amount: p.amount,
        currency: p.currency,
        days: p.days,
        featured_days: p.featured_days,
        archived_at: None,
        created_at: db.now(),
    };
    store::insert_price(db, &price).await?;
    Ok(price)
}

/// The prices a post may be bought at (not archived), oldest first.
pub async fn prices(db: &Db, org_id: OrgId) -> Result<Vec<Price>> {
    Ok(store::prices(db, org_id, false).await?)
}

/// Every price of the organization, archived ones too.
pub async fn all_prices(db: &Db, org_id: OrgId) -> Result<Vec<Price>> {
    Ok(store::prices(db, org_id, true).await?)
}

/// Archives price `id` (orders made at it keep it).
pub async fn archive_price(db: &Db, id: Uuid) -> Result<Price> {
    store::archive_price(db, id, db.now())
        .await?
        .ok_or(Error::NotFound("price"))
}

/// A page of the organization's payments, newest first, as `q` filters them, and how
/// many match (`GET /api/payments`).
pub async fn list(db: &Db, org_id: OrgId, q: &PaymentListQuery) -> Result<(Vec<Payment>, i64)> {
    let member = match q.member.as_deref() {
        Some(named) => match members::id_of(db, org_id, named).await? {
            Some(id) => Some(id),
            None => return Ok((Vec::new(), 0)),
        },
        None => None,
    };
    Ok(store::payments_page(db, org_id, q, member).await?)
}

/// The sum of one month's succeeded payments in one currency.
#[derive(Debug, Clone, PartialEq)]
pub struct MonthTotal {
    /// `YYYY-MM` (UTC).
    pub month: String,
    pub currency: String,
    pub total: Money,
    pub count: i64,
}

/// The succeeded payments of the last `months` months (this one included), summed per
/// month and currency, newest month first; exact (decimal) sums.
pub async fn month_totals(db: &Db, org_id: OrgId, months: u32) -> Result<Vec<MonthTotal>> {
    use chrono::{Datelike, TimeZone};
    let now = chrono::Utc
        .timestamp_micros(db.now().micros())
        .single()
        .unwrap_or_default();
    let mut first = now.date_naive().with_day(1).unwrap_or_default();
    for _ in 1..months.max(1) {
        first = (first - chrono::Days::new(1)).with_day(1).unwrap_or(first);
    }
    let since = Ts::from_micros(
        first
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_micros())
            .unwrap_or_default(),
    );
    let mut totals: Vec<MonthTotal> = Vec::new();
    for (at, currency, amount) in store::succeeded_since(db, org_id, since).await? {
        let month = chrono::Utc
            .timestamp_micros(at.micros())
            .single()
            .map(|t| t.format("%Y-%m").to_string())
            .unwrap_or_default();
        match totals
            .iter_mut()
            .find(|t| t.month == month && t.currency == currency)
        {
            Some(t) => {
                t.total = Money(t.total.0 + amount.0);
                t.count += 1;
            }
            None => totals.push(MonthTotal {
                month,
                currency,
                total: amount,
                count: 1,
            }),
        }
    }
    totals.sort_by(|a, b| b.month.cmp(&a.month).then(a.currency.cmp(&b.currency)));
    Ok(totals)
}

/// What a board sells: the account its payments go through, and its active prices.
#[derive(Debug, Clone)]
pub struct Offer {
    pub account: Account,
    /// Oldest first; never empty.
    pub prices: Vec<Price>,
}

impl Offer {
    /// The prices of a featured upgrade (those with featured days), oldest first.
    pub fn featured(&self) -> impl Iterator<Item = &Price> {
        self.prices.iter().filter(|p| p.featured_days.is_some())
    }
}

/// What `org_id`'s board sells; `None` where it sells nothing (no account, or no active
/// price): posting is then free.
pub async fn offer(db: &Db, org_id: OrgId) -> Result<Option<Offer>> {
    let Some(account) = account(db, org_id).await? else {
        return Ok(None);
    };
    let prices = prices(db, org_id).await?;
    Ok((!prices.is_empty()).then_some(Offer { account, prices }))
}

/// A price's field on a post form: none chosen, or none of the organization's.
fn no_price(code: &'static str) -> Error {
    Error::field("price_id", code, "Choose one of the prices shown.")
}

/// Starts a post at price `price_id`: the job of `body` stored as a `draft` (owned by
/// `member` when one posts), and its order. The caller opens the checkout session.
pub async fn start_post(
    db: &Db,
    org: &Org,
    price_id: Option<Uuid>,
    mut body: Input,
    member: Option<&Member>,
) -> Result<(Job, Order, Price)> {
    let price_id = price_id.ok_or_else(|| no_price("required"))?;
    let price = match store::price(db, Some(org.id), price_id).await? {
        Some(p) if p.archived_at.is_none() => p,
        _ => return Err(no_price("not_found")),
    };
    body.set("status", json!(JobStatus::Draft));
    if let Some(m) = member {
        body.set("owner_user_id", json!(m.id));
    }
    let job = jobs::create(db, org.id, body).await?;
    let order = Order::new(
        &price,
        job.id,
        "post",
        member.map(|m| m.id),
        job.contact_email
            .clone()
            .or_else(|| member.map(|m| m.email.clone())),
        db.now(),
    );
    store::insert_order(db, &order).await?;
    tracing::info!(org_id = org.id.0, order_id = %order.id, job_id = %job.id, "paid post started");
    Ok((job, order, price))
}

/// Starts the featured upgrade of live job `job_id` of `member` at price `price_id` (one
/// with featured days): its order. The caller opens the checkout session.
pub async fn start_feature(
    db: &Db,
    org: &Org,
    member: &Member,
    job_id: crate::JobId,
    price_id: Uuid,
) -> Result<(Job, Order, Price)> {
    let job = crate::accounts::posts::owned(db, org.id, member, job_id).await?;
    if job.status != JobStatus::Active {
        return Err(Error::conflict(
            "Only a job that is live on the board can be featured.",
            json!({ "reason": "not_active" }),
        ));
    }
    let price = match store::price(db, Some(org.id), price_id).await? {
        Some(p) if p.archived_at.is_none() && p.featured_days.is_some() => p,
        _ => {
            return Err(Error::field(
                "price_id",
                "not_found",
                "Choose one of the featured upgrades shown.",
            ));
        }
    };
    let order = Order::new(
        &price,
        job.id,
        KIND_FEATURE,
        Some(member.id),
        Some(member.email.clone()),
        db.now(),
    );
    store::insert_order(db, &order).await?;
    Ok((job, order, price))
}

/// The packs of posts a member can buy on the board: the organization's plans that are
/// paid once (`one_time`), include job posts and name their price at the processor.
pub async fn packs(db: &Db, org_id: OrgId) -> Result<Vec<Plan>> {
    Ok(plans::list(db, org_id)
        .await?
        .into_iter()
        .filter(|p| {
            p.interval == PlanInterval::OneTime
                && p.jobs_included > 0
                && p.processor_price_id.is_some()
        })
        .collect())
}

/// Starts `member`'s purchase of the pack `plan_id` (one of [`packs`]): its order. Only
/// a member who may post buys posts. The caller opens the checkout session.
pub async fn start_pack(
    db: &Db,
    org: &Org,
    member: &Member,
    plan_id: Uuid,
) -> Result<(Order, Plan)> {
    crate::accounts::may_post(member)
        .map_err(|message| Error::conflict(message, json!({ "reason": "member_may_not_post" })))?;
    let Some(plan) = packs(db, org.id)
        .await?
        .into_iter()
        .find(|p| p.id == plan_id)
    else {
        return Err(Error::field(
            "plan_id",
            "not_found",
            "Choose one of the packs shown.",
        ));
    };
    let order = Order::pack(&plan, member, db.now());
    store::insert_order(db, &order).await?;
    tracing::info!(org_id = org.id.0, order_id = %order.id, plan_id = %plan.id, "pack purchase started");
    Ok((order, plan))
}

/// Records the session opened for `order` (`awaiting_payment`). A pack's amount is what
/// the processor's price charges, so its order takes the session's.
pub async fn session_opened(db: &Db, order: &Order, session: &Session) -> Result<Order> {
    let charged =
        (order.kind == KIND_PACK).then_some((session.amount_total, session.currency.as_str()));
    store::set_session(
        db,
        order.org_id,
        order.id,
        &session.id,
        session.url.as_deref(),
        charged,
        db.now(),
    )
    .await?
    .ok_or_else(|| {
        Error::conflict(
            "This order is already paid or refunded.",
            json!({ "reason": "order_settled" }),
        )
    })
}

/// Order `id` of `org_id`.
pub async fn order(db: &Db, org_id: OrgId, id: Uuid) -> Result<Order> {
    store::order(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("order"))
}

/// The order whose latest session is `session_id`, if any.
pub async fn order_of_session(db: &Db, org_id: OrgId, session_id: &str) -> Result<Option<Order>> {
    Ok(store::order_of_session(db, org_id, session_id).await?)
}

/// The price of order `o` (a post or an upgrade).
pub async fn price_of(db: &Db, o: &Order) -> Result<Price> {
    let Some(id) = o.price_id else {
        return Err(Error::NotFound("price"));
    };
    store::price(db, Some(o.org_id), id)
        .await?
        .ok_or(Error::NotFound("price"))
}

/// The plan of order `o` (a pack).
pub async fn plan_of(db: &Db, o: &Order) -> Result<Plan> {
    let Some(id) = o.plan_id else {
        return Err(Error::NotFound("plan"));
    };
    plans::list(db, o.org_id)
        .await?
        .into_iter()
        .find(|p| p.id == id)
        .ok_or(Error::NotFound("plan"))
}

/// The orders still awaiting payment whose session opened before `before` (the
/// reconciler asks the processor about them).
pub async fn open_before(db: &Db, before: Ts, limit: i64) -> Result<Vec<Order>> {
    Ok(store::open_before(db, before, limit).await?)
}

async fn link_key(db: &Db) -> Result<Vec<u8>> {
    match secrets::get(db, "order_links").await? {
        Some(k) => Ok(k),
        None => Ok(secrets::get_or_create(db, "order_links").await?),
    }
}

/// The path of the signed link that resumes order `o` (a new checkout for its draft).
pub async fn resume_path(db: &Db, o: &Order) -> Result<String> {
    let key = link_key(db).await?;
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(o.id.as_bytes());
    let tag =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&mac.finalize().into_bytes()[..16]);
    Ok(format!("/post-a-job/resume/{}{tag}", o.id.simple()))
}

/// The order a resume link's token names, when its signature holds and the order is
/// still unpaid.
pub async fn order_of_resume(db: &Db, org_id: OrgId, token: &str) -> Result<Option<Order>> {
    let (Some(id), Some(tag)) = (token.get(..32), token.get(32..)) else {
        return Ok(None);
    };
    let Ok(id) = Uuid::parse_str(id) else {
        return Ok(None);
    };
    let Ok(tag) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(tag) else {
        return Ok(None);
    };
    let key = link_key(db).await?;
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(id.as_bytes());
    if tag.len() != 16 || mac.verify_truncated_left(&tag).is_err() {
        return Ok(None);
    }
    Ok(store::order(db, org_id, id).await?.filter(|o| {
        matches!(
            o.status,
            OrderStatus::Draft | OrderStatus::AwaitingPayment | OrderStatus::Expired
        )
    }))
}
