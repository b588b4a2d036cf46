//! CMS collections and items as stored. Every write to a collection or its items bumps
//! the collection's `version` in the same transaction (the read cache depends on it).

use uuid::Uuid;

use super::model::{
    Collection, CollectionRules, Fields, Head, Item, ItemStatus, ListFilter, Order, Visibility,
};
use crate::{
    OrgId, Result, Ts,
    db::{Backend, Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx,
};

const COLLECTION_COLS: &str = "id, slug, name, visibility, schema, allow_public_submit, moderation, \
     sort_by, sort_dir, created_at, updated_at, version";
const ITEM_COLS: &str =
    "id, data, status, starts_at, expires_at, position, created_at, updated_at, owner_user_id";

/// Creates or replaces (by slug) a collection; `true` when it was created. `rules`
/// turns the stored rules (the defaults for a new collection) into the ones to store.
pub(super) async fn upsert_collection(
    db: &Db,
    org_id: OrgId,
    slug: &str,
    name: &str,
    visibility: Visibility,
    schema: &Fields,
    rules: impl FnOnce(CollectionRules) -> CollectionRules,
) -> DbResult<(Collection, bool)> {
    let now = db.now();
    let mut tx = db.begin().await?;
    let lock = if tx.backend() == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let select = format!(
        "SELECT allow_public_submit, moderation, sort_by, sort_dir FROM cms_collections
         WHERE org_id = $1 AND slug = $2{lock}"
    );
    let stored: Option<CollectionRules> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(select)).bind(org_id).bind(slug).fetch_optional(&mut **t).await?
    });
    let r = rules(stored.unwrap_or_default());
    let sql = format!(
        "INSERT INTO cms_collections (id, org_id, slug, name, visibility, schema, allow_public_submit, moderation,
             sort_by, sort_dir, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $11)
         ON CONFLICT (org_id, slug) DO UPDATE SET name = excluded.name, visibility = excluded.visibility,
             schema = excluded.schema, allow_public_submit = excluded.allow_public_submit,
             moderation = excluded.moderation, sort_by = excluded.sort_by, sort_dir = excluded.sort_dir,
             version = cms_collections.version + 1, updated_at = excluded.updated_at
         RETURNING {COLLECTION_COLS}"
    );
    let c: Collection = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7())
            .bind(org_id)
            .bind(slug)
            .bind(name)
            .bind(visibility)
            .bind(schema)
            .bind(r.allow_public_submit)
            .bind(r.moderation)
            .bind(r.sort_by)
            .bind(r.sort_dir)
            .bind(now)
            .fetch_one(&mut **t)
            .await?
    });
    tx.commit().await?;
    // A concurrent first write of the same slug updates the row this one inserted (and
    // bumps its version): only the row's first write created it.
    let created = stored.is_none() && c.version == 0;
    Ok((c, created))
}

pub(super) async fn list_collections(db: &Db, org_id: OrgId) -> DbResult<Vec<Collection>> {
    let sql =
        format!("SELECT {COLLECTION_COLS} FROM cms_collections WHERE org_id = $1 ORDER BY slug");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(StoreError::from)
    })
}

pub(super) async fn get_collection(
    db: &Db,
    org_id: OrgId,
    slug: &str,
) -> DbResult<Option<Collection>> {
    let sql =
        format!("SELECT {COLLECTION_COLS} FROM cms_collections WHERE org_id = $1 AND slug = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(slug).fetch_optional(p).await.map_err(StoreError::from)
    })
}

/// The id, visibility and version of a collection: one indexed read.
pub(super) async fn head(db: &Db, org_id: OrgId, slug: &str) -> DbResult<Option<Head>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as("SELECT id, visibility, version, sort_by, sort_dir FROM cms_collections WHERE org_id = $1 AND slug = $2")
            .bind(org_id)
            .bind(slug)
            .fetch_optional(p)
            .await.map_err(StoreError::from)
    })
}

/// A page of a collection's items in `order` and how many the filter matches.
pub async fn list_items(
    db: &Db,
    org_id: OrgId,
    collection_id: Uuid,
    filter: ListFilter,
    order: Order,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<Item>, i64)> {
    let (cond, status, now) = match filter {
        ListFilter::Public(now) => (
            "status = $3 AND (starts_at IS NULL OR starts_at <= $4) AND (expires_at IS NULL OR expires_at > $4)",
            ItemStatus::Published,
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
         ORDER BY {} LIMIT {lim} OFFSET {off}",
        order.sql()
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
pub(super) async fn next_boundary(db: &Db, collection_id: Uuid, now: Ts) -> DbResult<Option<Ts>> {
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

pub(super) async fn get_item(
    db: &Db,
    org_id: OrgId,
    collection_id: Uuid,
    id: Uuid,
) -> DbResult<Option<Item>> {
    let sql = format!(
        "SELECT {ITEM_COLS} FROM cms_items WHERE org_id = $1 AND collection_id = $2 AND id = $3"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(collection_id).bind(id).fetch_optional(p).await.map_err(StoreError::from)
    })
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

/// Inserts `item` into the collection and bumps its version, in one transaction.
pub(super) async fn insert_item(
    db: &Db,
    org_id: OrgId,
    collection_id: Uuid,
    item: &Item,
) -> DbResult<Item> {
    let sql = format!(
        "INSERT INTO cms_items (id, org_id, collection_id, data, status, starts_at, expires_at, position, owner_user_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING {ITEM_COLS}"
    );
    let mut tx = db.begin().await?;
    let stored: Item = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(item.id)
            .bind(org_id)
            .bind(collection_id)
            .bind(&item.data)
            .bind(item.status)
            .bind(item.starts_at)
            .bind(item.expires_at)
            .bind(item.position)
            .bind(item.owner_user_id)
            .bind(item.created_at)
            .bind(item.updated_at)
            .fetch_one(&mut **t)
            .await?
    });
    bump(&mut tx, collection_id).await?;
    tx.commit().await?;
    Ok(stored)
}

/// Updates an item: `plan` turns the stored item (read locked, in the transaction) into
/// the new one, or refuses. Bumps the collection's version. `None` when it is not an item
/// of this collection.
pub(super) async fn update_item(
    db: &Db,
    org_id: OrgId,
    collection_id: Uuid,
    id: Uuid,
    plan: impl FnOnce(&Item) -> Result<Item>,
) -> Result<Option<Item>> {
    let mut tx = db.begin().await?;
    let lock = if tx.backend() == Backend::Postgres {
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
    let current: Option<Item> = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(select)).bind(org_id).bind(collection_id).bind(id).fetch_optional(&mut **t).await.map_err(StoreError::from)?
    });
    let Some(current) = current else {
        return Ok(None);
    };
    let next = plan(&current)?;
    let item: Item = dispatch_tx!(&mut tx, t => {
        sqlx::query_as(sqlx::AssertSqlSafe(update))
            .bind(&next.data)
            .bind(next.status)
            .bind(next.starts_at)
            .bind(next.expires_at)
            .bind(next.position)
            .bind(next.owner_user_id)
            .bind(next.updated_at)
            .bind(id)
            .fetch_one(&mut **t)
            .await
            .map_err(StoreError::from)?
    });
    bump(&mut tx, collection_id).await?;
    tx.commit().await?;
    Ok(Some(item))
}

/// Deletes an item; `false` when it is not an item of this collection.
pub(super) async fn delete_item(
    db: &Db,
    org_id: OrgId,
    collection_id: Uuid,
    id: Uuid,
) -> DbResult<bool> {
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

/// Moves published items whose `expires_at` has passed to `expired` and bumps their
/// collections' versions, in one transaction. Guarded by the current status, so a second
/// run (or another node) finds nothing to move. Returns how many items moved.
pub(super) async fn expire_due(db: &Db, now: Ts) -> DbResult<u64> {
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
