//! The read cache of CMS lists and items (one per node, see [`crate::cache`]): what an
//! entry is keyed by, and the purge of a collection's entries after a write.
//!
//! An entry is served only at the collection version it was rendered at, so the purge
//! is not what keeps reads fresh (every node sees a write through the version): it frees
//! at once the memory of entries that can no longer be served.

use uuid::Uuid;

use super::model::ItemListQuery;
use crate::OrgId;

/// What a cached CMS read is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub org_id: OrgId,
    pub collection_id: Uuid,
    /// The normalised query (`list:published:50:0`, `item:<id>`).
    pub query: String,
}

impl CacheKey {
    /// The key of a page of a collection's items.
    pub fn list(org_id: OrgId, collection_id: Uuid, q: &ItemListQuery) -> CacheKey {
        let status = q.status.map_or("", |s| s.as_str());
        CacheKey {
            org_id,
            collection_id,
            query: format!("list:{status}:{}:{}", q.limit, q.offset),
        }
    }

    /// The key of one item.
    pub fn item(org_id: OrgId, collection_id: Uuid, id: Uuid) -> CacheKey {
        CacheKey {
            org_id,
            collection_id,
            query: format!("item:{id}"),
        }
    }
}

/// The cache of CMS reads.
pub type Cache = crate::cache::Cache<CacheKey>;

/// What the cache of CMS reads can forget.
pub trait Purge {
    /// Drops every entry of one collection.
    fn purge(&self, org_id: OrgId, collection_id: Uuid);
}

impl Purge for Cache {
    fn purge(&self, org_id: OrgId, collection_id: Uuid) {
        self.purge_where(|k| k.org_id == org_id && k.collection_id == collection_id);
    }
}
