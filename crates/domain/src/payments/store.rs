//! Processor accounts, prices and orders as stored.

use uuid::Uuid;

use super::model::{Order, OrderStatus, Price};
use crate::{
    MemberId, OrgId, Ts,
    db::{Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx,
    members::{Payment, PaymentStatus},
};

const PRICE_COLUMNS: &str =
    "id, org_id, name, amount, currency, days, featured_days, archived_at, created_at";
const ORDER_COLUMNS: &str = "id, org_id, job_id, price_id, plan_id, access_id, kind, member_id, email, status, amount, \
     currency, session_id, session_url, created_at, updated_at, fulfilled_at";
const PAYMENT_COLUMNS: &str = "id, org_id AS organization_id, user_id, job_id, plan_id, amount, \
     currency, status, payment_provider, processor_session_id, processor_payment_intent_id, \
     metadata, created_at, updated_at";

/// The account: (API base URL, secret key, webhook secret).
pub(super) async fn account(db: &Db, org_id: OrgId) -> DbResult<Option<(String, String, String)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT api_url, secret_key, webhook_secret FROM payment_accounts WHERE org_id = $1",
        )
        .bind(org_id)
        .fetch_optional(p)
        .await?
    }))
}

pub(super) async fn set_account(
    db: &Db,
    org_id: OrgId,
    api_url: &str,
    secret_key: &str,
    webhook_secret: &str,
    now: Ts,
) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO payment_accounts (org_id, api_url, secret_key, webhook_secret, updated_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id) DO UPDATE SET api_url = excluded.api_url, \
             secret_key = excluded.secret_key, webhook_secret = excluded.webhook_secret, \
             updated_at = excluded.updated_at",
        )
        .bind(org_id)
        .bind(api_url)
        .bind(secret_key)
        .bind(webhook_secret)
        .bind(now)
        .execute(p)
        .await?;
    });
    Ok(())
}

pub(super) async fn insert_price(db: &Db, p: &Price) -> DbResult<()> {
    dispatch!(db.writer(), c => {
        sqlx::query(
            "INSERT INTO prices (id, org_id, name, amount, currency, days, featured_days, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(p.id)
        .bind(p.org_id)
        .bind(&p.name)
        .bind(p.amount)
        .bind(&p.currency)
        .bind(p.days)
        .bind(p.featured_days)
        .bind(p.created_at)
        .execute(c)
        .await?;
    });
    Ok(())
}

/// The organization's prices, oldest first (the archived ones too when `all`).
pub(super) async fn prices(db: &Db, org_id: OrgId, all: bool) -> DbResult<Vec<Price>> {
    let sql = format!(
        "SELECT {PRICE_COLUMNS} FROM prices WHERE org_id = $1 AND ($2 OR archived_at IS NULL) \
         ORDER BY created_at, id"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(all).fetch_all(p).await?
    }))
}

pub(super) async fn price(db: &Db, org_id: Option<OrgId>, id: Uuid) -> DbResult<Option<Price>> {
    let sql =
        format!("SELECT {PRICE_COLUMNS} FROM prices WHERE id = $1 AND ($2 IS NULL OR org_id = $2)");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).fetch_optional(p).await?
    }))
}

pub(super) async fn archive_price(db: &Db, id: Uuid, now: Ts) -> DbResult<Option<Price>> {
    let sql = format!(
        "UPDATE prices SET archived_at = COALESCE(archived_at, $2) WHERE id = $1 RETURNING {PRICE_COLUMNS}"
    );
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(now).fetch_optional(p).await?
    }))
}

pub(super) async fn insert_order(db: &Db, o: &Order) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO orders (id, org_id, job_id, price_id, plan_id, kind, member_id, email, status, \
             amount, currency, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)",
        )
        .bind(o.id)
        .bind(o.org_id)
        .bind(o.job_id)
        .bind(o.price_id)
        .bind(o.plan_id)
        .bind(&o.kind)
        .bind(o.member_id)
        .bind(&o.email)
        .bind(o.status)
        .bind(o.amount)
        .bind(&o.currency)
        .bind(o.created_at)
        .execute(p)
        .await?;
    });
    Ok(())
}

pub(super) async fn order(db: &Db, org_id: OrgId, id: Uuid) -> DbResult<Option<Order>> {
    let sql = format!("SELECT {ORDER_COLUMNS} FROM orders WHERE org_id = $1 AND id = $2");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await?
    }))
}

pub(super) async fn order_of_session(
    db: &Db,
    org_id: OrgId,
    session: &str,
) -> DbResult<Option<Order>> {
    let sql = format!("SELECT {ORDER_COLUMNS} FROM orders WHERE org_id = $1 AND session_id = $2");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(session).fetch_optional(p).await?
    }))
}

/// Records the checkout session of an order that is not settled yet (a new session
/// replaces an expired one), and, when given, the amount the session charges.
pub(super) async fn set_session(
    db: &Db,
    org_id: OrgId,
    id: Uuid,
    session: &str,
    url: Option<&str>,
    charged: Option<(i64, &str)>,
    now: Ts,
) -> DbResult<Option<Order>> {
    let sql = format!(
        "UPDATE orders SET session_id = $3, session_url = $4, status = 'awaiting_payment', updated_at = $5, \
         amount = COALESCE($6, amount), currency = COALESCE($7, currency) \
         WHERE org_id = $1 AND id = $2 AND status IN ('draft', 'awaiting_payment', 'expired') \
         RETURNING {ORDER_COLUMNS}"
    );
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(id)
            .bind(session)
            .bind(url)
            .bind(now)
            .bind(charged.map(|c| c.0))
            .bind(charged.map(|c| c.1.to_ascii_uppercase()))
            .fetch_optional(p)
            .await?
    }))
}

/// Records the access record a fulfilled pack created.
pub(super) async fn set_order_access(tx: &mut Tx, id: Uuid, access: Uuid) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("UPDATE orders SET access_id = $2 WHERE id = $1")
            .bind(id)
            .bind(access)
            .execute(&mut **t)
            .await
            .map(|_| ())
            .map_err(StoreError::from)
    })
}

/// Moves the order of `session` from one of `from` to `to` in `tx`, once: the order as
/// moved, or `None` when it was not in one of those states (another node, or an earlier
/// event, moved it first).
pub(super) async fn move_order(
    tx: &mut Tx,
    org_id: OrgId,
    session: &str,
    from: &[OrderStatus],
    to: OrderStatus,
) -> DbResult<Option<Order>> {
    let now = tx.now();
    let states: Vec<String> = from.iter().map(|s| format!("'{}'", s.as_str())).collect();
    let fulfilled = if to == OrderStatus::Fulfilled {
        ", fulfilled_at = $4"
    } else {
        ""
    };
    let sql = format!(
        "UPDATE orders SET status = $3, updated_at = $4{fulfilled} \
         WHERE org_id = $1 AND session_id = $2 AND status IN ({}) RETURNING {ORDER_COLUMNS}",
        states.join(", ")
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(session)
            .bind(to)
            .bind(now)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Marks the succeeded payment of a payment intent refunded, once.
pub(super) async fn refund_payment(
    tx: &mut Tx,
    org_id: OrgId,
    intent: &str,
) -> DbResult<Option<Payment>> {
    let now = tx.now();
    let sql = format!(
        "UPDATE payments SET status = $3, updated_at = $4 \
         WHERE org_id = $1 AND processor_payment_intent_id = $2 AND status = 'succeeded' \
         RETURNING {PAYMENT_COLUMNS}"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(intent)
            .bind(PaymentStatus::Refunded)
            .bind(now)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// Orders still awaiting payment whose session opened before `before` (the reconciler's).
pub(super) async fn open_before(db: &Db, before: Ts, limit: i64) -> DbResult<Vec<Order>> {
    let sql = format!(
        "SELECT {ORDER_COLUMNS} FROM orders WHERE status = 'awaiting_payment' AND updated_at < $1 \
         ORDER BY updated_at LIMIT $2"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(before).bind(limit).fetch_all(p).await?
    }))
}

/// The job posts left on the member's live access records (`active` or `trialing`).
pub(super) async fn credits_left(db: &Db, org_id: OrgId, member: MemberId) -> DbResult<i64> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar::<_, i64>(
            "SELECT CAST(COALESCE(SUM(jobs_remaining), 0) AS BIGINT) FROM member_access \
             WHERE org_id = $1 AND user_id = $2 AND status IN ('active', 'trialing') AND jobs_remaining > 0",
        )
        .bind(org_id)
        .bind(member)
        .fetch_one(p)
        .await?
    }))
}

/// Takes one job post from a live access record of the member that has one left (the
/// oldest), in one statement guarded by `jobs_remaining > 0`, so concurrent posts never
/// take it below zero: the record taken from, or `None`.
pub(super) async fn spend_credit(
    db: &Db,
    org_id: OrgId,
    member: MemberId,
    now: Ts,
) -> DbResult<Option<Uuid>> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_scalar(
            "UPDATE member_access SET jobs_remaining = jobs_remaining - 1, updated_at = $3 \
             WHERE id = (SELECT id FROM member_access WHERE org_id = $1 AND user_id = $2 \
                 AND status IN ('active', 'trialing') AND jobs_remaining > 0 \
                 ORDER BY created_at, id LIMIT 1) \
             AND jobs_remaining > 0 RETURNING id",
        )
        .bind(org_id)
        .bind(member)
        .bind(now)
        .fetch_optional(p)
        .await?
    }))
}

/// Gives back a job post taken by [`spend_credit`] for a post that was not stored.
pub(super) async fn give_back_credit(db: &Db, access: Uuid, now: Ts) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("UPDATE member_access SET jobs_remaining = jobs_remaining + 1, updated_at = $2 WHERE id = $1")
            .bind(access)
            .bind(now)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// A page of the organization's payments, newest first, as `q` filters them, and how
/// many match.
pub(super) async fn payments_page(
    db: &Db,
    org_id: OrgId,
    q: &super::model::PaymentListQuery,
    member: Option<MemberId>,
) -> DbResult<(Vec<Payment>, i64)> {
    let since = q
        .since
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| Ts::from_micros(t.and_utc().timestamp_micros()));
    Ok(dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM payments WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(s) = q.status {
                qb.push(" AND status = ").push_bind(s);
            }
            if let Some(m) = member {
                qb.push(" AND user_id = ").push_bind(m);
            }
            if let Some(j) = q.job_id {
                qb.push(" AND job_id = ").push_bind(j);
            }
            if let Some(t) = since {
                qb.push(" AND created_at >= ").push_bind(t);
            }
        }
        page.push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(q.per_page)
            .push(" OFFSET ")
            .push_bind((q.page - 1) * q.per_page);
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let rows: Vec<Payment> = page.build_query_as().fetch_all(p).await?;
        (rows, total)
    }))
}

/// The succeeded payments of the organization made since `since`: (when, currency,
/// amount).
pub(super) async fn succeeded_since(
    db: &Db,
    org_id: OrgId,
    since: Ts,
) -> DbResult<Vec<(Ts, String, crate::Money)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT created_at, currency, amount FROM payments \
             WHERE org_id = $1 AND status = 'succeeded' AND created_at >= $2 ORDER BY created_at",
        )
        .bind(org_id)
        .bind(since)
        .fetch_all(p)
        .await?
    }))
}
