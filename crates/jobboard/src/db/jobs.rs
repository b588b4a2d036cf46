//! Jobs as stored.

use uuid::Uuid;

use super::{Db, DbResult};
use crate::dispatch;

/// True when `id` is a job of this organization.
pub async fn exists(db: &Db, org_id: i64, id: Uuid) -> DbResult<bool> {
    let hit: Option<i64> = dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT 1 FROM jobs WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .fetch_optional(p)
            .await?
    });
    Ok(hit.is_some())
}
