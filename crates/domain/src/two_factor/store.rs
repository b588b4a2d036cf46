//! Authenticators, recovery codes and pending sign-ins as stored.

use super::Pending;
use crate::{
    Ts, UserId,
    db::{Db, DbResult},
    dispatch, dispatch_tx,
};

/// The confirmed secret of user `id` (two-factor sign-in is on), and the last accepted
/// step.
pub(super) async fn secret(db: &Db, id: UserId) -> DbResult<Option<(String, i64)>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT secret, last_step FROM dashboard_two_factor WHERE user_id = $1 AND secret IS NOT NULL",
        )
        .bind(id)
        .fetch_optional(p)
        .await?
    }))
}

/// The secret of user `id` being set up.
pub(super) async fn pending_secret(db: &Db, id: UserId) -> DbResult<Option<String>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar(
            "SELECT pending_secret FROM dashboard_two_factor WHERE user_id = $1 AND pending_secret IS NOT NULL",
        )
        .bind(id)
        .fetch_optional(p)
        .await?
    }))
}

/// Stores `secret` as the one user `id` is setting up (any earlier one is replaced).
pub(super) async fn set_pending_secret(db: &Db, id: UserId, secret: &str) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO dashboard_two_factor (user_id, pending_secret) VALUES ($1, $2) \
             ON CONFLICT (user_id) DO UPDATE SET pending_secret = $2",
        )
        .bind(id)
        .bind(secret)
        .execute(p)
        .await?;
    });
    Ok(())
}

/// Switches two-factor sign-in on for user `id` with `secret` (its code of `step`
/// accepted) and replaces the user's recovery codes, in one transaction.
pub(super) async fn enable(
    db: &Db,
    id: UserId,
    secret: &str,
    step: i64,
    codes: &[Vec<u8>],
    now: Ts,
) -> DbResult<()> {
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        sqlx::query(
            "INSERT INTO dashboard_two_factor (user_id, secret, pending_secret, last_step, enabled_at) \
             VALUES ($1, $2, NULL, $3, $4) \
             ON CONFLICT (user_id) DO UPDATE SET secret = $2, pending_secret = NULL, last_step = $3, enabled_at = $4",
        )
        .bind(id)
        .bind(secret)
        .bind(step)
        .bind(now)
        .execute(&mut **t)
        .await?;
        sqlx::query("DELETE FROM dashboard_recovery_codes WHERE user_id = $1")
            .bind(id)
            .execute(&mut **t)
            .await?;
        for hash in codes {
            sqlx::query("INSERT INTO dashboard_recovery_codes (user_id, code_hash) VALUES ($1, $2)")
                .bind(id)
                .bind(hash)
                .execute(&mut **t)
                .await?;
        }
    });
    tx.commit().await?;
    Ok(())
}

/// Records `step` as the last accepted one of user `id`, unless a step as late or later
/// was accepted already (then false: the code was used).
pub(super) async fn take_step(db: &Db, id: UserId, step: i64) -> DbResult<bool> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("UPDATE dashboard_two_factor SET last_step = $2 WHERE user_id = $1 AND secret IS NOT NULL AND last_step < $2")
            .bind(id)
            .bind(step)
            .execute(p)
            .await?
            .rows_affected()
    }) == 1)
}

/// Uses up the recovery code of user `id` whose hash is `hash`: false when there is none.
pub(super) async fn take_recovery_code(db: &Db, id: UserId, hash: &[u8]) -> DbResult<bool> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_recovery_codes WHERE user_id = $1 AND code_hash = $2")
            .bind(id)
            .bind(hash)
            .execute(p)
            .await?
            .rows_affected()
    }) == 1)
}

/// The number of unused recovery codes of user `id`.
pub(super) async fn recovery_codes_left(db: &Db, id: UserId) -> DbResult<i64> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM dashboard_recovery_codes WHERE user_id = $1")
            .bind(id)
            .fetch_one(p)
            .await?
    }))
}

/// Switches two-factor sign-in off for user `id`: its secret and recovery codes go.
pub(super) async fn disable(db: &Db, id: UserId) -> DbResult<()> {
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM dashboard_two_factor WHERE user_id = $1")
            .bind(id)
            .execute(&mut **t)
            .await?;
        sqlx::query("DELETE FROM dashboard_recovery_codes WHERE user_id = $1")
            .bind(id)
            .execute(&mut **t)
            .await?;
    });
    tx.commit().await?;
    Ok(())
}

pub(super) async fn insert_pending(
    db: &Db,
    id_hash: &[u8],
    user_id: UserId,
    visitor_hash: &[u8],
    setup_secret: Option<&str>,
    now: Ts,
    expires: Ts,
) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO dashboard_pending_logins (id_hash, user_id, visitor_hash, setup_secret, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id_hash)
        .bind(user_id)
        .bind(visitor_hash)
        .bind(setup_secret)
        .bind(now)
        .bind(expires)
        .execute(p)
        .await?;
    });
    Ok(())
}

/// The live pending sign-in with this id hash, of the browser whose sign-in cookie has
/// `visitor_hash`.
pub(super) async fn find_pending(
    db: &Db,
    id_hash: &[u8],
    visitor_hash: &[u8],
    now: Ts,
) -> DbResult<Option<Pending>> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(
            "SELECT l.user_id, u.org_id, u.email, o.name AS org_name, l.setup_secret \
             FROM dashboard_pending_logins l \
             JOIN dashboard_users u ON u.id = l.user_id \
             JOIN organizations o ON o.id = u.org_id \
             WHERE l.id_hash = $1 AND l.visitor_hash = $2 AND l.expires_at > $3",
        )
        .bind(id_hash)
        .bind(visitor_hash)
        .bind(now)
        .fetch_optional(p)
        .await?
    }))
}

pub(super) async fn delete_pending(db: &Db, id_hash: &[u8]) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_pending_logins WHERE id_hash = $1")
            .bind(id_hash)
            .execute(p)
            .await?;
    });
    Ok(())
}

pub(super) async fn purge_pending(db: &Db, now: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_pending_logins WHERE expires_at <= $1")
            .bind(now)
            .execute(p)
            .await?
            .rows_affected()
    }))
}
