//! CMS collections and items: their closed sets, their stored rows, the request bodies
//! and the list query. A collection's schema (its field definitions, and how an item's
//! `data` is checked against them) is in [`super::schema`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{
    ToSchema,
    openapi::{RefOr, schema::Schema},
};
use uuid::Uuid;

pub use super::schema::Fields;
use super::schema::{FieldArray, FieldDef, Slug};
use crate::{
    Ts,
    kind::{Check, Enum, Flag, Id, Instant, Int, Kind, Object, Refs, Text, Trimmed},
    query,
    query::{QEnum, QInt},
    request, text_enum,
};

text_enum!(
    /// Where a CMS item is in its life. `published` items are in the public list while
    /// inside their window (`starts_at`, `expires_at`); a published item past `expires_at`
    /// moves to `expired` by itself. Any status may follow any other.
    ItemStatus {
        Draft = "draft",
        PendingReview = "pending_review",
        Published = "published",
        Expired = "expired",
        Archived = "archived",
    }
);

text_enum!(
    /// Who a collection is meant for. Only `public` collections may be stored by shared
    /// caches (`Cache-Control: public, ...`); every call needs a key whatever the visibility.
    Visibility { Public = "public", Gated = "gated", Private = "private" }
);

text_enum!(
    /// What happens to a public submission: `manual` stores it as `pending_review` (staff
    /// publish it), `auto` publishes it at once.
    Moderation { Manual = "manual", Auto = "auto" }
);

text_enum!(
    /// The item field a collection's lists are ordered by.
    SortBy {
        CreatedAt = "created_at",
        UpdatedAt = "updated_at",
        Position = "position",
        StartsAt = "starts_at",
        ExpiresAt = "expires_at",
    }
);

text_enum!(
    /// The direction of a collection's list order.
    SortDir { Asc = "asc", Desc = "desc" }
);

/// A collection's rules: whether anyone may submit items through the board's host, how
/// submissions are moderated, and how its lists are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
pub struct CollectionRules {
    /// Whether `POST /cms/{slug}/submit` (no key) and the board's form accept items.
    pub allow_public_submit: bool,
    pub moderation: Moderation,
    /// Null: by `position` ascending, then newest first (the order without rules).
    #[schema(required = true)]
    pub sort_by: Option<SortBy>,
    /// Applies to `sort_by` (ties: by id in the same direction).
    pub sort_dir: SortDir,
}

impl Default for CollectionRules {
    fn default() -> Self {
        CollectionRules {
            allow_public_submit: false,
            moderation: Moderation::Manual,
            sort_by: None,
            sort_dir: SortDir::Asc,
        }
    }
}

impl CollectionRules {
    /// The rules with a `rules` block applied: fields sent replace, fields omitted keep
    /// their value (`sort_by: null` goes back to the default order).
    pub fn with(mut self, r: &CollectionRulesIn) -> CollectionRules {
        if let Some(v) = r.allow_public_submit {
            self.allow_public_submit = v;
        }
        if let Some(v) = r.moderation {
            self.moderation = v;
        }
        if let Some(v) = r.sort_by.clone().patch() {
            self.sort_by = v;
        }
        if let Some(v) = r.sort_dir {
            self.sort_dir = v;
        }
        self
    }

    /// The order of the collection's lists.
    pub fn order(&self) -> Order {
        Order {
            sort_by: self.sort_by,
            sort_dir: self.sort_dir,
        }
    }

    /// The status a public submission is stored with.
    pub fn submitted_status(&self) -> ItemStatus {
        match self.moderation {
            Moderation::Manual => ItemStatus::PendingReview,
            Moderation::Auto => ItemStatus::Published,
        }
    }
}

/// How a list of items is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub sort_by: Option<SortBy>,
    pub sort_dir: SortDir,
}

impl Order {
    /// The `ORDER BY` clause: the default order without `sort_by`; else the field (items
    /// without a value last, in both directions and on both backends), then the id.
    pub fn sql(&self) -> String {
        let dir = match self.sort_dir {
            SortDir::Asc => "ASC",
            SortDir::Desc => "DESC",
        };
        match self.sort_by {
            None => "position ASC, created_at DESC, id DESC".to_string(),
            Some(SortBy::StartsAt) => format!("(starts_at IS NULL) ASC, starts_at {dir}, id {dir}"),
            Some(SortBy::ExpiresAt) => {
                format!("(expires_at IS NULL) ASC, expires_at {dir}, id {dir}")
            }
            Some(by) => format!("{} {dir}, id {dir}", by.as_str()),
        }
    }
}

request! {
    /// The `rules` block of `POST /cms`. On a new collection, omitted fields take their
    /// defaults; on a replaced one they keep their stored value.
    pub struct CollectionRulesIn {
        /// Default `false`.
        pub allow_public_submit: not_null Flag,
        /// Default `manual`.
        pub moderation: not_null Enum<Moderation>,
        /// Default: none (by `position` ascending, then newest first); `null` goes back
        /// to it.
        pub sort_by: nullable Enum<SortBy>,
        /// Default `asc`.
        pub sort_dir: not_null Enum<SortDir>,
    }
}

/// The `rules` field of [`CollectionIn`] in the document: the block is read on its own
/// (see `upsert_collection`), so that its problems are named `rules.<field>`.
pub struct RulesBlock;

impl Kind for RulesBlock {
    type Value = ();
    fn parse(_v: &Value) -> Check<()> {
        Ok(())
    }
    fn schema() -> RefOr<Schema> {
        RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
            CollectionRulesIn::name(),
        ))
    }
    fn refs(out: &mut Refs) {
        crate::request::block_refs::<CollectionRulesIn>(out);
    }
}

/// Most items a list page holds.
pub const LIST_LIMIT_MAX: i64 = 500;
/// Largest `position` (and the negative of the smallest).
pub const POSITION_MAX: i64 = 1_000_000_000;

/// An item's fields, checked against its collection's schema: stored as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ItemData(pub Map<String, Value>);

jobboard_core::json_columns!(super::schema::Fields, ItemData);

/// A collection as returned by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Collection {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    pub visibility: Visibility,
    #[schema(value_type = Vec<FieldDef>)]
    pub schema: Fields,
    #[sqlx(flatten)]
    pub rules: CollectionRules,
    pub created_at: Ts,
    pub updated_at: Ts,
    /// Bumped by every write to the collection or its items (see the read cache).
    #[serde(skip)]
    #[schema(ignore)]
    pub version: i64,
}

/// What a read needs to know of a collection: its id, visibility, current version and
/// list order.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Head {
    pub id: Uuid,
    pub visibility: Visibility,
    pub version: i64,
    pub sort_by: Option<SortBy>,
    pub sort_dir: SortDir,
}

impl Head {
    pub fn order(&self) -> Order {
        Order {
            sort_by: self.sort_by,
            sort_dir: self.sort_dir,
        }
    }
}

/// An item as returned by the API.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Item {
    pub id: Uuid,
    /// The item's fields, validated against the collection schema.
    #[schema(value_type = Object)]
    pub data: ItemData,
    pub status: ItemStatus,
    pub starts_at: Option<Ts>,
    pub expires_at: Option<Ts>,
    pub position: i64,
    pub created_at: Ts,
    pub updated_at: Ts,
    pub owner_user_id: Option<Uuid>,
}

/// Which items a list returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFilter {
    /// Published, started (`starts_at <= now`) and not expired (`expires_at > now`).
    Public(Ts),
    /// Every item of this status.
    Status(ItemStatus),
}

request! {
    /// Body of `POST /cms`. A collection with this slug is replaced (its name, visibility and
    /// schema); its items are not revalidated against the new schema.
    #[sent = CollectionSent]
    pub struct CollectionIn {
        /// Unique in the organization.
        pub slug: required Slug,
        /// Stored without surrounding white space.
        pub name: required Trimmed<1, 200>,
        /// Default `public`.
        pub visibility: optional Enum<Visibility>,
        /// The item fields: at most 40 definitions, their names unique (an empty schema is
        /// allowed).
        pub schema: required FieldArray,
        /// Public submissions, their moderation and the list order. Omitted (or `null`):
        /// the defaults on a new collection, the stored rules on a replaced one.
        pub rules: optional RulesBlock,
    }
}

request! {
    /// Body of `POST /cms/{slug}/submit` (no key): an item proposed by anyone, through
    /// the board's host.
    pub struct SubmissionIn {
        /// The item's fields, checked against the collection's schema as on
        /// `POST /cms/{slug}` (fields the schema does not define are dropped).
        pub data: required Object,
        /// A trap for automated programs: leave it out or empty. A submission that fills
        /// it is refused and nothing is stored.
        pub reference_code: optional Text<0, 1000>,
    }
}

request! {
    /// Body of `POST /cms/{slug}`: creates an item or, with `id`, updates that item. On
    /// update, `data` is replaced, other fields sent replace the stored values and fields
    /// omitted keep them.
    #[sent = ItemSent]
    pub struct ItemIn {
        /// An item of this collection to update (`200`); an unknown one is `404`.
        pub id: optional Id,
        /// The item's fields, checked against the collection's schema
        /// (`GET /cms/{slug}/schema`): every schema field's value must have its type and
        /// limits, and required ones must be present and not `null` (nor blank, for text).
        /// Failures are answered `422 schema_validation_failed`, each field named
        /// `data.<field>`. Fields the schema does not define are accepted and dropped, not
        /// stored: the one body whose unknown fields are not refused. At most 32 levels deep,
        /// without NUL characters.
        pub data: required Object,
        /// Default `published` on create.
        pub status: optional Enum<ItemStatus>,
        /// When the item enters the public list; `null` clears it.
        pub starts_at: nullable Instant,
        /// When the item leaves the public list; after `starts_at` when both are set; `null`
        /// clears it.
        pub expires_at: nullable Instant,
        /// Default 0. Lists are ordered by position ascending, then newest first.
        pub position: optional Int<{ -POSITION_MAX }, { POSITION_MAX }>,
        /// `null` clears it.
        pub owner_user_id: nullable Id,
    }
}

request! {
    /// Body of `PATCH /cms/{slug}/{id}`: at least one field. Fields omitted keep their
    /// stored values.
    #[min_properties = 1]
    pub struct ItemPatch {
        /// Replaces the whole stored `data`, checked as in `POST /cms/{slug}` (fields the
        /// schema does not define are dropped). Omitted, `data` is left untouched.
        pub data: not_null Object,
        pub status: not_null Enum<ItemStatus>,
        /// `null` clears it.
        pub starts_at: nullable Instant,
        /// After `starts_at` when both are set; `null` clears it.
        pub expires_at: nullable Instant,
        pub position: not_null Int<{ -POSITION_MAX }, { POSITION_MAX }>,
    }
}

query! {
    /// Query of `GET /cms/{slug}`.
    pub struct ItemListQuery {
        /// Only items of this status (windows then do not apply). Without it: the public
        /// list.
        pub status: QEnum<ItemStatus> = optional,
        /// Items per page.
        pub limit: QInt<1, { LIST_LIMIT_MAX }> = default(50),
        /// Items skipped before the page.
        pub offset: QInt<0, { i64::MAX }> = default(0),
    }
}

impl ItemListQuery {
    /// Which items the query lists at `now`.
    pub fn filter(&self, now: Ts) -> ListFilter {
        match self.status {
            Some(s) => ListFilter::Status(s),
            None => ListFilter::Public(now),
        }
    }
}
