//! Staff users and setup links as stored.

use super::User;
use crate::{
    OrgId, Ts, UserId,
    db::{Db, DbResult, Tx},
    dispatch, dispatch_tx,
};

const COLUMNS: &str = "id, org_id, email, created_at, last_login_at";

/// A user and its password hash (never leaves this module's callers in `users`).
#[derive(sqlx::FromRow)]
pub(super) struct Credentials {
    #[sqlx(flatten)]
    pub user: User,
    pub password_hash: String,
}

pub(super) async fn insert(tx: &mut Tx, user: &User, identity: &str, hash: &str) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO dashboard_users (id, org_id, email, email_identity, password_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(user.id)
        .bind(user.org_id)
        .bind(&user.email)
        .bind(identity)
        .bind(hash)
        .bind(user.created_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

pub(super) async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<User>> {
    let sql =
        format!("SELECT {COLUMNS} FROM dashboard_users WHERE org_id = $1 ORDER BY created_at, id");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await?
    }))
}

/// The user `id`, of organization `org_id` when given.
pub(super) async fn get(db: &Db, org_id: Option<OrgId>, id: UserId) -> DbResult<Option<User>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM dashboard_users WHERE id = $1 AND ($2 IS NULL OR org_id = $2)"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).fetch_optional(p).await?
    }))
}

/// Deletes the user `id` (of organization `org_id` when given); its sessions go with it.
pub(super) async fn delete(db: &Db, org_id: Option<OrgId>, id: UserId) -> DbResult<Option<User>> {
    let sql = format!(
        "DELETE FROM dashboard_users WHERE id = $1 AND ($2 IS NULL OR org_id = $2) RETURNING {COLUMNS}"
    );
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).fetch_optional(p).await?
    }))
}

/// The user whose email has this identity, with its password hash.
pub(super) async fn credentials(db: &Db, identity: &str) -> DbResult<Option<Credentials>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT id, org_id, email, created_at, last_login_at, password_hash \
             FROM dashboard_users WHERE email_identity = $1",
        )
        .bind(identity)
        .fetch_optional(p)
        .await?
    }))
}

/// The password hash of user `id` of `org_id`.
pub(super) async fn password_hash(db: &Db, org_id: OrgId, id: UserId) -> DbResult<Option<String>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT password_hash FROM dashboard_users WHERE id = $1 AND org_id = $2")
            .bind(id)
            .bind(org_id)
            .fetch_optional(p)
            .await?
    }))
}

/// Replaces the password hash of user `id` and ends every session of the user but the one
/// whose id hash is `keep`, in one transaction.
pub(super) async fn set_password(
    db: &Db,
    org_id: OrgId,
    id: UserId,
    hash: &str,
    keep: Option<&[u8]>,
) -> DbResult<bool> {
    let mut tx = db.begin().await?;
    let changed = dispatch_tx!(&mut tx, t => {
        let changed = sqlx::query("UPDATE dashboard_users SET password_hash = $3 WHERE id = $1 AND org_id = $2")
            .bind(id)
            .bind(org_id)
            .bind(hash)
            .execute(&mut **t)
            .await?
            .rows_affected();
        sqlx::query("DELETE FROM dashboard_sessions WHERE user_id = $1 AND ($2 IS NULL OR id_hash <> $2)")
            .bind(id)
            .bind(keep)
            .execute(&mut **t)
            .await?;
        changed
    });
    tx.commit().await?;
    Ok(changed == 1)
}

pub(super) async fn record_login(db: &Db, id: UserId, at: Ts) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("UPDATE dashboard_users SET last_login_at = $2 WHERE id = $1")
            .bind(id)
            .bind(at)
            .execute(p)
            .await?;
    });
    Ok(())
}

pub(super) async fn insert_link(
    db: &Db,
    hash: &[u8],
    org_id: OrgId,
    now: Ts,
    expires: Ts,
) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO dashboard_setup_tokens (token_hash, org_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hash)
        .bind(org_id)
        .bind(now)
        .bind(expires)
        .execute(p)
        .await?;
    });
    Ok(())
}

/// The organization of the unused, unexpired link with this hash.
pub(super) async fn link_org(db: &Db, hash: &[u8], now: Ts) -> DbResult<Option<OrgId>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar(
            "SELECT org_id FROM dashboard_setup_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(p)
        .await?
    }))
}

/// Marks the link used in `tx`, if it is still unused and unexpired; its organization.
pub(super) async fn take_link(tx: &mut Tx, hash: &[u8], now: Ts) -> DbResult<Option<OrgId>> {
    Ok(dispatch_tx!(tx, t => {
        sqlx::query_scalar(
            "UPDATE dashboard_setup_tokens SET used_at = $2 \
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING org_id",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(&mut **t)
        .await?
    }))
}

/// Deletes links that were used or expired before `before`.
pub(super) async fn purge_links(db: &Db, before: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_setup_tokens WHERE expires_at < $1 OR used_at < $1")
            .bind(before)
            .execute(p)
            .await?
            .rows_affected()
    }))
}

/// The user whose email identity is `identity`.
pub(super) async fn by_identity(db: &Db, identity: &str) -> DbResult<Option<User>> {
    let sql = format!("SELECT {COLUMNS} FROM dashboard_users WHERE email_identity = $1");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(identity).fetch_optional(p).await?
    }))
}

pub(super) async fn insert_reset(
    tx: &mut Tx,
    hash: &[u8],
    user_id: UserId,
    now: Ts,
    expires: Ts,
) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO dashboard_reset_tokens (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hash)
        .bind(user_id)
        .bind(now)
        .bind(expires)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

/// The user of the unused, unexpired reset link with this hash.
pub(super) async fn reset_user(db: &Db, hash: &[u8], now: Ts) -> DbResult<Option<User>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM dashboard_users WHERE id = \
         (SELECT user_id FROM dashboard_reset_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2)"
    );
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(hash).bind(now).fetch_optional(p).await?
    }))
}

/// Uses the reset link with this hash in `tx` if it still works: the user's password
/// becomes `password_hash`, every session of the user ends and the user's other reset
/// links are deleted. The user's id, or `None` when the link did not work.
pub(super) async fn take_reset(
    tx: &mut Tx,
    hash: &[u8],
    now: Ts,
    password_hash: &str,
) -> DbResult<Option<UserId>> {
    Ok(dispatch_tx!(tx, t => {
        let user: Option<UserId> = sqlx::query_scalar(
            "UPDATE dashboard_reset_tokens SET used_at = $2 \
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(&mut **t)
        .await?;
        if let Some(id) = user {
            sqlx::query("UPDATE dashboard_users SET password_hash = $2 WHERE id = $1")
                .bind(id)
                .bind(password_hash)
                .execute(&mut **t)
                .await?;
            sqlx::query("DELETE FROM dashboard_sessions WHERE user_id = $1")
                .bind(id)
                .execute(&mut **t)
                .await?;
            sqlx::query("DELETE FROM dashboard_reset_tokens WHERE user_id = $1 AND token_hash <> $2")
                .bind(id)
                .bind(hash)
                .execute(&mut **t)
                .await?;
        }
        user
    }))
}

/// Deletes reset links that were used or expired before `before`.
pub(super) async fn purge_resets(db: &Db, before: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM dashboard_reset_tokens WHERE expires_at < $1 OR used_at < $1")
            .bind(before)
            .execute(p)
            .await?
            .rows_affected()
    }))
}
