//! Plans as stored: create (each unique value checked first, the unique indexes deciding
//! races), list, and the lookups a member sync makes inside its own transaction.

use uuid::Uuid;

use super::model::{Plan, PlanIn, PlanRef};
use crate::{
    OrgId,
    db::{Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx,
};

const COLUMNS: &str = "id, org_id AS organization_id, name, processor_price_id, alt_processor_plan_id, \
     price, currency, billing_interval AS interval, jobs_included, created_at, updated_at";

/// The JSON name of a plan field whose value another plan of the organization holds.
pub(super) type Taken = &'static str;

/// Inserts a plan; `Err(field)` when the name, processor price id or alt plan id is
/// already used in the organization (checked first, so the answer names the field; a
/// concurrent create taking a value in between is caught by its unique index).
pub(super) async fn create(db: &Db, org_id: OrgId, p: &PlanIn) -> DbResult<Result<Plan, Taken>> {
    let mut tx = db.begin().await?;
    for (field, column, value) in [
        ("name", "name", Some(&p.name)),
        (
            "processorPriceId",
            "processor_price_id",
            p.processor_price_id.as_ref(),
        ),
        (
            "altProcessorPlanId",
            "alt_processor_plan_id",
            p.alt_processor_plan_id.as_ref(),
        ),
    ] {
        let Some(value) = value else { continue };
        let sql = format!("SELECT id FROM plans WHERE org_id = $1 AND {column} = $2");
        let hit: Option<Uuid> = dispatch_tx!(&mut tx, t => {
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(org_id)
                .bind(value)
                .fetch_optional(&mut **t)
                .await?
        });
        if hit.is_some() {
            return Ok(Err(field));
        }
    }
    let now = db.now();
    let sql = format!(
        "INSERT INTO plans (id, org_id, name, processor_price_id, alt_processor_plan_id, price, currency,
             billing_interval, jobs_included, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING {COLUMNS}"
    );
    let res: DbResult<Plan> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7())
            .bind(org_id)
            .bind(&p.name)
            .bind(&p.processor_price_id)
            .bind(&p.alt_processor_plan_id)
            .bind(p.price)
            .bind(&p.currency)
            .bind(p.interval)
            .bind(p.jobs_included)
            .bind(now)
            .fetch_one(&mut **t)
            .await
            .map_err(StoreError::from)
    });
    match res {
        Ok(plan) => {
            tx.commit().await?;
            Ok(Ok(plan))
        }
        Err(e) if e.is_unique() => Ok(Err(taken_field(&e))),
        Err(e) => Err(e),
    }
}

/// The field whose unique index `e` names (as far as the message tells).
fn taken_field(e: &StoreError) -> Taken {
    if e.is_unique_on("alt_processor_plan_id") {
        "altProcessorPlanId"
    } else if e.is_unique_on("processor_price_id") {
        "processorPriceId"
    } else {
        "name"
    }
}

/// The organization's plans, by name.
pub(super) async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<Plan>> {
    let sql = format!("SELECT {COLUMNS} FROM plans WHERE org_id = $1 ORDER BY name, id");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(StoreError::from)
    })
}

/// The plan of this organization matching every identifier of `r`, inside `tx`.
pub(crate) async fn find_in(tx: &mut Tx, org_id: OrgId, r: &PlanRef) -> DbResult<Option<Plan>> {
    if r.is_empty() {
        return Ok(None);
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM plans WHERE org_id = $1
           AND ($2 IS NULL OR id = $2)
           AND ($3 IS NULL OR processor_price_id = $3)
           AND ($4 IS NULL OR alt_processor_plan_id = $4)
           AND ($5 IS NULL OR name = $5)"
    );
    dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(r.id)
            .bind(&r.processor_price_id)
            .bind(&r.alt_processor_plan_id)
            .bind(&r.name)
            .fetch_optional(&mut **t)
            .await
            .map_err(StoreError::from)
    })
}

/// True when `id` is a plan of this organization, inside `tx`.
pub(crate) async fn exists_in(tx: &mut Tx, org_id: OrgId, id: Uuid) -> DbResult<bool> {
    let hit: Option<Uuid> = dispatch_tx!(tx, t => {
        sqlx::query_scalar("SELECT id FROM plans WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await?
    });
    Ok(hit.is_some())
}
