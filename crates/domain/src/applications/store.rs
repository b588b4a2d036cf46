//! Applications as stored: insert, read, list and move, each change with its event in one
//! transaction.

use uuid::Uuid;

use super::{
    events,
    model::{Application, ApplicationIn, ApplicationListQuery, ApplicationStatus},
};
use crate::{
    ApplicationId, JobId, OrgId, Ts,
    db::{Backend, Db, DbResult, StoreError, Tx, events as outbox},
    dispatch, dispatch_tx,
};

const COLUMNS: &str = Application::COLUMNS;

/// Stores an application to a job of the organization with `application.received`;
/// `None` when there is no such job. The job's title is copied as it is now.
pub(super) async fn create(
    db: &Db,
    org_id: OrgId,
    job_id: JobId,
    new: &ApplicationIn,
) -> DbResult<Option<Application>> {
    let mut tx = db.begin().await?;
    let title: Option<String> = dispatch_tx!(&mut tx, t => {
        sqlx::query_scalar("SELECT title FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(job_id)
            .fetch_optional(&mut **t)
            .await?
    });
    let Some(title) = title else { return Ok(None) };
    let sql = format!(
        "INSERT INTO applications (id, org_id, job_id, job_title, name, email, resume_url, cover_letter, answers, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING {COLUMNS}"
    );
    let app: Application = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(ApplicationId(Uuid::now_v7()))
            .bind(org_id)
            .bind(job_id)
            .bind(&title)
            .bind(&new.name)
            .bind(&new.email)
            .bind(&new.resume_url)
            .bind(&new.cover_letter)
            .bind(new.answers.clone().map(sqlx::types::Json))
            .bind(ApplicationStatus::New)
            .bind(db.now())
            .fetch_one(&mut **t)
            .await?
    });
    outbox::emit_event(&mut tx, org_id, &events::received(&app)).await?;
    crate::jobs::notices::application_received(&mut tx, db.outgoing(), org_id, &app).await?;
    tx.commit().await?;
    Ok(Some(app))
}

/// One application of the organization.
pub(super) async fn get(
    db: &Db,
    org_id: OrgId,
    id: ApplicationId,
) -> DbResult<Option<Application>> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE org_id = $1 AND id = $2");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await?
    }))
}

/// The page `q` selects, newest first, and the number of matching applications.
pub(super) async fn list(
    db: &Db,
    org_id: OrgId,
    q: &ApplicationListQuery,
) -> DbResult<(Vec<Application>, i64)> {
    let offset = (q.page - 1) * q.per_page;
    Ok(dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM applications WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {COLUMNS} FROM applications WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(job) = q.job_id {
                qb.push(" AND job_id = ").push_bind(job);
            }
            if !q.status.is_empty() {
                qb.push(" AND status IN (");
                let mut sep = qb.separated(", ");
                for s in &q.status {
                    sep.push_bind(*s);
                }
                qb.push(")");
            }
        }
        page.push(" ORDER BY created_at DESC, id DESC LIMIT ").push_bind(q.per_page).push(" OFFSET ").push_bind(offset);
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let items: Vec<Application> = page.build_query_as().fetch_all(p).await?;
        (items, total)
    }))
}

/// The status of an application, locked until the transaction ends (on PostgreSQL; the
/// SQLite transaction holds the database's write lock already).
async fn status_locked(
    tx: &mut Tx,
    org_id: OrgId,
    id: ApplicationId,
) -> DbResult<Option<ApplicationStatus>> {
    let lock = if tx.backend() == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let sql = format!("SELECT status FROM applications WHERE org_id = $1 AND id = $2{lock}");
    Ok(dispatch_tx!(tx, t => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(&mut **t).await?
    }))
}

/// Sets the status (and `updated_at`); writes `application.status_changed` when it moved.
/// `None` when there is no such application.
pub(super) async fn set_status(
    db: &Db,
    org_id: OrgId,
    id: ApplicationId,
    status: ApplicationStatus,
) -> DbResult<Option<Application>> {
    let mut tx = db.begin().await?;
    let Some(previous) = status_locked(&mut tx, org_id, id).await? else {
        return Ok(None);
    };
    let sql = format!(
        "UPDATE applications SET status = $3, updated_at = $4 WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}"
    );
    let app: Application = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(id)
            .bind(status)
            .bind(db.now())
            .fetch_one(&mut **t)
            .await
            .map_err(StoreError::from)?
    });
    if let Some(event) = events::status_moved(previous, &app) {
        outbox::emit_event(&mut tx, org_id, &event).await?;
    }
    tx.commit().await?;
    Ok(Some(app))
}

/// The organizations that keep applications for a limited time, with their days: after
/// each was made, and after its job ended (0: no limit).
pub(crate) async fn kept_for_days(db: &Db) -> DbResult<Vec<(OrgId, i64, i64)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT id, keep_applications_days, keep_applications_after_job_days \
             FROM organizations \
             WHERE keep_applications_days > 0 OR keep_applications_after_job_days > 0 \
             ORDER BY id",
        )
        .fetch_all(p)
        .await?
    }))
}

/// Deletes at most `limit` of `org_id`'s applications whose job ended before `before`:
/// a job that expired then (its expiry, or its last change when it was ended by hand
/// before it), or a job no longer stored, counted from the application's last change.
/// How many went.
pub(crate) async fn delete_after_job(
    db: &Db,
    org_id: OrgId,
    before: Ts,
    limit: i64,
) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "DELETE FROM applications WHERE id IN (SELECT a.id FROM applications a \
             LEFT JOIN jobs j ON j.id = a.job_id AND j.org_id = a.org_id \
             WHERE a.org_id = $1 AND CASE \
               WHEN j.id IS NULL THEN a.updated_at < $2 \
               WHEN j.status = 'expired' THEN (CASE WHEN j.expires_at IS NOT NULL \
                 AND j.expires_at < j.updated_at THEN j.expires_at ELSE j.updated_at END) < $2 \
               ELSE FALSE END \
             ORDER BY a.created_at LIMIT $3)",
        )
        .bind(org_id)
        .bind(before)
        .bind(limit)
        .execute(p)
        .await?
        .rows_affected()
    }))
}

/// Deletes at most `limit` of `org_id`'s applications made before `before`, oldest
/// first: how many went.
pub(crate) async fn delete_older(db: &Db, org_id: OrgId, before: Ts, limit: i64) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "DELETE FROM applications WHERE id IN (SELECT id FROM applications \
             WHERE org_id = $1 AND created_at < $2 ORDER BY created_at LIMIT $3)",
        )
        .bind(org_id)
        .bind(before)
        .bind(limit)
        .execute(p)
        .await?
        .rows_affected()
    }))
}
