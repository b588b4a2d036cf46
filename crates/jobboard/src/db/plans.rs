//! Plans an organization sells: price, billing interval and the job posts they include.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    Db, DbResult, Ts, Tx,
    billing::{Money, PlanInterval},
};
use crate::{dispatch, dispatch_tx};

const COLUMNS: &str = "id, org_id AS organization_id, name, processor_price_id, alt_processor_plan_id, \
     price, currency, billing_interval AS interval, jobs_included, created_at, updated_at";

/// A plan as returned by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub id: Uuid,
    /// The organization the plan belongs to.
    pub organization_id: i64,
    /// Unique per organization.
    pub name: String,
    /// The price id at the card processor, unique per organization.
    pub processor_price_id: Option<String>,
    /// The plan id at the second payment provider, unique per organization.
    pub alt_processor_plan_id: Option<String>,
    pub price: Money,
    /// ISO 4217 code, upper case.
    #[schema(pattern = "^[A-Z]{3}$")]
    pub currency: String,
    pub interval: PlanInterval,
    /// Job posts an access record on this plan starts with.
    pub jobs_included: i64,
    pub created_at: Ts,
    pub updated_at: Ts,
}

/// A validated new plan.
#[derive(Debug, Clone)]
pub struct NewPlan {
    pub name: String,
    pub processor_price_id: Option<String>,
    pub alt_processor_plan_id: Option<String>,
    pub price: Money,
    pub currency: String,
    pub interval: PlanInterval,
    pub jobs_included: i64,
}

/// Why a plan could not be created: the value of this field is already used.
#[derive(Debug)]
pub enum CreateError {
    Taken(&'static str),
    Db(super::StoreError),
}

impl From<super::StoreError> for CreateError {
    fn from(e: super::StoreError) -> Self {
        CreateError::Db(e)
    }
}

impl From<sqlx::Error> for CreateError {
    fn from(e: sqlx::Error) -> Self {
        CreateError::Db(e.into())
    }
}

/// Creates a plan; a name, processor price id or alt plan id already used in the
/// organization is [`CreateError::Taken`] naming the field.
pub async fn create(db: &Db, org_id: i64, p: &NewPlan) -> Result<Plan, CreateError> {
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
            return Err(CreateError::Taken(field));
        }
    }
    let now = Ts::now();
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
            .await.map_err(crate::db::StoreError::from)
    });
    match res {
        Ok(plan) => {
            tx.commit().await?;
            Ok(plan)
        }
        // A concurrent create took one of the values between the check and the insert.
        Err(e) if super::is_unique_violation(&e) => Err(CreateError::Taken(taken_field(&e))),
        Err(e) => Err(e.into()),
    }
}

/// The field whose unique constraint `e` violated (as far as the message tells).
fn taken_field(e: &super::StoreError) -> &'static str {
    if e.is_unique_on("alt_processor_plan_id") {
        "altProcessorPlanId"
    } else if e.is_unique_on("processor_price_id") {
        "processorPriceId"
    } else {
        "name"
    }
}

/// The organization's plans, by name.
pub async fn list(db: &Db, org_id: i64) -> DbResult<Vec<Plan>> {
    let sql = format!("SELECT {COLUMNS} FROM plans WHERE org_id = $1 ORDER BY name, id");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

/// How a sync names a plan. Every identifier given must match the same plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanRef {
    pub id: Option<Uuid>,
    pub processor_price_id: Option<String>,
    pub alt_processor_plan_id: Option<String>,
    pub name: Option<String>,
}

impl PlanRef {
    pub fn is_empty(&self) -> bool {
        *self == PlanRef::default()
    }
}

/// The plan of this organization matching every identifier of `r`, inside `tx`.
pub async fn find_in(tx: &mut Tx, org_id: i64, r: &PlanRef) -> DbResult<Option<Plan>> {
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
            .await.map_err(crate::db::StoreError::from)
    })
}

/// True when `id` is a plan of this organization, inside `tx`.
pub async fn exists_in(tx: &mut Tx, org_id: i64, id: Uuid) -> DbResult<bool> {
    let hit: Option<Uuid> = dispatch_tx!(tx, t => {
        sqlx::query_scalar("SELECT id FROM plans WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await?
    });
    Ok(hit.is_some())
}
