//! Jobs a job seeker saved from the board (`POST /jobs/<slug>/save`), listed in their
//! account until they remove them or the job is deleted.

use super::records;
use crate::{Error, JobId, OrgId, Result, db::Db, members::Member};

pub use records::Saved;

/// Saves job `job` for `member` (saving it again changes nothing).
pub async fn save(db: &Db, org_id: OrgId, member: &Member, job: JobId) -> Result<()> {
    if records::save(db, org_id, member.id, job, db.now()).await? {
        Ok(())
    } else {
        Err(Error::NotFound("job"))
    }
}

/// Removes job `job` from `member`'s saved jobs; true when it was there.
pub async fn remove(db: &Db, org_id: OrgId, member: &Member, job: JobId) -> Result<bool> {
    Ok(records::unsave(db, org_id, member.id, job).await?)
}

/// The jobs `member` saved, most recently saved first, as they are now.
pub async fn list(db: &Db, org_id: OrgId, member: &Member) -> Result<Vec<Saved>> {
    Ok(records::saved(db, org_id, member.id).await?)
}
