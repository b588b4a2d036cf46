//! Dashboard sessions: stored in the database (so every node knows them and any can end
//! them), known by the SHA-256 of a 32-byte random id that only the browser's cookie
//! holds. A session ends after [`Policy::idle`] without a request, at
//! [`Policy::lifetime`] after sign-in whatever happens, at sign-out, when its user changes
//! their password (their other sessions), and when its user is removed. Signing in always
//! starts a new session ([`login`]).

mod login;
mod store;
pub mod throttle;

use std::time::Duration;

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

pub use login::{Attempt, Outcome, login};

use crate::{OrgId, Result, Ts, UserId, db::Db, users::User};

/// The rules of sessions and sign-in attempts (`[dashboard]` in the configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// A session without a request for this long has ended.
    pub idle: Duration,
    /// A session ends this long after sign-in, however active.
    pub lifetime: Duration,
    /// How long a setup link printed by `serve` works.
    pub setup_link_lifetime: Duration,
    /// Failed attempts per email address (whether or not a user has it, so that a
    /// refusal tells nothing about who exists) in a window, from every client together,
    /// past which a client that has failed on that address waits for the window's end
    /// (a client without failures on it still gets its attempt).
    pub attempts_per_account: u32,
    /// Sign-in attempts allowed per client address in a window.
    pub attempts_per_address: u32,
    /// The window of the attempt limits.
    pub attempts_window: Duration,
    /// Failed attempts of one client on one email address before it has to wait.
    pub free_failures: u32,
    /// The first wait of a client on an email address; each further failure doubles it.
    pub delay: Duration,
    /// The longest wait.
    pub delay_max: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            idle: Duration::from_secs(8 * 3600),
            lifetime: Duration::from_secs(7 * 24 * 3600),
            setup_link_lifetime: crate::users::setup::DEFAULT_LIFETIME,
            attempts_per_account: 20,
            attempts_per_address: 50,
            attempts_window: Duration::from_secs(15 * 60),
            free_failures: 3,
            delay: Duration::from_secs(60),
            delay_max: Duration::from_secs(3600),
        }
    }
}

/// The SHA-256 of a session id, as stored.
pub fn id_hash(id: &str) -> Vec<u8> {
    Sha256::digest(id.as_bytes()).to_vec()
}

/// A signed-in session: who, of which organization.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SignedIn {
    /// The SHA-256 of the session id (what anti-forgery tokens are bound to).
    pub id_hash: Vec<u8>,
    pub user_id: UserId,
    pub org_id: OrgId,
    pub email: String,
    pub org_name: String,
    pub last_seen_at: Ts,
    pub expires_at: Ts,
}

/// Starts a session of `user` at `now`; its id, for the cookie (never stored).
pub async fn start(db: &Db, user: &User, now: Ts, policy: &Policy) -> Result<String> {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    store::insert(
        db,
        &id_hash(&id),
        user.id,
        user.org_id,
        now,
        now.later_by(policy.lifetime),
    )
    .await?;
    Ok(id)
}

/// The live session whose id is `id` at `now`, noting the request (idle expiry counts
/// from the last one; noted at most once a minute, to spare the database).
pub async fn resume(db: &Db, id: &str, now: Ts, policy: &Policy) -> Result<Option<SignedIn>> {
    if id.is_empty() || id.len() > 128 {
        return Ok(None);
    }
    let hash = id_hash(id);
    let Some(s) = store::find(db, &hash, now, now.earlier_by(policy.idle)).await? else {
        return Ok(None);
    };
    if s.last_seen_at.micros() < now.earlier_by(Duration::from_secs(60)).micros() {
        store::touch(db, &hash, now).await?;
    }
    Ok(Some(s))
}

/// Ends the session whose id is `id` (signing out).
pub async fn end(db: &Db, id: &str) -> Result<()> {
    Ok(store::delete(db, &id_hash(id)).await?)
}

/// Ends the session whose id hash is `id_hash`.
pub async fn end_hash(db: &Db, id_hash: &[u8]) -> Result<()> {
    Ok(store::delete(db, id_hash).await?)
}

/// Deletes ended sessions and finished attempt windows (the other sign-in records are
/// purged beside them: [`crate::retention::purge_sign_in`]).
pub async fn purge(db: &Db, now: Ts, policy: &Policy) -> Result<u64> {
    Ok(store::purge(
        db,
        now,
        now.earlier_by(policy.idle),
        now.earlier_by(policy.attempts_window),
    )
    .await?
        + store::purge_pairs(db, now, now.earlier_by(throttle::MEMORY)).await?)
}

/// What came of a change of one's own password.
#[derive(Debug)]
pub enum Change {
    /// Changed; every other session of the user has ended.
    Done,
    /// Too many wrong current passwords: the same throttle as sign-in; try again after
    /// this long.
    Locked { retry_after: Duration },
}

/// Changes the signed-in user's own password from `{current_password, new_password}`,
/// the current password checked under the sign-in throttle of the user's email address
/// and `address` (a wrong one is a failed attempt, as at sign-in). The session `s` goes
/// on; the user's others end.
pub async fn change_password(
    db: &Db,
    s: &SignedIn,
    address: Option<std::net::IpAddr>,
    body: crate::Input,
    now: Ts,
    policy: &Policy,
) -> Result<Change> {
    let change = crate::users::prepare_change(db, s.org_id, s.user_id, body).await?;
    let gate = match throttle::enter(db, &s.email, address, now, policy).await? {
        throttle::Verdict::Open(gate) => gate,
        throttle::Verdict::Locked { retry_after } => return Ok(Change::Locked { retry_after }),
    };
    crate::users::apply_change(db, s.org_id, s.user_id, Some(&s.id_hash), change).await?;
    gate.passed(db).await?;
    Ok(Change::Done)
}
