//! What the processor's word about a session does to its order (see the module's
//! rules): fulfilled once when paid, kept as a draft when expired, and refunded.

use serde_json::json;
use uuid::Uuid;

use super::{
    KIND_FEATURE, KIND_PACK, Order, OrderStatus, PaidPosts, Price, Session, model, plan_of,
    price_of, resume_path, store,
};
use crate::{
    Error, JsonDoc, Money, Result, Ts,
    db::Db,
    jobs::{self, JobStatus},
    mail::{Message, store::enqueue},
    members::{self, Payment, PaymentProvider, PaymentStatus},
    orgs::Org,
    plans::Plan,
};

/// What a word from the processor about a session did.
#[derive(Debug, PartialEq)]
pub enum Settled {
    /// The order was fulfilled now: the payment recorded, the job published.
    Fulfilled(Box<Order>),
    /// Nothing left to do: fulfilled (or refunded) before.
    Already,
    /// The session is not paid (yet).
    NotPaid,
    /// No order of this organization has this session, or it does not match it.
    Unknown,
}

/// Fulfils the order of `session` once, when the processor says it is paid (see the
/// module's rules).
pub async fn fulfil(db: &Db, org: &Org, session: &Session) -> Result<Settled> {
    let Some(order) = store::order_of_session(db, org.id, &session.id).await? else {
        return Ok(Settled::Unknown);
    };
    let ours = session.organization_id.as_deref() == Some(org.id.0.to_string().as_str())
        && session.client_reference_id.as_deref() == Some(order.id.to_string().as_str());
    if !ours
        || session.amount_total != order.amount
        || !session.currency.eq_ignore_ascii_case(&order.currency)
    {
        tracing::warn!(org_id = org.id.0, order_id = %order.id, "a session that does not match its order was not fulfilled");
        return Ok(Settled::Unknown);
    }
    if !session.is_paid() {
        return Ok(Settled::NotPaid);
    }
    let item = match order.kind.as_str() {
        KIND_PACK => Item::Pack(plan_of(db, &order).await?),
        _ => Item::Job(price_of(db, &order).await?),
    };
    let mut tx = db.begin().await?;
    let now = tx.now();
    let Some(order) = store::move_order(
        &mut tx,
        org.id,
        &session.id,
        &[
            OrderStatus::Draft,
            OrderStatus::AwaitingPayment,
            OrderStatus::Paid,
            OrderStatus::Expired,
        ],
        OrderStatus::Fulfilled,
    )
    .await?
    else {
        tx.commit().await?;
        return Ok(Settled::Already);
    };
    let payment = Payment {
        id: Uuid::now_v7(),
        organization_id: org.id,
        user_id: order.member_id,
        job_id: order.job_id,
        plan_id: order.plan_id,
        amount: money(order.amount, &order.currency)?,
        currency: order.currency.to_ascii_uppercase(),
        status: PaymentStatus::Succeeded,
        payment_provider: PaymentProvider::Processor,
        processor_session_id: Some(session.id.clone()),
        processor_payment_intent_id: session.payment_intent.clone(),
        metadata: JsonDoc::object(
            json!({ "order_id": order.id, "price_id": order.price_id, "plan_id": order.plan_id })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
        created_at: now,
        updated_at: now,
    };
    // The order moved in this transaction names its member as it is now: a member
    // deleted since is no longer named (deletion clears it), and has no posts to get.
    match (&item, order.member_id) {
        (Item::Pack(plan), Some(member)) => {
            let access = members::grant_pack_in(&mut tx, org.id, member, plan, order.id).await?;
            store::set_order_access(&mut tx, order.id, access.id).await?;
        }
        (Item::Pack(_), None) => {
            tracing::warn!(org_id = org.id.0, order_id = %order.id, "a pack was paid for a member deleted since");
        }
        (Item::Job(price), _) => {
            if let Some(job_id) = order.job_id {
                let paid = paid_job(org, &order, price, now);
                jobs::set_paid_in(&mut tx, db.outgoing(), org.id, job_id, paid).await?;
            }
        }
    }
    members::record_payment_in(&mut tx, &payment).await?;
    tx.commit().await?;
    tracing::info!(org_id = org.id.0, order_id = %order.id, kind = %order.kind, "order fulfilled");
    Ok(Settled::Fulfilled(Box::new(order)))
}

/// What an order buys.
enum Item {
    /// A post or a featured upgrade of a job, at a price.
    Job(Price),
    /// A pack of posts.
    Pack(Plan),
}

/// What a paid post (or upgrade) makes of its job.
fn paid_job(org: &Org, order: &Order, price: &Price, now: Ts) -> jobs::Paid {
    let days = |n: i64| std::time::Duration::from_secs(u64::try_from(n).unwrap_or(1) * 86_400);
    let featured_until = price.featured_days.map(|n| now.later_by(days(n)));
    if order.kind == KIND_FEATURE {
        jobs::Paid {
            featured_until,
            ..jobs::Paid::default()
        }
    } else {
        jobs::Paid {
            status: Some(match org.paid_posts {
                PaidPosts::Pending => JobStatus::Pending,
                PaidPosts::Active => JobStatus::Active,
            }),
            expires_at: Some(now.later_by(days(price.days))),
            featured_until,
        }
    }
}

/// An amount in minor units as the payment records it.
fn money(minor: i64, currency: &str) -> Result<Money> {
    Money::parse(&model::decimal_text(minor, currency))
        .map_err(|_| Error::Internal("an order's amount is out of range"))
}

/// The session of an order expired unpaid: the order becomes `expired` (the draft job
/// stays) and the poster is mailed the link that resumes it. False when the order had
/// moved on already.
pub async fn expired(db: &Db, org: &Org, session: &Session) -> Result<bool> {
    let mut tx = db.begin().await?;
    let Some(order) = store::move_order(
        &mut tx,
        org.id,
        &session.id,
        &[OrderStatus::AwaitingPayment],
        OrderStatus::Expired,
    )
    .await?
    else {
        tx.commit().await?;
        return Ok(false);
    };
    if let (Some(out), Some(to)) = (db.outgoing(), order.email.as_deref()) {
        let link = out.board_url(org.domain.as_deref(), &resume_path(db, &order).await?);
        let text = if order.kind == KIND_PACK {
            format!(
                "The pack of job posts you chose at {} was not paid, so nothing was charged.\n\n\
                 To pay for it, open:\n\n{link}\n",
                org.name
            )
        } else if order.kind == KIND_FEATURE {
            format!(
                "The featured upgrade of your job at {} was not paid, so the job is listed as before.\n\n\
                 To pay for the upgrade, open:\n\n{link}\n",
                org.name
            )
        } else {
            format!(
                "Your job was saved at {}, but the payment was not completed, so it is not listed yet.\n\n\
                 To pay and publish it, open:\n\n{link}\n",
                org.name
            )
        };
        let msg = Message::new(
            "order_resume",
            to,
            "Your job is waiting for its payment",
            text,
        );
        if let Err(e) = enqueue(&mut tx, org.id, &msg).await {
            tracing::warn!(error = ?e, order_id = %order.id, "the resume mail could not be queued");
        }
    }
    tx.commit().await?;
    tracing::info!(org_id = org.id.0, order_id = %order.id, "checkout expired; the draft stays");
    Ok(true)
}

/// The payment of `payment_intent` was refunded: the payment and its order become
/// `refunded`, and the job expires where the organization says so. False when there was
/// nothing (left) to refund.
pub async fn refunded(db: &Db, org: &Org, payment_intent: &str) -> Result<bool> {
    let mut tx = db.begin().await?;
    let Some(payment) = store::refund_payment(&mut tx, org.id, payment_intent).await? else {
        tx.commit().await?;
        return Ok(false);
    };
    let order = match payment.processor_session_id.as_deref() {
        Some(session) => {
            store::move_order(
                &mut tx,
                org.id,
                session,
                &[OrderStatus::Fulfilled, OrderStatus::Paid],
                OrderStatus::Refunded,
            )
            .await?
        }
        None => None,
    };
    // A pack's posts not yet used are taken back; a post's job expires where the
    // organization says so.
    if let Some(access) = order.as_ref().and_then(|o| o.access_id) {
        members::revoke_pack_in(&mut tx, org.id, access).await?;
    }
    if let Some(job_id) = payment.job_id.filter(|_| org.refund_unpublishes) {
        jobs::set_paid_in(
            &mut tx,
            db.outgoing(),
            org.id,
            job_id,
            jobs::Paid {
                status: Some(JobStatus::Expired),
                ..jobs::Paid::default()
            },
        )
        .await?;
    }
    tx.commit().await?;
    tracing::info!(org_id = org.id.0, payment_id = %payment.id, "payment refunded");
    Ok(true)
}
