//! CMS collections and items: `/cms`, `/cms/{slug}`, `/cms/{slug}/schema`,
//! `/cms/{slug}/{id}`. These endpoints answer `{collection}`, `{collections}`, `{item}` and
//! `{items, total, limit, offset}` (no `data`/`meta` envelope); errors use the usual one.
//!
//! List and item reads go through the per-node cache of [`crate::cache`].

use crate::http::input::Getters;
use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::Response,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Auth, JsonBody, Query,
    cached::{self, bypass},
    extract::path_id,
    input::Field,
};
use crate::{
    app::AppState,
    cache::{MAX_AGE_MICROS, Rendered},
    cms::{
        self, CacheKey, ITEM_STATUSES, VISIBILITIES,
        schema::{FieldDef, FieldType, parse_schema, validate_data},
    },
    db::{
        Ts,
        cms::{self as store, Collection, Head, Item, ItemChanges, ListFilter, NewItem},
    },
    error::{ApiError, ApiResult},
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_collections, upsert_collection))
        .routes(routes!(get_collection_schema))
        .routes(routes!(list_items, post_item))
        .routes(routes!(get_item, patch_item, delete_item))
}

/// A field definition in `POST /cms`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct FieldDefIn {
    /// A letter, then letters, digits or `_`; at most 64 characters; unique in the schema.
    #[schema(pattern = "^[A-Za-z][A-Za-z0-9_]{0,63}$")]
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// Items must carry a non-null (for text types non-empty) value. Default false.
    pub required: Option<bool>,
    /// Allowed values; required, non-empty and only allowed on `select` fields.
    pub options: Option<Vec<String>>,
    /// Only on `number` fields.
    pub min: Option<f64>,
    /// Only on `number` fields; not less than `min`.
    pub max: Option<f64>,
    /// Only on `text` (1..5,000) and `longtext` (1..100,000) fields.
    #[schema(minimum = 1, maximum = 100000)]
    pub max_length: Option<i64>,
}

/// Body of `POST /cms`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct CollectionIn {
    #[schema(pattern = "^[a-z][a-z0-9_-]{0,63}$")]
    pub slug: String,
    /// 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// public (default), gated or private. Only public collections may be cached by shared caches.
    #[schema(value_type = Option<crate::cms::Visibility>)]
    pub visibility: Option<String>,
    /// At most 40 field definitions with unique names.
    #[schema(max_items = 40)]
    pub schema: Vec<FieldDefIn>,
}

#[derive(Serialize, ToSchema)]
pub struct CollectionOut {
    pub collection: Collection,
}

#[derive(Serialize, ToSchema)]
pub struct CollectionListOut {
    pub collections: Vec<Collection>,
}

/// Body of `POST /cms/{slug}`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ItemIn {
    /// Validated against the collection schema; unknown fields are dropped.
    pub data: Map<String, Value>,
    /// When given, that existing item is updated (`200`); unknown is `404`.
    pub id: Option<Uuid>,
    /// Default `published` on create.
    #[schema(value_type = Option<crate::cms::ItemStatus>)]
    pub status: Option<String>,
    pub starts_at: Option<Ts>,
    /// Must be after `starts_at` when both are set.
    pub expires_at: Option<Ts>,
    /// Default 0. Lists are ordered by position ascending, then newest first.
    #[schema(minimum = -1000000000, maximum = 1000000000)]
    pub position: Option<i64>,
    pub owner_user_id: Option<Uuid>,
}

/// Body of `PATCH /cms/{slug}/{id}`: at least one field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ItemPatchIn {
    /// Replaces the whole stored `data` and is validated; omitted, `data` is left untouched.
    pub data: Option<Map<String, Value>>,
    #[schema(value_type = Option<crate::cms::ItemStatus>)]
    pub status: Option<String>,
    /// `null` clears it.
    pub starts_at: Option<Ts>,
    /// `null` clears it.
    pub expires_at: Option<Ts>,
    #[schema(minimum = -1000000000, maximum = 1000000000)]
    pub position: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct ItemOut {
    pub item: Item,
}

#[derive(Serialize, ToSchema)]
pub struct ItemListOut {
    pub items: Vec<Item>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Serialize, ToSchema)]
pub struct ItemDeletedOut {
    pub id: Uuid,
    pub deleted: bool,
}

const POSITION_MAX: i64 = 1_000_000_000;

async fn collection(app: &AppState, org_id: i64, slug: &str) -> ApiResult<Collection> {
    if !cms::valid_slug(slug) {
        return Err(ApiError::not_found("collection"));
    }
    store::get_collection(&app.db, org_id, slug)
        .await?
        .ok_or_else(|| ApiError::not_found("collection"))
}

async fn head(app: &AppState, org_id: i64, slug: &str) -> ApiResult<Head> {
    if !cms::valid_slug(slug) {
        return Err(ApiError::not_found("collection"));
    }
    store::head(&app.db, org_id, slug)
        .await?
        .ok_or_else(|| ApiError::not_found("collection"))
}

/// List the organization's CMS collections, by slug.
#[utoipa::path(get, path = "/cms", tag = "cms",
    responses((status = 200, description = "Every collection.", body = CollectionListOut)))]
async fn list_collections(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("cms:read")?;
    q.finish()?;
    let list = store::list_collections(&app.db, auth.org_id).await?;
    Ok(Json(json!({ "collections": list })))
}

/// Create a collection, or replace the name, visibility and schema of the one with this
/// slug. Existing items are not revalidated against a new schema.
#[utoipa::path(post, path = "/cms", tag = "cms", request_body = CollectionIn,
    responses(
        (status = 201, description = "Created.", body = CollectionOut),
        (status = 200, description = "A collection with this slug existed and was replaced.", body = CollectionOut),
    ))]
async fn upsert_collection(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require("cms:write")?;
    let slug = input.field_with("slug", true, |v| match v.as_str() {
        Some(s) if cms::valid_slug(s) => Ok(s.to_string()),
        Some(_) => Err((
            "invalid_format",
            "Must match ^[a-z][a-z0-9_-]{0,63}$.".to_string(),
        )),
        None => Err(("invalid_type", "Must be a string.".to_string())),
    });
    let name = input.string("name", true, 1, 200);
    let visibility = input.one_of("visibility", false, VISIBILITIES);
    let schema = input.any("schema");
    let schema = match schema {
        Field::Value(v) => match parse_schema(&v) {
            Ok(s) => Some(s),
            Err(errs) => {
                for e in errs {
                    input.error(&e.field, e.code, e.message);
                }
                None
            }
        },
        _ => {
            input.error("schema", "required", "This field is required.");
            None
        }
    };
    let name = name.opt().map(|n| n.trim().to_string());
    if matches!(&name, Some(n) if n.is_empty()) {
        input.error("name", "too_short", "Must not be blank.");
    }
    input.finish()?;
    let (Some(slug), Some(name), Some(schema)) = (slug.opt(), name, schema) else {
        return Err(ApiError::internal(&"validated collection fields missing"));
    };
    let visibility = visibility.opt().unwrap_or_else(|| "public".into());
    let (c, created) =
        store::upsert_collection(&app.db, auth.org_id, &slug, &name, &visibility, &schema).await?;
    app.cms_cache.purge(auth.org_id, c.id);
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({ "collection": c }))))
}

/// Read one collection with its schema.
#[utoipa::path(get, path = "/cms/{slug}/schema", tag = "cms",
    params(("slug" = String, Path, description = "Collection slug.")),
    responses((status = 200, description = "The collection.", body = CollectionOut)))]
async fn get_collection_schema(
    State(app): State<AppState>,
    auth: Auth,
    Path(slug): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("cms:read")?;
    q.finish()?;
    let c = collection(&app, auth.org_id, &slug).await?;
    Ok(Json(json!({ "collection": c })))
}

fn cache_control(visibility: &str) -> HeaderValue {
    if visibility == "public" {
        HeaderValue::from_static("public, s-maxage=60, stale-while-revalidate=60")
    } else {
        HeaderValue::from_static("private, no-cache")
    }
}

/// Answers a read from the cache, or renders it with `render` and stores it.
async fn cached_read<F, Fut>(
    app: &AppState,
    org_id: i64,
    head: &Head,
    query: String,
    headers: &HeaderMap,
    render: F,
) -> ApiResult<Response>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = ApiResult<Value>>,
{
    let key = CacheKey {
        org_id,
        collection_id: head.id,
        query,
    };
    let rendered = app
        .cms_cache
        .read_through(
            key,
            head.version,
            || Ts::now().micros(),
            bypass(headers),
            || async {
                let now = Ts::now();
                let body = render().await?;
                let rendered =
                    Rendered::new(serde_json::to_vec(&body).map_err(|e| ApiError::internal(&e))?);
                let boundary = store::next_boundary(&app.db, head.id, now).await?;
                let deadline = boundary
                    .map_or(i64::MAX, |b| b.micros())
                    .min(now.micros() + MAX_AGE_MICROS);
                Ok::<_, ApiError>((rendered, deadline))
            },
        )
        .await?;
    Ok(cached::respond(
        rendered,
        headers,
        cache_control(&head.visibility),
    ))
}

/// List a collection's items.
///
/// Without `status`: the public list, i.e. `published` items whose `starts_at` is not in
/// the future and whose `expires_at` has not passed (an item leaves it at its `expires_at`
/// exactly). With `status`: every item of that status. Order: `position` ascending, then
/// newest first. Responses carry a strong `ETag`; `If-None-Match` with it answers `304`.
/// Reads are cached for at most 60 s, never past the collection's next window boundary,
/// and never after a write to the collection (a request sent with `Cache-Control: no-cache`
/// is rendered afresh). `Cache-Control` is
/// `public, s-maxage=60, stale-while-revalidate=60` for public collections, else
/// `private, no-cache`.
#[utoipa::path(get, path = "/cms/{slug}", tag = "cms",
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("status" = Option<crate::cms::ItemStatus>, Query, description = "Only items of this status (windows then do not apply)."),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 50.", minimum = 1, maximum = 500),
        ("offset" = Option<i64>, Query, description = "0 or more, default 0.", minimum = 0),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier response."),
    ),
    responses(
        (status = 200, description = "A page of items.", body = ItemListOut,
            headers(("ETag" = String, description = "Strong entity tag."), ("Cache-Control" = String))),
        (status = 304, description = "Not modified: the ETag sent is current."),
    ))]
async fn list_items(
    State(app): State<AppState>,
    auth: Auth,
    Path(slug): Path<String>,
    headers: HeaderMap,
    Query(mut q): Query,
) -> ApiResult<Response> {
    auth.require("cms:read")?;
    let status = q.one_of("status", ITEM_STATUSES);
    let limit = q.integer("limit", 50, 1, 500);
    let offset = q.integer("offset", 0, 0, i64::MAX);
    q.finish()?;
    let head = head(&app, auth.org_id, &slug).await?;
    let query = format!("list:{}:{limit}:{offset}", status.as_deref().unwrap_or(""));
    let (org_id, coll) = (auth.org_id, head.id);
    cached_read(&app, auth.org_id, &head, query, &headers, || async {
        let filter = match &status {
            Some(s) => ListFilter::Status(s),
            None => ListFilter::Public(Ts::now()),
        };
        let (items, total) =
            store::list_items(&app.db, org_id, coll, filter, limit, offset).await?;
        Ok(json!({ "items": items, "total": total, "limit": limit, "offset": offset }))
    })
    .await
}

/// Read one item (whatever its status). Cached, with `ETag` and `Cache-Control`, like the list.
#[utoipa::path(get, path = "/cms/{slug}/{id}", tag = "cms",
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("id" = Uuid, Path, description = "Item id."),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier response."),
    ),
    responses(
        (status = 200, description = "The item.", body = ItemOut,
            headers(("ETag" = String, description = "Strong entity tag."), ("Cache-Control" = String))),
        (status = 304, description = "Not modified: the ETag sent is current."),
    ))]
async fn get_item(
    State(app): State<AppState>,
    auth: Auth,
    Path((slug, raw)): Path<(String, String)>,
    headers: HeaderMap,
    Query(q): Query,
) -> ApiResult<Response> {
    auth.require("cms:read")?;
    q.finish()?;
    let head = head(&app, auth.org_id, &slug).await?;
    let id = path_id(&raw, "item")?;
    let (org_id, coll) = (auth.org_id, head.id);
    cached_read(
        &app,
        auth.org_id,
        &head,
        format!("item:{id}"),
        &headers,
        || async {
            let item = store::get_item(&app.db, org_id, coll, id)
                .await?
                .ok_or_else(|| ApiError::not_found("item"))?;
            Ok(json!({ "item": item }))
        },
    )
    .await
}

fn check_window(input: &mut super::input::Input, starts_at: Option<Ts>, expires_at: Option<Ts>) {
    if let (Some(s), Some(e)) = (starts_at, expires_at)
        && e <= s
    {
        input.error("expires_at", "out_of_range", "Must be after starts_at.");
    }
}

fn check_data(schema: &[FieldDef], data: Map<String, Value>) -> ApiResult<Map<String, Value>> {
    validate_data(schema, data).map_err(ApiError::schema_validation)
}

/// Create an item, or update the item named by `id`.
///
/// `data` is validated against the collection schema (failures: `422
/// schema_validation_failed`, every failing field named `data.<field>`); fields unknown to
/// the schema are dropped. On create, `status` defaults to `published` and `position` to 0.
/// On update, `data` is replaced; other fields sent replace stored values and fields
/// omitted keep them (`null` clears `starts_at`, `expires_at`, `owner_user_id`).
#[utoipa::path(post, path = "/cms/{slug}", tag = "cms", request_body = ItemIn,
    params(("slug" = String, Path, description = "Collection slug.")),
    responses(
        (status = 201, description = "Created.", body = ItemOut),
        (status = 200, description = "The item named by `id` was updated.", body = ItemOut),
    ))]
async fn post_item(
    State(app): State<AppState>,
    auth: Auth,
    Path(slug): Path<String>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require("cms:write")?;
    let c = collection(&app, auth.org_id, &slug).await?;
    let id = input.uuid("id", false).opt();
    let data = input.object("data", true).opt();
    let status = input.one_of("status", false, ITEM_STATUSES).opt();
    let starts_at = input.timestamp("starts_at", false);
    let expires_at = input.timestamp("expires_at", false);
    let position = input
        .integer("position", false, -POSITION_MAX, POSITION_MAX)
        .opt();
    let owner = input.uuid("owner_user_id", false);
    let current = match id {
        Some(id) => Some(
            store::get_item(&app.db, auth.org_id, c.id, id)
                .await?
                .ok_or_else(|| ApiError::not_found("item"))?,
        ),
        None => None,
    };
    let starts_at = starts_at.patch();
    let expires_at = expires_at.patch();
    check_window(
        &mut input,
        starts_at.unwrap_or(current.as_ref().and_then(|i| i.starts_at)),
        expires_at.unwrap_or(current.as_ref().and_then(|i| i.expires_at)),
    );
    input.finish()?;
    let data = check_data(&c.schema, data.unwrap_or_default())?;
    let (status_code, item) = match id {
        None => {
            let item = store::create_item(
                &app.db,
                auth.org_id,
                c.id,
                NewItem {
                    data,
                    status: status.unwrap_or_else(|| "published".into()),
                    starts_at: starts_at.flatten(),
                    expires_at: expires_at.flatten(),
                    position: position.unwrap_or(0),
                    owner_user_id: owner.opt(),
                },
            )
            .await?;
            (StatusCode::CREATED, item)
        }
        Some(id) => {
            let changes = ItemChanges {
                data: Some(data),
                status,
                starts_at,
                expires_at,
                position,
                owner_user_id: owner.patch(),
            };
            let item = store::update_item(&app.db, auth.org_id, c.id, id, changes)
                .await?
                .ok_or_else(|| ApiError::not_found("item"))?;
            (StatusCode::OK, item)
        }
    };
    app.cms_cache.purge(auth.org_id, c.id);
    Ok((status_code, Json(json!({ "item": item }))))
}

/// Update an item. When `data` is sent, the whole stored `data` is replaced and validated;
/// sending only `status`, `starts_at`, `expires_at` or `position` leaves `data` untouched.
#[utoipa::path(patch, path = "/cms/{slug}/{id}", tag = "cms", request_body = ItemPatchIn,
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("id" = Uuid, Path, description = "Item id."),
    ),
    responses((status = 200, description = "The updated item.", body = ItemOut)))]
async fn patch_item(
    State(app): State<AppState>,
    auth: Auth,
    Path((slug, raw)): Path<(String, String)>,
    JsonBody(mut input): JsonBody,
) -> ApiResult<Json<Value>> {
    auth.require("cms:write")?;
    let c = collection(&app, auth.org_id, &slug).await?;
    let id = path_id(&raw, "item")?;
    let current = store::get_item(&app.db, auth.org_id, c.id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("item"))?;
    if input.is_empty() {
        return Err(ApiError::field(
            "body",
            "required",
            "Send at least one of: data, status, starts_at, expires_at, position.",
        ));
    }
    let data = input.object("data", false);
    let status = input.one_of("status", false, ITEM_STATUSES);
    let starts_at = input.timestamp("starts_at", false).patch();
    let expires_at = input.timestamp("expires_at", false).patch();
    let position = input.integer("position", false, -POSITION_MAX, POSITION_MAX);
    for (name, null) in [
        ("data", data == Field::Null),
        ("status", status == Field::Null),
        ("position", position == Field::Null),
    ] {
        if null {
            input.error(
                name,
                "required",
                "Must not be null; omit it to keep the stored value.",
            );
        }
    }
    check_window(
        &mut input,
        starts_at.unwrap_or(current.starts_at),
        expires_at.unwrap_or(current.expires_at),
    );
    input.finish()?;
    let data = match data.opt() {
        Some(d) => Some(check_data(&c.schema, d)?),
        None => None,
    };
    let changes = ItemChanges {
        data,
        status: status.opt(),
        starts_at,
        expires_at,
        position: position.opt(),
        owner_user_id: None,
    };
    let item = store::update_item(&app.db, auth.org_id, c.id, id, changes)
        .await?
        .ok_or_else(|| ApiError::not_found("item"))?;
    app.cms_cache.purge(auth.org_id, c.id);
    Ok(Json(json!({ "item": item })))
}

/// Delete an item permanently.
#[utoipa::path(delete, path = "/cms/{slug}/{id}", tag = "cms",
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("id" = Uuid, Path, description = "Item id."),
    ),
    responses((status = 200, description = "Deleted.", body = ItemDeletedOut)))]
async fn delete_item(
    State(app): State<AppState>,
    auth: Auth,
    Path((slug, raw)): Path<(String, String)>,
    Query(q): Query,
) -> ApiResult<Json<Value>> {
    auth.require("cms:write")?;
    q.finish()?;
    let head = head(&app, auth.org_id, &slug).await?;
    let id = path_id(&raw, "item")?;
    if !store::delete_item(&app.db, auth.org_id, head.id, id).await? {
        return Err(ApiError::not_found("item"));
    }
    app.cms_cache.purge(auth.org_id, head.id);
    Ok(Json(json!({ "id": id, "deleted": true })))
}
