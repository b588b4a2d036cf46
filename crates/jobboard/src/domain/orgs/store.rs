//! Organizations as stored.

use super::{Board, Org};
use crate::{
    db::{Db, DbResult},
    dispatch,
    domain::Ts,
};

const COLUMNS: &str = "id, name, domain, tagline, logo_url, accent_color, public_posting, \
     mail_job_live, mail_expiry_days, mail_applications, created_at";

pub(super) async fn create(db: &Db, name: &str, domain: Option<&str>) -> DbResult<Org> {
    let sql = format!(
        "INSERT INTO organizations (name, domain, created_at) VALUES ($1, $2, $3) RETURNING {COLUMNS}"
    );
    Ok(dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .bind(domain)
            .bind(Ts::now())
            .fetch_one(p)
            .await?
    }))
}

pub(super) async fn update(db: &Db, o: &Org) -> DbResult<Org> {
    let sql = format!(
        "UPDATE organizations SET name = $2, domain = $3, tagline = $4, logo_url = $5, \
         accent_color = $6, public_posting = $7, mail_job_live = $8, mail_expiry_days = $9, \
         mail_applications = $10 WHERE id = $1 RETURNING {COLUMNS}"
    );
    Ok(dispatch!(db.writer(), p => {
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
            .fetch_one(p)
            .await?
    }))
}

pub(super) async fn get(db: &Db, id: i64) -> DbResult<Option<Org>> {
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
         o.public_posting, o.mail_job_live, o.mail_expiry_days, o.mail_applications, o.created_at, ",
        crate::db::job_list_version!("o.id"),
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
