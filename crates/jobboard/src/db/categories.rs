//! Job categories of an organization.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Db, DbResult, Ts};
use crate::dispatch;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Category {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    pub created_at: Ts,
}

/// Creates a category; `None` when the slug is taken in this organization.
pub async fn create(db: &Db, org_id: i64, name: &str, slug: &str) -> DbResult<Option<Category>> {
    let res = dispatch!(db.writer(), p => {
        sqlx::query_as(
            "INSERT INTO categories (id, org_id, name, slug, created_at) VALUES ($1, $2, $3, $4, $5)
             RETURNING id, name, slug, created_at",
        )
        .bind(Uuid::now_v7())
        .bind(org_id)
        .bind(name)
        .bind(slug)
        .bind(Ts::now())
        .fetch_one(p)
        .await
        .map_err(super::StoreError::from)
    });
    match res {
        Ok(c) => Ok(Some(c)),
        Err(e) if super::is_unique_violation(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

pub async fn list(db: &Db, org_id: i64) -> DbResult<Vec<Category>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, name, slug, created_at FROM categories WHERE org_id = $1 ORDER BY name, id")
            .bind(org_id)
            .fetch_all(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// The ids among `ids` that are categories of this organization.
pub async fn existing(db: &Db, org_id: i64, ids: &[Uuid]) -> DbResult<Vec<Uuid>> {
    super::owned_ids(db, super::Owned::Categories, org_id, ids).await
}
