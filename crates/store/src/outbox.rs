//! What every outbox table shares (webhook deliveries, mails): rows `waiting` for their
//! `next_attempt_at`, claimed by a worker with `lease_owner` and `lease_until`. Each
//! table's claim and outcome statements stay with its resource; handing leases back and
//! finding the next due row are the same for all, and live here once.

use uuid::Uuid;

use crate::{Db, DbResult, StoreError, Ts, dispatch};

/// An outbox table: its name and the status of its rows that wait for an attempt.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub waiting: &'static str,
}

/// Hands the leases of `owner` on these rows back (their next claim may take them at once).
pub async fn release(db: &Db, table: Table, owner: Uuid, ids: &[Uuid]) -> DbResult<()> {
    let sql = format!(
        "UPDATE {} SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
        table.name
    );
    for id in ids {
        dispatch!(db.writer(), p => {
            sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(id)
                .bind(owner)
                .execute(p)
                .await?;
        });
    }
    Ok(())
}

/// When the earliest waiting row is due, if any.
pub async fn next_due(db: &Db, table: Table) -> DbResult<Option<Ts>> {
    let sql = format!(
        "SELECT MIN(next_attempt_at) FROM {} WHERE status = '{}'",
        table.name, table.waiting
    );
    dispatch!(db.reader(), p => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(p)
            .await
            .map_err(StoreError::from)
    })
}
