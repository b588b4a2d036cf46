//! API keys as an organization manages them in its dashboard: create (the full key exists
//! only in the answer), list, revoke. Every operation is scoped to the organization. A
//! revoked key is refused from the next request on, on every node, since every API request
//! looks its key up (the API's authentication).

use serde_json::Value;
use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{Schema, Type},
};
use uuid::Uuid;

pub mod secret;
pub mod store;

use self::{secret as auth, store as keys};
use crate::{
    Error, Input, OrgId, Result,
    db::Db,
    kind::{Check, Int, Kind, Line, type_error},
    ratelimit::MAX_LIMIT,
    request,
};
pub use store::ApiKey;

/// Scopes: `*`, or scope names separated by spaces or commas.
pub struct Scopes;

impl Kind for Scopes {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v.as_str().ok_or_else(|| type_error("a string of scopes"))?;
        auth::parse_scopes(s).map_err(|problem| {
            let mut m = problem;
            if let Some(first) = m.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            ("invalid_value", format!("{m}."))
        })
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::String).into()
    }
}

request! {
    /// A new API key.
    pub struct KeyIn {
        /// A label for people (up to 100 characters).
        pub name: optional Line<100>,
        /// `*` (every scope), or the scopes the key holds.
        pub scopes: required Scopes,
        /// Reads (GET, HEAD) per minute; the installation's default when omitted.
        pub read_limit: optional Int<1, { MAX_LIMIT as i64 }>,
        /// Writes (POST, PATCH, PUT, DELETE) per minute; the installation's default when
        /// omitted.
        pub write_limit: optional Int<1, { MAX_LIMIT as i64 }>,
    }
}

/// The limits of a key created without its own.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    pub read_limit: u32,
    pub write_limit: u32,
}

/// Creates a key of the organization; the stored record and the full key (shown once).
pub async fn create(
    db: &Db,
    org_id: OrgId,
    body: Input,
    defaults: Defaults,
) -> Result<(ApiKey, String)> {
    let k = KeyIn::parse(body)?;
    let (key, full) = keys::create(
        db,
        keys::NewKey {
            org_id,
            name: k.name.as_deref().unwrap_or(""),
            scopes: &k.scopes,
            read_limit: k.read_limit.unwrap_or(i64::from(defaults.read_limit)),
            write_limit: k.write_limit.unwrap_or(i64::from(defaults.write_limit)),
        },
    )
    .await?;
    tracing::info!(key_id = %key.id, org_id = org_id.0, prefix = %key.prefix, "API key created");
    Ok((key, full))
}

/// The organization's keys, oldest first (revoked ones included).
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<ApiKey>> {
    Ok(keys::list(db, org_id).await?)
}

/// Revokes a key of the organization (revoking it again changes nothing).
pub async fn revoke(db: &Db, org_id: OrgId, id: Uuid) -> Result<ApiKey> {
    let key = keys::revoke_in_org(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("key"))?;
    tracing::info!(key_id = %id, org_id = org_id.0, "API key revoked");
    Ok(key)
}
