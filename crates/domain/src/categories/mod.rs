//! Job categories of an organization: list and create.

mod store;

use serde::Serialize;
use utoipa::ToSchema;

use crate::{
    CategoryId, Error, Input, OrgId, Result, Ts,
    db::Db,
    kind::{Matching, TextRule, Trimmed},
    request,
};

/// A job category.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Category {
    #[schema(value_type = Uuid)]
    pub id: CategoryId,
    pub name: String,
    pub slug: String,
    pub created_at: Ts,
}

/// A category slug: 1 to 80 lower-case letters, digits and dashes, not starting or
/// ending with a dash.
pub type CategorySlug = Matching<CategorySlugRule>;

pub struct CategorySlugRule;

impl TextRule for CategorySlugRule {
    const PATTERN: &'static str = "^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$";
    const MESSAGE: &'static str = "Must be 1 to 80 lower-case letters, digits and dashes.";
    const MIN_LENGTH: usize = 1;
    const MAX_LENGTH: usize = 80;
    fn accepts(s: &str) -> bool {
        !s.is_empty()
            && s.len() <= 80
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    }
}

request! {
    /// Body of `POST /categories`.
    pub struct CategoryIn {
        /// 1 to 100 characters.
        pub name: required Trimmed<1, 100>,
        /// Lower-case letters, digits and dashes; derived from `name` when omitted
        /// (`category` when the name has no letter or digit to make one from). Unique per
        /// organization.
        pub slug: optional CategorySlug,
    }
}

/// The slug made from a name: its letters and digits, or `category` when it has none
/// (as a job without any is `job`), so every valid name can be sent alone.
fn derived_slug(name: &str) -> String {
    let slug = crate::text::slugify(name, 80);
    if slug.is_empty() {
        "category".to_string()
    } else {
        slug
    }
}

/// The organization's categories, by name.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<Category>> {
    Ok(store::list(db, org_id).await?)
}

/// Creates a category from a body. A slug already used in the organization is a
/// conflict.
pub async fn create(db: &Db, org_id: OrgId, mut body: Input) -> Result<Category> {
    let read = CategoryIn::read(&mut body);
    body.finish()?;
    let Some(c) = read else {
        return Err(Error::Internal(
            "a category body without errors was incomplete",
        ));
    };
    let slug = c.slug.unwrap_or_else(|| derived_slug(&c.name));
    match store::create(db, org_id, &c.name, &slug).await {
        Err(e) if e.is_unique() => Err(Error::conflict(
            format!("A category with the slug {slug:?} already exists."),
            serde_json::json!({ "field": "slug" }),
        )),
        other => Ok(other?),
    }
}
