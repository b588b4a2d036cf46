//! What is deleted when it has served its time: the periodic purges the scheduler runs,
//! each in its own short statements.

use crate::{Result, Ts, db::Db, sessions, two_factor, users};

/// Deletes the sign-in records past their time: ended sessions and finished attempt
/// windows, spent or expired setup links, pending second steps, and password reset
/// links. Returns how many rows went.
pub async fn purge_sign_in(db: &Db, now: Ts, policy: &sessions::Policy) -> Result<u64> {
    Ok(sessions::purge(db, now, policy).await?
        + users::setup::purge(db, now).await?
        + two_factor::purge(db, now).await?
        + users::reset::purge(db, now).await?)
}
