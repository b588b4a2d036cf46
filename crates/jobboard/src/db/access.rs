//! Access (subscription) records: which plan a member holds, in which state, and how many
//! job posts remain. Written only inside a member sync's transaction.

use serde::Serialize;
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    DbResult, Ts, Tx,
    billing::AccessStatus,
    events,
    members::SyncError,
    plans::{Plan, PlanRef},
};
use crate::dispatch_tx;

const COLUMNS: &str = "id, org_id AS organization_id, user_id, plan_id, status, processor_subscription_id, \
     current_period_start, current_period_end, cancel_at, canceled_at, jobs_remaining, metadata, \
     created_at, updated_at";

/// An access record as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Access {
    pub id: Uuid,
    pub organization_id: i64,
    /// The member holding the access.
    pub user_id: Uuid,
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
    pub metadata: Json<Value>,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// The validated `access` block of a sync. `None`: not sent; `Some(None)`: sent as null.
#[derive(Debug, Clone, Default)]
pub struct AccessSync {
    pub plan: PlanRef,
    pub status: Option<AccessStatus>,
    pub processor_subscription_id: Option<String>,
    pub current_period_start: Option<Option<Ts>>,
    pub current_period_end: Option<Option<Ts>>,
    pub cancel_at: Option<Option<Ts>>,
    pub canceled_at: Option<Option<Ts>>,
    pub jobs_remaining: Option<i64>,
    pub metadata: Option<Map<String, Value>>,
}

async fn find_by_subscription(tx: &mut Tx, org_id: i64, sub: &str) -> DbResult<Option<Access>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM member_access WHERE org_id = $1 AND processor_subscription_id = $2"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(sub)
            .fetch_optional(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// The member's latest record of this plan (only those without a subscription id when
/// `unbound_only`).
async fn find_by_plan(
    tx: &mut Tx,
    org_id: i64,
    user_id: Uuid,
    plan_id: Uuid,
    unbound_only: bool,
) -> DbResult<Option<Access>> {
    let extra = if unbound_only {
        " AND processor_subscription_id IS NULL"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM member_access WHERE org_id = $1 AND user_id = $2 AND plan_id = $3{extra}
         ORDER BY updated_at DESC, id DESC LIMIT 1"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(user_id)
            .bind(plan_id)
            .fetch_optional(&mut **t)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// Updates the member's record for this subscription (or, failing that, for this plan),
/// else creates one; emits `subscription.created` / `subscription.canceled`.
pub async fn upsert(
    tx: &mut Tx,
    org_id: i64,
    user_id: Uuid,
    plan: &Plan,
    a: &AccessSync,
    now: Ts,
) -> Result<Access, SyncError> {
    let existing = match &a.processor_subscription_id {
        Some(sub) => match find_by_subscription(tx, org_id, sub).await? {
            Some(found) if found.user_id != user_id => {
                return Err(SyncError::conflict(
                    "access.processorSubscriptionId",
                    "This subscription belongs to another member.",
                ));
            }
            Some(found) => Some(found),
            None => find_by_plan(tx, org_id, user_id, plan.id, true).await?,
        },
        None => find_by_plan(tx, org_id, user_id, plan.id, false).await?,
    };
    let created = existing.is_none();
    let stored = existing.unwrap_or_else(|| Access {
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
        metadata: Json(json!({})),
        created_at: now,
        updated_at: now,
    });
    let mut r = stored.clone();
    if r.plan_id != plan.id {
        // A change of plan starts from the new plan's allowance unless one is sent.
        r.plan_id = plan.id;
        r.jobs_remaining = plan.jobs_included;
    }
    if let Some(v) = a.status {
        r.status = v;
    }
    if let Some(v) = &a.processor_subscription_id {
        r.processor_subscription_id = Some(v.clone());
    }
    if let Some(v) = a.current_period_start {
        r.current_period_start = v;
    }
    if let Some(v) = a.current_period_end {
        r.current_period_end = v;
    }
    if let Some(v) = a.cancel_at {
        r.cancel_at = v;
    }
    if let Some(v) = a.canceled_at {
        r.canceled_at = v;
    }
    if let Some(v) = a.jobs_remaining {
        r.jobs_remaining = v;
    }
    if let Some(v) = &a.metadata {
        r.metadata = Json(Value::Object(v.clone()));
    }
    let newly_canceled =
        r.status == AccessStatus::Canceled && (created || stored.status != AccessStatus::Canceled);
    if newly_canceled && r.canceled_at.is_none() {
        r.canceled_at = Some(now);
    }
    if let (Some(start), Some(end)) = (r.current_period_start, r.current_period_end)
        && end < start
    {
        return Err(SyncError::invalid(
            "access.currentPeriodEnd",
            "out_of_range",
            "Must not be before currentPeriodStart.",
        ));
    }
    if created {
        insert(tx, &r).await?;
        emit(tx, "subscription.created", &r).await?;
    } else if r != stored {
        r.updated_at = now;
        update(tx, &r).await?;
    }
    if newly_canceled && !created {
        emit(tx, "subscription.canceled", &r).await?;
    }
    Ok(r)
}

async fn emit(tx: &mut Tx, event: &str, r: &Access) -> DbResult<()> {
    events::emit(
        tx,
        r.organization_id,
        event,
        json!({
            "access_id": r.id,
            "user_id": r.user_id,
            "plan_id": r.plan_id,
            "status": r.status,
        }),
    )
    .await?;
    Ok(())
}

async fn insert(tx: &mut Tx, r: &Access) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO member_access (id, org_id, user_id, plan_id, status, processor_subscription_id,
                 current_period_start, current_period_end, cancel_at, canceled_at, jobs_remaining,
                 metadata, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
        )
        .bind(r.id)
        .bind(r.organization_id)
        .bind(r.user_id)
        .bind(r.plan_id)
        .bind(r.status)
        .bind(&r.processor_subscription_id)
        .bind(r.current_period_start)
        .bind(r.current_period_end)
        .bind(r.cancel_at)
        .bind(r.canceled_at)
        .bind(r.jobs_remaining)
        .bind(&r.metadata)
        .bind(r.created_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

async fn update(tx: &mut Tx, r: &Access) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "UPDATE member_access SET plan_id = $3, status = $4, processor_subscription_id = $5,
                 current_period_start = $6, current_period_end = $7, cancel_at = $8, canceled_at = $9,
                 jobs_remaining = $10, metadata = $11, updated_at = $12
             WHERE org_id = $1 AND id = $2",
        )
        .bind(r.organization_id)
        .bind(r.id)
        .bind(r.plan_id)
        .bind(r.status)
        .bind(&r.processor_subscription_id)
        .bind(r.current_period_start)
        .bind(r.current_period_end)
        .bind(r.cancel_at)
        .bind(r.canceled_at)
        .bind(r.jobs_remaining)
        .bind(&r.metadata)
        .bind(r.updated_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

/// The access records of a member (used by tests and tooling).
pub async fn list_for_member(db: &super::Db, org_id: i64, user_id: Uuid) -> DbResult<Vec<Access>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM member_access WHERE org_id = $1 AND user_id = $2 ORDER BY created_at, id"
    );
    crate::dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(user_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}
