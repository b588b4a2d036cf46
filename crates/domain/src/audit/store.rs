//! The audit log as stored.

use uuid::Uuid;

use super::{AuditEntry, AuditQuery, NewEntry};
use crate::{
    OrgId, Ts,
    db::{Db, DbResult},
    dispatch,
};

const COLUMNS: &str = "id, at, actor_user_id, actor_email, action, target, detail, ip, org_id";

pub(super) async fn insert(db: &Db, id: Uuid, e: &NewEntry, now: Ts) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO audit_log (id, org_id, at, actor_user_id, actor_email, action, target, detail, ip)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(id)
        .bind(e.org_id)
        .bind(now)
        .bind(e.actor_user_id)
        .bind(&e.actor_email)
        .bind(&e.action)
        .bind(&e.target)
        .bind(&e.detail)
        .bind(&e.ip)
        .execute(p)
        .await?;
    });
    Ok(())
}

pub(super) async fn list(
    db: &Db,
    org_id: OrgId,
    q: &AuditQuery,
) -> DbResult<(Vec<AuditEntry>, i64)> {
    let actor = q.actor.as_deref().map(str::to_ascii_lowercase);
    Ok(dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM audit_log WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {COLUMNS} FROM audit_log WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(a) = &q.action {
                qb.push(" AND action = ").push_bind(a.clone());
            }
            if let Some(a) = &actor {
                qb.push(" AND lower(actor_email) = ").push_bind(a.clone());
            }
        }
        page.push(" ORDER BY id DESC LIMIT ")
            .push_bind(q.per_page)
            .push(" OFFSET ")
            .push_bind((q.page - 1) * q.per_page);
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let rows: Vec<AuditEntry> = page.build_query_as().fetch_all(p).await?;
        (rows, total)
    }))
}

/// Deletes at most `limit` entries recorded before `before`; how many.
pub(super) async fn delete_before(db: &Db, before: Ts, limit: i64) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 LIMIT $2)",
        )
        .bind(before)
        .bind(limit)
        .execute(p)
        .await?
        .rows_affected()
    }))
}
