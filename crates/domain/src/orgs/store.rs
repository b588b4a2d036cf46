//! Organizations as stored.

use super::{Board, Claim, Org};
use crate::{
    OrgId,
    db::{Db, DbResult},
    dispatch, dispatch_tx,
};

const COLUMNS: &str = "id, name, domain, tagline, logo_url, accent_color, public_posting, \
     mail_job_live, mail_expiry_days, mail_applications, keep_applications_days, \
     keep_applications_after_job_days, member_signup, member_approval, member_posts, \
     paid_posts, refund_unpublishes, require_salary, require_remote_countries, listing_days, \
     created_at";

pub(super) async fn create(db: &Db, name: &str, domain: Option<&str>) -> DbResult<Org> {
    let sql = format!(
        "INSERT INTO organizations (name, domain, created_at) VALUES ($1, $2, $3) RETURNING {COLUMNS}"
    );
    let org = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .bind(domain)
            .bind(db.now())
            .fetch_one(p)
            .await?
    });
    // A host's board may now be this one: nodes read it again.
    db.announce_change().await;
    Ok(org)
}

pub(super) async fn update(db: &Db, o: &Org) -> DbResult<Org> {
    let sql = format!(
        "UPDATE organizations SET name = $2, domain = $3, tagline = $4, logo_url = $5, \
         accent_color = $6, public_posting = $7, mail_job_live = $8, mail_expiry_days = $9, \
         mail_applications = $10, keep_applications_days = $11, member_signup = $12, \
         member_approval = $13, member_posts = $14, paid_posts = $15, refund_unpublishes = $16, \
         require_salary = $17, require_remote_countries = $18, listing_days = $19, \
         keep_applications_after_job_days = $20 WHERE id = $1 RETURNING {COLUMNS}"
    );
    let org = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(o.id)
            .bind(&o.name)
            .bind(&o.domain)
            .bind(&o.tagline)
            .bind(&o.logo_url)
            .bind(&o.accent_color)
            .bind(o.public_posting)
            .bind(o.mail_job_live)
            .bind(o.mail_expiry_days)
            .bind(o.mail_applications)
            .bind(o.keep_applications_days)
            .bind(o.member_signup)
            .bind(o.member_approval)
            .bind(o.member_posts)
            .bind(o.paid_posts)
            .bind(o.refund_unpublishes)
            .bind(o.require_salary)
            .bind(o.require_remote_countries)
            .bind(o.listing_days)
            .bind(o.keep_applications_after_job_days)
            .fetch_one(p)
            .await?
    });
    db.announce_change().await;
    Ok(org)
}

pub(super) async fn get(db: &Db, id: OrgId) -> DbResult<Option<Org>> {
    let sql = format!("SELECT {COLUMNS} FROM organizations WHERE id = $1");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(p).await?
    }))
}

pub(super) async fn list(db: &Db) -> DbResult<Vec<Org>> {
    let sql = format!("SELECT {COLUMNS} FROM organizations ORDER BY id");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(p).await?
    }))
}

pub(super) async fn count(db: &Db) -> DbResult<i64> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM organizations").fetch_one(p).await?
    }))
}

#[derive(sqlx::FromRow)]
struct BoardRow {
    #[sqlx(flatten)]
    org: Org,
    version: i64,
}

/// One statement: the organization of `host` (else organization 1) and its version.
pub(super) async fn board_for_host(db: &Db, host: &str) -> DbResult<Option<Board>> {
    let sql = concat!(
        "SELECT o.id, o.name, o.domain, o.tagline, o.logo_url, o.accent_color, \
         o.public_posting, o.mail_job_live, o.mail_expiry_days, o.mail_applications, \
         o.keep_applications_days, o.keep_applications_after_job_days, o.member_signup, \
         o.member_approval, o.member_posts, \
         o.paid_posts, o.refund_unpublishes, o.require_salary, o.require_remote_countries, \
         o.listing_days, o.created_at, ",
        crate::job_list_version!("o.id"),
        " AS version FROM organizations o \
         WHERE o.id = COALESCE((SELECT id FROM organizations WHERE domain = $1), 1)"
    );
    let row: Option<BoardRow> = dispatch!(db.reader(), p => {
        sqlx::query_as(sql).bind(host).fetch_optional(p).await?
    });
    Ok(row.map(|r| Board {
        org: r.org,
        version: r.version,
    }))
}

/// The organization whose board answers `host`, if any.
pub(super) async fn domain_holder(db: &Db, host: &str) -> DbResult<Option<OrgId>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT id FROM organizations WHERE domain = $1")
            .bind(host)
            .fetch_optional(p)
            .await?
    }))
}

const CLAIM_COLUMNS: &str = "org_id, domain, token, created_at";

pub(super) async fn claim_of(db: &Db, org_id: OrgId) -> DbResult<Option<Claim>> {
    let sql = format!("SELECT {CLAIM_COLUMNS} FROM domain_claims WHERE org_id = $1");
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_optional(p).await?
    }))
}

pub(super) async fn claim_with_token(db: &Db, token: &str) -> DbResult<Option<Claim>> {
    let sql = format!("SELECT {CLAIM_COLUMNS} FROM domain_claims WHERE token = $1");
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(token).fetch_optional(p).await?
    }))
}

/// Stores `c` as its organization's one claim (replacing an earlier one).
pub(super) async fn put_claim(db: &Db, c: &Claim) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query(
            "INSERT INTO domain_claims (org_id, domain, token, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (org_id) DO UPDATE SET domain = excluded.domain, token = excluded.token, \
             created_at = excluded.created_at",
        )
        .bind(c.org_id)
        .bind(&c.domain)
        .bind(&c.token)
        .bind(c.created_at)
        .execute(p)
        .await?;
    });
    Ok(())
}

pub(super) async fn withdraw_claim(db: &Db, org_id: OrgId) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM domain_claims WHERE org_id = $1")
            .bind(org_id)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Withdraws organization `org_id`'s claim and every claim of `domain`.
pub(super) async fn clear_claims(db: &Db, org_id: OrgId, domain: &str) -> DbResult<()> {
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM domain_claims WHERE org_id = $1 OR domain = $2")
            .bind(org_id)
            .bind(domain)
            .execute(p)
            .await?;
    });
    Ok(())
}

/// Removes organization `org_id`'s domain and its claim, in one transaction.
pub(super) async fn remove_domain(db: &Db, org_id: OrgId) -> DbResult<()> {
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        sqlx::query("DELETE FROM domain_claims WHERE org_id = $1")
            .bind(org_id)
            .execute(&mut **t)
            .await?;
        sqlx::query("UPDATE organizations SET domain = NULL WHERE id = $1 AND domain IS NOT NULL")
            .bind(org_id)
            .execute(&mut **t)
            .await?;
    });
    tx.commit().await
}

/// In one transaction: `None` unless `c` is still pending; else the organization with
/// `c.domain` as its domain, every claim of that domain withdrawn. A unique violation
/// when another organization holds the domain.
pub(super) async fn activate(db: &Db, c: &Claim) -> DbResult<Option<Org>> {
    let mut tx = db.begin().await?;
    let sql = format!(
        "UPDATE organizations SET domain = $3 WHERE id = $1 AND EXISTS \
         (SELECT 1 FROM domain_claims WHERE org_id = $1 AND token = $2 AND domain = $3) \
         RETURNING {COLUMNS}"
    );
    let org: Option<Org> = dispatch_tx!(&mut tx, t => {
        let org = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(c.org_id)
            .bind(&c.token)
            .bind(&c.domain)
            .fetch_optional(&mut **t)
            .await?;
        if org.is_some() {
            sqlx::query("DELETE FROM domain_claims WHERE domain = $1")
                .bind(&c.domain)
                .execute(&mut **t)
                .await?;
        }
        org
    });
    tx.commit().await?;
    Ok(org)
}

/// Sets whether organization `id` requires two-factor sign-in of its staff; false when
/// there is no such organization.
pub(super) async fn set_require_2fa(db: &Db, id: OrgId, on: bool) -> DbResult<bool> {
    Ok(dispatch!(db.writer(), p => {
        sqlx::query("UPDATE organizations SET require_2fa = $2 WHERE id = $1")
            .bind(id)
            .bind(on)
            .execute(p)
            .await?
            .rows_affected()
    }) == 1)
}

/// Whether organization `id` requires two-factor sign-in (`None`: no such organization).
pub(super) async fn require_2fa(db: &Db, id: OrgId) -> DbResult<Option<bool>> {
    Ok(dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT require_2fa FROM organizations WHERE id = $1")
            .bind(id)
            .fetch_optional(p)
            .await?
    }))
}
