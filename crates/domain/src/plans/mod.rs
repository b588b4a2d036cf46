//! Plans: what an organization sells its members (a price, a billing interval and the job
//! posts included). The operations the API, the command line and the dashboard call to
//! create and list them; member syncs look them up by any of their identifiers.

pub mod model;
pub(crate) mod store;

pub use model::*;

use serde_json::json;

use crate::{Error, Input, OrgId, Result, db::Db};

/// Creates a plan from a `POST /plans` body.
pub async fn create(db: &Db, org_id: OrgId, body: Input) -> Result<Plan> {
    let plan = PlanIn::parse(body)?;
    create_from(db, org_id, plan).await
}

/// Creates a plan from checked values (the command line builds them itself). A name,
/// `processorPriceId` or `altProcessorPlanId` already used in the organization is a
/// conflict whose `details.field` names it.
pub async fn create_from(db: &Db, org_id: OrgId, plan: PlanIn) -> Result<Plan> {
    store::create(db, org_id, &plan).await?.map_err(|field| {
        Error::conflict(
            format!("A plan with this {field} already exists in the organization."),
            json!({ "field": field }),
        )
    })
}

/// The organization's plans, by name.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<Plan>> {
    Ok(store::list(db, org_id).await?)
}
