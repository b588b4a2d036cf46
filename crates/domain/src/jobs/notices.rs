//! What a job's write tells others besides its events: search engines, through notices
//! written in its transaction (`crate::indexing` writes them, the indexing worker delivers
//! them; which change tells what is decided here, [`indexing_action`]); and mail to
//! employers: to a job's `contact_email` when the job goes live (posted as `active`, or
//! approved), a reminder some days before it expires, and on each application (the
//! applicant's name and address, no attachment). Each mail is switched per organization
//! (`mail_job_live`, `mail_expiry_days`, `mail_applications`) and needs a
//! contact address on the job. Mail is queued in the transaction of its cause (see
//! `crate::mail`), and only when the service sends mail at all ([`Db::outgoing`]).

use std::collections::{HashMap, hash_map::Entry};

use super::model::{Job, JobStatus, url_of};
use crate::{
    OrgId, Ts,
    applications::model::Application,
    db::{DbResult, Outgoing, Tx},
    dispatch_tx,
    html::escape as h,
    indexing::{self, Action},
    mail::{
        message::Message,
        store::{EnqueueError, enqueue},
    },
};

/// What an organization's mail settings and links need.
#[derive(Debug, Clone, sqlx::FromRow)]
struct OrgMail {
    name: String,
    domain: Option<String>,
    mail_job_live: bool,
    mail_applications: bool,
}

async fn org_mail(tx: &mut Tx, org_id: OrgId) -> DbResult<Option<OrgMail>> {
    Ok(dispatch_tx!(tx, t => {
        sqlx::query_as(
            "SELECT name, domain, mail_job_live, mail_applications FROM organizations WHERE id = $1",
        )
        .bind(org_id)
        .fetch_optional(&mut **t)
        .await?
    }))
}

/// Queues `msg`; a message the outbox refuses (which checked addresses cannot cause) is
/// logged and dropped rather than failing the write that caused it.
async fn queue(tx: &mut Tx, org_id: OrgId, msg: Message) -> DbResult<()> {
    match enqueue(tx, org_id, &msg).await {
        Ok(_) => Ok(()),
        Err(EnqueueError::Invalid(why)) => {
            tracing::warn!(kind = %msg.kind, %why, "employer mail not queued");
            Ok(())
        }
        Err(EnqueueError::Db(e)) => Err(e),
    }
}

fn day(t: Ts) -> String {
    t.0.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// Fields a change of which is not a change of the job's public page.
const UNSEEN: &[&str] = &[
    "owner_user_id",
    "is_highlighted",
    "is_sticky",
    "featured_until",
    "status",
];

/// What a write that turned `before` into `after` (`None`: no job) tells search engines.
pub(crate) fn indexing_action(before: Option<&Job>, after: Option<&Job>) -> Option<Action> {
    let live = |j: Option<&Job>| j.is_some_and(|j| j.status == JobStatus::Active);
    match (live(before), live(after)) {
        (false, true) => Some(Action::Updated),
        (true, false) => Some(Action::Deleted),
        (true, true) => {
            let (b, a) = (before?, after?);
            b.changed(a)
                .iter()
                .any(|f| !UNSEEN.contains(f))
                .then_some(Action::Updated)
        }
        (false, false) => None,
    }
}

/// The search engines' notices of the write that turned `before` into `after`.
pub(crate) async fn tell_search_engines(
    tx: &mut Tx,
    org_id: OrgId,
    before: Option<&Job>,
    after: Option<&Job>,
) -> DbResult<()> {
    let (Some(action), Some(job)) = (indexing_action(before, after), after.or(before)) else {
        return Ok(());
    };
    let path = url_of(&job.slug);
    indexing::note(tx, org_id, page(job, &path), action).await
}

/// What a notice of `job`, whose page is at `path`, names.
pub(crate) fn page<'a>(job: &Job, path: &'a str) -> indexing::Page<'a> {
    indexing::Page {
        job_id: job.id,
        path,
        featured: job.is_sticky,
        created_at: job.created_at,
    }
}

/// After a write that left `job` as stored (`before`: as it was, `None` for a new job):
/// the search engines' notices, and when it went live, the "job is live" mail.
pub(crate) async fn job_written(
    tx: &mut Tx,
    out: Option<&Outgoing>,
    org_id: OrgId,
    before: Option<&Job>,
    job: &Job,
) -> DbResult<()> {
    tell_search_engines(tx, org_id, before, Some(job)).await?;
    if goes_live(before, job) {
        went_live(tx, out, &[(org_id, job)]).await?;
    }
    Ok(())
}

/// [`job_written`] for jobs created together in `tx` (a batch; no two with the same slug
/// in one organization): the search engines' notices of them all with one statement,
/// then what follows for those created live ([`went_live`]).
pub(crate) async fn jobs_created(
    tx: &mut Tx,
    out: Option<&Outgoing>,
    jobs: &[(OrgId, &Job)],
) -> DbResult<()> {
    let paths: Vec<String> = jobs.iter().map(|(_, job)| url_of(&job.slug)).collect();
    let notes: Vec<_> = jobs
        .iter()
        .zip(&paths)
        .filter_map(|((org_id, job), path)| {
            indexing_action(None, Some(job)).map(|action| (*org_id, page(job, path), action))
        })
        .collect();
    indexing::note_all(tx, &notes).await?;
    let live: Vec<(OrgId, &Job)> = jobs
        .iter()
        .filter(|(_, job)| goes_live(None, job))
        .copied()
        .collect();
    went_live(tx, out, &live).await
}

/// Whether creating `job` queues mail ([`went_live`]: its line in the live-jobs log and
/// its "job is live" mail, when the service sends mail).
pub(crate) fn created_with_mail(out: Option<&Outgoing>, job: &Job) -> bool {
    out.is_some() && goes_live(None, job)
}

/// True when the write that turned `before` into `job` put it live.
fn goes_live(before: Option<&Job>, job: &Job) -> bool {
    job.status == JobStatus::Active && before.is_none_or(|b| b.status != JobStatus::Active)
}

/// For `jobs` that just went live, when the service sends mail: their lines in the
/// live-jobs log (one statement) and each one's "job is live" mail (an organization's
/// settings read once).
async fn went_live(tx: &mut Tx, out: Option<&Outgoing>, jobs: &[(OrgId, &Job)]) -> DbResult<()> {
    let Some(out) = out else {
        return Ok(());
    };
    record_live(tx, jobs).await?;
    let mut orgs: HashMap<OrgId, Option<OrgMail>> = HashMap::new();
    for &(org_id, job) in jobs {
        if job.contact_email.is_none() {
            continue;
        }
        if let Entry::Vacant(entry) = orgs.entry(org_id) {
            entry.insert(org_mail(tx, org_id).await?);
        }
        if let Some(org) = &orgs[&org_id] {
            live_mail(tx, out, org_id, org, job).await?;
        }
    }
    Ok(())
}

/// The "job is live" mail of `job` to its contact address, when it has one and its
/// organization `org` sends it.
async fn live_mail(
    tx: &mut Tx,
    out: &Outgoing,
    org_id: OrgId,
    org: &OrgMail,
    job: &Job,
) -> DbResult<()> {
    let Some(to) = job.contact_email.as_deref() else {
        return Ok(());
    };
    if !org.mail_job_live {
        return Ok(());
    }
    let url = out.board_url(org.domain.as_deref(), &url_of(&job.slug));
    let until = job.expires_at.map_or_else(
        || "until it is closed".to_string(),
        |t| format!("until {}", day(t)),
    );
    let subject = format!("Your job is live: {}", job.title);
    let text = format!(
        "Your job “{}” at {} is now listed on {}:\n\n{url}\n\nIt stays listed {until}.\n",
        job.title, job.company_name, org.name
    );
    let html = format!(
        "<p>Your job “{}” at {} is now listed on {}:</p><p><a href=\"{}\">{}</a></p><p>It stays listed {}.</p>",
        h(&job.title),
        h(&job.company_name),
        h(&org.name),
        h(&url),
        h(&url),
        h(&until)
    );
    queue(
        tx,
        org_id,
        Message::new("job_live", to, subject, text).html(html),
    )
    .await
}

/// Notes in the live-jobs log that `jobs` went live (each its first time only), with one
/// statement: what job alerts match against (kept while the service sends mail, as
/// alerts exist only then).
async fn record_live(tx: &mut Tx, jobs: &[(OrgId, &Job)]) -> DbResult<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    let now = tx.now();
    dispatch_tx!(tx, t => {
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO job_live_log (org_id, job_id, live_at) ");
        qb.push_values(jobs, |mut row, (org_id, job)| {
            row.push_bind(*org_id).push_bind(job.id).push_bind(now);
        });
        qb.push(" ON CONFLICT (job_id) DO NOTHING");
        // One job's statement is always the same text: kept prepared.
        qb.build()
            .persistent(jobs.len() == 1)
            .execute(&mut **t)
            .await?;
    });
    Ok(())
}

/// After an application was stored: the mail to its job's contact address.
pub(crate) async fn application_received(
    tx: &mut Tx,
    out: Option<&Outgoing>,
    org_id: OrgId,
    app: &Application,
) -> DbResult<()> {
    let Some(out) = out else {
        return Ok(());
    };
    let contact: Option<(Option<String>,)> = dispatch_tx!(tx, t => {
        sqlx::query_as("SELECT contact_email FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(app.job_id)
            .fetch_optional(&mut **t)
            .await
            .map_err(crate::db::StoreError::from)?
    });
    let Some((Some(to),)) = contact else {
        return Ok(());
    };
    let Some(org) = org_mail(tx, org_id).await? else {
        return Ok(());
    };
    if !org.mail_applications {
        return Ok(());
    }
    let dashboard = format!("{}/dashboard/applications?job={}", out.base_url, app.job_id);
    let cv = app
        .resume_url
        .as_deref()
        .map(|u| format!("CV: {u}\n"))
        .unwrap_or_default();
    let subject = format!("New application for {} from {}", app.job_title, app.name);
    let text = format!(
        "{} applied for “{}”.\n\nName: {}\nEmail: {}\n{cv}\nRead and answer it in the dashboard:\n{dashboard}\n",
        app.name, app.job_title, app.name, app.email
    );
    let html = format!(
        "<p>{} applied for “{}”.</p><ul><li>Name: {}</li><li>Email: <a href=\"mailto:{}\">{}</a></li>{}</ul><p><a href=\"{}\">Read and answer it in the dashboard</a></p>",
        h(&app.name),
        h(&app.job_title),
        h(&app.name),
        h(&app.email),
        h(&app.email),
        app.resume_url
            .as_deref()
            .map(|u| format!("<li>CV: <a href=\"{}\">{}</a></li>", h(u), h(u)))
            .unwrap_or_default(),
        h(&dashboard)
    );
    queue(
        tx,
        org_id,
        Message::new("application_received", to, subject, text).html(html),
    )
    .await
}

/// The expiry reminder of `job` (just marked as reminded of its `expires_at`).
pub(super) async fn reminder(
    tx: &mut Tx,
    out: &Outgoing,
    org_id: OrgId,
    job: &Job,
) -> DbResult<()> {
    let (Some(to), Some(expires)) = (job.contact_email.as_deref(), job.expires_at) else {
        return Ok(());
    };
    let Some(org) = org_mail(tx, org_id).await? else {
        return Ok(());
    };
    let url = out.board_url(org.domain.as_deref(), &url_of(&job.slug));
    let dashboard = format!("{}/dashboard/jobs/{}", out.base_url, job.id);
    let subject = format!("Your job expires soon: {}", job.title);
    let text = format!(
        "Your job “{}” on {} expires on {}:\n\n{url}\n\nTo keep it listed, move its expiry date in the dashboard:\n{dashboard}\n",
        job.title,
        org.name,
        day(expires)
    );
    let html = format!(
        "<p>Your job “{}” on {} expires on {}:</p><p><a href=\"{}\">{}</a></p><p>To keep it listed, <a href=\"{}\">move its expiry date in the dashboard</a>.</p>",
        h(&job.title),
        h(&org.name),
        day(expires),
        h(&url),
        h(&url),
        h(&dashboard)
    );
    queue(
        tx,
        org_id,
        Message::new("job_expiring", to, subject, text).html(html),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_write_tells_search_engines() {
        let live = Job {
            status: JobStatus::Active,
            title: "Baker".into(),
            ..Job::default()
        };
        let pending = Job {
            status: JobStatus::Pending,
            ..live.clone()
        };
        let tells = indexing_action;
        assert_eq!(tells(None, Some(&live)), Some(Action::Updated));
        assert_eq!(tells(None, Some(&pending)), None);
        assert_eq!(tells(Some(&pending), Some(&live)), Some(Action::Updated));
        assert_eq!(tells(Some(&live), None), Some(Action::Deleted));
        assert_eq!(tells(Some(&live), Some(&pending)), Some(Action::Deleted));
        let retitled = Job {
            title: "Night baker".into(),
            ..live.clone()
        };
        assert_eq!(tells(Some(&live), Some(&retitled)), Some(Action::Updated));
        let sticky = Job {
            is_sticky: true,
            ..live.clone()
        };
        assert_eq!(tells(Some(&live), Some(&sticky)), None);
        assert_eq!(tells(Some(&pending), None), None);
    }
}
