//! Categories as stored.

use uuid::Uuid;

use super::Category;
use crate::{
    CategoryId, OrgId,
    db::{Db, DbResult},
    dispatch,
};

/// Inserts a category (a taken slug is a unique violation).
pub(super) async fn create(db: &Db, org_id: OrgId, name: &str, slug: &str) -> DbResult<Category> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(
            "INSERT INTO categories (id, org_id, name, slug, created_at) VALUES ($1, $2, $3, $4, $5)
             RETURNING id, name, slug, created_at",
        )
        .bind(CategoryId(Uuid::now_v7()))
        .bind(org_id)
        .bind(name)
        .bind(slug)
        .bind(db.now())
        .fetch_one(p)
        .await?
    }))
}

pub(super) async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<Category>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, name, slug, created_at FROM categories WHERE org_id = $1 ORDER BY name, id")
            .bind(org_id)
            .fetch_all(p)
            .await?
    }))
}
