//! Job categories of an organization: list and create.

mod store;

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    db::Db,
    domain::{
        Error, Input, Result, Ts,
        kind::{Check, Kind, Trimmed, type_error},
    },
    request,
};

/// A job category.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Category {
    pub id: Uuid,
    pub name: String,
    pub slug: String,
    pub created_at: Ts,
}

/// A category slug: 1 to 80 lower-case letters, digits and dashes, not starting or
/// ending with a dash.
pub struct CategorySlug;

/// The pattern of [`CategorySlug`].
const SLUG_PATTERN: &str = "^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$";

fn valid_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 80
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

impl Kind for CategorySlug {
    type Value = String;
    fn parse(v: &serde_json::Value) -> Check<String> {
        match v.as_str() {
            Some(s) if valid_slug(s) => Ok(s.to_string()),
            Some(_) => Err((
                "invalid_format",
                "Must be 1 to 80 lower-case letters, digits and dashes.".to_string(),
            )),
            None => Err(type_error("a string")),
        }
    }
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(SLUG_PATTERN))
            .into()
    }
}

request! {
    /// Body of `POST /categories`.
    pub struct CategoryIn {
        /// 1 to 100 characters.
        pub name: required Trimmed<1, 100>,
        /// Lower-case letters, digits and dashes; derived from `name` when omitted. Unique
        /// per organization.
        pub slug: optional CategorySlug,
    }
}

/// The organization's categories, by name.
pub async fn list(db: &Db, org_id: i64) -> Result<Vec<Category>> {
    Ok(store::list(db, org_id).await?)
}

/// Creates a category from a body. A slug already used in the organization is a
/// conflict.
pub async fn create(db: &Db, org_id: i64, mut body: Input) -> Result<Category> {
    let read = CategoryIn::read(&mut body);
    if let Some(c) = &read
        && c.slug.is_none()
        && crate::text::slugify(&c.name, 80).is_empty()
        && !body.has_errors()
    {
        body.error(
            "slug",
            "required",
            "The name has no letters or digits to make a slug from; send a slug.",
        );
    }
    body.finish()?;
    let Some(c) = read else {
        return Err(Error::Internal(
            "a category body without errors was incomplete",
        ));
    };
    let slug = c.slug.unwrap_or_else(|| crate::text::slugify(&c.name, 80));
    match store::create(db, org_id, &c.name, &slug).await {
        Err(e) if e.is_unique() => Err(Error::conflict(
            format!("A category with the slug {slug:?} already exists."),
            serde_json::json!({ "field": "slug" }),
        )),
        other => Ok(other?),
    }
}
