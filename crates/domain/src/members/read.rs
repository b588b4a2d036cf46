//! Members, access records and payments read back (lists and lookups).

use super::{
    model::{Access, Member, MemberListQuery, Payment},
    store::{ACCESS_COLUMNS, MEMBER_COLUMNS, PAYMENT_COLUMNS},
};
use crate::{
    MemberId, OrgId,
    db::{Db, DbResult, StoreError},
    dispatch, links,
};

/// A page of an organization's members, newest first, and how many match.
pub(super) async fn page(
    db: &Db,
    org_id: OrgId,
    q: &MemberListQuery,
) -> DbResult<(Vec<Member>, i64)> {
    let offset = (q.page - 1) * q.per_page;
    let pattern = q.search.as_deref().map(|s| {
        let escaped = s
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        format!("%{escaped}%")
    });
    Ok(dispatch!(db.reader(), p => {
        let mut count = sqlx::QueryBuilder::new("SELECT COUNT(*) FROM members WHERE org_id = ");
        let mut page = sqlx::QueryBuilder::new(format!("SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = "));
        for qb in [&mut count, &mut page] {
            qb.push_bind(org_id);
            if let Some(p) = &pattern {
                qb.push(" AND (LOWER(email) LIKE ")
                    .push_bind(p.clone())
                    .push(" ESCAPE '\\' OR LOWER(name) LIKE ")
                    .push_bind(p.clone())
                    .push(" ESCAPE '\\')");
            }
            if let Some(role) = q.role {
                qb.push(" AND role = ").push_bind(role);
            }
            if let Some(status) = q.approval_status {
                qb.push(" AND approval_status = ").push_bind(status);
            }
        }
        page.push(" ORDER BY created_at DESC, id DESC LIMIT ").push_bind(q.per_page).push(" OFFSET ").push_bind(offset);
        let total: i64 = count.build_query_scalar().fetch_one(p).await?;
        let rows: Vec<Member> = page.build_query_as().fetch_all(p).await?;
        (rows, total)
    }))
}

/// The member of the organization with this id.
pub(super) async fn member_read(db: &Db, org_id: OrgId, id: MemberId) -> DbResult<Option<Member>> {
    let sql = format!("SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = $1 AND id = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(id).fetch_optional(p).await.map_err(StoreError::from)
    })
}

/// The member of the organization with this address, compared by
/// [`links::email_identity`].
pub(super) async fn member_with_address(
    db: &Db,
    org_id: OrgId,
    email: &str,
) -> DbResult<Option<Member>> {
    let sql =
        format!("SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = $1 AND email_lower = $2");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(links::email_identity(email))
            .fetch_optional(p)
            .await
            .map_err(StoreError::from)
    })
}

/// Every member of an organization, oldest first.
pub(super) async fn members(db: &Db, org_id: OrgId) -> DbResult<Vec<Member>> {
    let sql =
        format!("SELECT {MEMBER_COLUMNS} FROM members WHERE org_id = $1 ORDER BY created_at, id");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(StoreError::from)
    })
}

/// The access records of a member, oldest first.
pub(super) async fn access_of(db: &Db, org_id: OrgId, user_id: MemberId) -> DbResult<Vec<Access>> {
    let sql = format!(
        "SELECT {ACCESS_COLUMNS} FROM member_access WHERE org_id = $1 AND user_id = $2 ORDER BY created_at, id"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(user_id).fetch_all(p).await.map_err(StoreError::from)
    })
}

/// The payments of an organization (of one member when `user_id` is given), oldest first.
pub(super) async fn payments(
    db: &Db,
    org_id: OrgId,
    user_id: Option<MemberId>,
) -> DbResult<Vec<Payment>> {
    let sql = format!(
        "SELECT {PAYMENT_COLUMNS} FROM payments WHERE org_id = $1 AND ($2 IS NULL OR user_id = $2)
         ORDER BY created_at, id"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(user_id).fetch_all(p).await.map_err(StoreError::from)
    })
}
