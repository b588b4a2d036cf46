//! A member's records as stored: the jobs it owns with their counts, its saved jobs, and
//! the applications made with its address (its alerts are the alerts module's). Every
//! statement is bounded by the member's own rows through an index (`jobs_owner`,
//! `saved_jobs`' key, `applications_email`).

use std::{collections::HashMap, sync::LazyLock};

use crate::{
    JobId, MemberId, OrgId, Ts,
    applications::Application,
    db::{Backend, Db, DbResult, Tx},
    dispatch, dispatch_tx,
    jobs::Job,
    links,
};

static JOB_COLUMNS: LazyLock<String> = LazyLock::new(|| Job::COLUMNS.join(", "));

/// How an application's address is folded in the `applications_email` index: ASCII
/// letters only, as [`links::email_identity`] folds.
fn folded_email(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "lower(email)",
        Backend::Postgres => {
            "translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
        }
    }
}

/// A page of the jobs member `owner` owns, newest first, and how many it owns.
pub(super) async fn owned_jobs(
    db: &Db,
    org_id: OrgId,
    owner: MemberId,
    offset: i64,
    limit: i64,
) -> DbResult<(Vec<Job>, i64)> {
    let sql = format!(
        "SELECT {} FROM jobs WHERE org_id = $1 AND owner_user_id = $2 \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4",
        *JOB_COLUMNS
    );
    Ok(dispatch!(db.reader(), p => {
        let jobs: Vec<Job> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(owner)
            .bind(limit)
            .bind(offset)
            .fetch_all(p)
            .await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM jobs WHERE org_id = $1 AND owner_user_id = $2",
        )
        .bind(org_id)
        .bind(owner)
        .fetch_one(p)
        .await?;
        (jobs, total)
    }))
}

/// Every job member `owner` owns, newest first.
pub(super) async fn owned_jobs_all(db: &Db, org_id: OrgId, owner: MemberId) -> DbResult<Vec<Job>> {
    Ok(owned_jobs(db, org_id, owner, 0, i64::MAX).await?.0)
}

/// A job's counts as its owner sees them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub views: i64,
    pub apply_clicks: i64,
    pub applications: i64,
}

/// The all-time counts of the jobs `ids` of `org_id`.
pub(super) async fn counts(
    db: &Db,
    org_id: OrgId,
    ids: &[JobId],
) -> DbResult<HashMap<JobId, Counts>> {
    let mut out: HashMap<JobId, Counts> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let marks = (0..ids.len())
        .map(|i| format!("${}", i + 2))
        .collect::<Vec<_>>()
        .join(", ");
    let views_sql = format!(
        "SELECT job_id, CAST(SUM(job_views) AS BIGINT), CAST(SUM(apply_clicks) AS BIGINT) \
         FROM analytics_daily WHERE org_id = $1 AND job_id IN ({marks}) GROUP BY job_id"
    );
    let apps_sql = format!(
        "SELECT job_id, COUNT(*) FROM applications WHERE org_id = $1 AND job_id IN ({marks}) \
         GROUP BY job_id"
    );
    type Views = Vec<(JobId, i64, i64)>;
    type Applications = Vec<(JobId, i64)>;
    let (views, apps): (Views, Applications) = dispatch!(db.reader(), p => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(views_sql)).bind(org_id);
        for id in ids {
            q = q.bind(*id);
        }
        let views = q.fetch_all(p).await?;
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(apps_sql)).bind(org_id);
        for id in ids {
            q = q.bind(*id);
        }
        (views, q.fetch_all(p).await?)
    });
    for (id, v, c) in views {
        let e = out.entry(id).or_default();
        e.views = v;
        e.apply_clicks = c;
    }
    for (id, n) in apps {
        out.entry(id).or_default().applications = n;
    }
    Ok(out)
}

/// The applications made with `email` on `org_id`'s board, newest first.
pub(super) async fn applications_of_address(
    db: &Db,
    org_id: OrgId,
    email: &str,
) -> DbResult<Vec<Application>> {
    let sql = format!(
        "SELECT {} FROM applications WHERE org_id = $1 AND {} = $2 ORDER BY created_at DESC, id DESC",
        Application::COLUMNS,
        folded_email(db.backend())
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(links::email_identity(email))
            .fetch_all(p)
            .await?
    }))
}

pub(super) async fn delete_applications_of_address(
    tx: &mut Tx,
    org_id: OrgId,
    email: &str,
) -> DbResult<u64> {
    let sql = format!(
        "DELETE FROM applications WHERE org_id = $1 AND {} = $2",
        folded_email(tx.backend())
    );
    dispatch_tx!(tx, t => {
        Ok(sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(links::email_identity(email))
            .execute(&mut **t)
            .await?
            .rows_affected())
    })
}

/// Saves job `job` for `member` (again: nothing changes); false when the job is not the
/// organization's.
pub(super) async fn save(
    db: &Db,
    org_id: OrgId,
    member: MemberId,
    job: JobId,
    now: Ts,
) -> DbResult<bool> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO saved_jobs (org_id, member_id, job_id, created_at) \
             SELECT $1, $2, id, $4 FROM jobs WHERE org_id = $1 AND id = $3 \
             ON CONFLICT (org_id, member_id, job_id) DO NOTHING",
        )
        .bind(org_id)
        .bind(member)
        .bind(job)
        .bind(now)
        .execute(p)
        .await?;
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM saved_jobs WHERE org_id = $1 AND member_id = $2 AND job_id = $3")
            .bind(org_id)
            .bind(member)
            .bind(job)
            .fetch_one(p)
            .await? > 0
    }))
}

pub(super) async fn unsave(db: &Db, org_id: OrgId, member: MemberId, job: JobId) -> DbResult<bool> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM saved_jobs WHERE org_id = $1 AND member_id = $2 AND job_id = $3")
            .bind(org_id)
            .bind(member)
            .bind(job)
            .execute(p)
            .await?
            .rows_affected() > 0
    }))
}

/// A saved job in an export.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct SavedOut {
    pub job_id: JobId,
    pub title: String,
    pub saved_at: Ts,
}

/// A saved job with the job as it is now.
#[derive(Debug, Clone)]
pub struct Saved {
    pub job: Job,
    pub saved_at: Ts,
}

#[derive(sqlx::FromRow)]
struct SavedRow {
    #[sqlx(flatten)]
    job: Job,
    saved_at: Ts,
}

/// The jobs `member` saved, most recently saved first.
pub(super) async fn saved(db: &Db, org_id: OrgId, member: MemberId) -> DbResult<Vec<Saved>> {
    let cols: Vec<String> = Job::COLUMNS.iter().map(|c| format!("j.{c}")).collect();
    let sql = format!(
        "SELECT {}, s.created_at AS saved_at FROM saved_jobs s \
         JOIN jobs j ON j.id = s.job_id \
         WHERE s.org_id = $1 AND s.member_id = $2 ORDER BY s.created_at DESC, s.job_id",
        cols.join(", ")
    );
    let rows: Vec<SavedRow> = dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(member).fetch_all(p).await?
    });
    Ok(rows
        .into_iter()
        .map(|r| Saved {
            job: r.job,
            saved_at: r.saved_at,
        })
        .collect())
}

/// The saved jobs of `member`, as an export lists them.
pub(super) async fn saved_all(db: &Db, org_id: OrgId, member: MemberId) -> DbResult<Vec<SavedOut>> {
    Ok(saved(db, org_id, member)
        .await?
        .into_iter()
        .map(|s| SavedOut {
            job_id: s.job.id,
            title: s.job.title,
            saved_at: s.saved_at,
        })
        .collect())
}

/// The applications to job `job` of `org_id`, newest first.
pub(super) async fn applications_of_job(
    db: &Db,
    org_id: OrgId,
    job: JobId,
) -> DbResult<Vec<Application>> {
    let sql = format!(
        "SELECT {} FROM applications WHERE org_id = $1 AND job_id = $2 \
         ORDER BY created_at DESC, id DESC",
        Application::COLUMNS
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(job).fetch_all(p).await?
    }))
}
