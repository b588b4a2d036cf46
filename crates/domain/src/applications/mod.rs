//! Applications to jobs: the operations the API, the board and the dashboard call to
//! receive an application, read and list them, and move one through the hiring process.
//! Each change is stored with its event in one transaction.

pub mod events;
pub mod model;
pub(crate) mod store;

pub use model::*;

use crate::{ApplicationId, Error, Input, JobId, OrgId, Result, db::Db};

/// Receives an application to a job of the organization (status `new`) from a create
/// body. Emits `application.received`. A body with bad fields is refused before the job
/// is looked up; a job that is not the organization's is not found.
pub async fn create(db: &Db, org_id: OrgId, job_id: JobId, body: Input) -> Result<Application> {
    let new = ApplicationIn::parse(body)?;
    store::create(db, org_id, job_id, &new)
        .await?
        .ok_or(Error::NotFound("job"))
}

/// One application of the organization.
pub async fn get(db: &Db, org_id: OrgId, id: ApplicationId) -> Result<Application> {
    store::get(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("application"))
}

/// The page `q` selects of the organization's applications, newest first.
pub async fn list(db: &Db, org_id: OrgId, q: &ApplicationListQuery) -> Result<ApplicationPage> {
    let (rows, total) = store::list(db, org_id, q).await?;
    Ok(ApplicationPage { rows, total })
}

/// Moves an application to the status of a patch body. Emits
/// `application.status_changed` when the status changes.
pub async fn update(db: &Db, org_id: OrgId, id: ApplicationId, body: Input) -> Result<Application> {
    let patch = ApplicationPatch::parse(body)?;
    set_status(db, org_id, id, patch.status).await
}

/// Moves an application to `status`. Emits `application.status_changed` when the status
/// changes.
pub async fn set_status(
    db: &Db,
    org_id: OrgId,
    id: ApplicationId,
    status: ApplicationStatus,
) -> Result<Application> {
    store::set_status(db, org_id, id, status)
        .await?
        .ok_or(Error::NotFound("application"))
}
