//! `GET /categories`, `POST /categories`.

use axum::{Json, extract::State, http::StatusCode};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Auth, JsonBody, Query};
use jobboard_app::app::AppState;
use jobboard_app::error::ApiResult;
use jobboard_domain::categories::{self, Category, CategoryIn};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_categories, create_category))
}

#[derive(Serialize, ToSchema)]
pub struct CategoryOut {
    pub data: Category,
}

#[derive(Serialize, ToSchema)]
pub struct CategoryListOut {
    pub meta: CategoryListMeta,
    pub data: Vec<Category>,
}

#[derive(Serialize, ToSchema)]
pub struct CategoryListMeta {
    pub total: usize,
}

/// List the organization's job categories.
///
/// Needs the `jobs:read` scope.
#[utoipa::path(get, path = "/categories", tag = "categories",
    responses((status = 200, description = "All categories, by name.", body = CategoryListOut)))]
async fn list_categories(
    State(app): State<AppState>,
    auth: Auth,
    Query(q): Query,
) -> ApiResult<Json<CategoryListOut>> {
    auth.require("jobs:read")?;
    q.finish()?;
    let data = categories::list(&app.db, auth.org_id).await?;
    Ok(Json(CategoryListOut {
        meta: CategoryListMeta { total: data.len() },
        data,
    }))
}

/// Create a job category.
///
/// A slug already used in the organization is `409 conflict`. Needs the `jobs:write` scope.
#[utoipa::path(post, path = "/categories", tag = "categories", request_body = CategoryIn,
    responses((status = 201, description = "Created.", body = CategoryOut)))]
async fn create_category(
    State(app): State<AppState>,
    auth: Auth,
    JsonBody(input): JsonBody,
) -> ApiResult<(StatusCode, Json<CategoryOut>)> {
    auth.require("jobs:write")?;
    let data = categories::create(&app.db, auth.org_id, input).await?;
    Ok((StatusCode::CREATED, Json(CategoryOut { data })))
}
