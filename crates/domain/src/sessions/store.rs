//! Sessions and sign-in attempt counters as stored.

use super::SignedIn;
use crate::{
    OrgId, Ts, UserId,
    db::{Db, DbResult},
    dispatch,
};

pub(super) async fn insert(
    db: &Db,
    id_hash: &[u8],
    user_id: UserId,
    org_id: OrgId,
    now: Ts,
    expires: Ts,
) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO dashboard_sessions (id_hash, user_id, org_id, created_at, last_seen_at, expires_at) \
             VALUES ($1, $2, $3, $4, $4, $5)",
        )
        .bind(id_hash)
        .bind(user_id)
        .bind(org_id)
        .bind(now)
        .bind(expires)
        .execute(p)
        .await?;
    });
    Ok(())
}

/// The live session with this id hash (not past `expires_at`, seen after `idle_since`),
/// with its user and organization.
pub(super) async fn find(
    db: &Db,
    id_hash: &[u8],
    now: Ts,
    idle_since: Ts,
) -> DbResult<Option<SignedIn>> {
    // Read on every dashboard request: an ended session is refused from the next one on
    // (each read sees every commit made before it began).
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT s.id_hash, s.user_id, s.org_id, s.last_seen_at, s.expires_at, u.email, o.name AS org_name \
             FROM dashboard_sessions s \
             JOIN dashboard_users u ON u.id = s.user_id \
             JOIN organizations o ON o.id = s.org_id \
             WHERE s.id_hash = $1 AND s.expires_at > $2 AND s.last_seen_at > $3",
        )
        .bind(id_hash)
        .bind(now)
        .bind(idle_since)
        .fetch_optional(p)
        .await?
    }))
}

pub(super) async fn touch(db: &Db, id_hash: &[u8], now: Ts) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("UPDATE dashboard_sessions SET last_seen_at = $2 WHERE id_hash = $1 AND last_seen_at < $2")
            .bind(id_hash)
            .bind(now)
            .execute(p)
            .await?;
    });
    Ok(())
}

pub(super) async fn delete(db: &Db, id_hash: &[u8]) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Deletes sessions past their end or idle since `idle_since`, and attempt counters whose
/// window began at or before `window_since`.
pub(super) async fn purge(db: &Db, now: Ts, idle_since: Ts, window_since: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        let sessions = sqlx::query("DELETE FROM dashboard_sessions WHERE expires_at <= $1 OR last_seen_at <= $2")
            .bind(now)
            .bind(idle_since)
            .execute(p)
            .await?
            .rows_affected();
        let attempts = sqlx::query("DELETE FROM dashboard_login_attempts WHERE window_start <= $1")
            .bind(window_since)
            .execute(p)
            .await?
            .rows_affected();
        sessions + attempts
    }))
}

/// Counts one attempt under `key_hash` in the window that began after `window_since`
/// (a new window starting `now` when the last one is over); the attempts counted in the
/// window, this one included, and when it began.
pub(super) async fn count_attempt(
    db: &Db,
    key_hash: &[u8],
    now: Ts,
    window_since: Ts,
) -> DbResult<(i64, Ts)> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(
            "INSERT INTO dashboard_login_attempts (key_hash, window_start, attempts) VALUES ($1, $2, 1) \
             ON CONFLICT (key_hash) DO UPDATE SET \
               attempts = CASE WHEN dashboard_login_attempts.window_start <= $3 THEN 1 \
                          ELSE dashboard_login_attempts.attempts + 1 END, \
               window_start = CASE WHEN dashboard_login_attempts.window_start <= $3 THEN $2 \
                              ELSE dashboard_login_attempts.window_start END \
             RETURNING attempts, window_start",
        )
        .bind(key_hash)
        .bind(now)
        .bind(window_since)
        .fetch_one(p)
        .await?
    }))
}

/// Gives back one attempt counted under `key_hash` (a successful sign-in).
pub(super) async fn uncount_attempt(db: &Db, key_hash: &[u8]) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("UPDATE dashboard_login_attempts SET attempts = attempts - 1 WHERE key_hash = $1 AND attempts > 0")
            .bind(key_hash)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Counts a failure of the pair `key_hash` at `now` (Unix microseconds) unless the pair
/// is waiting: its failures then (this one included), or `None` while it waits. Failures
/// older than `forget_before` are forgotten. From the `free`-th failure on, the pair waits
/// `base` microseconds, doubled at each further failure up to `max`. One statement, so
/// concurrent attempts of a pair are counted one by one, on every node.
pub(super) async fn take_pair(
    db: &Db,
    key_hash: &[u8],
    now: i64,
    forget_before: i64,
    free: i64,
    base: i64,
    max: i64,
) -> DbResult<Option<i64>> {
    const T: &str = "dashboard_login_pairs";
    let failures = format!(
        "CASE WHEN {T}.last_failure_us <= CAST($3 AS BIGINT) THEN 1 ELSE {T}.failures + 1 END"
    );
    let delay = format!(
        "CASE WHEN {failures} < CAST($4 AS BIGINT) THEN 0 \
              WHEN {failures} = CAST($4 AS BIGINT) OR {T}.delay_us * 2 < CAST($5 AS BIGINT) THEN CAST($5 AS BIGINT) \
              WHEN {T}.delay_us * 2 > CAST($6 AS BIGINT) THEN CAST($6 AS BIGINT) \
              ELSE {T}.delay_us * 2 END"
    );
    let first = "CASE WHEN 1 >= CAST($4 AS BIGINT) THEN CAST($5 AS BIGINT) ELSE 0 END";
    let sql = format!(
        "INSERT INTO {T} (key_hash, failures, delay_us, locked_until_us, last_failure_us) \
         VALUES ($1, 1, {first}, CAST($2 AS BIGINT) + {first}, CAST($2 AS BIGINT)) \
         ON CONFLICT (key_hash) DO UPDATE SET \
           failures = {failures}, \
           delay_us = {delay}, \
           locked_until_us = CAST($2 AS BIGINT) + {delay}, \
           last_failure_us = CAST($2 AS BIGINT) \
         WHERE {T}.locked_until_us <= CAST($2 AS BIGINT) \
         RETURNING failures"
    );
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .bind(key_hash)
            .bind(now)
            .bind(forget_before)
            .bind(free)
            .bind(base)
            .bind(max)
            .fetch_optional(p)
            .await?
    }))
}

/// Until when (Unix microseconds) the pair `key_hash` waits.
pub(super) async fn pair_locked_until(db: &Db, key_hash: &[u8]) -> DbResult<Option<i64>> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_scalar("SELECT locked_until_us FROM dashboard_login_pairs WHERE key_hash = $1")
            .bind(key_hash)
            .fetch_optional(p)
            .await?
    }))
}

/// Forgets the failures of the pair `key_hash` (it signed in).
pub(super) async fn clear_pair(db: &Db, key_hash: &[u8]) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_login_pairs WHERE key_hash = $1")
            .bind(key_hash)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Deletes pairs that wait no more and whose last failure was before `forget_before`.
pub(super) async fn purge_pairs(db: &Db, now: Ts, forget_before: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_login_pairs WHERE last_failure_us <= $1 AND locked_until_us <= $2")
            .bind(forget_before.micros())
            .bind(now.micros())
            .execute(p)
            .await?
            .rows_affected()
    }))
}
