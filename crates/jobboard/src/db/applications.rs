//! Applications to jobs. Creation and status changes write their events in the same
//! transaction.

use serde::Serialize;
use serde_json::{Map, Value, json};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Db, DbResult, Ts, events};
use crate::{dispatch, dispatch_tx};

/// Application statuses, in their usual order.
pub const STATUSES: &[&str] = &[
    "new",
    "reviewing",
    "interviewing",
    "offered",
    "hired",
    "rejected",
];

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Application {
    pub id: Uuid,
    pub job_id: Uuid,
    /// The job's title when the application was received.
    pub job_title: String,
    pub name: String,
    pub email: String,
    pub resume_url: Option<String>,
    pub cover_letter: Option<String>,
    /// Free-form answers to the job's questions.
    #[schema(value_type = Option<Object>)]
    pub answers: Option<Json<Map<String, Value>>>,
    #[schema(example = "new")]
    pub status: String,
    pub created_at: Ts,
    pub updated_at: Ts,
}

const COLUMNS: &str = "id, job_id, job_title, name, email, resume_url, cover_letter, answers, status, created_at, updated_at";

pub struct NewApplication {
    pub name: String,
    pub email: String,
    pub resume_url: Option<String>,
    pub cover_letter: Option<String>,
    pub answers: Option<Map<String, Value>>,
}

/// Creates an application to a job of `org_id`; `None` when there is no such job.
pub async fn create(
    db: &Db,
    org_id: i64,
    job_id: Uuid,
    new: NewApplication,
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
    let now = Ts::now();
    let sql = format!(
        "INSERT INTO applications (id, org_id, job_id, job_title, name, email, resume_url, cover_letter, answers, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'new', $10, $10) RETURNING {COLUMNS}"
    );
    let app: Application = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7())
            .bind(org_id)
            .bind(job_id)
            .bind(&title)
            .bind(&new.name)
            .bind(&new.email)
            .bind(&new.resume_url)
            .bind(&new.cover_letter)
            .bind(new.answers.map(Json))
            .bind(now)
            .fetch_one(&mut **t)
            .await?
    });
    events::emit(
        &mut tx,
        org_id,
        "application.received",
        json!({
            "application_id": app.id,
            "job_id": app.job_id,
            "job_title": app.job_title,
            "name": app.name,
            "email": app.email,
        }),
    )
    .await?;
    tx.commit().await?;
    Ok(Some(app))
}

pub async fn get(db: &Db, org_id: i64, id: Uuid) -> DbResult<Option<Application>> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE org_id = $1 AND id = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    })
}

/// Filters of a list.
#[derive(Debug, Default)]
pub struct Filter {
    pub job_id: Option<Uuid>,
    pub statuses: Vec<String>,
}

/// One page, newest first, and the number of matching applications.
pub async fn list(
    db: &Db,
    org_id: i64,
    f: &Filter,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<Application>, i64)> {
    dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM applications WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {COLUMNS} FROM applications WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(job) = f.job_id {
                qb.push(" AND job_id = ").push_bind(job);
            }
            if !f.statuses.is_empty() {
                qb.push(" AND status IN (");
                let mut sep = qb.separated(", ");
                for s in &f.statuses {
                    sep.push_bind(s.clone());
                }
                qb.push(")");
            }
        }
        page.push(" ORDER BY created_at DESC, id DESC LIMIT ").push_bind(limit).push(" OFFSET ").push_bind(offset);
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let items: Vec<Application> = page.build_query_as().fetch_all(p).await?;
        Ok((items, total))
    })
}

/// Sets the status; emits `application.status_changed` when it changed.
pub async fn set_status(
    db: &Db,
    org_id: i64,
    id: Uuid,
    status: &str,
) -> DbResult<Option<Application>> {
    let mut tx = db.begin().await?;
    let previous: Option<String> = dispatch_tx!(&mut tx, t => {
        sqlx::query_scalar("SELECT status FROM applications WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(&mut **t)
            .await?
    });
    let Some(previous) = previous else {
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
            .bind(Ts::now())
            .fetch_one(&mut **t)
            .await?
    });
    if previous != status {
        events::emit(
            &mut tx,
            org_id,
            "application.status_changed",
            json!({
                "application_id": app.id,
                "job_id": app.job_id,
                "previous_status": previous,
                "status": app.status,
            }),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Some(app))
}

/// Applications per job received since `since` (inclusive), for the given jobs.
pub async fn count_by_job(
    db: &Db,
    org_id: i64,
    jobs: &[Uuid],
    since: Ts,
    until: Ts,
) -> DbResult<Vec<(Uuid, i64)>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(db.reader(), p => {
        let mut qb = sqlx::QueryBuilder::new("SELECT job_id, COUNT(*) FROM applications WHERE org_id = ");
        qb.push_bind(org_id).push(" AND created_at >= ").push_bind(since).push(" AND created_at < ").push_bind(until);
        qb.push(" AND job_id");
        super::push_in_list(&mut qb, jobs);
        qb.push(" GROUP BY job_id");
        qb.build_query_as().fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}
