//! Organizations: the tenants. Every other row belongs to exactly one.

use serde::Serialize;

use super::{Db, DbResult, Ts};
use crate::dispatch;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Org {
    pub id: i64,
    pub name: String,
    pub created_at: Ts,
}

pub async fn create(db: &Db, name: &str) -> DbResult<Org> {
    dispatch!(db.writer(), p => {
        sqlx::query_as("INSERT INTO organizations (name, created_at) VALUES ($1, $2) RETURNING id, name, created_at")
            .bind(name)
            .bind(Ts::now())
            .fetch_one(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

pub async fn list(db: &Db) -> DbResult<Vec<Org>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, name, created_at FROM organizations ORDER BY id").fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

pub async fn get(db: &Db, id: i64) -> DbResult<Option<Org>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, name, created_at FROM organizations WHERE id = $1")
            .bind(id)
            .fetch_optional(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

pub async fn count(db: &Db) -> DbResult<i64> {
    dispatch!(db.writer(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM organizations").fetch_one(p).await.map_err(crate::db::StoreError::from)
    })
}
