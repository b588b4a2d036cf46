//! Jobs as stored: read, insert, update, delete and expire, each change with its events
//! in one transaction. The SQL follows from [`Job`]'s column lists.

use std::sync::LazyLock;

use uuid::Uuid;

use super::{
    events::{self, JobEvent},
    model::{Job, JobStatus, url_of},
    notices,
};
use crate::{
    Error, JobId, OrgId, Result, Ts,
    db::{Backend, Db, DbResult, Tx, events as outbox},
    dispatch, dispatch_tx,
};

/// `$1, $2, ...` from `from` for `n` values.
pub(super) fn marks(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

static COLUMNS: LazyLock<String> = LazyLock::new(|| Job::COLUMNS.join(", "));

static INSERT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO jobs (org_id, {}) VALUES ($1, {}) RETURNING {}",
        Job::INSERTED.join(", "),
        marks(2, Job::INSERTED.len()),
        *COLUMNS
    )
});

static UPDATE: LazyLock<String> = LazyLock::new(|| {
    let sets: Vec<String> = Job::UPDATED
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ${}", i + 3))
        .collect();
    format!(
        "UPDATE jobs SET {} WHERE org_id = $1 AND id = $2 RETURNING {}",
        sets.join(", "),
        *COLUMNS
    )
});

/// Writes `events` to the outbox in `tx`.
pub(super) async fn emit(tx: &mut Tx, org_id: OrgId, events: Vec<JobEvent>) -> DbResult<()> {
    for e in events {
        outbox::emit_event(tx, org_id, &e).await?;
    }
    Ok(())
}

/// One job of this organization.
pub async fn get(db: &Db, org_id: OrgId, id: JobId) -> DbResult<Option<Job>> {
    let sql = format!(
        "SELECT {} FROM jobs WHERE org_id = $1 AND id = $2",
        *COLUMNS
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await?
    }))
}

/// One job of this organization by its slug.
pub async fn get_by_slug(db: &Db, org_id: OrgId, slug: &str) -> DbResult<Option<Job>> {
    let sql = format!(
        "SELECT {} FROM jobs WHERE org_id = $1 AND slug = $2",
        *COLUMNS
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(slug).fetch_optional(p).await?
    }))
}

async fn get_locked(tx: &mut Tx, org_id: OrgId, id: JobId) -> DbResult<Option<Job>> {
    let lock = if tx.backend() == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {} FROM jobs WHERE org_id = $1 AND id = $2{lock}",
        *COLUMNS
    );
    Ok(dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await?
    }))
}

/// Inserts the row (one statement: on failure nothing of it remains), created `at`: a
/// job takes its place in list order when it is written (the writing transaction's
/// time), not when its request was read, so jobs written concurrently reach the search
/// indexes nearly in list order (on SQLite exactly: one writer stamps them in turn).
pub(super) async fn insert(tx: &mut Tx, org_id: OrgId, job: &mut Job, at: Ts) -> DbResult<Job> {
    job.created_at = at;
    job.updated_at = at;
    Ok(dispatch_tx!(tx, t => {
        job.bind_insert(sqlx::query_as(sqlx::AssertSqlSafe(INSERT.as_str())).bind(org_id))
            .fetch_one(&mut **t)
            .await?
    }))
}

/// How many slugs a new job is offered ([`slug_for`]'s attempts) before a taken one fails
/// its creation.
pub(super) const SLUG_ATTEMPTS: u32 = 6;

/// The slug of a new job: title and company, ASCII lower-case; from the second attempt
/// on, with a short random suffix (so that a collision never scans the jobs that share a
/// title).
pub(super) fn slug_for(job: &Job, attempt: u32) -> String {
    let mut base = crate::text::slugify(&format!("{} {}", job.title, job.company_name), 80);
    if base.is_empty() {
        base = "job".to_string();
    }
    if attempt <= 1 {
        return base;
    }
    let suffix = Uuid::new_v4().simple().to_string()[..6].to_string();
    format!("{base}-{suffix}")
}

/// Inserts `job` under a free slug, in `tx`. The insert itself detects a taken slug (the
/// unique index) and is retried with a suffixed one. On failure nothing of it remains.
/// SQLite only: a failed statement leaves a SQLite transaction usable, a PostgreSQL one
/// aborted.
pub(super) async fn insert_new(tx: &mut Tx, org_id: OrgId, job: &Job, at: Ts) -> DbResult<Job> {
    let mut job = job.clone();
    let mut attempt = 0;
    loop {
        attempt += 1;
        job.slug = slug_for(&job, attempt);
        match insert(tx, org_id, &mut job, at).await {
            Err(e) if attempt < SLUG_ATTEMPTS && e.is_unique() => continue,
            other => return other,
        }
    }
}

/// Creates a job with its `job.created` event in a transaction of its own (one per
/// attempt: a taken slug is retried with a suffixed one).
pub(super) async fn create_alone(db: &Db, org_id: OrgId, job: &Job) -> DbResult<Job> {
    let mut job = job.clone();
    let mut attempt = 0;
    loop {
        attempt += 1;
        job.slug = slug_for(&job, attempt);
        let mut tx = db.begin().await?;
        let at = tx.now();
        match insert(&mut tx, org_id, &mut job, at).await {
            Err(e) if attempt < SLUG_ATTEMPTS && e.is_unique() => continue,
            Err(e) => return Err(e),
            Ok(stored) => {
                emit(&mut tx, org_id, events::created(&stored)).await?;
                notices::job_written(&mut tx, db.outgoing(), org_id, None, &stored).await?;
                tx.commit().await?;
                return Ok(stored);
            }
        }
    }
}

/// The statements of [`create_at_once`]: the row and its `job.created` event, and (the
/// second) the search engines' notices of the job too. The parameters: the organization,
/// the row's columns, the event's id, type and payload, the time; then the notices'
/// page (`crate::indexing::NOTICES_HEAD`'s `VALUES`, the organization's being `$1`).
static CREATE_AT_ONCE: LazyLock<[String; 2]> = LazyLock::new(|| {
    let n = Job::INSERTED.len();
    let e = n + 2;
    let now = e + 3;
    let with = format!(
        "WITH j AS (INSERT INTO jobs (org_id, {}) VALUES ($1, {}) RETURNING {}), \
         e AS (INSERT INTO events (id, org_id, event_type, data, occurred_at) \
               VALUES (${e}, $1, ${}, ${}, ${now}))",
        Job::INSERTED.join(", "),
        marks(2, n),
        *COLUMNS,
        e + 1,
        e + 2,
    );
    let page = format!(
        "${}, ${}, $1, ${}, ${}, ${}, ${}, ${}",
        now + 1,
        now + 2,
        now + 3,
        now + 4,
        now + 5,
        now + 6,
        now + 7
    );
    [
        format!("{with} SELECT j.*, 0::BIGINT AS noticed FROM j"),
        format!(
            "{with}, n AS ({}${now}, FALSE, ${now} FROM (VALUES ({page})) v CROSS JOIN{} \
             RETURNING 1) SELECT j.*, (SELECT COUNT(*) FROM n) AS noticed FROM j",
            crate::indexing::NOTICES_HEAD,
            crate::indexing::NOTICES_TAIL,
        ),
    ]
});

/// A job created by [`CREATE_AT_ONCE`], and how many notices of it were written.
#[derive(sqlx::FromRow)]
struct CreatedAtOnce {
    #[sqlx(flatten)]
    job: Job,
    noticed: i64,
}

/// Creates `job` on PostgreSQL as [`create_alone`] does (its `job.created` event, the
/// search engines' notices), in one statement that commits on its own: one round trip
/// where a transaction takes five (begin, the row, the event, the notices, commit). For
/// a creation that queues no mail (see `notices::created_with_mail`).
pub(super) async fn create_at_once(
    db: &Db,
    pool: &sqlx::PgPool,
    org_id: OrgId,
    job: &Job,
) -> DbResult<Job> {
    let mut job = job.clone();
    let mut attempt = 0;
    loop {
        attempt += 1;
        job.slug = slug_for(&job, attempt);
        match insert_at_once(db, pool, org_id, &mut job).await {
            Err(e) if attempt < SLUG_ATTEMPTS && e.is_unique() => continue,
            other => return other,
        }
    }
}

async fn insert_at_once(
    db: &Db,
    pool: &sqlx::PgPool,
    org_id: OrgId,
    job: &mut Job,
) -> DbResult<Job> {
    let at = db.now();
    job.created_at = at;
    job.updated_at = at;
    let event = events::created_one(job);
    let data = outbox::encode(&event)?;
    let action = notices::indexing_action(None, Some(job));
    let sql = &CREATE_AT_ONCE[usize::from(action.is_some())];
    let q = job
        .bind_insert(
            sqlx::query_as::<_, CreatedAtOnce>(sqlx::AssertSqlSafe(sql.as_str())).bind(org_id),
        )
        .bind(Uuid::now_v7())
        .bind(outbox::Payload::event_type(&event))
        .bind(sqlx::types::Json(&data))
        .bind(at);
    let path = url_of(&job.slug);
    let q = match action {
        Some(action) => {
            let page = notices::page(job, &path);
            q.bind(Uuid::now_v7())
                .bind(Uuid::now_v7())
                .bind(page.job_id)
                .bind(page.path)
                .bind(action.as_str())
                .bind(page.featured)
                .bind(page.created_at)
        }
        None => q,
    };
    let created = q.fetch_one(pool).await?;
    let mut channels = vec![outbox::OUTBOX_CHANNEL];
    outbox::OUTBOX_WAKE.notify_waiters();
    if created.noticed > 0 {
        channels.push(crate::indexing::store::CHANNEL);
        crate::indexing::store::WAKE.notify_waiters();
    }
    db.announce_commit(&channels);
    Ok(created.job)
}

/// Updates a job: `plan` turns the stored job into the new one (a pure function of the
/// row: it may refuse, or return `None` to change nothing). Writes `job.updated` with the
/// changed field names and the events of a status move. Answers the job as stored, or
/// `None` when there is no such job.
pub(super) async fn update(
    db: &Db,
    org_id: OrgId,
    id: JobId,
    plan: impl FnOnce(&Job) -> Result<Job>,
) -> Result<Option<Job>> {
    let mut tx = db.begin().await?;
    let job = update_in(&mut tx, db.outgoing(), org_id, id, plan).await?;
    if job.is_some() {
        tx.commit().await?;
    }
    Ok(job)
}

/// [`update`] in the caller's transaction `tx` (the change, its events and its mail
/// commit with the caller's other writes).
pub(crate) async fn update_in(
    tx: &mut Tx,
    outgoing: Option<&crate::db::Outgoing>,
    org_id: OrgId,
    id: JobId,
    plan: impl FnOnce(&Job) -> Result<Job>,
) -> Result<Option<Job>> {
    let Some(current) = get_locked(tx, org_id, id).await? else {
        return Ok(None);
    };
    let mut next = plan(&current)?;
    let changed = current.changed(&next);
    if changed.is_empty() {
        return Ok(Some(current));
    }
    next.updated_at = tx.now().max(current.updated_at);
    let job: Job = dispatch_tx!(tx, t => {
        next.bind_update(sqlx::query_as(sqlx::AssertSqlSafe(UPDATE.as_str())).bind(org_id).bind(id))
            .fetch_one(&mut **t)
            .await
            .map_err(crate::db::StoreError::from)?
    });
    emit(tx, org_id, events::updated(&current, &job, changed)).await?;
    notices::job_written(tx, outgoing, org_id, Some(&current), &job).await?;
    Ok(Some(job))
}

/// Deletes a job and writes `job.deleted`; `None` when there is none. A job that other
/// records still refer to is a conflict.
pub(super) async fn delete(db: &Db, org_id: OrgId, id: JobId) -> Result<Option<Job>> {
    let mut tx = db.begin().await?;
    let sql = format!(
        "DELETE FROM jobs WHERE org_id = $1 AND id = $2 RETURNING {}",
        *COLUMNS
    );
    let deleted: DbResult<Option<Job>> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await.map_err(Into::into)
    });
    let job = match deleted {
        Err(e) if e.is_referenced() => {
            return Err(Error::conflict(
                "The job is referenced by other records (for example payments) and cannot be deleted; set its status to expired or draft instead.",
                serde_json::json!({ "resource": "job" }),
            ));
        }
        other => other?,
    };
    let Some(job) = job else {
        return Ok(None);
    };
    emit(&mut tx, org_id, events::deleted(&job)).await?;
    notices::tell_search_engines(&mut tx, org_id, Some(&job), None).await?;
    tx.commit().await?;
    Ok(Some(job))
}

/// Moves every active job whose `expires_at` has passed to `expired`, each in its own
/// transaction with its events (`job.status_changed`, `job.expired`). The move is guarded
/// by the current status, so when several nodes run this at once a job moves, and its
/// events fire, once. Returns how many jobs moved.
pub(super) async fn expire_due(db: &Db, now: Ts) -> DbResult<u64> {
    let mut moved = 0;
    loop {
        let due: Vec<(OrgId, JobId)> = dispatch!(db.reader(), p => {
            sqlx::query_as(
                "SELECT org_id, id FROM jobs WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1
                 ORDER BY expires_at LIMIT 200",
            )
            .bind(now)
            .fetch_all(p)
            .await?
        });
        let batch = due.len();
        for (org_id, id) in due {
            let mut tx = db.begin().await?;
            let sql = format!(
                "UPDATE jobs SET status = 'expired', updated_at = $3 WHERE org_id = $1 AND id = $2 \
                 AND status = 'active' AND expires_at <= $3 RETURNING {}",
                *COLUMNS
            );
            let job: Option<Job> = dispatch_tx!(&mut tx, t => {
                sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).bind(now).fetch_optional(&mut **t).await?
            });
            if let Some(job) = job {
                emit(
                    &mut tx,
                    org_id,
                    events::status_moved(JobStatus::Active, &job),
                )
                .await?;
                let before = Job {
                    status: JobStatus::Active,
                    ..job.clone()
                };
                notices::tell_search_engines(&mut tx, org_id, Some(&before), Some(&job)).await?;
                tx.commit().await?;
                moved += 1;
            }
        }
        if batch < 200 {
            return Ok(moved);
        }
    }
}

/// What the organization requires of its jobs (`None`: no such organization).
pub(super) async fn policy(db: &Db, org_id: OrgId) -> DbResult<Option<(bool, bool)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT require_salary, require_remote_countries FROM organizations WHERE id = $1",
        )
        .bind(org_id)
        .fetch_optional(p)
        .await?
    }))
}

/// The organizations with expiry reminders on, with their number of days.
pub(super) async fn reminding_orgs(db: &Db) -> DbResult<Vec<(OrgId, i64)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, mail_expiry_days FROM organizations WHERE mail_expiry_days > 0 ORDER BY id")
            .fetch_all(p)
            .await?
    }))
}

/// Up to `limit` active jobs of the organization with a contact address that expire
/// after `from` and no later than `until`, not yet reminded of that expiry.
pub(super) async fn reminders_due(
    db: &Db,
    org_id: OrgId,
    from: Ts,
    until: Ts,
    limit: i64,
) -> DbResult<Vec<JobId>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar(
            "SELECT id FROM jobs WHERE org_id = $1 AND status = 'active' AND contact_email IS NOT NULL
               AND expires_at IS NOT NULL AND expires_at > $2 AND expires_at <= $3
               AND (expiry_reminder_for IS NULL OR expiry_reminder_for <> expires_at)
             ORDER BY expires_at, id LIMIT $4",
        )
        .bind(org_id)
        .bind(from)
        .bind(until)
        .bind(limit)
        .fetch_all(p)
        .await?
    }))
}

/// Marks the job as reminded of its current `expires_at`, when it still is due one;
/// the job, or `None` when another pass (or node) got there first.
pub(super) async fn mark_reminded(tx: &mut Tx, org_id: OrgId, id: JobId) -> DbResult<Option<Job>> {
    let sql = format!(
        "UPDATE jobs SET expiry_reminder_for = expires_at
         WHERE org_id = $1 AND id = $2 AND status = 'active' AND expires_at IS NOT NULL
           AND (expiry_reminder_for IS NULL OR expiry_reminder_for <> expires_at)
         RETURNING {}",
        *COLUMNS
    );
    Ok(dispatch_tx!(tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await?
    }))
}

/// Jobs whose featuring has ended by `now` (at most 200 a pass).
pub(super) async fn featured_due(db: &Db, now: Ts) -> DbResult<Vec<(OrgId, JobId)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT org_id, id FROM jobs WHERE featured_until IS NOT NULL AND featured_until <= $1 \
             ORDER BY featured_until LIMIT 200",
        )
        .bind(now)
        .fetch_all(p)
        .await?
    }))
}
