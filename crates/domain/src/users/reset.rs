//! Password reset by mail: `/dashboard/password-reset` mails a one-time link
//! (`/dashboard/password-reset/<token>`, [`LIFETIME`]) to the staff user who has the
//! address typed, built from the service's own address (`public_url`, else the listen
//! address; never the request's `Host`). The answer is the same whether or not anyone has
//! the address, and requests are limited per address and per client whether or not
//! anyone has it. The token is 32 random bytes; only its SHA-256 is stored. Using the link
//! sets a new password (checked as every new password is), ends every session of the user
//! and every other reset link of theirs; it does not sign in (a second factor, when the
//! user has one, is asked at sign-in).

use std::{net::IpAddr, time::Duration};

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::{NewPassword, User, password, store, strong};
use crate::{
    Error, Input, Result, Ts,
    db::Db,
    kind::Text,
    links,
    mail::{
        message::Message,
        store::{enqueue, on_request_allowed},
    },
    request,
    sessions::{Policy, throttle},
};

/// How long a reset link works.
pub const LIFETIME: Duration = Duration::from_secs(30 * 60);
/// Reset mails per email address in a window of `login_attempts_window`.
pub const PER_ACCOUNT: u32 = 3;
/// Reset requests per client address in a window of `login_attempts_window`.
pub const PER_ADDRESS: u32 = 10;

fn digest(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

request! {
    /// A new password through a reset link.
    pub struct ResetIn {
        pub password: required NewPassword,
    }
}

request! {
    /// A request for a reset link.
    pub struct ResetRequest {
        pub email: required Text<1, 320>,
    }
}

/// What came of a request for a reset link.
#[derive(Debug)]
pub enum Requested {
    /// A link was mailed if anyone has the address (which is not said).
    Accepted,
    /// Too many requests for this address or from this client; try again after this long.
    Limited { retry_after: Duration },
}

fn unavailable() -> Error {
    Error::Unavailable {
        code: "mail_not_configured",
        message: "This service sends no mail, so a password cannot be reset by mail. Ask another staff user of your organization, or an operator.".into(),
    }
}

/// Mails a reset link to the user who has the email address of `body`, if anyone does.
pub async fn request(
    db: &Db,
    body: Input,
    address: Option<IpAddr>,
    now: Ts,
    policy: &Policy,
) -> Result<Requested> {
    let Some(outgoing) = db.outgoing().cloned() else {
        return Err(unavailable());
    };
    let r = ResetRequest::parse(body)?;
    let identity = links::email_identity(r.email.trim());
    let client = address.map_or_else(|| "unknown".to_string(), |a| a.to_string());
    for (kind, value, limit) in [
        ("reset-address", client.as_str(), PER_ADDRESS),
        ("reset-account", identity.as_str(), PER_ACCOUNT),
    ] {
        if let Some(retry_after) = throttle::count(db, kind, value, limit, now, policy).await? {
            tracing::warn!(kind, "password reset request refused: too many");
            return Ok(Requested::Limited { retry_after });
        }
    }
    let Some(user) = store::by_identity(db, &identity).await? else {
        tracing::info!("password reset requested for an address nobody has");
        return Ok(Requested::Accepted);
    };
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    let link = format!("{}/dashboard/password-reset/{token}", outgoing.base_url);
    let minutes = LIFETIME.as_secs() / 60;
    let text = format!(
        "Someone asked to reset the password of your dashboard account ({}).\n\n\
         To choose a new password, open this link within {minutes} minutes:\n\n{link}\n\n\
         The link works once. Using it signs you out everywhere. If you did not ask for it, \
         ignore this mail: your password stays as it is.\n",
        user.email
    );
    let mut tx = db.begin().await?;
    // Mail anyone can ask for: capped per recipient and day, across forms and nodes.
    if !on_request_allowed(&mut tx, &crate::links::email_identity(&user.email), now).await? {
        tx.commit().await?;
        tracing::info!(user_id = %user.id, "password reset not mailed: the recipient's daily cap is reached");
        return Ok(Requested::Accepted);
    }
    store::insert_reset(
        &mut tx,
        &digest(&token),
        user.id,
        now,
        now.later_by(LIFETIME),
    )
    .await?;
    let msg = Message::new(
        "password_reset",
        user.email.clone(),
        "Reset your dashboard password",
        text,
    );
    enqueue(&mut tx, user.org_id, &msg)
        .await
        .map_err(|_| Error::Internal("the reset mail could not be queued"))?;
    tx.commit().await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id.0, "password reset link mailed");
    Ok(Requested::Accepted)
}

/// The user of a reset link that still works at `now`.
pub async fn link_user(db: &Db, token: &str, now: Ts) -> Result<Option<User>> {
    if token.is_empty() || token.len() > 128 {
        return Ok(None);
    }
    Ok(store::reset_user(db, &digest(token), now).await?)
}

/// Uses a reset link: the user's password becomes `{password}`, and every session of the
/// user ends. A link that was used or has expired is `NotFound`; a refused password
/// leaves the link usable.
pub async fn use_link(db: &Db, token: &str, body: Input, now: Ts) -> Result<User> {
    let Some(user) = link_user(db, token, now).await? else {
        return Err(Error::NotFound("reset link"));
    };
    let r = ResetIn::parse(body)?;
    strong(&r.password, "password", &user.email)?;
    let hash = password::hash(&r.password).await?;
    let mut tx = db.begin().await?;
    // Taken inside the transaction: of two uses at once, one wins.
    if store::take_reset(&mut tx, &digest(token), now, &hash).await? != Some(user.id) {
        return Err(Error::NotFound("reset link"));
    }
    tx.commit().await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id.0, "password reset through a mailed link; every session ended");
    Ok(user)
}

/// Deletes links used or expired before `before`.
pub async fn purge(db: &Db, before: Ts) -> Result<u64> {
    Ok(store::purge_resets(db, before).await?)
}
