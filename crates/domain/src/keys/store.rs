//! API keys as stored: a SHA-256 hash and a display prefix, never the key itself.

use serde::Serialize;
use uuid::Uuid;

use super::secret as auth;
use crate::dispatch;
use crate::{
    OrgId, Ts,
    db::{Db, DbResult},
};
use jobboard_store::reuse::Reused;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct ApiKey {
    pub id: Uuid,
    pub org_id: OrgId,
    pub name: String,
    pub prefix: String,
    pub scopes: String,
    pub read_limit: i64,
    pub write_limit: i64,
    pub created_at: Ts,
    pub last_used_at: Option<Ts>,
    pub revoked_at: Option<Ts>,
}

const COLUMNS: &str = "id, org_id, name, prefix, scopes, read_limit, write_limit, created_at, last_used_at, revoked_at";

pub struct NewKey<'a> {
    pub org_id: OrgId,
    pub name: &'a str,
    pub scopes: &'a str,
    pub read_limit: i64,
    pub write_limit: i64,
}

/// Creates a key; returns the stored record and the full key (the only time it exists).
pub async fn create(db: &Db, new: NewKey<'_>) -> DbResult<(ApiKey, String)> {
    let generated = auth::generate_key();
    let id = Uuid::now_v7();
    let sql = format!(
        "INSERT INTO api_keys (id, org_id, name, prefix, key_hash, scopes, read_limit, write_limit, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {COLUMNS}"
    );
    let key = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(new.org_id)
            .bind(new.name)
            .bind(&generated.prefix)
            .bind(&generated.hash)
            .bind(new.scopes)
            .bind(new.read_limit)
            .bind(new.write_limit)
            .bind(db.now())
            .fetch_one(p)
            .await?
    });
    Ok((key, generated.full))
}

/// What a request needs to know about its key.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct KeyAuth {
    pub id: Uuid,
    pub org_id: OrgId,
    pub scopes: String,
    pub read_limit: i64,
    pub write_limit: i64,
    /// The organization's job list version (see `job_list_versions`), read in the same
    /// statement so that a cached job list needs no further query.
    pub job_list_version: i64,
}

/// Finds the live (not revoked) key with this hash, for every request that carries one.
///
/// The answer is reused ([`jobboard_store::reuse`]): on SQLite until this process writes
/// and for at most a second (a key revoked or changed through this server is seen by its
/// next request, and the command line waits out that second before it reports a change
/// while a server has the file open); on PostgreSQL until a commit is announced. The API
/// reads a key on PostgreSQL with [`authenticate_and_take`] instead, which takes from its
/// rate limit, shared by the nodes, in the same statement.
pub async fn authenticate(db: &Db, hash: &[u8]) -> DbResult<Option<KeyAuth>> {
    KEYS.get(db, hash.to_vec(), |hash| async move {
        read_auth(db, &hash).await
    })
    .await
}

/// The key with this hash as [`authenticate`] last read it, while that reading may still
/// be used; `None` means: look it up. Always `None` on PostgreSQL, where a request's key is
/// read with its rate limit ([`authenticate_and_take`]).
pub fn reused(db: &Db, hash: &[u8]) -> Option<KeyAuth> {
    if db.backend() == jobboard_store::Backend::Postgres {
        return None;
    }
    KEYS.peek(db, hash.to_vec())
}

/// The keys [`authenticate`] read lately, by hash.
static KEYS: std::sync::LazyLock<Reused<Vec<u8>, KeyAuth>> =
    std::sync::LazyLock::new(|| Reused::new(10_000));

async fn read_auth(db: &Db, hash: &[u8]) -> DbResult<Option<KeyAuth>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(concat!(
            "SELECT k.id, k.org_id, k.scopes, k.read_limit, k.write_limit, ",
            crate::job_list_version!("k.org_id"),
            " AS job_list_version FROM api_keys k WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
        ))
        .bind(hash)
        .fetch_optional(p)
        .await.map_err(crate::db::StoreError::from)
    })
}

/// What [`authenticate_and_take`] took from the key's rate limit bucket: see
/// [`crate::ratelimit::share`].
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    pub tat: i64,
    pub taken: u32,
    pub now: i64,
}

#[derive(sqlx::FromRow)]
struct KeyTakeRow {
    #[sqlx(flatten)]
    key: KeyAuth,
    tat: i64,
    taken: i32,
    now: i64,
}

/// PostgreSQL: [`authenticate`] and the rate limit in one statement (one round trip). Takes
/// up to `n` requests from the key's read (or write) bucket, for `n` requests that arrived
/// together; `None` when there is no such live key (nothing is taken then).
pub async fn authenticate_and_take(
    pool: &sqlx::PgPool,
    hash: &[u8],
    write: bool,
    n: usize,
) -> DbResult<Option<(KeyAuth, Taken)>> {
    // The statement is made once: a round of requests only binds its values.
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "WITH {clock},
             key AS MATERIALIZED (SELECT k.id, k.org_id, k.scopes, k.read_limit, k.write_limit,
                 {version} AS job_list_version,
                 CASE WHEN $2 THEN k.write_limit ELSE k.read_limit END AS lim
               FROM api_keys k WHERE k.key_hash = $1 AND k.revoked_at IS NULL),
             p AS MATERIALIZED (SELECT key.id::TEXT || CASE WHEN $2 THEN ':w' ELSE ':r' END AS bucket,
                 $3::BIGINT / GREATEST(LEAST(key.lim, 4294967295), 1) AS t FROM key),
             take AS ({take})
             SELECT key.id, key.org_id, key.scopes, key.read_limit, key.write_limit, key.job_list_version,
               take.tat, take.taken, clock.now
             FROM key, take, clock",
            clock = crate::ratelimit::CLOCK_SQL,
            version = crate::job_list_version!("k.org_id"),
            take = crate::ratelimit::take_sql("$4::INTEGER", "$3::BIGINT"),
        )
    });
    let row: Option<KeyTakeRow> = sqlx::query_as(sqlx::AssertSqlSafe(SQL.as_str()))
        .bind(hash)
        .bind(write)
        .bind(crate::ratelimit::WINDOW.as_nanos() as i64)
        .bind(i32::try_from(n).unwrap_or(i32::MAX))
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| {
        (
            r.key,
            Taken {
                tat: r.tat,
                taken: u32::try_from(r.taken).unwrap_or(0),
                now: r.now,
            },
        )
    }))
}

pub async fn list(db: &Db, org_id: OrgId) -> DbResult<Vec<ApiKey>> {
    let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

/// Finds a key by its id or its display prefix (the first characters of the key).
pub async fn find(db: &Db, prefix_or_id: &str) -> DbResult<Vec<ApiKey>> {
    if let Ok(id) = Uuid::parse_str(prefix_or_id) {
        let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1");
        return dispatch!(db.reader(), p => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_all(p).await.map_err(crate::db::StoreError::from)
        });
    }
    let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE prefix = $1 ORDER BY created_at");
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(prefix_or_id).fetch_all(p).await.map_err(crate::db::StoreError::from)
    })
}

#[derive(Debug, Default)]
pub struct KeyUpdate {
    pub name: Option<String>,
    pub scopes: Option<String>,
    pub read_limit: Option<i64>,
    pub write_limit: Option<i64>,
}

pub async fn update(db: &Db, id: Uuid, u: &KeyUpdate) -> DbResult<Option<ApiKey>> {
    let sql = format!(
        "UPDATE api_keys SET name = COALESCE($2, name), scopes = COALESCE($3, scopes),
         read_limit = COALESCE($4, read_limit), write_limit = COALESCE($5, write_limit)
         WHERE id = $1 RETURNING {COLUMNS}"
    );
    let key = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(u.name.as_deref())
            .bind(u.scopes.as_deref())
            .bind(u.read_limit)
            .bind(u.write_limit)
            .fetch_optional(p)
            .await.map_err(crate::db::StoreError::from)
    });
    db.announce_change().await;
    key
}

pub async fn revoke(db: &Db, id: Uuid) -> DbResult<Option<ApiKey>> {
    let sql = format!(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING {COLUMNS}"
    );
    let key = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(db.now()).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    });
    db.announce_change().await;
    key
}

/// Revokes key `id` of organization `org_id`; `None` when the organization has no such key.
pub async fn revoke_in_org(db: &Db, org_id: OrgId, id: Uuid) -> DbResult<Option<ApiKey>> {
    let sql = format!(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND org_id = $2 RETURNING {COLUMNS}"
    );
    let key = dispatch!(db.writer(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).bind(org_id).bind(db.now()).fetch_optional(p).await.map_err(crate::db::StoreError::from)
    });
    db.announce_change().await;
    key
}

/// Records when keys were last used; called in batches, never once per request.
pub async fn touch(db: &Db, used: &[(Uuid, Ts)]) -> DbResult<()> {
    if used.is_empty() {
        return Ok(());
    }
    dispatch!(db.writer(), p => {
        let mut tx = p.begin().await?;
        for (id, at) in used {
            sqlx::query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)")
                .bind(id)
                .bind(at)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await.map_err(crate::db::StoreError::from)
    })
}
