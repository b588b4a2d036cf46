//! Signing in: the password is checked only when [`throttle`] lets the attempt through
//! (per email address and client, with growing waits; per email address; per client
//! address). An unknown email and a wrong password are answered alike after the same
//! work; a refusal by the throttle is answered alike whether or not the email belongs to
//! a user. A user with two-factor sign-in (or whose organization requires it) gets a
//! pending sign-in instead of a session ([`crate::two_factor`]).

use std::{net::IpAddr, time::Duration};

use super::{
    Policy, start,
    throttle::{self, Verdict},
};
use crate::{Result, Ts, db::Db, two_factor, users};

/// A sign-in attempt.
pub struct Attempt<'a> {
    pub email: &'a str,
    pub password: &'a str,
    /// The client's address (behind trusted proxies, the forwarded one).
    pub address: Option<IpAddr>,
    /// The SHA-256 of the sign-in pages' cookie, which a pending sign-in is bound to.
    pub visitor: &'a [u8],
}

/// What came of a sign-in attempt.
#[derive(Debug)]
pub enum Outcome {
    /// A new session of this user; `id` goes into the cookie.
    SignedIn { user: users::User, id: String },
    /// The password is right and a second step is needed (a code, or setting two-factor
    /// sign-in up): `pending` goes into a cookie; no session yet.
    SecondStep { pending: String },
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
    if let Some(pending) = two_factor::after_password(db, &user, attempt.visitor, now).await? {
        // The attempt stays counted as a failure until the second step succeeds, so wrong
        // codes after a right password wait as wrong passwords do.
        tracing::info!(user_id = %user.id, "dashboard sign-in: second step asked");
        return Ok(Outcome::SecondStep { pending });
    }
    gate.passed(db).await?;
    let id = start(db, &user, now, policy).await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id.0, "dashboard sign-in");
    Ok(Outcome::SignedIn { user, id })
}
