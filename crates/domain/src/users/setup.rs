//! One-time setup links: `/dashboard/setup/<token>` lets whoever holds it create a staff
//! user of one organization (the first one, printed by `serve` on an empty database). The
//! token is 32 random bytes; only its SHA-256 is stored. A link works once and expires.

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::{User, insert, prepare, store};
use crate::{Error, Input, OrgId, Result, Ts, db::Db};

/// How long a setup link works when not given otherwise.
pub const DEFAULT_LIFETIME: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn digest(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// A new setup link's token for organization `org_id`, valid for `lifetime` from `now`.
pub async fn create_link(
    db: &Db,
    org_id: OrgId,
    now: Ts,
    lifetime: std::time::Duration,
) -> Result<String> {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    let expires = now.later_by(lifetime);
    store::insert_link(db, &digest(&token), org_id, now, expires).await?;
    Ok(token)
}

/// The organization of a link that still works at `now`.
pub async fn link_org(db: &Db, token: &str, now: Ts) -> Result<Option<OrgId>> {
    if token.len() > 128 {
        return Ok(None);
    }
    Ok(store::link_org(db, &digest(token), now).await?)
}

/// Uses a link: creates the staff user of `{email, password}` in the link's organization
/// and marks the link used, together. A link that was used or has expired is
/// `NotFound`; a refused body leaves the link unused.
pub async fn use_link(db: &Db, token: &str, body: Input, now: Ts) -> Result<User> {
    let Some(org_id) = link_org(db, token, now).await? else {
        return Err(Error::NotFound("setup link"));
    };
    let (user, identity, hash) = prepare(org_id, now, body).await?;
    let mut tx = db.begin().await?;
    // Taken again inside the transaction: of two uses at once, one wins.
    if store::take_link(&mut tx, &digest(token), now).await? != Some(org_id) {
        return Err(Error::NotFound("setup link"));
    }
    insert(&mut tx, &user, &identity, &hash).await?;
    tx.commit().await?;
    tracing::info!(user_id = %user.id, org_id = org_id.0, "staff user created through a setup link");
    Ok(user)
}

/// Deletes links used or expired before `before`.
pub async fn purge(db: &Db, before: Ts) -> Result<u64> {
    Ok(store::purge_links(db, before).await?)
}
