//! CMS collections and items: the operations the API, the board and the dashboard call to
//! define collections, and to list, read, create, change, delete and expire their items.
//! Each validates its input (every bad field at once; an item's `data` against its
//! collection's schema), applies the rules, and stores the change in one transaction that
//! also bumps the collection's version (what the read cache is checked against). CMS
//! changes emit no events.

mod cache;
mod data;
pub mod model;
pub mod schema;
mod store;

use uuid::Uuid;

pub use cache::{Cache, CacheKey, Purge};
pub use data::validate_data;
pub use model::*;
pub use schema::{FieldDef, FieldDefIn, FieldType};
pub use store::list_items;

use crate::{Error, Field, Input, OrgId, Result, Ts, db::Db};

/// A collection written by [`upsert_collection`].
#[derive(Debug, Clone)]
pub struct Upserted {
    pub collection: Collection,
    /// False when a collection with this slug was replaced.
    pub created: bool,
}

/// An item written by [`save_item`].
#[derive(Debug, Clone)]
pub struct Saved {
    pub item: Item,
    /// False when the item named by `id` was updated.
    pub created: bool,
}

/// The organization's collections, by slug.
pub async fn list_collections(db: &Db, org_id: OrgId) -> Result<Vec<Collection>> {
    Ok(store::list_collections(db, org_id).await?)
}

/// One collection of the organization, with its schema.
pub async fn collection(db: &Db, org_id: OrgId, slug: &str) -> Result<Collection> {
    if !schema::valid_slug(slug) {
        return Err(Error::NotFound("collection"));
    }
    store::get_collection(db, org_id, slug)
        .await?
        .ok_or(Error::NotFound("collection"))
}

/// What a read needs of a collection (its id, visibility and version), when the
/// organization has one with this slug: one indexed read.
pub async fn head(db: &Db, org_id: OrgId, slug: &str) -> Result<Option<Head>> {
    if !schema::valid_slug(slug) {
        return Ok(None);
    }
    Ok(store::head(db, org_id, slug).await?)
}

/// Creates a collection from a `POST /cms` body, or replaces the name, visibility and
/// schema of the one with its slug. Existing items are not revalidated.
pub async fn upsert_collection(db: &Db, org_id: OrgId, mut body: Input) -> Result<Upserted> {
    // The rules block is read on its own, before the other fields (its problems are named
    // `rules.<field>`); the document describes it as `CollectionIn.rules`.
    let rules = crate::request::read_block(&mut body, "rules", CollectionRulesIn::read);
    let sent = CollectionIn::read_sent(&mut body);
    // The definitions are read on their own, so that their problems are reported also
    // when another field is invalid.
    let fields = match &sent.schema {
        Field::Value(items) => Some(schema::read_fields(&mut body, items)),
        _ => None,
    };
    body.finish()?;
    let (Some(c), Some(fields)) = (sent.complete(), fields) else {
        return Err(Error::Internal("validated collection fields missing"));
    };
    let visibility = c.visibility.unwrap_or(Visibility::Public);
    let rules = rules.opt();
    let (collection, created) = store::upsert_collection(
        db,
        org_id,
        &c.slug,
        &c.name,
        visibility,
        &fields,
        |stored| match &rules {
            Some(r) => stored.with(r),
            None => stored,
        },
    )
    .await?;
    Ok(Upserted {
        collection,
        created,
    })
}

/// The collection of `slug` when it accepts public submissions (`rules.allow_public_submit`);
/// otherwise `404`, as for a collection that does not exist (a submitter learns nothing
/// of the organization's other collections).
pub async fn submission_target(db: &Db, org_id: OrgId, slug: &str) -> Result<Collection> {
    match collection(db, org_id, slug).await {
        Ok(c) if c.rules.allow_public_submit => Ok(c),
        Ok(_) => Err(Error::NotFound("collection")),
        Err(e) => Err(e),
    }
}

/// Stores an item proposed by anyone (`POST /cms/{slug}/submit`, the board's form) in a
/// collection that accepts submissions: `data` checked against the schema as for any
/// item, stored as `pending_review` under manual moderation and `published` under auto,
/// with no window, position 0 and no owner. A body that fills the trap field
/// (`reference_code`) is refused and nothing is stored.
pub async fn submit(db: &Db, org_id: OrgId, collection: &Collection, body: Input) -> Result<Item> {
    if !collection.rules.allow_public_submit {
        return Err(Error::NotFound("collection"));
    }
    let req = SubmissionIn::parse(body)?;
    if req
        .reference_code
        .is_some_and(|c| !crate::kind::trim_blank(&c).is_empty())
    {
        return Err(Error::field(
            "reference_code",
            "trap",
            "Must be left empty: it is a trap for automated programs. Nothing was stored.",
        ));
    }
    let data = checked_data(collection, req.data)?;
    let now = db.now();
    let item = Item {
        id: Uuid::now_v7(),
        data,
        status: collection.rules.submitted_status(),
        starts_at: None,
        expires_at: None,
        position: 0,
        created_at: now,
        updated_at: now,
        owner_user_id: None,
    };
    Ok(store::insert_item(db, org_id, collection.id, &item).await?)
}

/// The earliest `starts_at` or `expires_at` of the collection after `now`: the moment its
/// public list may change without a write.
pub async fn next_boundary(db: &Db, collection_id: Uuid, now: Ts) -> Result<Option<Ts>> {
    Ok(store::next_boundary(db, collection_id, now).await?)
}

/// One item of the collection, whatever its status.
pub async fn get_item(db: &Db, org_id: OrgId, collection_id: Uuid, id: Uuid) -> Result<Item> {
    store::get_item(db, org_id, collection_id, id)
        .await?
        .ok_or(Error::NotFound("item"))
}

/// Creates an item of `collection` from a `POST /cms/{slug}` body, or, when the body names
/// an item by `id`, updates that one: its `data` is replaced, other fields sent replace
/// the stored values, fields omitted keep them.
pub async fn save_item(
    db: &Db,
    org_id: OrgId,
    collection: &Collection,
    mut body: Input,
) -> Result<Saved> {
    let sent = ItemIn::read_sent(&mut body);
    let current = match sent.id {
        Field::Value(id) => Some(get_item(db, org_id, collection.id, id).await?),
        _ => None,
    };
    let window = Window {
        starts_at: sent.starts_at.clone().patch(),
        expires_at: sent.expires_at.clone().patch(),
    };
    if let Some((code, message)) = window.problem(current.as_ref()) {
        body.error("expires_at", code, message);
    }
    body.finish()?;
    let Some(sent) = sent.complete() else {
        return Err(Error::Internal("validated item fields missing"));
    };
    let data = checked_data(collection, sent.data)?;
    let now = db.now();
    let Some(id) = sent.id else {
        let item = Item {
            id: Uuid::now_v7(),
            data,
            status: sent.status.unwrap_or(ItemStatus::Published),
            starts_at: sent.starts_at.opt(),
            expires_at: sent.expires_at.opt(),
            position: sent.position.unwrap_or(0),
            created_at: now,
            updated_at: now,
            owner_user_id: sent.owner_user_id.opt(),
        };
        let item = store::insert_item(db, org_id, collection.id, &item).await?;
        return Ok(Saved {
            item,
            created: true,
        });
    };
    let item = store::update_item(db, org_id, collection.id, id, |current| {
        let mut next = current.clone();
        next.data = data;
        if let Some(s) = sent.status {
            next.status = s;
        }
        window.apply(&mut next)?;
        if let Some(p) = sent.position {
            next.position = p;
        }
        if let Some(o) = sent.owner_user_id.patch() {
            next.owner_user_id = o;
        }
        next.updated_at = now;
        Ok(next)
    })
    .await?
    .ok_or(Error::NotFound("item"))?;
    Ok(Saved {
        item,
        created: false,
    })
}

/// Changes an item of `collection` from a `PATCH /cms/{slug}/{id}` body (at least one
/// field). Sent `data` replaces the stored one, checked against the schema; without it
/// `data` is left untouched.
pub async fn update_item(
    db: &Db,
    org_id: OrgId,
    collection: &Collection,
    id: Uuid,
    mut body: Input,
) -> Result<Item> {
    let current = get_item(db, org_id, collection.id, id).await?;
    if body.is_empty() {
        return Err(Error::field(
            "body",
            "required",
            "Send at least one of: data, status, starts_at, expires_at, position.",
        ));
    }
    // Every field of a patch is optional: it is always read.
    let patch = ItemPatch::read(&mut body).ok_or(Error::Internal("item patch not read"))?;
    let window = Window {
        starts_at: patch.starts_at.clone().patch(),
        expires_at: patch.expires_at.clone().patch(),
    };
    if let Some((code, message)) = window.problem(Some(&current)) {
        body.error("expires_at", code, message);
    }
    body.finish()?;
    let data = match patch.data {
        Some(d) => Some(checked_data(collection, d)?),
        None => None,
    };
    let now = db.now();
    store::update_item(db, org_id, collection.id, id, |current| {
        let mut next = current.clone();
        if let Some(d) = data {
            next.data = d;
        }
        if let Some(s) = patch.status {
            next.status = s;
        }
        window.apply(&mut next)?;
        if let Some(p) = patch.position {
            next.position = p;
        }
        next.updated_at = now;
        Ok(next)
    })
    .await?
    .ok_or(Error::NotFound("item"))
}

/// Deletes an item of the collection permanently.
pub async fn delete_item(db: &Db, org_id: OrgId, collection_id: Uuid, id: Uuid) -> Result<()> {
    if store::delete_item(db, org_id, collection_id, id).await? {
        Ok(())
    } else {
        Err(Error::NotFound("item"))
    }
}

/// Moves every published item past its `expires_at` to `expired` (the scheduler's pass),
/// bumping the versions of their collections. Returns how many items moved.
pub async fn expire_due(db: &Db, now: Ts) -> Result<u64> {
    Ok(store::expire_due(db, now).await?)
}

/// `data` checked against the collection's schema: the fields to store, or every failing
/// one (`422 schema_validation_failed`).
fn checked_data(
    collection: &Collection,
    data: serde_json::Map<String, serde_json::Value>,
) -> Result<ItemData> {
    data::validate_data(&collection.schema.0, data)
        .map(ItemData)
        .map_err(Error::Schema)
}

/// The publishing window a request sends: for each end, `None` when not sent, `Some(None)`
/// to clear it.
#[derive(Debug, Clone, Copy)]
struct Window {
    starts_at: Option<Option<Ts>>,
    expires_at: Option<Option<Ts>>,
}

impl Window {
    /// Why the window that results on `current` (none for a new item) closes before it
    /// opens, if it does.
    fn problem(&self, current: Option<&Item>) -> Option<(&'static str, &'static str)> {
        let starts = self.starts_at.unwrap_or(current.and_then(|i| i.starts_at));
        let expires = self
            .expires_at
            .unwrap_or(current.and_then(|i| i.expires_at));
        match (starts, expires) {
            (Some(s), Some(e)) if e <= s => Some(("out_of_range", "Must be after starts_at.")),
            _ => None,
        }
    }

    /// Sets the window on `item`, checked again on the row as stored now (it may have
    /// changed since the request was checked).
    fn apply(&self, item: &mut Item) -> Result<()> {
        if let Some((code, message)) = self.problem(Some(item)) {
            return Err(Error::field("expires_at", code, message));
        }
        if let Some(s) = self.starts_at {
            item.starts_at = s;
        }
        if let Some(e) = self.expires_at {
            item.expires_at = e;
        }
        Ok(())
    }
}
