//! Jobs: the operations the API, the board and the dashboard call to list, read, create,
//! change, delete and expire jobs. Each validates its input (every bad field at once),
//! applies the rules, and stores the change with its events in one transaction.

mod batch;
pub mod board;
pub mod events;
mod find;
mod index;
pub mod indexes;
mod list;
pub mod model;
pub(crate) mod notices;
mod search;
mod store;

use uuid::Uuid;

pub use board::{ListKey, LiveJob, Start, count_live, get_many, live_batch, live_jobs};
pub use list::{JobListQuery, ListPage, ListQuery, list, list_seen, next_expiry};
pub use model::*;

use crate::{
    Error, Field, FieldError, Input, JobId, OrgId, Result, Ts,
    db::{Db, Owned, owned_ids},
    html, links,
};

/// One job of the organization.
pub async fn get(db: &Db, org_id: OrgId, id: JobId) -> Result<Job> {
    store::get(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("job"))
}

/// True when `id` is a job of the organization.
pub async fn exists(db: &Db, org_id: OrgId, id: JobId) -> Result<bool> {
    Ok(!owned_ids(db, Owned::Jobs, org_id, &[id]).await?.is_empty())
}

/// Stores a job its caller built and checked itself (the storage path of [`create`],
/// without the checks), with `job.created`. Concurrent creations share a commit on
/// SQLite; one's failure never undoes another's.
pub async fn create_checked(db: &Db, org_id: OrgId, job: Job) -> Result<Job> {
    Ok(batch::create(db, org_id, job).await?)
}

/// One job of the organization by its slug, whatever its status.
pub async fn get_by_slug(db: &Db, org_id: OrgId, slug: &str) -> Result<Option<Job>> {
    Ok(store::get_by_slug(db, org_id, slug).await?)
}

/// Creates a job from a create body (status `pending` unless sent). Emits `job.created`.
pub async fn create(db: &Db, org_id: OrgId, body: Input) -> Result<Job> {
    let job = build(db, org_id, body).await?;
    Ok(batch::create(db, org_id, job).await?)
}

/// The job a create body makes, checked as [`create`] checks it (every bad field at
/// once), with a new id: not stored (storing it stamps its times again).
pub(crate) async fn build(db: &Db, org_id: OrgId, mut body: Input) -> Result<Job> {
    let changes = JobChanges::read(&mut body, true);
    check_category(db, org_id, &changes, &mut body).await?;
    let policy = Policy::of(db, org_id).await?;
    let mut errors = body.into_errors();
    let (changes, text) = prepare(changes, &mut errors).await?;
    let mut job = Job::default();
    let sent = Sent::of(&changes, None);
    changes.apply(&mut job);
    derive_method(&mut job, &sent);
    errors.extend(check_rules(&job, &sent, policy));
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let now = db.now();
    job.id = JobId(Uuid::now_v7());
    job.description_text = text.unwrap_or_default();
    job.created_at = now;
    job.updated_at = now;
    Ok(job)
}

/// Stores jobs made by [`build`] in the caller's transaction `tx`, each with
/// `job.created` (an import's page of jobs commits together), as concurrent creations
/// are stored: the jobs with one statement, their events with another. Any job's failure
/// fails the call (and leaves `tx` to be rolled back).
pub(crate) async fn create_all_in(
    tx: &mut crate::db::Tx,
    outgoing: Option<&crate::db::Outgoing>,
    org_id: OrgId,
    jobs: Vec<Job>,
) -> Result<Vec<Job>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut rows: Vec<(OrgId, Job)> = jobs.into_iter().map(|job| (org_id, job)).collect();
    let mut last = Ts::from_micros(0);
    let stored = batch::store_all(tx, outgoing, &mut rows, &mut last).await?;
    Ok(stored.into_iter().collect::<crate::db::DbResult<_>>()?)
}

/// Checked changes of a job: what [`changes`] makes of a patch body.
pub(crate) struct Checked {
    changes: JobChanges,
    text: Option<String>,
    policy: Policy,
}

/// The changes a patch body makes, checked as [`update`] checks them: not applied.
pub(crate) async fn changes(db: &Db, org_id: OrgId, mut body: Input) -> Result<Checked> {
    let changes = JobChanges::read(&mut body, false);
    check_category(db, org_id, &changes, &mut body).await?;
    let policy = Policy::of(db, org_id).await?;
    let mut errors = body.into_errors();
    let (changes, text) = prepare(changes, &mut errors).await?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    Ok(Checked {
        changes,
        text,
        policy,
    })
}

/// Applies checked changes to job `id` in the caller's transaction `tx`, with the events
/// of [`update`]; `None` when there is no such job.
pub(crate) async fn apply_in(
    tx: &mut crate::db::Tx,
    outgoing: Option<&crate::db::Outgoing>,
    org_id: OrgId,
    id: JobId,
    checked: Checked,
) -> Result<Option<Job>> {
    store::update_in(
        tx,
        outgoing,
        org_id,
        id,
        plan(checked.changes, checked.text, checked.policy),
    )
    .await
}

/// Changes a job from a patch body (at least one field). Emits `job.updated` with the
/// changed fields and, on a status move, `job.status_changed` plus `job.approved` (to
/// active) or `job.expired` (to expired). A body that changes nothing emits nothing.
pub async fn update(db: &Db, org_id: OrgId, id: JobId, body: Input) -> Result<Job> {
    if body.is_empty() {
        return Err(Error::field(
            "body",
            "required",
            "Send at least one field to change.",
        ));
    }
    let checked = changes(db, org_id, body).await?;
    apply(db, org_id, id, checked).await
}

/// Moves a job to `status` (approving it when `active`), with the events of
/// [`update`].
pub async fn set_status(db: &Db, org_id: OrgId, id: JobId, status: JobStatus) -> Result<Job> {
    let changes = JobChanges {
        status: Field::Value(status),
        ..JobChanges::default()
    };
    let policy = Policy::of(db, org_id).await?;
    let checked = Checked {
        changes,
        text: None,
        policy,
    };
    apply(db, org_id, id, checked).await
}

/// Applies checked changes to the stored job, in its transaction.
async fn apply(db: &Db, org_id: OrgId, id: JobId, checked: Checked) -> Result<Job> {
    store::update(
        db,
        org_id,
        id,
        plan(checked.changes, checked.text, checked.policy),
    )
    .await?
    .ok_or(Error::NotFound("job"))
}

/// What checked changes make of a stored job (refused when the result breaks a rule).
fn plan(
    changes: JobChanges,
    text: Option<String>,
    policy: Policy,
) -> impl FnOnce(&Job) -> Result<Job> {
    move |current| {
        let sent = Sent::of(&changes, Some(current));
        let mut next = current.clone();
        changes.apply(&mut next);
        derive_method(&mut next, &sent);
        if let Some(text) = text {
            next.description_text = text;
        }
        let errors = check_rules(&next, &sent, policy);
        if errors.is_empty() {
            Ok(next)
        } else {
            Err(Error::Invalid(errors))
        }
    }
}

/// Moves job `id` to `status` in the caller's transaction `tx`, with the events of
/// [`update`]: the status it had and the job, or `None` when there is no such job.
pub(crate) async fn set_status_in(
    tx: &mut crate::db::Tx,
    outgoing: Option<&crate::db::Outgoing>,
    org_id: OrgId,
    id: JobId,
    status: JobStatus,
) -> Result<Option<(JobStatus, Job)>> {
    let mut before = status;
    let job = store::update_in(tx, outgoing, org_id, id, |current| {
        before = current.status;
        let mut next = current.clone();
        next.status = status;
        Ok(next)
    })
    .await?;
    Ok(job.map(|j| (before, j)))
}

/// What a payment changes of a job.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Paid {
    pub status: Option<JobStatus>,
    pub expires_at: Option<Ts>,
    /// Featured (sticky) until then.
    pub featured_until: Option<Ts>,
}

/// Applies `paid` to job `id` in the caller's transaction `tx`, with the events of
/// [`update`]: a paid post published, a featured upgrade, or a refunded post taken
/// down, together with its payment.
pub(crate) async fn set_paid_in(
    tx: &mut crate::db::Tx,
    outgoing: Option<&crate::db::Outgoing>,
    org_id: OrgId,
    id: JobId,
    paid: Paid,
) -> Result<Option<Job>> {
    store::update_in(tx, outgoing, org_id, id, |current| {
        let mut next = current.clone();
        if let Some(s) = paid.status {
            next.status = s;
        }
        if paid.expires_at.is_some() {
            next.expires_at = paid.expires_at;
        }
        if paid.featured_until.is_some() {
            next.featured_until = paid.featured_until;
            next.is_sticky = true;
        }
        Ok(next)
    })
    .await
}

/// Ends the featuring of jobs whose `featured_until` has passed (they stop being
/// sticky, with `job.updated`), each in its own transaction; how many.
pub async fn unfeature_due(db: &Db, now: Ts) -> Result<u64> {
    let mut moved = 0;
    for (org_id, id) in store::featured_due(db, now).await? {
        let changed = store::update(db, org_id, id, |current| {
            let mut next = current.clone();
            if current
                .featured_until
                .is_some_and(|t| t.micros() <= now.micros())
            {
                next.is_sticky = false;
                next.featured_until = None;
            }
            Ok(next)
        })
        .await?;
        if changed.is_some() {
            moved += 1;
        }
    }
    Ok(moved)
}

/// Deletes a job permanently. Emits `job.deleted`. A job that other records (payments)
/// still refer to is a conflict.
pub async fn delete(db: &Db, org_id: OrgId, id: JobId) -> Result<Job> {
    store::delete(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("job"))
}

/// Which of `ids` (jobs of the organization) the list `f` would show at `now`: what
/// job alerts match new jobs with, so that an alert sends what `GET /api/jobs` with its
/// filters lists.
pub async fn matching(
    db: &Db,
    org_id: OrgId,
    f: &ListFilter,
    ids: &[JobId],
    now: Ts,
) -> Result<Vec<JobId>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(search::matching(db, org_id, f, chunk, now).await?);
    }
    Ok(out)
}

/// The scheduler's expiry reminders: for every organization with reminders on
/// (`mail_expiry_days` > 0) while the service sends mail, each active job with a contact
/// address that expires within that many days and was not reminded of this `expires_at`
/// yet gets its reminder, marked in the same transaction as its mail (guarded, so with
/// several nodes each is sent once; a moved expiry gets a new one). Answers how many.
pub async fn remind_expiring(db: &Db, now: Ts) -> Result<u64> {
    let Some(out) = db.outgoing() else {
        return Ok(0);
    };
    let mut sent = 0;
    for (org_id, days) in store::reminding_orgs(db).await? {
        let until = now.later_by(std::time::Duration::from_secs(
            u64::try_from(days).unwrap_or(0) * 86_400,
        ));
        loop {
            let due = store::reminders_due(db, org_id, now, until, 200).await?;
            let n = due.len();
            for id in due {
                let mut tx = db.begin().await?;
                if let Some(job) = store::mark_reminded(&mut tx, org_id, id).await? {
                    notices::reminder(&mut tx, out, org_id, &job).await?;
                    sent += 1;
                }
                tx.commit().await?;
            }
            if n < 200 {
                break;
            }
        }
    }
    Ok(sent)
}

/// Moves every active job past its `expires_at` to `expired` (the scheduler's pass).
pub async fn expire_due(db: &Db, now: Ts) -> Result<u64> {
    Ok(store::expire_due(db, now).await?)
}

/// What a board requires of its jobs beyond each field's own checks (its settings
/// `require_salary` and `require_remote_countries`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Policy {
    salary: bool,
    remote_countries: bool,
}

impl Policy {
    async fn of(db: &Db, org_id: OrgId) -> Result<Policy> {
        let (salary, remote_countries) = store::policy(db, org_id)
            .await?
            .ok_or(Error::NotFound("organization"))?;
        Ok(Policy {
            salary,
            remote_countries,
        })
    }
}

/// Which of the fields that rules look at were sent, and whether the board's
/// requirements apply: always to a new job; to a change only when it touches the fields
/// they are about or publishes the job (a job stored before a requirement was turned on
/// can still be edited otherwise).
struct Sent {
    salary_min: bool,
    how_to_apply: bool,
    salary_required: bool,
    countries_required: bool,
}

/// When `how_to_apply` was sent and the job has no method (none sent, none stored), the
/// method its text names: an email address is `email`, an http(s) URL `website`, a phone
/// number `phone`, anything else `form` (candidates apply on the board).
fn derive_method(job: &mut Job, sent: &Sent) {
    if !sent.how_to_apply || job.how_to_apply_method.is_some() {
        return;
    }
    if let Some(target) = job.how_to_apply.as_deref() {
        let target = target.trim();
        job.how_to_apply_method = Some(
            if links::is_email(target.strip_prefix("mailto:").unwrap_or(target)) {
                ApplyMethod::Email
            } else if links::is_http_url(target) {
                ApplyMethod::Website
            } else if links::is_phone(target.strip_prefix("tel:").unwrap_or(target)) {
                ApplyMethod::Phone
            } else {
                ApplyMethod::Form
            },
        );
    }
}

impl Sent {
    /// What `c` sends, to a new job (`current` is `None`) or to `current`.
    fn of(c: &JobChanges, current: Option<&Job>) -> Sent {
        let publishes = match current {
            None => true,
            Some(job) => {
                matches!(c.status, Field::Value(JobStatus::Active))
                    && job.status != JobStatus::Active
            }
        };
        Sent {
            salary_min: c.salary_min.is_present(),
            how_to_apply: c.how_to_apply.is_present(),
            salary_required: publishes || c.salary_min.is_present() || c.salary_max.is_present(),
            countries_required: publishes
                || c.is_remote.is_present()
                || c.remote_countries.is_present(),
        }
    }
}

/// Adds a `category_id` error unless the category sent is one of the organization's.
async fn check_category(
    db: &Db,
    org_id: OrgId,
    changes: &JobChanges,
    body: &mut Input,
) -> Result<()> {
    if let Field::Value(id) = changes.category_id
        && owned_ids(db, Owned::Categories, org_id, &[id])
            .await?
            .is_empty()
    {
        body.error(
            "category_id",
            "not_found",
            "No category with this id exists in the organization.",
        );
    }
    if let Field::Value(id) = changes.owner_user_id
        && owned_ids(db, Owned::Members, org_id, &[id])
            .await?
            .is_empty()
    {
        body.error(
            "owner_user_id",
            "not_found",
            "No member with this id exists in the organization.",
        );
    }
    Ok(())
}

/// Sanitises a sent description (off the request threads); returns the changes with
/// the sanitised HTML and the description's text.
async fn prepare(
    mut changes: JobChanges,
    errors: &mut Vec<FieldError>,
) -> Result<(JobChanges, Option<String>)> {
    let Field::Value(raw) = std::mem::take(&mut changes.description) else {
        return Ok((changes, None));
    };
    match html::sanitize(raw).await {
        Ok(clean) if clean.html.trim().is_empty() => {
            errors.push(FieldError::new(
                "description",
                "too_short",
                "Nothing is left of the description once unsafe HTML is removed.",
            ));
            Ok((changes, None))
        }
        Ok(clean) => {
            changes.description = Field::Value(clean.html);
            Ok((changes, Some(clean.text)))
        }
        Err(html::Refused::TooDeep) => {
            errors.push(FieldError::new(
                "description",
                "too_deep",
                format!(
                    "HTML elements may be nested at most {} levels deep.",
                    html::MAX_DEPTH
                ),
            ));
            Ok((changes, None))
        }
        Err(html::Refused::Failed) => Err(Error::Internal("the description sanitiser failed")),
    }
}

/// The rules that need several fields of the resulting job, and the board's
/// requirements.
fn check_rules(job: &Job, sent: &Sent, policy: Policy) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if policy.salary && sent.salary_required {
        for (field, value) in [
            ("salary_min", job.salary_min),
            ("salary_max", job.salary_max),
        ] {
            if value.is_none() {
                errors.push(FieldError::new(
                    field,
                    "required",
                    "This board lists only jobs with a salary range: give the lowest and the highest pay.",
                ));
            }
        }
    }
    if policy.remote_countries
        && sent.countries_required
        && job.is_remote
        && job.remote_countries.as_ref().is_none_or(|c| c.is_empty())
    {
        errors.push(FieldError::new(
            "remote_countries",
            "required",
            "This board requires remote jobs to name the countries they may be done from.",
        ));
    }
    if let (Some(min), Some(max)) = (job.salary_min, job.salary_max)
        && min > max
    {
        let field = if sent.salary_min {
            "salary_min"
        } else {
            "salary_max"
        };
        errors.push(FieldError::new(
            field,
            "out_of_range",
            "salary_min must not be greater than salary_max.",
        ));
    }
    if let (Some(target), Some(method)) = (&job.how_to_apply, job.how_to_apply_method) {
        let field = if sent.how_to_apply {
            "how_to_apply"
        } else {
            "how_to_apply_method"
        };
        match method {
            ApplyMethod::Website | ApplyMethod::FormExternal if !links::is_http_url(target) => {
                errors.push(FieldError::new(
                    field,
                    "invalid_format",
                    "With how_to_apply_method website or form-external, how_to_apply must be an absolute http(s) URL.",
                ));
            }
            ApplyMethod::Phone
                if !links::is_phone(
                    target.trim().strip_prefix("tel:").unwrap_or(target.trim()),
                ) =>
            {
                errors.push(FieldError::new(
                    field,
                    "invalid_format",
                    "With how_to_apply_method phone, how_to_apply must be a telephone number (6 to 20 digits, an optional leading +).",
                ));
            }
            ApplyMethod::Email
                if !links::is_email(
                    target
                        .trim()
                        .strip_prefix("mailto:")
                        .unwrap_or(target.trim()),
                ) =>
            {
                errors.push(FieldError::new(
                    field,
                    "invalid_format",
                    "With how_to_apply_method email, how_to_apply must be an email address.",
                ));
            }
            _ => {}
        }
    }
    errors
}
