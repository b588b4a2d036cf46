//! CMS collections and items: `/cms`, `/cms/{slug}`, `/cms/{slug}/schema`,
//! `/cms/{slug}/{id}`. These endpoints answer `{collection}`, `{collections}`, `{item}` and
//! `{items, total, limit, offset}` (no `data`/`meta` envelope); errors use the usual one.
//!
//! List and item reads go through the per-node cache of [`jobboard_core::cache`].

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use jobboard_domain::cms::Purge as _;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Auth, JsonBody, Query,
    auth::rate_limited,
    cached::{self, bypass},
    extract::{ClientAddr, FormSizedJsonBody, path_id},
};
use jobboard_app::app::AppState;
use jobboard_app::error::{ApiError, ApiResult};
use jobboard_core::cache::{MAX_AGE_MICROS, Rendered};
use jobboard_domain::{
    OrgId,
    cms::{
        self, CacheKey, Collection, CollectionIn, Head, Item, ItemIn, ItemListQuery, ItemPatch,
        ItemStatus, SubmissionIn, Visibility,
    },
    orgs,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_collections, upsert_collection))
        .routes(routes!(get_collection_schema))
        .routes(routes!(list_items, post_item))
        .routes(routes!(get_item, patch_item, delete_item))
        .routes(routes!(submit_item))
        .route(
            "/cms/{slug}/submit",
            axum::routing::options(submit_preflight),
        )
}

/// Lets a page of any site send submissions from a browser: the endpoint takes no key
/// and no cookie, so any origin may call it (`Access-Control-Allow-Origin: *`).
const CORS: [(axum::http::HeaderName, &str); 4] = [
    (axum::http::header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
    (axum::http::header::ACCESS_CONTROL_ALLOW_METHODS, "POST"),
    (
        axum::http::header::ACCESS_CONTROL_ALLOW_HEADERS,
        "content-type",
    ),
    (axum::http::header::ACCESS_CONTROL_MAX_AGE, "86400"),
];

/// The CORS preflight of `POST /cms/{slug}/submit`.
async fn submit_preflight() -> (StatusCode, [(axum::http::HeaderName, &'static str); 4]) {
    (StatusCode::NO_CONTENT, CORS)
}

#[derive(Serialize, ToSchema)]
pub struct CollectionOut {
    pub collection: Collection,
}

#[derive(Serialize, ToSchema)]
pub struct CollectionListOut {
    pub collections: Vec<Collection>,
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
    /// Always true.
    pub deleted: bool,
}

/// The collection a read names, or `404 not_found` (`collection`).
async fn head(app: &AppState, org_id: OrgId, slug: &str) -> ApiResult<Head> {
    Ok(cms::head(&app.db, org_id, slug)
        .await?
        .ok_or(jobboard_domain::Error::NotFound("collection"))?)
}

/// List the organization's CMS collections, by slug.
///
/// Needs the `cms:read` scope.
#[utoipa::path(get, path = "/cms", tag = "cms",
    responses((status = 200, description = "Every collection.", body = CollectionListOut)))]
async fn list_collections(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<CollectionListOut>> {
    auth.require("cms:read")?;
    q.finish()?;
    let collections = cms::list_collections(&app.db, auth.org_id).await?;
    Ok(Json(CollectionListOut { collections }))
}

/// Create a collection, or replace the name, visibility and schema of the one with this
/// slug.
///
/// Existing items are not revalidated against a new schema. Needs the `cms:write` scope.
#[utoipa::path(post, path = "/cms", tag = "cms", request_body = CollectionIn,
    responses(
        (status = 201, description = "Created.", body = CollectionOut),
        (status = 200, description = "A collection with this slug existed and was replaced.", body = CollectionOut),
    ))]
async fn upsert_collection(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<CollectionOut>)> {
    auth.require("cms:write")?;
    let written = cms::upsert_collection(&app.db, auth.org_id, input).await?;
    app.cms_cache.purge(auth.org_id, written.collection.id);
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(CollectionOut {
            collection: written.collection,
        }),
    ))
}

/// Read one collection with its schema.
///
/// Needs the `cms:read` scope.
#[utoipa::path(get, path = "/cms/{slug}/schema", tag = "cms",
    params(("slug" = String, Path, description = "Collection slug.")),
    responses((status = 200, description = "The collection.", body = CollectionOut)))]
async fn get_collection_schema(
    State(app): State<AppState>,
    auth: Auth,
    Path(slug): Path<String>,
    Query(q): Query,
) -> ApiResult<Json<CollectionOut>> {
    auth.require("cms:read")?;
    q.finish()?;
    let collection = cms::collection(&app.db, auth.org_id, &slug).await?;
    Ok(Json(CollectionOut { collection }))
}

fn cache_control(visibility: Visibility) -> HeaderValue {
    if visibility == Visibility::Public {
        HeaderValue::from_static("public, s-maxage=60, stale-while-revalidate=60")
    } else {
        HeaderValue::from_static("private, no-cache")
    }
}

/// Answers a read of the collection `head` from the cache, or renders it with `render`
/// and stores it: valid until the collection's next window boundary (and at most
/// [`MAX_AGE_MICROS`]), while the collection's version is unchanged.
async fn cached_read<T, F, Fut>(
    app: &AppState,
    head: &Head,
    key: CacheKey,
    headers: &HeaderMap,
    render: F,
) -> ApiResult<Response>
where
    T: Serialize,
    F: FnOnce() -> Fut,
    Fut: Future<Output = jobboard_domain::Result<T>>,
{
    let rendered = app
        .cms_cache
        .read_through(
            key,
            head.version,
            || app.clock.now().micros(),
            bypass(headers),
            || async {
                let now = app.clock.now();
                let body = render().await?;
                let rendered =
                    Rendered::new(serde_json::to_vec(&body).map_err(|e| ApiError::internal(&e))?);
                let boundary = cms::next_boundary(&app.db, head.id, now).await?;
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
        cache_control(head.visibility),
    ))
}

/// List a collection's items.
///
/// Without `status`: the public list, i.e. `published` items whose `starts_at` is not in
/// the future and whose `expires_at` has not passed (an item leaves it at its `expires_at`
/// exactly). With `status`: every item of that status. Order: `position` ascending, then
/// newest first. Responses carry a strong `ETag`; `If-None-Match` with it answers `304`.
/// Reads are cached for at most 60 s, never past the collection's next window boundary, and
/// never after a write to the collection (a request sent with `Cache-Control: no-cache` is
/// rendered afresh). `Cache-Control` is `public, s-maxage=60, stale-while-revalidate=60`
/// for public collections, else `private, no-cache`. Needs the `cms:read` scope.
#[utoipa::path(get, path = "/cms/{slug}", tag = "cms",
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ItemListQuery,
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier response."),
        ("Cache-Control" = Option<String>, Header, description = "`no-cache` renders the list afresh."),
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
    let lq = ItemListQuery::read(&mut q);
    q.finish()?;
    let head = head(&app, auth.org_id, &slug).await?;
    let key = CacheKey::list(auth.org_id, head.id, &lq);
    cached_read(&app, &head, key, &headers, || async {
        let (items, total) = cms::list_items(
            &app.db,
            auth.org_id,
            head.id,
            lq.filter(app.clock.now()),
            head.order(),
            lq.limit,
            lq.offset,
        )
        .await?;
        Ok(ItemListOut {
            items,
            total,
            limit: lq.limit,
            offset: lq.offset,
        })
    })
    .await
}

/// Read one item (whatever its status).
///
/// Cached, with `ETag` and `Cache-Control`, like the list. Needs the `cms:read` scope.
#[utoipa::path(get, path = "/cms/{slug}/{id}", tag = "cms",
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("id" = Uuid, Path, description = "Item id."),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier response."),
        ("Cache-Control" = Option<String>, Header, description = "`no-cache` renders the item afresh."),
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
    let key = CacheKey::item(auth.org_id, head.id, id);
    cached_read(&app, &head, key, &headers, || async {
        let item = cms::get_item(&app.db, auth.org_id, head.id, id).await?;
        Ok(ItemOut { item })
    })
    .await
}

/// Create an item, or update the item named by `id`.
///
/// `data` is validated against the collection schema (failures: `422
/// schema_validation_failed`, every failing field named `data.<field>`); fields unknown to
/// the schema are dropped. On create, `status` defaults to `published` and `position` to 0.
/// On update, `data` is replaced; other fields sent replace stored values and fields
/// omitted keep them (`null` clears `starts_at`, `expires_at`, `owner_user_id`). Needs the
/// `cms:write` scope.
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
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<ItemOut>)> {
    auth.require("cms:write")?;
    let collection = cms::collection(&app.db, auth.org_id, &slug).await?;
    let saved = cms::save_item(&app.db, auth.org_id, &collection, input).await?;
    app.cms_cache.purge(auth.org_id, collection.id);
    let status = if saved.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(ItemOut { item: saved.item })))
}

/// Update an item.
///
/// When `data` is sent, the whole stored `data` is replaced and validated; sending only
/// `status`, `starts_at`, `expires_at` or `position` leaves `data` untouched. Needs the
/// `cms:write` scope.
#[utoipa::path(patch, path = "/cms/{slug}/{id}", tag = "cms", request_body = ItemPatch,
    params(
        ("slug" = String, Path, description = "Collection slug."),
        ("id" = Uuid, Path, description = "Item id."),
    ),
    responses((status = 200, description = "The updated item.", body = ItemOut)))]
async fn patch_item(
    State(app): State<AppState>,
    auth: Auth,
    Path((slug, raw)): Path<(String, String)>,
    JsonBody(input): JsonBody,
) -> ApiResult<Json<ItemOut>> {
    auth.require("cms:write")?;
    let collection = cms::collection(&app.db, auth.org_id, &slug).await?;
    let id = path_id(&raw, "item")?;
    let item = cms::update_item(&app.db, auth.org_id, &collection, id, input).await?;
    app.cms_cache.purge(auth.org_id, collection.id);
    Ok(Json(ItemOut { item }))
}

/// Delete an item permanently.
///
/// Needs the `cms:write` scope.
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
) -> ApiResult<Json<ItemDeletedOut>> {
    auth.require("cms:write")?;
    q.finish()?;
    let head = head(&app, auth.org_id, &slug).await?;
    let id = path_id(&raw, "item")?;
    cms::delete_item(&app.db, auth.org_id, head.id, id).await?;
    app.cms_cache.purge(auth.org_id, head.id);
    Ok(Json(ItemDeletedOut { id, deleted: true }))
}

/// What a public submission answers: the new item's id and status, nothing else.
#[derive(Serialize, ToSchema)]
pub struct Submitted {
    pub id: Uuid,
    /// `pending_review` under manual moderation, `published` under auto.
    pub status: ItemStatus,
}

#[derive(Serialize, ToSchema)]
pub struct SubmittedOut {
    pub item: Submitted,
}

/// Propose an item for a collection that accepts public submissions; no key.
///
/// The organization is the one whose board answers the request's `Host`, as on the board;
/// only its collections whose `rules.allow_public_submit` is true take submissions (any
/// other slug is `404`). `data` is checked against the schema like any item's; the item is
/// stored as `pending_review` under `manual` moderation and `published` under `auto`, and
/// the answer reveals nothing but its id and status. The body is at most 256 KiB; a filled
/// `reference_code` (a trap for automated programs) is refused; each client address may
/// submit as often as the board's forms allow (`form_limit` a minute, shared with them),
/// then `429`.
#[utoipa::path(post, path = "/cms/{slug}/submit", tag = "cms", request_body = SubmissionIn,
    security(()),
    params(("slug" = String, Path, description = "Collection slug.")),
    responses(
        (status = 201, description = "Stored.", body = SubmittedOut),
        (status = 429, description = "Too many submissions from this client address.", body = crate::docs::Error),
    ))]
async fn submit_item(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    headers: HeaderMap,
    ClientAddr(client): ClientAddr,
    body: Result<FormSizedJsonBody, ApiError>,
) -> Response {
    let outcome = match body {
        Ok(FormSizedJsonBody(input)) => submit(&app, &slug, &headers, client, input).await,
        Err(e) => Err(e),
    };
    // Every answer, errors included, may be read by the page that sent it.
    let mut res = match outcome {
        Ok(out) => (StatusCode::CREATED, Json(out)).into_response(),
        Err(e) => e.into_response(),
    };
    let (name, value) = &CORS[0];
    res.headers_mut()
        .insert(name.clone(), HeaderValue::from_static(value));
    res
}

async fn submit(
    app: &AppState,
    slug: &str,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
    input: jobboard_domain::Input,
) -> ApiResult<SubmittedOut> {
    let host = jobboard_app::net::host_of(headers);
    let board = orgs::board_for_host(&app.db, &host)
        .await?
        .ok_or(jobboard_domain::Error::NotFound("collection"))?;
    let org_id = board.org.id;
    let collection = cms::submission_target(&app.db, org_id, slug).await?;
    let decision = app
        .limiter
        .check(
            &format!(
                "form:{}",
                client.map_or_else(|| "unknown".to_string(), |ip| ip.to_string())
            ),
            app.config.form_limit,
        )
        .await?;
    if !decision.allowed {
        return Err(rate_limited(decision));
    }
    let item = cms::submit(&app.db, org_id, &collection, input).await?;
    app.cms_cache.purge(org_id, collection.id);
    Ok(SubmittedOut {
        item: Submitted {
            id: item.id,
            status: item.status,
        },
    })
}
