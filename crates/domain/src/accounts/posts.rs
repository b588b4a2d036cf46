//! Employers' jobs from their account: posting (the job's `owner_user_id` is the
//! member), listing with the counts analytics already keeps, editing, closing, renewing,
//! and reading the applications. Each goes through the job operations the API and the
//! dashboard use, so the events are theirs (`job.created`, `job.updated`,
//! `job.expired`, ...). A member reaches only the jobs it owns: another member's job, or
//! one of another organization, is not found.
//!
//! A member's new or edited job is `pending` until staff approve it, unless the
//! organization trusts its members (`member_posts = active`). A member must be an
//! employer (`employer`, `business` or `both`) and approved to post, edit or renew.

use serde_json::json;

use super::{may_post, records};
use crate::{
    Error, Input, JobId, OrgId, Result,
    applications::Application,
    db::Db,
    jobs::{self, Job, JobStatus},
    members::Member,
    orgs::{MemberPosts, Org},
};

pub use records::Counts;

/// Jobs per page of the member's list.
pub const PAGE: i64 = 50;
/// How long a renewed job is listed: it expires this long after its renewal.
pub const RENEWAL: std::time::Duration = std::time::Duration::from_secs(30 * 86_400);

/// One of the member's jobs with its all-time counts.
#[derive(Debug, Clone)]
pub struct Owned {
    pub job: Job,
    pub counts: Counts,
}

/// A page of the member's jobs, newest first.
#[derive(Debug, Clone)]
pub struct OwnedPage {
    pub jobs: Vec<Owned>,
    /// How many jobs the member owns.
    pub total: i64,
}

fn refused(message: &'static str) -> Error {
    Error::conflict(message, json!({ "reason": "member_may_not_post" }))
}

/// The status a member's new or edited job gets on `org`'s board.
fn posted_status(org: &Org) -> JobStatus {
    match org.member_posts {
        MemberPosts::Pending => JobStatus::Pending,
        MemberPosts::Active => JobStatus::Active,
    }
}

/// Page `page` (from 1) of the jobs `member` owns, every status.
pub async fn page(db: &Db, org_id: OrgId, member: &Member, page: i64) -> Result<OwnedPage> {
    let offset = (page.max(1) - 1).saturating_mul(PAGE);
    let (jobs, total) = records::owned_jobs(db, org_id, member.id, offset, PAGE).await?;
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    let counts = records::counts(db, org_id, &ids).await?;
    Ok(OwnedPage {
        jobs: jobs
            .into_iter()
            .map(|job| Owned {
                counts: counts.get(&job.id).copied().unwrap_or_default(),
                job,
            })
            .collect(),
        total,
    })
}

/// The `n` newest jobs `member` owns, every status, and how many it owns (the account's
/// summary: without the counts of [`page`]).
pub async fn newest(db: &Db, org_id: OrgId, member: &Member, n: i64) -> Result<(Vec<Job>, i64)> {
    Ok(records::owned_jobs(db, org_id, member.id, 0, n).await?)
}

/// Job `id`, when `member` owns it.
pub async fn owned(db: &Db, org_id: OrgId, member: &Member, id: JobId) -> Result<Job> {
    match jobs::get(db, org_id, id).await {
        Ok(job) if job.owner_user_id == Some(member.id) => Ok(job),
        Ok(_) | Err(Error::NotFound(_)) => Err(Error::NotFound("job")),
        Err(e) => Err(e),
    }
}

/// Posts a job owned by `member` from a create body (the board's form: no staff-only
/// field).
pub async fn create(db: &Db, org: &Org, member: &Member, mut body: Input) -> Result<Job> {
    may_post(member).map_err(refused)?;
    body.set("owner_user_id", json!(member.id));
    body.set("status", json!(posted_status(org)));
    jobs::create(db, org.id, body).await
}

/// Changes job `id` of `member` from a patch body; a listed or waiting job waits for
/// approval again unless the organization trusts its members.
pub async fn edit(db: &Db, org: &Org, member: &Member, id: JobId, mut body: Input) -> Result<Job> {
    let job = owned(db, org.id, member, id).await?;
    may_post(member).map_err(refused)?;
    if matches!(job.status, JobStatus::Active | JobStatus::Pending) {
        body.set("status", json!(posted_status(org)));
    }
    jobs::update(db, org.id, id, body).await
}

/// Closes job `id` of `member`: `expired` at once (with `job.expired`).
pub async fn close(db: &Db, org_id: OrgId, member: &Member, id: JobId) -> Result<Job> {
    let job = owned(db, org_id, member, id).await?;
    if job.status == JobStatus::Expired {
        return Ok(job);
    }
    jobs::set_status(db, org_id, id, JobStatus::Expired).await
}

/// Renews expired job `id` of `member`: back to `pending` (or `active` where members
/// are trusted), expiring [`RENEWAL`] from now.
pub async fn renew(db: &Db, org: &Org, member: &Member, id: JobId) -> Result<Job> {
    let job = owned(db, org.id, member, id).await?;
    may_post(member).map_err(refused)?;
    if job.status != JobStatus::Expired {
        return Err(Error::conflict(
            "Only a closed or expired job can be renewed.",
            json!({ "reason": "not_expired" }),
        ));
    }
    let expires = db.now().later_by(RENEWAL);
    let mut body = Input::new(serde_json::Map::new());
    body.set("status", json!(posted_status(org)));
    body.set("expires_at", json!(expires));
    jobs::update(db, org.id, id, body).await
}

/// The applications made on the board's form to job `id` of `member`, newest first.
pub async fn applications(
    db: &Db,
    org_id: OrgId,
    member: &Member,
    id: JobId,
) -> Result<(Job, Vec<Application>)> {
    let job = owned(db, org_id, member, id).await?;
    let rows = records::applications_of_job(db, org_id, id).await?;
    Ok((job, rows))
}
