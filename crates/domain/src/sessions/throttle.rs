//! The throttle of password checks (sign-in, and the current password on the password
//! form), shared by every node through the database:
//!
//! - per email address and client address together (a *pair*): after
//!   [`Policy::free_failures`] failures the pair waits [`Policy::delay`], twice as long
//!   after each further failure, up to [`Policy::delay_max`]; failures are forgotten
//!   [`MEMORY`] after the last one, or when the pair gets the password right;
//! - per email address, from every client: past [`Policy::attempts_per_account`]
//!   failures in [`Policy::attempts_window`], a client that has failed on that address
//!   waits for the window's end, while a client without failures still gets its attempt
//!   (so nobody can lock the owner out from elsewhere);
//! - per client address, whatever the email: past [`Policy::attempts_per_address`]
//!   attempts in the window, the client waits for its end.
//!
//! An attempt is counted before the password is checked (so concurrent guesses cannot
//! slip past a limit) and given back when the password is right. Unknown email addresses
//! are throttled exactly like known ones, so a refusal tells nothing about who exists.

use std::{net::IpAddr, time::Duration};

use sha2::{Digest, Sha256};

use super::{Policy, store};
use crate::{Result, Ts, db::Db, links};

/// How long a pair's failures are remembered after its last one.
pub const MEMORY: Duration = Duration::from_secs(24 * 3600);

/// May a password check go ahead?
#[derive(Debug)]
pub enum Verdict {
    /// Yes: check it, then tell the gate when it was right.
    Open(Gate),
    /// No: try again after this long.
    Locked { retry_after: Duration },
}

/// A counted attempt, given back by [`Gate::passed`] when the password was right.
#[derive(Debug)]
pub struct Gate {
    pair: Vec<u8>,
    account: Vec<u8>,
    address: Vec<u8>,
}

fn counter(kind: &str, value: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update(b":");
    h.update(value.as_bytes());
    h.finalize().to_vec()
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The time from `now` to `until` (Unix microseconds), at least a second.
fn until(now: Ts, until: i64) -> Duration {
    Duration::from_micros(u64::try_from(until - now.micros()).unwrap_or(0))
        .max(Duration::from_secs(1))
}

/// Counts an attempt on `email` from `address` at `now`, unless a limit holds.
pub async fn enter(
    db: &Db,
    email: &str,
    address: Option<IpAddr>,
    now: Ts,
    policy: &Policy,
) -> Result<Verdict> {
    let identity = links::email_identity(email.trim());
    let client = address.map_or_else(|| "unknown".to_string(), |a| a.to_string());
    let gate = Gate {
        pair: counter("pair", &format!("{identity}\n{client}")),
        account: counter("account", &identity),
        address: counter("address", &client),
    };
    let Some(pair_failures) = store::take_pair(
        db,
        &gate.pair,
        now.micros(),
        now.earlier_by(MEMORY).micros(),
        i64::from(policy.free_failures),
        micros(policy.delay),
        micros(policy.delay_max),
    )
    .await?
    else {
        let locked_until = store::pair_locked_until(db, &gate.pair)
            .await?
            .unwrap_or(now.micros());
        tracing::warn!("dashboard password check refused: this client waits after failures");
        return Ok(Verdict::Locked {
            retry_after: until(now, locked_until),
        });
    };
    let since = now.earlier_by(policy.attempts_window);
    let (by_address, address_start) = store::count_attempt(db, &gate.address, now, since).await?;
    let (by_account, account_start) = store::count_attempt(db, &gate.account, now, since).await?;
    let window_end = |start: Ts| until(now, start.later_by(policy.attempts_window).micros());
    let over_address = by_address > i64::from(policy.attempts_per_address);
    // A client whose first failure on this address this is gets its attempt.
    let over_account = by_account > i64::from(policy.attempts_per_account) && pair_failures > 1;
    if over_address || over_account {
        let mut retry_after = Duration::ZERO;
        if over_address {
            retry_after = retry_after.max(window_end(address_start));
        }
        if over_account {
            retry_after = retry_after.max(window_end(account_start));
        }
        tracing::warn!(
            by_account = over_account,
            by_address = over_address,
            "dashboard password check refused: too many attempts"
        );
        return Ok(Verdict::Locked { retry_after });
    }
    Ok(Verdict::Open(gate))
}

impl Gate {
    /// The password was right: the pair's failures are forgotten and the attempt given
    /// back to the account's and the address's counts.
    pub async fn passed(self, db: &Db) -> Result<()> {
        store::clear_pair(db, &self.pair).await?;
        store::uncount_attempt(db, &self.account).await?;
        store::uncount_attempt(db, &self.address).await?;
        Ok(())
    }

    /// The code of a second step was right: as [`Gate::passed`], also giving back the
    /// attempt of the right password before it (counted until now, see
    /// [`crate::two_factor`]).
    pub async fn passed_second_step(self, db: &Db) -> Result<()> {
        store::uncount_attempt(db, &self.account).await?;
        store::uncount_attempt(db, &self.address).await?;
        self.passed(db).await
    }
}

/// Counts one use of something limited (a reset mail) under `kind` and `value` (hashed)
/// in the window of [`Policy::attempts_window`]: `Some(wait)` when this use is past
/// `limit` in the window.
pub async fn count(
    db: &Db,
    kind: &str,
    value: &str,
    limit: u32,
    now: Ts,
    policy: &Policy,
) -> Result<Option<Duration>> {
    let since = now.earlier_by(policy.attempts_window);
    let (n, start) = store::count_attempt(db, &counter(kind, value), now, since).await?;
    Ok((n > i64::from(limit)).then(|| until(now, start.later_by(policy.attempts_window).micros())))
}
