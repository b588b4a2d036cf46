//! Payments of members (for jobs). Written only inside a member sync's transaction; a
//! retried sync naming the same processor payment intent or session updates the payment
//! instead of adding another.

use serde::Serialize;
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    DbResult, Ts, Tx,
    billing::{Money, PaymentProvider, PaymentStatus},
    events,
    members::SyncError,
    plans,
};
use crate::dispatch_tx;

const COLUMNS: &str = "id, org_id AS organization_id, user_id, job_id, plan_id, amount, currency, status, \
     payment_provider, processor_session_id, processor_payment_intent_id, metadata, created_at, updated_at";

/// A payment as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub id: Uuid,
    pub organization_id: i64,
    /// The member who paid.
    pub user_id: Uuid,
    /// The job paid for.
    pub job_id: Uuid,
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
    pub metadata: Json<Value>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// The validated `payment` block of a sync. `None`: not sent.
#[derive(Debug, Clone)]
pub struct PaymentSync {
    pub job_id: Uuid,
    pub plan_id: Option<Uuid>,
    pub amount: Money,
    pub currency: String,
    pub status: Option<PaymentStatus>,
    pub payment_provider: Option<PaymentProvider>,
    pub processor_session_id: Option<String>,
    pub processor_payment_intent_id: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

async fn find_by(tx: &mut Tx, org_id: i64, column: &str, value: &str) -> DbResult<Option<Payment>> {
    let sql = format!("SELECT {COLUMNS} FROM payments WHERE org_id = $1 AND {column} = $2");
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(value)
            .fetch_optional(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// True when `id` is a job of this organization (checked inside the sync's transaction).
async fn job_exists(tx: &mut Tx, org_id: i64, id: Uuid) -> DbResult<bool> {
    let hit: Option<Uuid> = dispatch_tx!(tx, t => {
        sqlx::query_scalar("SELECT id FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await?
    });
    Ok(hit.is_some())
}

/// Records the payment (or updates the one with the same processor intent or session id);
/// emits `payment.received` when it is created as, or moves to, succeeded.
pub async fn upsert(
    tx: &mut Tx,
    org_id: i64,
    user_id: Uuid,
    access_plan: Option<Uuid>,
    p: &PaymentSync,
    now: Ts,
) -> Result<Payment, SyncError> {
    if !job_exists(tx, org_id, p.job_id).await? {
        return Err(SyncError::invalid(
            "payment.jobId",
            "not_found",
            "No job with this id exists in the organization.",
        ));
    }
    if let Some(id) = p.plan_id
        && !plans::exists_in(tx, org_id, id).await?
    {
        return Err(SyncError::invalid(
            "payment.planId",
            "not_found",
            "No plan with this id exists in the organization.",
        ));
    }
    let by_intent = match &p.processor_payment_intent_id {
        Some(v) => find_by(tx, org_id, "processor_payment_intent_id", v).await?,
        None => None,
    };
    let by_session = match &p.processor_session_id {
        Some(v) => find_by(tx, org_id, "processor_session_id", v).await?,
        None => None,
    };
    let existing = match (by_intent, by_session) {
        (Some(a), Some(b)) if a.id != b.id => {
            return Err(SyncError::conflict(
                "payment",
                "processorPaymentIntentId and processorSessionId name two different payments.",
            ));
        }
        (a, b) => a.or(b),
    };
    if existing.as_ref().is_some_and(|e| e.user_id != user_id) {
        return Err(SyncError::conflict(
            "payment",
            "A payment with this processor id belongs to another member.",
        ));
    }
    let created = existing.is_none();
    let stored = existing.unwrap_or_else(|| Payment {
        id: Uuid::now_v7(),
        organization_id: org_id,
        user_id,
        job_id: p.job_id,
        plan_id: None,
        amount: p.amount,
        currency: p.currency.clone(),
        status: PaymentStatus::Succeeded,
        payment_provider: PaymentProvider::Processor,
        processor_session_id: None,
        processor_payment_intent_id: None,
        metadata: Json(json!({})),
        created_at: now,
        updated_at: now,
    });
    let mut r = stored.clone();
    r.job_id = p.job_id;
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
    if let Some(v) = &p.metadata {
        r.metadata = Json(Value::Object(v.clone()));
    }
    if created {
        insert(tx, &r).await?;
    } else if r != stored {
        r.updated_at = now;
        update(tx, &r).await?;
    }
    if r.status == PaymentStatus::Succeeded
        && (created || stored.status != PaymentStatus::Succeeded)
    {
        events::emit(
            tx,
            org_id,
            "payment.received",
            json!({
                "payment_id": r.id,
                "user_id": r.user_id,
                "job_id": r.job_id,
                "amount": r.amount,
                "currency": r.currency,
                "payment_provider": r.payment_provider,
            }),
        )
        .await?;
    }
    Ok(r)
}

async fn insert(tx: &mut Tx, r: &Payment) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO payments (id, org_id, user_id, job_id, plan_id, amount, currency, status,
                 payment_provider, processor_session_id, processor_payment_intent_id, metadata,
                 created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
        )
        .bind(r.id)
        .bind(r.organization_id)
        .bind(r.user_id)
        .bind(r.job_id)
        .bind(r.plan_id)
        .bind(r.amount)
        .bind(&r.currency)
        .bind(r.status)
        .bind(r.payment_provider)
        .bind(&r.processor_session_id)
        .bind(&r.processor_payment_intent_id)
        .bind(&r.metadata)
        .bind(r.created_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

async fn update(tx: &mut Tx, r: &Payment) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "UPDATE payments SET job_id = $3, plan_id = $4, amount = $5, currency = $6, status = $7,
                 payment_provider = $8, processor_session_id = $9, processor_payment_intent_id = $10,
                 metadata = $11, updated_at = $12
             WHERE org_id = $1 AND id = $2",
        )
        .bind(r.organization_id)
        .bind(r.id)
        .bind(r.job_id)
        .bind(r.plan_id)
        .bind(r.amount)
        .bind(&r.currency)
        .bind(r.status)
        .bind(r.payment_provider)
        .bind(&r.processor_session_id)
        .bind(&r.processor_payment_intent_id)
        .bind(&r.metadata)
        .bind(r.updated_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

/// The payments of a member (used by tests and tooling).
pub async fn list_for_member(db: &super::Db, org_id: i64, user_id: Uuid) -> DbResult<Vec<Payment>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM payments WHERE org_id = $1 AND user_id = $2 ORDER BY created_at, id"
    );
    crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(user_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

/// Every payment of an organization (used by tests and tooling).
pub async fn list_for_org(db: &super::Db, org_id: i64) -> DbResult<Vec<Payment>> {
    let sql = format!("SELECT {COLUMNS} FROM payments WHERE org_id = $1 ORDER BY created_at, id");
    crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}
