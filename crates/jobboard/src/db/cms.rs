//! CMS collections and items as stored. Every write to a collection or its items bumps
//! the collection's `version` in the same transaction (the read cache depends on it).

use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::types::Json;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Backend, Db, DbResult, Ts, Tx};
use crate::{cms::schema::FieldDef, dispatch, dispatch_tx};

/// A collection as returned by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Collection {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    #[schema(value_type = crate::cms::Visibility)]
    pub visibility: String,
    #[schema(value_type = Vec<FieldDef>)]
    pub schema: Json<Vec<FieldDef>>,
    pub created_at: Ts,
    pub updated_at: Ts,
    #[serde(skip)]
    #[schema(ignore)]
    pub version: i64,
}

/// What a read needs to know of a collection: its id, visibility and current version.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Head {
    pub id: Uuid,
    pub visibility: String,
    pub version: i64,
}

/// An item as returned by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Item {
    pub id: Uuid,
    /// The item's fields, validated against the collection schema.
    #[schema(value_type = Object)]
    pub data: Json<Map<String, Value>>,
    #[schema(value_type = crate::cms::ItemStatus)]
    pub status: String,
    pub starts_at: Option<Ts>,
    pub expires_at: Option<Ts>,
    pub position: i64,
    pub created_at: Ts,
    pub updated_at: Ts,
    pub owner_user_id: Option<Uuid>,
}

const COLLECTION_COLS: &str = "id, slug, name, visibility, schema, created_at, updated_at, version";
const ITEM_COLS: &str =
    "id, data, status, starts_at, expires_at, position, created_at, updated_at, owner_user_id";

/// Creates or replaces (by slug) a collection; `true` when it was created.
pub async fn upsert_collection(
    db: &Db,
    org_id: i64,
    slug: &str,
    name: &str,
    visibility: &str,
    schema: &[FieldDef],
) -> DbResult<(Collection, bool)> {
    let now = Ts::now();
    let sql = format!(
        "INSERT INTO cms_collections (id, org_id, slug, name, visibility, schema, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)
         ON CONFLICT (org_id, slug) DO UPDATE SET name = excluded.name, visibility = excluded.visibility,
             schema = excluded.schema, version = cms_collections.version + 1, updated_at = excluded.updated_at
         RETURNING {COLLECTION_COLS}"
    );
    let c: Collection = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7())
            .bind(org_id)
            .bind(slug)
            .bind(name)
            .bind(visibility)
            .bind(Json(schema))
            .bind(now)
            .fetch_one(p)
            .await?
    });
    let created = c.created_at == now && c.version == 0;
    Ok((c, created))
}

pub async fn list_collections(db: &Db, org_id: i64) -> DbResult<Vec<Collection>> {
    let sql =
        format!("SELECT {COLLECTION_COLS} FROM cms_collections WHERE org_id = $1 ORDER BY slug");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

pub async fn get_collection(db: &Db, org_id: i64, slug: &str) -> DbResult<Option<Collection>> {
    let sql =
        format!("SELECT {COLLECTION_COLS} FROM cms_collections WHERE org_id = $1 AND slug = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(slug).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    })
}

/// The id, visibility and version of a collection: one indexed read.
pub async fn head(db: &Db, org_id: i64, slug: &str) -> DbResult<Option<Head>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, visibility, version FROM cms_collections WHERE org_id = $1 AND slug = $2")
            .bind(org_id)
            .bind(slug)
            .fetch_optional(p)
            .await.map_err(crate::db::StoreError::from)
    })
}

/// Which items a list returns.
#[derive(Debug, Clone, Copy)]
pub enum ListFilter<'a> {
    /// Published, started (`starts_at <= now`) and not expired (`expires_at > now`).
    Public(Ts),
    /// Every item of this status.
    Status(&'a str),
}

/// A page of items (position ascending, then newest) and the total count.
pub async fn list_items(
    db: &Db,
    org_id: i64,
    collection_id: Uuid,
    filter: ListFilter<'_>,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<Item>, i64)> {
    let (cond, status, now) = match filter {
        ListFilter::Public(now) => (
            "status = $3 AND (starts_at IS NULL OR starts_at <= $4) AND (expires_at IS NULL OR expires_at > $4)",
            "published",
            Some(now),
        ),
        ListFilter::Status(s) => ("status = $3", s, None),
    };
    let where_ = format!("WHERE org_id = $1 AND collection_id = $2 AND {cond}");
    let count_sql = format!("SELECT COUNT(*) FROM cms_items {where_}");
    let (lim, off) = if now.is_some() {
        ("$5", "$6")
    } else {
        ("$4", "$5")
    };
    let page_sql = format!(
        "SELECT {ITEM_COLS} FROM cms_items {where_}
         ORDER BY position ASC, created_at DESC, id DESC LIMIT {lim} OFFSET {off}"
    );
    dispatch!(db.reader(), p => {
        let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql)).bind(org_id).bind(collection_id).bind(status);
        if let Some(now) = now {
            q = q.bind(now);
        }
        let total: i64 = q.fetch_one(p).await?;
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(page_sql)).bind(org_id).bind(collection_id).bind(status);
        if let Some(now) = now {
            q = q.bind(now);
        }
        let items: Vec<Item> = q.bind(limit).bind(offset).fetch_all(p).await?;
        Ok((items, total))
    })
}

/// The earliest `starts_at` or `expires_at` of the collection after `now`: the moment a
/// list rendered now may change without a write.
pub async fn next_boundary(db: &Db, collection_id: Uuid, now: Ts) -> DbResult<Option<Ts>> {
    let (a, b): (Option<Ts>, Option<Ts>) = dispatch!(db.reader(), p => {
        let a = sqlx::query_scalar(
            "SELECT MIN(starts_at) FROM cms_items WHERE collection_id = $1 AND starts_at IS NOT NULL AND starts_at > $2",
        )
        .bind(collection_id)
        .bind(now)
        .fetch_one(p)
        .await?;
        let b = sqlx::query_scalar(
            "SELECT MIN(expires_at) FROM cms_items WHERE collection_id = $1 AND expires_at IS NOT NULL AND expires_at > $2",
        )
        .bind(collection_id)
        .bind(now)
        .fetch_one(p)
        .await?;
        (a, b)
    });
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

pub async fn get_item(
    db: &Db,
    org_id: i64,
    collection_id: Uuid,
    id: Uuid,
) -> DbResult<Option<Item>> {
    let sql = format!(
        "SELECT {ITEM_COLS} FROM cms_items WHERE org_id = $1 AND collection_id = $2 AND id = $3"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(collection_id).bind(id).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    })
}

/// A new item.
#[derive(Debug, Clone)]
pub struct NewItem {
    pub data: Map<String, Value>,
    pub status: String,
    pub starts_at: Option<Ts>,
    pub expires_at: Option<Ts>,
    pub position: i64,
    pub owner_user_id: Option<Uuid>,
}

async fn bump(tx: &mut Tx, collection_id: Uuid) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("UPDATE cms_collections SET version = version + 1 WHERE id = $1")
            .bind(collection_id)
            .execute(&mut **t)
            .await?;
    });
    Ok(())
}

pub async fn create_item(
    db: &Db,
    org_id: i64,
    collection_id: Uuid,
    new: NewItem,
) -> DbResult<Item> {
    let now = Ts::now();
    let sql = format!(
        "INSERT INTO cms_items (id, org_id, collection_id, data, status, starts_at, expires_at, position, owner_user_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING {ITEM_COLS}"
    );
    let mut tx = db.begin().await?;
    let item: Item = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7())
            .bind(org_id)
            .bind(collection_id)
            .bind(Json(&new.data))
            .bind(&new.status)
            .bind(new.starts_at)
            .bind(new.expires_at)
            .bind(new.position)
            .bind(new.owner_user_id)
            .bind(now)
            .fetch_one(&mut **t)
            .await?
    });
    bump(&mut tx, collection_id).await?;
    tx.commit().await?;
    Ok(item)
}

/// Changes to an item: `None` leaves a field as stored.
#[derive(Debug, Clone, Default)]
pub struct ItemChanges {
    pub data: Option<Map<String, Value>>,
    pub status: Option<String>,
    pub starts_at: Option<Option<Ts>>,
    pub expires_at: Option<Option<Ts>>,
    pub position: Option<i64>,
    pub owner_user_id: Option<Option<Uuid>>,
}

/// Applies `changes` to an item; `None` when it is not an item of this collection.
pub async fn update_item(
    db: &Db,
    org_id: i64,
    collection_id: Uuid,
    id: Uuid,
    changes: ItemChanges,
) -> DbResult<Option<Item>> {
    let lock = if db.backend() == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let select = format!(
        "SELECT {ITEM_COLS} FROM cms_items WHERE org_id = $1 AND collection_id = $2 AND id = $3{lock}"
    );
    let update = format!(
        "UPDATE cms_items SET data = $1, status = $2, starts_at = $3, expires_at = $4, position = $5,
             owner_user_id = $6, updated_at = $7
         WHERE id = $8 RETURNING {ITEM_COLS}"
    );
    let mut tx = db.begin().await?;
    let current: Option<Item> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(select)).bind(org_id).bind(collection_id).bind(id).fetch_optional(&mut **t).await?
    });
    let Some(cur) = current else {
        return Ok(None);
    };
    let data = changes.data.unwrap_or(cur.data.0);
    let status = changes.status.unwrap_or(cur.status);
    let starts_at = changes.starts_at.unwrap_or(cur.starts_at);
    let expires_at = changes.expires_at.unwrap_or(cur.expires_at);
    let position = changes.position.unwrap_or(cur.position);
    let owner = changes.owner_user_id.unwrap_or(cur.owner_user_id);
    let item: Item = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(update))
            .bind(Json(&data))
            .bind(&status)
            .bind(starts_at)
            .bind(expires_at)
            .bind(position)
            .bind(owner)
            .bind(Ts::now())
            .bind(id)
            .fetch_one(&mut **t)
            .await?
    });
    bump(&mut tx, collection_id).await?;
    tx.commit().await?;
    Ok(Some(item))
}

/// Deletes an item; `false` when it is not an item of this collection.
pub async fn delete_item(db: &Db, org_id: i64, collection_id: Uuid, id: Uuid) -> DbResult<bool> {
    let mut tx = db.begin().await?;
    let n = dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM cms_items WHERE org_id = $1 AND collection_id = $2 AND id = $3")
            .bind(org_id)
            .bind(collection_id)
            .bind(id)
            .execute(&mut **t)
            .await?
            .rows_affected()
    });
    if n == 0 {
        return Ok(false);
    }
    bump(&mut tx, collection_id).await?;
    tx.commit().await?;
    Ok(true)
}

/// Scheduler step: moves published items whose `expires_at` has passed to `expired` and
/// bumps their collections' versions, in one transaction. Idempotent: a second run (or
/// another node) finds nothing to move. Returns how many items moved.
pub async fn expire_due(db: &Db, now: Ts) -> DbResult<u64> {
    let mut tx = db.begin().await?;
    let moved: Vec<Uuid> = dispatch_tx!(&mut tx, t => {
        sqlx::query_scalar(
            "UPDATE cms_items SET status = 'expired', updated_at = $1
             WHERE status = 'published' AND expires_at IS NOT NULL AND expires_at <= $1
             RETURNING collection_id",
        )
        .bind(now)
        .fetch_all(&mut **t)
        .await?
    });
    if moved.is_empty() {
        return Ok(0);
    }
    let mut collections = moved.clone();
    collections.sort();
    collections.dedup();
    for c in collections {
        bump(&mut tx, c).await?;
    }
    tx.commit().await?;
    Ok(moved.len() as u64)
}
