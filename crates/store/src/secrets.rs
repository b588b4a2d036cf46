//! Secrets of this installation, shared by every node through the database: made once
//! (the first node to need one inserts it; the others read the winner's), never shown.

use rand::RngCore;

use super::{Db, DbResult};
use crate::dispatch;

/// The secret called `name`, when it was made.
pub async fn get(db: &Db, name: &str) -> DbResult<Option<Vec<u8>>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT value FROM instance_secrets WHERE name = $1")
            .bind(name)
            .fetch_optional(p)
            .await?
    }))
}

/// The 32-byte secret called `name`, made on first use.
pub async fn get_or_create(db: &Db, name: &str) -> DbResult<Vec<u8>> {
    let mut fresh = vec![0u8; 32];
    rand::rng().fill_bytes(&mut fresh);
    Ok(dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO instance_secrets (name, value, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(&fresh)
        .bind(db.now())
        .execute(p)
        .await?;
        sqlx::query_scalar("SELECT value FROM instance_secrets WHERE name = $1")
            .bind(name)
            .fetch_one(p)
            .await?
    }))
}
