//! CMS domain: collection schemas, validation of item data, and the read cache.
//! No SQL and no HTTP here.

pub mod schema;

/// What a cached CMS read is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub org_id: i64,
    pub collection_id: uuid::Uuid,
    /// The normalised query (`list:published:50:0`, `item:<id>`).
    pub query: String,
}

/// The cache of CMS reads.
pub type Cache = crate::cache::Cache<CacheKey>;

impl Cache {
    /// Drops every entry of one collection.
    pub fn purge(&self, org_id: i64, collection_id: uuid::Uuid) {
        self.purge_where(|k| k.org_id == org_id && k.collection_id == collection_id);
    }
}

/// Statuses of a CMS item.
pub const ITEM_STATUSES: &[&str] = &[
    "draft",
    "pending_review",
    "published",
    "expired",
    "archived",
];

/// Visibilities of a collection.
pub const VISIBILITIES: &[&str] = &["public", "gated", "private"];

/// The status of a CMS item (for the API description; stored as text).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Draft,
    PendingReview,
    Published,
    Expired,
    Archived,
}

/// Who a collection is meant for. Only `public` collections may be stored by shared caches
/// (`Cache-Control: public, ...`); every call needs a key whatever the visibility.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    Public,
    Gated,
    Private,
}

/// True when `s` is a valid collection slug: `^[a-z][a-z0-9_-]{0,63}$`.
pub fn valid_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert!(valid_slug("a"));
        assert!(valid_slug("blog_posts-2"));
        assert!(valid_slug(&format!("a{}", "b".repeat(63))));
        assert!(!valid_slug(&format!("a{}", "b".repeat(64))));
        assert!(!valid_slug(""));
        assert!(!valid_slug("1abc"));
        assert!(!valid_slug("Abc"));
        assert!(!valid_slug("a b"));
    }
}
