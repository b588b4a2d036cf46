//! `GET /categories`, `POST /categories`.

use crate::http::input::Getters;
use axum::{Json, extract::State, http::StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query};
use crate::{
    db::categories::{self, Category},
    error::{ApiError, ApiResult},
    server::AppState,
    text::slugify,
};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_categories, create_category))
}

/// Body of `POST /categories`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CategoryIn {
    /// 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Lower-case letters, digits and dashes; derived from `name` when omitted. Unique per organization.
    #[schema(pattern = "^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")]
    pub slug: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct CategoryOut {
    pub data: Category,
}

#[derive(Serialize, ToSchema)]
pub struct CategoryListOut {
    pub data: Vec<Category>,
    pub meta: CategoryListMeta,
}

#[derive(Serialize, ToSchema)]
pub struct CategoryListMeta {
    pub total: i64,
}

/// List the organization's job categories.
#[utoipa::path(get, path = "/categories", tag = "categories",
    responses((status = 200, description = "All categories, by name.", body = CategoryListOut)))]
async fn list_categories(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<serde_json::Value>> {
    auth.require("jobs:read")?;
    q.finish()?;
    let list = categories::list(&app.db, auth.org_id).await?;
    Ok(Json(
        json!({ "meta": { "total": list.len() }, "data": list }),
    ))
}

fn valid_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 80
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Create a job category. A slug already used in the organization is `409 conflict`.
#[utoipa::path(post, path = "/categories", tag = "categories", request_body = CategoryIn,
    responses((status = 201, description = "Created.", body = CategoryOut)))]
async fn create_category(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(mut input): JsonBody,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    auth.require("jobs:write")?;
    let name = input
        .string("name", true, 1, 100)
        .opt()
        .map(|s| s.trim().to_string());
    let slug = input.field_with("slug", false, |v| match v.as_str() {
        Some(s) if valid_slug(s) => Ok(s.to_string()),
        Some(_) => Err((
            "invalid_format",
            "Must be 1 to 80 lower-case letters, digits and dashes.".to_string(),
        )),
        None => Err(("invalid_type", "Must be a string.".to_string())),
    });
    if matches!(&name, Some(n) if n.is_empty()) {
        input.error("name", "too_short", "Must not be blank.");
    }
    let derived = name.as_deref().map(|n| slugify(n, 80)).unwrap_or_default();
    let slug = slug.opt().unwrap_or(derived);
    if slug.is_empty() && name.is_some() && !input.has_errors() {
        input.error(
            "slug",
            "required",
            "The name has no letters or digits to make a slug from; send a slug.",
        );
    }
    input.finish()?;
    let name = name.unwrap_or_default();
    match categories::create(&app.db, auth.org_id, &name, &slug).await? {
        Some(c) => Ok((StatusCode::CREATED, Json(json!({ "data": c })))),
        None => Err(ApiError::conflict(
            format!("A category with the slug {slug:?} already exists."),
            json!({ "field": "slug" }),
        )),
    }
}
