//! Signing in: at most [`Policy::attempts_per_account`] attempts per email address and
//! [`Policy::attempts_per_address`] per client address in a window, counted before the
//! password is checked (so concurrent guesses cannot slip past the limit) and given back
//! on success. An unknown email and a wrong password are answered alike after the same
//! work; a lock is answered alike whether or not the email belongs to a user.

use std::{net::IpAddr, time::Duration};

use sha2::{Digest, Sha256};

use super::{Policy, start, store};
use crate::{
    db::Db,
    domain::{Result, Ts, links, users},
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
    /// Too many attempts for this email or from this address; try again after this long.
    Locked { retry_after: Duration },
}

fn counter(kind: &str, value: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update(b":");
    h.update(value.as_bytes());
    h.finalize().to_vec()
}

/// Checks an attempt at `now` and, when it is right, starts a session.
pub async fn login(db: &Db, attempt: Attempt<'_>, now: Ts, policy: &Policy) -> Result<Outcome> {
    let account = counter("account", &links::email_identity(attempt.email.trim()));
    let address = counter(
        "address",
        &attempt
            .address
            .map_or_else(|| "unknown".to_string(), |a| a.to_string()),
    );
    let since = now.earlier_by(policy.attempts_window);
    let (by_account, account_start) = store::count_attempt(db, &account, now, since).await?;
    let (by_address, address_start) = store::count_attempt(db, &address, now, since).await?;
    let over_account = by_account > i64::from(policy.attempts_per_account);
    let over_address = by_address > i64::from(policy.attempts_per_address);
    if over_account || over_address {
        let window_end = |start: Ts| {
            let end = start.later_by(policy.attempts_window);
            Duration::from_micros(u64::try_from(end.micros() - now.micros()).unwrap_or(0))
        };
        let mut retry_after = Duration::ZERO;
        if over_account {
            retry_after = retry_after.max(window_end(account_start));
        }
        if over_address {
            retry_after = retry_after.max(window_end(address_start));
        }
        tracing::warn!(
            by_account = over_account,
            by_address = over_address,
            "dashboard sign-in refused: too many attempts"
        );
        return Ok(Outcome::Locked { retry_after });
    }
    let Some(user) = users::verify_login(db, attempt.email, attempt.password, now).await? else {
        tracing::info!("dashboard sign-in refused: wrong email or password");
        return Ok(Outcome::Refused);
    };
    store::clear_attempts(db, &account).await?;
    store::uncount_attempt(db, &address).await?;
    let id = start(db, &user, now, policy).await?;
    tracing::info!(user_id = %user.id, org_id = user.org_id, "dashboard sign-in");
    Ok(Outcome::SignedIn { user, id })
}
