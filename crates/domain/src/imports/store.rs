//! Import sources and the keys of their jobs as stored.

use std::collections::HashMap;

use uuid::Uuid;

use super::Source;
use crate::{
    JobId, JsonDoc, OrgId, Ts,
    db::{Db, DbResult, StoreError, Tx, push_in_list},
    dispatch, dispatch_tx,
};

const COLUMNS: &str = "id, org_id, kind, url, every_minutes, job_status, category_id, etag, \
     last_modified, next_run_at, last_run_at, last_result, created_at";

pub(super) async fn insert(db: &Db, s: &Source) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO import_sources (id, org_id, kind, url, every_minutes, job_status, category_id, \
             next_run_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
        )
        .bind(s.id)
        .bind(s.org_id)
        .bind(s.kind)
        .bind(&s.url)
        .bind(s.every_minutes)
        .bind(s.job_status)
        .bind(s.category_id)
        .bind(s.created_at)
        .execute(p)
        .await?;
    });
    Ok(())
}

pub(super) async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<Source>> {
    let sql =
        format!("SELECT {COLUMNS} FROM import_sources WHERE org_id = $1 ORDER BY created_at, id");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await?
    }))
}

pub(super) async fn get(db: &Db, org_id: Option<OrgId>, id: Uuid) -> DbResult<Option<Source>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM import_sources WHERE id = $1 AND ($2 IS NULL OR org_id = $2)"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).fetch_optional(p).await?
    }))
}

pub(super) async fn delete(db: &Db, org_id: Option<OrgId>, id: Uuid) -> DbResult<Option<Source>> {
    let mut tx = db.begin().await?;
    let sql = format!(
        "DELETE FROM import_sources WHERE id = $1 AND ($2 IS NULL OR org_id = $2) RETURNING {COLUMNS}"
    );
    let gone: Option<Source> = dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM import_items WHERE source_id = $1")
            .bind(id)
            .execute(&mut **t)
            .await?;
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).fetch_optional(&mut **t).await?
    });
    tx.commit().await?;
    Ok(gone)
}

/// Takes the source that has been due longest, moving its next run on by its interval
/// in the same statement.
pub(super) async fn claim_due(db: &Db, now: Ts) -> DbResult<Option<Source>> {
    let sql = format!(
        "UPDATE import_sources SET next_run_at = $1 + every_minutes * 60000000 \
         WHERE id = (SELECT id FROM import_sources WHERE next_run_at <= $1 ORDER BY next_run_at LIMIT 1) \
         AND next_run_at <= $1 RETURNING {COLUMNS}"
    );
    let sql_pg = format!(
        "UPDATE import_sources SET next_run_at = $1 + every_minutes * INTERVAL '1 minute' \
         WHERE id = (SELECT id FROM import_sources WHERE next_run_at <= $1 ORDER BY next_run_at LIMIT 1 \
         FOR UPDATE SKIP LOCKED) AND next_run_at <= $1 RETURNING {COLUMNS}"
    );
    Ok(match &*db.writer() {
        crate::db::Pool::Sqlite(p) => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(now)
                .fetch_optional(p)
                .await?
        }
        crate::db::Pool::Postgres(p) => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql_pg))
                .bind(now)
                .fetch_optional(p)
                .await?
        }
    })
}

pub(super) async fn finish(
    db: &Db,
    id: Uuid,
    now: Ts,
    result: &JsonDoc,
    validators: Option<(Option<String>, Option<String>)>,
) -> DbResult<()> {
    let (set, etag, modified) = match validators {
        Some((e, m)) => (true, e, m),
        None => (false, None, None),
    };
    dispatch!(db.writer(), p => {
        sqlx::query(
            "UPDATE import_sources SET last_run_at = $2, last_result = $3, \
             etag = CASE WHEN $4 THEN $5 ELSE etag END, \
             last_modified = CASE WHEN $4 THEN $6 ELSE last_modified END WHERE id = $1",
        )
        .bind(id)
        .bind(now)
        .bind(result)
        .bind(set)
        .bind(etag)
        .bind(modified)
        .execute(p)
        .await?;
    });
    Ok(())
}

/// The keys among `ids` the source already has: (job, digest) by the source's id.
pub(super) async fn items(
    db: &Db,
    source: Uuid,
    ids: &[&str],
) -> DbResult<HashMap<String, (JobId, String)>> {
    let mut out = HashMap::new();
    for chunk in ids.chunks(100) {
        let rows: Vec<(String, JobId, String)> = dispatch!(db.reader(), p => {
            let mut qb = sqlx::QueryBuilder::new(
                "SELECT external_id, job_id, digest FROM import_items WHERE source_id = ",
            );
            qb.push_bind(source).push(" AND external_id");
            push_in_list(&mut qb, chunk);
            qb.build_query_as().persistent(false).fetch_all(p).await?
        });
        out.extend(rows.into_iter().map(|(e, j, d)| (e, (j, d))));
    }
    Ok(out)
}

/// The source's jobs still listed by its last reads: (the source's id, job).
pub(super) async fn live_items(db: &Db, source: Uuid) -> DbResult<Vec<(String, JobId)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT external_id, job_id FROM import_items WHERE source_id = $1 AND digest <> ''")
            .bind(source)
            .fetch_all(p)
            .await?
    }))
}

/// Records the key of a job about to be made, unless it is recorded already (by a run
/// of the same source at the same time): true when this run recorded it.
pub(super) async fn claim_item(
    tx: &mut Tx,
    source: Uuid,
    external_id: &str,
    job: JobId,
    digest: &str,
) -> DbResult<bool> {
    let claimed: Option<JobId> = dispatch_tx!(tx, t => {
        sqlx::query_scalar(
            "INSERT INTO import_items (source_id, external_id, job_id, digest) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (source_id, external_id) DO NOTHING RETURNING job_id",
        )
        .bind(source)
        .bind(external_id)
        .bind(job)
        .bind(digest)
        .fetch_optional(&mut **t)
        .await?
    });
    Ok(claimed.is_some())
}

pub(super) async fn set_digest(
    tx: &mut Tx,
    source: Uuid,
    external_id: &str,
    digest: &str,
) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("UPDATE import_items SET digest = $3 WHERE source_id = $1 AND external_id = $2")
            .bind(source)
            .bind(external_id)
            .bind(digest)
            .execute(&mut **t)
            .await
            .map(|_| ())
            .map_err(StoreError::from)
    })
}

pub(super) async fn forget(tx: &mut Tx, source: Uuid, external_id: &str) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("DELETE FROM import_items WHERE source_id = $1 AND external_id = $2")
            .bind(source)
            .bind(external_id)
            .execute(&mut **t)
            .await
            .map(|_| ())
            .map_err(StoreError::from)
    })
}
