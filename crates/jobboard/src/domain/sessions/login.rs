//! Signing in: the password is checked only when [`throttle`] lets the attempt through
//! (per email address and client, with growing waits; per email address; per client
//! address). An unknown email and a wrong password are answered alike after the same
//! work; a refusal by the throttle is answered alike whether or not the email belongs to
//! a user.

use std::{net::IpAddr, time::Duration};

use super::{
    Policy, start,
    throttle::{self, Verdict},
};
use crate::{
    db::Db,
    domain::{Result, Ts, users},
};

/// A sign-in attempt.
pub struct Attempt<'a> {
    pub email: &'a str,
    pub password: &'a str,
    /// The client's address (behind trusted proxies, the forwarded one).
    pub address: Option<IpAddr>,
}

/// What came of a sign-in attempt.
#[derive(Debug)]
pub enum Outcome {
    /// A new session of this user; `id` goes into the cookie.
    SignedIn { user: users::User, id: String },
    /// The email or the password is wrong (which one is not said).
    Refused,
    /// Too many failed attempts; try again after this long.
    Locked { retry_after: Duration },
}

/// Checks an attempt at `now` and, when it is right, starts a session.
pub async fn login(db: &Db, attempt: Attempt<'_>, now: Ts, policy: &Policy) -> Result<Outcome> {
    let gate = match throttle::enter(db, attempt.email, attempt.address, now, policy).await? {
        Verdict::Open(gate) => gate,
        Verdict::Locked { retry_after } => return Ok(Outcome::Locked { retry_after }),
    };
    let Some(user) = users::verify_login(db, attempt.email, attempt.password, now).await? else {
        tracing::info!("dashboard sign-in refused: wrong email or password");
        return Ok(Outcome::Refused);
    };
    gate.passed(db).await?;
    let id = start(db, &user, now, policy).await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id, "dashboard sign-in");
    Ok(Outcome::SignedIn { user, id })
}
