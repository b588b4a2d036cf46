//! Staff users: the people of an organization who sign in to its dashboard with an email
//! and a password. A user belongs to one organization; an email address (by its
//! [`links::email_identity`]) names one user in the whole installation, since the sign-in
//! form asks for no organization (an address already taken is refused in the same words
//! whichever organization has it). Passwords are kept as argon2id hashes and must be hard
//! to guess ([`password`]);
//! the first user of an organization is made through a one-time setup link ([`setup`]).

pub mod password;
pub mod reset;
pub mod setup;
mod store;

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::{
    ObjectBuilder, RefOr,
    schema::{Schema, Type},
};
use uuid::Uuid;

use crate::{
    Error, Input, OrgId, Result, Ts, UserId,
    db::{Db, Tx},
    kind::{Check, Email, Kind, Text, type_error},
    links, orgs, request,
};

/// A staff user (its password hash stays in storage).
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct User {
    pub id: UserId,
    pub org_id: OrgId,
    pub email: String,
    pub created_at: Ts,
    pub last_login_at: Option<Ts>,
}

/// A new password: [`password::MIN_LEN`] to [`password::MAX_LEN`] characters.
pub struct NewPassword;

impl Kind for NewPassword {
    type Value = String;
    fn parse(v: &Value) -> Check<String> {
        let s = v.as_str().ok_or_else(|| type_error("a string"))?;
        match password::check(s) {
            Some(problem) if s.chars().count() < password::MIN_LEN => Err(("too_short", problem)),
            Some(problem) => Err(("too_long", problem)),
            None => Ok(s.to_string()),
        }
    }
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(password::MIN_LEN))
            .max_length(Some(password::MAX_LEN))
            .into()
    }
}

request! {
    /// A new staff user.
    pub struct UserIn {
        /// Unique in the installation (compared by [`links::email_identity`]).
        pub email: required Email,
        pub password: required NewPassword,
    }
}

request! {
    /// A user's change of their own password.
    pub struct PasswordChange {
        pub current_password: required Text<1, 1024>,
        pub new_password: required NewPassword,
    }
}

/// The answer to an address a staff user has already, in this organization or another:
/// the same words either way, so that nobody learns of another organization's staff.
fn email_taken() -> Error {
    Error::field(
        "email",
        "unavailable",
        "This address cannot be used for a new staff user. If they have an account already, they sign in with it; otherwise choose another address.",
    )
}

/// Refuses a new `password` (of field `field`) that is too easy to guess for the user of
/// `email`.
fn strong(new: &str, field: &str, email: &str) -> Result<()> {
    match password::weakness(new, &[email.trim()]) {
        Some(why) => Err(Error::field(field, "too_weak", why)),
        None => Ok(()),
    }
}

/// Checks a new user's body and hashes its password (before any transaction: hashing is
/// slow).
async fn prepare(org_id: OrgId, now: Ts, body: Input) -> Result<(User, String, String)> {
    let u = UserIn::parse(body)?;
    strong(&u.password, "password", &u.email)?;
    let hash = password::hash(&u.password).await?;
    let user = User {
        id: UserId(Uuid::now_v7()),
        org_id,
        email: u.email.trim().to_string(),
        created_at: now,
        last_login_at: None,
    };
    let identity = links::email_identity(&user.email);
    Ok((user, identity, hash))
}

/// Stores a prepared user in `tx`.
async fn insert(tx: &mut Tx, user: &User, identity: &str, hash: &str) -> Result<()> {
    match store::insert(tx, user, identity, hash).await {
        Err(e) if e.is_unique() => Err(email_taken()),
        other => Ok(other?),
    }
}

/// Creates a staff user of organization `org_id` from `{email, password}`.
pub async fn create(db: &Db, org_id: OrgId, body: Input, now: Ts) -> Result<User> {
    orgs::get(db, org_id).await?;
    let (user, identity, hash) = prepare(org_id, now, body).await?;
    let mut tx = db.begin().await?;
    insert(&mut tx, &user, &identity, &hash).await?;
    tx.commit().await?;
    tracing::info!(user_id = %user.id, org_id = org_id.0, "staff user created");
    Ok(user)
}

/// The organization's staff users, oldest first.
pub async fn list(db: &Db, org_id: OrgId) -> Result<Vec<User>> {
    Ok(store::list(db, org_id).await?)
}

/// One staff user of the organization.
pub async fn get(db: &Db, org_id: OrgId, id: UserId) -> Result<User> {
    store::get(db, Some(org_id), id)
        .await?
        .ok_or(Error::NotFound("user"))
}

/// Removes a staff user of the organization; every session of theirs ends with it.
pub async fn remove(db: &Db, org_id: OrgId, id: UserId) -> Result<User> {
    let user = store::delete(db, Some(org_id), id)
        .await?
        .ok_or(Error::NotFound("user"))?;
    tracing::info!(user_id = %id, org_id = org_id.0, "staff user removed");
    Ok(user)
}

/// Removes a staff user of any organization (the command line).
pub async fn remove_any(db: &Db, id: UserId) -> Result<User> {
    let user = store::delete(db, None, id)
        .await?
        .ok_or(Error::NotFound("user"))?;
    tracing::info!(user_id = %id, org_id = user.org_id.0, "staff user removed");
    Ok(user)
}

/// A change of one's own password that passed its checks; the current password is
/// still to be verified ([`apply_change`]).
pub struct PreparedChange {
    current: String,
    new: String,
}

/// Checks a change of user `id`'s own password from `{current_password, new_password}`
/// (the new one long and hard enough to guess), before any password is verified or
/// hashed.
pub async fn prepare_change(
    db: &Db,
    org_id: OrgId,
    id: UserId,
    body: Input,
) -> Result<PreparedChange> {
    let c = PasswordChange::parse(body)?;
    let user = get(db, org_id, id).await?;
    strong(&c.new_password, "new_password", &user.email)?;
    Ok(PreparedChange {
        current: c.current_password,
        new: c.new_password,
    })
}

/// Verifies the current password of a prepared change and stores the new one; every
/// other session of the user ends (the one whose id hash is `keep` goes on).
pub async fn apply_change(
    db: &Db,
    org_id: OrgId,
    id: UserId,
    keep: Option<&[u8]>,
    change: PreparedChange,
) -> Result<()> {
    let stored = store::password_hash(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("user"))?;
    if !password::verify(&change.current, Some(stored)).await? {
        return Err(Error::field(
            "current_password",
            "mismatch",
            "This is not your current password.",
        ));
    }
    let hash = password::hash(&change.new).await?;
    if !store::set_password(db, org_id, id, &hash, keep).await? {
        return Err(Error::NotFound("user"));
    }
    tracing::info!(user_id = %id, org_id = org_id.0, "staff password changed; other sessions ended");
    Ok(())
}

/// The user `email` names when `password` is theirs. An unknown email costs the same work
/// as a wrong password and is answered alike (`None`).
pub async fn verify_login(db: &Db, email: &str, password: &str, now: Ts) -> Result<Option<User>> {
    let found = store::credentials(db, &links::email_identity(email.trim())).await?;
    let (user, hash) = match found {
        Some(c) => (Some(c.user), Some(c.password_hash)),
        None => (None, None),
    };
    if !password::verify(password, hash).await? {
        return Ok(None);
    }
    let Some(mut user) = user else {
        return Ok(None);
    };
    store::record_login(db, user.id, now).await?;
    user.last_login_at = Some(now);
    Ok(Some(user))
}

/// Whether `password` is the current password of user `id` of `org_id`.
pub async fn check_password(db: &Db, org_id: OrgId, id: UserId, password: &str) -> Result<bool> {
    let stored = store::password_hash(db, org_id, id)
        .await?
        .ok_or(Error::NotFound("user"))?;
    password::verify(password, Some(stored)).await
}
