//! The notices as stored (`index_notices`) and the Google quota ledger (`index_quota`):
//! claiming with leases, as the other outboxes do, and recording each delivery.
//!
//! A notice is `pending` until its engine takes it (`sent`) or refuses it for good, or its
//! retries run out (`failed`). IndexNow notices are claimed as one batch per organization
//! (one request names up to [`INDEXNOW_BATCH`] URLs); Google's one by one, and only as
//! many as are left of the organization's daily quota, featured and newest jobs first:
//! the claim counts them in the ledger, in the same transaction (on PostgreSQL under the
//! ledger row's lock, so nodes claiming at once never exceed it), and moves what is left
//! to the next quota day. A notice changed while its delivery runs (`dirty`) stays
//! pending when that delivery ends, and is delivered again with what it says now.

use uuid::Uuid;

use super::{Action, Engine, next_quota_day, quota_day};
use crate::{
    JobId, OrgId, Ts,
    db::{Backend, Db, DbResult, Tx},
    dispatch, dispatch_tx,
};

/// The PostgreSQL notification channel of new notices.
pub const CHANNEL: &str = "jobboard_indexing";

/// Woken when a notice is written in this process.
pub static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// URLs in one IndexNow request at most (the protocol's limit is 10,000).
pub const INDEXNOW_BATCH: i64 = 10_000;

/// A notice as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Notice {
    pub id: Uuid,
    pub org_id: OrgId,
    pub engine: Engine,
    pub job_id: JobId,
    /// The job page's path on the organization's board.
    pub path: String,
    pub action: Action,
    pub featured: bool,
    pub job_created_at: Ts,
    pub status: String,
    /// Deliveries tried so far.
    pub attempts: i64,
    pub next_attempt_at: Option<Ts>,
    pub last_error: Option<String>,
    pub created_at: Ts,
    pub sent_at: Option<Ts>,
}

const COLS: &str = "id, org_id, engine, job_id, path, action, featured, job_created_at, status, \
    attempts, next_attempt_at, last_error, created_at, sent_at";

/// Notices claimed together: one delivery.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The lease's id: what the batch's outcome is recorded by.
    pub id: Uuid,
    pub org_id: OrgId,
    pub engine: Engine,
    /// Featured and newest jobs first.
    pub notices: Vec<Notice>,
}

/// Claims up to `limit` batches due at `now` for `owner` until `lease_until`: for each
/// organization with IndexNow notices due, one batch of them; then Google's, each its
/// own batch, within each organization's quota.
pub async fn claim(
    db: &Db,
    owner: Uuid,
    now: Ts,
    lease_until: Ts,
    limit: usize,
) -> DbResult<Vec<Batch>> {
    let mut out = Vec::new();
    for org_id in due_orgs(db, Engine::IndexNow, now, limit).await? {
        if out.len() >= limit {
            break;
        }
        let lease = Uuid::now_v7();
        let mut tx = db.begin().await?;
        let notices = claim_rows(
            &mut tx,
            (org_id, Engine::IndexNow),
            (owner, Some(lease), lease_until),
            now,
            INDEXNOW_BATCH,
        )
        .await?;
        tx.commit().await?;
        if !notices.is_empty() {
            out.push(Batch {
                id: lease,
                org_id,
                engine: Engine::IndexNow,
                notices,
            });
        }
    }
    for org_id in due_orgs(db, Engine::Google, now, limit).await? {
        let room = limit.saturating_sub(out.len());
        if room == 0 {
            break;
        }
        let mut tx = db.begin().await?;
        let notices = claim_google(&mut tx, org_id, owner, now, lease_until, room).await?;
        tx.commit().await?;
        out.extend(notices.into_iter().map(|n| Batch {
            id: n.id,
            org_id,
            engine: Engine::Google,
            notices: vec![n],
        }));
    }
    Ok(out)
}

/// Organizations with notices of `engine` due at `now` and not leased.
async fn due_orgs(db: &Db, engine: Engine, now: Ts, limit: usize) -> DbResult<Vec<OrgId>> {
    dispatch!(db.reader(), p => {
        sqlx::query_scalar(
            "SELECT DISTINCT org_id FROM index_notices WHERE engine = $1 AND status = 'pending' \
             AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2) LIMIT $3",
        )
        .bind(engine.as_str())
        .bind(now)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(p)
        .await
        .map_err(crate::db::StoreError::from)
    })
}

/// Google's notices of `org_id` that fit today's quota (at most `limit`), counted in the
/// ledger; the rest wait for the next quota day.
async fn claim_google(
    tx: &mut Tx,
    org_id: OrgId,
    owner: Uuid,
    now: Ts,
    lease_until: Ts,
    limit: usize,
) -> DbResult<Vec<Notice>> {
    let day = quota_day(now);
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE OF q",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT q.used, o.google_indexing_quota FROM index_quota q \
         JOIN organizations o ON o.id = q.org_id WHERE q.org_id = $1 AND q.day = $2{lock}"
    );
    let (used, quota): (i64, i64) = dispatch_tx!(tx, t => {
        sqlx::query("INSERT INTO index_quota (org_id, day, used) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING")
            .bind(org_id)
            .bind(&day)
            .execute(&mut **t)
            .await?;
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(&day)
            .fetch_one(&mut **t)
            .await?
    });
    let left = (quota - used).max(0);
    let take = left.min(i64::try_from(limit).unwrap_or(i64::MAX));
    let notices = if take > 0 {
        claim_rows(
            tx,
            (org_id, Engine::Google),
            (owner, None, lease_until),
            now,
            take,
        )
        .await?
    } else {
        Vec::new()
    };
    let n = notices.len() as i64;
    dispatch_tx!(tx, t => {
        if n > 0 {
            sqlx::query("UPDATE index_quota SET used = used + $3 WHERE org_id = $1 AND day = $2")
                .bind(org_id)
                .bind(&day)
                .bind(n)
                .execute(&mut **t)
                .await?;
        }
        if left - n <= 0 {
            // Today's quota is spent: what is due waits for the next quota day.
            sqlx::query(
                "UPDATE index_notices SET next_attempt_at = $3 WHERE org_id = $1 AND engine = 'google' \
                 AND status = 'pending' AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2)",
            )
            .bind(org_id)
            .bind(now)
            .bind(next_quota_day(now))
            .execute(&mut **t)
            .await?;
        }
    });
    Ok(notices)
}

/// Leases up to `limit` due notices of `(org, engine)` to `owner` until `until`, under
/// `lease` (or each under its own id), featured and newest first.
async fn claim_rows(
    tx: &mut Tx,
    (org_id, engine): (OrgId, Engine),
    (owner, lease, until): (Uuid, Option<Uuid>, Ts),
    now: Ts,
    limit: i64,
) -> DbResult<Vec<Notice>> {
    let skip = match tx.backend() {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let lease_id = if lease.is_some() { "$7" } else { "id" };
    let sql = format!(
        "UPDATE index_notices SET lease_owner = $1, lease_id = {lease_id}, lease_until = $2, dirty = FALSE \
         WHERE id IN (SELECT id FROM index_notices WHERE org_id = $3 AND engine = $4 \
           AND status = 'pending' AND next_attempt_at <= $5 AND (lease_until IS NULL OR lease_until <= $5) \
           ORDER BY featured DESC, job_created_at DESC, id LIMIT $6{skip}) \
         RETURNING {COLS}"
    );
    let mut rows: Vec<Notice> = dispatch_tx!(tx, t => {
        let q = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(owner)
            .bind(until)
            .bind(org_id)
            .bind(engine.as_str())
            .bind(now)
            .bind(limit);
        let q = match lease {
            Some(l) => q.bind(l),
            None => q,
        };
        q.fetch_all(&mut **t).await?
    });
    rows.sort_by(|a, b| {
        (b.featured, b.job_created_at.micros(), b.id).cmp(&(
            a.featured,
            a.job_created_at.micros(),
            a.id,
        ))
    });
    Ok(rows)
}

/// How a delivery of a batch ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The engine took every notice.
    Sent,
    /// Try again at this time.
    Retry { error: String, at: Ts },
    /// Refused for good, or out of retries.
    Failed { error: String },
}

/// Records the outcome of batch `lease` at `now`. A notice changed since it was claimed
/// stays pending, due at once (it says something new). `false` when the lease was lost.
pub async fn record(db: &Db, lease: Uuid, now: Ts, outcome: Outcome) -> DbResult<bool> {
    let (status, error, at, sent) = match &outcome {
        Outcome::Sent => ("sent", None, None, Some(now)),
        Outcome::Retry { error, at } => ("pending", Some(error.as_str()), Some(*at), None),
        Outcome::Failed { error } => ("failed", Some(error.as_str()), None, None),
    };
    let mut tx = db.begin().await?;
    let n = dispatch_tx!(&mut tx, t => {
        let changed = sqlx::query(
            "UPDATE index_notices SET attempts = attempts + 1, lease_owner = NULL, lease_id = NULL, \
             lease_until = NULL, dirty = FALSE, next_attempt_at = $2, last_error = NULL \
             WHERE lease_id = $1 AND dirty AND status = 'pending'",
        )
        .bind(lease)
        .bind(now)
        .execute(&mut **t)
        .await?
        .rows_affected();
        changed + sqlx::query(
            "UPDATE index_notices SET status = $2, attempts = attempts + 1, last_error = $3, \
             next_attempt_at = $4, sent_at = $5, lease_owner = NULL, lease_id = NULL, lease_until = NULL \
             WHERE lease_id = $1 AND status = 'pending'",
        )
        .bind(lease)
        .bind(status)
        .bind(error)
        .bind(at)
        .bind(sent)
        .execute(&mut **t)
        .await?
        .rows_affected()
    });
    tx.commit().await?;
    Ok(n > 0)
}

/// Hands the leases of `owner` on these batches back (unfinished at shutdown).
pub async fn release(db: &Db, owner: Uuid, leases: &[Uuid]) -> DbResult<()> {
    for lease in leases {
        dispatch!(db.writer(), p => {
            sqlx::query(
                "UPDATE index_notices SET lease_owner = NULL, lease_id = NULL, lease_until = NULL \
                 WHERE lease_id = $1 AND lease_owner = $2",
            )
            .bind(lease)
            .bind(owner)
            .execute(p)
            .await
            .map_err(crate::db::StoreError::from)?;
        });
    }
    Ok(())
}

/// When the earliest pending notice is due, if any.
pub async fn next_due(db: &Db) -> DbResult<Option<Ts>> {
    crate::db::outbox::next_due(
        db,
        crate::db::outbox::Table {
            name: "index_notices",
            waiting: "pending",
        },
    )
    .await
}

/// The organization's newest notices, at most `limit`.
pub async fn list(db: &Db, org_id: OrgId, limit: i64) -> DbResult<Vec<Notice>> {
    let sql = format!(
        "SELECT {COLS} FROM index_notices WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(org_id)
            .bind(limit)
            .fetch_all(p)
            .await
            .map_err(crate::db::StoreError::from)
    })
}

/// What the worker needs of an organization to deliver its notices: where its board
/// answers, and its accounts (the Google key is a secret: read here only).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Account {
    pub domain: Option<String>,
    pub indexnow_key: Option<String>,
    pub google_indexing_key: Option<String>,
}

pub async fn account(db: &Db, org_id: OrgId) -> DbResult<Option<Account>> {
    dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT domain, indexnow_key, google_indexing_key FROM organizations WHERE id = $1",
        )
        .bind(org_id)
        .fetch_optional(p)
        .await
        .map_err(crate::db::StoreError::from)
    })
}

/// Deletes at most `limit` notices delivered or failed before `before`, and the quota
/// ledger's days before it: how many notices went.
pub async fn delete_finished_before(db: &Db, before: Ts, limit: i64) -> DbResult<u64> {
    let day = quota_day(before);
    dispatch!(db.writer(), p => {
        sqlx::query("DELETE FROM index_quota WHERE day < $1")
            .bind(&day)
            .execute(p)
            .await
            .map_err(crate::db::StoreError::from)?;
        Ok(sqlx::query(
            "DELETE FROM index_notices WHERE id IN (SELECT id FROM index_notices \
             WHERE status <> 'pending' AND created_at < $1 LIMIT $2)",
        )
        .bind(before)
        .bind(limit)
        .execute(p)
        .await
        .map_err(crate::db::StoreError::from)?
        .rows_affected())
    })
}
