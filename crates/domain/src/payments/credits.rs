//! Job credits: a member whose live access record (`active` or `trialing`) has
//! `jobsRemaining > 0` (a pack of posts bought as a plan) posts without a checkout, taking
//! one post from it. The take is one guarded statement, so concurrent posts never take a
//! record below zero; a post that is then refused (a field to correct) gives it back.
//! The job becomes what a paid post becomes (`paid_posts`).

use serde_json::json;

use super::store;
use crate::{
    Input, Result,
    db::Db,
    jobs::{self, Job, JobStatus},
    members::Member,
    orgs::{Org, PaidPosts},
};

/// The job posts the member has left.
pub async fn left(db: &Db, org: &Org, member: &Member) -> Result<i64> {
    Ok(store::credits_left(db, org.id, member.id).await?)
}

/// Posts the job of `body` for `member` with one of its credits: `None` (nothing taken,
/// nothing stored) when it has none left.
pub async fn post(db: &Db, org: &Org, member: &Member, mut body: Input) -> Result<Option<Job>> {
    let Some(access) = store::spend_credit(db, org.id, member.id, db.now()).await? else {
        return Ok(None);
    };
    let status = match org.paid_posts {
        PaidPosts::Pending => JobStatus::Pending,
        PaidPosts::Active => JobStatus::Active,
    };
    body.set("status", json!(status));
    body.set("owner_user_id", json!(member.id));
    match jobs::create(db, org.id, body).await {
        Ok(job) => {
            tracing::info!(org_id = org.id.0, job_id = %job.id, access_id = %access, "job posted with a credit");
            Ok(Some(job))
        }
        Err(e) => {
            store::give_back_credit(db, access, db.now()).await?;
            Err(e)
        }
    }
}
