//! Sign-in links and members' sessions as stored.

use super::SignupRole;
use crate::{
    OrgId, Ts,
    db::{Db, DbResult, StoreError, Tx},
    dispatch, dispatch_tx, links,
    members::Member,
};

/// The member columns, of `members m`.
pub(super) const MEMBER_COLUMNS: &str = "m.id, m.org_id AS organization_id, m.email, m.name, \
     m.role, m.approval_status, m.profile_picture, m.description, m.custom_fields, \
     m.created_at, m.updated_at";

/// A link about to be mailed.
pub(super) struct NewLink {
    pub token_hash: Vec<u8>,
    pub org_id: OrgId,
    pub email: String,
    pub email_lower: String,
    pub role: Option<SignupRole>,
    pub created_at: Ts,
    pub expires_at: Ts,
}

/// A link just used.
#[derive(sqlx::FromRow)]
pub(super) struct UsedLink {
    pub email: String,
    pub role: Option<SignupRole>,
}

pub(super) async fn insert_link(tx: &mut Tx, l: &NewLink) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO member_sign_in_links \
             (token_hash, org_id, email, email_lower, role, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&l.token_hash)
        .bind(l.org_id)
        .bind(&l.email)
        .bind(&l.email_lower)
        .bind(l.role)
        .bind(l.created_at)
        .bind(l.expires_at)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

/// Marks the link used, when it is `org_id`'s, unused and not expired at `now` (one
/// statement, so two nodes opening it at once use it once).
pub(super) async fn use_link(
    tx: &mut Tx,
    org_id: OrgId,
    token_hash: &[u8],
    now: Ts,
) -> DbResult<Option<UsedLink>> {
    dispatch_tx!(tx, t => {
        sqlx::query_as(
            "UPDATE member_sign_in_links SET used_at = $3 \
             WHERE token_hash = $1 AND org_id = $2 AND used_at IS NULL AND expires_at > $3 \
             RETURNING email, role",
        )
        .bind(token_hash)
        .bind(org_id)
        .bind(now)
        .fetch_optional(&mut **t)
        .await
        .map_err(StoreError::from)
    })
}

pub(super) async fn insert_session(
    tx: &mut Tx,
    id_hash: &[u8],
    m: &Member,
    now: Ts,
    expires: Ts,
) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query(
            "INSERT INTO member_sessions (id_hash, org_id, member_id, created_at, last_seen_at, expires_at) \
             VALUES ($1, $2, $3, $4, $4, $5)",
        )
        .bind(id_hash)
        .bind(m.organization_id)
        .bind(m.id)
        .bind(now)
        .bind(expires)
        .execute(&mut **t)
        .await?;
    });
    Ok(())
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    #[sqlx(flatten)]
    member: Member,
    last_seen_at: Ts,
}

/// The member of the live session with this id hash on `org_id`'s board (not past
/// `expires_at`, seen after `idle_since`), and when it was last seen.
pub(super) async fn find_session(
    db: &Db,
    org_id: OrgId,
    id_hash: &[u8],
    now: Ts,
    idle_since: Ts,
) -> DbResult<Option<(Member, Ts)>> {
    // Read on every request of a member: an ended session is refused from the next one on.
    let sql = format!(
        "SELECT {MEMBER_COLUMNS}, s.last_seen_at FROM member_sessions s \
         JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id \
         WHERE s.id_hash = $1 AND s.org_id = $2 AND s.expires_at > $3 AND s.last_seen_at > $4"
    );
    let row: Option<SessionRow> = dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id_hash)
            .bind(org_id)
            .bind(now)
            .bind(idle_since)
            .fetch_optional(p)
            .await?
    });
    Ok(row.map(|r| (r.member, r.last_seen_at)))
}

pub(super) async fn touch_session(db: &Db, id_hash: &[u8], now: Ts) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("UPDATE member_sessions SET last_seen_at = $2 WHERE id_hash = $1 AND last_seen_at < $2")
            .bind(id_hash)
            .bind(now)
            .execute(p)
            .await?;
    });
    Ok(())
}

pub(super) async fn delete_session(db: &Db, id_hash: &[u8]) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM member_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Deletes sessions past their end or idle since `idle_since`, and links past their
/// expiry (used or not).
pub(super) async fn purge(db: &Db, now: Ts, idle_since: Ts) -> DbResult<u64> {
    Ok(dispatch!(db.writer(), p => {
        let sessions = sqlx::query(
            "DELETE FROM member_sessions WHERE expires_at <= $1 OR last_seen_at <= $2",
        )
        .bind(now)
        .bind(idle_since)
        .execute(p)
        .await?
        .rows_affected();
        let links = sqlx::query("DELETE FROM member_sign_in_links WHERE expires_at <= $1")
            .bind(now)
            .execute(p)
            .await?
            .rows_affected();
        sessions + links
    }))
}

/// Deletes the links mailed to an address of `org_id` (erasing its member).
pub(super) async fn delete_links(tx: &mut Tx, org_id: OrgId, email: &str) -> DbResult<()> {
    dispatch_tx!(tx, t => {
        sqlx::query("DELETE FROM member_sign_in_links WHERE org_id = $1 AND email_lower = $2")
            .bind(org_id)
            .bind(links::email_identity(email))
            .execute(&mut **t)
            .await?;
    });
    Ok(())
}
