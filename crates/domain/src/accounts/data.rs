//! What the board keeps about a member, handed over (`/account/export`) or erased
//! (`/account/delete`, `jobboard members erase`).
//!
//! Erasing deletes the member, its sessions, saved jobs, sign-in links, access records,
//! the job alerts of its address and the applications made with its address; the jobs it
//! owns stay, without an owner, and its payments stay, without a member (bookkeeping), as
//! `members/access`'s `delete_member` leaves them. `user.deleted` is emitted in the same
//! transaction.

use serde::Serialize;

pub use super::records::SavedOut;
use super::{records, store};
use crate::{
    Error, MemberId, OrgId, Result, Ts,
    alerts::Alert,
    applications::Application,
    db::Db,
    jobs::Job,
    members::{self, Access, Member, Payment},
};

/// The format of an export, as its `format` field says.
pub const EXPORT_FORMAT: &str = "jobboard.member-export.v1";

/// Everything the board keeps about one member.
#[derive(Debug, Clone, Serialize)]
pub struct Export {
    pub format: &'static str,
    pub exported_at: Ts,
    pub organization: ExportOrg,
    pub member: Member,
    /// The jobs the member owns, every status.
    pub jobs: Vec<Job>,
    /// The applications made with the member's address.
    pub applications: Vec<Application>,
    /// The job alerts of the member's address.
    pub alerts: Vec<Alert>,
    pub saved_jobs: Vec<SavedOut>,
    pub access: Vec<Access>,
    pub payments: Vec<Payment>,
}

/// The organization an export is from.
#[derive(Debug, Clone, Serialize)]
pub struct ExportOrg {
    pub id: OrgId,
    pub name: String,
}

/// Everything the board keeps about member `id` of `org_id`.
pub async fn export(db: &Db, org_id: OrgId, org_name: &str, id: MemberId) -> Result<Export> {
    let member = members::member(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("member"))?;
    Ok(Export {
        format: EXPORT_FORMAT,
        exported_at: db.now(),
        organization: ExportOrg {
            id: org_id,
            name: org_name.to_string(),
        },
        jobs: records::owned_jobs_all(db, org_id, id).await?,
        applications: records::applications_of_address(db, org_id, &member.email).await?,
        alerts: crate::alerts::store::of_address(db, org_id, &member.email).await?,
        saved_jobs: records::saved_all(db, org_id, id).await?,
        access: members::access_of(db, org_id, id).await?,
        payments: members::payments_of(db, org_id, id).await?,
        member,
    })
}

/// What an erasure deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erased {
    pub member: MemberId,
    pub applications: u64,
    pub alerts: u64,
}

/// Erases member `id` of `org_id` (see the module's rules).
pub async fn erase(db: &Db, org_id: OrgId, id: MemberId) -> Result<Erased> {
    let mut tx = db.begin().await?;
    let member = members::member_by_id_in(&mut tx, org_id, id)
        .await?
        .ok_or(Error::NotFound("member"))?;
    let applications =
        records::delete_applications_of_address(&mut tx, org_id, &member.email).await?;
    let alerts = crate::alerts::store::delete_of_address(&mut tx, org_id, &member.email).await?;
    store::delete_links(&mut tx, org_id, &member.email).await?;
    members::delete_in(&mut tx, org_id, &member).await?;
    tx.commit().await?;
    tracing::info!(
        org_id = org_id.0,
        member_id = %member.id,
        applications,
        alerts,
        "member erased"
    );
    Ok(Erased {
        member: member.id,
        applications,
        alerts,
    })
}

/// Erases the member of `org_id` whose address is `email` (staff answering a request by
/// mail: `jobboard members erase`).
pub async fn erase_address(db: &Db, org_id: OrgId, email: &str) -> Result<Erased> {
    let member = members::member_of_address(db, org_id, email.trim())
        .await?
        .ok_or(Error::NotFound("member"))?;
    erase(db, org_id, member.id).await
}

/// The job alerts of `email` on `org_id`'s board, oldest first.
pub async fn alerts_of(db: &Db, org_id: OrgId, email: &str) -> Result<Vec<Alert>> {
    Ok(crate::alerts::store::of_address(db, org_id, email).await?)
}
